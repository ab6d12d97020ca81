/* A row-major walk over tensors of one shape, for the index kernels
 * (src/cpu/index*.c). Unlike em_iter it never reorders dims: masked_select,
 * masked_scatter and nonzero depend on row-major order, and the indexed loop
 * takes more operands (dst, src and up to EM_MAX_DIMS index tensors). Dims
 * are merged where every operand is contiguous across them. */
#ifndef EMBER_CPU_INDEX_WALK_H
#define EMBER_CPU_INDEX_WALK_H

#include "cpu.h"

#define CPU_WALK_MAX_OPS (2 + EM_MAX_DIMS)

typedef struct cpu_walk {
    int ndim; /* >= 1; shape[ndim - 1] is the inner (fastest) dim */
    int nops;
    int64_t numel;
    int64_t shape[EM_MAX_DIMS];
    int64_t strides[EM_MAX_DIMS][CPU_WALK_MAX_OPS]; /* bytes; strides[d][op] */
    char *data[CPU_WALK_MAX_OPS];
} cpu_walk;

/* Called on each run of n elements along the inner dim: ptrs[op] is the
 * operand's first element, strides[op] its byte step. */
typedef void (*cpu_walk_fn)(void *ctx, char **ptrs, const int64_t *strides, int64_t n);

/* ops[0..nops) all have ops[0]'s shape. */
void cpu_walk_init(cpu_walk *w, int nops, const em_tensor *const *ops);
/* Visits elements [begin, end) of the row-major order. */
void cpu_walk_range(const cpu_walk *w, int64_t begin, int64_t end, cpu_walk_fn fn, void *ctx);
/* Visits every element; split over threads above EM_GRAIN when `parallel`
 * (fn must then only write what its own elements own). */
void cpu_walk_run(const cpu_walk *w, bool parallel, cpu_walk_fn fn, void *ctx);

#endif
