/* Shared by the rnn op layer (rnn.c) and the sequence layer (rnn_layer.c). */
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

#endif
