/* CPU kernels of the pointwise arithmetic ops (include/ember/ops/binary.def):
 * add, sub, mul, the divisions, pow and float_power, with the checks only a
 * kernel can make (Note [Kernel checks]). Other binary ops: binary_*.c. */
#include "cpu.h"
#include <tgmath.h> /* trunc, floor, fmod, pow follow the loop's float type */

/* Note [Kernel checks]
 * Errors that depend on tensor values (an integer divisor of zero) or on a
 * param converted to the compute dtype (alpha) are raised by cpu_<op> before
 * its loops write anything (CPU_POINTWISE_CHECKED); the op layer then undoes
 * an out= resize, so a failed call leaves every tensor as it was. */

/* ---- add, sub, mul --------------------------------------------------- */
static em_status check_alpha(const em_call *c)
{
    double alpha = c->f[0];
    if ((em_dtype_is_int(c->dtype) || c->dtype == EM_BOOL) && alpha != trunc(alpha))
        return em_fail(EM_ERR_RUNTIME,
                       "For integral input tensors, argument alpha must not be a floating point number.");
    return cpu_check_param(alpha, c->dtype);
}

static em_status check_sub(const em_call *c)
{
    bool a = c->in[0]->dtype == EM_BOOL, b = c->in[1]->dtype == EM_BOOL;
    if (a && b)
        return em_fail(EM_ERR_RUNTIME, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                       "Use the `^` or `logical_xor()` operator instead.");
    if (a || b)
        return em_fail(EM_ERR_RUNTIME, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                       "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    return check_alpha(c);
}

/* integers wrap (Note [Integer wrap]); bool add is "or", alpha != 0 keeping b */
#define ADD(DT) EM_BINARY_LOOP(add_##DT, em_##DT##_t, em_##DT##_t, \
                               (em_##DT##_t)(EM_W(DT, a) + EM_W(DT, EM_PARAM(DT, p[0])) * EM_W(DT, b)))
#define SUB(DT) EM_BINARY_LOOP(sub_##DT, em_##DT##_t, em_##DT##_t, \
                               (em_##DT##_t)(EM_W(DT, a) - EM_W(DT, EM_PARAM(DT, p[0])) * EM_W(DT, b)))
#define MUL(DT) EM_BINARY_LOOP(mul_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(EM_W(DT, a) * EM_W(DT, b)))
EM_FOR_NUMERIC(ADD)
EM_FOR_NUMERIC(SUB)
EM_FOR_NUMERIC(MUL)
EM_FOR_COMPLEX(ADD)
EM_FOR_COMPLEX(SUB)
EM_FOR_COMPLEX(MUL)
EM_BINARY_LOOP(add_BOOL, bool, bool, a || (p[0] != 0 && b))
EM_BINARY_LOOP(mul_BOOL, bool, bool, a && b)
CPU_POINTWISE_CHECKED(add, check_alpha, EM_LOOPS_ALL(add) EM_LOOPS_COMPLEX(add))
CPU_POINTWISE_CHECKED(sub, check_sub, EM_LOOPS_NUMERIC(sub) EM_LOOPS_COMPLEX(sub))
CPU_POINTWISE(mul, EM_LOOPS_ALL(mul) EM_LOOPS_COMPLEX(mul))

/* ---- divisions ------------------------------------------------------- */
/* Integer division by zero: PyTorch's RuntimeError "ZeroDivisionError",
 * found by scanning the divisor (in the compute dtype) before dividing. */
#define ZERO_SCAN(DT)                                                                                \
    static void zero_scan_##DT(char **data, const int64_t *s, int64_t n, const em_call *call)        \
    {                                                                                                \
        bool zero = false;                                                                           \
        if (s[0] == sizeof(em_##DT##_t))                                                             \
            for (int64_t i = 0; i < n; i++) zero |= ((const em_##DT##_t *)data[0])[i] == 0;          \
        else                                                                                         \
            for (int64_t i = 0; i < n; i++) zero |= *(const em_##DT##_t *)(data[0] + i * s[0]) == 0; \
        if (zero) __atomic_store_n((int *)call->arg, 1, __ATOMIC_RELAXED);                           \
    }
EM_FOR_INTS(ZERO_SCAN)
static const em_loop_fn zero_scan_loops[EM_DTYPE_COUNT] = {EM_LOOPS_INTS(zero_scan)};

static em_status check_divisor(const em_call *c)
{
    if (!em_dtype_is_int(c->dtype)) return EM_OK;
    int found = 0;
    const em_tensor *b = c->in[1];
    em_call scan = {.op = c->op, .nin = 1, .dtype = c->dtype, .arg = &found};
    scan.in[0] = b;
    scan.operand_dtypes[0] = (int8_t)c->dtype;
    em_status st = cpu_pointwise_run(&scan, zero_scan_loops, 1, &b, b->ndim, b->sizes);
    if (st) return st;
    return found ? em_fail(EM_ERR_RUNTIME, "ZeroDivisionError") : EM_OK;
}

/* Integer quotients and remainders, b != 0. b == -1 is apart: INT_MIN / -1
 * traps on x86; PyTorch's result wraps to INT_MIN (remainder 0). */
#define INT_DIVISION(DT)                                                                   \
    static inline em_##DT##_t div_trunc_##DT##_of(em_##DT##_t a, em_##DT##_t b)            \
    {                                                                                      \
        return b == -1 ? (em_##DT##_t)(0 - EM_W(DT, a)) : (em_##DT##_t)(a / b);            \
    }                                                                                      \
    static inline em_##DT##_t fmod_##DT##_of(em_##DT##_t a, em_##DT##_t b)                 \
    {                                                                                      \
        return b == -1 ? 0 : (em_##DT##_t)(a % b);                                         \
    }                                                                                      \
    static inline em_##DT##_t div_floor_##DT##_of(em_##DT##_t a, em_##DT##_t b)            \
    {                                                                                      \
        em_##DT##_t q = div_trunc_##DT##_of(a, b);                                         \
        return (a < 0) != (b < 0) && fmod_##DT##_of(a, b) != 0 ? (em_##DT##_t)(q - 1) : q; \
    }                                                                                      \
    static inline em_##DT##_t remainder_##DT##_of(em_##DT##_t a, em_##DT##_t b)            \
    {                                                                                      \
        em_##DT##_t r = fmod_##DT##_of(a, b);                                              \
        return r != 0 && (r < 0) != (b < 0) ? (em_##DT##_t)(r + b) : r;                    \
    }
EM_FOR_INTS(INT_DIVISION)

/* Float floor division and remainder: Python's (and PyTorch's) algorithm,
 * exact where floor(a / b) would round across an integer. */
#define FLOAT_DIVISION(DT)                                                                               \
    static inline em_##DT##_t div_floor_##DT##_of(em_##DT##_t a, em_##DT##_t b)                          \
    {                                                                                                    \
        if (b == 0) return a / b;                                                                        \
        em_##DT##_t mod = fmod(a, b), div = (a - mod) / b;                                               \
        if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;                                                  \
        if (div == 0) return copysign((em_##DT##_t)0, a / b);                                            \
        em_##DT##_t fl = floor(div);                                                                     \
        return div - fl > (em_##DT##_t)0.5 ? fl + 1 : fl;                                                \
    }                                                                                                    \
    static inline em_##DT##_t remainder_##DT##_of(em_##DT##_t a, em_##DT##_t b)                          \
    {                                                                                                    \
        em_##DT##_t mod = fmod(a, b);                                                                    \
        return mod != 0 && (b < 0) != (mod < 0) ? mod + b : mod;                                         \
    }                                                                                                    \
    static inline em_##DT##_t div_trunc_##DT##_of(em_##DT##_t a, em_##DT##_t b) { return trunc(a / b); } \
    static inline em_##DT##_t fmod_##DT##_of(em_##DT##_t a, em_##DT##_t b) { return fmod(a, b); }
EM_FOR_FLOATS(FLOAT_DIVISION)

/* the loops of op: out = op_<DT>_of(a, b) */
#define OF_LOOP(op, DT) EM_BINARY_LOOP(op##_##DT, em_##DT##_t, em_##DT##_t, op##_##DT##_of(a, b))
#define DIVISION_LOOPS(DT) OF_LOOP(div_trunc, DT) OF_LOOP(div_floor, DT) OF_LOOP(remainder, DT) OF_LOOP(fmod, DT)
EM_FOR_NUMERIC(DIVISION_LOOPS)
CPU_POINTWISE_CHECKED(div_trunc, check_divisor, EM_LOOPS_NUMERIC(div_trunc))
CPU_POINTWISE_CHECKED(div_floor, check_divisor, EM_LOOPS_NUMERIC(div_floor))
CPU_POINTWISE_CHECKED(remainder, check_divisor, EM_LOOPS_NUMERIC(remainder))
CPU_POINTWISE_CHECKED(fmod, check_divisor, EM_LOOPS_NUMERIC(fmod))

EM_BINARY_LOOP(div_F32, float, float, a / b)
EM_BINARY_LOOP(div_F64, double, double, a / b)
EM_BINARY_LOOP(div_C64, em_C64_t, em_C64_t, a / b)
EM_BINARY_LOOP(div_C128, em_C128_t, em_C128_t, a / b)
CPU_POINTWISE(div, EM_LOOPS_FLOATS(div) EM_LOOPS_COMPLEX(div))

/* ---- pow, float_power ------------------------------------------------ */
/* PyTorch rejects a negative Python-scalar exponent of an integer base; a
 * negative exponent tensor gives 1 for base 1, +-1 for base -1, else 0. */
static em_status check_pow(const em_call *c)
{
    const em_tensor *e = c->in[1];
    if (em_dtype_is_int(c->dtype) && em_is_wrapped_number(e) && em_load_f64(em_tensor_data(e), (em_dtype)e->dtype) < 0)
        return em_fail(EM_ERR_RUNTIME, "Integers to negative integer powers are not allowed.");
    return EM_OK;
}

/* integer power by squaring, wrapping like PyTorch */
#define INT_POW(DT)                                                       \
    static inline em_##DT##_t pow_##DT##_of(em_##DT##_t a, em_##DT##_t b) \
    {                                                                     \
        if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? a : 1) : 0;   \
        em_##DT##_w r = 1, x = EM_W(DT, a);                               \
        for (; b; b /= 2, x *= x)                                         \
            if (b & 1) r *= x;                                            \
        return (em_##DT##_t)r;                                            \
    }
EM_FOR_INTS(INT_POW)
#define FLOAT_POW(DT) static inline em_##DT##_t pow_##DT##_of(em_##DT##_t a, em_##DT##_t b) { return pow(a, b); }
EM_FOR_FLOATS(FLOAT_POW)
EM_FOR_COMPLEX(FLOAT_POW)
#define POW_LOOP(DT) OF_LOOP(pow, DT)
EM_FOR_NUMERIC(POW_LOOP)
EM_FOR_COMPLEX(POW_LOOP)
CPU_POINTWISE_CHECKED(pow, check_pow, EM_LOOPS_NUMERIC(pow) EM_LOOPS_COMPLEX(pow))

/* float_power computes in float64, so an in-place or out= tensor must be float64 */
static em_status check_float_power(const em_call *c)
{
    const em_tensor *out = c->out[0];
    if (out->dtype == EM_F64) return EM_OK;
    return em_fail(EM_ERR_RUNTIME, "the %s given to float_power%s has dtype %s but the operation's result requires "
                   "dtype float64", out == c->in[0] ? "base" : "output", out == c->in[0] ? "_" : "",
                   em_dtypes[out->dtype].name);
}
EM_BINARY_LOOP(float_power_F64, double, double, pow(a, b))
CPU_POINTWISE_CHECKED(float_power, check_float_power, L(float_power, F64))
