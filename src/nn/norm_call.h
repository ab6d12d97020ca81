/* The em_call layout of the normalization ops, shared by the op layer
 * (src/nn/norm*.c) and every device's kernels (src/cpu/norm*.c).
 *
 * The op layer hands kernels contiguous tensors of one float dtype (float32
 * or float64), weight and bias always present (ones and zeros stand in for
 * absent ones), and outputs allocated contiguous.
 *
 * batch_norm:          in  {x (N, C, S), weight (C), bias (C)}
 *                      out {y, save_mean (C), save_invstd (C)}
 *                      i {N, C, S, training}, f {momentum, eps},
 *                      arg: const norm_running * (running stats, either may be NULL)
 * batch_norm_backward: in  {grad_out, x, weight, save_mean, save_invstd}
 *                      out {grad_input, grad_weight, grad_bias} (NULL: not wanted)
 *                      i {N, C, S, training}
 * layer_norm, group_norm: rows of L = K * S contiguous elements normalized
 *                      each on its own; row r's K channels of S elements take
 *                      weight[(r % G) * K + k] (layer norm: G = 1, S = 1, K = L).
 *                      in {x, weight (G*K), bias (G*K)}, out {y, mean (R), rstd (R)}
 *                      i {R, G, K, S}, f {eps}
 * *_backward (rows):   in {grad_out, x, mean, rstd, weight}, out {grad_input,
 *                      grad_weight, grad_bias} (NULL: not wanted), i {R, G, K, S} */
#ifndef EMBER_NN_NORM_CALL_H
#define EMBER_NN_NORM_CALL_H

#include "../ops/dispatch.h"

/* batch_norm's running statistics: read in eval mode, updated in place in
 * training mode (the kernel writes them; they are no inputs of the call, so
 * autograd neither records nor saves them). Any layout, C elements each. */
typedef struct norm_running {
    em_tensor *mean, *var;
} norm_running;

#endif
