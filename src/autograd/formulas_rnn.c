/* Backward formulas of the fused recurrent gates (ops/rnn.def): each is its
 * fused backward op, which recomputes the gates from the saved
 * pre-activations. The products around the gates (mm/addmm in the cells and
 * layers) have their own formulas, so weight, input and hidden gradients
 * come from there.
 *
 * Double backward: rnn_gates differentiates twice (under create_graph its
 * formula is pointwise ops on its saved output). The LSTM and GRU backward
 * ops refuse to be differentiated (NotImplemented), so create_graph through
 * those cells fails loudly at the second backward, never silently.
 *
 * rnn_recurrence (a whole layer's steps) runs its fused backward op:
 * backpropagation through time from the saved output and workspace. Its
 * workspace output never gets a gradient, and the others often lack one
 * (hy, cy unused): missing gradients reach it as NULL, so no zeros of the
 * sequence's size are made. Not differentiable twice: create_graph through
 * it raises NotImplemented at once. */
#include "formulas_pointwise.h"

EM_BACKWARD(lstm_gates, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_IN(2))
{
    em_arena a = {0};
    INPUT(ig, 0);
    INPUT(hg, 1);
    INPUT(cx, 2);
    em_tensor *dgates = NULL, *dcx = NULL;
    if (em_lstm_gates_backward(go[0], go[1], ig, hg, cx, &dgates, &dcx)) return em_error_code();
    X(dgates), X(dcx);
    GRAD(0, dgates);
    GRAD(1, dgates);
    GRAD(2, dcx);
    DONE();
}

EM_BACKWARD(gru_gates, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_IN(2))
{
    em_arena a = {0};
    INPUT(ig, 0);
    INPUT(hg, 1);
    INPUT(hx, 2);
    em_tensor *dig = NULL, *dhg = NULL, *dhx = NULL;
    if (em_gru_gates_backward(G, ig, hg, hx, &dig, &dhg, &dhx)) return em_error_code();
    X(dig), X(dhg), X(dhx);
    GRAD(0, dig);
    GRAD(1, dhg);
    GRAD(2, dhx);
    DONE();
}

/* d/ds act(s) from y = act(s): 1 - y^2 (tanh), y > 0 (relu). Under
 * create_graph as pointwise ops on the saved output with its history, so
 * that it differentiates again; else one fused pass. */
EM_BACKWARD(rnn_gates, EM_SAVE_OUT(0))
{
    em_arena a = {0};
    const bool relu = n->call.i[0] != 0;
    em_tensor *d;
    if (em_is_grad_enabled()) {
        OUTPUT(y, 0);
        d = relu ? MASKED(X(em_gt(y, S(0)))) : X(em_mul(G, X(em_sub(S(1), X(em_mul(y, y)), 1))));
    } else {
        const em_tensor *y = em_node_output(n, 0);
        if (!y) return em_error_code();
        d = X(em_rnn_gates_backward(G, y, relu));
    }
    GRAD(0, d);
    GRAD(1, d);
    DONE();
}

/* Saved input i, or NULL (no error) where the forward had none. */
static bool saved_opt(const em_node *n, int i, const em_tensor **t)
{
    *t = n->in_geom[i].ndim ? em_node_input(n, i) : NULL;
    return !n->in_geom[i].ndim || *t;
}

EM_BACKWARD(rnn_recurrence, EM_SAVE_IN(1) | EM_SAVE_IN(2) | EM_SAVE_IN(3) | EM_SAVE_IN(4) | EM_SAVE_IN(5) |
                                EM_SAVE_OUT(0) | EM_SAVE_OUT(3) | EM_KEEP_MISSING_GRADS)
{
    if (em_is_grad_enabled())
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for 'rnn_recurrence_backward' is not implemented "
                       "(double backward through the fused recurrent layer: create_graph through nn.RNN/LSTM/GRU)");
    const em_rnn_mode mode = (em_rnn_mode)n->call.i[0];
    const bool lstm = mode == EM_RNN_LSTM;
    const em_tensor *hx = em_node_input(n, 1), *w_hh = em_node_input(n, 2), *bs, *in4, *w_hr, *ws = NULL;
    const em_tensor *out = em_node_output(n, 0);
    if (!hx || !w_hh || !out || !saved_opt(n, 3, &bs) || !saved_opt(n, 4, &in4) || !saved_opt(n, 5, &w_hr) ||
        (n->out_geom[3].ndim && !(ws = em_node_output(n, 3))))
        return em_error_code();
    em_rnn_grads g;
    if (em_rnn_recurrence_backward(mode, go[0], go[1], go[2], out, ws, n->call.i[2], bs ? em_data_ptr(bs) : NULL,
                                   hx, lstm ? in4 : NULL, w_hh, !lstm && in4, w_hr, n->call.i[1] != 0, &g))
        return em_error_code();
    em_tensor *r[6] = {g.igates, g.hx, g.w_hh, NULL, lstm ? g.cx : g.b_hh, g.w_hr};
    em_release(lstm ? g.b_hh : g.cx);
    for (int i = 0; i < 6; i++) {
        if (em_node_needs_grad(n, i)) gi[i] = r[i];
        else em_release(r[i]);
    }
    return EM_OK;
}

/* The backward ops themselves: not differentiable (see the top). */
#define REFUSED(op)                                                                                     \
    EM_BACKWARD(op, 0)                                                                                  \
    {                                                                                                   \
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' is not implemented (double "      \
                       "backward through the fused recurrent cells)", #op);                             \
    }
REFUSED(lstm_gates_backward)
REFUSED(gru_gates_backward)
REFUSED(rnn_gates_backward)
