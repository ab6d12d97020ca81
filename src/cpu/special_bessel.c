/* Bessel functions of integer order (J0, J1, Y0, Y1, I0, I1, K0, K1) and
 * the Airy function Ai, in double; see special_fn.h. */
#include "special_fn.h"
#include <math.h>

#define EULER_GAMMA 0.57721566490153286061
#define SQRT_2_OVER_PI 0.79788456080286535588

/* ---- modified Bessel functions I ---------------------------------------- */
/* exp(-|x|) I_nu(|x|) for nu = 0, 1: the power series (x/2)^nu sum t^k /
 * (k! (k+nu)!), t = x^2/4, whose terms are all positive, up to 30; beyond,
 * the asymptotic series exp(x)/sqrt(2 pi x) sum (-1)^k a_k(nu) / x^k,
 * a_k = a_{k-1} (4nu^2 - (2k-1)^2) / 8k, whose smallest term there is ~e^-60. */
static double ie_nu(double x, int nu)
{
    x = fabs(x);
    if (x <= 30) {
        double t = 0.25 * x * x, term = nu ? 0.5 * x : 1, sum = term;
        for (int k = 1; k < 500; k++) {
            term *= t / (k * (double)(k + nu));
            sum += term;
            if (term < 1e-17 * sum) break;
        }
        return sum * exp(-x);
    }
    double mu = 4.0 * nu * nu, term = 1, sum = 1;
    for (int k = 1; k < 100; k++) {
        double next = -term * (mu - (2 * k - 1) * (2 * k - 1)) / (8 * k * x);
        if (fabs(next) >= fabs(term) || fabs(next) < 1e-17 * fabs(sum)) break;
        term = next;
        sum += term;
    }
    return sum / sqrt(2 * M_PI * x);
}

/* PyTorch's: I0 and I1 of +-inf are nan, their scaled forms 0. */
double em_sf_i0e(double x) { return isnan(x) ? x : isinf(x) ? 0 : ie_nu(x, 0); }
double em_sf_i1e(double x) { return isnan(x) ? x : isinf(x) ? copysign(0, x) : copysign(ie_nu(x, 1), x); }
double em_sf_i0(double x) { return isinf(x) ? NAN : em_sf_i0e(x) * exp(fabs(x)); }
double em_sf_i1(double x) { return isinf(x) ? NAN : em_sf_i1e(x) * exp(fabs(x)); }

/* ---- modified Bessel functions K ---------------------------------------- */
/* exp(x) K_nu(x) = int_0^inf exp(-x (cosh u - 1)) cosh(nu u) du, any real nu,
 * x >= 0.5: the trapezoidal rule on this even, analytic, double-exponentially
 * decaying integrand converges geometrically, with an error near
 * exp(x - pi^2 / h) (from the strip |Im u| < pi/2) and exp(-2 pi^2 / (x h^2))
 * (the peak at 0, of width 1/sqrt x): h = min(pi^2 / (40 + x), 0.7 / sqrt x)
 * keeps both near 1e-17. The sum stops where x (cosh u - 1) = 2 x sinh(u/2)^2 passes 40. */
static double ke_nu_integral(double x, double nu)
{
    double h = fmin(M_PI * M_PI / (40 + x), 0.7 / sqrt(x)), sum = 0.5;
    for (int k = 1; k < 10000; k++) {
        double u = k * h, s = sinh(0.5 * u), e = 2 * x * s * s;
        if (e > 40) break;
        sum += exp(-e) * cosh(nu * u);
    }
    return h * sum;
}

/* K0 and K1 for 0 < x < 0.5 by their series (A&S 9.6.13, 9.6.11):
 * K0 = -(ln(x/2) + gamma) I0 + sum H_k t^k / k!^2,
 * K1 = 1/x + ln(x/2) I1 - (x/4) sum (psi(k+1) + psi(k+2)) t^k / (k! (k+1)!),
 * t = x^2/4, H_k the harmonic numbers, psi(k+1) = H_k - gamma. */
static double k_series(double x, int nu)
{
    double t = 0.25 * x * x, l = log(0.5 * x), term = 1, h = 0, sum = nu ? 1 - 2 * EULER_GAMMA : 0;
    for (int k = 1; k < 60; k++) {
        term *= t / (k * (double)(k + nu));
        h += 1.0 / k;
        sum += term * (nu ? 2 * h + 1.0 / (k + 1) - 2 * EULER_GAMMA : h);
        if (term < 1e-18) break;
    }
    if (!nu) return -(l + EULER_GAMMA) * em_sf_i0(x) + sum;
    return 1 / x + l * em_sf_i1(x) - 0.25 * x * sum;
}

/* Shared domain: nan below 0, inf at 0, 0 at inf. */
static double k_scaled(double x, int nu)
{
    if (isnan(x) || x < 0) return NAN;
    if (x == 0) return INFINITY;
    if (isinf(x)) return 0;
    return x < 0.5 ? k_series(x, nu) * exp(x) : ke_nu_integral(x, nu);
}
double em_sf_k0e(double x) { return k_scaled(x, 0); }
double em_sf_k1e(double x) { return k_scaled(x, 1); }
double em_sf_k0(double x) { return k_scaled(x, 0) * exp(-x); }
double em_sf_k1(double x) { return k_scaled(x, 1) * exp(-x); }

/* ---- Bessel functions J and Y ------------------------------------------- */
typedef struct bessel_jy {
    double j0, j1, y0, y1;
} bessel_jy;

/* x <= 2: the power series J0 = sum (-t)^k / k!^2, J1 = (x/2) sum (-t)^k /
 * (k! (k+1)!), t = x^2/4 (A&S 9.1.10), and for Y (9.1.13, 9.1.11)
 * Y0 = (2/pi) [(ln(x/2) + gamma) J0 + sum (-1)^(k+1) H_k t^k / k!^2],
 * Y1 = -2/(pi x) + (2/pi) ln(x/2) J1 - (x/2pi) sum (psi(k+1) + psi(k+2)) (-t)^k / (k! (k+1)!). */
static bessel_jy jy_series(double x)
{
    double t = 0.25 * x * x, l = log(0.5 * x);
    double a = 1, b = 1, j0 = 1, j1 = 1, s0 = 0, s1 = 1 - 2 * EULER_GAMMA, h = 0;
    for (int k = 1; k < 40; k++) {
        a *= -t / ((double)k * k);
        b *= -t / (k * (double)(k + 1));
        h += 1.0 / k;
        j0 += a;
        j1 += b;
        s0 -= a * h;
        s1 += b * (2 * h + 1.0 / (k + 1) - 2 * EULER_GAMMA);
        if (fabs(a) < 1e-18) break;
    }
    j1 *= 0.5 * x;
    return (bessel_jy){j0, j1, M_2_PI * ((l + EULER_GAMMA) * j0 + s0), -M_2_PI / x + M_2_PI * l * j1 - 0.5 * x / M_PI * s1};
}

/* 2 < x <= 25: Miller's backward recurrence J_{k-1} = (2k/x) J_k - J_{k+1}
 * from an order M where J_M(x) is negligible, normalized by
 * J0 + 2 sum J_2k = 1; Y from the Neumann series (A&S 9.1.88) and its
 * derivative: Y0 = (2/pi)(ln(x/2) + gamma) J0 - (4/pi) sum (-1)^k J_2k / k,
 * Y1 = -(2/pi) J0/x + (2/pi)(ln(x/2) + gamma) J1 + (2/pi) sum (-1)^k (J_{2k-1} - J_{2k+1}) / k. */
static bessel_jy jy_recurrence(double x)
{
    int m = 2 * ((int)(x / 2) + 25);
    double next = 0, cur = 1e-200; /* J_{k+1}, J_k, unnormalized */
    double norm = 0, s0 = 0, s1 = 0;
    for (int k = m; k >= 1; k--) {
        double prev = (2.0 * k / x) * cur - next; /* J_{k-1} */
        if (k % 2 == 0) {
            int half = k / 2;
            double sign = half % 2 ? -1 : 1;
            norm += 2 * cur;
            s0 += sign * cur / half;
            s1 += sign * (prev - next) / half;
        }
        next = cur;
        cur = prev;
    }
    norm += cur;
    double j0 = cur / norm, j1 = next / norm, l = log(0.5 * x) + EULER_GAMMA;
    return (bessel_jy){j0, j1, M_2_PI * (l * j0 - 2 * s0 / norm), M_2_PI * (-j0 / x + l * j1 + s1 / norm)};
}

/* x > 25: Hankel's expansions (A&S 9.2.5-10) J = sqrt(2/(pi x)) (P cos chi - Q sin chi),
 * Y = sqrt(2/(pi x)) (P sin chi + Q cos chi), chi = x - (2 nu + 1) pi/4, with
 * P = sum (-1)^k a_2k / x^2k, Q = sum (-1)^k a_(2k+1) / x^(2k+1) (a_k as in ie_nu);
 * cos chi and sin chi from sin x and cos x (libm reduces large x exactly). */
static void hankel_pq(double x, int nu, double *p, double *q)
{
    double mu = 4.0 * nu * nu, term = 1, prev = INFINITY;
    *p = 1, *q = 0;
    for (int k = 1; k < 120; k++) {
        term *= (mu - (2 * k - 1) * (2 * k - 1)) / (8 * k * x);
        if (fabs(term) >= prev || fabs(term) < 1e-18) break;
        prev = fabs(term);
        double signed_term = (k / 2) % 2 ? -term : term; /* (-1)^floor(k/2) */
        if (k % 2) *q += signed_term;
        else *p += signed_term;
    }
}
static bessel_jy jy_asymptotic(double x)
{
    double s = sin(x), c = cos(x), r = SQRT_2_OVER_PI * M_SQRT1_2 / sqrt(x), p0, q0, p1, q1;
    hankel_pq(x, 0, &p0, &q0);
    hankel_pq(x, 1, &p1, &q1);
    double c0 = c + s, s0 = s - c;    /* sqrt2 cos, sin of x - pi/4 */
    double c1 = s - c, s1 = -(s + c); /* of x - 3pi/4 */
    return (bessel_jy){r * (p0 * c0 - q0 * s0), r * (p1 * c1 - q1 * s1), r * (p0 * s0 + q0 * c0), r * (p1 * s1 + q1 * c1)};
}

static bessel_jy jy(double x) { return x <= 2 ? jy_series(x) : x <= 25 ? jy_recurrence(x) : jy_asymptotic(x); }

/* J is even (J0) or odd (J1) in x; Y is nan below 0 and -inf at 0; all are
 * nan at +-inf (PyTorch's). */
double em_sf_j0(double x) { return isinf(x) ? NAN : x == 0 ? 1 : jy(fabs(x)).j0; }
double em_sf_j1(double x) { return isinf(x) ? NAN : x == 0 ? x : copysign(1, x) * jy(fabs(x)).j1; }
double em_sf_y0(double x) { return !(x >= 0) || isinf(x) ? NAN : x == 0 ? -INFINITY : jy(x).y0; }
double em_sf_y1(double x) { return !(x >= 0) || isinf(x) ? NAN : x == 0 ? -INFINITY : jy(x).y1; }

/* ---- Airy Ai -------------------------------------------------------------- */
/* -10 <= x <= 1: Taylor steps of Ai'' = x Ai from Ai(0) and Ai'(0), in
 * ceil(|x|) steps of at most 1 (both solutions stay bounded on the
 * negative axis, so errors do not grow); coefficients at x0:
 * c_{k+2} = (x0 c_k + c_{k-1}) / ((k+2)(k+1)). */
static double airy_steps(double x)
{
    int n = x < -1 ? (int)ceil(-x) : 1;
    double h = x / n, x0 = 0, y = 0.35502805388781723926, dy = -0.25881940379280679840;
    for (int step = 0; step < n; step++, x0 += h) {
        double cm1 = 0, c0 = y, c1 = dy, hk = 1, ny = 0, ndy = 0; /* c_{k-1}, c_k, c_{k+1}; h^k */
        for (int k = 0; k < 80; k++) {
            ny += c0 * hk;
            ndy += (k + 1) * c1 * hk;
            double c2 = (x0 * c0 + cm1) / ((k + 2.0) * (k + 1));
            cm1 = c0, c0 = c1, c1 = c2;
            hk *= h;
            if (k > 6 && fabs(c0 * hk) + fabs(c1 * hk) < 1e-18 * (fabs(ny) + fabs(ndy))) break;
        }
        y = ny, dy = ndy;
    }
    return y;
}

/* x > 1: Ai(x) = sqrt(x/3)/pi K_{1/3}(zeta), zeta = (2/3) x^(3/2) (A&S 10.4.14).
 * x < -10: the asymptotic form (A&S 10.4.60) pi^-1/2 x^-1/4 [sin(zeta + pi/4) P - cos(zeta + pi/4) Q],
 * P = sum (-1)^k u_2k zeta^-2k, Q = sum (-1)^k u_(2k+1) zeta^-(2k+1),
 * u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / (216 k (2k-1)); its smallest term there is below e^-40. */
double em_sf_airy_ai(double x)
{
    if (isnan(x) || isinf(x)) return NAN;
    if (x > 1) {
        double zeta = 2.0 / 3 * x * sqrt(x);
        return zeta > 745 ? 0 : sqrt(x / 3) / M_PI * ke_nu_integral(zeta, 1.0 / 3) * exp(-zeta);
    }
    if (x >= -10) return airy_steps(x);
    double z = -x, zeta = 2.0 / 3 * z * sqrt(z), u = 1, p = 1, q = 0, prev = INFINITY;
    for (int k = 1; k < 60; k++) {
        u *= (6 * k - 5) * (6 * k - 3) * (6.0 * k - 1) / (216.0 * k * (2 * k - 1)) / zeta;
        if (u >= prev || u < 1e-18) break;
        prev = u;
        double t = (k / 2) % 2 ? -u : u;
        if (k % 2) q += t;
        else p += t;
    }
    double phase = zeta + M_PI / 4;
    return (sin(phase) * p - cos(phase) * q) / (sqrt(M_PI) * sqrt(sqrt(z)));
}
