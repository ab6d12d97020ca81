/* Ember's nn activations, dropout, embedding and distances: the hand-declared
 * C API of the EM_OP entries in ops/nnact.def and the composites built on
 * them (PyTorch 1.13's torch.nn.functional semantics). threshold, hardshrink,
 * softshrink, threshold_backward and gelu_backward are pointwise:
 * em_threshold(x, threshold, value), em_threshold_backward(grad, x, threshold),
 * em_gelu_backward(grad, x, approximate) etc. come from the table (ops.h).
 *
 * Conventions as core.h: results are new references, arguments borrowed,
 * NULL / nonzero status on failure with nothing changed. Random ops take an
 * em_generator (NULL: the default one); see random.h. */
#ifndef EMBER_NNACT_H
#define EMBER_NNACT_H

#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- activations ----------------------------------------------------------- */
/* prelu: x > 0 ? x : w * x, with weight w of 1 value or of C = x.size(1) values
 * broadcast along dim 1 (a 0-d or 1-d x has one channel). x and w floating, of
 * one dtype. RuntimeError when w is not 0-d/1-d or its size fits neither. */
em_tensor *em_prelu(const em_tensor *x, const em_tensor *weight);
/* glu: a * sigmoid(b) where a, b are the first and second halves of x along
 * dim (whose size must be even); floating x. */
em_tensor *em_glu(const em_tensor *x, int dim);
/* rrelu: x >= 0 ? x : slope * x. training: each slope drawn uniformly from
 * [lower, upper] (lower <= upper), the product recorded as x * noise so that
 * the backward uses the same slopes; eval: the slope (lower + upper) / 2.
 * em_rrelu_ writes x in place. */
em_tensor *em_rrelu(const em_tensor *x, double lower, double upper, bool training, em_generator *g);
em_status em_rrelu_(em_tensor *x, double lower, double upper, bool training, em_generator *g);
/* The slopes rrelu draws: x's shape and dtype, 1 where x > 0, a uniform draw in
 * [lower, upper) elsewhere. Not differentiable. */
em_tensor *em_rrelu_noise(const em_tensor *x, double lower, double upper, em_generator *g);
/* softsign x / (1 + |x|), tanhshrink x - tanh(x): composites. */
em_tensor *em_softsign(const em_tensor *x);
em_tensor *em_tanhshrink(const em_tensor *x);

/* ---- dropout ------------------------------------------------------------------ */
/* The fused op: a Bernoulli(1 - p) mask drawn from g, *out = x * mask / (1 - p)
 * (zeros when p == 1) and *mask (bool, x's shape; may be NULL when not
 * wanted). p in [0, 1] (ValueError otherwise); floating x. Differentiable:
 * the backward is grad * mask / (1 - p). */
em_status em_native_dropout(const em_tensor *x, double p, em_generator *g, em_tensor **out, em_tensor **mask);
/* dropout(x, p, train): the fused op when train, else x itself (a new
 * reference to it). em_dropout_ writes x in place (x unchanged when !train). */
em_tensor *em_dropout(const em_tensor *x, double p, bool train, em_generator *g);
em_status em_dropout_(em_tensor *x, double p, bool train, em_generator *g);
/* feature_dropout: whole channels (dim 1; every dim past 1 shares one draw)
 * of an input of >= 2 dims (the batch dim is 0). alpha_dropout keeps SELU's
 * mean and variance: dropped values become -alpha' then a * y + b.
 * feature_alpha_dropout does that per channel. All return x itself when
 * !train or p == 0. */
em_tensor *em_feature_dropout(const em_tensor *x, double p, bool train, em_generator *g);
em_tensor *em_alpha_dropout(const em_tensor *x, double p, bool train, em_generator *g);
em_tensor *em_feature_alpha_dropout(const em_tensor *x, double p, bool train, em_generator *g);

/* ---- embedding ----------------------------------------------------------------- */
/* Rows of weight (V, D) at indices (int64 or int32, any shape): the result
 * has shape indices.shape + [D] and weight's dtype. padding_idx (< 0: none,
 * else in [0, V)) rows get no gradient; scale_grad_by_freq divides each
 * row's gradient by how often its index occurs in `indices`.
 * IndexError "index out of range in self" for an index outside [0, V). */
em_tensor *em_embedding(const em_tensor *weight, const em_tensor *indices, int64_t padding_idx,
                        bool scale_grad_by_freq);
/* The gradient of weight for em_embedding: grad (indices.shape + [D]) rows
 * summed into a (num_weights, D) tensor, same rules. */
em_tensor *em_embedding_dense_backward(const em_tensor *grad, const em_tensor *indices, int64_t num_weights,
                                       int64_t padding_idx, bool scale_grad_by_freq);
/* In place, not recorded (call with grad mode off when weight requires grad,
 * as PyTorch): every row of weight named by indices whose norm_type-norm
 * exceeds max_norm is scaled by max_norm / (norm + 1e-7). */
em_status em_embedding_renorm_(em_tensor *weight, const em_tensor *indices, double max_norm, double norm_type);

/* embedding_bag: sums, means or maxima (mode EM_BAG_SUM / MEAN / MAX) of the
 * weight (V, D) rows named by each bag of indices (1-d, int64 or int32).
 * offsets (1-d, integer) start the bags: offsets[0] == 0, non-decreasing,
 * at most N; B = numel(offsets) bags, or numel - 1 when include_last_offset
 * (then offsets[-1], the end of the last bag, must be N). Entries equal to
 * padding_idx (< 0: none) are skipped: a mean divides by the non-padding
 * count, an empty bag gives zeros. per_sample_weights (N values of weight's
 * dtype, or NULL) scale each row, sum mode only. scale_grad_by_freq divides
 * each row's gradient by its index's count (sum and mean, as PyTorch).
 * Floating weight (float16 computes through float32). *out (B, D); the other
 * outputs (each may be NULL when not wanted) are PyTorch's: *offset2bag (N,
 * the bag of each entry), *bag_size (B: non-padding counts; zeros in sum
 * mode), *max_indices ((B, D) argmax rows in max mode, else bag_size's
 * values). RuntimeError for bad offsets or an index outside [0, V). */
enum { EM_BAG_SUM, EM_BAG_MEAN, EM_BAG_MAX };
em_status em_embedding_bag(const em_tensor *weight, const em_tensor *indices, const em_tensor *offsets, int mode,
                           const em_tensor *per_sample_weights, bool include_last_offset, int64_t padding_idx,
                           bool scale_grad_by_freq, em_tensor **out, em_tensor **offset2bag, em_tensor **bag_size,
                           em_tensor **max_indices);
/* The weight gradient (num_weights, D) of em_embedding_bag from grad (B, D)
 * and the forward's indices, offset2bag, bag_size, per_sample_weights (sum
 * mode, or NULL) and max_indices (max mode, else NULL). */
em_tensor *em_embedding_bag_backward(const em_tensor *grad, const em_tensor *indices, const em_tensor *offset2bag,
                                     const em_tensor *bag_size, const em_tensor *per_sample_weights,
                                     const em_tensor *max_indices, int64_t num_weights, int mode,
                                     int64_t padding_idx, bool scale_grad_by_freq);

/* pdist: the p-norm distances (p >= 0) between the rows of x (N, M, floating),
 * pairs i < j in row-major order: a tensor of N (N - 1) / 2 values. A
 * composite of recorded ops; the gradient is 0 at a zero distance. */
em_tensor *em_pdist(const em_tensor *x, double p);

/* ---- distances -------------------------------------------------------------------- */
/* cosine_similarity along dim of x1, x2 broadcast together:
 * sum(x1 x2) / sqrt(max(|x1|^2 |x2|^2, eps^2)). Floating result. */
em_tensor *em_cosine_similarity(const em_tensor *x1, const em_tensor *x2, int dim, double eps);
/* pairwise_distance: the p-norm of x1 - x2 + eps over the last dim. */
em_tensor *em_pairwise_distance(const em_tensor *x1, const em_tensor *x2, double p, double eps, bool keepdim);

#ifdef __cplusplus
}
#endif
#endif
