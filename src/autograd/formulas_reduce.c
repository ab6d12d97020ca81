/* Backward formulas of reductions and softmax. The kernels' outputs keep the
 * reduced dims as size 1 (the op layer drops them after, as a view), so the
 * gradient broadcasts back over the input directly. */
#include "autograd.h"
#include "ember/ember.h"


/* the reduced dims' mask (bit d: dim d) and the dim of a one-dim op */
static uint32_t mask_of(const em_node *n) { return (uint32_t)n->call.i[0]; }
static int dim_of(const em_node *n) { return __builtin_ctz(mask_of(n)); }

static em_tensor *expand_to_input(const em_node *n, const em_tensor *g)
{
    return em_expand(g, n->in_geom[0].ndim, n->in_geom[0].sizes);
}

EM_BACKWARD(sum, 0)
{
    em_arena a = {0};
    GRAD(0, X(expand_to_input(n, G)));
    DONE();
}

EM_BACKWARD(mean, 0)
{
    em_arena a = {0};
    int64_t in = em_shape_numel(n->in_geom[0].ndim, n->in_geom[0].sizes);
    int64_t out = em_shape_numel(n->out_geom[0].ndim, n->out_geom[0].sizes);
    GRAD(0, X(expand_to_input(n, X(em_div(G, X(em_scalar_float(out ? (double)in / out : 1)))))));
    DONE();
}

/* softmax: y (g - sum(g y)) along the dim */
EM_BACKWARD(softmax, EM_SAVE_OUT(0))
{
    em_arena a = {0};
    const em_tensor *y = em_node_output(n, 0);
    if (!y) return em_error_code();
    int d = dim_of(n);
    em_tensor *s = X(em_sum(X(em_mul(G, y)), 1, &d, true, EM_DTYPE_NONE));
    GRAD(0, X(em_mul(y, X(em_sub(G, s, 1)))));
    DONE();
}

/* log_softmax: g - exp(y) sum(g) along the dim */
EM_BACKWARD(log_softmax, EM_SAVE_OUT(0))
{
    em_arena a = {0};
    const em_tensor *y = em_node_output(n, 0);
    if (!y) return em_error_code();
    int d = dim_of(n);
    em_tensor *s = X(em_sum(G, 1, &d, true, EM_DTYPE_NONE));
    GRAD(0, X(em_sub(G, X(em_mul(X(em_exp(y)), s)), 1)));
    DONE();
}
