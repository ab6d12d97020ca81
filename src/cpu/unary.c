/* CPU kernels of the exact unary ops (include/ember/ops/unary.def): sign
 * and negation, rounding, clamping, nan_to_num, classification, logical and
 * bitwise not. The transcendental ops are in unary_math.c, the activations
 * in unary_activation.c. */
#include "unary_ops.h"
#include <float.h>

/* Per integral dtype: an unsigned type at least 32 bits wide, in which
 * negation and squaring wrap as PyTorch's do (signed overflow is undefined
 * in C), and the dtype's range, which clamp uses for a missing bound. */
#define UT_U8 uint32_t
#define UT_I8 uint32_t
#define UT_I16 uint32_t
#define UT_I32 uint32_t
#define UT_I64 uint64_t
#define LOWEST_U8 0
#define LOWEST_I8 INT8_MIN
#define LOWEST_I16 INT16_MIN
#define LOWEST_I32 INT32_MIN
#define LOWEST_I64 INT64_MIN
#define LOWEST_F32 -INFINITY
#define LOWEST_F64 -INFINITY
#define HIGHEST_U8 UINT8_MAX
#define HIGHEST_I8 INT8_MAX
#define HIGHEST_I16 INT16_MAX
#define HIGHEST_I32 INT32_MAX
#define HIGHEST_I64 INT64_MAX
#define HIGHEST_F32 INFINITY
#define HIGHEST_F64 INFINITY
/* A bound in the dtype: integers truncate toward zero through int64, so that
 * uint8 wraps a negative bound as PyTorch does (the op layer checked range). */
#define BOUND_INT(T, v) ((T)(int64_t)(v))
#define BOUND_U8(v) BOUND_INT(uint8_t, v)
#define BOUND_I8(v) BOUND_INT(int8_t, v)
#define BOUND_I16(v) BOUND_INT(int16_t, v)
#define BOUND_I32(v) BOUND_INT(int32_t, v)
#define BOUND_I64(v) BOUND_INT(int64_t, v)
#define BOUND_F32(v) ((float)(v))
#define BOUND_F64(v) (v)

#define CT(DT) em_##DT##_t
#define INT_ENTRIES(op) L(op, U8) L(op, I8) L(op, I16) L(op, I32) L(op, I64)
#define ENTRY(op) INT_ENTRIES(op) L(op, F32) L(op, F64)

/* ---- neg, abs, sign, square, positive -------------------------------- */
#define NEG_INT(DT) EM_UNARY_LOOP(neg_##DT, CT(DT), CT(DT), (CT(DT))((UT_##DT)0 - (UT_##DT)a))
#define ABS_INT(DT) EM_UNARY_LOOP(abs_##DT, CT(DT), CT(DT), a < 0 ? (CT(DT))((UT_##DT)0 - (UT_##DT)a) : a)
#define SQUARE_INT(DT) EM_UNARY_LOOP(square_##DT, CT(DT), CT(DT), (CT(DT))((UT_##DT)a * (UT_##DT)a))
EM_FOR_INTS(NEG_INT)
EM_FOR_INTS(ABS_INT)
EM_FOR_INTS(SQUARE_INT)
EM_UNARY_LOOP(neg_F32, float, float, -a)
EM_UNARY_LOOP(neg_F64, double, double, -a)
EM_UNARY_LOOP(abs_F32, float, float, fabsf(a))
EM_UNARY_LOOP(abs_F64, double, double, fabs(a))
EM_UNARY_LOOP(square_F32, float, float, a * a)
EM_UNARY_LOOP(square_F64, double, double, a * a)
EM_UNARY_LOOP(neg_C64, em_C64_t, em_C64_t, -a)
EM_UNARY_LOOP(neg_C128, em_C128_t, em_C128_t, -a)
EM_UNARY_LOOP(square_C64, em_C64_t, em_C64_t, a * a)
EM_UNARY_LOOP(square_C128, em_C128_t, em_C128_t, a * a)
CPU_POINTWISE(neg, ENTRY(neg) EM_LOOPS_COMPLEX(neg))
CPU_POINTWISE(abs, ENTRY(abs))
CPU_POINTWISE(square, ENTRY(square) EM_LOOPS_COMPLEX(square))

/* sign: 0 for +-0 and, as PyTorch on CPU, for NaN */
#define SIGN(DT) EM_UNARY_LOOP(sign_##DT, CT(DT), CT(DT), (CT(DT))((a > 0) - (a < 0)))
EM_FOR_NUMERIC(SIGN)
EM_UNARY_LOOP(sign_BOOL, bool, bool, a)
CPU_POINTWISE(sign, ENTRY(sign) L(sign, BOOL))

#define POSITIVE(DT) EM_UNARY_LOOP(positive_##DT, CT(DT), CT(DT), a)
EM_FOR_NUMERIC(POSITIVE)
CPU_POINTWISE(positive, ENTRY(positive))

/* ---- rounding: integers are already integral ------------------------- */
#define IDENTITY_INT(op) \
    EM_UNARY_LOOP(op##_U8, uint8_t, uint8_t, a)   \
    EM_UNARY_LOOP(op##_I8, int8_t, int8_t, a)     \
    EM_UNARY_LOOP(op##_I16, int16_t, int16_t, a)  \
    EM_UNARY_LOOP(op##_I32, int32_t, int32_t, a)  \
    EM_UNARY_LOOP(op##_I64, int64_t, int64_t, a)
#define ROUNDING(op, fn)                            \
    IDENTITY_INT(op)                                \
    EM_UNARY_LOOP(op##_F32, float, float, fn##f(a)) \
    EM_UNARY_LOOP(op##_F64, double, double, fn(a))  \
    CPU_POINTWISE(op, ENTRY(op))
ROUNDING(floor, floor)
ROUNDING(ceil, ceil)
ROUNDING(trunc, trunc)
UNARY_FLOATS(frac, a - truncf(a), a - trunc(a))

/* round: half to even; with decimals != 0 (floating only), PyTorch's
 * nearbyint(a * 10^d) / 10^d, or nearbyint(a / 10^-d) * 10^-d for d < 0,
 * in the input's precision. */
IDENTITY_INT(round)
EM_UNARY_LOOP(round_F32, float, float, nearbyintf(a))
EM_UNARY_LOOP(round_F64, double, double, nearbyint(a))
static const em_loop_fn round_loops[EM_DTYPE_COUNT] = {ENTRY(round)};
#define ROUND_DECIMALS(DT, TA, RINT)                                                            \
    EM_UNARY_LOOP_P(round_decimals_##DT, TA, TA, const bool below = p[0] < 0;                  \
                    const TA scale = (TA)pow(10.0, fabs(p[0]));,                               \
                    below ? RINT(a / scale) * scale : RINT(a * scale) / scale)
ROUND_DECIMALS(F32, float, nearbyintf)
ROUND_DECIMALS(F64, double, nearbyint)
static const em_loop_fn round_decimals_loops[EM_DTYPE_COUNT] = {L(round_decimals, F32) L(round_decimals, F64)};
em_status cpu_round(const em_call *c) { return cpu_pointwise(c, c->f[0] == 0 ? round_loops : round_decimals_loops); }

/* ---- clamp and the ops built on it ----------------------------------- */
/* min(max(a, lo), hi) keeping NaN; a NAN bound means none (the op layer
 * rejected both missing). */
#define CLAMP(DT)                                                                                 \
    EM_UNARY_LOOP_P(clamp_##DT, CT(DT), CT(DT),                                                    \
                    const CT(DT) lo = isnan(p[0]) ? LOWEST_##DT : BOUND_##DT(p[0]);               \
                    const CT(DT) hi = isnan(p[1]) ? HIGHEST_##DT : BOUND_##DT(p[1]);,             \
                    (a < lo ? lo : a) > hi ? hi : (a < lo ? lo : a))
EM_FOR_NUMERIC(CLAMP)
CPU_POINTWISE(clamp, ENTRY(clamp))
em_status cpu_clip(const em_call *c) { return cpu_pointwise(c, clamp_loops); }
em_status cpu_hardtanh(const em_call *c) { return cpu_pointwise(c, clamp_loops); }
em_status cpu_relu6(const em_call *c) { return cpu_pointwise_params(c, clamp_loops, 0, 6, 0); }

/* relu keeps -0 and NaN, as PyTorch's clamp_min(0) */
#define RELU(DT) EM_UNARY_LOOP(relu_##DT, CT(DT), CT(DT), a < 0 ? 0 : a)
EM_FOR_NUMERIC(RELU)
CPU_POINTWISE(relu, ENTRY(relu))

/* ---- nan_to_num ------------------------------------------------------ */
/* An infinite posinf/neginf means the largest finite value of the dtype the
 * caller sees (c->dtype: float16 and bfloat16 run the float32 loop). */
static double largest_finite(em_dtype dt)
{
    switch (dt) {
    case EM_F16: return 65504.0;
    case EM_BF16: return 0x1.fep127;
    case EM_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}
#define NAN_TO_NUM(DT, TA)                                                                         \
    EM_UNARY_LOOP_P(nan_to_num_##DT, TA, TA, const double top = largest_finite(call->dtype);       \
                    const TA if_nan = (TA)p[0]; const TA if_pos = (TA)(isinf(p[1]) ? top : p[1]); \
                    const TA if_neg = (TA)(isinf(p[2]) ? -top : p[2]);,                           \
                    a != a ? if_nan : a == (TA)INFINITY ? if_pos : a == -(TA)INFINITY ? if_neg : a)
NAN_TO_NUM(F32, float)
NAN_TO_NUM(F64, double)
#define KEEP(DT) EM_UNARY_LOOP(nan_to_num_##DT, CT(DT), CT(DT), a)
EM_FOR_INTS(KEEP)
KEEP(BOOL)
CPU_POINTWISE(nan_to_num, ENTRY(nan_to_num) L(nan_to_num, BOOL))

/* ---- classification: bool results; integers are finite --------------- */
#define CLASSIFY(op, expr, int_value)                                                          \
    EM_UNARY_LOOP(op##_F32, bool, float, expr)                                                 \
    EM_UNARY_LOOP(op##_F64, bool, double, expr)                                                \
    EM_UNARY_LOOP(op##_U8, bool, uint8_t, ((void)a, int_value))                                \
    EM_UNARY_LOOP(op##_I8, bool, int8_t, ((void)a, int_value))                                 \
    EM_UNARY_LOOP(op##_I16, bool, int16_t, ((void)a, int_value))                               \
    EM_UNARY_LOOP(op##_I32, bool, int32_t, ((void)a, int_value))                               \
    EM_UNARY_LOOP(op##_I64, bool, int64_t, ((void)a, int_value))                               \
    EM_UNARY_LOOP(op##_BOOL, bool, bool, ((void)a, int_value))                                 \
    CPU_POINTWISE(op, ENTRY(op) L(op, BOOL))
CLASSIFY(isnan, a != a, false)
CLASSIFY(isinf, a == INFINITY || a == -INFINITY, false)
CLASSIFY(isfinite, a == a && a != INFINITY && a != -INFINITY, true)
CLASSIFY(isposinf, a == INFINITY, false)
CLASSIFY(isneginf, a == -INFINITY, false)

/* ---- logical and bitwise not ----------------------------------------- */
/* logical_not reads its input as bool (EM_RULE_LOGICAL: the runner converts) */
EM_UNARY_LOOP(logical_not_BOOL, bool, bool, !a)
CPU_POINTWISE(logical_not, L(logical_not, BOOL))

#define BITWISE_NOT(DT) EM_UNARY_LOOP(bitwise_not_##DT, CT(DT), CT(DT), (CT(DT))~a)
EM_FOR_INTS(BITWISE_NOT)
EM_UNARY_LOOP(bitwise_not_BOOL, bool, bool, !a)
CPU_POINTWISE(bitwise_not, INT_ENTRIES(bitwise_not) L(bitwise_not, BOOL))
