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

/* rnn_layer(mode, input, batch_sizes, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, reverse)
 * -> (output, hy, cy or None); mode 0 tanh, 1 relu, 2 lstm, 3 gru (em_rnn_mode);
 * batch_sizes None for a padded (T, B, I) input, else a 1-d int64 CPU tensor. */
EMP_BIND(rnn_layer, "rnn_layer(int mode, Tensor input, Tensor? batch_sizes, Tensor hx, Tensor? cx, Tensor w_ih, "
                    "Tensor w_hh, Tensor? b_ih, Tensor? b_hh, Tensor? w_hr, bool reverse=False)")
{
    const em_tensor *bs = a->t[2];
    em_tensor *bs_c = NULL;
    int64_t nsteps = 0;
    if (bs) {
        if (em_dtype_of(bs) != EM_I64 || em_ndim(bs) != 1 || em_device_of(bs).type != EM_CPU)
            return PyErr_Format(PyExc_RuntimeError, "rnn_layer: batch_sizes must be a 1-d int64 CPU tensor");
        if (!(bs_c = em_contiguous(bs))) return emp_raise();
        nsteps = em_numel(bs_c);
    }
    em_rnn_weights w = {a->t[5], a->t[6], a->t[7], a->t[8], a->t[9]};
    em_tensor *out[3] = {0};
    em_status st = em_rnn_layer((em_rnn_mode)a->i[0], a->t[1], nsteps, bs_c ? em_data_ptr(bs_c) : NULL, a->t[3],
                                a->t[4], &w, a->i[10], &out[0], &out[1], &out[2]);
    em_release(bs_c);
    if (st) return emp_raise();
    return emp_wrap_tuple(3, out);
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
    {NULL},
};
