/* CPU kernels of the activation functions (include/ember/ops/unary.def),
 * floating inputs only except sigmoid (EM_RULE_FLOAT). Their float32 loops
 * use the vectorizable vmath.h; float64 uses libm and libmvec (exp too, in
 * this file: sigmoid and tanh in float64 are an LSTM's hot path), with the
 * same formulas where they avoid overflow or cancellation. (relu, relu6 and
 * hardtanh are clamps: unary.c.) */
#include "unary_ops.h"
#include "vmath.h"

#ifdef EM_LIBMVEC
EM_LIBMVEC(double, exp)
#endif

/* y * sigmoid(z) in double, from e = exp(-|z|) (no overflow, no cancellation). */
static inline double mul_sigmoid(double y, double z)
{
    double e = exp(-fabs(z));
    return y * (z >= 0 ? 1.0 : e) / (1.0 + e);
}

UNARY_FLOATS_COMPLEX(sigmoid, em_vsigmoidf(a), mul_sigmoid(1.0, a), 1.0f / (1.0f + cexpf(-a)), 1.0 / (1.0 + cexp(-a)))
UNARY_FLOATS(silu, em_vsiluf(a), mul_sigmoid(a, a))
UNARY_FLOATS(mish, em_vmishf(a), a * tanh(log1p(exp(a))))
/* log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)) */
UNARY_FLOATS(logsigmoid, (a < 0 ? a : 0.0f) - em_vlog1pf(em_vexpf(-fabsf(a))), (a < 0 ? a : 0.0) - log1p(exp(-fabs(a))))

/* gelu: approximate 0 is x * Phi(x) (erf), 1 the tanh form (the op layer
 * rejects other values). */
UNARY_FLOAT_LOOPS(gelu_erf, em_vgeluf(a), 0.5 * a * erfc(a * -M_SQRT1_2))
UNARY_FLOAT_LOOPS(gelu_tanh, em_vgelu_tanhf(a), mul_sigmoid(a, 2.0 * M_2_SQRTPI * M_SQRT1_2 * (a + 0.044715 * a * a * a)))
em_status cpu_gelu(const em_call *c) { return cpu_pointwise(c, c->f[0] == 0 ? gelu_erf_loops : gelu_tanh_loops); }

/* softplus(x; beta, threshold) = log1p(exp(beta x)) / beta, or x where
 * beta x > threshold */
#define SOFTPLUS(DT, TA, EXP, LOG1P)                                                       \
    EM_UNARY_LOOP_P(softplus_##DT, TA, TA, const TA beta = (TA)p[0];                      \
                    const TA threshold = (TA)p[1];,                                       \
                    a * beta > threshold ? a : LOG1P(EXP(a * beta)) / beta)
SOFTPLUS(F32, float, em_vexpf, em_vlog1pf)
SOFTPLUS(F64, double, exp, log1p)
CPU_POINTWISE(softplus, L(softplus, F32) L(softplus, F64))

/* elu(x; alpha, scale, input_scale) = scale * (x > 0 ? x : alpha *
 * expm1(x * input_scale)), PyTorch's one kernel behind elu, celu and selu. */
#define ELU(DT, TA, EXPM1)                                                                      \
    EM_UNARY_LOOP_P(elu_##DT, TA, TA, const TA neg_scale = (TA)p[0] * (TA)p[1];                \
                    const TA pos_scale = (TA)p[1]; const TA input_scale = (TA)p[2];,           \
                    a <= 0 ? EXPM1(a * input_scale) * neg_scale : a * pos_scale)
ELU(F32, float, em_vexpm1f)
ELU(F64, double, expm1)
static const em_loop_fn elu_loops[EM_DTYPE_COUNT] = {L(elu, F32) L(elu, F64)};
em_status cpu_elu(const em_call *c) { return cpu_pointwise_params(c, elu_loops, c->f[0], 1.0, 1.0); }
em_status cpu_celu(const em_call *c) { return cpu_pointwise_params(c, elu_loops, c->f[0], 1.0, 1.0 / c->f[0]); }
em_status cpu_selu(const em_call *c)
{
    return cpu_pointwise_params(c, elu_loops, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1.0);
}

/* (params are read before the loop: a load of p inside the conditional
 * would keep it from vectorizing) */
#define LEAKY_RELU(DT, TA) EM_UNARY_LOOP_P(leaky_relu_##DT, TA, TA, const TA slope = (TA)p[0];, a > 0 ? a : a * slope)
LEAKY_RELU(F32, float)
LEAKY_RELU(F64, double)
CPU_POINTWISE(leaky_relu, L(leaky_relu, F32) L(leaky_relu, F64))

/* hardsigmoid = clamp(x + 3, 0, 6) / 6 and hardswish = x * that, keeping
 * NaN as PyTorch's std::min/std::max order does */
#define RELU6_OF(v) ((v) < 0 ? 0 : (v) > 6 ? 6 : (v))
UNARY_FLOATS(hardsigmoid, RELU6_OF(a + 3.0f) / 6.0f, RELU6_OF(a + 3.0) / 6.0)
UNARY_FLOATS(hardswish, a * RELU6_OF(a + 3.0f) / 6.0f, a * RELU6_OF(a + 3.0) / 6.0)
