/* Autograd of the reduction family (src/autograd/formulas_reduce.c):
 * float64 gradchecks of every op over dims, keepdim, params and input
 * layouts (contiguous, transposed, expanded), exact gradients at ties,
 * zeros and NaNs (values from PyTorch 1.13), second derivatives. */
#include "test.h"

/* ---- one call of a reduce-family op -------------------------------------------- */
typedef struct rcase {
    em_op op;
    int ndims, dims[3]; /* ops along one dim take dims[0] */
    bool keepdim;
    double p; /* var/std: correction; norm: p */
} rcase;

/* The op's differentiable output (values; var + 2 mean for the pairs). */
static em_tensor *run_op(const rcase *c, const em_tensor *x)
{
    const int nd = c->ndims, *d = c->dims, d0 = c->dims[0];
    const bool k = c->keepdim;
    const em_dtype none = EM_DTYPE_NONE;
    em_tensor *v = NULL, *i = NULL, *r = NULL;
    switch (c->op) {
    case EM_OP_sum: return em_sum(x, nd, d, k, none);
    case EM_OP_nansum: return em_nansum(x, nd, d, k, none);
    case EM_OP_mean: return em_mean(x, nd, d, k, none);
    case EM_OP_nanmean: return em_nanmean(x, nd, d, k, none);
    case EM_OP_prod: return em_prod(x, nd, d, k, none);
    case EM_OP_max: return em_max(x);
    case EM_OP_min: return em_min(x);
    case EM_OP_median: return em_median(x);
    case EM_OP_nanmedian: return em_nanmedian(x);
    case EM_OP_amax: return em_amax(x, nd, d, k);
    case EM_OP_amin: return em_amin(x, nd, d, k);
    case EM_OP_var: return em_var(x, nd, d, c->p, k);
    case EM_OP_std: return em_std(x, nd, d, c->p, k);
    case EM_OP_norm: return em_norm(x, c->p, nd, d, k, none);
    case EM_OP_logsumexp: return em_logsumexp(x, nd, d, k);
    case EM_OP_cumsum: return em_cumsum(x, d0, none);
    case EM_OP_cumprod: return em_cumprod(x, d0, none);
    case EM_OP_logcumsumexp: return em_logcumsumexp(x, d0);
    case EM_OP_softmax: return em_softmax(x, d0, none);
    case EM_OP_log_softmax: return em_log_softmax(x, d0, none);
    case EM_OP_var_mean: em_var_mean(x, nd, d, c->p, k, &v, &i); break;
    case EM_OP_std_mean: em_std_mean(x, nd, d, c->p, k, &v, &i); break;
    case EM_OP_max_dim: em_max_dim(x, d0, k, &v, &i); break;
    case EM_OP_min_dim: em_min_dim(x, d0, k, &v, &i); break;
    case EM_OP_median_dim: em_median_dim(x, d0, k, &v, &i); break;
    case EM_OP_nanmedian_dim: em_nanmedian_dim(x, d0, k, &v, &i); break;
    case EM_OP_mode: em_mode(x, d0, k, &v, &i); break;
    case EM_OP_cummax: em_cummax(x, d0, &v, &i); break;
    case EM_OP_cummin: em_cummin(x, d0, &v, &i); break;
    default: return NULL;
    }
    if (v && (c->op == EM_OP_var_mean || c->op == EM_OP_std_mean)) r = em_add(v, i, 2);
    else r = em_retain(v);
    RELEASE(v, i);
    return r;
}

/* The input layouts the gradchecks feed: the leaf itself (2, 3, 4), a
 * transposed view of a (4, 3, 2) leaf, and a (2, 1, 4) leaf expanded. */
enum { AS_IS, TRANSPOSED, EXPANDED, NLAYOUTS };
typedef struct gcase {
    rcase r;
    int layout;
} gcase;

static em_tensor *f_case(em_tensor *const *in, const void *ctx)
{
    const gcase *g = ctx;
    em_tensor *x = g->layout == TRANSPOSED ? em_transpose(in[0], 0, 2)
                   : g->layout == EXPANDED ? em_expand(in[0], 3, (const int64_t[]){2, 3, 4})
                                           : em_retain(in[0]);
    em_tensor *y = x ? run_op(&g->r, x) : NULL;
    em_release(x);
    return y;
}

static em_tensor *layout_leaf(int layout, double lo, double hi)
{
    return layout == TRANSPOSED ? leaf(SHAPE(4, 3, 2), lo, hi)
           : layout == EXPANDED ? leaf(SHAPE(2, 1, 4), lo, hi)
                                : leaf(SHAPE(2, 3, 4), lo, hi);
}

/* Gradchecks r in every layout on inputs in [lo, hi). */
static bool check_layouts(const rcase *r, double lo, double hi)
{
    bool ok = true;
    for (int l = 0; l < NLAYOUTS; l++) {
        /* selections pick a different element among an expanded input's
         * copies than the finite difference perturbs: ties, not checkable */
        bool selects = r->op == EM_OP_max_dim || r->op == EM_OP_min_dim || r->op == EM_OP_median_dim ||
                       r->op == EM_OP_nanmedian_dim || r->op == EM_OP_mode || r->op == EM_OP_cummax ||
                       r->op == EM_OP_cummin || r->op == EM_OP_max || r->op == EM_OP_min ||
                       r->op == EM_OP_median || r->op == EM_OP_nanmedian || r->op == EM_OP_amax ||
                       r->op == EM_OP_amin || (r->op == EM_OP_norm && isinf(r->p));
        if (l == EXPANDED && selects) continue;
        gcase g = {*r, l};
        em_tensor *x = layout_leaf(l, lo, hi);
        bool pass = gradcheck(em_ops[r->op].name, f_case, 1, &x, &g);
        if (!pass)
            fprintf(stderr, "  %s: layout %d, dims %d (%d %d), keepdim %d, p %g\n", em_ops[r->op].name, l,
                    r->ndims, r->dims[0], r->dims[1], r->keepdim, r->p);
        ok &= pass;
        em_release(x);
    }
    return ok;
}

#define DIMS(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), {__VA_ARGS__}
#define ALL 0, {0}

TEST(autograd_reduce_sums_and_means)
{
    const em_op ops[] = {EM_OP_sum, EM_OP_nansum, EM_OP_mean, EM_OP_nanmean, EM_OP_prod, EM_OP_logsumexp};
    const rcase shapes[] = {{0, ALL, false}, {0, DIMS(1), false}, {0, DIMS(0, 2), true}, {0, DIMS(-1), true},
                            {0, DIMS(2, 0, 1), false}};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            rcase r = shapes[s];
            r.op = ops[o];
            CHECK_MSG(check_layouts(&r, 0.5, 1.5), "%s", em_ops[r.op].name);
        }
    GRAD_COVER(EM_OP_sum, EM_OP_nansum, EM_OP_mean, EM_OP_nanmean, EM_OP_prod, EM_OP_logsumexp);
}

TEST(autograd_reduce_extrema_and_selections)
{
    const rcase cases[] = {
        {EM_OP_max}, {EM_OP_min}, {EM_OP_median}, {EM_OP_nanmedian},
        {EM_OP_amax, ALL}, {EM_OP_amax, DIMS(1), false}, {EM_OP_amin, DIMS(0, 2), true}, {EM_OP_amin, DIMS(-1)},
        {EM_OP_max_dim, DIMS(1), false}, {EM_OP_max_dim, DIMS(-1), true}, {EM_OP_min_dim, DIMS(0), true},
        {EM_OP_median_dim, DIMS(1), false}, {EM_OP_median_dim, DIMS(2), true},
        {EM_OP_nanmedian_dim, DIMS(0), false}, {EM_OP_nanmedian_dim, DIMS(2), true},
        {EM_OP_mode, DIMS(1), false}, {EM_OP_mode, DIMS(-1), true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        CHECK_MSG(check_layouts(&cases[c], -1, 1), "%s", em_ops[cases[c].op].name);
    GRAD_COVER(EM_OP_max, EM_OP_min, EM_OP_median, EM_OP_nanmedian, EM_OP_amax, EM_OP_amin, EM_OP_max_dim,
          EM_OP_min_dim, EM_OP_median_dim, EM_OP_nanmedian_dim, EM_OP_mode);
}

TEST(autograd_reduce_var_std_norm)
{
    const rcase cases[] = {
        {EM_OP_var, ALL, false, 1}, {EM_OP_var, DIMS(1), true, 0}, {EM_OP_var, DIMS(0, 2), false, 2},
        {EM_OP_std, ALL, false, 1}, {EM_OP_std, DIMS(-1), false, 0}, {EM_OP_std, DIMS(0, 1), true, 2},
        {EM_OP_var_mean, DIMS(1), false, 1}, {EM_OP_var_mean, ALL, true, 0},
        {EM_OP_std_mean, DIMS(2), true, 1}, {EM_OP_std_mean, DIMS(0, 2), false, 0},
        {EM_OP_norm, ALL, false, 2}, {EM_OP_norm, DIMS(1), true, 2}, {EM_OP_norm, DIMS(0, 2), false, 1},
        {EM_OP_norm, DIMS(-1), false, 3}, {EM_OP_norm, DIMS(1), false, 1.5}, {EM_OP_norm, ALL, false, 0.5},
        {EM_OP_norm, DIMS(1), true, INFINITY}, {EM_OP_norm, ALL, false, -INFINITY},
        {EM_OP_norm, DIMS(2), false, 0}, {EM_OP_norm, DIMS(0), false, -1.5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        CHECK_MSG(check_layouts(&cases[c], -1, 1), "%s p %g", em_ops[cases[c].op].name, cases[c].p);
    GRAD_COVER(EM_OP_var, EM_OP_std, EM_OP_var_mean, EM_OP_std_mean, EM_OP_norm);
}

TEST(autograd_reduce_scans_and_softmax)
{
    const em_op ops[] = {EM_OP_cumsum, EM_OP_cumprod, EM_OP_logcumsumexp, EM_OP_cummax,
                         EM_OP_cummin, EM_OP_softmax, EM_OP_log_softmax};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (int d = -1; d < 3; d++) {
            rcase r = {ops[o], 1, {d}};
            CHECK_MSG(check_layouts(&r, -1.5, 1.5), "%s dim %d", em_ops[r.op].name, d);
        }
    GRAD_COVER(EM_OP_cumsum, EM_OP_cumprod, EM_OP_logcumsumexp, EM_OP_cummax, EM_OP_cummin, EM_OP_softmax,
          EM_OP_log_softmax);
}

/* A 4-d shape with a size-1 dim: reductions over it and around it. */
TEST(autograd_reduce_size_one_dims)
{
    const em_op multi[] = {EM_OP_sum, EM_OP_nansum, EM_OP_mean, EM_OP_nanmean, EM_OP_prod, EM_OP_amax,
                           EM_OP_amin, EM_OP_var, EM_OP_std, EM_OP_var_mean, EM_OP_std_mean, EM_OP_norm,
                           EM_OP_logsumexp};
    const em_op single[] = {EM_OP_max_dim, EM_OP_min_dim, EM_OP_median_dim, EM_OP_nanmedian_dim, EM_OP_mode,
                            EM_OP_cumsum, EM_OP_cumprod, EM_OP_cummax, EM_OP_cummin, EM_OP_logcumsumexp,
                            EM_OP_softmax, EM_OP_log_softmax};
    const rcase dims[] = {{0, DIMS(1), false, 0}, {0, DIMS(1, 3), true, 1}, {0, DIMS(0, 1, 2), false, 3}};
    for (size_t o = 0; o < sizeof multi / sizeof *multi + sizeof single / sizeof *single; o++)
        for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
            bool is_multi = o < sizeof multi / sizeof *multi;
            gcase g = {dims[k], AS_IS};
            g.r.op = is_multi ? multi[o] : single[o - sizeof multi / sizeof *multi];
            g.r.dims[0] = is_multi ? g.r.dims[0] : (int)k + 1; /* dims 1 (size 1), 2, 3 */
            em_tensor *x = leaf(SHAPE(2, 1, 3, 2), 0.5, 1.5);
            CHECK_MSG(gradcheck(em_ops[g.r.op].name, f_case, 1, &x, &g), "%s case %zu", em_ops[g.r.op].name, k);
            em_release(x);
        }
}

/* ---- 0-d and one-element inputs ---------------------------------------------------- */
TEST(autograd_reduce_scalar_inputs)
{
    const rcase cases[] = {
        {EM_OP_sum, ALL}, {EM_OP_prod, DIMS(0), true}, {EM_OP_amax, DIMS(-1)}, {EM_OP_max}, {EM_OP_median},
        {EM_OP_max_dim, DIMS(0)}, {EM_OP_mode, DIMS(-1), true}, {EM_OP_median_dim, DIMS(0)},
        {EM_OP_norm, ALL, false, 3}, {EM_OP_logsumexp, DIMS(0)}, {EM_OP_cumsum, DIMS(0)},
        {EM_OP_cumprod, DIMS(0)}, {EM_OP_cummax, DIMS(-1)}, {EM_OP_logcumsumexp, DIMS(0)},
        {EM_OP_softmax, DIMS(0)}, {EM_OP_log_softmax, DIMS(0)}, {EM_OP_var, ALL, false, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gcase g = {cases[c], AS_IS};
        em_tensor *x = leaf(0, NULL, 0.5, 1.5);
        CHECK_MSG(gradcheck(em_ops[cases[c].op].name, f_case, 1, &x, &g), "0-d %s", em_ops[cases[c].op].name);
        em_release(x);
    }
}

/* Empty inputs: the backward runs and gives an empty gradient. */
TEST(autograd_reduce_empty_inputs)
{
    const rcase cases[] = {
        {EM_OP_sum, DIMS(1)}, {EM_OP_mean, DIMS(1), true}, {EM_OP_nansum, ALL}, {EM_OP_nanmean, DIMS(1)},
        {EM_OP_prod, DIMS(1)}, {EM_OP_var, DIMS(1), false, 1}, {EM_OP_std_mean, DIMS(1), false, 0},
        {EM_OP_norm, DIMS(1), false, 2}, {EM_OP_norm, DIMS(1), false, 3}, {EM_OP_logsumexp, DIMS(1)},
        {EM_OP_amax, DIMS(2)}, {EM_OP_max_dim, DIMS(2)}, {EM_OP_median}, {EM_OP_cumsum, DIMS(2)},
        {EM_OP_cumprod, DIMS(1)}, {EM_OP_cummax, DIMS(0)}, {EM_OP_logcumsumexp, DIMS(1)}, {EM_OP_softmax, DIMS(2)},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        em_tensor *x = leaf(SHAPE(2, 0, 3), 0, 1), *g = NULL;
        em_tensor *y = run_op(&cases[c], x), *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
        CHECK_MSG(s && em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g) == EM_OK &&
                  tshape_is(g, SHAPE(2, 0, 3)), "%s: %s", em_ops[cases[c].op].name, em_last_error());
        RELEASE(x, y, s, g);
    }
}

/* ---- exact gradients at ties, zeros, NaNs (PyTorch 1.13's values) ----------------- */
/* d sum(op(x)) / dx for a float64 x of the given values and shape. */
static em_tensor *grad_of(const rcase *r, int ndim, const int64_t *sizes, const double *vals)
{
    em_tensor *x = tt(EM_F64, ndim, sizes, vals), *g = NULL;
    em_set_requires_grad(x, true);
    em_tensor *y = run_op(r, x), *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    if (s && em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g)) g = NULL;
    RELEASE(x, y, s);
    return g;
}

static bool grad_is(const rcase *r, int ndim, const int64_t *sizes, const double *vals, const double *want)
{
    em_tensor *g = grad_of(r, ndim, sizes, vals);
    bool ok = g && tclose(g, want, 1e-12, 1e-12);
    if (!g) fprintf(stderr, "  %s: %s\n", em_ops[r->op].name, em_last_error());
    em_release(g);
    return ok;
}

TEST(autograd_reduce_ties_split_or_select)
{
    const double tie[] = {3, 1, 3, 3};
    /* max/median of everything and amax split among ties ... */
    CHECK(grad_is(&(rcase){EM_OP_max}, SHAPE(4), tie, (double[]){1. / 3, 0, 1. / 3, 1. / 3}));
    CHECK(grad_is(&(rcase){EM_OP_median}, SHAPE(4), tie, (double[]){1. / 3, 0, 1. / 3, 1. / 3}));
    CHECK(grad_is(&(rcase){EM_OP_amax, DIMS(0)}, SHAPE(4), tie, (double[]){1. / 3, 0, 1. / 3, 1. / 3}));
    CHECK(grad_is(&(rcase){EM_OP_min}, SHAPE(4), (double[]){2, 1, 1, 5}, (double[]){0, .5, .5, 0}));
    const double rows[] = {1, 2, 2, 0, 7, 7, 7, 0};
    CHECK(grad_is(&(rcase){EM_OP_amax, DIMS(1), true}, SHAPE(2, 4), rows, (double[]){0, .5, .5, 0, 1. / 3,
          1. / 3, 1. / 3, 0}));
    CHECK(grad_is(&(rcase){EM_OP_amin, DIMS(0, 1)}, SHAPE(2, 4), rows, (double[]){0, 0, 0, .5, 0, 0, 0, .5}));
    /* ... the ops along a dim give it all to the index they return */
    CHECK(grad_is(&(rcase){EM_OP_max_dim, DIMS(1)}, SHAPE(2, 4), rows, (double[]){0, 1, 0, 0, 1, 0, 0, 0}));
    CHECK(grad_is(&(rcase){EM_OP_min_dim, DIMS(1)}, SHAPE(2, 4), rows, (double[]){0, 0, 0, 1, 0, 0, 0, 1}));
    CHECK(grad_is(&(rcase){EM_OP_median_dim, DIMS(0)}, SHAPE(4), tie, (double[]){1, 0, 0, 0}));
    CHECK(grad_is(&(rcase){EM_OP_mode, DIMS(0)}, SHAPE(4), tie, (double[]){0, 0, 0, 1}));
    CHECK(grad_is(&(rcase){EM_OP_mode, DIMS(1), true}, SHAPE(2, 4), rows, (double[]){0, 0, 1, 0, 0, 0, 1, 0}));
    CHECK(grad_is(&(rcase){EM_OP_cummax, DIMS(0)}, SHAPE(4), tie, (double[]){2, 0, 1, 1}));
    CHECK(grad_is(&(rcase){EM_OP_cummin, DIMS(1)}, SHAPE(2, 4), rows, (double[]){3, 0, 0, 1, 1, 1, 1, 1}));
    CHECK(grad_is(&(rcase){EM_OP_cummax, DIMS(1)}, SHAPE(2, 4), rows, (double[]){1, 1, 2, 0, 1, 1, 2, 0}));
    /* norm inf splits among the |x| ties with their signs */
    CHECK(grad_is(&(rcase){EM_OP_norm, ALL, false, INFINITY}, SHAPE(3), (double[]){0, 1, -1},
                  (double[]){0, .5, -.5}));
}

TEST(autograd_reduce_nans)
{
    const double n = NAN;
    const double x[] = {n, n, 1, 2};
    CHECK(grad_is(&(rcase){EM_OP_nansum, DIMS(1)}, SHAPE(2, 2), x, (double[]){0, 0, 1, 1}));
    CHECK(grad_is(&(rcase){EM_OP_nanmean, DIMS(1)}, SHAPE(2, 2), x, (double[]){n, n, .5, .5}));
    CHECK(grad_is(&(rcase){EM_OP_nanmean, ALL}, SHAPE(2, 2), x, (double[]){0, 0, .5, .5}));
    CHECK(grad_is(&(rcase){EM_OP_nanmedian}, SHAPE(2, 2), x, (double[]){0, 0, 1, 0}));
    CHECK(grad_is(&(rcase){EM_OP_nanmedian_dim, DIMS(0)}, SHAPE(2, 2), x, (double[]){0, 0, 1, 1}));
    /* a NaN is the max: max() gives it the gradient, amax NaN to its slice */
    const double y[] = {1, n, 3};
    CHECK(grad_is(&(rcase){EM_OP_max}, SHAPE(3), y, (double[]){0, 1, 0}));
    CHECK(grad_is(&(rcase){EM_OP_amax, ALL}, SHAPE(3), y, (double[]){n, n, n}));
    CHECK(grad_is(&(rcase){EM_OP_max_dim, DIMS(0)}, SHAPE(3), y, (double[]){0, 1, 0}));
    CHECK(grad_is(&(rcase){EM_OP_median}, SHAPE(3), y, (double[]){0, 1, 0}));
    const double all_nan[] = {n, n};
    CHECK(grad_is(&(rcase){EM_OP_nanmedian}, SHAPE(2), all_nan, (double[]){.5, .5}));
}

TEST(autograd_reduce_zeros)
{
    /* prod: one zero per slice gets the product of the others; two: all 0 */
    const double x[] = {2, 0, 3, 0.5, 0, 4};
    CHECK(grad_is(&(rcase){EM_OP_prod, ALL}, SHAPE(6), x, (double[]){0, 0, 0, 0, 0, 0}));
    CHECK(grad_is(&(rcase){EM_OP_prod, DIMS(1)}, SHAPE(2, 3), x, (double[]){0, 6, 0, 0, 2, 0}));
    CHECK(grad_is(&(rcase){EM_OP_prod, DIMS(0)}, SHAPE(2, 3), x, (double[]){0.5, 0, 4, 2, 0, 3}));
    CHECK(grad_is(&(rcase){EM_OP_cumprod, DIMS(0)}, SHAPE(6), x, (double[]){1, 11, 0, 0, 0, 0}));
    CHECK(grad_is(&(rcase){EM_OP_cumprod, DIMS(1)}, SHAPE(2, 3), x, (double[]){1, 8, 0, 1, 2.5, 0}));
    /* zero vectors: norms give 0; std of equal values 0 */
    const double z[] = {0, 0, 0};
    for (double p = -1; p <= 4; p += 0.5)
        CHECK_MSG(grad_is(&(rcase){EM_OP_norm, ALL, false, p}, SHAPE(3), z, z), "norm p %g", p);
    CHECK(grad_is(&(rcase){EM_OP_norm, ALL, false, INFINITY}, SHAPE(3), z, z));
    CHECK(grad_is(&(rcase){EM_OP_norm, ALL, false, 0.5}, SHAPE(3), (double[]){0, 1, -1}, (double[]){0, 2, -2}));
    CHECK(grad_is(&(rcase){EM_OP_std, ALL, false, 1}, SHAPE(2), (double[]){1, 1}, (double[]){0, 0}));
    /* N <= correction: PyTorch's raw 2 / (N - correction) */
    CHECK(grad_is(&(rcase){EM_OP_var, DIMS(0), false, 3}, SHAPE(2), (double[]){1, 2}, (double[]){1, -1}));
    CHECK(grad_is(&(rcase){EM_OP_var, DIMS(0), false, 2}, SHAPE(2), (double[]){1, 2},
                  (double[]){-INFINITY, INFINITY}));
}

/* gradchecks through zeros: prod and cumprod are polynomials */
static em_tensor *zeroed_leaf(void)
{
    em_tensor *x = leaf(SHAPE(3, 4), 0.5, 1.5);
    const int64_t at[][2] = {{0, 1}, {1, 0}, {1, 2}, {2, 3}};
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) em_set(x, at[k], 0);
    return x;
}

TEST(autograd_reduce_gradcheck_through_zeros)
{
    const rcase cases[] = {{EM_OP_prod, ALL}, {EM_OP_prod, DIMS(1)}, {EM_OP_prod, DIMS(0), true},
                           {EM_OP_cumprod, DIMS(0)}, {EM_OP_cumprod, DIMS(1)}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        gcase g = {cases[c], AS_IS};
        em_tensor *x = zeroed_leaf();
        CHECK_MSG(gradcheck(em_ops[cases[c].op].name, f_case, 1, &x, &g), "%s with zeros",
                  em_ops[cases[c].op].name);
        em_release(x);
    }
}

/* ---- second derivatives (create_graph) ------------------------------------------------ */
/* Checks d/dx <grad(sum(op(x) w)), v> against central differences of the
 * first gradient, for fixed random w and v. */
static bool reduce_gradgradcheck(const rcase *r, em_tensor *x)
{
    em_tensor *y = run_op(r, x), *w = y ? trand(EM_F64, em_ndim(y), em_sizes(y), -1, 1) : NULL;
    em_tensor *v = trand(EM_F64, em_ndim(x), em_sizes(x), -1, 1), *g = NULL, *gv = NULL, *s = NULL, *gg = NULL;
    bool ok = y && em_autograd_grad(1, &y, &w, 1, &x, true, true, false, &g) == EM_OK;
    ok = ok && (gv = em_mul(g, v)) && (s = em_sum(gv, 0, NULL, false, EM_DTYPE_NONE));
    /* a gradient that does not depend on x (linear ops) has zero derivative */
    if (ok && !em_requires_grad(s)) gg = em_zeros_like(x, EM_DTYPE_NONE);
    else ok = ok && em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &gg) == EM_OK;
    if (!ok) fprintf(stderr, "  %s: %s\n", em_ops[r->op].name, em_last_error());
    const double eps = 1e-6;
    for (int64_t i = 0, n = em_numel(x); i < n && ok; i++) {
        int64_t idx[EM_MAX_DIMS];
        double x0, side[2];
        tunravel(i, em_ndim(x), em_sizes(x), idx);
        em_get(x, idx, &x0);
        for (int k = 0; k < 2; k++) {
            em_set(x, idx, x0 + (k ? -eps : eps));
            em_tensor *yk = run_op(r, x), *gk = NULL;
            em_autograd_grad(1, &yk, &w, 1, &x, false, false, false, &gk);
            side[k] = 0;
            for (int64_t j = 0; gk && j < n; j++) side[k] += tval(gk, j) * tval(v, j);
            RELEASE(yk, gk);
        }
        em_set(x, idx, x0);
        double num = (side[0] - side[1]) / (2 * eps), ana = tval(gg, i);
        if (!(fabs(num - ana) <= 1e-5 + 1e-4 * fabs(num))) {
            fprintf(stderr, "  %s: second derivative [%lld]: analytic %.10g, numeric %.10g\n", em_ops[r->op].name,
                    (long long)i, ana, num);
            ok = false;
        }
    }
    RELEASE(y, w, v, g, gv, s, gg);
    return ok;
}

TEST(autograd_reduce_create_graph)
{
    const rcase cases[] = {
        {EM_OP_sum, DIMS(1)}, {EM_OP_mean, DIMS(0, 2), true}, {EM_OP_nansum, ALL}, {EM_OP_nanmean, DIMS(2)},
        {EM_OP_prod, DIMS(1)}, {EM_OP_var, DIMS(1), false, 1}, {EM_OP_var, ALL, true, 0},
        {EM_OP_std, DIMS(2), false, 1}, {EM_OP_var_mean, DIMS(0), false, 1}, {EM_OP_std_mean, ALL, false, 0},
        {EM_OP_logsumexp, DIMS(1)}, {EM_OP_logsumexp, ALL}, {EM_OP_norm, DIMS(1), false, 2},
        {EM_OP_norm, ALL, false, 3}, {EM_OP_norm, DIMS(2), true, 1.5}, {EM_OP_amax, DIMS(1)},
        {EM_OP_max}, {EM_OP_max_dim, DIMS(2)}, {EM_OP_median_dim, DIMS(1), true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        em_tensor *x = leaf(SHAPE(2, 3, 4), 0.5, 1.5);
        CHECK_MSG(reduce_gradgradcheck(&cases[c], x), "%s", em_ops[cases[c].op].name);
        em_release(x);
    }
}

/* The scans' second derivatives go through flip (and cummax's through
 * scatter_add): until those have formulas, a clear NotImplemented. */
TEST(autograd_reduce_create_graph_scans)
{
    const rcase cases[] = {{EM_OP_cumsum, DIMS(1)}, {EM_OP_cumprod, DIMS(2)}, {EM_OP_logcumsumexp, DIMS(0)},
                           {EM_OP_cummax, DIMS(1)}, {EM_OP_cummin, DIMS(2)}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        em_tensor *x = leaf(SHAPE(2, 3, 4), 0.5, 1.5), *y = run_op(&cases[c], x), *g = NULL;
        em_status st = em_autograd_grad(1, &y, (em_tensor *[]){y}, 1, &x, true, true, false, &g);
        if (st == EM_OK) CHECK_MSG(reduce_gradgradcheck(&cases[c], x), "%s", em_ops[cases[c].op].name);
        else CHECK_MSG(st == EM_ERR_NOT_IMPLEMENTED, "%s: %s", em_ops[cases[c].op].name, em_last_error());
        RELEASE(x, y, g);
    }
}

/* A saved output changed in place fails the backward (version check). */
TEST(autograd_reduce_saved_output_modified)
{
    em_tensor *x = leaf(SHAPE(2, 3), -1, 1), *y = em_logsumexp(x, 1, (const int[]){1}, true), *g = NULL;
    CHECK(em_add_(y, y, 1) == EM_OK); /* y is the kernel's output itself (keepdim) */
    CHECK_ERR(em_autograd_grad(1, &y, (em_tensor *[]){y}, 1, &x, false, false, false, &g), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "inplace"));
    RELEASE(x, y, g);
}

/* ---- dtypes and the in-place / out= paths ------------------------------------------------ */
TEST(autograd_reduce_float32_and_bfloat16)
{
    /* the gradient of a float32 / bfloat16 input has its dtype and float64's values */
    const rcase cases[] = {{EM_OP_max_dim, DIMS(1)}, {EM_OP_std, DIMS(0), false, 1}, {EM_OP_logsumexp, ALL},
                           {EM_OP_cumsum, DIMS(1)}, {EM_OP_norm, DIMS(1), true, 3}};
    const em_dtype dts[] = {EM_F32, EM_BF16};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int k = 0; k < 2; k++) {
            em_tensor *x64 = trand(EM_F64, SHAPE(3, 5), -1, 1), *x = em_to_dtype(x64, dts[k]);
            em_release(x64);
            x64 = em_to_dtype(x, EM_F64); /* the same values */
            double *vals = tvals(x64);
            em_tensor *want = grad_of(&cases[c], SHAPE(3, 5), vals), *g = NULL;
            em_set_requires_grad(x, true);
            em_tensor *y = run_op(&cases[c], x), *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
            CHECK(s && em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g) == EM_OK);
            double *w = want ? tvals(want) : NULL;
            CHECK_MSG(g && w && em_dtype_of(g) == dts[k] && tclose(g, w, trtol(dts[k]) * 4, trtol(dts[k]) * 4),
                      "%s %s", em_ops[cases[c].op].name, em_dtype_name(dts[k]));
            free(vals);
            free(w);
            RELEASE(x64, x, want, g, y, s);
        }
}

TEST(autograd_reduce_inplace_and_out)
{
    /* cumsum_ on a non-leaf records: d/dx sum(cumsum(2x)) = 2 (n - k) */
    em_tensor *x = leaf(SHAPE(4), -1, 1), *two = em_scalar_float(2), *y = em_mul(x, two), *g = NULL;
    CHECK(em_cumsum_(y, 0, EM_DTYPE_NONE) == EM_OK);
    em_tensor *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g) == EM_OK);
    CHECK(g && tclose(g, (double[]){8, 6, 4, 2}, 1e-12, 1e-12));
    RELEASE(two, y, s, g);
    /* into a leaf that requires grad: refused; out= into a fresh tensor records */
    CHECK_ERR(em_cumsum_(x, 0, EM_DTYPE_NONE), EM_ERR_RUNTIME);
    em_tensor *out = em_empty(SHAPE(1), EM_F64);
    CHECK(em_amax_out(out, x, 0, NULL, false) == EM_OK && em_requires_grad(out));
    CHECK(em_autograd_grad(1, &out, NULL, 1, &x, false, false, false, &g) == EM_OK);
    double want[4] = {0}, best = -INFINITY;
    int at = 0;
    for (int i = 0; i < 4; i++)
        if (tval(x, i) > best) best = tval(x, i), at = i;
    want[at] = 1;
    CHECK(g && tclose(g, want, 0, 0));
    RELEASE(x, out, g);
}
