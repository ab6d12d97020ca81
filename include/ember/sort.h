/* Ember's sort ops: the hand-declared C API of the EM_OP entries in ops/sort.def
 * (sorting, selection, unique, searching and histograms), as in PyTorch 1.13.
 *
 * Common contract:
 * - Functions with several results fill the caller's pointers with NEW
 *   references and return EM_OK; on failure they return the error code,
 *   set every result pointer they were given to NULL and leak nothing.
 * - out= forms write into caller tensors (resized when their shape differs,
 *   PyTorch's out= semantics); a failure leaves them unchanged.
 * - Ordering: NaN compares larger than every number (also +inf), -0.0 equals
 *   0.0, and sorts are stable: equal values keep their input order (for
 *   descending sorts too), so results do not depend on the thread count.
 * - Index results are int64 unless out_int32 says otherwise. */
#ifndef EMBER_SORT_H
#define EMBER_SORT_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sorting and selection --------------------------------------------
 * Any dtype for sort/argsort/msort; topk and kthvalue reject bool and
 * float16 (as PyTorch's CPU kernels). A 0-d input counts as one element.
 * `stable` is accepted for PyTorch's signature: every sort here is stable. */
em_status em_sort(const em_tensor *t, int dim, bool descending, bool stable, em_tensor **values,
                  em_tensor **indices);
/* values must have t's dtype, indices int64 (values may be t itself). */
em_status em_sort_out(em_tensor *values, em_tensor *indices, const em_tensor *t, int dim, bool descending,
                      bool stable);
em_tensor *em_argsort(const em_tensor *t, int dim, bool descending, bool stable);
em_tensor *em_msort(const em_tensor *t); /* sort along dim 0, values only */
em_status em_msort_out(em_tensor *out, const em_tensor *t);

/* The k largest (largest=true) or smallest elements along dim; with sorted
 * they come in order (and always do here: `sorted` only allows any order).
 * Errors: k outside [0, size of dim] is a RuntimeError. */
em_status em_topk(const em_tensor *t, int64_t k, int dim, bool largest, bool sorted, em_tensor **values,
                  em_tensor **indices);
em_status em_topk_out(em_tensor *values, em_tensor *indices, const em_tensor *t, int64_t k, int dim,
                      bool largest, bool sorted);
/* The k-th smallest element (1-based k) along dim and its index; dim is
 * removed unless keepdim. Among equal values the one that comes k-th in a
 * stable sort is reported. Errors: k outside [1, size of dim]. */
em_status em_kthvalue(const em_tensor *t, int64_t k, int dim, bool keepdim, em_tensor **values,
                      em_tensor **indices);
em_status em_kthvalue_out(em_tensor *values, em_tensor *indices, const em_tensor *t, int64_t k, int dim,
                          bool keepdim);

/* ---- unique -------------------------------------------------------------
 * values: the distinct elements of t (flattened), ascending; inverse (t's
 * shape, int64): where each element of t went; counts (int64): how often each
 * value occurs. Pass NULL for inverse/counts not wanted (PyTorch's
 * return_inverse / return_counts). Every NaN is distinct from every other.
 * `sorted` = false is accepted; the result is sorted all the same (PyTorch
 * leaves the order unspecified then). Rejects float16, as PyTorch's CPU. */
em_status em_unique(const em_tensor *t, bool sorted, em_tensor **values, em_tensor **inverse,
                    em_tensor **counts);
/* Unique slices along dim (t.select(dim, i) compared as a whole, ordered
 * lexicographically): values has t's shape with dim shrunk; inverse and
 * counts are 1-d. Errors: a 0-d t (IndexError), a zero-sized other dim. */
em_status em_unique_dim(const em_tensor *t, int dim, bool sorted, em_tensor **values, em_tensor **inverse,
                        em_tensor **counts);
/* Like em_unique/em_unique_dim, but only runs of equal neighbours collapse
 * and the order of t is kept. */
em_status em_unique_consecutive(const em_tensor *t, em_tensor **values, em_tensor **inverse,
                                em_tensor **counts);
em_status em_unique_consecutive_dim(const em_tensor *t, int dim, em_tensor **values, em_tensor **inverse,
                                    em_tensor **counts);

/* ---- searching ----------------------------------------------------------
 * For each element of values, the index in its row of sorted_sequence where
 * it would be inserted to keep the row sorted: before equal elements (left)
 * or after them (right = true or side = "right"). sorted_sequence is 1-d
 * (every value searches it) or has values' leading dims (row by row); values
 * may be 0-d when sorted_sequence is 1-d. The two are compared in their
 * promoted dtype. sorter (NULL or int64 of sorted_sequence's shape) lists the
 * ascending order of an unsorted sequence. side may be NULL ("not given");
 * side "left" with right = true is an error. Result: values' shape, int32 if
 * out_int32 else int64. */
em_tensor *em_searchsorted(const em_tensor *sorted_sequence, const em_tensor *values, bool out_int32,
                           bool right, const char *side, const em_tensor *sorter);
/* out must be int32 when out_int32, else int64. */
em_status em_searchsorted_out(em_tensor *out, const em_tensor *sorted_sequence, const em_tensor *values,
                              bool out_int32, bool right, const char *side, const em_tensor *sorter);
/* searchsorted(boundaries, input) with 1-d boundaries. */
em_tensor *em_bucketize(const em_tensor *input, const em_tensor *boundaries, bool out_int32, bool right);
em_status em_bucketize_out(em_tensor *out, const em_tensor *input, const em_tensor *boundaries, bool out_int32,
                           bool right);

/* ---- counting -------------------------------------------------------------
 * histc: counts of t's elements (any shape) in `bins` equal bins over
 * [min, max]; elements outside (and NaN) are ignored; the last bin includes
 * max. min == max means the data's range (widened by 1 each side if that is
 * one value too). Result: 1-d, t's dtype (float32, float64 or bfloat16).
 * Errors: bins <= 0, min > max, a range that is not finite. */
em_tensor *em_histc(const em_tensor *t, int64_t bins, double min, double max);
em_status em_histc_out(em_tensor *out, const em_tensor *t, int64_t bins, double min, double max);

/* histogram: t (float32 or float64) counted in `bins` equal bins over range
 * ([min, max], NULL: the data's range; one value is widened by 0.5 each side)
 * or, for em_histogram_edges, over the given increasing 1-d bin edges; the
 * last bin includes its right edge. weight (NULL or t's dtype and numel) sums
 * weights instead of counting; density divides by the total and the bin
 * widths. Results: hist (t's dtype) and bin_edges (bins + 1 values). */
em_status em_histogram(const em_tensor *t, int64_t bins, const double *range, const em_tensor *weight,
                       bool density, em_tensor **hist, em_tensor **bin_edges);
em_status em_histogram_edges(const em_tensor *t, const em_tensor *edges, const em_tensor *weight, bool density,
                             em_tensor **hist, em_tensor **bin_edges);

/* bincount: how often each value 0..max(t) occurs in the 1-d non-negative
 * integral t (length max(max(t) + 1, minlength)); with weights (NULL or 1-d,
 * t's length) their sums instead: float32 weights give float32, any other
 * dtype float64. An empty t gives int64 zeros of length minlength (as
 * PyTorch, weights or not). */
em_tensor *em_bincount(const em_tensor *t, const em_tensor *weights, int64_t minlength);

#ifdef __cplusplus
}
#endif
#endif
