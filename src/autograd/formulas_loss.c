/* Backward formulas of the loss family, after PyTorch 1.13's derivatives.yaml.
 *
 * Pointwise losses: the node's inputs are the operands as the kernel saw
 * them (broadcast, contiguous, in the compute dtype: src/nn/loss.c); c->i[0]
 * is the reduction, c->f[0] beta/delta, c->i[1] which weights are present.
 * G is 0-d for mean/sum (then divided by the element count for mean) and
 * of the loss's shape for none. Written with pointwise ops, so these are
 * differentiable again.
 *
 * Class losses: the backward ops of src/nn/loss_class.c, reading the saved
 * total weight (and the rows' log-sum-exp for cross_entropy). Under
 * create_graph, cross_entropy's gradient is recomputed as log_softmax's
 * backward of nll_loss's (both differentiable); nll_loss_backward is linear
 * in its gradient, so its own gradient is nll_loss again. */
#include "autograd.h"
#include "ember/ember.h"
#include <math.h>

#define S(v) X(em_scalar_float(v))
#define INPUT(v, i)                                    \
    const em_tensor *v = em_node_input(n, i);          \
    if (!v) return em_error_code()

static em_reduction reduction_of(const em_node *n) { return (em_reduction)n->call.i[0]; }

/* G, divided by the number of elements for a mean (a new reference) */
static em_tensor *scaled_grad(const em_node *n, const em_tensor *g)
{
    if (reduction_of(n) != EM_REDUCTION_MEAN) return em_retain((em_tensor *)g);
    em_tensor *k = em_scalar_float((double)em_shape_numel(n->in_geom[0].ndim, n->in_geom[0].sizes));
    em_tensor *r = k ? em_div(g, k) : NULL;
    em_release(k);
    return r;
}

/* the gradient w.r.t. x from dl/dx = dx (shaped like x); y gets -dx */
#define GRAD_XY(dx)                                 \
    do {                                            \
        em_tensor *gx_ = X(em_mul(g, (dx)));        \
        GRAD(0, gx_);                               \
        GRAD(1, X(em_neg(gx_)));                    \
    } while (0)

EM_BACKWARD(mse_loss, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    INPUT(x, 0);
    INPUT(y, 1);
    em_arena a = {0};
    em_tensor *g = X(em_mul(X(scaled_grad(n, G)), S(2))); /* 0-d for mean/sum: one pass less */
    GRAD_XY(X(em_sub(x, y, 1)));
    DONE();
}

EM_BACKWARD(l1_loss, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    INPUT(x, 0);
    INPUT(y, 1);
    em_arena a = {0};
    em_tensor *g = X(scaled_grad(n, G));
    GRAD_XY(X(em_sign(X(em_sub(x, y, 1)))));
    DONE();
}

/* d/beta clamped to [-1, 1] (sign(d) for beta 0: l1) */
EM_BACKWARD(smooth_l1_loss, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    INPUT(x, 0);
    INPUT(y, 1);
    em_arena a = {0};
    em_tensor *g = X(scaled_grad(n, G)), *d = X(em_sub(x, y, 1));
    double beta = n->call.f[0];
    GRAD_XY(beta == 0 ? X(em_sign(d)) : X(em_clamp(X(em_div(d, S(beta))), -1, 1)));
    DONE();
}

/* d clamped to [-delta, delta] */
EM_BACKWARD(huber_loss, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    INPUT(x, 0);
    INPUT(y, 1);
    em_arena a = {0};
    em_tensor *g = X(scaled_grad(n, G));
    double delta = n->call.f[0];
    GRAD_XY(X(em_clamp(X(em_sub(x, y, 1)), -delta, delta)));
    DONE();
}

/* x: w (x - y) / max(x (1 - x), 1e-12); y: w (log(1 - x) - log(x)), each log clamped at -100 */
EM_BACKWARD(binary_cross_entropy, EM_SAVE_INPUTS)
{
    INPUT(x, 0);
    INPUT(y, 1);
    em_arena a = {0};
    em_tensor *g = X(scaled_grad(n, G));
    if (n->call.i[1] & 1) {
        INPUT(w, 2);
        g = X(em_mul(g, w));
    }
    em_tensor *var = X(em_clamp(X(em_mul(x, X(em_sub(S(1), x, 1)))), 1e-12, NAN));
    GRAD(0, X(em_mul(g, X(em_div(X(em_sub(x, y, 1)), var)))));
    GRAD(1, X(em_mul(g, X(em_sub(X(em_clamp(X(em_log1p(X(em_neg(x)))), -100, NAN)),
                                  X(em_clamp(X(em_log(x)), -100, NAN)), 1)))));
    DONE();
}

/* x: w ((q y + 1 - y) sigmoid(x) - q y); y: w (logsigmoid(-x) - q logsigmoid(x)) (q = 1 without pos_weight) */
EM_BACKWARD(binary_cross_entropy_with_logits, EM_SAVE_INPUTS)
{
    INPUT(x, 0);
    INPUT(y, 1);
    em_arena a = {0};
    em_tensor *g = X(scaled_grad(n, G));
    bool has_w = n->call.i[1] & 1, has_q = n->call.i[1] & 2;
    if (has_w) {
        INPUT(w, 2);
        g = X(em_mul(g, w));
    }
    if (has_q) {
        INPUT(q, has_w ? 3 : 2);
        em_tensor *qy = X(em_mul(q, y));
        em_tensor *coef = X(em_sub(X(em_add(qy, S(1), 1)), y, 1));
        GRAD(0, X(em_mul(g, X(em_sub(X(em_mul(coef, X(em_sigmoid(x)))), qy, 1)))));
        GRAD(1, X(em_mul(g, X(em_sub(X(em_logsigmoid(X(em_neg(x)))), X(em_mul(q, X(em_logsigmoid(x)))), 1)))));
    } else {
        GRAD(0, X(em_mul(g, X(em_sub(X(em_sigmoid(x)), y, 1)))));
        GRAD(1, X(em_mul(g, X(em_neg(x)))));
    }
    DONE();
}

/* ---- class losses ---------------------------------------------------------------------- */
/* the weight (or NULL) of a class-loss node whose inputs are input, target, weight? */
static const em_tensor *class_weight(const em_node *n, int k) { return n->call.i[5] ? em_node_input(n, k) : NULL; }
#define CLASS_ARGS(n) reduction_of(n), (n)->call.i[1]

EM_BACKWARD(nll_loss, EM_SAVE_INPUTS | EM_SAVE_OUT(1))
{
    INPUT(x, 0);
    INPUT(t, 1);
    const em_tensor *w = class_weight(n, 2), *tw = em_saved_unpack(n, &n->out[1], "total_weight");
    if ((n->call.i[5] && !w) || !tw) return em_error_code();
    em_arena a = {0};
    GRAD(0, X(em_nll_loss_backward(G, x, t, w, CLASS_ARGS(n), tw)));
    DONE();
}

EM_BACKWARD(nll_loss_backward, EM_SAVE_INPUTS)
{
    INPUT(t, 2);
    const em_tensor *w = class_weight(n, 3);
    if (n->call.i[5] && !w) return em_error_code();
    em_arena a = {0};
    GRAD(0, X(em_nll_loss(G, t, w, CLASS_ARGS(n))));
    DONE();
}

EM_BACKWARD(cross_entropy, EM_SAVE_INPUTS | EM_SAVE_OUT(1) | EM_SAVE_OUT(2))
{
    INPUT(x, 0);
    INPUT(t, 1);
    const em_tensor *w = class_weight(n, 2), *tw = em_saved_unpack(n, &n->out[2], "total_weight");
    if ((n->call.i[5] && !w) || !tw) return em_error_code();
    em_arena a = {0};
    if (!em_grad_mode()) {
        const em_tensor *lse = em_saved_unpack(n, &n->out[1], "lse");
        if (!lse) return em_error_code();
        GRAD(0, X(em_cross_entropy_backward(G, x, t, w, CLASS_ARGS(n), lse, tw)));
    } else { /* create_graph: log_softmax's backward of nll_loss's, both recorded */
        int d = x->ndim == 1 ? 0 : 1;
        em_tensor *logp = X(em_log_softmax(x, d, EM_DTYPE_NONE));
        em_tensor *gl = X(em_nll_loss_backward(G, logp, t, w, CLASS_ARGS(n), tw));
        em_tensor *s = X(em_sum(gl, 1, &d, true, EM_DTYPE_NONE));
        GRAD(0, X(em_sub(gl, X(em_mul(X(em_exp(logp)), s)), 1)));
    }
    DONE();
}

EM_BACKWARD(ctc_loss, EM_SAVE_INPUTS | EM_SAVE_OUT(0) | EM_SAVE_OUT(1))
{
    INPUT(lp, 0);
    INPUT(targets, 1);
    INPUT(lengths, 2);
    const em_tensor *nll = em_node_output(n, 0), *alpha = nll ? em_node_output(n, 1) : NULL;
    if (!alpha) return em_error_code();
    em_arena a = {0};
    GRAD(0, X(em_ctc_loss_backward(G, lp, targets, lengths, nll, alpha, n->call.i[0], n->call.i[1])));
    DONE();
}

/* The backward ops PyTorch does not differentiate either (it recomputes
 * cross entropy's through log_softmax, as the formula above does under
 * create_graph): their formulas refuse, with PyTorch's wording. */
EM_BACKWARD(cross_entropy_backward, 0)
{
    return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for 'cross_entropy_backward' is not implemented.");
}
EM_BACKWARD(ctc_loss_backward, 0)
{
    return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '_ctc_loss_backward' is not implemented.");
}
