/* Backward formulas of the nn activation family (include/ember/ops/nnact.def),
 * written with Ember ops so that they differentiate twice. Values at the
 * kinks follow PyTorch's derivatives.yaml: threshold passes nothing at x ==
 * threshold, the shrinks nothing on the closed [-lambd, lambd], prelu takes
 * its negative branch at 0. Shorthands: formulas_pointwise.h. */
#include "formulas_pointwise.h"

UNARY_IN(threshold, MASKED(X(em_gt(x, S(P(0))))))
UNARY_IN(hardshrink, MASKED(X(em_gt(X(em_abs(x)), S(P(0))))))
UNARY_IN(softshrink, MASKED(X(em_gt(X(em_abs(x)), S(P(0))))))

/* prelu: d/dx = x > 0 ? 1 : w; d/dw = sum of (x > 0 ? 0 : x) g over every dim
 * but the channel dim 1 (every dim for a single weight) */
EM_BACKWARD(prelu, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(w, 1);
    const int nd = em_ndim(x);
    const bool per_channel = em_numel(w) > 1;
    int64_t wshape[EM_MAX_DIMS];
    for (int d = 0; d < nd - 1; d++) wshape[d] = d == 0 ? em_numel(w) : 1; /* (C, 1, ...): aligned to dim 1 */
    em_tensor *wb = X(per_channel ? em_reshape(w, nd - 1, wshape) : em_reshape(w, 0, NULL));
    em_tensor *pos = X(em_gt(x, S(0)));
    GRAD(0, X(em_where(pos, G, X(em_mul(G, wb)))));
    if (em_node_needs_grad(n, 1)) {
        em_tensor *t = X(em_where(pos, S(0), X(em_mul(x, G))));
        int dims[EM_MAX_DIMS], k = 0;
        for (int d = 0; d < nd; d++)
            if (!per_channel || d != 1) dims[k++] = d;
        em_tensor *s = k ? X(em_sum(t, k, dims, false, EM_DTYPE_NONE)) : t;
        GRAD(1, X(em_reshape(s, em_ndim(w), em_sizes(w))));
    }
    DONE();
}

/* glu = a sigmoid(b): d/da = sigmoid(b), d/db = a sigmoid(b) (1 - sigmoid(b)) */
EM_BACKWARD(glu, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    const int d = (int)n->call.i[0];
    const int64_t h = em_size(x, d) / 2;
    em_tensor *first = X(em_narrow(x, d, 0, h)), *second = X(em_narrow(x, d, h, h));
    em_tensor *s = X(em_sigmoid(second));
    em_tensor *ga = X(em_mul(G, s));
    em_tensor *gb = X(em_mul(X(em_mul(ga, first)), X(em_sub(S(1), s, 1))));
    const em_tensor *halves[2] = {ga, gb};
    GRAD(0, X(em_cat(2, halves, d)));
    DONE();
}

/* dropout: grad * mask * scale (the mask is output 1, not differentiable) */
EM_BACKWARD(dropout, EM_SAVE_OUT(1))
{
    em_arena a = {0};
    OUTPUT(mask, 1);
    GRAD(0, X(em_mul(X(em_mul(G, mask)), S(P(1)))));
    DONE();
}

/* embedding: the weight's gradient sums grad rows by index */
EM_BACKWARD(embedding, EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(idx, 1);
    GRAD(0, X(em_embedding_dense_backward(G, idx, n->in_geom[0].sizes[0], n->call.i[0], n->call.i[1] != 0)));
    DONE();
}

/* embedding_dense_backward is linear in grad: its adjoint looks rows of the
 * incoming gradient up again (padding row zeroed, divided by the counts when
 * scaled by frequency) */
EM_BACKWARD(embedding_dense_backward, EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(idx, 1);
    const int64_t pad = n->call.i[0], nw = n->call.i[2];
    em_tensor *gg = G;
    if (pad >= 0) gg = X(em_index_fill(gg, 0, X(em_from_data(&pad, 1, (int64_t[]){1}, EM_I64)), 0));
    if (n->call.i[1]) { /* counts (V, 1) of each index, at least 1 */
        int64_t ones_shape[EM_MAX_DIMS];
        memcpy(ones_shape, em_sizes(idx), em_ndim(idx) * sizeof *ones_shape);
        ones_shape[em_ndim(idx)] = 1;
        em_tensor *ones = X(em_ones(em_ndim(idx) + 1, ones_shape, em_dtype_of(G)));
        em_tensor *counts = X(em_embedding_dense_backward(ones, idx, nw, -1, false));
        gg = X(em_div(gg, X(em_clamp(counts, 1, NAN))));
    }
    GRAD(0, X(em_embedding(gg, idx, -1, false)));
    DONE();
}
