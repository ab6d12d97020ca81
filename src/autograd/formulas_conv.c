/* Backward formulas of the convolutions and of im2col/col2im. The geometry
 * is the node's i[] (src/nn/conv_params.h).
 *
 * A convolution y = conv(x, w) is linear in each argument, so
 *   dx = the other-direction convolution of G with w (em_convolution_input_grad),
 *   dw = convolution_weight_grad(x, G)   (bilinear in x and G),
 *   db = G summed over the spatial dims, then the batch.
 * convolution_weight_grad's own gradients are convolutions again
 * (<V, WG(X, G)> = <conv(X, V), G>): with gW the gradient of its output,
 *   dX = conv_transpose(G, gW),   dG = conv(X, gW),
 * so every order of derivative stays within these two ops. im2col and col2im
 * are each other's adjoint. */
#include "../nn/conv_params.h"
#include "autograd.h"
#include "ember/ember.h"

#define INPUT(v, i)                           \
    const em_tensor *v = em_node_input(n, i); \
    if (!v) return em_error_code()

EM_BACKWARD(convolution, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    const em_conv_params p = em_conv_unpack(n->call.i);
    const em_geometry *xg = &n->in_geom[0], *wg = &n->in_geom[1];
    INPUT(x, 0);
    INPUT(w, 1);
    GRAD(0, X(em_convolution_input_grad(G, w, xg->ndim, xg->sizes, p.nd, p.stride, p.padding, p.dilation,
                                        p.transposed, p.groups)));
    GRAD(1, X(em_convolution_weight_grad(x, G, wg->sizes + 2, p.nd, p.stride, p.padding, p.dilation, p.transposed,
                                         p.groups)));
    if (n->nin > 2 && em_node_needs_grad(n, 2)) {
        /* the spatial dims first, then the batch: one sum over dims (0, 2, ...) would copy G
         * to bring the reduced dims together */
        int spatial[3], batch = 0;
        for (int d = 0; d < p.nd; d++) spatial[d] = 2 + d;
        GRAD(2, X(em_sum(X(em_sum(G, p.nd, spatial, false, EM_DTYPE_NONE)), 1, &batch, false, EM_DTYPE_NONE)));
    }
    DONE();
}

EM_BACKWARD(convolution_weight_grad, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    const em_conv_params p = em_conv_unpack(n->call.i);
    const em_geometry *xg = &n->in_geom[0], *gg = &n->in_geom[1];
    INPUT(x, 0);
    INPUT(gy, 1);
    GRAD(0, X(em_convolution_input_grad(gy, G, xg->ndim, xg->sizes, p.nd, p.stride, p.padding, p.dilation, false,
                                        p.groups)));
    GRAD(1, X(em_convolution_input_grad(x, G, gg->ndim, gg->sizes, p.nd, p.stride, p.padding, p.dilation, true,
                                        p.groups)));
    DONE();
}

EM_BACKWARD(im2col, 0)
{
    em_arena a = {0};
    const em_conv_params p = em_conv_unpack(n->call.i);
    GRAD(0, X(em_col2im(G, n->in_geom[0].sizes + 2, p.extra, p.dilation, p.padding, p.stride)));
    DONE();
}

EM_BACKWARD(col2im, 0)
{
    em_arena a = {0};
    const em_conv_params p = em_conv_unpack(n->call.i);
    GRAD(0, X(em_im2col(G, p.extra, p.dilation, p.padding, p.stride)));
    DONE();
}
