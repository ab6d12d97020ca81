/* Bindings of the rnn family (include/ember/rnn.h): the cells at the top level
 * (torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell); the fused gate
 * ops and the sequence layer (what nn.RNN/LSTM/GRU run) in ember._C._nn. */
#include "emp.h"

/* The pair a C call filled in (st: its status). */
static PyObject *pair(em_status st, em_tensor **x, em_tensor **y)
{
    if (st) return emp_raise();
    return emp_wrap_tuple(2, (em_tensor *[]){*x, *y});
}

EMP_BIND(lstm_cell, "lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "
                    "Tensor? b_hh=None)")
{
    em_tensor *hx[2], *hy = NULL, *cy = NULL;
    int n = emp_tensor_seq(a->obj[1], hx, 2, "lstm_cell");
    if (n < 0) return NULL;
    if (n != 2) return PyErr_Format(PyExc_RuntimeError, "lstm_cell: Expected hx to hold 2 tensors (h, c), got %d", n);
    return pair(em_lstm_cell(a->t[0], hx[0], hx[1], a->t[2], a->t[3], a->t[4], a->t[5], &hy, &cy), &hy, &cy);
}
#define CELL(name)                                                                                          \
    EMP_BIND(name, #name "(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, "         \
                         "Tensor? b_hh=None)")                                                             \
    {                                                                                                       \
        return emp_wrap(em_##name(a->t[0], a->t[1], a->t[2], a->t[3], a->t[4], a->t[5]));                  \
    }
CELL(gru_cell)
CELL(rnn_tanh_cell)
CELL(rnn_relu_cell)

/* ---- ember._C._nn: the fused gates and the layer ------------------------------ */
EMP_BIND(lstm_gates, "lstm_gates(Tensor igates, Tensor hgates, Tensor cx)")
{
    em_tensor *hy = NULL, *cy = NULL;
    return pair(em_lstm_gates(a->t[0], a->t[1], a->t[2], &hy, &cy), &hy, &cy);
}
EMP_BIND(gru_gates, "gru_gates(Tensor igates, Tensor hgates, Tensor hx)")
{
    return emp_wrap(em_gru_gates(a->t[0], a->t[1], a->t[2]));
}
EMP_BIND(rnn_gates, "rnn_gates(Tensor igates, Tensor hgates, bool relu=False)")
{
    return emp_wrap(em_rnn_gates(a->t[0], a->t[1], a->i[2]));
}
EMP_BIND(lstm_gates_backward, "lstm_gates_backward(Tensor grad_hy, Tensor grad_cy, Tensor igates, Tensor hgates, "
                              "Tensor cx)")
{
    em_tensor *dg = NULL, *dcx = NULL;
    return pair(em_lstm_gates_backward(a->t[0], a->t[1], a->t[2], a->t[3], a->t[4], &dg, &dcx), &dg, &dcx);
}
EMP_BIND(gru_gates_backward, "gru_gates_backward(Tensor grad_hy, Tensor igates, Tensor hgates, Tensor hx)")
{
    em_tensor *out[3] = {0};
    if (em_gru_gates_backward(a->t[0], a->t[1], a->t[2], a->t[3], &out[0], &out[1], &out[2])) return emp_raise();
    return emp_wrap_tuple(3, out);
}
EMP_BIND(rnn_gates_backward, "rnn_gates_backward(Tensor grad_hy, Tensor hy, bool relu=False)")
{
    return emp_wrap(em_rnn_gates_backward(a->t[0], a->t[1], a->i[2]));
}

/* A PackedSequence's batch_sizes (None: padded) as a contiguous int64
 * CPU tensor in *bs_c (NULL for None) and its length in *nsteps. */
static int batch_sizes_arg(const em_tensor *bs, const char *op, em_tensor **bs_c, int64_t *nsteps)
{
    *bs_c = NULL;
    if (!bs) return 0;
    if (em_dtype_of(bs) != EM_I64 || em_ndim(bs) != 1 || em_device_of(bs).type != EM_CPU) {
        PyErr_Format(PyExc_RuntimeError, "%s: batch_sizes must be a 1-d int64 CPU tensor", op);
        return -1;
    }
    if (!(*bs_c = em_contiguous(bs))) return emp_raise(), -1;
    *nsteps = em_numel(*bs_c);
    return 0;
}
/* The steps of a padded sequence of `rows` rows over hx's batch. */
static int64_t padded_steps(const em_tensor *rows, const em_tensor *hx)
{
    int64_t B = em_ndim(hx) == 2 ? em_size(hx, 0) : 0;
    return B > 0 && em_ndim(rows) >= 1 ? em_size(rows, 0) / B : 0;
}

/* rnn_layer(mode, input, batch_sizes, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, reverse)
 * -> (output, hy, cy or None); mode 0 tanh, 1 relu, 2 lstm, 3 gru (em_rnn_mode);
 * batch_sizes None for a padded (T, B, I) input, else a 1-d int64 CPU tensor. */
EMP_BIND(rnn_layer, "rnn_layer(int mode, Tensor input, Tensor? batch_sizes, Tensor hx, Tensor? cx, Tensor w_ih, "
                    "Tensor w_hh, Tensor? b_ih, Tensor? b_hh, Tensor? w_hr, bool reverse=False)")
{
    em_tensor *bs_c;
    int64_t nsteps = 0;
    if (batch_sizes_arg(a->t[2], "rnn_layer", &bs_c, &nsteps)) return NULL;
    em_rnn_weights w = {a->t[5], a->t[6], a->t[7], a->t[8], a->t[9]};
    em_tensor *out[3] = {0};
    em_status st = em_rnn_layer((em_rnn_mode)a->i[0], a->t[1], nsteps, bs_c ? em_data_ptr(bs_c) : NULL, a->t[3],
                                a->t[4], &w, a->i[10], &out[0], &out[1], &out[2]);
    em_release(bs_c);
    if (st) return emp_raise();
    return emp_wrap_tuple(3, out);
}

/* rnn_recurrence(mode, igates, batch_sizes, hx, cx, w_hh, b_hh, w_hr, reverse)
 * -> (output, hy, cy or None, workspace or None): igates (N, G*H) as
 * em_rnn_recurrence takes them (padded: N = T * B rows, step-major). */
EMP_BIND(rnn_recurrence, "rnn_recurrence(int mode, Tensor igates, Tensor? batch_sizes, Tensor hx, Tensor? cx, "
                         "Tensor w_hh, Tensor? b_hh, Tensor? w_hr, bool reverse=False)")
{
    em_tensor *bs_c;
    int64_t nsteps = padded_steps(a->t[1], a->t[3]);
    if (batch_sizes_arg(a->t[2], "rnn_recurrence", &bs_c, &nsteps)) return NULL;
    em_tensor *out[4] = {0};
    em_status st = em_rnn_recurrence((em_rnn_mode)a->i[0], a->t[1], nsteps, bs_c ? em_data_ptr(bs_c) : NULL, a->t[3],
                                     a->t[4], a->t[5], a->t[6], a->t[7], a->i[8], &out[0], &out[1], &out[2], &out[3]);
    em_release(bs_c);
    if (st) return emp_raise();
    return emp_wrap_tuple(4, out);
}

/* rnn_recurrence_backward(mode, grad_output, grad_hy, grad_cy, output, workspace,
 * batch_sizes, hx (h,) or (h, c), w_hh, with_b_hh, w_hr, reverse)
 * -> (grad_igates, grad_hx, grad_cx, grad_w_hh, grad_b_hh, grad_w_hr), None where absent. */
EMP_BIND(rnn_recurrence_backward,
         "rnn_recurrence_backward(int mode, Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, Tensor output, "
         "Tensor? workspace, Tensor? batch_sizes, Tensor[] hx, Tensor w_hh, bool with_b_hh, Tensor? w_hr, "
         "bool reverse=False)")
{
    em_tensor *hx[2] = {0}, *bs_c;
    int nstates = emp_tensor_seq(a->obj[7], hx, 2, "rnn_recurrence_backward");
    if (nstates < 0) return NULL;
    if (nstates < 1)
        return PyErr_Format(PyExc_RuntimeError, "rnn_recurrence_backward: expected hx to hold (h,) or (h, c)");
    int64_t nsteps = padded_steps(a->t[4], hx[0]);
    if (batch_sizes_arg(a->t[6], "rnn_recurrence_backward", &bs_c, &nsteps)) return NULL;
    em_rnn_grads g;
    em_status st = em_rnn_recurrence_backward((em_rnn_mode)a->i[0], a->t[1], a->t[2], a->t[3], a->t[4], a->t[5],
                                              nsteps, bs_c ? em_data_ptr(bs_c) : NULL, hx[0], hx[1], a->t[8],
                                              a->i[9], a->t[10], a->i[11], &g);
    em_release(bs_c);
    if (st) return emp_raise();
    return emp_wrap_tuple(6, (em_tensor *[]){g.igates, g.hx, g.cx, g.w_hh, g.b_hh, g.w_hr});
}

PyMethodDef emp_rnn_functions[] = {
    EMP_FUNCTION(lstm_cell),
    EMP_FUNCTION(gru_cell),
    EMP_FUNCTION(rnn_tanh_cell),
    EMP_FUNCTION(rnn_relu_cell),
    {NULL},
};

PyMethodDef emp_rnn_nn[] = {
    EMP_FUNCTION(lstm_gates),
    EMP_FUNCTION(gru_gates),
    EMP_FUNCTION(rnn_gates),
    EMP_FUNCTION(lstm_gates_backward),
    EMP_FUNCTION(gru_gates_backward),
    EMP_FUNCTION(rnn_gates_backward),
    EMP_FUNCTION(rnn_layer),
    EMP_FUNCTION(rnn_recurrence),
    EMP_FUNCTION(rnn_recurrence_backward),
    {NULL},
};
