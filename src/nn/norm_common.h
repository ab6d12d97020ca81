/* Helpers shared by the normalization op layer (src/nn/norm*.c). */
#ifndef EMBER_NN_NORM_COMMON_H
#define EMBER_NN_NORM_COMMON_H

#include "norm_call.h"
#include <stdio.h>

/* The dtype the kernels compute x's dtype in (bfloat16 -> float32), or
 * EM_DTYPE_NONE with PyTorch's error `"<kernel>" not implemented for '<T>'`. */
em_dtype norm_compute_dtype(const em_tensor *x, const char *kernel);
/* A parameter (weight, bias, running stat) must have x's dtype (bfloat16 x:
 * also float32). Errors with `message` otherwise. */
em_status norm_check_param_dtype(const em_tensor *p, const em_tensor *x, const char *message);
/* p as a contiguous tensor of dtype dt and shape (ndim, sizes), or, when p
 * is NULL, one filled with `fill`. A new reference (recorded conversions, so
 * p's gradient flows). */
em_tensor *norm_param(const em_tensor *p, em_dtype dt, int ndim, const int64_t *sizes, double fill);
/* x converted to dt and made contiguous: a new reference (recorded). */
em_tensor *norm_input(const em_tensor *x, em_dtype dt);
/* Releases out[0..n) and sets them to NULL; returns the current error code. */
em_status norm_fail(em_tensor **out, int n);

#endif
