/* The op layer of embedding: lookup, its dense weight gradient, and the
 * max_norm renormalisation. Kernels: src/cpu/nnact_embedding.c, which check
 * the index range before writing anything. */
#include "run_new.h"

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
    em_tensor *out = em_nn_run_new(&c, idx->ndim + 1, sizes, (em_dtype)weight->dtype);
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
    em_tensor *out = em_nn_run_new(&c, 2, sizes, (em_dtype)grad->dtype);
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

/* ---- embedding_bag ------------------------------------------------------------------ */
/* A 1-d integer tensor argument as a contiguous one (a new reference). */
static em_tensor *contiguous_1d(const em_tensor *t, const char *what)
{
    if (!t) return em_error(EM_ERR_VALUE, "embedding_bag: %s is NULL", what);
    if (t->dtype != EM_I64 && t->dtype != EM_I32)
        return em_error(EM_ERR_DTYPE, "embedding_bag: expected %s to be Long or Int, but got %s", what,
                        em_dtypes[t->dtype].scalar_name);
    if (t->ndim != 1) return em_error(EM_ERR_SHAPE, "embedding_bag: %s has to be a 1D Tensor, but got %dD", what, t->ndim);
    return em_contiguous(t);
}

/* float16 computes through float32 (recorded casts, so gradients flow). */
static em_status embedding_bag_half(const em_tensor *weight, const em_tensor *indices, const em_tensor *offsets,
                                    int mode, const em_tensor *psw, bool include_last_offset, int64_t padding_idx,
                                    bool scale_grad_by_freq, em_tensor **outs[4])
{
    em_tensor *w = em_to_dtype(weight, EM_F32), *p = psw && w ? em_to_dtype(psw, EM_F32) : NULL, *y = NULL;
    em_status st = !w || (psw && !p) ? em_error_code()
                                     : em_embedding_bag(w, indices, offsets, mode, p, include_last_offset, padding_idx,
                                                        scale_grad_by_freq, &y, outs[1], outs[2], outs[3]);
    em_release(w), em_release(p);
    if (st) return st;
    *outs[0] = em_to_dtype(y, EM_F16);
    em_release(y);
    if (*outs[0]) return EM_OK;
    for (int k = 1; k < 4; k++)
        if (outs[k]) em_release(*outs[k]), *outs[k] = NULL;
    return em_error_code();
}

em_status em_embedding_bag(const em_tensor *weight, const em_tensor *indices, const em_tensor *offsets, int mode,
                           const em_tensor *per_sample_weights, bool include_last_offset, int64_t padding_idx,
                           bool scale_grad_by_freq, em_tensor **out, em_tensor **offset2bag, em_tensor **bag_size,
                           em_tensor **max_indices)
{
    em_tensor **outs[4] = {out, offset2bag, bag_size, max_indices};
    for (int k = 0; k < 4; k++)
        if (outs[k]) *outs[k] = NULL;
    if (!weight || !out) return em_fail(EM_ERR_VALUE, "embedding_bag: weight or out is NULL");
    if (weight->ndim != 2) return em_fail(EM_ERR_SHAPE, "embedding_bag: 'weight' must be 2-D, but got %dD", weight->ndim);
    if (mode < EM_BAG_SUM || mode > EM_BAG_MAX)
        return em_fail(EM_ERR_VALUE, "embedding_bag: mode has to be one of sum (0), mean (1) or max (2), got %d", mode);
    if (check_padding(padding_idx, weight->sizes[0])) return em_error_code();
    if (weight->dtype == EM_F16)
        return embedding_bag_half(weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                                  padding_idx, scale_grad_by_freq, outs);
    if (weight->dtype != EM_F32 && weight->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "Expected tensor for argument #1 'weight' to have one of the following scalar "
                       "types: Half, Float, Double; but got %s instead (while checking arguments for embedding_bag)",
                       em_dtypes[weight->dtype].scalar_name);
    const em_tensor *psw = per_sample_weights;
    if (psw && mode != EM_BAG_SUM)
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "embedding_bag: per_sample_weights is only supported for mode='sum'");
    em_tensor *idx = contiguous_1d(indices, "input"), *off = idx ? contiguous_1d(offsets, "offsets") : NULL;
    em_tensor *pw = NULL, *r[4] = {NULL, NULL, NULL, NULL};
    em_status st = off ? EM_OK : em_error_code();
    const int64_t n = idx ? idx->sizes[0] : 0, nb = off ? off->sizes[0] - include_last_offset : 0;
    if (!st && nb < 0) st = em_fail(EM_ERR_SHAPE, "embedding_bag: include_last_offset needs at least one offset");
    if (!st && psw) {
        if (psw->ndim != 1 || psw->sizes[0] != n)
            st = em_fail(EM_ERR_SHAPE, "embedding_bag: per_sample_weights of shape %s must have the input's shape [%lld]",
                         em_shape_str(psw->ndim, psw->sizes), (long long)n);
        else if (psw->dtype != weight->dtype)
            st = em_fail(EM_ERR_DTYPE, "embedding_bag: expected per_sample_weights of dtype %s (weight's), got %s",
                         em_dtypes[weight->dtype].name, em_dtypes[psw->dtype].name);
        else if (!(pw = em_contiguous(psw))) st = em_error_code();
    }
    if (!st) {
        const int64_t D = weight->sizes[1], out_sz[2] = {nb, D};
        r[0] = em_tensor_new(2, out_sz, (em_dtype)weight->dtype, weight->storage->device);
        r[1] = em_tensor_new(1, &n, EM_I64, weight->storage->device);
        r[2] = em_tensor_new(1, &nb, EM_I64, weight->storage->device);
        r[3] = em_tensor_new(mode == EM_BAG_MAX ? 2 : 1, out_sz, EM_I64, weight->storage->device);
        if (!r[0] || !r[1] || !r[2] || !r[3]) st = em_error_code();
    }
    if (!st) {
        em_call c = {.op = EM_OP_embedding_bag, .nin = 4, .nout = 4, .in = {weight, idx, off, pw},
                     .out = {r[0], r[1], r[2], r[3]}, .dtype = (em_dtype)weight->dtype,
                     .i = {mode, include_last_offset, padding_idx, scale_grad_by_freq},
                     .operand_dtypes = {weight->dtype, EM_I64, EM_I64, EM_I64, weight->dtype, idx->dtype, off->dtype,
                                        weight->dtype}};
        st = em_dispatch(&c);
    }
    em_release(idx), em_release(off), em_release(pw);
    for (int k = 0; k < 4; k++) {
        if (!st && outs[k]) *outs[k] = r[k];
        else em_release(r[k]);
    }
    return st;
}

em_tensor *em_embedding_bag_backward(const em_tensor *grad, const em_tensor *indices, const em_tensor *offset2bag,
                                     const em_tensor *bag_size, const em_tensor *per_sample_weights,
                                     const em_tensor *max_indices, int64_t num_weights, int mode,
                                     int64_t padding_idx, bool scale_grad_by_freq)
{
    if (!grad || !indices || !offset2bag || !bag_size)
        return em_error(EM_ERR_VALUE, "embedding_bag_backward: argument is NULL");
    if (mode < EM_BAG_SUM || mode > EM_BAG_MAX || (mode == EM_BAG_MAX) != (max_indices != NULL) ||
        (per_sample_weights && mode != EM_BAG_SUM))
        return em_error(EM_ERR_VALUE, "embedding_bag_backward: mode %d does not fit the tensors given", mode);
    if (num_weights < 0 || check_padding(padding_idx, num_weights))
        return num_weights < 0 ? em_error(EM_ERR_VALUE, "embedding_bag_backward: num_weights < 0") : NULL;
    if (grad->dtype != EM_F32 && grad->dtype != EM_F64)
        return em_error(EM_ERR_DTYPE, "\"embedding_bag_backward_cpu\" not implemented for '%s'",
                        em_dtypes[grad->dtype].scalar_name);
    const int64_t n = em_numel(indices), nb = grad->ndim == 2 ? grad->sizes[0] : -1;
    const em_tensor *want[4] = {indices, offset2bag, bag_size, per_sample_weights};
    const int64_t want_n[4] = {n, n, nb, n};
    bool ok = grad->ndim == 2 && (!max_indices || (max_indices->ndim == 2 && max_indices->sizes[0] == nb &&
                                                   max_indices->sizes[1] == grad->sizes[1] &&
                                                   max_indices->dtype == EM_I64));
    for (int k = 0; k < 4; k++)
        ok &= !want[k] || (want[k]->ndim == 1 && want[k]->sizes[0] == want_n[k] &&
                           (k == 3 ? want[k]->dtype == grad->dtype
                                   : want[k]->dtype == EM_I64 || (k == 0 && want[k]->dtype == EM_I32)));
    if (!ok)
        return em_error(EM_ERR_SHAPE, "embedding_bag_backward: grad of shape %s does not fit the bags' tensors",
                        em_shape_str(grad->ndim, grad->sizes));
    em_tensor *ts[6] = {em_contiguous(grad)};
    for (int k = 0; k < 4; k++) ts[k + 1] = want[k] ? em_contiguous(want[k]) : NULL;
    ts[5] = max_indices ? em_contiguous(max_indices) : NULL;
    em_tensor *out = NULL;
    bool have = ts[0] && ts[1] && ts[2] && ts[3] && (!per_sample_weights || ts[4]) && (!max_indices || ts[5]);
    if (have) {
        const int64_t sizes[2] = {num_weights, grad->sizes[1]};
        em_call c = {.op = EM_OP_embedding_bag_backward, .nin = 6, .in = {ts[0], ts[1], ts[2], ts[3], ts[4], ts[5]},
                     .dtype = (em_dtype)grad->dtype, .i = {num_weights, mode, padding_idx, scale_grad_by_freq},
                     .operand_dtypes = {0, grad->dtype, ts[1]->dtype, EM_I64, EM_I64, grad->dtype, EM_I64}};
        out = em_nn_run_new(&c, 2, sizes, (em_dtype)grad->dtype);
    }
    for (int k = 0; k < 6; k++) em_release(ts[k]);
    return out;
}
