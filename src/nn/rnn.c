/* The op layer of the fused recurrent gates (checks, outputs, dispatch) and
 * the PyTorch cells, composites of the products and one gate op
 * (include/ember/rnn.h). The sequence layer is in rnn_layer.c. */
#include "../ops/dispatch.h"
#include "ember/ember.h"
#include "rnn_internal.h"

/* ---- fused gates --------------------------------------------------------- */
/* Operand `t` of gate op `op` must be (rows, cols), float32 or float64, of
 * dtype `ref`'s. */
static em_status check_operand(const char *op, const char *name, const em_tensor *t, const em_tensor *ref,
                               int64_t rows, int64_t cols)
{
    if (!t) return em_fail(EM_ERR_VALUE, "%s: %s is NULL", op, name);
    if (t->dtype != EM_F32 && t->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", op,
                       em_dtype_scalar_name((em_dtype)t->dtype));
    if (t->dtype != ref->dtype)
        return em_fail(EM_ERR_DTYPE, "%s: expected %s to have dtype %s, but got %s", op, name,
                       em_dtype_scalar_name((em_dtype)ref->dtype), em_dtype_scalar_name((em_dtype)t->dtype));
    if (t->ndim != 2 || t->sizes[0] != rows || t->sizes[1] != cols)
        return em_fail(EM_ERR_SHAPE, "%s: expected %s of size [%lld, %lld], but got %s", op, name, (long long)rows,
                       (long long)cols, em_shape_str(t->ndim, t->sizes));
    return EM_OK;
}

/* The (B, H) of a gate op from its state operand (2-d, checked first). */
static em_status state_shape(const char *op, const char *name, const em_tensor *t, int64_t *B, int64_t *H)
{
    if (!t) return em_fail(EM_ERR_VALUE, "%s: %s is NULL", op, name);
    if (t->ndim != 2)
        return em_fail(EM_ERR_SHAPE, "%s: expected %s to be 2-d (batch, hidden_size), but got %s", op, name,
                       em_shape_str(t->ndim, t->sizes));
    *B = t->sizes[0], *H = t->sizes[1];
    return EM_OK;
}

/* Dispatches gate call c (its in[] checked) with outputs (B, cols[k]) of
 * the inputs' dtype. Inputs whose elements are not contiguous within a row
 * are copied first (the kernels take any row stride but unit element
 * stride). On success c->out[] hold new references. */
static em_status gates_run(em_call *c, int64_t B, const int64_t *cols)
{
    em_tensor *tmp[EM_CALL_MAX_IN] = {0};
    em_status st = EM_OK;
    c->dtype = (em_dtype)c->in[0]->dtype;
    for (int k = 0; k < c->nin && st == EM_OK; k++) {
        const em_tensor *t = c->in[k];
        if (t->sizes[1] > 1 && t->strides[1] != 1) {
            if (!(tmp[k] = em_contiguous(t))) st = em_error_code();
            c->in[k] = tmp[k];
        }
    }
    for (int k = 0; k < c->nout && st == EM_OK; k++)
        if (!(c->out[k] = em_tensor_new(2, (const int64_t[]){B, cols[k]}, c->dtype, c->in[0]->storage->device)))
            st = em_error_code();
    if (st == EM_OK) st = em_dispatch(c);
    for (int k = 0; k < c->nin; k++) em_release(tmp[k]);
    if (st != EM_OK)
        for (int k = 0; k < c->nout; k++) em_release(c->out[k]), c->out[k] = NULL;
    return st;
}

em_status em_lstm_gates(const em_tensor *igates, const em_tensor *hgates, const em_tensor *cx, em_tensor **hy,
                        em_tensor **cy)
{
    const char *op = "lstm_gates";
    int64_t B, H;
    if (state_shape(op, "cx", cx, &B, &H) || check_operand(op, "igates", igates, cx, B, 4 * H) ||
        check_operand(op, "hgates", hgates, cx, B, 4 * H) || check_operand(op, "cx", cx, cx, B, H))
        return em_error_code();
    em_call c = {.op = EM_OP_lstm_gates, .nin = 3, .nout = 2, .in = {igates, hgates, cx}};
    if (gates_run(&c, B, (const int64_t[]){H, H})) return em_error_code();
    *hy = c.out[0], *cy = c.out[1];
    return EM_OK;
}

em_tensor *em_gru_gates(const em_tensor *igates, const em_tensor *hgates, const em_tensor *hx)
{
    const char *op = "gru_gates";
    int64_t B, H;
    if (state_shape(op, "hx", hx, &B, &H) || check_operand(op, "igates", igates, hx, B, 3 * H) ||
        check_operand(op, "hgates", hgates, hx, B, 3 * H) || check_operand(op, "hx", hx, hx, B, H))
        return NULL;
    em_call c = {.op = EM_OP_gru_gates, .nin = 3, .nout = 1, .in = {igates, hgates, hx}};
    return gates_run(&c, B, (const int64_t[]){H}) ? NULL : c.out[0];
}

em_tensor *em_rnn_gates(const em_tensor *igates, const em_tensor *hgates, bool relu)
{
    const char *op = "rnn_gates";
    int64_t B, H;
    if (state_shape(op, "igates", igates, &B, &H) || check_operand(op, "igates", igates, igates, B, H) ||
        check_operand(op, "hgates", hgates, igates, B, H))
        return NULL;
    em_call c = {.op = EM_OP_rnn_gates, .nin = 2, .nout = 1, .in = {igates, hgates}, .i = {relu}};
    return gates_run(&c, B, (const int64_t[]){H}) ? NULL : c.out[0];
}

em_status em_lstm_gates_backward(const em_tensor *grad_hy, const em_tensor *grad_cy, const em_tensor *igates,
                                 const em_tensor *hgates, const em_tensor *cx, em_tensor **grad_gates,
                                 em_tensor **grad_cx)
{
    const char *op = "lstm_gates_backward";
    int64_t B, H;
    if (state_shape(op, "cx", cx, &B, &H) || check_operand(op, "grad_hy", grad_hy, cx, B, H) ||
        check_operand(op, "grad_cy", grad_cy, cx, B, H) || check_operand(op, "igates", igates, cx, B, 4 * H) ||
        check_operand(op, "hgates", hgates, cx, B, 4 * H) || check_operand(op, "cx", cx, cx, B, H))
        return em_error_code();
    em_call c = {.op = EM_OP_lstm_gates_backward, .nin = 5, .nout = 2,
                 .in = {grad_hy, grad_cy, igates, hgates, cx}};
    if (gates_run(&c, B, (const int64_t[]){4 * H, H})) return em_error_code();
    *grad_gates = c.out[0], *grad_cx = c.out[1];
    return EM_OK;
}

em_status em_gru_gates_backward(const em_tensor *grad_hy, const em_tensor *igates, const em_tensor *hgates,
                                const em_tensor *hx, em_tensor **grad_igates, em_tensor **grad_hgates,
                                em_tensor **grad_hx)
{
    const char *op = "gru_gates_backward";
    int64_t B, H;
    if (state_shape(op, "hx", hx, &B, &H) || check_operand(op, "grad_hy", grad_hy, hx, B, H) ||
        check_operand(op, "igates", igates, hx, B, 3 * H) || check_operand(op, "hgates", hgates, hx, B, 3 * H) ||
        check_operand(op, "hx", hx, hx, B, H))
        return em_error_code();
    em_call c = {.op = EM_OP_gru_gates_backward, .nin = 4, .nout = 3, .in = {grad_hy, igates, hgates, hx}};
    if (gates_run(&c, B, (const int64_t[]){3 * H, 3 * H, H})) return em_error_code();
    *grad_igates = c.out[0], *grad_hgates = c.out[1], *grad_hx = c.out[2];
    return EM_OK;
}

em_tensor *em_rnn_gates_backward(const em_tensor *grad_hy, const em_tensor *hy, bool relu)
{
    const char *op = "rnn_gates_backward";
    int64_t B, H;
    if (state_shape(op, "hy", hy, &B, &H) || check_operand(op, "grad_hy", grad_hy, hy, B, H) ||
        check_operand(op, "hy", hy, hy, B, H))
        return NULL;
    em_call c = {.op = EM_OP_rnn_gates_backward, .nin = 2, .nout = 1, .in = {grad_hy, hy}, .i = {relu}};
    return gates_run(&c, B, (const int64_t[]){H}) ? NULL : c.out[0];
}

/* ---- cells ------------------------------------------------------------------ */
em_status em_rnn_check_cell(const char *op, int G, const em_tensor *input, const em_tensor *hx,
                            const em_tensor *cx, const em_rnn_weights *w)
{
    const em_tensor *need[] = {input, hx, w->w_ih, w->w_hh};
    const char *names[] = {"input", "hx", "w_ih", "w_hh"};
    for (int k = 0; k < 4; k++)
        if (!need[k]) return em_fail(EM_ERR_VALUE, "%s: %s is NULL", op, names[k]);
    if (input->ndim != 2)
        return em_fail(input->ndim < 2 ? EM_ERR_INDEX : EM_ERR_SHAPE, "%s: expected input to be 2-d (batch, "
                       "input_size), but got %s", op, em_shape_str(input->ndim, input->sizes));
    if (w->w_ih->ndim != 2 || w->w_hh->ndim != 2)
        return em_fail(EM_ERR_SHAPE, "%s: expected 2-d weights, but got w_ih of size %s and w_hh of size %s", op,
                       em_shape_str(w->w_ih->ndim, w->w_ih->sizes), em_shape_str(w->w_hh->ndim, w->w_hh->sizes));
    if (w->w_hr && (w->w_hr->ndim != 2 || w->w_hr->sizes[0] != w->w_hh->sizes[1]))
        return em_fail(EM_ERR_SHAPE, "%s: expected w_hr of size [%lld, hidden_size], but got %s", op,
                       (long long)w->w_hh->sizes[1], em_shape_str(w->w_hr->ndim, w->w_hr->sizes));
    /* the state size: H, or P with a projection (then w_hh is (G*H, P)) */
    const int64_t I = w->w_ih->sizes[1], P = w->w_hh->sizes[1], H = w->w_hr ? w->w_hr->sizes[1] : P;
    if (input->sizes[1] != I)
        return em_fail(EM_ERR_SHAPE, "input has inconsistent input_size: got %lld expected %lld",
                       (long long)input->sizes[1], (long long)I);
    const em_tensor *states[] = {hx, cx};
    for (int k = 0; k < 2; k++) {
        const em_tensor *s = states[k];
        if (!s) continue;
        if (s->ndim != 2)
            return em_fail(EM_ERR_SHAPE, "%s: expected hidden%d to be 2-d (batch, hidden_size), but got %s", op, k,
                           em_shape_str(s->ndim, s->sizes));
        if (s->sizes[0] != input->sizes[0])
            return em_fail(EM_ERR_SHAPE, "Input batch size %lld doesn't match hidden%d batch size %lld",
                           (long long)input->sizes[0], k, (long long)s->sizes[0]);
        if (s->sizes[1] != (k ? H : P))
            return em_fail(EM_ERR_SHAPE, "hidden0 has inconsistent hidden_size: got %lld, expected %lld",
                           (long long)s->sizes[1], (long long)(k ? H : P)); /* PyTorch says hidden0 for cx too */
    }
    const em_tensor *rows[] = {w->w_ih, w->w_hh, w->b_ih, w->b_hh};
    const char *rnames[] = {"w_ih", "w_hh", "b_ih", "b_hh"};
    for (int k = 0; k < 4; k++) {
        const em_tensor *t = rows[k];
        if (t && (t->ndim != (k < 2 ? 2 : 1) || t->sizes[0] != G * H))
            return em_fail(EM_ERR_SHAPE, "%s: expected %s to have %lld (%d * hidden_size) rows, but got size %s", op,
                           rnames[k], (long long)(G * H), G, em_shape_str(t->ndim, t->sizes));
    }
    const em_tensor *all[] = {input, hx, cx, w->w_ih, w->w_hh, w->b_ih, w->b_hh};
    for (int k = 1; k < 7; k++)
        if (all[k] && all[k]->dtype != input->dtype)
            return em_fail(EM_ERR_DTYPE, "%s: expected all tensors to have dtype %s, but got %s", op,
                           em_dtype_scalar_name((em_dtype)input->dtype), em_dtype_scalar_name((em_dtype)all[k]->dtype));
    if (input->dtype != EM_F32 && input->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", op,
                       em_dtype_scalar_name((em_dtype)input->dtype));
    return EM_OK;
}

em_tensor *em_rnn_project(const em_tensor *x, const em_tensor *w_t, const em_tensor *b)
{
    return b ? em_addmm(b, x, w_t, 1, 1) : em_mm(x, w_t);
}

/* A cell's two projections: *ig = input W_ih^T + b_ih, *hg = hx W_hh^T + b_hh. */
static em_status cell_gates(const em_tensor *input, const em_tensor *hx, const em_rnn_weights *w, em_tensor **ig,
                            em_tensor **hg)
{
    em_tensor *wih_t = em_t(w->w_ih), *whh_t = em_t(w->w_hh);
    *ig = wih_t && whh_t ? em_rnn_project(input, wih_t, w->b_ih) : NULL;
    *hg = *ig ? em_rnn_project(hx, whh_t, w->b_hh) : NULL;
    em_status st = *hg ? EM_OK : em_error_code();
    if (st) em_release(*ig), *ig = NULL;
    em_release(wih_t);
    em_release(whh_t);
    return st;
}

em_status em_lstm_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *cx, const em_tensor *w_ih,
                       const em_tensor *w_hh, const em_tensor *b_ih, const em_tensor *b_hh, em_tensor **hy,
                       em_tensor **cy)
{
    em_rnn_weights w = {w_ih, w_hh, b_ih, b_hh, NULL};
    em_tensor *ig, *hg;
    if (!cx) return em_fail(EM_ERR_VALUE, "lstm_cell: cx is NULL");
    if (em_rnn_check_cell("lstm_cell", 4, input, hx, cx, &w) || cell_gates(input, hx, &w, &ig, &hg))
        return em_error_code();
    em_status st = em_lstm_gates(ig, hg, cx, hy, cy);
    em_release(ig);
    em_release(hg);
    return st;
}

/* gru_cell, rnn_tanh_cell, rnn_relu_cell: the projections, then the gates. */
static em_tensor *cell(em_rnn_mode mode, const em_tensor *input, const em_tensor *hx, const em_rnn_weights *w)
{
    const char *op = mode == EM_RNN_GRU ? "gru_cell" : mode == EM_RNN_TANH ? "rnn_tanh_cell" : "rnn_relu_cell";
    em_tensor *ig, *hg;
    if (em_rnn_check_cell(op, mode == EM_RNN_GRU ? 3 : 1, input, hx, NULL, w) || cell_gates(input, hx, w, &ig, &hg))
        return NULL;
    em_tensor *hy = mode == EM_RNN_GRU ? em_gru_gates(ig, hg, hx) : em_rnn_gates(ig, hg, mode == EM_RNN_RELU);
    em_release(ig);
    em_release(hg);
    return hy;
}

em_tensor *em_gru_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *w_ih, const em_tensor *w_hh,
                       const em_tensor *b_ih, const em_tensor *b_hh)
{
    return cell(EM_RNN_GRU, input, hx, &(em_rnn_weights){w_ih, w_hh, b_ih, b_hh, NULL});
}
em_tensor *em_rnn_tanh_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *w_ih,
                            const em_tensor *w_hh, const em_tensor *b_ih, const em_tensor *b_hh)
{
    return cell(EM_RNN_TANH, input, hx, &(em_rnn_weights){w_ih, w_hh, b_ih, b_hh, NULL});
}
em_tensor *em_rnn_relu_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *w_ih,
                            const em_tensor *w_hh, const em_tensor *b_ih, const em_tensor *b_hh)
{
    return cell(EM_RNN_RELU, input, hx, &(em_rnn_weights){w_ih, w_hh, b_ih, b_hh, NULL});
}
