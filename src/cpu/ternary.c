/* CPU kernels of the pointwise ternary ops (include/ember/ops/ternary.def). */
#include "cpu.h"


/* addcmul: a + value * b * c */
#define ADDCMUL(DT) EM_TERNARY_LOOP(addcmul_##DT, em_##DT##_t, em_##DT##_t, em_##DT##_t, em_##DT##_t, \
                                    (em_##DT##_t)(a + (em_##DT##_t)p[0] * b * c))
EM_FOR_NUMERIC(ADDCMUL)
#define ADDCMUL_L(DT) L(addcmul, DT)
CPU_POINTWISE(addcmul, EM_FOR_NUMERIC(ADDCMUL_L))
