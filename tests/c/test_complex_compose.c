/* The complex forms composed from ops with complex kernels (Note [Complex
 * compositions] in src/ops/pointwise.c, Note [Complex var and norm] in
 * src/ops/reduce_stats.c, nonzero, diff) from C: a value check each, and a
 * backward through each differentiable one, so that ASan sees every
 * intermediate released on the forward, backward and error paths. The
 * Python tests (tests/python/test_complex_kernels.py) compare with torch. */
#include "test.h"
#include <complex.h>

static em_tensor *cplx(const double _Complex *v, int64_t n)
{
    return em_from_data(v, 1, &n, EM_C128);
}

TEST(complex_composed_values)
{
    const double _Complex v[4] = {3 + 4 * I, 0, -1 + 1 * I, 2 - 2 * I};
    em_tensor *z = cplx(v, 4), *a = em_abs(z), *l = em_log10(z), *vr = em_var(z, 0, NULL, 1, false);
    em_tensor *nm = em_norm(z, 1, 0, NULL, false, EM_DTYPE_NONE), *nz = em_nonzero(z), *d = em_diff(z, 1, 0, NULL, NULL);
    em_tensor *ln = em_logical_not(z);
    bool ok = a && l && vr && nm && nz && d && ln && em_dtype_of(a) == EM_F64 && em_dtype_of(vr) == EM_F64;
    if (ok) {
        const double *pa = em_data_ptr(a), *pv = em_data_ptr(vr), *pn = em_data_ptr(nm);
        const double _Complex *pl = em_data_ptr(l), *pd = em_data_ptr(d);
        const bool *pb = em_data_ptr(ln);
        /* mean 1 + 0.75i; sum |z - mean|^2 = 14.5625 + 1.5625 + 4.0625 + 8.5625 = 28.75, over 3 */
        ok = fabs(pa[0] - 5) < 1e-15 && pa[1] == 0 && fabs(pv[0] - 28.75 / 3) < 1e-12 &&
             fabs(pn[0] - (5 + M_SQRT2 + 2 * M_SQRT2)) < 1e-12 && cabs(pl[0] - clog(v[0]) / log(10)) < 1e-14 &&
             isinf(creal(pl[1])) && cimag(pl[1]) == 0 && em_size(nz, 0) == 3 && cabs(pd[0] - (-3 - 4 * I)) == 0 &&
             !pb[0] && pb[1];
    }
    RELEASE(z, a, l, vr, nm, nz, d, ln);
    CHECK_MSG(ok, "%s", em_last_error());
}

/* y(z) for each composed op, reduced to a real scalar for backward. */
static em_tensor *composed(int k, em_tensor *z, em_tensor *w)
{
    const int dims[1] = {0};
    switch (k) {
    case 0: return em_var(z, 1, dims, 1, false);
    case 1: return em_std(z, 0, NULL, 0, true);
    case 2: return em_norm(z, 3, 1, dims, false, EM_DTYPE_NONE);
    case 3: return em_abs(z);
    case 4: return em_log2(z);
    case 5: return em_lerp(z, w, w);
    case 6: return em_addcdiv(z, w, z, 0.5);
    case 7: return em_float_power(z, w);
    default: return em_diff(z, 2, 0, w, NULL);
    }
}

TEST(complex_composed_backward)
{
    const double _Complex v[3] = {1 + 2 * I, -0.5 + I, 2 - I}, u[3] = {0.5 - I, 1.5, -1 + 2 * I};
    for (int k = 0; k < 9; k++) {
        em_tensor *z = cplx(v, 3), *w = cplx(u, 3);
        em_set_requires_grad(z, true);
        em_tensor *y = composed(k, z, w), *r = y && em_dtype_is_complex(em_dtype_of(y)) ? em_view_as_real(y) : em_retain(y);
        em_tensor *s = r ? em_sum(r, 0, NULL, false, EM_DTYPE_NONE) : NULL, *g = NULL;
        bool ok = s && em_autograd_grad(1, &s, NULL, 1, &z, false, false, false, &g) == EM_OK && g &&
                  em_dtype_of(g) == EM_C128;
        RELEASE(z, w, y, r, s, g);
        CHECK_MSG(ok, "op %d: %s", k, em_last_error());
    }
    /* the error paths: abs_ on complex, float_power out= of complex64, a complex log10 into float64 */
    const int64_t n = 3;
    em_tensor *z = cplx(v, 3), *w = cplx(u, 3), *o = em_empty(1, &n, EM_C64), *f = em_empty(1, &n, EM_F64);
    CHECK_ERR(em_abs_(z), EM_ERR_RUNTIME);
    CHECK_ERR(em_float_power_out(o, z, w), EM_ERR_RUNTIME);
    CHECK_ERR(em_log10_out(f, z), EM_ERR_DTYPE);
    RELEASE(z, w, o, f);
}
