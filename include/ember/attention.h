/* Ember's scaled dot-product attention: the hand-declared C API of the
 * EM_OP entries in ops/attention.def.
 *
 * Conventions (as core.h): functions returning em_tensor * return a NEW
 * reference (NULL on error); tensor arguments are borrowed; the em_status
 * forms fill their em_tensor ** results with new references on success and
 * leave them untouched on failure.
 *
 * Arguments shared by every function here:
 *   q (..., L, E), k (..., S, E), v (..., S, Ev): float32 or float64, all of
 *     one dtype; at least 2-d; their batch dims (...) broadcast (matmul's
 *     rule) to the result's batch shape B.
 *   attn_mask: NULL, or a mask broadcastable to (B..., L, S): bool (true =
 *     the query attends to that key, as torch 2.x's
 *     F.scaled_dot_product_attention), or a float mask of q's dtype added to
 *     the scaled scores.
 *   is_causal: query i attends to keys j <= i (the top-left aligned lower
 *     triangle, as torch 2.0); an error together with attn_mask.
 *   scale: the factor of q k^T; NAN means 1/sqrt(E) (1 when E == 0).
 * Fully masked rows (a query that attends to no key, S == 0 included) give
 * zeros, a log-sum-exp of -inf and zero gradients. PyTorch's composite gives
 * NaN there; zeros keep a padded batch finite.
 * Errors: a dtype other than float32/float64 or mismatched dtypes
 * (EM_ERR_DTYPE), mismatched E or S, batch dims that do not broadcast, a
 * mask that does not broadcast to (B..., L, S) (EM_ERR_SHAPE), a mask with
 * is_causal (EM_ERR_RUNTIME).
 *
 * Autograd: scaled_dot_product_attention's formula runs the fused backward
 * op; under create_graph, or when a float mask requires grad, it differentiates
 * the composite (attention_weights) instead, so second derivatives work there.
 * The backward op itself has no derivative (NotImplemented when recorded). */
#ifndef EMBER_ATTENTION_H
#define EMBER_ATTENTION_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* softmax(q k^T * scale + mask) @ v, computed flash-style: tiles of queries
 * against tiles of keys with an online softmax, never the (L, S) matrix.
 * Result (B..., L, Ev), q's dtype. No dropout (see attention_weights). */
em_tensor *em_scaled_dot_product_attention(const em_tensor *q, const em_tensor *k, const em_tensor *v,
                                           const em_tensor *attn_mask, bool is_causal, double scale);
/* The same, also giving each query row's log-sum-exp of its masked scaled
 * scores, (B..., L) in q's dtype: what the backward op reads. */
em_status em_scaled_dot_product_attention_lse(const em_tensor *q, const em_tensor *k, const em_tensor *v,
                                              const em_tensor *attn_mask, bool is_causal, double scale,
                                              em_tensor **out, em_tensor **lse);
/* The gradients of scaled_dot_product_attention for grad_out (B..., L, Ev)
 * and grad_lse (B..., L) (NULL: lse not used), given its result `out` and
 * `lse` (from ..._lse with the same arguments): the probabilities are
 * recomputed tile by tile. dq (B..., L, E), dk
 * (B..., S, E), dv (B..., S, Ev) have the broadcast batch shape (sum them
 * over the dims an input was broadcast along). No derivative of its own:
 * NotImplemented while recording with an input that requires grad. */
em_status em_scaled_dot_product_attention_backward(const em_tensor *grad_out, const em_tensor *grad_lse,
                                                   const em_tensor *q,
                                                   const em_tensor *k, const em_tensor *v, const em_tensor *out,
                                                   const em_tensor *lse, const em_tensor *attn_mask, bool is_causal,
                                                   double scale, em_tensor **dq, em_tensor **dk, em_tensor **dv);
/* The attention probabilities softmax(q k^T * scale + mask), (B..., L, S),
 * written with recorded ops (matmul, masked_fill, softmax), so it is
 * differentiable any number of times. Fully masked rows are zeros. The
 * composite path of attention with dropout, and of need_weights. */
em_tensor *em_attention_weights(const em_tensor *q, const em_tensor *k, const em_tensor *attn_mask, bool is_causal,
                                double scale);

#ifdef __cplusplus
}
#endif
#endif
