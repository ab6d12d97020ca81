/* Ember's recurrent networks: fused gate ops, the PyTorch cells (lstm_cell,
 * gru_cell, rnn_tanh_cell, rnn_relu_cell) and one layer run over a whole
 * sequence, with PyTorch 1.13's gate equations (gate order i, f, g, o for
 * the LSTM; r, z, n for the GRU).
 *
 * Conventions (as core.h): functions returning em_tensor * return a NEW
 * reference (NULL on error); functions with several results return an
 * em_status and store new references through their pointer arguments (left
 * untouched on error); tensor arguments are borrowed. Tensors are float32 or
 * float64, all of one dtype and device; any strides are accepted.
 *
 * Autograd: everything here is differentiable. A cell is the products
 * (mm/addmm, recorded as such) and one fused gate op whose backward is one
 * fused op too. Double backward (create_graph) through the Elman gates is
 * computed with pointwise ops; the LSTM and GRU gates' backward ops refuse
 * to be differentiated (NotImplemented). The sequence layer is one
 * recorded op (rnn_recurrence) after the input projection; its backward is
 * one fused op that cannot be differentiated again: create_graph through a
 * layer raises NotImplemented at the first backward. */
#ifndef EMBER_RNN_H
#define EMBER_RNN_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fused gates (one step, pre-activations given) -------------------- */
/* LSTM: igates, hgates (B, 4H) and cx (B, H); gates = igates + hgates split
 * into i, f, g, o: cy = sigmoid(f) cx + sigmoid(i) tanh(g), hy = sigmoid(o)
 * tanh(cy), both (B, H). */
em_status em_lstm_gates(const em_tensor *igates, const em_tensor *hgates, const em_tensor *cx, em_tensor **hy,
                        em_tensor **cy);
/* GRU: igates, hgates (B, 3H) split into r, z, n and hx (B, H):
 * r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = tanh(in + r hn),
 * hy = (1 - z) n + z hx. */
em_tensor *em_gru_gates(const em_tensor *igates, const em_tensor *hgates, const em_tensor *hx);
/* Elman RNN: tanh(igates + hgates), or relu when `relu`; igates, hgates (B, H). */
em_tensor *em_rnn_gates(const em_tensor *igates, const em_tensor *hgates, bool relu);

/* Their gradients (what the formulas run; public for tests and C users):
 * lstm: grad_gates (B, 4H) of the pre-activations (the same for igates and
 * hgates) and grad_cx (B, H); gru: grad_igates, grad_hgates (B, 3H) and
 * grad_hx (B, H); rnn: the pre-activation's gradient from hy (the output). */
em_status em_lstm_gates_backward(const em_tensor *grad_hy, const em_tensor *grad_cy, const em_tensor *igates,
                                 const em_tensor *hgates, const em_tensor *cx, em_tensor **grad_gates,
                                 em_tensor **grad_cx);
em_status em_gru_gates_backward(const em_tensor *grad_hy, const em_tensor *igates, const em_tensor *hgates,
                                const em_tensor *hx, em_tensor **grad_igates, em_tensor **grad_hgates,
                                em_tensor **grad_hx);
em_tensor *em_rnn_gates_backward(const em_tensor *grad_hy, const em_tensor *hy, bool relu);

/* ---- cells (torch.lstm_cell, ...) -------------------------------------- */
/* input (B, I), hx/cx (B, H), w_ih (G*H, I), w_hh (G*H, H), biases (G*H) or
 * NULL (G = 4 lstm, 3 gru, 1 rnn). Errors as PyTorch: "input has inconsistent
 * input_size: got 7 expected 4", "Input batch size 3 doesn't match hidden0
 * batch size 2", "hidden0 has inconsistent hidden_size: got 6, expected 5". */
em_status em_lstm_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *cx, const em_tensor *w_ih,
                       const em_tensor *w_hh, const em_tensor *b_ih, const em_tensor *b_hh, em_tensor **hy,
                       em_tensor **cy);
em_tensor *em_gru_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *w_ih, const em_tensor *w_hh,
                       const em_tensor *b_ih, const em_tensor *b_hh);
em_tensor *em_rnn_tanh_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *w_ih,
                            const em_tensor *w_hh, const em_tensor *b_ih, const em_tensor *b_hh);
em_tensor *em_rnn_relu_cell(const em_tensor *input, const em_tensor *hx, const em_tensor *w_ih,
                            const em_tensor *w_hh, const em_tensor *b_ih, const em_tensor *b_hh);

/* ---- one layer over a sequence ------------------------------------------ */
typedef enum em_rnn_mode { EM_RNN_TANH, EM_RNN_RELU, EM_RNN_LSTM, EM_RNN_GRU } em_rnn_mode;

/* One layer's weights in one direction, shaped as the cells take them; the
 * biases and w_hr (LSTM projection, (P, H): the hidden state becomes
 * hy W_hr^T, (B, P)) may be NULL. */
typedef struct em_rnn_weights {
    const em_tensor *w_ih, *w_hh, *b_ih, *b_hh, *w_hr;
} em_rnn_weights;

/* Runs one direction of one layer over a sequence: the input projection
 * of every step is one GEMM (recorded addmm), then em_rnn_recurrence (one
 * recorded op) runs the steps. The LSTM's and Elman's b_hh join b_ih in the
 * projection (the same pre-activations); the GRU's stays in the recurrence.
 *   padded (batch_sizes NULL): x (T, B, I) -> *output (T, B, Hout)
 *   packed: x (N, I), the rows of T steps, step t having batch_sizes[t] rows
 *           (non-increasing, > 0, summing to N; a PackedSequence's data)
 *           -> *output (N, Hout); a sequence's final state is taken at its
 *           own last step.
 * hx (B, Hout) and, for the LSTM, cx (B, H) are the initial states (cx NULL
 * otherwise); Hout is P with a projection, else H. `reverse` runs the steps
 * from last to first (the backward direction of a bidirectional layer).
 * *hy (B, Hout) and, for the LSTM, *cy (B, H) receive the final states (cy
 * may be NULL for the other modes). */
em_status em_rnn_layer(em_rnn_mode mode, const em_tensor *x, int64_t nsteps, const int64_t *batch_sizes,
                       const em_tensor *hx, const em_tensor *cx, const em_rnn_weights *w, bool reverse,
                       em_tensor **output, em_tensor **hy, em_tensor **cy);

/* The recurrence of one layer and direction, given the input projection:
 * igates (N, G*H) holds every row's x W_ih^T + biases (an LSTM's or Elman's
 * b_hh included: b_hh here is the GRU's only, else NULL); rows and steps as
 * em_rnn_layer's packed form, with batch_sizes NULL meaning nsteps steps of
 * B = hx's rows each (N = nsteps * B, step-major). hx (B, P), cx (B, H)
 * exactly for an LSTM, w_hh (G*H, P), w_hr (P, H) or NULL (LSTM only; else
 * P == H). Results: *output (N, P), *hy (B, P), *cy (B, H) for an LSTM
 * (NULL otherwise; cy itself may be NULL), and *workspace (may be NULL:
 * not wanted) what backward reads: the LSTM's activated gates i, f, g, o
 * and cell state per row (N, 5H), the GRU's r, z, n and hidden product
 * h W_hn^T + b_hn (N, 4H), NULL for an Elman layer. One recorded op:
 * gradients reach igates, hx, cx, w_hh, b_hh and w_hr. */
em_status em_rnn_recurrence(em_rnn_mode mode, const em_tensor *igates, int64_t nsteps, const int64_t *batch_sizes,
                            const em_tensor *hx, const em_tensor *cx, const em_tensor *w_hh, const em_tensor *b_hh,
                            const em_tensor *w_hr, bool reverse, em_tensor **output, em_tensor **hy, em_tensor **cy,
                            em_tensor **workspace);

/* Gradients of a recurrence (new references; NULL where the input is
 * absent): igates (N, G*H), hx (B, P), cx (B, H), w_hh (G*H, P), b_hh (G*H),
 * w_hr (P, H). */
typedef struct em_rnn_grads {
    em_tensor *igates, *hx, *cx, *w_hh, *b_hh, *w_hr;
} em_rnn_grads;

/* Backpropagation through time of em_rnn_recurrence, what its formula runs
 * (public for tests and C users): from the gradients of output, hy and cy
 * (any may be NULL: zeros) and the forward's output and workspace, with the
 * forward's arguments (with_b_hh: the GRU had a b_hh, whose gradient is
 * wanted). Per step one pass over the gates and one GEMM for the carried
 * state's gradient; dW_hh and dW_hr are one GEMM each over all steps.
 * Not differentiable: called on tensors that require grad in grad mode it
 * fails with EM_ERR_NOT_IMPLEMENTED. */
em_status em_rnn_recurrence_backward(em_rnn_mode mode, const em_tensor *grad_output, const em_tensor *grad_hy,
                                     const em_tensor *grad_cy, const em_tensor *output, const em_tensor *workspace,
                                     int64_t nsteps, const int64_t *batch_sizes, const em_tensor *hx,
                                     const em_tensor *cx, const em_tensor *w_hh, bool with_b_hh,
                                     const em_tensor *w_hr, bool reverse, em_rnn_grads *grads);

#ifdef __cplusplus
}
#endif
#endif
