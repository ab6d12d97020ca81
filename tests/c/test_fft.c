/* The DFT primitives (include/ember/fft.h) from C: known transforms in both
 * precisions (kissfft: its C library for complex64, kissfft<double> for
 * complex128), real round trips over several dims, the argument errors,
 * and a gradcheck through all three. The Python
 * tests (tests/python/test_fft.py) compare torch.fft's functions with torch. */
#include "test.h"
#include <complex.h>

static bool close_c(const em_tensor *t, const double _Complex *want, int64_t n, double tol)
{
    em_tensor *d = em_to_dtype(t, EM_C128);
    const double _Complex *p = d ? em_data_ptr(d) : NULL;
    bool ok = p && em_numel(d) == n;
    for (int64_t i = 0; ok && i < n; i++) ok = cabs(p[i] - want[i]) <= tol * (1 + cabs(want[i]));
    em_release(d);
    return ok;
}

TEST(fft_known_values)
{
    /* DFT of [1, 2, 3, 4]: [10, -2 + 2i, -2, -2 - 2i]; of length 6 (factors 2, 3) and 7 (prime) via
     * the inverse round trip */
    const double _Complex x[4] = {1, 2, 3, 4}, X[4] = {10, -2 + 2 * I, -2, -2 - 2 * I};
    const int64_t dim[1] = {0};
    for (em_dtype dt = EM_C64; dt <= EM_C128; dt++) {
        em_tensor *a = em_from_data(x, 1, (const int64_t[]){4}, EM_C128), *t = a ? em_to_dtype(a, dt) : NULL;
        em_tensor *f = t ? em_fft_c2c(t, 1, dim, EM_FFT_NORM_NONE, true) : NULL;
        em_tensor *b = f ? em_fft_c2c(f, 1, dim, EM_FFT_NORM_N, false) : NULL;
        em_tensor *o = f ? em_fft_c2c(t, 1, dim, EM_FFT_NORM_SQRT_N, true) : NULL;
        const double _Complex half[4] = {5, -1 + I, -1, -1 - I};
        bool ok = b && o && em_dtype_of(f) == dt && close_c(f, X, 4, 1e-6) && close_c(b, x, 4, 1e-6) &&
                  close_c(o, half, 4, 1e-6);
        RELEASE(a, t, f, b, o);
        CHECK_MSG(ok, "dtype %d: %s", (int)dt, em_last_error());
    }
    for (int64_t n = 5; n <= 67; n += n < 13 ? 1 : 54) { /* 67: Bluestein */
        em_tensor *r = trand(EM_F64, 2, (const int64_t[]){n, 2}, -1, 1), *z = r ? em_view_as_complex(r) : NULL;
        em_tensor *f = z ? em_fft_c2c(z, 1, dim, EM_FFT_NORM_SQRT_N, true) : NULL;
        em_tensor *b = f ? em_fft_c2c(f, 1, dim, EM_FFT_NORM_SQRT_N, false) : NULL;
        bool ok = b && close_c(b, em_data_ptr(z), n, 1e-12);
        RELEASE(r, z, f, b);
        CHECK_MSG(ok, "round trip of length %lld", (long long)n);
    }
    COVER(EM_OP_fft_c2c);
}

TEST(fft_real_round_trips)
{
    /* r2c over two dims (onesided) then c2r back; the full r2c equals c2c of the complexified input.
     * Odd and even real lengths, and a leading dim of prime length 67 (Bluestein) whose lines are
     * gathered in blocks (60 of them side by side) */
    const int64_t dims[2] = {0, 2}, shapes[4][3] = {{3, 2, 5}, {4, 1, 6}, {67, 3, 20}, {5, 1, 134}};
    for (int k = 0; k < 4; k++)
        for (em_dtype dt = EM_F32; dt <= EM_F64; dt++) {
            const double tol = dt == EM_F32 ? 1e-5 : 1e-12;
            em_tensor *x = trand(dt, 3, shapes[k], -1, 1), *X = x ? em_fft_r2c(x, 2, dims, EM_FFT_NORM_N, true) : NULL;
            em_tensor *y = X ? em_fft_c2r(X, 2, dims, EM_FFT_NORM_NONE, shapes[k][2]) : NULL;
            em_tensor *full = y ? em_fft_r2c(x, 2, dims, EM_FFT_NORM_NONE, false) : NULL;
            em_tensor *xc = full ? em_to_dtype(x, em_dtype_to_complex(dt)) : NULL;
            em_tensor *ref = xc ? em_fft_c2c(xc, 2, dims, EM_FFT_NORM_NONE, true) : NULL, *refd = NULL;
            bool ok = ref && em_size(X, 2) == shapes[k][2] / 2 + 1 && em_dtype_of(y) == dt;
            double *got = ok ? tvals(y) : NULL, *want = ok ? tvals(x) : NULL;
            for (int64_t i = 0; ok && i < em_numel(x); i++) ok = fabs(got[i] - want[i]) <= tol;
            free(got), free(want);
            refd = ok ? em_to_dtype(ref, EM_C128) : NULL;
            ok = ok && refd && close_c(full, em_data_ptr(refd), em_numel(refd), tol);
            RELEASE(x, X, y, full, xc, ref, refd);
            CHECK_MSG(ok, "shape %d dtype %d: %s", k, (int)dt, em_last_error());
        }
    COVER(EM_OP_fft_r2c, EM_OP_fft_c2r);
}

TEST(fft_errors)
{
    em_tensor *r = trand(EM_F64, 2, (const int64_t[]){3, 4}, -1, 1), *z = em_to_dtype(r, EM_C128);
    em_tensor *e = em_zeros(2, (const int64_t[]){3, 0}, EM_C128), *i = em_zeros(1, (const int64_t[]){4}, EM_I64);
    const int64_t d0[1] = {0}, d1[1] = {1}, dup[2] = {1, -1}, bad[1] = {2};
    CHECK(r && z && e && i);
    CHECK_ERR(em_fft_c2c(r, 1, d0, EM_FFT_NORM_NONE, true), EM_ERR_DTYPE);
    CHECK_ERR(em_fft_r2c(z, 1, d0, EM_FFT_NORM_NONE, true), EM_ERR_DTYPE);
    CHECK_ERR(em_fft_r2c(i, 1, d0, EM_FFT_NORM_NONE, true), EM_ERR_DTYPE);
    CHECK_ERR(em_fft_c2c(z, 2, dup, EM_FFT_NORM_NONE, true), EM_ERR_RUNTIME);
    CHECK_ERR(em_fft_c2c(z, 1, bad, EM_FFT_NORM_NONE, true), EM_ERR_INDEX);
    CHECK_ERR(em_fft_c2c(z, 3, d0, EM_FFT_NORM_NONE, true), EM_ERR_VALUE);
    CHECK_ERR(em_fft_c2c(z, 1, d0, (em_fft_norm)7, true), EM_ERR_VALUE);
    CHECK_ERR(em_fft_c2c(e, 1, d1, EM_FFT_NORM_NONE, true), EM_ERR_RUNTIME); /* zero points */
    CHECK_ERR(em_fft_c2r(z, 1, d1, EM_FFT_NORM_NONE, 4), EM_ERR_SHAPE);      /* 4 entries, 3 wanted */
    CHECK_ERR(em_fft_c2r(z, 1, d1, EM_FFT_NORM_NONE, 0), EM_ERR_RUNTIME);
    em_tensor *ok = em_fft_c2c(e, 1, d0, EM_FFT_NORM_NONE, true); /* an empty batch is fine */
    CHECK(ok && em_numel(ok) == 0);
    RELEASE(r, z, e, i, ok);
}

/* c2r(c2c(r2c(x))) over (0, 1): real in, real out, through all three formulas */
static em_tensor *f_chain(em_tensor *const *in, const void *ctx)
{
    const int64_t dims[2] = {0, 1}, *n = ctx;
    em_tensor *a = em_fft_r2c(in[0], 2, dims, EM_FFT_NORM_SQRT_N, true);
    em_tensor *b = a ? em_fft_c2c(a, 1, dims, EM_FFT_NORM_N, false) : NULL;
    em_tensor *c = b ? em_fft_c2r(b, 2, dims, EM_FFT_NORM_NONE, *n) : NULL;
    RELEASE(a, b);
    return c;
}

TEST(gradcheck_fft)
{
    static const int64_t five = 5, six = 6;
    em_tensor *x = leaf(2, (const int64_t[]){3, 5}, -1, 1), *y = leaf(2, (const int64_t[]){2, 6}, -1, 1);
    bool ok = x && y && gradcheck("fft chain odd", f_chain, 1, &x, &five) &&
              gradcheck("fft chain even", f_chain, 1, &y, &six);
    RELEASE(x, y);
    CHECK(ok);
    GRAD_COVER(EM_OP_fft_c2c, EM_OP_fft_r2c, EM_OP_fft_c2r);
}
