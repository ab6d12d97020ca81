/* Backward formulas of reductions, scans and softmax, after PyTorch 1.13's
 * derivatives.yaml.
 *
 * What a node holds (see em_reduce_run in src/ops/reduce_common.c): input 0
 * is x converted to the compute dtype; the outputs are the kernel's, with the
 * reduced dims kept as size 1 (the op layer drops them afterwards as a
 * recorded view), so G always broadcasts back over x; except the sum-like ops
 * (sum, nansum, mean, nanmean, prod), whose kernels drop them (one node, not
 * two): their formulas put them back first (keepdim). c->i[0] is the mask of
 * reduced dims (empty for a 0-d x), c->f[0] the correction (var, std) or p
 * (norm).
 *
 * Formulas that read the forward's result take the saved output, except when
 * their backward is itself recorded (create_graph): a saved output cannot be
 * differentiated again yet, so they recompute it from the saved input with
 * recorded ops (forward_result). Integer outputs are not saved: the ops that
 * select an index recompute it, with grad mode off (selected_indices). */
#include "autograd.h"
#include "ember/ember.h"
#include <float.h>
#include <math.h>

#define S(v) X(em_scalar_float(v))
#define C(v) X(em_conj_if_complex(v)) /* Note [Complex gradients] */
#define INPUT(v, i)                                    \
    const em_tensor *v = em_node_input(n, i);          \
    if (!v) return em_error_code()

/* ---- the node's reduced dims ------------------------------------------------ */
static uint32_t mask_of(const em_node *n) { return (uint32_t)n->call.i[0]; }
/* The dim of a one-dim op (0 for a 0-d input, which every op accepts). */
static int dim_of(const em_node *n) { return mask_of(n) ? __builtin_ctz(mask_of(n)) : 0; }
/* The reduced dims as an ndims/dims argument; 0 (every dim) for a 0-d input. */
static int dims_of(const em_node *n, int *dims)
{
    int nd = 0;
    for (int d = 0; d < n->in_geom[0].ndim; d++)
        if (mask_of(n) >> d & 1) dims[nd++] = d;
    return nd;
}
/* How many elements of x each output element reduces. */
static int64_t reduced_count(const em_node *n)
{
    int64_t c = 1;
    for (int d = 0; d < n->in_geom[0].ndim; d++)
        if (mask_of(n) >> d & 1) c *= n->in_geom[0].sizes[d];
    return c;
}
static bool is_scalar_input(const em_node *n) { return n->in_geom[0].ndim == 0; }

/* g with the reduced dims as size 1 (the sum-like ops' outputs lack them
 * without keepdim: em_reduce_plan.kernel_drops). A new reference. */
static em_tensor *keepdim(const em_node *n, const em_tensor *g)
{
    const em_geometry *in = &n->in_geom[0];
    if (g->ndim == in->ndim) return em_retain((em_tensor *)g);
    int64_t shape[EM_MAX_DIMS];
    for (int d = 0; d < in->ndim; d++) shape[d] = mask_of(n) >> d & 1 ? 1 : in->sizes[d];
    return em_reshape(g, in->ndim, shape);
}

static em_tensor *expand_to_input(const em_node *n, const em_tensor *g)
{
    em_tensor *k = keepdim(n, g), *r = k ? em_expand(k, n->in_geom[0].ndim, n->in_geom[0].sizes) : NULL;
    em_release(k);
    return r;
}

/* The forward's (first) result, reduced dims kept: the saved output, or,
 * when this backward is recorded, recomputed from x. A new reference. */
static em_tensor *forward_result(const em_node *n, const em_tensor *x)
{
    if (!em_is_grad_enabled()) return em_retain((em_tensor *)em_node_output(n, 0));
    int dims[EM_MAX_DIMS], nd = dims_of(n, dims), d = dim_of(n);
    double f = n->call.f[0];
    switch (n->call.op) {
    case EM_OP_max: return em_max(x);
    case EM_OP_min: return em_min(x);
    case EM_OP_median: return em_median(x);
    case EM_OP_nanmedian: return em_nanmedian(x);
    case EM_OP_amax: return em_amax(x, nd, dims, true);
    case EM_OP_amin: return em_amin(x, nd, dims, true);
    case EM_OP_std:
    case EM_OP_std_mean: return em_std(x, nd, dims, f, true);
    case EM_OP_norm: return em_norm(x, f, nd, dims, true, EM_DTYPE_NONE);
    case EM_OP_logsumexp: return em_logsumexp(x, nd, dims, true);
    case EM_OP_cumprod: return em_cumprod(x, d, EM_DTYPE_NONE);
    case EM_OP_logcumsumexp: return em_logcumsumexp(x, d);
    default: return em_error(EM_ERR_RUNTIME, "forward_result: %s is not recomputed", em_ops[n->call.op].name);
    }
}
#define RESULT_AND_INPUT (EM_SAVE_IN(0) | EM_SAVE_OUT(0))

/* ---- sums and means -------------------------------------------------------------- */
EM_BACKWARD(sum, 0)
{
    em_arena a = {0};
    GRAD(0, X(expand_to_input(n, G)));
    DONE();
}

EM_BACKWARD(mean, 0)
{
    em_arena a = {0};
    int64_t in = em_shape_numel(n->in_geom[0].ndim, n->in_geom[0].sizes);
    int64_t out = em_shape_numel(n->out_geom[0].ndim, n->out_geom[0].sizes);
    GRAD(0, X(expand_to_input(n, X(em_div(G, X(em_scalar_float(out ? (double)in / out : 1)))))));
    DONE();
}

/* nansum: NaNs were skipped, so they get no gradient */
EM_BACKWARD(nansum, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    GRAD(0, X(em_mul(X(keepdim(n, G)), X(em_logical_not(X(em_isnan(x)))))));
    DONE();
}

/* nanmean = nansum / count of non-NaNs (an all-NaN slice: NaN, as PyTorch) */
EM_BACKWARD(nanmean, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    int dims[EM_MAX_DIMS], nd = dims_of(n, dims);
    em_tensor *kept = X(em_logical_not(X(em_isnan(x))));
    em_tensor *count = X(em_sum(kept, nd, dims, true, EM_DTYPE_NONE));
    GRAD(0, X(em_div(X(em_mul(X(keepdim(n, G)), kept)), count)));
    DONE();
}

/* prod: d/dx_i = the product of the others, by counting zeros per slice
 * (PyTorch's prod_backward): none, prod / x_i; one, the product of the
 * nonzeros at the zero and 0 elsewhere; more, 0. The second derivative at a
 * zero input misses the terms through the other zero (PyTorch has them). */
EM_BACKWARD(prod, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    int dims[EM_MAX_DIMS], nd = dims_of(n, dims);
    em_tensor *zero = X(em_eq(x, S(0)));
    em_tensor *zeros = X(em_sum(zero, nd, dims, true, EM_DTYPE_NONE));
    em_tensor *nonzero_x = X(em_where(zero, S(1), x));
    em_tensor *nonzero_prod = X(em_prod(nonzero_x, nd, dims, true, EM_DTYPE_NONE));
    em_tensor *at_one_zero = X(em_where(zero, nonzero_prod, S(0)));
    em_tensor *d = X(em_where(X(em_eq(zeros, S(0))), X(em_div(nonzero_prod, nonzero_x)),
                              X(em_where(X(em_eq(zeros, S(1))), at_one_zero, S(0)))));
    GRAD(0, X(em_mul(X(keepdim(n, G)), C(d))));
    DONE();
}

/* ---- extrema and selections ------------------------------------------------------- */
/* The int64 indices that a selecting op took along its dim (keepdim shape),
 * recomputed from x (the kernels are deterministic) with grad mode off. */
static em_tensor *selected_indices(const em_node *n, const em_tensor *x)
{
    int d = dim_of(n);
    em_tensor *values = NULL, *indices = NULL;
    bool was = em_is_grad_enabled();
    em_set_grad_enabled(false);
    em_status st;
    switch (n->call.op) {
    case EM_OP_max_dim: st = em_max_dim(x, d, true, &values, &indices); break;
    case EM_OP_min_dim: st = em_min_dim(x, d, true, &values, &indices); break;
    case EM_OP_median_dim: st = em_median_dim(x, d, true, &values, &indices); break;
    case EM_OP_nanmedian_dim: st = em_nanmedian_dim(x, d, true, &values, &indices); break;
    case EM_OP_mode: st = em_mode(x, d, true, &values, &indices); break;
    case EM_OP_cummax: st = em_cummax(x, d, &values, &indices); break;
    case EM_OP_cummin: st = em_cummin(x, d, &values, &indices); break;
    default: st = em_fail(EM_ERR_RUNTIME, "selected_indices: %s selects nothing", em_ops[n->call.op].name);
    }
    em_set_grad_enabled(was);
    em_release(values);
    return st ? NULL : indices;
}

/* g split evenly among the elements of x equal to the selected value v (or,
 * when v is NaN, among the NaNs): PyTorch's evenly_distribute_backward. */
static em_tensor *evenly_distribute(const em_tensor *g, const em_tensor *x, const em_tensor *v)
{
    em_arena a = {0};
    em_tensor *nan_pair = X(em_logical_and(X(em_isnan(x)), X(em_isnan(v))));
    em_tensor *mask = X(em_logical_or(X(em_eq(x, v)), nan_pair));
    em_tensor *share = X(em_div(g, X(em_sum(mask, 0, NULL, false, EM_DTYPE_NONE))));
    em_tensor *r = em_arena_result(&a, X(em_where(mask, share, S(0))));
    em_arena_end(&a);
    return r;
}

/* max, min, median, nanmedian of every element: the value's occurrences share g */
#define EVENLY_DISTRIBUTE(op)                                         \
    EM_BACKWARD(op, RESULT_AND_INPUT)                                 \
    {                                                                 \
        em_arena a = {0};                                             \
        INPUT(x, 0);                                                  \
        em_tensor *v = X(forward_result(n, x));                       \
        GRAD(0, X(evenly_distribute(G, x, v)));                       \
        DONE();                                                       \
    }
EVENLY_DISTRIBUTE(max)
EVENLY_DISTRIBUTE(min)
EVENLY_DISTRIBUTE(median)
EVENLY_DISTRIBUTE(nanmedian)

/* amax, amin: g split among the ties of each slice (PyTorch's
 * scale_grad_by_count: a NaN extremum gives NaN to its whole slice) */
#define SPLIT_AMONG_TIES(op)                                                   \
    EM_BACKWARD(op, RESULT_AND_INPUT)                                          \
    {                                                                          \
        em_arena a = {0};                                                      \
        INPUT(x, 0);                                                           \
        int dims[EM_MAX_DIMS], nd = dims_of(n, dims);                          \
        em_tensor *mask = X(em_eq(x, X(forward_result(n, x))));                \
        em_tensor *count = X(em_sum(mask, nd, dims, true, EM_DTYPE_NONE));     \
        GRAD(0, X(em_mul(X(em_div(G, count)), mask)));                         \
        DONE();                                                                \
    }
SPLIT_AMONG_TIES(amax)
SPLIT_AMONG_TIES(amin)

/* g (x's shape with size 1 at dim d) placed where the position along d is
 * idx (same shape, int64), zero elsewhere: the gradient of a value that an op
 * selected along d (PyTorch's value_selecting_reduction_backward). A where,
 * not a scatter, so that it can be differentiated again. */
static em_tensor *to_selected(const em_node *n, const em_tensor *g, const em_tensor *idx, int d)
{
    int nd = n->in_geom[0].ndim;
    int64_t shape[EM_MAX_DIMS];
    for (int k = 0; k < nd; k++) shape[k] = k == d ? n->in_geom[0].sizes[d] : 1;
    em_arena a = {0};
    em_tensor *pos = X(em_arange_int(0, shape[d], 1, EM_I64));
    if (pos) pos = X(em_view(pos, nd, shape)); /* em_view takes no NULL */
    em_tensor *r = em_arena_result(&a, X(em_where(X(em_eq(pos, idx)), g, S(0))));
    em_arena_end(&a);
    return r;
}

/* max/min/median/nanmedian/mode along a dim: the values' gradient goes to
 * the selected index; the indices are not differentiable. A 0-d x selected
 * itself. */
static em_status to_selected_index(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    if (is_scalar_input(n)) {
        GRAD(0, G);
        DONE();
    }
    INPUT(x, 0);
    em_tensor *indices = X(selected_indices(n, x));
    GRAD(0, X(to_selected(n, G, indices, dim_of(n))));
    DONE();
}
#define TO_SELECTED_INDEX(op) \
    EM_BACKWARD(op, EM_SAVE_IN(0)) { return to_selected_index(n, go, gi); }
TO_SELECTED_INDEX(max_dim)
TO_SELECTED_INDEX(min_dim)
TO_SELECTED_INDEX(median_dim)
TO_SELECTED_INDEX(nanmedian_dim)
TO_SELECTED_INDEX(mode)

/* ---- variance and norms ----------------------------------------------------------- */
/* var: g 2 (x - mean) / (N - correction), with PyTorch's raw N - correction
 * (inf or negative when N <= correction). A new reference. */
static em_tensor *var_grad(const em_node *n, const em_tensor *x, const em_tensor *g)
{
    int dims[EM_MAX_DIMS], nd = dims_of(n, dims);
    em_arena a = {0};
    em_tensor *centered = X(em_sub(x, X(em_mean(x, nd, dims, true, EM_DTYPE_NONE)), 1));
    double scale = 2.0 / ((double)reduced_count(n) - n->call.f[0]);
    em_tensor *r = em_arena_result(&a, X(em_mul(X(em_mul(g, S(scale))), centered)));
    em_arena_end(&a);
    return r;
}

/* std = sqrt(var): var's gradient of g / (2 std), zero where std is 0 */
static em_tensor *std_grad(const em_node *n, const em_tensor *x, const em_tensor *g)
{
    em_arena a = {0};
    em_tensor *std = X(forward_result(n, x));
    em_tensor *gv = X(em_where(X(em_eq(std, S(0))), S(0), X(em_div(g, X(em_mul(std, S(2)))))));
    em_tensor *r = em_arena_result(&a, X(var_grad(n, x, gv)));
    em_arena_end(&a);
    return r;
}

EM_BACKWARD(var, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    GRAD(0, X(var_grad(n, x, G)));
    DONE();
}

EM_BACKWARD(std, RESULT_AND_INPUT)
{
    em_arena a = {0};
    INPUT(x, 0);
    GRAD(0, X(std_grad(n, x, G)));
    DONE();
}

/* var_mean, std_mean: the two outputs' gradients add up */
EM_BACKWARD(var_mean, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *from_mean = X(em_div(go[1], S((double)reduced_count(n))));
    GRAD(0, X(em_add(X(var_grad(n, x, go[0])), from_mean, 1)));
    DONE();
}

EM_BACKWARD(std_mean, RESULT_AND_INPUT)
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *from_mean = X(em_div(go[1], S((double)reduced_count(n))));
    GRAD(0, X(em_add(X(std_grad(n, x, go[0])), from_mean, 1)));
    DONE();
}

/* norm (PyTorch's norm_backward): p = 0 has zero gradient; 1: sign(x); 2: x / norm;
 * +-inf: sign(x) split among the elements whose |x| is the norm (or NaN);
 * otherwise sign(x) |x|^(p-1) / norm^(p-1). A zero norm gives zero. */
EM_BACKWARD(norm, RESULT_AND_INPUT)
{
    em_arena a = {0};
    INPUT(x, 0);
    int dims[EM_MAX_DIMS], nd = dims_of(n, dims);
    double p = n->call.f[0];
    if (p == 0) {
        GRAD(0, X(em_zeros_like(x, EM_DTYPE_NONE)));
        DONE();
    }
    if (p == 1) {
        GRAD(0, X(em_mul(X(em_sign(x)), G)));
        DONE();
    }
    em_tensor *norm = X(forward_result(n, x));
    em_tensor *zero_norm = X(em_eq(norm, S(0)));
    if (p == 2) {
        GRAD(0, X(em_mul(G, X(em_where(zero_norm, S(0), X(em_div(x, norm)))))));
        DONE();
    }
    em_tensor *absx = X(em_abs(x));
    if (isinf(p)) {
        em_tensor *mask = X(em_logical_or(X(em_eq(absx, norm)), X(em_isnan(absx))));
        em_tensor *share = X(em_div(G, X(em_sum(mask, nd, dims, true, EM_DTYPE_NONE))));
        GRAD(0, X(em_mul(X(em_sign(x)), X(em_mul(share, mask)))));
        DONE();
    }
    if (p < 1) { /* |x|^(p-1) is infinite at 0: those elements get 0 */
        em_tensor *scaled = X(em_where(X(em_eq(x, S(0))), S(0), X(em_pow(absx, S(p - 1)))));
        GRAD(0, X(em_mul(X(em_mul(X(em_mul(X(em_sign(x)), scaled)), G)), X(em_pow(norm, S(1 - p))))));
        DONE();
    }
    em_tensor *scale = X(em_where(zero_norm, S(0), X(em_div(G, X(em_pow(norm, S(p - 1)))))));
    em_tensor *scaled = p < 2 ? X(em_mul(X(em_sign(x)), X(em_pow(absx, S(p - 1)))))
                              : X(em_mul(x, X(em_pow(absx, S(p - 2)))));
    GRAD(0, X(em_mul(scaled, scale)));
    DONE();
}

/* logsumexp: g exp(x - logsumexp(x)) */
EM_BACKWARD(logsumexp, RESULT_AND_INPUT)
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *lse = X(forward_result(n, x));
    GRAD(0, X(em_mul(G, X(em_exp(X(em_sub(x, lse, 1)))))));
    DONE();
}

/* ---- scans -------------------------------------------------------------------------- */
/* A scan of a 0-d x is x itself. */
#define SCALAR_SCAN_IS_IDENTITY()          \
    if (is_scalar_input(n)) {              \
        GRAD(0, G);                        \
        DONE();                            \
    }

/* sum over positions >= k along d, for every k: flip, cumsum, flip */
static em_tensor *reverse_cumsum(const em_tensor *g, int d)
{
    em_arena a = {0};
    em_tensor *r = em_arena_result(&a, X(em_flip(X(em_cumsum(X(em_flip(g, 1, &d)), d, EM_DTYPE_NONE)), 1, &d)));
    em_arena_end(&a);
    return r;
}

EM_BACKWARD(cumsum, 0)
{
    em_arena a = {0};
    SCALAR_SCAN_IS_IDENTITY();
    GRAD(0, X(reverse_cumsum(G, dim_of(n))));
    DONE();
}

/* cumprod: dy_j/dx_k = prod_{i <= j, i != k} x_i for j >= k. Before the
 * first zero of a slice that is sum_{j>=k} g_j y_j / x_k; at the first zero,
 * the same sum with that zero replaced by 1; after it, 0. (PyTorch's
 * cumprod_backward; like prod, the second derivative at a zero misses the
 * terms through the first zero for later elements.) */
EM_BACKWARD(cumprod, RESULT_AND_INPUT)
{
    em_arena a = {0};
    SCALAR_SCAN_IS_IDENTITY();
    INPUT(x, 0);
    int d = dim_of(n);
    em_tensor *zero = X(em_eq(x, S(0)));
    em_tensor *zeros_so_far = X(em_cumsum(zero, d, EM_DTYPE_NONE));
    em_tensor *before = X(em_eq(zeros_so_far, S(0)));
    em_tensor *first = X(em_logical_and(zero, X(em_eq(zeros_so_far, S(1)))));
    em_tensor *y = X(forward_result(n, x));
    em_tensor *safe_x = X(em_where(zero, S(1), x));
    em_tensor *g_before = X(em_div(X(reverse_cumsum(X(em_mul(G, C(y))), d)), C(safe_x)));
    em_tensor *y_first_as_1 = X(em_cumprod(X(em_where(first, S(1), x)), d, EM_DTYPE_NONE));
    em_tensor *g_first = X(reverse_cumsum(X(em_mul(G, C(y_first_as_1))), d));
    GRAD(0, X(em_where(before, g_before, X(em_where(first, g_first, S(0))))));
    DONE();
}

/* cummax, cummin: each position's gradient goes to the index its value came
 * from (recomputed), summed (PyTorch's cummaxmin_backward: a scatter_add,
 * whose own formula double backward needs) */
#define SCAN_TO_SELECTED_INDEX(op)                                                    \
    EM_BACKWARD(op, EM_SAVE_IN(0))                                                    \
    {                                                                                 \
        em_arena a = {0};                                                             \
        SCALAR_SCAN_IS_IDENTITY();                                                    \
        INPUT(x, 0);                                                                  \
        em_tensor *indices = X(selected_indices(n, x));                               \
        em_tensor *zeros = X(em_zeros_like(G, EM_DTYPE_NONE));                        \
        GRAD(0, X(em_scatter_add(zeros, dim_of(n), indices, G)));                     \
        DONE();                                                                       \
    }
SCAN_TO_SELECTED_INDEX(cummax)
SCAN_TO_SELECTED_INDEX(cummin)

/* log(sum over positions >= k of exp(t)) along d */
static em_tensor *reverse_logcumsumexp(const em_tensor *t, int d)
{
    em_arena a = {0};
    em_tensor *r = em_arena_result(&a, X(em_flip(X(em_logcumsumexp(X(em_flip(t, 1, &d)), d)), 1, &d)));
    em_arena_end(&a);
    return r;
}

/* logcumsumexp: dx_k = sum_{j>=k} g_j exp(x_k - y_j), summed in log space
 * separately for positive and negative g (PyTorch's stable form; the
 * dtype's lowest finite value stands for log 0). */
EM_BACKWARD(logcumsumexp, RESULT_AND_INPUT)
{
    em_arena a = {0};
    SCALAR_SCAN_IS_IDENTITY();
    INPUT(x, 0);
    int d = dim_of(n);
    em_dtype dt = em_dtype_of(G);
    em_tensor *lowest = X(em_tensor_scalar(dt == EM_F64 ? -DBL_MAX : -FLT_MAX, dt));
    em_tensor *y = X(forward_result(n, x));
    em_tensor *log_abs_g = X(em_log(X(em_abs(G))));
    em_tensor *log_pos = X(em_sub(X(em_where(X(em_gt(G, S(0))), log_abs_g, lowest)), y, 1));
    em_tensor *log_neg = X(em_sub(X(em_where(X(em_lt(G, S(0))), log_abs_g, lowest)), y, 1));
    em_tensor *pos = X(em_exp(X(em_add(X(reverse_logcumsumexp(log_pos, d)), x, 1))));
    em_tensor *neg = X(em_exp(X(em_add(X(reverse_logcumsumexp(log_neg, d)), x, 1))));
    GRAD(0, X(em_sub(pos, neg, 1)));
    DONE();
}

/* ---- softmax ------------------------------------------------------------------------- */
/* softmax: y (g - sum(g y)) along the dim */
EM_BACKWARD(softmax, EM_SAVE_OUT(0))
{
    em_arena a = {0};
    em_tensor *y = X(em_node_unpack_output(n, 0)); /* differentiable again under create_graph */
    int d = dim_of(n);
    em_tensor *s = X(em_sum(X(em_mul(G, y)), 1, &d, true, EM_DTYPE_NONE));
    GRAD(0, X(em_mul(y, X(em_sub(G, s, 1)))));
    DONE();
}

/* log_softmax: g - exp(y) sum(g) along the dim */
EM_BACKWARD(log_softmax, EM_SAVE_OUT(0))
{
    em_arena a = {0};
    em_tensor *y = X(em_node_unpack_output(n, 0)); /* differentiable again under create_graph */
    int d = dim_of(n);
    em_tensor *s = X(em_sum(G, 1, &d, true, EM_DTYPE_NONE));
    GRAD(0, X(em_sub(G, X(em_mul(X(em_exp(y)), s)), 1)));
    DONE();
}
