/* Ember's shape ops: the hand-declared C API of the EM_OP entries in
 * ops/shape.def: joining (cat, stack, ...), reordering (flip, roll, rot90),
 * repeating, triangles and diagonals, one_hot, meshgrid, diff.
 *
 * Conventions as in core.h: results are NEW references (NULL on error),
 * tensor arguments are borrowed, dims may be negative. Functions with
 * several results fill a caller array and return an em_status; on failure
 * the array holds no references. Lists are `n` borrowed tensors. Results
 * are contiguous unless said otherwise. Errors name the op and follow
 * PyTorch 1.13's checks and messages. */
#ifndef EMBER_SHAPE_H
#define EMBER_SHAPE_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "No dim given" for the ops whose dim is optional (PyTorch's dim=None). */
#define EM_DIM_NONE INT32_MIN

/* ---- joining ----------------------------------------------------------
 * cat: tensors joined along `dim`; all must have the same sizes except at
 * dim. The result dtype is the promotion of all inputs. 1-d empty tensors
 * (shape [0]) are skipped, as PyTorch's legacy rule. 0-d tensors are an error.
 * stack: equal shapes joined along a new dim (0 <= dim <= ndim after wrapping).
 * hstack / vstack / dstack: cat after atleast_1d / 2d / 3d, along dim 1
 * (dim 0 for 1-d inputs) / 0 / 2.
 * The _out forms write into `out` (resized if its shape differs; its dtype
 * must be one the result can be cast to; it must not overlap any input). */
em_tensor *em_cat(int n, const em_tensor *const *tensors, int dim);
em_status em_cat_out(em_tensor *out, int n, const em_tensor *const *tensors, int dim);
em_tensor *em_stack(int n, const em_tensor *const *tensors, int dim);
em_status em_stack_out(em_tensor *out, int n, const em_tensor *const *tensors, int dim);
em_tensor *em_hstack(int n, const em_tensor *const *tensors);
em_status em_hstack_out(em_tensor *out, int n, const em_tensor *const *tensors);
em_tensor *em_vstack(int n, const em_tensor *const *tensors);
em_status em_vstack_out(em_tensor *out, int n, const em_tensor *const *tensors);
em_tensor *em_dstack(int n, const em_tensor *const *tensors);
em_status em_dstack_out(em_tensor *out, int n, const em_tensor *const *tensors);

/* meshgrid: n 0-d or 1-d tensors of one dtype -> n tensors of the grid
 * shape, written to out[0..n). indexing "ij" (NULL means "ij") or "xy"
 * (the first two grid dims swapped). The results are broadcast VIEWS of the
 * inputs (stride 0 along the other dims), as in PyTorch. */
em_status em_meshgrid(int n, const em_tensor *const *tensors, const char *indexing, em_tensor **out);
/* cartesian_prod: n 1-d tensors of one dtype -> (prod of sizes, n), rows in
 * lexicographic order. With n == 1, a new reference to tensors[0] itself. */
em_tensor *em_cartesian_prod(int n, const em_tensor *const *tensors);

/* ---- reordering ------------------------------------------------------- */
/* flip: reverses the `ndims` dims listed (no repeats). fliplr: dim 1 of a
 * >= 2-d tensor; flipud: dim 0 of a >= 1-d tensor. */
em_tensor *em_flip(const em_tensor *x, int ndims, const int *dims);
em_tensor *em_fliplr(const em_tensor *x);
em_tensor *em_flipud(const em_tensor *x);
/* roll: shifts[i] positions along dims[i] (ndims == nshifts; a dim may be
 * repeated: the shifts add up). ndims == 0: the flattened tensor is rolled by
 * the single shift, and the shape kept. */
em_tensor *em_roll(const em_tensor *x, int nshifts, const int64_t *shifts, int ndims, const int *dims);
/* rot90: k quarter turns from dims[0] towards dims[1] (ndims must be 2). */
em_tensor *em_rot90(const em_tensor *x, int64_t k, int ndims, const int *dims);

/* ---- repeating -------------------------------------------------------- */
/* repeat: x tiled repeats[i] times along dim i; n >= x's ndim (x gains
 * leading dims of size 1). tile: the same, repeats padded with leading 1s
 * when n < ndim. */
em_tensor *em_repeat(const em_tensor *x, int n, const int64_t *repeats);
em_tensor *em_tile(const em_tensor *x, int n, const int64_t *repeats);
/* repeat_interleave: each slice of x along dim repeated `repeats` times in
 * place (dim EM_DIM_NONE: of the flattened x, giving a 1-d result).
 * The _tensor form takes per-slice counts: an int32/int64 0-d or 1-d tensor
 * of size 1 or x.size(dim). output_size: the result's size along dim if
 * known (checked), or -1. The _indices form is PyTorch's one-argument form:
 * for 1-d counts r, the indices i repeated r[i] times, in r's dtype. */
em_tensor *em_repeat_interleave(const em_tensor *x, int64_t repeats, int dim, int64_t output_size);
em_tensor *em_repeat_interleave_tensor(const em_tensor *x, const em_tensor *repeats, int dim, int64_t output_size);
em_tensor *em_repeat_interleave_indices(const em_tensor *repeats, int64_t output_size);

/* ---- differences ------------------------------------------------------ */
/* diff: the n-th forward difference along dim (logical xor for bool) of x
 * with `prepend` / `append` (NULL: none; else of x's ndim and x's sizes
 * except at dim) joined on either side. The dtype is their promotion.
 * n == 0 gives a copy of x; n < 0 is an error. */
em_tensor *em_diff(const em_tensor *x, int64_t n, int dim, const em_tensor *prepend, const em_tensor *append);
em_status em_diff_out(em_tensor *out, const em_tensor *x, int64_t n, int dim, const em_tensor *prepend,
                      const em_tensor *append);

/* ---- triangles and diagonals ------------------------------------------ */
/* tril / triu: the lower / upper triangle of the last two dims (batched),
 * from the `diagonal`-th diagonal (0 main, > 0 above, < 0 below); the rest
 * zero. In-place forms and out= (same dtype as x, as PyTorch). */
em_tensor *em_tril(const em_tensor *x, int64_t diagonal);
em_status em_tril_(em_tensor *self, int64_t diagonal);
em_status em_tril_out(em_tensor *out, const em_tensor *x, int64_t diagonal);
em_tensor *em_triu(const em_tensor *x, int64_t diagonal);
em_status em_triu_(em_tensor *self, int64_t diagonal);
em_status em_triu_out(em_tensor *out, const em_tensor *x, int64_t diagonal);
/* tril_indices / triu_indices: the (2, N) coordinates of a row x col
 * matrix's lower / upper triangle, row-major; dt int64 or int32. */
em_tensor *em_tril_indices(int64_t row, int64_t col, int64_t offset, em_dtype dt);
em_tensor *em_triu_indices(int64_t row, int64_t col, int64_t offset, em_dtype dt);
/* diag: 1-d x -> square matrix with x on the `diagonal`-th diagonal;
 * 2-d x -> that diagonal as a 1-d copy. out= requires x's dtype. */
em_tensor *em_diag(const em_tensor *x, int64_t diagonal);
em_status em_diag_out(em_tensor *out, const em_tensor *x, int64_t diagonal);
/* diag_embed: the last dim of x placed on the `offset` diagonal of new dims
 * dim1, dim2 (dims of the result), the rest zero. diagflat: diag of the
 * flattened x. */
em_tensor *em_diag_embed(const em_tensor *x, int64_t offset, int dim1, int dim2);
em_tensor *em_diagflat(const em_tensor *x, int64_t offset);

/* ---- encodings -------------------------------------------------------- */
/* one_hot: int64 class indices x -> int64 tensor of shape x.shape +
 * [num_classes]; num_classes -1 means max(x) + 1. Errors for negative
 * classes and classes >= num_classes. */
em_tensor *em_one_hot(const em_tensor *x, int64_t num_classes);

#ifdef __cplusplus
}
#endif
#endif
