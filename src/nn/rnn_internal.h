/* Shared by the rnn op layer (rnn.c), the sequence layer (rnn_layer.c) and
 * the sequence kernels (src/cpu/rnn_seq.c). */
#ifndef EMBER_NN_RNN_INTERNAL_H
#define EMBER_NN_RNN_INTERNAL_H

#include "ember/rnn.h"

/* PyTorch's checks of a cell's arguments (G gates), with PyTorch's messages:
 * input (B, I), hx (B, P) and cx (B, H) (either may be NULL: not checked),
 * w_ih (G*H, I), w_hh (G*H, P), biases (G*H), w_hr (P, H) if given (else
 * P = H); one float dtype. */
em_status em_rnn_check_cell(const char *op, int G, const em_tensor *input, const em_tensor *hx,
                            const em_tensor *cx, const em_rnn_weights *w);
/* x w_t + b (addmm), or x w_t when b is NULL: a new reference. */
em_tensor *em_rnn_project(const em_tensor *x, const em_tensor *w_t, const em_tensor *b);

/* The operands of rnn_recurrence_backward that do not fit em_call's in[]
 * and out[] (its `arg`): the forward's initial states, projection and
 * batch sizes (NULL: padded), and two more results (NULL: not wanted). */
typedef struct em_rnn_backward_arg {
    const em_tensor *hx, *cx, *w_hr;
    const int64_t *batch_sizes;
    em_tensor *grad_b_hh, *grad_w_hr;
} em_rnn_backward_arg;

/* The gate count of each mode (4 LSTM, 3 GRU, 1 Elman) and the workspace
 * width of rnn_recurrence in units of H (0: it keeps none). */
static const int em_rnn_gates_of[] = {[EM_RNN_TANH] = 1, [EM_RNN_RELU] = 1, [EM_RNN_LSTM] = 4, [EM_RNN_GRU] = 3};
static const int em_rnn_workspace_of[] = {[EM_RNN_TANH] = 0, [EM_RNN_RELU] = 0, [EM_RNN_LSTM] = 5,
                                          [EM_RNN_GRU] = 4};

#endif
