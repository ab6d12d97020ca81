/* Ember's fused losses: the hand-declared C API of the EM_OP entries in
 * ops/loss.def. PyTorch 1.13 semantics (torch.nn.functional's losses).
 *
 * Conventions (besides core.h's: new references returned, tensors borrowed):
 * - `reduction` is PyTorch's enum: EM_REDUCTION_NONE gives the per-element
 *   losses, MEAN their mean (an empty input gives NaN), SUM their sum; the
 *   reduced results are 0-d. The kernels reduce in double.
 * - Inputs are float32 or float64 (bfloat16 computes in float32 where
 *   PyTorch has a bfloat16 kernel, float16 likewise for mse/l1/smooth_l1/
 *   huber as PyTorch). Other dtypes: EM_ERR_DTYPE naming PyTorch's kernel.
 * - An optional tensor argument is NULL when absent.
 * - Errors: EM_ERR_SHAPE for shapes that do not fit, EM_ERR_VALUE for
 *   PyTorch's ValueErrors (a batch-size mismatch, a BCE target of another
 *   size), EM_ERR_INDEX for a class index out of range, EM_ERR_DTYPE for a
 *   wrong target/weight dtype ("expected scalar type Long but found Float"). */
#ifndef EMBER_LOSS_H
#define EMBER_LOSS_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum em_reduction { EM_REDUCTION_NONE = 0, EM_REDUCTION_MEAN = 1, EM_REDUCTION_SUM = 2 } em_reduction;

/* ---- regression losses ----------------------------------------------------
 * input and target broadcast (PyTorch warns about it in Python) and promote
 * to a float dtype. Gradients reach both. mse: (x - y)^2; l1: |x - y|;
 * smooth_l1: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta >= 0,
 * 0 is l1); huber: 0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta)
 * (delta > 0). A bad beta/delta is EM_ERR_RUNTIME (as PyTorch). */
em_tensor *em_mse_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction);
em_tensor *em_l1_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction);
em_tensor *em_smooth_l1_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction, double beta);
em_tensor *em_huber_loss(const em_tensor *input, const em_tensor *target, em_reduction reduction, double delta);

/* ---- binary cross entropy --------------------------------------------------
 * binary_cross_entropy: -w (y log x + (1 - y) log(1 - x)), each log clamped
 * at -100; input, target the same shape and dtype, input values in [0, 1]
 * (else EM_ERR_RUNTIME "all elements of input should be between 0 and 1");
 * weight broadcasts to the input. with_logits: the same of sigmoid(x) in the
 * stable form, pos_weight (broadcast along the last dim) weighting the
 * positive term. Gradients reach input and target; a weight or pos_weight
 * that requires grad is refused (EM_ERR_RUNTIME), as in PyTorch. */
em_tensor *em_binary_cross_entropy(const em_tensor *input, const em_tensor *target, const em_tensor *weight,
                                   em_reduction reduction);
em_tensor *em_binary_cross_entropy_with_logits(const em_tensor *input, const em_tensor *target,
                                               const em_tensor *weight, const em_tensor *pos_weight,
                                               em_reduction reduction);

/* ---- class losses over indices ---------------------------------------------
 * input (C), (N, C) or (N, C, d1, ..., dk); target int64 of shape (), (N) or
 * (N, d1, ..., dk) with values in [0, C) or ignore_index; weight (C) of the
 * input's dtype rescales each class. The loss of an element is -w[t] * the
 * input's picked entry (nll_loss: input holds log-probabilities) or of its
 * log-softmax over C (cross_entropy, fused: the log-softmax is never
 * materialised). Ignored elements give 0; MEAN divides the sum by the sum of
 * w[t] over the elements not ignored (NaN when all are ignored). Gradients
 * reach the input only; a weight that requires grad is refused. */
em_tensor *em_nll_loss(const em_tensor *input, const em_tensor *target, const em_tensor *weight,
                       em_reduction reduction, int64_t ignore_index);
em_tensor *em_cross_entropy(const em_tensor *input, const em_tensor *target, const em_tensor *weight,
                            em_reduction reduction, int64_t ignore_index);
/* The backward ops (what autograd runs; public for C programs that write
 * their own training step). grad: the loss's gradient (its shape);
 * total_weight: the 0-d sum of weights the forward divided by (MEAN), any
 * value otherwise. nll_loss_backward gives -w[t] grad / total at each picked
 * entry, 0 elsewhere; cross_entropy_backward gives (softmax(x) - onehot(t))
 * w[t] grad / total, reading lse (the rows' log-sum-exp, target's shape). */
em_tensor *em_nll_loss_backward(const em_tensor *grad, const em_tensor *input, const em_tensor *target,
                                const em_tensor *weight, em_reduction reduction, int64_t ignore_index,
                                const em_tensor *total_weight);
em_tensor *em_cross_entropy_backward(const em_tensor *grad, const em_tensor *input, const em_tensor *target,
                                     const em_tensor *weight, em_reduction reduction, int64_t ignore_index,
                                     const em_tensor *lse, const em_tensor *total_weight);

/* ---- CTC -------------------------------------------------------------------
 * Connectionist temporal classification: log_probs (T, N, C) or (T, C)
 * (log-softmax outputs, float32/float64); targets (N, S) padded or 1-D
 * concatenated (sum of target_lengths), integral; input_lengths and
 * target_lengths: N (or for (T, C): 1 or 0-d) integral lengths, each input
 * length <= T, each target length <= S (padded form). The per-sample loss is
 * -log p(target | input); NONE gives them (shape (N), or () for (T, C)),
 * MEAN divides each by its target length (at least 1) and averages, SUM
 * sums. zero_infinity: infinite losses (impossible alignments) and their
 * gradients become 0. Gradients reach log_probs. */
em_tensor *em_ctc_loss(const em_tensor *log_probs, const em_tensor *targets, const em_tensor *input_lengths,
                       const em_tensor *target_lengths, int64_t blank, em_reduction reduction, bool zero_infinity);
/* The ops under em_ctc_loss (batched form): nll (N) and log_alpha
 * (N, T, 2 max S + 1) from log_probs (T, N, C), targets (N, S) padded or 1-D
 * concatenated, lengths (2, N) int64 (input lengths, target lengths);
 * and the gradient of sum(grad * nll) w.r.t. log_probs. New references in
 * *nll, *log_alpha. */
em_status em_ctc_loss_raw(const em_tensor *log_probs, const em_tensor *targets, const em_tensor *lengths,
                          int64_t blank, bool zero_infinity, em_tensor **nll, em_tensor **log_alpha);
em_tensor *em_ctc_loss_backward(const em_tensor *grad, const em_tensor *log_probs, const em_tensor *targets,
                                const em_tensor *lengths, const em_tensor *nll, const em_tensor *log_alpha,
                                int64_t blank, bool zero_infinity);

#ifdef __cplusplus
}
#endif
#endif
