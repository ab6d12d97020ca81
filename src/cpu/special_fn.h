/* Scalar special functions in double precision (torch.special's math), one
 * value at a time, for the kernels of src/cpu/special.c. Written from the
 * mathematical definitions: recurrences, power and asymptotic series,
 * continued fractions, and trapezoidal sums of integral representations
 * (which converge geometrically for analytic periodic or fast-decaying
 * integrands). Edge values (poles, infinities, out-of-domain inputs) follow
 * PyTorch 1.13's CPU results, quirks included where noted. */
#ifndef EMBER_CPU_SPECIAL_FN_H
#define EMBER_CPU_SPECIAL_FN_H

#include <math.h>
#include <stdint.h>

/* digamma, branch-free so that a kernel loop over it vectorizes (log and tan
 * have vector forms, vmath.h; digamma is on the hot path of the gamma-family
 * distributions): psi(x) = psi(y + 10) - sum_{k<10} 1/(y + k) with y = x, or
 * for x < 0 y = 1 - x and the reflection psi(x) = psi(1 - x) - pi / tan(pi x),
 * tan taken of x's exact fractional part; psi(w), w = y + 10 >= 10, by the
 * asymptotic series ln w - 1/2w - sum B_2k / (2k w^2k). Poles: nan at the
 * negative integers (and -inf), -inf/+inf at +0/-0 (PyTorch's sign convention). */
static inline double em_sf_digamma(double x)
{
    double y = x < 0 ? 1 - x : x, s = 0;
    for (int k = 0; k < 10; k++) s += 1 / (y + k);
    double w = y + 10, z = 1 / (w * w);
    double tail = z * (1 / 12. - z * (1 / 120. - z * (1 / 252. - z * (1 / 240. - z * (1 / 132. - z * (691 / 32760. - z / 12.))))));
    double r = log(w) - 0.5 / w - tail - s;
    double frac = x - trunc(x); /* exact; nan at +-inf */
    r = x < 0 ? r - M_PI / tan(M_PI * frac) : r;
    r = x < 0 && frac == 0 ? NAN : r;
    return x == 0 ? copysign(INFINITY, -x) : r;
}

/* gamma family and related (special_gamma.c) */
double em_sf_lgamma(double x);
double em_sf_polygamma(int64_t n, double x); /* n >= 0 */
float em_sf_trigammaf(float x);              /* polygamma(1, x) in float, as PyTorch's float32 kernel */
double em_sf_zeta(double s, double q);       /* Hurwitz zeta(s, q) */
double em_sf_igamma(double a, double x);     /* regularized lower incomplete gamma P(a, x) */
double em_sf_igammac(double a, double x);    /* Q(a, x) = 1 - P(a, x) */
double em_sf_erfcx(double x);                /* exp(x^2) erfc(x) */
double em_sf_log_ndtr(double x);             /* log of the standard normal CDF */
double em_sf_ndtri(double p);                /* its inverse */

/* Bessel and Airy functions (special_bessel.c) */
double em_sf_i0e(double x); /* exp(-|x|) I0(x) */
double em_sf_i1e(double x);
double em_sf_i0(double x);
double em_sf_i1(double x);
double em_sf_k0e(double x); /* exp(x) K0(x) */
double em_sf_k1e(double x);
double em_sf_k0(double x);
double em_sf_k1(double x);
double em_sf_j0(double x);
double em_sf_j1(double x);
double em_sf_y0(double x);
double em_sf_y1(double x);
double em_sf_airy_ai(double x);

#endif
