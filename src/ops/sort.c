/* The op layer of sort, argsort, msort, topk and kthvalue: argument checks,
 * result shapes, out= handling, then one dispatch of the sort family's
 * "along a dim" kernels (src/cpu/sort.c). */
#include "sort_ops.h"

/* One dispatch of op on t along dim into indices and values (values NULL:
 * not wanted), with params p1, p2 after the dim. */
static em_status dispatch_along(em_op op, em_tensor *indices, em_tensor *values, const em_tensor *t, int dim,
                                int64_t p1, int64_t p2)
{
    em_call c = {.op = op, .nin = 1, .nout = 2, .dtype = (em_dtype)t->dtype};
    c.in[0] = t;
    c.out[0] = indices;
    c.out[1] = values;
    c.operand_dtypes[0] = EM_I64;
    c.operand_dtypes[1] = (int8_t)t->dtype;
    c.operand_dtypes[2] = (int8_t)t->dtype;
    c.i[0] = dim;
    c.i[1] = p1;
    c.i[2] = p2;
    return em_dispatch(&c);
}

/* Copies the kernel's result r (fresh) into dst, given dst's shape by a
 * reshape: both are recorded, so dst gets r's history. */
static em_status deliver_into(em_tensor *dst, const em_tensor *r)
{
    if (!dst) return EM_OK;
    em_tensor *v = em_reshape(r, dst->ndim, dst->sizes);
    em_status st = v ? em_copy_(dst, v) : em_error_code();
    em_release(v);
    return st;
}

/* Runs op on t along dim into indices and values (NULL: not wanted), both of
 * t's rank, or of the kernel's shape `kshape` (ndim kdims) when it differs
 * (kdims < 0: it does not). The kernels need at least one dim and write
 * keepdim rows; when the outputs lack them the kernel writes fresh tensors
 * that are then copied in through recorded ops, so autograd records the
 * dispatch on the tensors it really wrote and the results get its history
 * (never through an internal view of a result). */
static em_status run_along_shaped(em_op op, em_tensor *indices, em_tensor *values, const em_tensor *t, int dim,
                                  int64_t p1, int64_t p2, int kdims, const int64_t *kshape)
{
    if (t->ndim && kdims < 0) return dispatch_along(op, indices, values, t, dim, p1, p2);
    static const int64_t one = 1;
    int nd = t->ndim ? kdims : 1;
    const int64_t *shape = t->ndim ? kshape : &one;
    /* a 0-d t as one row: a recorded view, so its gradient reaches t */
    em_tensor *tv = t->ndim ? em_retain((em_tensor *)t) : em_reshape(t, 1, &one);
    em_tensor *ik = em_tensor_new(nd, shape, EM_I64, indices->storage->device);
    em_tensor *vk = values ? em_tensor_new(nd, shape, (em_dtype)t->dtype, t->storage->device) : NULL;
    em_status st = tv && ik && (vk || !values) ? dispatch_along(op, ik, vk, tv, dim, p1, p2) : em_error_code();
    if (!st) st = deliver_into(indices, ik);
    if (!st) st = deliver_into(values, vk);
    em_release(tv);
    em_release(ik);
    em_release(vk);
    return st;
}

static em_status run_along(em_op op, em_tensor *indices, em_tensor *values, const em_tensor *t, int dim, int64_t p1,
                           int64_t p2)
{
    return run_along_shaped(op, indices, values, t, dim, p1, p2, -1, NULL);
}

/* The out= checks of a (values, indices) pair, before anything is written:
 * values of t's dtype (if given), int64 indices, no overlap with t. */
static em_status check_outs(em_tensor *values, em_tensor *indices, const em_tensor *t, const char *op)
{
    if (!indices || (values && em_sort_check_dtype(values, (em_dtype)t->dtype, op)) ||
        em_sort_check_dtype(indices, EM_I64, op))
        return indices ? em_error_code() : em_fail(EM_ERR_VALUE, "%s: out is NULL", op);
    if ((values && em_check_overlap(values, t, op)) || em_check_overlap(indices, t, op)) return em_error_code();
    return EM_OK;
}

/* Resizes the outputs and runs the kernel (the dispatcher bumps their versions). */
static em_status run_into(em_op op, em_tensor *values, em_tensor *indices, const em_tensor *t, int dim,
                          int ndim, const int64_t *shape, int64_t p1, int64_t p2)
{
    if ((values && em_resize_(values, ndim, shape)) || em_resize_(indices, ndim, shape)) return em_error_code();
    em_status st = run_along(op, indices, values, t, dim, p1, p2);
    if (st) return st;
    return EM_OK;
}

/* Fresh outputs for the new-tensor forms; *values stays NULL if not wanted. */
static em_status new_outs(const em_tensor *t, int ndim, const int64_t *shape, em_tensor **values,
                          em_tensor **indices)
{
    *indices = em_tensor_new(ndim, shape, EM_I64, t->storage->device);
    if (values) *values = em_tensor_new(ndim, shape, (em_dtype)t->dtype, t->storage->device);
    if (*indices && (!values || *values)) return EM_OK;
    return em_sort_results_drop(values, indices, NULL);
}

/* ---- sort / argsort / msort ---------------------------------------------- */
static em_status sort_checked(const em_tensor *t, int *dim, const char *op)
{
    if (!t) return em_fail(EM_ERR_VALUE, "%s: input is NULL", op);
    *dim = em_wrap_dim(*dim, t->ndim, op);
    return *dim < 0 ? em_error_code() : EM_OK;
}

em_status em_sort_out(em_tensor *values, em_tensor *indices, const em_tensor *t, int dim, bool descending,
                      bool stable)
{
    EM_UNUSED(stable); /* every sort here is stable */
    if (sort_checked(t, &dim, "sort") || check_outs(values, indices, t, "sort")) return em_error_code();
    return run_into(EM_OP_sort, values, indices, t, dim, t->ndim, t->sizes, descending, 0);
}

em_status em_sort(const em_tensor *t, int dim, bool descending, bool stable, em_tensor **values,
                  em_tensor **indices)
{
    EM_UNUSED(stable);
    em_sort_results_init(values, indices, NULL);
    if (!values || !indices) return em_fail(EM_ERR_VALUE, "sort: result pointer is NULL");
    if (sort_checked(t, &dim, "sort") || new_outs(t, t->ndim, t->sizes, values, indices)) return em_error_code();
    em_status st = run_along(EM_OP_sort, *indices, *values, t, dim, descending, 0);
    if (st) em_sort_results_drop(values, indices, NULL);
    return st;
}

em_tensor *em_argsort(const em_tensor *t, int dim, bool descending, bool stable)
{
    EM_UNUSED(stable);
    em_tensor *indices = NULL;
    if (sort_checked(t, &dim, "argsort") || new_outs(t, t->ndim, t->sizes, NULL, &indices)) return NULL;
    if (run_along(EM_OP_sort, indices, NULL, t, dim, descending, 0)) em_sort_results_drop(&indices, NULL, NULL);
    return indices;
}

em_tensor *em_msort(const em_tensor *t)
{
    em_tensor *values = NULL, *indices = NULL;
    em_sort(t, 0, false, true, &values, &indices);
    em_release(indices);
    return values;
}

em_status em_msort_out(em_tensor *out, const em_tensor *t)
{
    int dim = 0;
    if (sort_checked(t, &dim, "msort")) return em_error_code();
    if (!out) return em_fail(EM_ERR_VALUE, "msort: out is NULL");
    if (em_sort_check_dtype(out, (em_dtype)t->dtype, "msort") || em_check_overlap(out, t, "msort"))
        return em_error_code();
    em_tensor *indices = em_tensor_new(t->ndim, t->sizes, EM_I64, t->storage->device);
    if (!indices) return em_error_code();
    em_status st = run_into(EM_OP_sort, out, indices, t, 0, t->ndim, t->sizes, false, 0);
    em_release(indices);
    return st;
}

/* ---- topk ------------------------------------------------------------------ */
/* Checks t, dim and k; the result shape (t's with k along dim) into shape.
 * *k becomes the count the kernel writes: a 0-d t gives its one element
 * for k = 0 too (as PyTorch). */
static em_status topk_checked(const em_tensor *t, int64_t *kp, int *dim, int64_t *shape)
{
    int64_t k = *kp;
    if (sort_checked(t, dim, "topk")) return em_error_code();
    if (t->dtype == EM_BOOL || t->dtype == EM_F16)
        return em_fail(EM_ERR_DTYPE, "\"topk_cpu\" not implemented for '%s'", em_dtypes[t->dtype].name);
    int64_t n = t->ndim ? t->sizes[*dim] : 1;
    if (k < 0 || k > n)
        return em_fail(EM_ERR_RUNTIME, "topk: selected index k out of range (k = %lld, size of dim %d is %lld)",
                       (long long)k, *dim, (long long)n);
    memcpy(shape, t->sizes, t->ndim * sizeof *shape);
    if (t->ndim)
        shape[*dim] = k;
    else
        *kp = 1;
    return EM_OK;
}

em_status em_topk(const em_tensor *t, int64_t k, int dim, bool largest, bool sorted, em_tensor **values,
                  em_tensor **indices)
{
    EM_UNUSED(sorted); /* results always come in order */
    em_sort_results_init(values, indices, NULL);
    int64_t shape[EM_MAX_DIMS];
    if (!values || !indices) return em_fail(EM_ERR_VALUE, "topk: result pointer is NULL");
    if (topk_checked(t, &k, &dim, shape) || new_outs(t, t->ndim, shape, values, indices)) return em_error_code();
    em_status st = run_along(EM_OP_topk, *indices, *values, t, dim, k, largest);
    if (st) em_sort_results_drop(values, indices, NULL);
    return st;
}

em_status em_topk_out(em_tensor *values, em_tensor *indices, const em_tensor *t, int64_t k, int dim,
                      bool largest, bool sorted)
{
    EM_UNUSED(sorted);
    int64_t shape[EM_MAX_DIMS];
    if (topk_checked(t, &k, &dim, shape) || check_outs(values, indices, t, "topk")) return em_error_code();
    if (!values) return em_fail(EM_ERR_VALUE, "topk: out is NULL");
    return run_into(EM_OP_topk, values, indices, t, dim, t->ndim, shape, k, largest);
}

/* ---- kthvalue --------------------------------------------------------------- */
/* Checks t, dim and k; the result shape into (*ndim, shape). */
static em_status kth_checked(const em_tensor *t, int64_t k, int *dim, bool keepdim, int *ndim, int64_t *shape)
{
    if (sort_checked(t, dim, "kthvalue")) return em_error_code();
    if (t->dtype == EM_BOOL || t->dtype == EM_F16)
        return em_fail(EM_ERR_DTYPE, "\"kthvalue_cpu\" not implemented for '%s'", em_dtypes[t->dtype].name);
    int64_t n = t->ndim ? t->sizes[*dim] : 1;
    if (n == 0)
        return em_fail(EM_ERR_INDEX, "kthvalue(): Expected reduction dim %d to have non-zero size.", *dim);
    if (k < 1 || k > n)
        return em_fail(EM_ERR_RUNTIME, "kthvalue(): selected number k out of range for dimension %d (k = %lld, "
                       "size %lld)", *dim, (long long)k, (long long)n);
    *ndim = 0;
    for (int d = 0; d < t->ndim; d++)
        if (d != *dim || keepdim) shape[(*ndim)++] = d == *dim ? 1 : t->sizes[d];
    return EM_OK;
}

/* The kernel writes keepdim-shaped rows: without keepdim it writes fresh
 * ones, copied into the reduced outputs (run_along_shaped). */
static em_status kth_run(em_tensor *values, em_tensor *indices, const em_tensor *t, int64_t k, int dim,
                         bool keepdim)
{
    if (keepdim || t->ndim == 0) return run_along(EM_OP_kthvalue, indices, values, t, dim, k, 0);
    int64_t shape[EM_MAX_DIMS];
    memcpy(shape, t->sizes, t->ndim * sizeof *shape);
    shape[dim] = 1;
    return run_along_shaped(EM_OP_kthvalue, indices, values, t, dim, k, 0, t->ndim, shape);
}

em_status em_kthvalue(const em_tensor *t, int64_t k, int dim, bool keepdim, em_tensor **values,
                      em_tensor **indices)
{
    em_sort_results_init(values, indices, NULL);
    int64_t shape[EM_MAX_DIMS];
    int ndim;
    if (!values || !indices) return em_fail(EM_ERR_VALUE, "kthvalue: result pointer is NULL");
    if (kth_checked(t, k, &dim, keepdim, &ndim, shape) || new_outs(t, ndim, shape, values, indices))
        return em_error_code();
    em_status st = kth_run(*values, *indices, t, k, dim, keepdim);
    if (st) em_sort_results_drop(values, indices, NULL);
    return st;
}

em_status em_kthvalue_out(em_tensor *values, em_tensor *indices, const em_tensor *t, int64_t k, int dim,
                          bool keepdim)
{
    int64_t shape[EM_MAX_DIMS];
    int ndim;
    if (kth_checked(t, k, &dim, keepdim, &ndim, shape) || check_outs(values, indices, t, "kthvalue"))
        return em_error_code();
    if (!values) return em_fail(EM_ERR_VALUE, "kthvalue: out is NULL");
    /* unlike sort's, kthvalue's outputs may not even alias t exactly (as PyTorch):
     * resizing them would reshape t under the kernel */
    if (em_check_no_overlap(values, t, "kthvalue") || em_check_no_overlap(indices, t, "kthvalue"))
        return em_error_code();
    if (em_resize_(values, ndim, shape) || em_resize_(indices, ndim, shape)) return em_error_code();
    em_status st = kth_run(values, indices, t, k, dim, keepdim);
    if (st) return st;
    return EM_OK;
}

em_status em_sort_deliver(em_tensor *out, em_tensor *result)
{
    em_status st = em_resize_(out, result->ndim, result->sizes);
    if (!st) st = em_copy_(out, result);
    em_release(result);
    return st;
}
