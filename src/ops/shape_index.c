/* The op layer of the shape family's ops whose result shape comes from
 * tensor values: repeat_interleave (its three forms) and one_hot. Their
 * kernels allocate the result (Note [Data-dependent shapes] in shape.h). */
#include "shape.h"

/* Dispatches c to a kernel that allocates the result. */
static em_tensor *run_allocating(em_call *c)
{
    em_tensor *result = NULL;
    em_shape_args a = {.results = &result};
    c->arg = &a;
    return em_dispatch(c) ? NULL : result;
}

/* The counts' checks of PyTorch, in its order (shape, then dtype). */
static em_status check_repeats(const em_tensor *repeats, int64_t n)
{
    if (repeats->ndim > 1) return em_fail(EM_ERR_SHAPE, "repeat_interleave: repeats must be 0-dim or 1-dim tensor");
    if (em_numel(repeats) != 1 && em_numel(repeats) != n)
        return em_fail(EM_ERR_SHAPE, "repeat_interleave: repeats must have the same size as input along dim");
    if (repeats->dtype != EM_I64 && repeats->dtype != EM_I32)
        return em_fail(EM_ERR_DTYPE, "\"repeat_interleave_cpu\" not implemented for '%s'", em_dtypes[repeats->dtype].name);
    return EM_OK;
}

/* repeat_interleave as recorded ops, for autograd: index_select of x (or
 * of x flattened) with the repeated positions (the one-argument form). */
static em_tensor *recorded_repeat_interleave(const em_tensor *x, const em_tensor *repeats, int d, bool flat, int64_t n,
                                             int64_t output_size)
{
    em_tensor *counts = em_numel(repeats) == 1 ? em_expand(repeats, 1, &n) : em_reshape(repeats, 1, &n);
    em_tensor *positions = counts ? em_repeat_interleave_indices(counts, output_size) : NULL;
    em_tensor *xs = flat ? em_reshape(x, 1, &n) : em_retain((em_tensor *)x);
    em_tensor *r = positions && xs ? em_index_select(xs, d, positions) : NULL;
    em_release(counts), em_release(positions), em_release(xs);
    return r;
}

em_tensor *em_repeat_interleave_tensor(const em_tensor *x, const em_tensor *repeats, int dim, int64_t output_size)
{
    if (!x || !repeats) return em_error(EM_ERR_VALUE, "repeat_interleave: input is NULL");
    bool flat = dim == EM_DIM_NONE;
    int d = flat ? 0 : em_shape_wrap_dim_strict(dim, x->ndim, "repeat_interleave");
    if (d < 0) return NULL;
    int64_t n = flat ? em_numel(x) : x->sizes[d];
    if (check_repeats(repeats, n)) return NULL;
    if (em_requires_grad(x) && em_is_grad_enabled()) return recorded_repeat_interleave(x, repeats, d, flat, n, output_size);
    em_call c = {.op = EM_OP_repeat_interleave, .nin = 2, .in = {repeats, x}, .dtype = (em_dtype)x->dtype,
                 .i = {d, flat, output_size}};
    return run_allocating(&c);
}

em_tensor *em_repeat_interleave(const em_tensor *x, int64_t repeats, int dim, int64_t output_size)
{
    em_tensor *counts = em_from_data(&repeats, 0, NULL, EM_I64); /* exact: not through a double */
    em_tensor *r = counts ? em_repeat_interleave_tensor(x, counts, dim, output_size) : NULL;
    em_release(counts);
    return r;
}

em_tensor *em_repeat_interleave_indices(const em_tensor *repeats, int64_t output_size)
{
    if (!repeats) return em_error(EM_ERR_VALUE, "repeat_interleave: repeats is NULL");
    if (repeats->ndim != 1) return em_error(EM_ERR_SHAPE, "repeat_interleave only accept 1D vector as repeat");
    if (check_repeats(repeats, em_numel(repeats))) return NULL;
    em_call c = {.op = EM_OP_repeat_interleave, .nin = 2, .in = {repeats, NULL}, .dtype = (em_dtype)repeats->dtype,
                 .i = {0, 0, output_size}};
    return run_allocating(&c);
}

em_tensor *em_one_hot(const em_tensor *x, int64_t num_classes)
{
    if (!x) return em_error(EM_ERR_VALUE, "one_hot: input is NULL");
    if (x->dtype != EM_I64) return em_error(EM_ERR_DTYPE, "one_hot is only applicable to index tensor.");
    if (x->ndim >= EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "one_hot: the result would have more than %d dims", EM_MAX_DIMS);
    if (em_numel(x) == 0 && num_classes <= 0)
        return em_error(EM_ERR_RUNTIME, "one_hot: Can not infer total number of classes from empty tensor.");
    em_call c = {.op = EM_OP_one_hot, .nin = 1, .in = {x}, .dtype = EM_I64, .i = {num_classes}};
    return run_allocating(&c);
}
