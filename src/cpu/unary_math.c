/* CPU kernels of the transcendental unary ops (include/ember/ops/unary.def):
 * exponentials and logarithms, roots, trigonometric and hyperbolic
 * functions, erf and its inverse. Integral inputs arrive as float
 * (EM_RULE_FLOAT). float32 exp, expm1, log, log1p and tanh use the
 * vectorizable vmath.h; the rest is libm. */
#include "unary_ops.h"
#include "vmath.h"

UNARY_FLOATS_COMPLEX(exp, em_vexpf(a), exp(a), cexpf(a), cexp(a))
UNARY_LIBM(exp2, exp2)
UNARY_FLOATS(expm1, em_vexpm1f(a), expm1(a))
UNARY_FLOATS_COMPLEX(log, em_vlogf(a), log(a), clogf(a), clog(a))
UNARY_LIBM(log2, log2)
UNARY_LIBM(log10, log10)
UNARY_FLOATS(log1p, em_vlog1pf(a), log1p(a))
UNARY_LIBM_COMPLEX(sqrt, sqrt)
UNARY_FLOATS_COMPLEX(rsqrt, 1.0f / sqrtf(a), 1.0 / sqrt(a), 1.0f / csqrtf(a), 1.0 / csqrt(a))
UNARY_FLOATS_COMPLEX(reciprocal, 1.0f / a, 1.0 / a, 1.0f / a, 1.0 / a)

UNARY_LIBM_COMPLEX(sin, sin)
UNARY_LIBM_COMPLEX(cos, cos)
UNARY_LIBM_COMPLEX(tan, tan)
UNARY_LIBM_COMPLEX(asin, asin)
UNARY_LIBM_COMPLEX(acos, acos)
UNARY_LIBM_COMPLEX(atan, atan)
UNARY_LIBM_COMPLEX(sinh, sinh)
UNARY_LIBM_COMPLEX(cosh, cosh)
UNARY_FLOATS_COMPLEX(tanh, em_vtanhf(a), tanh(a), ctanhf(a), ctanh(a))
UNARY_LIBM_COMPLEX(asinh, asinh)
UNARY_LIBM_COMPLEX(acosh, acosh)
UNARY_LIBM_COMPLEX(atanh, atanh)

UNARY_FLOATS(erf, em_verff(a), erf(a))
UNARY_LIBM(erfc, erfc)

/* erfinv(y), in double for both dtypes (libm has none): a closed-form start
 * within 0.2% (Winitzki's approximation), then `steps` Newton steps on
 * erf(x) = |y| for |y| <= 0.5 and on log(erfc(x)) = log(1 - |y|) beyond,
 * where 1 - |y| is exact and erfc keeps the precision that erf loses near
 * 1. Both are computed and one selected, with no branch, so that the loop
 * vectorizes through libmvec (exp(-x^2), needed only to a few digits, as
 * exp2 since libmvec's exp differs from libm's, which the em_exp tests want). */
static inline double erfinv_f64(double y, int steps)
{
    double ay = fabs(y), a = ay < 1.0 ? ay : 0.5; /* (|y| >= 1 and NaN are answered at the end) */
    double q = 1.0 - a, l = log(q * (1.0 + a)); /* log(1 - y^2) */
    const double w = 0.147, b = 2.0 / (M_PI * w) + 0.5 * l;
    double start = sqrt(sqrt(b * b - l / w) - b);
    start = start > 0.0 ? start : a * 0.886226925452758; /* it cancels to 0 for tiny y: sqrt(pi)/2 y */
    double x_erf = start, x_erfc = start, lq = log(q);
    for (int k = 0; k < steps; k++) {
        x_erf -= (erf(x_erf) - a) / (M_2_SQRTPI * exp2(-x_erf * x_erf * M_LOG2E));
        double c = erfc(x_erfc);
        x_erfc += (log(c) - lq) * c / (M_2_SQRTPI * exp2(-x_erfc * x_erfc * M_LOG2E));
    }
    double x = a <= 0.5 ? x_erf : x_erfc;
    x = ay < 1.0 ? x : ay == 1.0 ? INFINITY : NAN;
    return copysign(x, y);
}
/* (float32 starts 2e-3 off, so two quadratic steps reach 1e-11) */
UNARY_FLOATS(erfinv, (float)erfinv_f64(a, 2), erfinv_f64(a, 3))
