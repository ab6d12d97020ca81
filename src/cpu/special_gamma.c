/* The gamma family (lgamma, digamma, polygamma, Hurwitz zeta, regularized
 * incomplete gamma) and the normal-distribution functions (erfcx, log_ndtr,
 * ndtri), in double; see special_fn.h. */
#include "special_fn.h"
#include <math.h>
#include <stdbool.h>

#define LOG_SQRT_2PI 0.91893853320467274178

double em_sf_lgamma(double x)
{
    int sign;
    return lgamma_r(x, &sign); /* (the reentrant form: kernels run on several threads) */
}

/* trigamma the same way: psi1(x) = psi1(x + 1) + 1/x^2, then
 * 1/x + 1/2x^2 + sum B_2k / x^(2k+1); reflection psi1(1 - x) + pi^2 / sin^2(pi x)
 * with sin of pi x itself (PyTorch's: a large finite value at the negative
 * integers, where sin(pi x) is not exactly 0). */
static double trigamma(double x)
{
    if (x < 0) {
        double s = sin(M_PI * x);
        return M_PI * M_PI / (s * s) - trigamma(1 - x);
    }
    if (x == 0) return INFINITY;
    if (isnan(x)) return x;
    double acc = 0;
    for (; x < 10; x += 1) acc += 1 / (x * x);
    double r = 1 / x, z = r * r;
    double tail = r * z * (1 / 6. - z * (1 / 30. - z * (1 / 42. - z * (1 / 30. - z * (5 / 66. - z * (691 / 2730. - z * 7 / 6.))))));
    return acc + r + 0.5 * z + tail;
}

/* B_2j / (2j)!, j = 1..10, for the Euler-Maclaurin tail of zeta */
static const double bernoulli_over_factorial[] = {
    1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160, -691.0 / 1307674368000.0,
    1.0 / 74724249600.0, -3617.0 / 10670622842880000.0, 43867.0 / 5109094217170944000.0,
    -174611.0 / 802857662698291200000.0,
};

/* Hurwitz zeta(s, q) = sum_k (q + k)^-s: the first terms summed until
 * w = q + N >= 2s + 10 (so that the Euler-Maclaurin terms fall fast), the rest:
 * w^(1-s)/(s-1) + w^-s/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) w^(-s-2j+1).
 * Domain as PyTorch: s == 1 is inf, s < 1 nan; q <= 0 an integer is a pole
 * (inf), and a negative q needs an integral s; infinite s or q give nan. */
double em_sf_zeta(double s, double q)
{
    if (isnan(s) || isnan(q)) return NAN;
    if (s == 1) return INFINITY;
    if (s < 1 || isinf(s) || q == INFINITY) return NAN;
    if (q <= 0) {
        if (q == floor(q)) return INFINITY;
        if (s != floor(s)) return NAN;
    }
    double target = 2 * s + 10, sum = 0, w = q;
    for (int64_t k = 0; w < target && k < 100000; k++, w = q + (double)(k)) {
        double term = pow(w, -s);
        sum += term;
        /* the rest is below term * (1 + w / (s - 1)) (an integral bound) */
        if (w > 0 && fabs(term) * (1 + w / (s - 1)) < 1e-17 * fabs(sum)) return sum;
    }
    double ws = pow(w, -s);
    sum += w * ws / (s - 1) + 0.5 * ws;
    double fac = s * ws / w, prev = INFINITY; /* s (s+1)...(s+2j-2) w^(-s-2j+1) */
    for (int j = 0; j < 10; j++) {
        double term = bernoulli_over_factorial[j] * fac;
        if (!(fabs(term) < prev) || fabs(term) < 1e-17 * fabs(sum)) break;
        sum += term;
        prev = fabs(term);
        fac *= (s + 2 * j + 1) * (s + 2 * j + 2) / (w * w);
    }
    return sum;
}

/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2 */
double em_sf_polygamma(int64_t n, double x)
{
    if (n == 0) return em_sf_digamma(x);
    if (n == 1) return trigamma(x);
    double fact = tgamma((double)n + 1);
    return (n % 2 ? fact : -fact) * em_sf_zeta((double)n + 1, x);
}

/* float32 trigamma as PyTorch 1.13 computes it: in float, the reflection
 * pi^2 / sin^2(pi x) - psi1(1 - x) below 1/2, six steps of the recurrence,
 * then 1/x + 1/2x^2 + 1/6x^3 - 1/30x^5 + 1/42x^7. Near the poles (negative x
 * close to an integer) float's rounding of pi x moves its results by more
 * than float32's tolerance; the same steps make Ember's agree (trigamma is
 * also digamma's gradient). The double trigamma above stays accurate. */
float em_sf_trigammaf(float x)
{
    const float pi = (float)M_PI;
    float sign = 1, acc = 0;
    if (x < 0.5f) {
        float s = sinf(pi * x);
        acc = -(pi * pi) / (s * s);
        sign = -1;
        x = 1 - x;
    }
    for (int i = 0; i < 6; i++, x += 1) acc += 1 / (x * x);
    float z = 1 / (x * x);
    acc += (1 + 1 / (2 * x) + z * (1.f / 6 - z * (1.f / 30 - z * (1.f / 42)))) / x;
    return sign * acc;
}

/* t - log(1 + t) for t = x/a - 1: the series t^2/2 - t^3/3 + ... for small
 * t, else with log(x/a) (exact to an ulp, where 1 + t is not). */
static double t_minus_log1p(double a, double x)
{
    double t = (x - a) / a;
    if (fabs(t) >= 0.3) return t - log(x / a);
    double sum = 0, pw = t * t;
    for (int k = 2; k < 60; k++, pw *= -t) {
        double term = pw / k;
        sum += term;
        if (fabs(term) < 1e-17 * fabs(sum)) break;
    }
    return sum;
}

/* log(x^a e^-x / Gamma(a)), the prefactor of both halves. For a >= 10 it is
 * written as -a (t - log1p t) + log(a / 2pi)/2 - stirling(a), t = (x - a)/a,
 * which keeps the large terms a log x, x and lgamma(a) from cancelling. */
static double igamma_log_prefactor(double a, double x)
{
    if (a < 10) return a * log(x) - x - em_sf_lgamma(a);
    double r = 1 / a, z = r * r;
    double stirling = r * (1 / 12. - z * (1 / 360. - z * (1 / 1260. - z * (1 / 1680. - z / 1188.))));
    return -a * t_minus_log1p(a, x) + 0.5 * log(a / (2 * M_PI)) - stirling;
}

/* P(a, x) by its power series (x < a + 1): x^a e^-x / Gamma(a + 1) *
 * sum_k x^k / ((a+1)...(a+k)); Q(a, x) by Legendre's continued fraction
 * (x >= a + 1), evaluated with the modified Lentz method. Each gives the
 * other as its complement where that is not small. */
static double igamma_series(double a, double x)
{
    double sum = 1, term = 1;
    for (int k = 1; k < 1000000; k++) {
        term *= x / (a + k);
        sum += term;
        if (term < 1e-17 * sum) break;
    }
    return exp(igamma_log_prefactor(a, x)) * sum / a;
}
static double igammac_fraction(double a, double x)
{
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 1000000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1) < 1e-16) break;
    }
    return exp(igamma_log_prefactor(a, x)) * h;
}

/* The edge values both share (PyTorch's): -1 when none applies, else the
 * value of P (lower) or Q. */
static int igamma_edge(double a, double x, bool lower, double *out)
{
    if (isnan(a) || isnan(x) || a < 0 || x < 0 || (a == 0 && x == 0) || (isinf(a) && isinf(x))) *out = NAN;
    else if (a == 0 || x == INFINITY) *out = lower ? 1 : 0;
    else if (x == 0 || a == INFINITY) *out = lower ? 0 : 1;
    else return -1;
    return 0;
}

double em_sf_igamma(double a, double x)
{
    double v;
    if (!igamma_edge(a, x, true, &v)) return v;
    return x < a + 1 ? igamma_series(a, x) : 1 - igammac_fraction(a, x);
}

double em_sf_igammac(double a, double x)
{
    double v;
    if (!igamma_edge(a, x, false, &v)) return v;
    return x < a + 1 ? 1 - igamma_series(a, x) : igammac_fraction(a, x);
}

/* erfcx(x) = exp(x^2) erfc(x): directly below 26 (libm's erfc is accurate
 * down to its underflow there), with exp(x^2) corrected for the rounding
 * of x^2; the asymptotic series 1/(x sqrt pi) sum (-1)^k (2k-1)!! / (2x^2)^k
 * beyond; erfcx(-x) = 2 exp(x^2) - erfcx(x). */
static double exp_square(double x)
{
    double x2 = x * x, err = fma(x, x, -x2);
    return exp(x2) * (1 + err);
}
double em_sf_erfcx(double x)
{
    if (isnan(x)) return x;
    if (x < 0) return x < -26.7 ? INFINITY : 2 * exp_square(x) - em_sf_erfcx(-x);
    if (x < 26) return exp_square(x) * erfc(x);
    double z = 1 / (2 * x * x), sum = 1, term = 1;
    for (int k = 1; k < 12; k++) {
        term *= -(2 * k - 1) * z;
        sum += term;
    }
    return sum / (x * 1.77245385090551602730);
}

/* log Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2: log1p(-Phi(-x)) above 0; below,
 * log(erfcx(-x / sqrt 2) / 2) - x^2 / 2, which neither underflows nor cancels. */
double em_sf_log_ndtr(double x)
{
    if (x > 0) return log1p(-0.5 * erfc(x * M_SQRT1_2));
    if (x > -1) return log(0.5 * erfc(-x * M_SQRT1_2));
    return log(0.5 * em_sf_erfcx(-x * M_SQRT1_2)) - 0.5 * x * x;
}

/* ndtri(p) = Phi^-1(p): for p < 1/2, a start within 5e-4 (the rational
 * approximation in t = sqrt(-2 log p) of Abramowitz & Stegun 26.2.23), then
 * Newton's method on log Phi(x) = log p, which stays well-scaled deep in
 * the tail; ndtri(p) = -ndtri(1 - p) above 1/2, where 1 - p is exact. */
double em_sf_ndtri(double p)
{
    if (!(p >= 0 && p <= 1)) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    if (p == 0.5) return 0;
    if (p > 0.5) return -em_sf_ndtri(1 - p);
    double t = sqrt(-2 * log(p)), lp = log(p);
    double x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))));
    for (int k = 0; k < 4; k++) {
        double lphi = em_sf_log_ndtr(x);
        double log_density = -0.5 * x * x - LOG_SQRT_2PI; /* log phi(x) */
        x -= (lphi - lp) * exp(lphi - log_density);
    }
    return x;
}
