/* The oneDNN fast path of the conv kernels (src/cpu/conv_dnnl.c): float32
 * convolutions through oneDNN's forward, backward-data and backward-weights
 * primitives, built when the Makefile finds oneDNN's header (EM_WITH_DNNL).
 * im2col + GEMM (src/cpu/conv.c) stays the path for float64, for shapes
 * oneDNN refuses, for builds without oneDNN, and when the fast path is off
 * (em_conv_set_onednn in include/ember/conv.h, or EMBER_ONEDNN=0). */
#ifndef EMBER_CPU_CONV_DNNL_H
#define EMBER_CPU_CONV_DNNL_H

#include "conv_cols.h"

typedef enum conv_dnnl_kind {
    CONV_DNNL_FORWARD,      /* a = x (input side), b = w, bias (or NULL), c = y (output side) */
    CONV_DNNL_BACKWARD_DATA, /* a = g (output side), b = w, c = dx (input side); bias unused */
    CONV_DNNL_BACKWARD_WEIGHTS, /* a = x (input side), b = g (output side), c = dw */
} conv_dnnl_kind;

/* Runs one float32 convolution of the regular geometry g (Note [Regular
 * geometry]; nd spatial dims) on contiguous operands, writing all of c.
 * Returns false, having written nothing the caller relies on, when the fast
 * path is off or unavailable or oneDNN refuses the shape or fails: the
 * caller then computes the result itself. */
bool conv_dnnl_run(conv_dnnl_kind kind, const conv_geom *g, int nd, const float *a, const float *b,
                   const float *bias, float *c);

/* How many calls conv_dnnl_run has completed (tests check that the fast
 * path really ran). */
uint64_t conv_dnnl_runs(void);

#endif
