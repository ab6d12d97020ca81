/* CPU kernels of the transcendental unary ops (include/ember/ops/unary.def):
 * exponentials and logarithms, roots, trigonometric and hyperbolic
 * functions, erf and its inverse. Integral inputs arrive as float
 * (EM_RULE_FLOAT). float32 exp, expm1, log, log1p and tanh use the
 * vectorizable vmath.h; the rest is libm. */
#include "unary_ops.h"
#include "vmath.h"

UNARY_FLOATS(exp, em_vexpf(a), exp(a))
UNARY_LIBM(exp2, exp2)
UNARY_FLOATS(expm1, em_vexpm1f(a), expm1(a))
UNARY_FLOATS(log, em_vlogf(a), log(a))
UNARY_LIBM(log2, log2)
UNARY_LIBM(log10, log10)
UNARY_FLOATS(log1p, em_vlog1pf(a), log1p(a))
UNARY_LIBM(sqrt, sqrt)
UNARY_FLOATS(rsqrt, 1.0f / sqrtf(a), 1.0 / sqrt(a))
UNARY_FLOATS(reciprocal, 1.0f / a, 1.0 / a)

UNARY_LIBM(sin, sin)
UNARY_LIBM(cos, cos)
UNARY_LIBM(tan, tan)
UNARY_LIBM(asin, asin)
UNARY_LIBM(acos, acos)
UNARY_LIBM(atan, atan)
UNARY_LIBM(sinh, sinh)
UNARY_LIBM(cosh, cosh)
UNARY_FLOATS(tanh, em_vtanhf(a), tanh(a))
UNARY_LIBM(asinh, asinh)
UNARY_LIBM(acosh, acosh)
UNARY_LIBM(atanh, atanh)

UNARY_LIBM(erf, erf)
UNARY_LIBM(erfc, erfc)

/* erfinv(y), in double for both dtypes (libm has none): a closed-form start
 * within 0.2% (Winitzki's approximation), then Newton steps on erf(x) = |y|
 * for |y| <= 0.5 and on log(erfc(x)) = log(1 - |y|) beyond, where 1 - |y|
 * is exact and erfc keeps the precision that erf loses near 1. */
static double erfinv_f64(double y)
{
    double ay = fabs(y);
    if (!(ay < 1.0)) return ay == 1.0 ? copysign(INFINITY, y) : NAN;
    if (ay == 0.0) return y;
    double q = 1.0 - ay, l = log(q * (1.0 + ay)); /* log(1 - y^2) */
    const double a = 0.147, b = 2.0 / (M_PI * a) + 0.5 * l;
    double x = sqrt(sqrt(b * b - l / a) - b);
    if (ay <= 0.5) {
        if (!(x > 0.0)) x = ay * 0.886226925452758; /* the start cancels to 0 for tiny y: sqrt(pi)/2 y */
        for (int k = 0; k < 3; k++) x -= (erf(x) - ay) / (M_2_SQRTPI * exp(-x * x));
    } else {
        double lq = log(q);
        for (int k = 0; k < 3; k++) {
            double c = erfc(x);
            x += (log(c) - lq) * c / (M_2_SQRTPI * exp(-x * x));
        }
    }
    return copysign(x, y);
}
UNARY_FLOATS(erfinv, (float)erfinv_f64(a), erfinv_f64(a))
