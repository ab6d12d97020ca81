/* The op layer of the class losses over indices: nll_loss, the fused
 * cross_entropy and their backward ops (kernels in src/cpu/loss_class.c).
 * Shapes as PyTorch's nll_loss_nd: input (C), (N, C) or (N, C, d1..dk),
 * target (), (N) or (N, d1..dk); the kernels see input [N][C][S] and
 * target [N][S] contiguous in the compute dtype. */
#include "../ops/autocast.h"
#include "loss_common.h"

typedef struct class_shape {
    int64_t N, C, S;
    em_dtype dt, compute; /* the input's dtype, and what the kernels compute in (bfloat16: float32) */
} class_shape;

static em_status check_class(const char *name, const char *kernel, const em_tensor *x, const em_tensor *t,
                             const em_tensor *w, em_reduction r, class_shape *cs)
{
    if (!x || !t) return em_fail(EM_ERR_VALUE, "%s: %s is NULL", name, x ? "target" : "input");
    if (em_loss_check_reduction(r, name)) return em_error_code();
    if (x->ndim < 1) /* PyTorch: a ValueError from nll_loss, a RuntimeError from cross_entropy */
        return em_fail(strcmp(name, "nll_loss") ? EM_ERR_RUNTIME : EM_ERR_VALUE, "Expected 1 or more dimensions (got %d)",
                       x->ndim);
    if (x->ndim >= 2 && t->ndim >= 1 && x->sizes[0] != t->sizes[0])
        return em_fail(EM_ERR_VALUE, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                       (long long)x->sizes[0], (long long)t->sizes[0]);
    if (t->dtype != EM_I64)
        return em_fail(EM_ERR_DTYPE, "expected scalar type Long but found %s", em_dtype_scalar_name((em_dtype)t->dtype));
    em_dtype dt = (em_dtype)x->dtype;
    if (dt != EM_F32 && dt != EM_F64 && dt != EM_BF16)
        return em_fail(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", kernel, em_dtype_scalar_name(dt));
    if (x->ndim == 1 && t->ndim != 0)
        return em_fail(EM_ERR_SHAPE, "size mismatch (got input: %s, target: %s)", em_shape_str(x->ndim, x->sizes),
                       em_shape_str(t->ndim, t->sizes));
    if (x->ndim == 2 && t->ndim != 1)
        return em_fail(EM_ERR_SHAPE, "0D or 1D target tensor expected, multi-target not supported");
    if (x->ndim > 2) {
        int64_t want[EM_MAX_DIMS];
        want[0] = x->sizes[0];
        memcpy(want + 1, x->sizes + 2, (x->ndim - 2) * sizeof *want);
        if (t->ndim != x->ndim - 1 || memcmp(want, t->sizes, t->ndim * sizeof *want))
            return em_fail(EM_ERR_SHAPE, "Expected target size %s, got %s", em_shape_str(x->ndim - 1, want),
                           em_shape_str(t->ndim, t->sizes));
    }
    cs->N = x->ndim == 1 ? 1 : x->sizes[0];
    cs->C = x->sizes[x->ndim == 1 ? 0 : 1];
    cs->S = 1;
    for (int d = 2; d < x->ndim; d++) cs->S *= x->sizes[d];
    cs->dt = dt;
    cs->compute = dt == EM_BF16 ? EM_F32 : dt;
    if (w) {
        if (w->ndim != 1 || w->sizes[0] != cs->C)
            return em_fail(EM_ERR_SHAPE, "weight tensor should be defined either for all %lld classes or no classes "
                           "but got weight tensor of shape: %s", (long long)cs->C, em_shape_str(w->ndim, w->sizes));
        if (w->dtype != x->dtype)
            return em_fail(EM_ERR_DTYPE, "expected scalar type %s but found %s", em_dtype_scalar_name(dt),
                           em_dtype_scalar_name((em_dtype)w->dtype));
    }
    return em_loss_check_no_grad(w, "nll_loss_forward", "weight");
}

/* The call's operands from k on: target, weight (when given), as the kernels read them. */
static int class_operands(em_call *c, int k, const class_shape *cs, const em_tensor *t, const em_tensor *w,
                          em_tensor **owned)
{
    c->in[k] = owned[k] = em_contiguous(t);
    if (!owned[k]) return -1;
    c->i[5] = w != NULL;
    if (!w) return k + 1;
    c->in[k + 1] = owned[k + 1] = em_loss_operand(w, cs->compute, 1, w->sizes);
    return owned[k + 1] ? k + 2 : -1;
}

static void class_params(em_call *c, const class_shape *cs, em_reduction r, int64_t ignore_index)
{
    c->dtype = cs->compute;
    c->i[0] = r;
    c->i[1] = ignore_index;
    c->i[2] = cs->N;
    c->i[3] = cs->C;
    c->i[4] = cs->S;
}

static em_tensor *class_forward(em_op op, const char *kernel, const em_tensor *x, const em_tensor *t,
                                const em_tensor *w, em_reduction r, int64_t ignore_index)
{
    EM_AUTOCAST(EM_AUTOCAST_FP32, class_forward(op, kernel, x, t, w, r, ignore_index), &x, &t, &w);
    class_shape cs;
    if (check_class(em_ops[op].name, kernel, x, t, w, r, &cs)) return NULL;
    bool fused = op == EM_OP_cross_entropy;
    em_call c = {.op = op, .nout = fused ? 3 : 2};
    class_params(&c, &cs, r, ignore_index);
    em_tensor *owned[EM_CALL_MAX_IN] = {0}, *outs[3] = {0}, *result = NULL;
    c.in[0] = owned[0] = em_loss_operand(x, cs.compute, x->ndim, x->sizes);
    c.nin = owned[0] ? class_operands(&c, 1, &cs, t, w, owned) : -1;
    em_device dev = x->storage->device;
    if (c.nin > 0) {
        outs[0] = r == EM_REDUCTION_NONE ? em_tensor_new(t->ndim, t->sizes, cs.compute, dev)
                                         : em_tensor_new(0, NULL, cs.compute, dev);
        if (fused) outs[1] = em_tensor_new(t->ndim, t->sizes, cs.compute, dev);
        outs[fused ? 2 : 1] = em_tensor_new(0, NULL, cs.compute, dev);
    }
    if (outs[0] && outs[1] && (!fused || outs[2])) {
        for (int k = 0; k < c.nout; k++) c.out[k] = outs[k];
        if (em_dispatch(&c) == EM_OK) result = em_to_dtype(outs[0], cs.dt);
    }
    for (int k = 0; k < EM_CALL_MAX_IN; k++) em_release(owned[k]);
    for (int k = 0; k < 3; k++) em_release(outs[k]);
    return result;
}

em_tensor *em_nll_loss(const em_tensor *input, const em_tensor *target, const em_tensor *weight,
                       em_reduction reduction, int64_t ignore_index)
{
    return class_forward(EM_OP_nll_loss, "nll_loss_out_frame", input, target, weight, reduction, ignore_index);
}
em_tensor *em_cross_entropy(const em_tensor *input, const em_tensor *target, const em_tensor *weight,
                            em_reduction reduction, int64_t ignore_index)
{
    return class_forward(EM_OP_cross_entropy, "log_softmax_lastdim_kernel_impl", input, target, weight, reduction,
                         ignore_index);
}

/* ---- backward ops ------------------------------------------------------------------ */
static em_tensor *class_backward(em_op op, const em_tensor *grad, const em_tensor *x, const em_tensor *t,
                                 const em_tensor *w, em_reduction r, int64_t ignore_index, const em_tensor *lse,
                                 const em_tensor *tw)
{
    const char *name = em_ops[op].name;
    class_shape cs;
    if (check_class(name, name, x, t, w, r, &cs)) return NULL;
    bool fused = op == EM_OP_cross_entropy_backward;
    if (!grad || !tw || (fused && !lse)) return em_error(EM_ERR_VALUE, "%s: a tensor argument is NULL", name);
    bool grad_fits = r == EM_REDUCTION_NONE ? grad->ndim == t->ndim && !memcmp(grad->sizes, t->sizes, t->ndim * 8)
                                            : em_numel(grad) == 1;
    if (!grad_fits || em_numel(tw) != 1 || (fused && (lse->ndim != t->ndim || memcmp(lse->sizes, t->sizes, t->ndim * 8))))
        return em_error(EM_ERR_SHAPE, "%s: grad %s, lse or total_weight do not fit target %s (reduction %d)", name,
                        em_shape_str(grad->ndim, grad->sizes), em_shape_str(t->ndim, t->sizes), (int)r);
    em_call c = {.op = op, .nout = 1};
    class_params(&c, &cs, r, ignore_index);
    em_tensor *owned[EM_CALL_MAX_IN] = {0}, *gx = NULL, *result = NULL;
    c.in[0] = owned[0] = em_loss_operand(grad, cs.compute, grad->ndim, grad->sizes);
    /* nll's gradient does not read the input's values: only its shape */
    c.in[1] = owned[1] = fused ? em_loss_operand(x, cs.compute, x->ndim, x->sizes) : em_retain((em_tensor *)x);
    int k = owned[0] && owned[1] ? class_operands(&c, 2, &cs, t, w, owned) : -1;
    if (k > 0 && fused) c.in[k] = owned[k] = em_loss_operand(lse, cs.compute, lse->ndim, lse->sizes), k = owned[k] ? k + 1 : -1;
    if (k > 0) c.in[k] = owned[k] = em_loss_operand(tw, cs.compute, 0, NULL), k = owned[k] ? k + 1 : -1;
    c.nin = k;
    if (k > 0) gx = em_tensor_new(x->ndim, x->sizes, cs.compute, x->storage->device);
    if (gx) {
        c.out[0] = gx;
        if (em_dispatch(&c) == EM_OK) result = em_to_dtype(gx, cs.dt);
    }
    for (int j = 0; j < EM_CALL_MAX_IN; j++) em_release(owned[j]);
    em_release(gx);
    return result;
}

em_tensor *em_nll_loss_backward(const em_tensor *grad, const em_tensor *input, const em_tensor *target,
                                const em_tensor *weight, em_reduction reduction, int64_t ignore_index,
                                const em_tensor *total_weight)
{
    return class_backward(EM_OP_nll_loss_backward, grad, input, target, weight, reduction, ignore_index, NULL,
                          total_weight);
}
em_tensor *em_cross_entropy_backward(const em_tensor *grad, const em_tensor *input, const em_tensor *target,
                                     const em_tensor *weight, em_reduction reduction, int64_t ignore_index,
                                     const em_tensor *lse, const em_tensor *total_weight)
{
    return class_backward(EM_OP_cross_entropy_backward, grad, input, target, weight, reduction, ignore_index, lse,
                          total_weight);
}
