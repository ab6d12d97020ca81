/* CPU kernels of the pointwise unary ops (include/ember/ops/unary.def).
 * Each op: its loops per dtype, and cpu_<op> running them. */
#include "cpu.h"


/* neg: numeric types (PyTorch rejects bool) */
#define NEG(DT) EM_UNARY_LOOP(neg_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)-a)
EM_FOR_NUMERIC(NEG)
#define NEG_L(DT) L(neg, DT)
CPU_POINTWISE(neg, EM_FOR_NUMERIC(NEG_L))

/* abs */
#define ABS(DT) EM_UNARY_LOOP(abs_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)(a < 0 ? -a : a))
EM_FOR_NUMERIC(ABS)
EM_UNARY_LOOP(abs_BOOL, bool, bool, a)
#define ABS_L(DT) L(abs, DT)
CPU_POINTWISE(abs, EM_FOR_ALL(ABS_L))

EM_UNARY_LOOP(exp_F32, float, float, expf(a))
EM_UNARY_LOOP(exp_F64, double, double, exp(a))
CPU_POINTWISE(exp, L(exp, F32) L(exp, F64))

EM_UNARY_LOOP(leaky_relu_F32, float, float, a > 0 ? a : a * (float)p[0])
EM_UNARY_LOOP(leaky_relu_F64, double, double, a > 0 ? a : a * p[0])
CPU_POINTWISE(leaky_relu, L(leaky_relu, F32) L(leaky_relu, F64))

/* isnan: bool out; integers are never nan */
EM_UNARY_LOOP(isnan_F32, bool, float, a != a)
EM_UNARY_LOOP(isnan_F64, bool, double, a != a)
#define ISNAN_INT(DT) EM_UNARY_LOOP(isnan_##DT, bool, em_##DT##_t, ((void)a, false))
EM_FOR_INTS(ISNAN_INT)
ISNAN_INT(BOOL)
#define ISNAN_L(DT) L(isnan, DT)
CPU_POINTWISE(isnan, EM_FOR_ALL(ISNAN_L))
