/* Helpers shared by the shape family's CPU kernels (src/cpu/shape*.c):
 * copies and fills run through the copy and fill kernels of cast.c, so they
 * convert dtypes, broadcast and use threads like any copy. No argument is
 * checked: the op layer did. */
#ifndef EMBER_CPU_SHAPE_H
#define EMBER_CPU_SHAPE_H

#include "../ops/shape.h"
#include "cpu.h"

/* dst = src, src broadcast to dst's shape, converted to dst's dtype. */
em_status cpu_copy_into(em_tensor *dst, const em_tensor *src);
em_status cpu_zero(em_tensor *t);
/* dst = src over an explicit geometry: `ndim` dims of `sizes`, element
 * strides and offsets into each tensor's storage (dst and src may share
 * one). Strides may be negative (a reversed read) or 0 (a repeated read,
 * src only). */
em_status cpu_copy_strided(em_tensor *dst, const em_tensor *src, int ndim, const int64_t *sizes,
                           const int64_t *dst_strides, int64_t dst_offset, const int64_t *src_strides,
                           int64_t src_offset);
/* A contiguous tensor with t's values in dtype dt: a new reference to t
 * itself when it already is one, else a copy. NULL on allocation failure. */
em_tensor *cpu_contiguous_as(const em_tensor *t, em_dtype dt);
/* Joins c's arg->tensors into out along dim: cat (a narrow slot per input,
 * empty inputs skipped) or stack (a selected slot per input). */
em_status cpu_join(em_tensor *out, const em_shape_args *a, int dim, bool stack);

#endif
