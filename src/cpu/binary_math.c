/* CPU kernels of the pointwise binary math ops (include/ember/ops/binary.def):
 * float functions (atan2, hypot, copysign, xlogy, logaddexp, logaddexp2,
 * nextafter) and integer ones (gcd, lcm), and heaviside. */
#include "cpu.h"
#include <tgmath.h> /* atan2, hypot, log, ... follow the loop's float type */

/* ---- float functions ------------------------------------------------- */
/* xlogy: 0 where a == 0, unless b is nan */
#define XLOGY_OF(a, b) ((b) != (b) ? (b) : (a) == 0 ? 0 : (a) * log(b))
/* log(exp(a) + exp(b)) without overflow (base 2: exp2, and log1p over
 * ln 2); equal infinities give themselves */
#define LOGADDEXP_OF(T, a, b, EXP, LN_BASE) \
    (isinf(a) && (a) == (b) ? (a) : ((a) < (b) ? (b) : (a)) + log1p(EXP(-fabs((a) - (b)))) / (T)(LN_BASE))
#define FLOAT_MATH(DT)                                                                                \
    EM_BINARY_LOOP(atan2_##DT, em_##DT##_t, em_##DT##_t, atan2(a, b))                                 \
    EM_BINARY_LOOP(hypot_##DT, em_##DT##_t, em_##DT##_t, hypot(a, b))                                 \
    EM_BINARY_LOOP(copysign_##DT, em_##DT##_t, em_##DT##_t, copysign(a, b))                           \
    EM_BINARY_LOOP(xlogy_##DT, em_##DT##_t, em_##DT##_t, XLOGY_OF(a, b))                              \
    EM_BINARY_LOOP(logaddexp_##DT, em_##DT##_t, em_##DT##_t, LOGADDEXP_OF(em_##DT##_t, a, b, exp, 1)) \
    EM_BINARY_LOOP(logaddexp2_##DT, em_##DT##_t, em_##DT##_t,                                         \
                   LOGADDEXP_OF(em_##DT##_t, a, b, exp2, 0.6931471805599453))                         \
    EM_BINARY_LOOP(nextafter_##DT, em_##DT##_t, em_##DT##_t, nextafter(a, b))
EM_FOR_FLOATS(FLOAT_MATH)
CPU_POINTWISE(atan2, EM_LOOPS_FLOATS(atan2))
CPU_POINTWISE(hypot, EM_LOOPS_FLOATS(hypot))
CPU_POINTWISE(copysign, EM_LOOPS_FLOATS(copysign))
CPU_POINTWISE(xlogy, EM_LOOPS_FLOATS(xlogy))
CPU_POINTWISE(logaddexp, EM_LOOPS_FLOATS(logaddexp))
CPU_POINTWISE(logaddexp2, EM_LOOPS_FLOATS(logaddexp2))

/* nextafter of the 16-bit floats steps in their own precision, so it works
 * on the bits (a float32 step would round back): `inf` is the format's
 * infinity bits, above which (sign cleared) a value is nan. */
static inline uint16_t nextafter_bits16(uint16_t x, uint16_t y, uint16_t inf)
{
    uint16_t ax = x & 0x7fff, ay = y & 0x7fff;
    if (ax > inf) return x;
    if (ay > inf) return y;
    if (x == y) return x;
    if (ax == 0) return ay == 0 ? y : (uint16_t)((y & 0x8000) | 1); /* smallest subnormal toward y */
    return ax > ay || ((x ^ y) & 0x8000) ? (uint16_t)(x - 1) : (uint16_t)(x + 1);
}
EM_BINARY_LOOP(nextafter_F16, uint16_t, uint16_t, nextafter_bits16(a, b, 0x7c00))
EM_BINARY_LOOP(nextafter_BF16, uint16_t, uint16_t, nextafter_bits16(a, b, 0x7f80))
CPU_POINTWISE(nextafter, EM_LOOPS_FLOATS(nextafter) L(nextafter, F16) L(nextafter, BF16))

/* ---- gcd, lcm -------------------------------------------------------- */
/* PyTorch's Euclid on |a|, |b| with C's % (so INT_MIN stays negative and
 * gcd(7, INT64_MIN) is -1); lcm = |a / gcd * b| computed in C's promoted
 * type, wrapping; a / gcd cannot trap as gcd == -1 gives -a. */
#define ABS_WRAP(DT, x) ((x) < 0 ? (em_##DT##_t)(0 - EM_W(DT, x)) : (x))
#define GCD_LCM(DT)                                                                      \
    static inline em_##DT##_t gcd_##DT##_of(em_##DT##_t a, em_##DT##_t b)                \
    {                                                                                    \
        em_##DT##_t x = ABS_WRAP(DT, a), y = ABS_WRAP(DT, b);                            \
        while (x != 0) {                                                                 \
            em_##DT##_t t = x;                                                           \
            x = (em_##DT##_t)(y % x);                                                    \
            y = t;                                                                       \
        }                                                                                \
        return y;                                                                        \
    }                                                                                    \
    static inline em_##DT##_t lcm_##DT##_of(em_##DT##_t a, em_##DT##_t b)                \
    {                                                                                    \
        em_##DT##_t g = gcd_##DT##_of(a, b);                                             \
        if (g == 0) return 0;                                                            \
        em_##DT##_t q = g == -1 ? (em_##DT##_t)(0 - EM_W(DT, a)) : (em_##DT##_t)(a / g); \
        em_##DT##_s m = (em_##DT##_s)(EM_W(DT, q) * EM_W(DT, b));                        \
        return (em_##DT##_t)(m < 0 ? 0 - EM_W(DT, m) : EM_W(DT, m));                     \
    }                                                                                    \
    EM_BINARY_LOOP(gcd_##DT, em_##DT##_t, em_##DT##_t, gcd_##DT##_of(a, b))              \
    EM_BINARY_LOOP(lcm_##DT, em_##DT##_t, em_##DT##_t, lcm_##DT##_of(a, b))
EM_FOR_INTS(GCD_LCM)
CPU_POINTWISE(gcd, EM_LOOPS_INTS(gcd))
CPU_POINTWISE(lcm, EM_LOOPS_INTS(lcm))

/* ---- heaviside: b where a == 0, else a > 0 (nan gives 0, as PyTorch) -- */
static em_status check_heaviside(const em_call *c)
{
    if (c->in[0]->dtype != c->in[1]->dtype)
        return em_fail(EM_ERR_RUNTIME, "heaviside is not yet implemented for tensors with different dtypes.");
    return EM_OK;
}
#define HEAVISIDE(DT) EM_BINARY_LOOP(heaviside_##DT, em_##DT##_t, em_##DT##_t, a == 0 ? b : (em_##DT##_t)(a > 0))
EM_FOR_ALL(HEAVISIDE)
CPU_POINTWISE_CHECKED(heaviside, check_heaviside, EM_LOOPS_ALL(heaviside))
