/* CPU kernels of torch.special's ops (include/ember/ops/special.def): each
 * element through the double-precision functions of special_fn.h (float32
 * rounds their result), and the orthogonal polynomials by their three-term
 * recurrences. */
#include "special_fn.h"
#include "unary_ops.h"
#include "vmath.h"

/* A unary op computed by the double function fn (params p: c->f). */
#define SPECIAL_UNARY(op, expr) UNARY_FLOATS(op, (float)(expr), (expr))
/* (float32 lgamma through libm's float version: 2.5x faster, on the hot path of distributions) */
static inline float lgamma32(float x)
{
    int sign;
    return lgammaf_r(x, &sign);
}
UNARY_FLOATS(lgamma, lgamma32(a), em_sf_lgamma(a))
SPECIAL_UNARY(digamma, em_sf_digamma(a))
UNARY_FLOAT_LOOPS(polygamma, p[0] == 1 ? em_sf_trigammaf(a) : (float)em_sf_polygamma((int64_t)p[0], a),
                  em_sf_polygamma((int64_t)p[0], a))
/* polygamma(0, x) runs digamma's kernel, so that the two agree bit for bit */
em_status cpu_polygamma(const em_call *c) { return cpu_pointwise(c, c->f[0] == 0 ? digamma_loops : polygamma_loops); }
SPECIAL_UNARY(i0, em_sf_i0(a))
SPECIAL_UNARY(special_i0e, em_sf_i0e(a))
SPECIAL_UNARY(special_i1, em_sf_i1(a))
SPECIAL_UNARY(special_i1e, em_sf_i1e(a))
/* erfcx below 0 in float32 as PyTorch 1.13 computes it, 2 exp(x^2) - erfcx(-x)
 * with x^2 rounded to float32 first: the rounding moves its results by up to
 * x^2 2^-24 relative, beyond float32's tolerance for x < -5, and is kept so
 * that they agree. */
static float erfcx32(float x)
{
    if (!(x < 0)) return (float)em_sf_erfcx(x);
    float x2 = x * x;
    return (float)(2 * exp((double)x2) - em_sf_erfcx(-(double)x));
}
UNARY_FLOATS(special_erfcx, erfcx32(a), em_sf_erfcx(a))
SPECIAL_UNARY(special_ndtri, em_sf_ndtri(a))
SPECIAL_UNARY(special_log_ndtr, em_sf_log_ndtr(a))
/* entr(x) = -x log x, 0 at 0, -inf below */
SPECIAL_UNARY(special_entr, a != a ? (double)a : a > 0 ? -(double)a * log((double)a) : a == 0 ? 0.0 : -INFINITY)
SPECIAL_UNARY(special_airy_ai, em_sf_airy_ai(a))
SPECIAL_UNARY(special_bessel_j0, em_sf_j0(a))
SPECIAL_UNARY(special_bessel_j1, em_sf_j1(a))
SPECIAL_UNARY(special_bessel_y0, em_sf_y0(a))
SPECIAL_UNARY(special_bessel_y1, em_sf_y1(a))
SPECIAL_UNARY(special_modified_bessel_i0, em_sf_i0(a))
SPECIAL_UNARY(special_modified_bessel_i1, em_sf_i1(a))
SPECIAL_UNARY(special_modified_bessel_k0, em_sf_k0(a))
SPECIAL_UNARY(special_modified_bessel_k1, em_sf_k1(a))
SPECIAL_UNARY(special_scaled_modified_bessel_k0, em_sf_k0e(a))
SPECIAL_UNARY(special_scaled_modified_bessel_k1, em_sf_k1e(a))
/* sin(x)/x; its series below 1e-4, and 0 at +-inf */
static double spherical_j0(double x)
{
    if (isinf(x)) return 0;
    return fabs(x) < 1e-4 ? 1 - x * x / 6 : sin(x) / x;
}
SPECIAL_UNARY(special_spherical_bessel_j0, spherical_j0(a))

/* A binary op: its float32 and float64 expressions of (a, b); SPECIAL_BINARY
 * computes both by the double function fn. */
#define BINARY_FLOATS(op, expr32, expr64)                                                     \
    EM_BINARY_LOOP(op##_F32, float, float, expr32)                                           \
    EM_BINARY_LOOP(op##_F64, double, double, expr64)                                         \
    CPU_POINTWISE(op, L(op, F32) L(op, F64))
#define SPECIAL_BINARY(op, fn) BINARY_FLOATS(op, (float)fn((double)a, (double)b), fn(a, b))
static double xlog1py(double x, double y) { return y != y ? y : x == 0 ? 0 : x * log1p(y); }
SPECIAL_BINARY(igamma, em_sf_igamma)
SPECIAL_BINARY(igammac, em_sf_igammac)
SPECIAL_BINARY(special_zeta, em_sf_zeta)
SPECIAL_BINARY(special_xlog1py, xlog1py)

/* ---- orthogonal polynomials --------------------------------------------- */
/* Degree n of x by p_{k+1} = (alpha_k x + beta_k) p_k - gamma_k p_{k-1} from
 * p_0 = 1 and p_1. n is truncated to an integer (0 below 0). A value that has become nan stays nan, so the
 * loop stops there; degrees above 2^24 (PyTorch loops for ever) give nan. */
typedef enum { CHEB, LAGUERRE, LEGENDRE } poly_family;
static double poly_eval(poly_family fam, double x, double p1, double nd)
{
    if (isnan(nd)) return NAN;
    if (nd < 1) return nd <= -1 ? 0 : 1;
    if (nd > 0x1p24) return NAN;
    int64_t n = (int64_t)nd;
    double prev = 1, cur = p1;
    for (int64_t k = 1; k < n && cur == cur; k++) {
        double next;
        switch (fam) {
        case CHEB: next = 2 * x * cur - prev; break;
        case LAGUERRE: next = ((2.0 * k + 1 - x) * cur - k * prev) / (k + 1.0); break;
        default: next = ((2.0 * k + 1) * x * cur - k * prev) / (k + 1.0); break;
        }
        prev = cur, cur = next;
    }
    return cur;
}
/* Chebyshev T, U, V, W: one recurrence, p_1 = x, 2x, 2x - 1, 2x + 1; the
 * shifted ones at 2x - 1 */
static double cheb_t(double x, double n) { return poly_eval(CHEB, x, x, n); }
static double cheb_u(double x, double n) { return poly_eval(CHEB, x, 2 * x, n); }
static double cheb_v(double x, double n) { return poly_eval(CHEB, x, 2 * x - 1, n); }
static double cheb_w(double x, double n) { return poly_eval(CHEB, x, 2 * x + 1, n); }
static double shifted_t(double x, double n) { return cheb_t(2 * x - 1, n); }
static double shifted_u(double x, double n) { return cheb_u(2 * x - 1, n); }
static double shifted_v(double x, double n) { return cheb_v(2 * x - 1, n); }
static double shifted_w(double x, double n) { return cheb_w(2 * x - 1, n); }
static double laguerre_l(double x, double n) { return poly_eval(LAGUERRE, x, 1 - x, n); }
static double legendre_p(double x, double n) { return poly_eval(LEGENDRE, x, x, n); }
SPECIAL_BINARY(special_chebyshev_polynomial_t, cheb_t)
SPECIAL_BINARY(special_chebyshev_polynomial_u, cheb_u)
SPECIAL_BINARY(special_chebyshev_polynomial_v, cheb_v)
SPECIAL_BINARY(special_chebyshev_polynomial_w, cheb_w)
SPECIAL_BINARY(special_shifted_chebyshev_polynomial_t, shifted_t)
SPECIAL_BINARY(special_shifted_chebyshev_polynomial_u, shifted_u)
SPECIAL_BINARY(special_shifted_chebyshev_polynomial_v, shifted_v)
SPECIAL_BINARY(special_shifted_chebyshev_polynomial_w, shifted_w)

/* Hermite H_n (c = 2) and He_n (c = 1) in the input's type, as PyTorch 1.13
 * computes them: p_{k+1} = c x p_k - c k p_{k-1} with the multiply-subtract
 * fused (its compiled loop contracts it to one fma), so that float32 values
 * at high degree round as torch's do. Degrees as poly_eval. */
#define HERMITE(name, T, FMA, c)                                                              \
    static T name(T x, T nd)                                                                  \
    {                                                                                         \
        if (isnan(nd)) return NAN;                                                            \
        if (nd < 1) return nd <= -1 ? 0 : 1;                                                  \
        if (nd > 0x1p24) return NAN;                                                          \
        int64_t n = (int64_t)nd;                                                              \
        T prev = 1, cur = c * x;                                                              \
        for (int64_t k = 1; k < n && cur == cur; k++) {                                       \
            T next = FMA(c * x, cur, -((T)(c * k) * prev));                                   \
            prev = cur, cur = next;                                                           \
        }                                                                                     \
        return cur;                                                                           \
    }
HERMITE(hermite_h32, float, fmaf, 2)
HERMITE(hermite_h64, double, fma, 2)
HERMITE(hermite_he32, float, fmaf, 1)
HERMITE(hermite_he64, double, fma, 1)
BINARY_FLOATS(special_hermite_polynomial_h, hermite_h32(a, b), hermite_h64(a, b))
BINARY_FLOATS(special_hermite_polynomial_he, hermite_he32(a, b), hermite_he64(a, b))
SPECIAL_BINARY(special_laguerre_polynomial_l, laguerre_l)
SPECIAL_BINARY(special_legendre_polynomial_p, legendre_p)
