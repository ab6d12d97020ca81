/* Ember's index ops: the hand-declared C API of the EM_OP entries in ops/index.def
 * (PyTorch 1.13 semantics: gather/scatter, index_*, take/put, advanced
 * indexing, masks, nonzero).
 *
 * Common contract (besides core.h's: new references out, borrowed in):
 * - Index tensors are int64 (index_select and index_add also take int32);
 *   index/index_put also take bool or uint8 masks. Other dtypes fail as in
 *   PyTorch (EM_ERR_DTYPE, or EM_ERR_INDEX where PyTorch raises IndexError).
 * - Every index value is checked before anything is written: an out-of-range
 *   value fails with the code of PyTorch's exception (EM_ERR_INDEX for
 *   IndexError, EM_ERR_RUNTIME where PyTorch raises RuntimeError: gather,
 *   scatter*, take_along_dim) and leaves every tensor unchanged.
 * - Negative indices count from the end only where PyTorch wraps them:
 *   index_fill, take, put, index, index_put. Elsewhere they are out of range.
 * - `self`, `src`/`source`/`values` and results share one dtype (PyTorch's
 *   index ops do not promote); out= tensors must have that dtype too, and are
 *   resized when their shape differs. In-place forms (`_`) and out= reject a
 *   written tensor whose elements overlap each other (index_fill_, which
 *   writes one value, allows it) or an input.
 * - Duplicate indices: accumulating forms (scatter_add, scatter_reduce,
 *   index_add, put/index_put with accumulate) combine every contribution;
 *   plain writes keep one of them. Writes run on one thread. */
#ifndef EMBER_INDEX_H
#define EMBER_INDEX_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- along one dim --------------------------------------------------- */
/* out = self with dim `dim` replaced by the index (a vector or a scalar)
 * entries: out[.., i, ..] = self[.., index[i], ..]. */
em_tensor *em_index_select(const em_tensor *self, int dim, const em_tensor *index);
em_status em_index_select_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index);

/* out[i][j] = self[index[i][j]][j] (dim 0), shaped like index. index has
 * self's number of dims and index.size(d) <= self.size(d) for d != dim. */
em_tensor *em_gather(const em_tensor *self, int dim, const em_tensor *index);
em_status em_gather_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index);

/* gather after broadcasting self and indices in every dim but `dim`. The
 * _flat forms index self flattened (PyTorch's dim=None) and return 1-d. */
em_tensor *em_take_along_dim(const em_tensor *self, const em_tensor *indices, int dim);
em_status em_take_along_dim_out(em_tensor *out, const em_tensor *self, const em_tensor *indices, int dim);
em_tensor *em_take_along_dim_flat(const em_tensor *self, const em_tensor *indices);
em_status em_take_along_dim_flat_out(em_tensor *out, const em_tensor *self, const em_tensor *indices);

/* self[index[i][j]][j] = src[i][j] (dim 0); shapes as gather, and
 * index.size(d) <= src.size(d). `reduce` is NULL, "add" or "multiply"
 * (PyTorch's older reduce argument). The _value forms scatter a scalar
 * (converted to self's dtype: for int64 beyond 2^53 pass a 0-d tensor
 * expanded to index's shape as src instead). */
em_tensor *em_scatter(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *src, const char *reduce);
em_status em_scatter_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *src, const char *reduce);
em_status em_scatter_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                         const em_tensor *src, const char *reduce);
em_tensor *em_scatter_value(const em_tensor *self, int dim, const em_tensor *index, double value, const char *reduce);
em_status em_scatter_value_(em_tensor *self, int dim, const em_tensor *index, double value, const char *reduce);
em_status em_scatter_value_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index, double value,
                               const char *reduce);

/* self[index[i][j]][j] += src[i][j] (dim 0). */
em_tensor *em_scatter_add(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *src);
em_status em_scatter_add_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *src);
em_status em_scatter_add_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                             const em_tensor *src);

/* Reduces every src value scattered to a position of self with `reduce`:
 * "sum", "prod", "mean", "amax" or "amin" (NaN wins amax/amin; integer mean
 * rounds down; bool has no mean). include_self false: self's own value at a
 * position that receives a scatter is left out of the reduction. */
em_tensor *em_scatter_reduce(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *src,
                             const char *reduce, bool include_self);
em_status em_scatter_reduce_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *src,
                             const char *reduce, bool include_self);
em_status em_scatter_reduce_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                                const em_tensor *src, const char *reduce, bool include_self);

/* self[.., index[i], ..] += alpha * source[.., i, ..]. index is a vector with
 * source.size(dim) entries; source's other dims broadcast to self's. alpha is
 * truncated to an integer for integral self. */
em_tensor *em_index_add(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *source, double alpha);
em_status em_index_add_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *source, double alpha);
em_status em_index_add_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                           const em_tensor *source, double alpha);

/* self[.., index[i], ..] = source[.., i, ..]; source has self's shape but
 * for dim (or both are scalars). */
em_tensor *em_index_copy(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *source);
em_status em_index_copy_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *source);
em_status em_index_copy_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                            const em_tensor *source);

/* self[.., index[i], ..] = value. The _tensor forms take a 0-d value (any
 * dtype, converted to self's; exact for int64). */
em_tensor *em_index_fill(const em_tensor *self, int dim, const em_tensor *index, double value);
em_status em_index_fill_(em_tensor *self, int dim, const em_tensor *index, double value);
em_tensor *em_index_fill_tensor(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *value);
em_status em_index_fill_tensor_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *value);

/* ---- flat (self viewed as 1-d in row-major order) --------------------- */
/* out[i] = self.flatten()[index[i]], shaped like index. */
em_tensor *em_take(const em_tensor *self, const em_tensor *index);
em_status em_take_out(em_tensor *out, const em_tensor *self, const em_tensor *index);

/* self.flatten()[index[i]] = source.flatten()[i] (+= with accumulate);
 * index and source have the same number of elements. */
em_tensor *em_put(const em_tensor *self, const em_tensor *index, const em_tensor *source, bool accumulate);
em_status em_put_(em_tensor *self, const em_tensor *index, const em_tensor *source, bool accumulate);

/* ---- advanced indexing (Note [Advanced indexing] in src/ops/index_adv.c) --
 * indices[k] indexes dim k of self: NULL is a full slice ':'; an int64
 * tensor picks entries; a bool/uint8 mask of m dims covers the next m dims
 * (its sizes must match them) and stands for its nonzero() coordinates; a
 * 0-d mask adds a new dim of size 1 (true) or 0 (false), as NumPy does.
 * Dims after the list are full slices. The index tensors broadcast
 * together to shape B; the result holds B where the indexed dims were when
 * they are adjacent in the list (x[:, i, j] -> (x0, *B, x3...)), else B
 * first (x[i, :, j] -> (*B, x1, ...)). At least one entry must be a tensor. */
em_tensor *em_index(const em_tensor *self, int n, const em_tensor *const *indices);
/* self[indices] = values (+= with accumulate, duplicates summed), values
 * broadcast to the indexing result's shape. */
em_status em_index_put_(em_tensor *self, int n, const em_tensor *const *indices, const em_tensor *values,
                        bool accumulate);
em_tensor *em_index_put(const em_tensor *self, int n, const em_tensor *const *indices, const em_tensor *values,
                        bool accumulate);

/* ---- masks (bool or uint8 masks, broadcast against self) -------------- */
/* self where mask is false, value where true. In place the mask broadcasts
 * to self's shape; out of place self and mask broadcast together. The
 * _tensor forms take a 0-d value (converted to self's dtype). */
em_tensor *em_masked_fill(const em_tensor *self, const em_tensor *mask, double value);
em_status em_masked_fill_(em_tensor *self, const em_tensor *mask, double value);
em_tensor *em_masked_fill_tensor(const em_tensor *self, const em_tensor *mask, const em_tensor *value);
em_status em_masked_fill_tensor_(em_tensor *self, const em_tensor *mask, const em_tensor *value);

/* Copies source's elements, in row-major order, to self where mask is true
 * (in row-major order); source needs at least as many elements as mask has
 * true entries. */
em_tensor *em_masked_scatter(const em_tensor *self, const em_tensor *mask, const em_tensor *source);
em_status em_masked_scatter_(em_tensor *self, const em_tensor *mask, const em_tensor *source);

/* The 1-d tensor of self's elements where mask is true (broadcast together). */
em_tensor *em_masked_select(const em_tensor *self, const em_tensor *mask);
em_status em_masked_select_out(em_tensor *out, const em_tensor *self, const em_tensor *mask);

/* The (n, self.ndim) int64 coordinates of self's nonzero elements, in
 * row-major order (NaN counts as nonzero). argwhere is the same. */
em_tensor *em_nonzero(const em_tensor *self);
em_status em_nonzero_out(em_tensor *out, const em_tensor *self);
em_tensor *em_argwhere(const em_tensor *self);

#ifdef __cplusplus
}
#endif
#endif
