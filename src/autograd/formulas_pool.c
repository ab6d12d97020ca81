/* Backward formulas of the pool family's linear ops (src/nn/pool*.c, pad.c, upsample.c): each
 * op and its backward op are adjoints, so each one's gradient is the other applied to the
 * incoming gradient, and both are differentiable again. Params come from the call (see
 * src/nn/pool_call.h); sizes from the node's input geometry. The max pools' gradient adds into
 * the input at their indices (max_pool_backward), whose own gradient gathers there. */
#include "autograd.h"
#include "../nn/pool_common.h"
#include "ember/ember.h"

#define IN (n->in_geom[0])
#define P(k) (n->call.i[k])

/* i[0] = nd; output 1: the indices */
static em_status max_pool_grad(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    em_tensor *idx = X(em_node_unpack_output(n, 1));
    if (!idx) return em_arena_end(&a);
    GRAD(0, X(em_max_pool_backward(G, idx, (int)P(0), IN.ndim, IN.sizes)));
    DONE();
}
EM_BACKWARD(max_pool, EM_SAVE_OUT(1)) { return max_pool_grad(n, go, gi); }
EM_BACKWARD(adaptive_max_pool, EM_SAVE_OUT(1)) { return max_pool_grad(n, go, gi); }
EM_BACKWARD(fractional_max_pool, EM_SAVE_OUT(1)) { return max_pool_grad(n, go, gi); }

EM_BACKWARD(max_pool_backward, EM_SAVE_IN(1))
{
    em_arena a = {0};
    const em_tensor *idx = em_node_input(n, 1);
    if (!idx) return em_error_code();
    GRAD(0, X(em_pool_gather_values(G, idx, (int)P(0))));
    DONE();
}

EM_BACKWARD(avg_pool, 0)
{
    em_arena a = {0};
    em_pool_params p = em_pool_params_of_call(&n->call);
    GRAD(0, X(em_avg_pool_backward(G, &p, IN.ndim, IN.sizes)));
    DONE();
}

EM_BACKWARD(avg_pool_backward, 0)
{
    em_arena a = {0};
    em_pool_params p = em_pool_params_of_call(&n->call);
    GRAD(0, X(em_avg_pool(G, &p)));
    DONE();
}

EM_BACKWARD(adaptive_avg_pool, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_adaptive_avg_pool_backward(G, (int)P(0), IN.ndim, IN.sizes)));
    DONE();
}

EM_BACKWARD(adaptive_avg_pool_backward, 0)
{
    em_arena a = {0};
    int nd = (int)P(0);
    GRAD(0, X(em_adaptive_avg_pool(G, nd, IN.sizes + IN.ndim - nd)));
    DONE();
}

/* i[0] = mode, i[1..6] = pads, i[7] = npad */
EM_BACKWARD(pad, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_pad_backward(G, (int)P(7), &P(1), (em_pad_mode)P(0), IN.ndim, IN.sizes)));
    DONE();
}

EM_BACKWARD(pad_backward, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_pad(G, (int)P(7), &P(1), (em_pad_mode)P(0), 0)));
    DONE();
}

/* f[0..2] = scales (0: none), i[0] = align_corners */
EM_BACKWARD(upsample_nearest, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_upsample_nearest_backward(G, IN.ndim, IN.sizes, n->call.f)));
    DONE();
}

EM_BACKWARD(upsample_nearest_backward, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_upsample_nearest(G, IN.sizes + 2, n->call.f)));
    DONE();
}

EM_BACKWARD(upsample_linear, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_upsample_linear_backward(G, IN.ndim, IN.sizes, P(0), n->call.f)));
    DONE();
}

EM_BACKWARD(upsample_linear_backward, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_upsample_linear(G, IN.sizes + 2, P(0), n->call.f)));
    DONE();
}

EM_BACKWARD(upsample_bicubic, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_upsample_bicubic_backward(G, IN.ndim, IN.sizes, P(0), n->call.f)));
    DONE();
}

EM_BACKWARD(upsample_bicubic_backward, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_upsample_bicubic(G, IN.sizes + 2, P(0), n->call.f)));
    DONE();
}

/* i[0] = mode, i[1] = padding mode, i[2] = align_corners; one backward call gives both */
EM_BACKWARD(grid_sample, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    const em_tensor *x = em_node_input(n, 0), *grid = em_node_input(n, 1);
    em_tensor *gx = NULL, *gg = NULL;
    if (!x || !grid) return em_error_code();
    if (em_grid_sample_backward(G, x, grid, (em_grid_mode)P(0), (em_grid_padding)P(1), P(2) != 0, &gx, &gg))
        return em_error_code();
    X(gx), X(gg);
    GRAD(0, gx);
    GRAD(1, gg);
    DONE();
}

/* PyTorch does not differentiate grid_sampler's backward either; its wording. */
EM_BACKWARD(grid_sample_backward, 0)
{
    return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for 'grid_sample_backward' is not implemented.");
}
