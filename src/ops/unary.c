/* Argument checks of the unary pointwise ops' params (the rest of their op
 * layer is the shared src/ops/pointwise.c): PyTorch's errors for bad
 * scalars, raised before anything is allocated or written. */
#include "dispatch.h"
#include <float.h>
#include <math.h>

/* Params PyTorch converts to the input's dtype (Scalar::to<scalar_t>), as a
 * bitmask of param indices: they must fit that dtype. */
static const uint8_t converted_params[EM_OP_COUNT] = {
    [EM_OP_clamp] = 3, [EM_OP_clip] = 3,       [EM_OP_hardtanh] = 3, [EM_OP_leaky_relu] = 1,
    [EM_OP_elu] = 1,   [EM_OP_celu] = 1,       [EM_OP_softplus] = 3,
};

/* PyTorch's c10::overflows: finite floats must be within the float dtype's
 * range; integral dtypes take in-range values (unsigned ones also negatives
 * down to -max, which wrap) and no NaN or infinity. */
static bool fits(double v, em_dtype dt)
{
    switch (dt) {
    case EM_F64: return true;
    case EM_F32: return isinf(v) || isnan(v) || fabs(v) <= FLT_MAX;
    case EM_F16: return isinf(v) || isnan(v) || fabs(v) <= 65504.0;
    case EM_BF16: return isinf(v) || isnan(v) || fabs(v) <= 0x1.fep127;
    case EM_BOOL: return true; /* no op with such params takes bool: its kernel says so */
    default: {
        double top = ldexp(1.0, 8 * (int)em_dtypes[dt].size - (em_dtype_is_signed(dt) ? 1 : 0));
        double bottom = em_dtype_is_signed(dt) ? -top : -(top - 1);
        return v < top && (v >= bottom || v > bottom - 1); /* NaN fails */
    }
    }
}

em_status em_unary_check_params(em_op op, em_dtype compute, const double *p)
{
    const char *name = em_ops[op].name;
    for (int k = 0; k < em_ops[op].nparams; k++) {
        bool clamp_none = (op == EM_OP_clamp || op == EM_OP_clip) && isnan(p[k]);
        if ((converted_params[op] >> k & 1) && !clamp_none && !fits(p[k], compute))
            return em_fail(EM_ERR_RUNTIME, "%s: value %g cannot be converted to type %s without overflow", name, p[k],
                           em_dtypes[compute].name);
    }
    switch (op) {
    case EM_OP_clamp:
    case EM_OP_clip:
        if (isnan(p[0]) && isnan(p[1]))
            return em_fail(EM_ERR_RUNTIME, "torch.%s: At least one of 'min' or 'max' must not be None", name);
        break;
    case EM_OP_hardtanh:
        if (compute == EM_U8 && (p[0] < 0 || p[1] < 0))
            return em_fail(EM_ERR_RUNTIME, "hardtanh: cannot do hardtanh on an unsigned type with negative limits");
        break;
    case EM_OP_celu:
        if (p[0] == 0) return em_fail(EM_ERR_RUNTIME, "celu: ZeroDivisionError: alpha cannot be 0 for CELU");
        break;
    case EM_OP_gelu:
        if (p[0] != 0 && p[0] != 1)
            return em_fail(EM_ERR_RUNTIME, "gelu: approximate argument must be either none (0) or tanh (1), got %g", p[0]);
        break;
    case EM_OP_round:
        if (!(p[0] == trunc(p[0]) && fabs(p[0]) < 0x1p63))
            return em_fail(EM_ERR_TYPE, "round: decimals must be an integer, got %g", p[0]);
        break;
    case EM_OP_polygamma:
        if (!(p[0] == trunc(p[0]) && fabs(p[0]) < 0x1p62))
            return em_fail(EM_ERR_TYPE, "polygamma: n must be an integer, got %g", p[0]);
        if (p[0] < 0) return em_fail(EM_ERR_RUNTIME, "polygamma(n, x) does not support negative n.");
        break;
    default: break;
    }
    return EM_OK;
}
