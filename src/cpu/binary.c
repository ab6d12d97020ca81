/* CPU kernels of the pointwise binary ops (include/ember/ops/binary.def). */
#include "cpu.h"


/* add/sub with alpha (p[0]); integer alpha is exact for |alpha| < 2^53 */
#define ADD(DT) EM_BINARY_LOOP(add_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(a + (em_##DT##_t)p[0] * b))
#define SUB(DT) EM_BINARY_LOOP(sub_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(a - (em_##DT##_t)p[0] * b))
EM_FOR_NUMERIC(ADD)
EM_FOR_NUMERIC(SUB)
EM_BINARY_LOOP(add_BOOL, bool, bool, a || (p[0] != 0 && b))
#define ADD_L(DT) L(add, DT)
#define SUB_L(DT) L(sub, DT)
CPU_POINTWISE(add, EM_FOR_ALL(ADD_L))
CPU_POINTWISE(sub, EM_FOR_NUMERIC(SUB_L))

#define MUL(DT) EM_BINARY_LOOP(mul_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(a * b))
EM_FOR_NUMERIC(MUL)
EM_BINARY_LOOP(mul_BOOL, bool, bool, a && b)
#define MUL_L(DT) L(mul, DT)
CPU_POINTWISE(mul, EM_FOR_ALL(MUL_L))

EM_BINARY_LOOP(div_F32, float, float, a / b)
EM_BINARY_LOOP(div_F64, double, double, a / b)
CPU_POINTWISE(div, L(div, F32) L(div, F64))

#define EQ(DT) EM_BINARY_LOOP(eq_##DT, bool, em_##DT##_t, a == b)
#define LT(DT) EM_BINARY_LOOP(lt_##DT, bool, em_##DT##_t, a < b)
EM_FOR_ALL(EQ)
EM_FOR_ALL(LT)
#define EQ_L(DT) L(eq, DT)
#define LT_L(DT) L(lt, DT)
CPU_POINTWISE(eq, EM_FOR_ALL(EQ_L))
CPU_POINTWISE(lt, EM_FOR_ALL(LT_L))
