/* The shape family's contract between its op layer (src/ops/shape.c,
 * src/ops/tri.c) and its CPU kernels (src/cpu/shape*.c): the `arg` struct
 * of the ops whose arguments do not fit em_call's i[] and f[], and the
 * op-layer helpers the family's files share.
 *
 * Note [Data-dependent shapes]
 * one_hot (num_classes -1) and repeat_interleave (a tensor of repeats) size
 * their result from tensor values, which only a kernel reads. Their kernels
 * check those values (before allocating or writing anything), allocate the
 * result and hand it back in results[0]; the op layer allocates nothing for
 * them, and neither has an out= form. */
#ifndef EMBER_OPS_SHAPE_H
#define EMBER_OPS_SHAPE_H

#include "dispatch.h"

typedef struct em_shape_args {
    int n;                           /* entries of `tensors` / `counts` */
    const em_tensor *const *tensors; /* joined inputs: cat family, meshgrid, cartesian_prod */
    const int64_t *counts;           /* repeat, tile: repeats per result dim; roll: shift per dim */
    em_tensor **results;             /* results a kernel creates: meshgrid's views,
                                        Note [Data-dependent shapes] */
} em_shape_args;

/* The columns [*lo, *hi) that tril (upper false) or triu (upper true) with
 * diagonal k keeps in row i of a matrix of `cols` columns: tril keeps
 * j <= i + k, triu keeps j >= i + k. Any int64 arguments (no overflow). */
static inline void em_tri_kept_cols(int64_t i, int64_t k, int64_t cols, bool upper, int64_t *lo, int64_t *hi)
{
    __int128 edge = (__int128)i + k + (upper ? 0 : 1);
    int64_t e = edge < 0 ? 0 : edge > cols ? cols : (int64_t)edge;
    *lo = upper ? e : 0;
    *hi = upper ? cols : e;
}

/* ---- op-layer helpers (src/ops/shape.c) -------------------------------- */
/* Dim wrapping where a 0-d tensor has no dim at all (PyTorch's
 * maybe_wrap_dim with wrap_scalar=false): -1 with an IndexError. */
int em_shape_wrap_dim_strict(int dim, int ndim, const char *op);
/* The last step of the family's single-result ops, once `c` holds the
 * checked inputs and params: checks the result's sizes, gives it a new
 * contiguous tensor of (ndim, shape, dt) on the first input's device (cpu
 * if none) and dispatches. Returns the new tensor, NULL on error. */
em_tensor *em_shape_new(em_call *c, int ndim, const int64_t *shape, em_dtype dt);

/* The same into `out` (out= forms), with PyTorch's checks in its order:
 * out's dtype (the result's dtype dt must cast to it, or equal it), no
 * overlap of out with itself or any of the `nin` inputs `ins` (NULL entries
 * skipped; `strict` also rejects an input that IS out, for ops that write
 * elsewhere in out than they read), out resized to (ndim, shape), dispatch,
 * and out's version bumped. */
typedef enum { EM_OUT_CAST, EM_OUT_SAME_DTYPE } em_out_dtype_rule;
em_status em_shape_out(em_call *c, em_tensor *out, int ndim, const int64_t *shape, em_dtype dt,
                       em_out_dtype_rule rule, bool strict, int nin, const em_tensor *const *ins);

#endif
