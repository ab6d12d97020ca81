/* CPU kernels of the pointwise binary ops that compare or work on bits
 * (include/ember/ops/binary.def): maximum/minimum and fmax/fmin (and the
 * clamp_min/max_tensor forms), comparisons, logical, bitwise and shift ops. */
#include "cpu.h"

/* ---- min and max ----------------------------------------------------- */
/* maximum/minimum return a nan operand (a's first); otherwise PyTorch's
 * std::max(a, b) / std::min(a, b), so ties (-0.0, 0.0) give a. fmax/fmin
 * return the other operand where one is nan. Integers have no nan. */
#define IS_NAN(x) ((x) != (x))
#define MAX_OF(a, b) ((a) < (b) ? (b) : (a))
#define MIN_OF(a, b) ((b) < (a) ? (b) : (a))
#define MINMAX(DT)                                                                                       \
    EM_BINARY_LOOP(maximum_##DT, em_##DT##_t, em_##DT##_t, IS_NAN(a) ? a : IS_NAN(b) ? b : MAX_OF(a, b)) \
    EM_BINARY_LOOP(minimum_##DT, em_##DT##_t, em_##DT##_t, IS_NAN(a) ? a : IS_NAN(b) ? b : MIN_OF(a, b)) \
    EM_BINARY_LOOP(fmax_##DT, em_##DT##_t, em_##DT##_t, IS_NAN(b) ? a : IS_NAN(a) ? b : MAX_OF(a, b))    \
    EM_BINARY_LOOP(fmin_##DT, em_##DT##_t, em_##DT##_t, IS_NAN(b) ? a : IS_NAN(a) ? b : MIN_OF(a, b))
EM_FOR_ALL(MINMAX)
CPU_POINTWISE(maximum, EM_LOOPS_ALL(maximum))
CPU_POINTWISE(minimum, EM_LOOPS_ALL(minimum))
CPU_POINTWISE(fmax, EM_LOOPS_ALL(fmax))
CPU_POINTWISE(fmin, EM_LOOPS_ALL(fmin))
/* clamp with one tensor bound computes maximum/minimum (as PyTorch does) */
CPU_POINTWISE(clamp_min_tensor, EM_LOOPS_ALL(maximum))
CPU_POINTWISE(clamp_max_tensor, EM_LOOPS_ALL(minimum))

/* ---- comparisons: bool out, operands in the promoted dtype ----------- */
#define COMPARE(DT)                                    \
    EM_BINARY_LOOP(eq_##DT, bool, em_##DT##_t, a == b) \
    EM_BINARY_LOOP(ne_##DT, bool, em_##DT##_t, a != b) \
    EM_BINARY_LOOP(lt_##DT, bool, em_##DT##_t, a < b)  \
    EM_BINARY_LOOP(le_##DT, bool, em_##DT##_t, a <= b) \
    EM_BINARY_LOOP(gt_##DT, bool, em_##DT##_t, a > b)  \
    EM_BINARY_LOOP(ge_##DT, bool, em_##DT##_t, a >= b)
EM_FOR_ALL(COMPARE)
#define EQUALITY(DT)                                   \
    EM_BINARY_LOOP(eq_##DT, bool, em_##DT##_t, a == b) \
    EM_BINARY_LOOP(ne_##DT, bool, em_##DT##_t, a != b)
EM_FOR_COMPLEX(EQUALITY)
CPU_POINTWISE(eq, EM_LOOPS_ALL(eq) EM_LOOPS_COMPLEX(eq))
CPU_POINTWISE(ne, EM_LOOPS_ALL(ne) EM_LOOPS_COMPLEX(ne))
CPU_POINTWISE(lt, EM_LOOPS_ALL(lt))
CPU_POINTWISE(le, EM_LOOPS_ALL(le))
CPU_POINTWISE(gt, EM_LOOPS_ALL(gt))
CPU_POINTWISE(ge, EM_LOOPS_ALL(ge))

/* ---- logical: operands arrive as bool (EM_RULE_LOGICAL) -------------- */
EM_BINARY_LOOP(logical_and_BOOL, bool, bool, a && b)
EM_BINARY_LOOP(logical_or_BOOL, bool, bool, a || b)
EM_BINARY_LOOP(logical_xor_BOOL, bool, bool, a != b)
CPU_POINTWISE(logical_and, L(logical_and, BOOL))
CPU_POINTWISE(logical_or, L(logical_or, BOOL))
CPU_POINTWISE(logical_xor, L(logical_xor, BOOL))

/* ---- bitwise: integer and bool dtypes -------------------------------- */
#define BITWISE(DT)                                                                  \
    EM_BINARY_LOOP(bitwise_and_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(a & b)) \
    EM_BINARY_LOOP(bitwise_or_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(a | b))  \
    EM_BINARY_LOOP(bitwise_xor_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(a ^ b))
EM_FOR_INTS(BITWISE)
BITWISE(BOOL)
CPU_POINTWISE(bitwise_and, EM_LOOPS_INTS(bitwise_and) L(bitwise_and, BOOL))
CPU_POINTWISE(bitwise_or, EM_LOOPS_INTS(bitwise_or) L(bitwise_or, BOOL))
CPU_POINTWISE(bitwise_xor, EM_LOOPS_INTS(bitwise_xor) L(bitwise_xor, BOOL))

/* Shifts as PyTorch 1.13 computes them on x86 (C's `a << b` on the promoted
 * operand, where the hardware takes the count modulo the operand's width):
 * in 32 bits (64 for int64), count modulo 32 (64), result cut to the dtype.
 * The mask makes the C well defined; left shifts go through the unsigned
 * type, right shifts through the signed one (arithmetic for negatives). */
#define SHIFT_MASK(DT) (sizeof(em_##DT##_w) * 8 - 1)
#define SHIFT(DT)                                                                \
    EM_BINARY_LOOP(bitwise_left_shift_##DT, em_##DT##_t, em_##DT##_t,            \
                   (em_##DT##_t)(EM_W(DT, a) << (EM_W(DT, b) & SHIFT_MASK(DT)))) \
    EM_BINARY_LOOP(bitwise_right_shift_##DT, em_##DT##_t, em_##DT##_t,           \
                   (em_##DT##_t)((em_##DT##_s)a >> (EM_W(DT, b) & SHIFT_MASK(DT))))
EM_FOR_INTS(SHIFT)
CPU_POINTWISE(bitwise_left_shift, EM_LOOPS_INTS(bitwise_left_shift))
CPU_POINTWISE(bitwise_right_shift, EM_LOOPS_INTS(bitwise_right_shift))
