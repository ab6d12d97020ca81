/* Float64 finite-difference gradient checks for the autograd tests (test.h). */
#include "test.h"

/* ---- gradcheck ------------------------------------------------------------ */
/* sum(f(in) * w) as a double (w: the fixed random output weights) */
static double weighted(fn_t f, em_tensor *const *in, const void *ctx, const em_tensor *w)
{
    em_set_grad_enabled(false);
    em_tensor *y = f(in, ctx);
    em_set_grad_enabled(true);
    if (!y) return NAN;
    double s = 0;
    for (int64_t i = 0, n = em_numel(y); i < n; i++) s += tval(y, i) * tval(w, i);
    em_release(y);
    return s;
}

/* Compares the analytic gradients of f at `in` (float64 leaves that require
 * grad) with central differences; true when all agree. */
bool gradcheck(const char *name, fn_t f, int nin, em_tensor *const *in, const void *ctx)
{
    em_tensor *y = f(in, ctx);
    if (!y) {
        fprintf(stderr, "  %s: forward failed: %s\n", name, em_last_error());
        return false;
    }
    em_tensor *w = trand(EM_F64, em_ndim(y), em_sizes(y), -1, 1), *grads[8] = {0};
    bool ok = em_autograd_grad(1, &y, &w, nin, in, false, false, true, grads) == EM_OK;
    if (!ok) fprintf(stderr, "  %s: backward failed: %s\n", name, em_last_error());
    const double eps = 1e-6;
    for (int k = 0; k < nin && ok; k++) {
        for (int64_t i = 0, n = em_numel(in[k]); i < n && ok; i++) {
            int64_t idx[EM_MAX_DIMS];
            tunravel(i, em_ndim(in[k]), em_sizes(in[k]), idx);
            double v;
            em_get(in[k], idx, &v);
            em_set(in[k], idx, v + eps);
            double hi = weighted(f, in, ctx, w);
            em_set(in[k], idx, v - eps);
            double lo = weighted(f, in, ctx, w);
            em_set(in[k], idx, v);
            double num = (hi - lo) / (2 * eps), ana = grads[k] ? tval(grads[k], i) : 0;
            if (!(fabs(num - ana) <= 1e-5 + 1e-4 * fabs(num))) {
                fprintf(stderr, "  %s: d/d input %d [%lld]: analytic %.10g, numeric %.10g\n", name, k, (long long)i,
                        ana, num);
                ok = false;
            }
        }
    }
    for (int k = 0; k < nin; k++) em_release(grads[k]);
    em_release(w);
    em_release(y);
    return ok;
}

/* ---- gradgradcheck -------------------------------------------------------- */
/* s = sum_k <d(sum f(in) * w) / d in_k, v_k>: the first derivatives, weighted
 * by v; recorded (create_graph) when `create`. NULL on failure. */
static em_tensor *first_order(fn_t f, int nin, em_tensor *const *in, const void *ctx, em_tensor *w,
                              em_tensor *const *v, bool create)
{
    em_tensor *y = f(in, ctx), *g[8] = {0}, *s = NULL;
    if (y && em_autograd_grad(1, &y, &w, nin, in, create, create, true, g) == EM_OK) {
        s = em_zeros(0, NULL, EM_F64);
        for (int k = 0; k < nin && s; k++) {
            if (!g[k]) continue;
            em_tensor *p = em_mul(g[k], v[k]), *ps = p ? em_sum(p, 0, NULL, false, EM_DTYPE_NONE) : NULL;
            em_tensor *t = ps ? em_add(s, ps, 1) : NULL;
            RELEASE(p, ps, s);
            s = t;
        }
    }
    for (int k = 0; k < nin; k++) em_release(g[k]);
    em_release(y);
    return s;
}

static double first_order_value(fn_t f, int nin, em_tensor *const *in, const void *ctx, em_tensor *w,
                                em_tensor *const *v)
{
    em_tensor *s = first_order(f, nin, in, ctx, w, v, false);
    double r = s ? tval(s, 0) : NAN;
    em_release(s);
    return r;
}

/* Compares the second derivatives that create_graph records with central
 * differences of the first derivatives: d s / d in_k and d s / d w for s
 * as above, so that a formula's dependence on its inputs and on the
 * incoming gradient are both checked. A first derivative without history
 * (a formula constant in the inputs) must have zero second derivatives. */
bool gradgradcheck(const char *name, fn_t f, int nin, em_tensor *const *in, const void *ctx)
{
    em_tensor *y = f(in, ctx);
    if (!y) {
        fprintf(stderr, "  %s: forward failed: %s\n", name, em_last_error());
        return false;
    }
    em_tensor *w = leaf(em_ndim(y), em_sizes(y), -1, 1), *v[8] = {0}, *vars[9], *h[9] = {0};
    em_release(y);
    for (int k = 0; k < nin; k++) v[k] = trand(EM_F64, em_ndim(in[k]), em_sizes(in[k]), -1, 1), vars[k] = in[k];
    vars[nin] = w;
    em_tensor *s = first_order(f, nin, in, ctx, w, v, true);
    bool ok = s != NULL;
    if (ok && em_requires_grad(s)) ok = em_autograd_grad(1, &s, NULL, nin + 1, vars, false, false, true, h) == EM_OK;
    if (!ok) fprintf(stderr, "  %s: double backward failed: %s\n", name, em_last_error());
    const double eps = 1e-6;
    for (int k = 0; k <= nin && ok; k++) {
        for (int64_t i = 0, n = em_numel(vars[k]); i < n && ok; i++) {
            int64_t idx[EM_MAX_DIMS];
            tunravel(i, em_ndim(vars[k]), em_sizes(vars[k]), idx);
            double x;
            em_get(vars[k], idx, &x);
            em_set(vars[k], idx, x + eps);
            double hi = first_order_value(f, nin, in, ctx, w, v);
            em_set(vars[k], idx, x - eps);
            double lo = first_order_value(f, nin, in, ctx, w, v);
            em_set(vars[k], idx, x);
            double num = (hi - lo) / (2 * eps), ana = h[k] ? tval(h[k], i) : 0;
            if (!(fabs(num - ana) <= 1e-5 + 1e-4 * fabs(num))) {
                fprintf(stderr, "  %s: d2/d %s %d [%lld]: analytic %.10g, numeric %.10g\n", name,
                        k < nin ? "input" : "grad_output", k, (long long)i, ana, num);
                ok = false;
            }
        }
    }
    for (int k = 0; k <= nin; k++) em_release(h[k]);
    for (int k = 0; k < nin; k++) em_release(v[k]);
    RELEASE(w, s);
    return ok;
}

/* A float64 leaf requiring grad with values in [lo, hi). */
em_tensor *leaf(int ndim, const int64_t *sizes, double lo, double hi)
{
    em_tensor *t = trand(EM_F64, ndim, sizes, lo, hi);
    em_set_requires_grad(t, true);
    return t;
}

