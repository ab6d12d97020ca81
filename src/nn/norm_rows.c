/* The op layer of layer_norm and group_norm and their backward ops: both
 * normalize contiguous rows of x (layout in norm_call.h). */
#include "norm_common.h"

/* Row geometry {R, G, K, S} of a rows call. */
typedef struct rows_geom {
    int64_t R, G, K, S;
} rows_geom;

/* Runs the forward rows op: out = {y, mean, rstd}; mean and rstd get shape
 * (stat_ndim, stat_sizes). weight and bias arrive as given (NULL allowed) and
 * are passed with shape (pn, psizes). */
static em_status rows_forward(em_op op, em_tensor **out, const em_tensor *x, em_dtype dt, rows_geom g,
                              const em_tensor *weight, const em_tensor *bias, int pn, const int64_t *psizes,
                              int stat_ndim, const int64_t *stat_sizes, double eps)
{
    em_tensor *xc = norm_input(x, dt), *w = norm_param(weight, dt, pn, psizes, 1);
    em_tensor *b = norm_param(bias, dt, pn, psizes, 0);
    em_device dev = x->storage->device;
    out[0] = em_tensor_new(x->ndim, x->sizes, dt, dev);
    out[1] = em_tensor_new(stat_ndim, stat_sizes, dt, dev);
    out[2] = em_tensor_new(stat_ndim, stat_sizes, dt, dev);
    em_status st = EM_OK;
    if (!xc || !w || !b || !out[0] || !out[1] || !out[2]) st = em_error_code() ? em_error_code() : EM_ERR_MEMORY;
    if (st == EM_OK) {
        em_call c = {.op = op, .nin = 3, .nout = 3, .dtype = dt, .in = {xc, w, b},
                     .out = {out[0], out[1], out[2]}, .i = {g.R, g.G, g.K, g.S}, .f = {eps}};
        for (int k = 0; k < 6; k++) c.operand_dtypes[k] = dt;
        st = em_dispatch(&c);
    }
    em_release(xc), em_release(w), em_release(b);
    if (st == EM_OK && dt != x->dtype) { /* bfloat16: the result in x's dtype (recorded) */
        em_tensor *y = em_to_dtype(out[0], (em_dtype)x->dtype);
        em_release(out[0]);
        if (!(out[0] = y)) st = em_error_code();
    }
    return st ? norm_fail(out, 3) : EM_OK;
}

/* Runs a backward rows op; grads[k] only where mask[k]. */
static em_status rows_backward(em_op op, em_tensor **grads, const bool *mask, const em_tensor *grad_out,
                               const em_tensor *x, em_dtype dt, rows_geom g, const em_tensor *mean,
                               const em_tensor *rstd, const em_tensor *weight, int pn, const int64_t *psizes)
{
    grads[0] = grads[1] = grads[2] = NULL;
    if (grad_out->ndim != x->ndim || memcmp(grad_out->sizes, x->sizes, x->ndim * sizeof *x->sizes))
        return em_fail(EM_ERR_SHAPE, "%s: grad_out of size %s does not match input of size %s", em_ops[op].name,
                       em_shape_str(grad_out->ndim, grad_out->sizes), em_shape_str(x->ndim, x->sizes));
    if (em_numel(mean) != g.R || em_numel(rstd) != g.R)
        return em_fail(EM_ERR_SHAPE, "%s: expected mean and rstd of %lld elements, got %lld and %lld",
                       em_ops[op].name, (long long)g.R, (long long)em_numel(mean), (long long)em_numel(rstd));
    em_tensor *in[5] = {norm_input(grad_out, dt), norm_input(x, dt), norm_param(mean, dt, 1, &g.R, 0),
                        norm_param(rstd, dt, 1, &g.R, 0), norm_param(weight, dt, pn, psizes, 1)};
    em_status st = EM_OK;
    for (int k = 0; k < 5; k++)
        if (!in[k]) st = em_error_code() ? em_error_code() : EM_ERR_MEMORY;
    for (int k = 0; k < 3 && st == EM_OK; k++)
        if (mask[k] && !(grads[k] = k ? em_tensor_new(pn, psizes, dt, x->storage->device)
                                       : em_tensor_new(x->ndim, x->sizes, dt, x->storage->device)))
            st = em_error_code();
    if (st == EM_OK) {
        em_call c = {.op = op, .nin = 5, .nout = 3, .dtype = dt, .in = {in[0], in[1], in[2], in[3], in[4]},
                     .out = {grads[0], grads[1], grads[2]}, .i = {g.R, g.G, g.K, g.S}};
        for (int k = 0; k < 8; k++) c.operand_dtypes[k] = dt;
        st = em_dispatch(&c);
    }
    for (int k = 0; k < 5; k++) em_release(in[k]);
    return st ? norm_fail(grads, 3) : EM_OK;
}

/* ---- layer norm ------------------------------------------------------------------ */
/* PyTorch's checks: normalized_shape non-empty and a suffix of x's shape,
 * weight and bias of that shape, same dtype as x. Sets *g. */
static em_status check_layer_norm(const em_tensor *x, int nnorm, const int64_t *nshape, const em_tensor *weight,
                                  const em_tensor *bias, rows_geom *g)
{
    if (!x) return em_fail(EM_ERR_VALUE, "layer_norm: input is NULL");
    if (nnorm < 1 || nnorm > EM_MAX_DIMS)
        return em_fail(EM_ERR_RUNTIME, "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
                       "least one element, but got normalized_shape = %s", em_shape_str(nnorm > 0 ? nnorm : 0, nshape));
    const char *ns = em_shape_str(nnorm, nshape);
    const em_tensor *ps[2] = {weight, bias};
    for (int k = 0; k < 2; k++)
        if (ps[k] && (ps[k]->ndim != nnorm || memcmp(ps[k]->sizes, nshape, nnorm * sizeof *nshape)))
            return em_fail(EM_ERR_RUNTIME, "Expected %s to be of same shape as normalized_shape, but got %s of shape "
                           "%s and normalized_shape = %s", k ? "bias" : "weight", k ? "bias" : "weight",
                           em_shape_str(ps[k]->ndim, ps[k]->sizes), ns);
    int lead = x->ndim - nnorm;
    if (lead < 0 || memcmp(x->sizes + (lead > 0 ? lead : 0), nshape, nnorm * sizeof *nshape))
        return em_fail(EM_ERR_RUNTIME, "Given normalized_shape=%s, expected input with shape [*, %s, but got input "
                       "of size%s", ns, ns + 1, em_shape_str(x->ndim, x->sizes));
    if (norm_compute_dtype(x, "LayerNormKernelImpl") == EM_DTYPE_NONE) return em_error_code();
    char msg[96];
    snprintf(msg, sizeof msg, "expected scalar type %s but found %s", em_dtype_scalar_name((em_dtype)x->dtype),
             em_dtype_scalar_name((em_dtype)(weight && weight->dtype != x->dtype ? weight : bias ? bias : x)->dtype));
    if (norm_check_param_dtype(weight, x, msg) || norm_check_param_dtype(bias, x, msg)) return em_error_code();
    int64_t L = em_shape_numel(nnorm, nshape);
    *g = (rows_geom){em_shape_numel(lead, x->sizes), 1, L, 1};
    return EM_OK;
}

em_status em_native_layer_norm(em_tensor **out, const em_tensor *x, int nnorm, const int64_t *normalized_shape,
                               const em_tensor *weight, const em_tensor *bias, double eps)
{
    if (EM_NULL(out) || EM_NULL(x) || EM_NULL_N(nnorm, normalized_shape)) return em_error_code();
    out[0] = out[1] = out[2] = NULL;
    rows_geom g;
    if (check_layer_norm(x, nnorm, normalized_shape, weight, bias, &g)) return em_error_code();
    int64_t stat[EM_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) stat[d] = d < x->ndim - nnorm ? x->sizes[d] : 1;
    return rows_forward(EM_OP_layer_norm, out, x, norm_compute_dtype(x, ""), g, weight, bias, nnorm,
                        normalized_shape, x->ndim, stat, eps);
}

em_tensor *em_layer_norm(const em_tensor *x, int nnorm, const int64_t *normalized_shape, const em_tensor *weight,
                         const em_tensor *bias, double eps)
{
    if (EM_NULL(x) || EM_NULL_N(nnorm, normalized_shape)) return NULL;
    em_tensor *out[3];
    if (em_native_layer_norm(out, x, nnorm, normalized_shape, weight, bias, eps)) return NULL;
    em_release(out[1]);
    em_release(out[2]);
    return out[0];
}

em_status em_layer_norm_backward(em_tensor **grads, const bool *mask, const em_tensor *grad_out,
                                 const em_tensor *x, int nnorm, const int64_t *normalized_shape,
                                 const em_tensor *mean, const em_tensor *rstd, const em_tensor *weight)
{
    if (EM_NULL(grads) || EM_NULL(mask) || EM_NULL(grad_out) || EM_NULL(x) || EM_NULL_N(nnorm, normalized_shape) || EM_NULL(mean) || EM_NULL(rstd)) return em_error_code();
    grads[0] = grads[1] = grads[2] = NULL;
    rows_geom g;
    if (!grad_out || !mean || !rstd) return em_fail(EM_ERR_VALUE, "layer_norm_backward: argument is NULL");
    if (check_layer_norm(x, nnorm, normalized_shape, weight, NULL, &g)) return em_error_code();
    return rows_backward(EM_OP_layer_norm_backward, grads, mask, grad_out, x, norm_compute_dtype(x, ""), g, mean,
                         rstd, weight, nnorm, normalized_shape);
}

/* ---- group norm ------------------------------------------------------------------- */
static em_status check_group_norm(const em_tensor *x, int64_t groups, const em_tensor *weight, const em_tensor *bias,
                                  rows_geom *g)
{
    if (!x) return em_fail(EM_ERR_VALUE, "group_norm: input is NULL");
    if (x->ndim < 2)
        return em_fail(EM_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got 1)",
                       x->ndim ? -x->ndim : -1, x->ndim ? x->ndim - 1 : 0);
    int64_t N = x->sizes[0], C = x->sizes[1];
    if (groups <= 0) return em_fail(EM_ERR_RUNTIME, "Expected num groups to be greater than 0, got %lld", (long long)groups);
    if (C % groups)
        return em_fail(EM_ERR_RUNTIME, "Expected number of channels in input to be divisible by num_groups, but got "
                       "input of shape %s and num_groups=%lld", em_shape_str(x->ndim, x->sizes), (long long)groups);
    const em_tensor *ps[2] = {weight, bias};
    for (int k = 0; k < 2; k++)
        if (ps[k] && (ps[k]->ndim != 1 || ps[k]->sizes[0] != C))
            return em_fail(EM_ERR_RUNTIME, "Expected %s to be a vector of size equal to the number of channels in "
                           "input, but got %s of shape %s and input of shape %s", k ? "bias" : "weight",
                           k ? "bias" : "weight", em_shape_str(ps[k]->ndim, ps[k]->sizes),
                           em_shape_str(x->ndim, x->sizes));
    if (norm_compute_dtype(x, "GroupNormKernelImpl") == EM_DTYPE_NONE) return em_error_code();
    char msg[96];
    snprintf(msg, sizeof msg, "expected scalar type %s but found %s", em_dtype_scalar_name((em_dtype)x->dtype),
             em_dtype_scalar_name((em_dtype)(weight && weight->dtype != x->dtype ? weight : bias ? bias : x)->dtype));
    if (norm_check_param_dtype(weight, x, msg) || norm_check_param_dtype(bias, x, msg)) return em_error_code();
    *g = (rows_geom){N * groups, groups, C / groups, em_shape_numel(x->ndim - 2, x->sizes + 2)};
    return EM_OK;
}

em_status em_native_group_norm(em_tensor **out, const em_tensor *x, int64_t num_groups, const em_tensor *weight,
                               const em_tensor *bias, double eps)
{
    if (EM_NULL(out) || EM_NULL(x)) return em_error_code();
    out[0] = out[1] = out[2] = NULL;
    rows_geom g;
    if (check_group_norm(x, num_groups, weight, bias, &g)) return em_error_code();
    int64_t C = x->sizes[1], stat[2] = {x->sizes[0], num_groups};
    return rows_forward(EM_OP_group_norm, out, x, norm_compute_dtype(x, ""), g, weight, bias, 1, &C, 2, stat, eps);
}

em_tensor *em_group_norm(const em_tensor *x, int64_t num_groups, const em_tensor *weight, const em_tensor *bias,
                         double eps)
{
    em_tensor *out[3];
    if (em_native_group_norm(out, x, num_groups, weight, bias, eps)) return NULL;
    em_release(out[1]);
    em_release(out[2]);
    return em_in_format(out[0], em_suggest_memory_format(x)); /* keeps channels_last(_3d), as PyTorch */
}

em_status em_group_norm_backward(em_tensor **grads, const bool *mask, const em_tensor *grad_out,
                                 const em_tensor *x, const em_tensor *mean, const em_tensor *rstd,
                                 const em_tensor *weight, int64_t num_groups)
{
    if (EM_NULL(grads) || EM_NULL(mask) || EM_NULL(grad_out) || EM_NULL(x) || EM_NULL(mean) || EM_NULL(rstd)) return em_error_code();
    grads[0] = grads[1] = grads[2] = NULL;
    rows_geom g;
    if (!grad_out || !mean || !rstd) return em_fail(EM_ERR_VALUE, "group_norm_backward: argument is NULL");
    if (check_group_norm(x, num_groups, weight, NULL, &g)) return em_error_code();
    int64_t C = x->sizes[1];
    return rows_backward(EM_OP_group_norm_backward, grads, mask, grad_out, x, norm_compute_dtype(x, ""), g, mean,
                         rstd, weight, 1, &C);
}
