/* Backward formulas of the nn activation family (include/ember/ops/nnact.def),
 * written with Ember ops so that they differentiate twice. Values at the
 * kinks follow PyTorch's derivatives.yaml: threshold passes nothing at x ==
 * threshold, the shrinks nothing on the closed [-lambd, lambd], prelu takes
 * its negative branch at 0. Shorthands: formulas_pointwise.h. */
#include "formulas_pointwise.h"

UNARY_IN(threshold, X(em_threshold_backward(G, x, P(0))))
/* linear in g, piecewise constant in x: nothing flows to x */
EM_BACKWARD(threshold_backward, EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 1);
    GRAD(0, X(em_threshold_backward(G, x, P(0))));
    DONE();
}
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

/* embedding_bag: the weight's gradient by the backward op; per_sample_weights'
 * is the dot of each entry's weight row with its bag's gradient (0 at padding) */
EM_BACKWARD(embedding_bag, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_IN(3) | EM_SAVE_OUT(1) | EM_SAVE_OUT(2) |
                               EM_SAVE_OUT(3))
{
    em_arena a = {0};
    INPUT(w, 0);
    INPUT(idx, 1);
    OUTPUT(o2b, 1);
    OUTPUT(size, 2);
    const int mode = (int)n->call.i[0];
    const int64_t pad = n->call.i[2];
    const em_tensor *psw = NULL;
    if (n->in_geom[3].ndim == 1) { /* per_sample_weights were given */
        psw = em_node_input(n, 3);
        if (!psw) return em_arena_end(&a), em_error_code();
    }
    em_tensor *maxi = NULL;
    if (mode == EM_BAG_MAX) {
        OUTPUT(m, 3);
        maxi = m;
    }
    if (em_node_needs_grad(n, 0))
        GRAD(0, X(em_embedding_bag_backward(G, idx, o2b, size, psw, maxi, em_size(w, 0), mode, pad, n->call.i[3] != 0)));
    if (psw && em_node_needs_grad(n, 3)) {
        em_tensor *dots = X(em_sum(X(em_mul(X(em_embedding(G, o2b, -1, false)), X(em_embedding(w, idx, -1, false)))), 1,
                                   (int[]){1}, false, EM_DTYPE_NONE));
        GRAD(3, pad < 0 ? dots : X(em_where(X(em_eq(idx, X(em_scalar_int(pad)))), S(0), dots)));
    }
    DONE();
}

/* embedding_bag_backward is linear in grad and in per_sample_weights: its
 * adjoint reads the incoming (V, D) gradient gg back at each entry's row
 * (scaled as the forward scaled it) and sums the rows into their bags; in max
 * mode it gathers gg at the argmax rows of the non-empty bags. */
EM_BACKWARD(embedding_bag_backward, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_IN(2) | EM_SAVE_IN(3) | EM_SAVE_IN(4) |
                                        EM_SAVE_IN(5))
{
    em_arena a = {0};
    INPUT(grad, 0);
    INPUT(idx, 1);
    INPUT(o2b, 2);
    INPUT(size, 3);
    const int64_t nw = n->call.i[0], mode = n->call.i[1], pad = n->call.i[2], nb = em_size(grad, 0);
    em_tensor *gg = G;
    if (mode == EM_BAG_MAX) {
        INPUT(maxi, 5);
        em_tensor *nonempty = X(em_unsqueeze(X(em_gt(size, X(em_scalar_int(0)))), 1));
        GRAD(0, X(em_where(nonempty, X(em_gather(gg, 0, maxi)), S(0))));
        DONE();
    }
    const em_tensor *psw = NULL;
    if (n->in_geom[4].ndim == 1) {
        psw = em_node_input(n, 4);
        if (!psw) return em_arena_end(&a), em_error_code();
    }
    if (n->call.i[3]) { /* divided by each index's count, at least 1 */
        const int64_t ones_shape[2] = {em_numel(idx), 1};
        em_tensor *ones = X(em_ones(2, ones_shape, em_dtype_of(G)));
        gg = X(em_div(gg, X(em_clamp(X(em_embedding_dense_backward(ones, idx, nw, -1, false)), 1, NAN))));
    }
    em_tensor *rows = X(em_embedding(gg, idx, -1, false)); /* (N, D) */
    if (pad >= 0) rows = X(em_where(X(em_unsqueeze(X(em_eq(idx, X(em_scalar_int(pad)))), 1)), S(0), rows));
    if (psw && em_node_needs_grad(n, 4))
        GRAD(4, X(em_sum(X(em_mul(rows, X(em_embedding(grad, o2b, -1, false)))), 1, (int[]){1}, false, EM_DTYPE_NONE)));
    em_tensor *scaled = rows;
    if (psw) scaled = X(em_mul(rows, X(em_unsqueeze(psw, 1))));
    if (mode == EM_BAG_MEAN)
        scaled = X(em_div(scaled, X(em_clamp(X(em_embedding(X(em_unsqueeze(size, 1)), o2b, -1, false)), 1, NAN))));
    GRAD(0, X(em_embedding_dense_backward(scaled, o2b, nb, -1, false)));
    DONE();
}
