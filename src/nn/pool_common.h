/* Shared pieces of the pool family's op layer (src/nn/pool*.c, pad.c, upsample.c). */
#ifndef EMBER_NN_POOL_COMMON_H
#define EMBER_NN_POOL_COMMON_H

#include "pool_call.h"

/* x must be (C, *spatial) or (N, C, *spatial) with nd spatial dims, every dim but N
 * nonzero (N == 0 too unless allow_empty_batch); else PyTorch's RuntimeError. */
em_status em_pool_check_input(const em_tensor *x, int nd, const char *name, bool allow_empty_batch);
/* planes and in[] of g from x (nd trailing spatial dims); out[] = in[], windows 1. */
void em_pool_geom_init(em_pool_geom *g, const em_tensor *x, int nd);
/* x's leading dims followed by the nd spatial sizes out3[3 - nd .. 3). */
void em_pool_out_sizes(const em_tensor *x, int nd, const int64_t *out3, int64_t *sizes);
/* "3x2x2" (thread-local scratch, as em_shape_str). */
const char *em_pool_dims_str(int n, const int64_t *v);
/* x as the kernels read it: contiguous, float32 or float64 (bfloat16 goes through float32);
 * other dtypes fail with PyTorch's "\"<name>\" not implemented for '<Type>'". New reference. */
em_tensor *em_pool_compute_input(const em_tensor *x, const char *name);
/* r converted back to like's dtype when it was computed in another (consumes r). */
em_tensor *em_pool_result_dtype(em_tensor *r, const em_tensor *like, em_tensor **indices);
/* r (and *indices) laid out channels_last when a 2-d pool's 4-d input `like`
 * is; nd: the pool's spatial dims (consumes r; NULL on failure, *indices released). */
em_tensor *em_pool_layout(em_tensor *r, const em_tensor *like, int nd, em_tensor **indices);
/* Allocates out[0] (ndim, sizes) in c->dtype, dispatches c; the result or NULL. */
em_tensor *em_pool_run1(em_call *c, int ndim, const int64_t *sizes);
/* The max-pool kinds (pool.c): values and int64 indices; recorded values are gathered. */
em_tensor *em_pool_run_max(em_op op, const em_tensor *x, const em_tensor *xc, const em_pool_geom *g, int nd,
                           const int64_t *out_sizes, em_tensor **indices);
em_tensor *em_pool_gather_values(const em_tensor *x, const em_tensor *indices, int nd);

#endif
