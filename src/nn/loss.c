/* The op layer of the pointwise losses: mse, l1, smooth_l1, huber and the
 * binary cross entropies. Operands are broadcast, converted to the compute
 * dtype and made contiguous (recorded ops), then one kernel computes and
 * reduces the losses (src/cpu/loss.c); formulas_loss.c differentiates. */
#include "../ops/autocast.h"
#include "loss_common.h"
#include <math.h>

em_status em_loss_check_reduction(em_reduction r, const char *op)
{
    if (r == EM_REDUCTION_NONE || r == EM_REDUCTION_MEAN || r == EM_REDUCTION_SUM) return EM_OK;
    return em_fail(EM_ERR_VALUE, "%s: %d is not a valid value for reduction", op, (int)r);
}

em_status em_loss_check_no_grad(const em_tensor *t, const char *op, const char *arg)
{
    if (t && em_grad_mode() && em_requires_grad(t))
        return em_fail(EM_ERR_RUNTIME, "The function '%s' is not differentiable with respect to argument '%s'. "
                       "This input cannot have requires_grad True.", op, arg);
    return EM_OK;
}

em_tensor *em_loss_operand(const em_tensor *t, em_dtype dt, int ndim, const int64_t *shape)
{
    em_tensor *c = em_to_dtype(t, dt);
    em_tensor *e = c ? em_expand(c, ndim, shape) : NULL;
    em_tensor *r = e ? em_contiguous(e) : NULL;
    em_release(c);
    em_release(e);
    return r;
}

/* One pointwise loss: `ins` are input, target, then the optional weights
 * (NULL when absent); `kernel` is PyTorch's kernel name for dtype errors;
 * `halves`: float16/bfloat16 inputs compute in float32 (else refused). */
typedef struct loss_spec {
    em_op op;
    const char *kernel;
    bool halves, same_dtype, same_shape;
} loss_spec;

static em_tensor *pointwise_loss(const loss_spec *s, const em_tensor *const *ins, int nin, em_reduction r,
                                 double param)
{
    const em_tensor *amp[EM_AUTOCAST_MAX] = {0};
    memcpy(amp, ins, (size_t)nin * sizeof *ins);
    EM_AUTOCAST(EM_AUTOCAST_FP32, pointwise_loss(s, amp, nin, r, param), &amp[0], &amp[1], &amp[2], &amp[3]);
    const char *name = em_ops[s->op].name;
    for (int k = 0; k < 2; k++)
        if (!ins[k]) return em_error(EM_ERR_VALUE, "%s: %s is NULL", name, k ? "target" : "input");
    if (em_loss_check_reduction(r, name)) return NULL;
    const em_tensor *x = ins[0], *y = ins[1];
    if (s->same_dtype && x->dtype != y->dtype)
        return em_error(EM_ERR_DTYPE, "Found dtype %s but expected %s", em_dtype_scalar_name((em_dtype)y->dtype),
                        em_dtype_scalar_name((em_dtype)x->dtype));
    em_dtype dt = em_promote_types((em_dtype)x->dtype, (em_dtype)y->dtype);
    bool half = dt == EM_F16 || dt == EM_BF16;
    if (!(dt == EM_F32 || dt == EM_F64 || (half && s->halves)))
        return em_error(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", s->kernel, em_dtype_scalar_name(dt));
    em_dtype compute = half ? EM_F32 : dt;
    int64_t shape[EM_MAX_DIMS];
    int nd;
    if (s->same_shape) {
        if (x->ndim != y->ndim || memcmp(x->sizes, y->sizes, x->ndim * sizeof *x->sizes))
            return em_error(EM_ERR_VALUE, "%s: Using a target size (%s) that is different to the input size (%s) "
                            "is deprecated. Please ensure they have the same size.", name,
                            em_shape_str(y->ndim, y->sizes), em_shape_str(x->ndim, x->sizes));
        nd = x->ndim;
        memcpy(shape, x->sizes, nd * sizeof *shape);
    } else if ((nd = em_broadcast_shapes(x->ndim, x->sizes, y->ndim, y->sizes, shape, name)) < 0) {
        return NULL;
    }
    for (int k = 2; k < nin; k++) { /* weights broadcast to the loss's shape */
        int64_t b[EM_MAX_DIMS];
        if (!ins[k]) continue;
        int bn = em_broadcast_shapes(nd, shape, ins[k]->ndim, ins[k]->sizes, b, name);
        if (bn < 0) return NULL;
        if (bn != nd || memcmp(b, shape, nd * sizeof *b))
            return em_error(EM_ERR_SHAPE, "%s: weight of shape %s does not broadcast to the input's %s", name,
                            em_shape_str(ins[k]->ndim, ins[k]->sizes), em_shape_str(nd, shape));
        if (em_loss_check_no_grad(ins[k], name, k == 2 ? "weight" : "pos_weight")) return NULL;
    }
    em_call c = {.op = s->op, .nout = 1, .dtype = compute};
    em_tensor *ops[EM_CALL_MAX_IN] = {0}, *out = NULL, *result = NULL;
    bool ok = true;
    for (int k = 0; k < nin; k++) {
        if (!ins[k]) continue;
        ok = ok && (ops[c.nin] = em_loss_operand(ins[k], compute, nd, shape));
        c.in[c.nin] = ops[c.nin];
        c.operand_dtypes[1 + c.nin++] = compute;
        if (k >= 2) c.i[1] |= 1 << (k - 2);
    }
    if (ok) out = r == EM_REDUCTION_NONE ? em_tensor_new(nd, shape, compute, x->storage->device)
                                         : em_tensor_new(0, NULL, compute, x->storage->device);
    if (out) {
        c.out[0] = out;
        c.operand_dtypes[0] = compute;
        c.i[0] = r;
        c.f[0] = param;
        if (em_dispatch(&c) == EM_OK) result = em_to_dtype(out, dt);
    }
    for (int k = 0; k < c.nin; k++) em_release(ops[k]);
    em_release(out);
    return result;
}

em_tensor *em_mse_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction)
{
    static const loss_spec s = {EM_OP_mse_loss, "mse_cpu", true, false, false};
    return pointwise_loss(&s, (const em_tensor *[]){input, target}, 2, reduction, 0);
}
em_tensor *em_l1_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction)
{
    static const loss_spec s = {EM_OP_l1_loss, "l1_cpu", true, false, false};
    return pointwise_loss(&s, (const em_tensor *[]){input, target}, 2, reduction, 0);
}
em_tensor *em_smooth_l1_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction, double beta)
{
    static const loss_spec s = {EM_OP_smooth_l1_loss, "smooth_l1_cpu", true, false, false};
    if (!(beta >= 0)) return em_error(EM_ERR_RUNTIME, "smooth_l1_loss does not support negative values for beta.");
    return pointwise_loss(&s, (const em_tensor *[]){input, target}, 2, reduction, beta);
}
em_tensor *em_huber_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction, double delta)
{
    static const loss_spec s = {EM_OP_huber_loss, "huber_cpu", true, false, false};
    if (!(delta > 0)) return em_error(EM_ERR_RUNTIME, "huber_loss does not support non-positive values for delta.");
    return pointwise_loss(&s, (const em_tensor *[]){input, target}, 2, reduction, delta);
}
em_tensor *em_binary_cross_entropy(const em_tensor *input, const em_tensor *target, const em_tensor *weight,
                                   em_reduction reduction)
{
    static const loss_spec s = {EM_OP_binary_cross_entropy, "binary_cross_entropy", false, true, true};
    return pointwise_loss(&s, (const em_tensor *[]){input, target, weight}, 3, reduction, 0);
}
em_tensor *em_binary_cross_entropy_with_logits(const em_tensor *input, const em_tensor *target,
                                               const em_tensor *weight, const em_tensor *pos_weight,
                                               em_reduction reduction)
{
    static const loss_spec s = {EM_OP_binary_cross_entropy_with_logits, "binary_cross_entropy_with_logits", true,
                                false, true};
    return pointwise_loss(&s, (const em_tensor *[]){input, target, weight, pos_weight}, 4, reduction, 0);
}
