/* Scalar special functions in double precision (torch.special's math), one
 * value at a time, for the kernels of src/cpu/special.c. Written from the
 * mathematical definitions: recurrences, power and asymptotic series,
 * continued fractions, and trapezoidal sums of integral representations
 * (which converge geometrically for analytic periodic or fast-decaying
 * integrands). Edge values (poles, infinities, out-of-domain inputs) follow
 * PyTorch 1.13's CPU results, quirks included where noted. */
#ifndef EMBER_CPU_SPECIAL_FN_H
#define EMBER_CPU_SPECIAL_FN_H

#include <stdint.h>

/* gamma family and related (special_gamma.c) */
double em_sf_lgamma(double x);
double em_sf_digamma(double x);
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
