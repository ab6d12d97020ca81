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

/* A float64 leaf requiring grad with values in [lo, hi). */
em_tensor *leaf(int ndim, const int64_t *sizes, double lo, double hi)
{
    em_tensor *t = trand(EM_F64, ndim, sizes, lo, hi);
    em_set_requires_grad(t, true);
    return t;
}

