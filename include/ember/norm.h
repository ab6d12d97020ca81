/* Ember's normalization, dropout, embedding: the hand-declared C API of the
 * EM_OP entries in ops/norm.def.
 *
 * Normalization follows PyTorch 1.13: float32, float64 and bfloat16 inputs
 * (bfloat16 computes in float32); weight, bias and running statistics, when
 * given, have the input's dtype. Statistics use the biased variance and are
 * computed stably (chunk means and squared deviations, merged pairwise), so a
 * large common offset does not cost precision. Non-contiguous inputs are
 * accepted (copied to contiguous first). Results are new references; NULL or a
 * nonzero status with em_last_error() on failure, nothing modified. */
#ifndef EMBER_NORM_H
#define EMBER_NORM_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- batch norm ------------------------------------------------------------
 * x: (N, C, *) with ndim >= 2; weight, bias, running_mean, running_var: NULL
 * or C elements. training: normalize with the batch's mean and biased
 * variance over every dim but 1, and, when given, update the running stats in
 * place (not recorded by autograd): r = (1 - momentum) * r + momentum * s,
 * with the unbiased variance for running_var. Otherwise (eval) normalize with
 * the running stats, which must then be given.
 * y = (x - mean) / sqrt(var + eps) * weight + bias. */
em_tensor *em_batch_norm(const em_tensor *x, const em_tensor *weight, const em_tensor *bias,
                         em_tensor *running_mean, em_tensor *running_var, bool training, double momentum,
                         double eps);
/* The same, also returning the statistics the backward reads: out[0] = y,
 * out[1] = save_mean (C,), out[2] = save_invstd (C,) = 1 / sqrt(var + eps)
 * (in eval mode those of the running stats). Three new references. */
em_status em_native_batch_norm(em_tensor **out, const em_tensor *x, const em_tensor *weight,
                               const em_tensor *bias, em_tensor *running_mean, em_tensor *running_var,
                               bool training, double momentum, double eps);
/* Gradients of batch norm from grad_out (x's shape) and the forward's saved
 * statistics: grads[0..2] = input, weight, bias, each computed only where
 * mask[k] (else set to NULL). weight NULL means ones. training says whether
 * the statistics depended on x. */
em_status em_batch_norm_backward(em_tensor **grads, const bool *mask, const em_tensor *grad_out,
                                 const em_tensor *x, const em_tensor *weight, const em_tensor *save_mean,
                                 const em_tensor *save_invstd, bool training);

/* ---- layer norm --------------------------------------------------------------
 * Normalizes over the last `nnorm` dims of x, which must equal
 * normalized_shape; weight and bias (NULL or normalized_shape) apply
 * elementwise. */
em_tensor *em_layer_norm(const em_tensor *x, int nnorm, const int64_t *normalized_shape,
                         const em_tensor *weight, const em_tensor *bias, double eps);
/* out[0] = y, out[1] = mean, out[2] = rstd; mean and rstd have x's leading
 * dims and size 1 in the normalized ones. */
em_status em_native_layer_norm(em_tensor **out, const em_tensor *x, int nnorm, const int64_t *normalized_shape,
                               const em_tensor *weight, const em_tensor *bias, double eps);
/* grads[0..2] = input, weight, bias where mask[k], from the saved mean and rstd. */
em_status em_layer_norm_backward(em_tensor **grads, const bool *mask, const em_tensor *grad_out,
                                 const em_tensor *x, int nnorm, const int64_t *normalized_shape,
                                 const em_tensor *mean, const em_tensor *rstd, const em_tensor *weight);

/* ---- group norm --------------------------------------------------------------
 * x: (N, C, *) with ndim >= 2, C divisible by num_groups > 0; statistics over
 * each group of C / num_groups channels (and every spatial element) of each
 * sample; weight and bias (NULL or C elements) per channel. */
em_tensor *em_group_norm(const em_tensor *x, int64_t num_groups, const em_tensor *weight,
                         const em_tensor *bias, double eps);
/* out[0] = y, out[1] = mean (N, num_groups), out[2] = rstd (N, num_groups). */
em_status em_native_group_norm(em_tensor **out, const em_tensor *x, int64_t num_groups,
                               const em_tensor *weight, const em_tensor *bias, double eps);
em_status em_group_norm_backward(em_tensor **grads, const bool *mask, const em_tensor *grad_out,
                                 const em_tensor *x, const em_tensor *mean, const em_tensor *rstd,
                                 const em_tensor *weight, int64_t num_groups);

/* ---- composites ----------------------------------------------------------------
 * Instance norm: x (N, C, *), ndim >= 2: batch norm of each (sample, channel)
 * over its spatial elements (use_input_stats), or with the running stats
 * (C elements) otherwise; when using input stats, the given running stats
 * are updated with the mean over the batch of the per-sample updates. */
em_tensor *em_instance_norm(const em_tensor *x, const em_tensor *weight, const em_tensor *bias,
                            em_tensor *running_mean, em_tensor *running_var, bool use_input_stats,
                            double momentum, double eps);
/* Local response norm across channels (dim 1 of x, ndim >= 3):
 * x / (k + alpha * mean(x^2 over a window of `size` channels, zero-padded:
 * size / 2 before, (size - 1) / 2 after)) ^ beta. */
em_tensor *em_local_response_norm(const em_tensor *x, int64_t size, double alpha, double beta, double k);

#ifdef __cplusplus
}
#endif
#endif
