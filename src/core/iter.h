/* The strided iteration geometry shared by every device's pointwise runner
 * (TH's apply / ATen's TensorIterator, reduced to its core): operands of one
 * broadcast shape, dims reordered so dim 0 is the fastest-moving and merged
 * where every operand is contiguous across them. */
#ifndef EMBER_ITER_H
#define EMBER_ITER_H

#include "internal.h"

#define EM_ITER_MAX_OPS 10

typedef struct em_iter {
    int ndim;    /* after coalescing; >= 1 */
    int nops;    /* outputs first */
    int64_t numel;
    int64_t shape[EM_MAX_DIMS];                  /* shape[0] is the inner dim */
    int64_t strides[EM_MAX_DIMS][EM_ITER_MAX_OPS]; /* bytes; strides[d][op] */
    char *data[EM_ITER_MAX_OPS];
    em_dtype dtypes[EM_ITER_MAX_OPS];              /* stored dtype of each operand */
} em_iter;

/* Builds the iteration over `nops` tensors broadcast to (ndim, shape). Every
 * tensor must be broadcastable to it (the op layer checked). */
void em_iter_init(em_iter *it, int nops, const em_tensor *const *ops, int ndim, const int64_t *shape);

#endif
