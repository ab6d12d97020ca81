/* Ember's reductions, scans and softmax: the hand-declared C API of the
 * EM_OP entries in ops/reduce.def. PyTorch 1.13 semantics throughout.
 *
 * Conventions (besides core.h's: new references returned, tensors borrowed):
 * - `ndims, dims` name the reduced dims (negative counts from the end, each
 *   at most once); ndims == 0 reduces every dim (PyTorch's dim=None or ()).
 *   A 0-d tensor accepts dim 0 or -1.
 * - keepdim keeps each reduced dim with size 1.
 * - `dtype` (EM_DTYPE_NONE: not given) converts the input before computing,
 *   and is the result's dtype.
 * - *_out(out, ...) writes into `out`, resized when its shape differs. Where
 *   PyTorch derives the compute dtype from out (sum, mean, prod, norm, cumsum)
 *   so does Ember; otherwise out's dtype must be the result's (or one PyTorch
 *   accepts, noted below). On error `out` is unchanged.
 * - Ops returning values and indices fill *values and *indices (new
 *   references; both NULL on error) and return the status.
 * - Errors: dims out of range EM_ERR_INDEX; a repeated dim EM_ERR_RUNTIME;
 *   an unsupported dtype EM_ERR_DTYPE ("\"sum_cpu\" not implemented for 'Bool'");
 *   max-like reductions over an empty dim EM_ERR_INDEX. Float16/bfloat16
 *   inputs compute in float32. */
#ifndef EMBER_REDUCE_H
#define EMBER_REDUCE_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sums and products ------------------------------------------------
 * sum, nansum (NaN counts as 0), prod: integral and bool inputs give int64
 * (wrapping on overflow); float sums are pairwise (accurate to a few ulps).
 * mean: float inputs, or any input with a float dtype=; nanmean (mean of
 * the non-NaN elements): float inputs only. An empty reduction gives 0
 * (sum), 1 (prod), NaN (mean). prod rejects float16 and bfloat16, as
 * PyTorch 1.13 does. */
em_tensor *em_sum(const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_tensor *em_nansum(const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_tensor *em_mean(const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_tensor *em_nanmean(const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_tensor *em_prod(const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_status em_sum_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_status em_nansum_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_status em_mean_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_status em_nanmean_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim,
                         em_dtype dtype);
em_status em_prod_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype);

/* ---- extrema ------------------------------------------------------------
 * NaN propagates (a NaN is the max and the min). Result dtype: x's.
 * em_max/em_min: of every element (a 0-d result); x must be nonempty.
 * em_amax/em_amin: over dims; each reduced dim must be nonempty. */
em_tensor *em_max(const em_tensor *x);
em_tensor *em_min(const em_tensor *x);
em_tensor *em_amax(const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_tensor *em_amin(const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_status em_amax_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_status em_amin_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim);

/* ---- logical --------------------------------------------------------------
 * all/any: is every / some element nonzero (NaN is nonzero). The result is
 * bool, or uint8 for a uint8 input (as PyTorch 1.13); out may be bool or
 * uint8. count_nonzero: int64 counts (PyTorch has no keepdim there). */
em_tensor *em_all(const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_tensor *em_any(const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_status em_all_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_status em_any_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_tensor *em_count_nonzero(const em_tensor *x, int ndims, const int *dims);

/* ---- along one dim, with indices ----------------------------------------
 * max/min along dim: values (x's dtype) and int64 indices of the first
 * extreme element (a NaN wins, the first NaN among NaNs). The dim must be
 * nonempty. out=: exact dtypes (x's, int64). */
em_status em_max_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices);
em_status em_min_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices);
em_status em_max_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim);
em_status em_min_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim);
/* argmax/argmin: int64 index along *dim, or (dim NULL) into the flattened
 * x in row-major order (keepdim then keeps every dim with size 1). Bool
 * inputs are rejected, as PyTorch does. */
em_tensor *em_argmax(const em_tensor *x, const int *dim, bool keepdim);
em_tensor *em_argmin(const em_tensor *x, const int *dim, bool keepdim);
em_status em_argmax_out(em_tensor *out, const em_tensor *x, const int *dim, bool keepdim);
em_status em_argmin_out(em_tensor *out, const em_tensor *x, const int *dim, bool keepdim);

/* ---- variance and norms ------------------------------------------------------
 * var/std divide the sum of squared deviations from the mean (two passes:
 * stable for large means) by max(0, N - correction); correction 1 is
 * PyTorch's unbiased=True, 0 its unbiased=False. Float inputs only.
 * var_mean/std_mean also return the mean. out= accepts any float dtype. */
em_tensor *em_var(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim);
em_tensor *em_std(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim);
em_status em_var_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim);
em_status em_std_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim);
em_status em_var_mean(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim,
                      em_tensor **var, em_tensor **mean);
em_status em_std_mean(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim,
                      em_tensor **std, em_tensor **mean);
/* The vector p-norm over dims: p = 2, 1, INFINITY (max |x|), -INFINITY (min
 * |x|; 0 when empty), 0 (count of nonzeros) or any other p (sum |x|^p)^(1/p).
 * Float inputs only; dtype (a float dtype) converts first. */
em_tensor *em_norm(const em_tensor *x, double p, int ndims, const int *dims, bool keepdim, em_dtype dtype);
em_status em_norm_out(em_tensor *out, const em_tensor *x, double p, int ndims, const int *dims, bool keepdim,
                      em_dtype dtype);
/* log(sum(exp(x))) over dims, stable (the max is subtracted first; an
 * infinite max is not). Integral and bool inputs give the default float
 * dtype; float16 is rejected (as PyTorch 1.13). out= takes a float dtype. */
em_tensor *em_logsumexp(const em_tensor *x, int ndims, const int *dims, bool keepdim);
em_status em_logsumexp_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim);

/* ---- scans along a dim (results of x's shape) ------------------------------
 * cumsum/cumprod: integral and bool inputs give int64; floats accumulate in
 * double. float16 and bool results are rejected (as PyTorch 1.13). The _
 * forms work in place (dtype must be NONE or self's). */
em_tensor *em_cumsum(const em_tensor *x, int dim, em_dtype dtype);
em_tensor *em_cumprod(const em_tensor *x, int dim, em_dtype dtype);
em_status em_cumsum_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype);
em_status em_cumprod_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype);
em_status em_cumsum_(em_tensor *self, int dim, em_dtype dtype);
em_status em_cumprod_(em_tensor *self, int dim, em_dtype dtype);
/* cummax/cummin: running extreme and the index where it was last taken (a
 * NaN sticks, an equal element takes over). Not float16. */
em_status em_cummax(const em_tensor *x, int dim, em_tensor **values, em_tensor **indices);
em_status em_cummin(const em_tensor *x, int dim, em_tensor **values, em_tensor **indices);
em_status em_cummax_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim);
em_status em_cummin_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim);
/* log(cumsum(exp(x))), stable; float32, float64 and bfloat16 only. */
em_tensor *em_logcumsumexp(const em_tensor *x, int dim);
em_status em_logcumsumexp_out(em_tensor *out, const em_tensor *x, int dim);

/* ---- selection -----------------------------------------------------------------
 * median: the lower median (element (n - 1) / 2 in sorted order); NaN if
 * any element is NaN. nanmedian ignores NaNs (NaN if all are). Of every
 * element (NaN when empty) or along dim with the index of the median's
 * first occurrence (PyTorch leaves which one unspecified). Not bool/float16.
 * mode: the most frequent value along dim (the smallest on ties; each NaN
 * counts alone) and the index of its last occurrence. */
em_tensor *em_median(const em_tensor *x);
em_tensor *em_nanmedian(const em_tensor *x);
em_status em_median_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices);
em_status em_nanmedian_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices);
em_status em_mode(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices);
em_status em_median_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim);
em_status em_nanmedian_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim);
em_status em_mode_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim);

/* ---- softmax ---------------------------------------------------------------------
 * exp(x) / sum(exp(x)) along dim, and its log, stable (max subtracted).
 * dtype converts x first; float32, float64 and bfloat16 only (PyTorch 1.13).
 * out=: exact dtype. */
em_tensor *em_softmax(const em_tensor *x, int dim, em_dtype dtype);
em_tensor *em_log_softmax(const em_tensor *x, int dim, em_dtype dtype);
em_status em_softmax_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype);
em_status em_log_softmax_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
