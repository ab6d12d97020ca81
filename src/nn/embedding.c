/* The op layer of embedding: lookup, its dense weight gradient, and the
 * max_norm renormalisation. Kernels: src/cpu/nnact_embedding.c, which check
 * the index range before writing anything. */
#include "../ops/dispatch.h"

/* Indices as a contiguous tensor (a new reference), or the PyTorch error. */
static em_tensor *contiguous_indices(const em_tensor *indices, const char *fn)
{
    if (!indices) return em_error(EM_ERR_VALUE, "%s: indices is NULL", fn);
    if (indices->dtype != EM_I64 && indices->dtype != EM_I32)
        return em_error(EM_ERR_DTYPE, "Expected tensor for argument #1 'indices' to have one of the following scalar "
                        "types: Long, Int; but got %s instead (while checking arguments for %s)",
                        em_dtypes[indices->dtype].scalar_name, fn);
    if (indices->ndim >= EM_MAX_DIMS)
        return em_error(EM_ERR_SHAPE, "%s: the result would have more than %d dims", fn, EM_MAX_DIMS);
    return em_contiguous(indices); /* integers: never recorded */
}

static em_status check_padding(int64_t padding_idx, int64_t num_weights)
{
    if (padding_idx >= num_weights)
        return em_fail(EM_ERR_INDEX, "padding_idx %lld is out of range for %lld embeddings", (long long)padding_idx,
                       (long long)num_weights);
    return EM_OK;
}

/* Runs c into a new tensor of indices.shape + [D] (or `sizes`), dtype dt. */
static em_tensor *run_new(em_call *c, int ndim, const int64_t *sizes, em_dtype dt)
{
    em_tensor *out = em_tensor_new(ndim, sizes, dt, c->in[0]->storage->device);
    if (!out) return NULL;
    c->nout = 1;
    c->out[0] = out;
    c->operand_dtypes[0] = (int8_t)dt;
    if (em_dispatch(c)) {
        em_release(out);
        return NULL;
    }
    return out;
}

em_tensor *em_embedding(const em_tensor *weight, const em_tensor *indices, int64_t padding_idx,
                        bool scale_grad_by_freq)
{
    if (!weight) return em_error(EM_ERR_VALUE, "embedding: weight is NULL");
    if (weight->ndim != 2) return em_error(EM_ERR_SHAPE, "'weight' must be 2-D");
    if (check_padding(padding_idx, weight->sizes[0])) return NULL;
    em_tensor *idx = contiguous_indices(indices, "embedding");
    if (!idx) return NULL;
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, idx->sizes, idx->ndim * sizeof *sizes);
    sizes[idx->ndim] = weight->sizes[1];
    em_call c = {.op = EM_OP_embedding, .nin = 2, .in = {weight, idx}, .dtype = (em_dtype)weight->dtype,
                 .i = {padding_idx, scale_grad_by_freq}, .operand_dtypes = {0, weight->dtype, idx->dtype}};
    em_tensor *out = run_new(&c, idx->ndim + 1, sizes, (em_dtype)weight->dtype);
    em_release(idx);
    return out;
}

em_tensor *em_embedding_dense_backward(const em_tensor *grad, const em_tensor *indices, int64_t num_weights,
                                       int64_t padding_idx, bool scale_grad_by_freq)
{
    if (!grad) return em_error(EM_ERR_VALUE, "embedding_dense_backward: grad is NULL");
    if (num_weights < 0) return em_error(EM_ERR_VALUE, "embedding_dense_backward: num_weights < 0");
    if (check_padding(padding_idx, num_weights)) return NULL;
    if (grad->dtype != EM_F32 && grad->dtype != EM_F64)
        return em_error(EM_ERR_DTYPE, "\"embedding_dense_backward_cpu\" not implemented for '%s'",
                        em_dtypes[grad->dtype].scalar_name);
    em_tensor *idx = contiguous_indices(indices, "embedding_backward");
    if (!idx) return NULL;
    if (grad->ndim != idx->ndim + 1 || memcmp(grad->sizes, idx->sizes, idx->ndim * sizeof *idx->sizes)) {
        em_error(EM_ERR_SHAPE, "embedding_dense_backward: grad of shape %s does not fit indices of shape %s",
                 em_shape_str(grad->ndim, grad->sizes), em_shape_str(idx->ndim, idx->sizes));
        em_release(idx);
        return NULL;
    }
    int64_t sizes[2] = {num_weights, grad->sizes[grad->ndim - 1]};
    em_call c = {.op = EM_OP_embedding_dense_backward, .nin = 2, .in = {grad, idx}, .dtype = (em_dtype)grad->dtype,
                 .i = {padding_idx, scale_grad_by_freq, num_weights},
                 .operand_dtypes = {0, grad->dtype, idx->dtype}};
    em_tensor *out = run_new(&c, 2, sizes, (em_dtype)grad->dtype);
    em_release(idx);
    return out;
}

em_status em_embedding_renorm_(em_tensor *weight, const em_tensor *indices, double max_norm, double norm_type)
{
    if (!weight) return em_fail(EM_ERR_VALUE, "embedding_renorm_: weight is NULL");
    if (weight->ndim != 2) return em_fail(EM_ERR_SHAPE, "embedding_renorm_: 'self' must be 2-D");
    if (weight->dtype != EM_F32 && weight->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "\"embedding_renorm_cpu_\" not implemented for '%s'",
                       em_dtypes[weight->dtype].scalar_name);
    em_tensor *idx = contiguous_indices(indices, "embedding_renorm_");
    if (!idx) return em_error_code();
    em_call c = {.op = EM_OP_embedding_renorm, .nin = 1, .nout = 1, .in = {idx}, .out = {weight},
                 .dtype = (em_dtype)weight->dtype, .f = {max_norm, norm_type},
                 .operand_dtypes = {weight->dtype, idx->dtype}};
    em_status st = em_dispatch(&c);
    em_release(idx);
    return st;
}
