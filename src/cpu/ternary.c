/* CPU kernels of the pointwise ternary ops (include/ember/ops/ternary.def),
 * with the argument checks only a kernel sees (Note [Kernel checks] in
 * binary.c): where, lerp, addcmul, addcdiv, clamp_tensor. */
#include "cpu.h"

#define T(DT) em_##DT##_t

/* ---- where(condition, a, b): the condition arrives as bool ----------- */
static em_status check_where(const em_call *c)
{
    em_dtype cond = (em_dtype)c->in[0]->dtype;
    if (cond != EM_BOOL && cond != EM_U8)
        return em_fail(EM_ERR_RUNTIME,
                       "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                       em_dtypes[cond].name);
    return EM_OK;
}
#define WHERE(DT) EM_TERNARY_LOOP(where_##DT, T(DT), bool, T(DT), T(DT), a ? b : c)
EM_FOR_ALL(WHERE)
EM_FOR_COMPLEX(WHERE)
CPU_POINTWISE_CHECKED(where, check_where, EM_LOOPS_ALL(where) EM_LOOPS_COMPLEX(where))

/* ---- lerp(input, end, weight) ---------------------------------------- */
/* lerp does not promote: end, and weight unless it is a Python scalar, must
 * have input's dtype, a floating one (so it is also the compute dtype) */
static em_status check_lerp(const em_call *c)
{
    const em_tensor *input = c->in[0], *end = c->in[1], *weight = c->in[2];
    if (!em_dtype_is_float((em_dtype)input->dtype))
        return em_fail(EM_ERR_DTYPE, "\"lerp_kernel\" not implemented for '%s'", em_dtypes[input->dtype].name);
    if (end->dtype != input->dtype)
        return em_fail(EM_ERR_RUNTIME, "expected dtype %s for `end` but got dtype %s", em_dtypes[input->dtype].name,
                       em_dtypes[end->dtype].name);
    if (!em_is_wrapped_number(weight) && weight->dtype != input->dtype)
        return em_fail(EM_ERR_RUNTIME, "expected dtype %s for `weight` but got dtype %s", em_dtypes[input->dtype].name,
                       em_dtypes[weight->dtype].name);
    return EM_OK;
}
/* PyTorch's form: from the nearer end, exact at weight 0 and 1 */
#define LERP(DT) EM_TERNARY_LOOP(lerp_##DT, T(DT), T(DT), T(DT), T(DT), \
                                 c < (T(DT))0.5 ? a + c * (b - a) : b - (b - a) * (1 - c))
EM_FOR_FLOATS(LERP)
CPU_POINTWISE_CHECKED(lerp, check_lerp, EM_LOOPS_FLOATS(lerp))

/* ---- addcmul, addcdiv: input + value * tensor1 (* or /) tensor2 ------ */
static em_status check_value(const em_call *c) { return cpu_check_param(c->f[0], c->dtype); }

static em_status check_addcdiv(const em_call *c)
{
    if (!em_dtype_is_float((em_dtype)c->in[1]->dtype) && !em_dtype_is_float((em_dtype)c->in[2]->dtype))
        return em_fail(EM_ERR_RUNTIME,
                       "Integer division with addcdiv is no longer supported, and in a future release addcdiv will "
                       "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                       "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                       "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                       "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
                       "dtypes.");
    return check_value(c);
}

/* integers wrap (Note [Integer wrap]) */
#define ADDCMUL(DT) EM_TERNARY_LOOP(addcmul_##DT, T(DT), T(DT), T(DT), T(DT), \
                                    (T(DT))(EM_W(DT, a) + EM_W(DT, EM_PARAM(DT, p[0])) * EM_W(DT, b) * EM_W(DT, c)))
#define ADDCDIV(DT) EM_TERNARY_LOOP(addcdiv_##DT, T(DT), T(DT), T(DT), T(DT), a + (T(DT))p[0] * b / c)
EM_FOR_NUMERIC(ADDCMUL)
EM_FOR_FLOATS(ADDCDIV)
CPU_POINTWISE_CHECKED(addcmul, check_value, EM_LOOPS_NUMERIC(addcmul))
CPU_POINTWISE_CHECKED(addcdiv, check_addcdiv, EM_LOOPS_FLOATS(addcdiv))

/* ---- clamp_tensor(input, min, max): nan if a bound is nan; max wins over min */
#define MAX_OF(a, b) ((a) < (b) ? (b) : (a))
#define MIN_OF(a, b) ((b) < (a) ? (b) : (a))
#define CLAMP_OF(a, lo, hi) ((lo) != (lo) ? (lo) : (hi) != (hi) ? (hi) : MIN_OF(MAX_OF(a, lo), hi))
#define CLAMP(DT) EM_TERNARY_LOOP(clamp_tensor_##DT, T(DT), T(DT), T(DT), T(DT), CLAMP_OF(a, b, c))
EM_FOR_NUMERIC(CLAMP)
CPU_POINTWISE(clamp_tensor, EM_LOOPS_NUMERIC(clamp_tensor))
