/* The column (im2col) form of a convolution, shared by the conv kernels
 * (src/cpu/conv.c) and unfold/fold (src/cpu/conv_cols.c).
 *
 * Note [Regular geometry]
 * Every kernel of the family is phrased on one "regular" convolution: it
 * reads an image of C_in channels and spatial size `in` (the input side) and
 * produces C_out channels of spatial size `out` (the output side), with
 * weight W (C_out, C_in / groups, *k). A convolution's input is the input
 * side; a transposed convolution is the adjoint of the regular one, so its
 * output is the input side and its input the output side (the weight's
 * layout is then the same). Spatial dims are padded to three with leading
 * size-1 dims (kernel 1, stride 1, padding 0, dilation 1), so one loop nest
 * serves 1-d, 2-d and 3-d. */
#ifndef EMBER_CPU_CONV_COLS_H
#define EMBER_CPU_CONV_COLS_H

#include "../nn/conv_params.h"
#include "cpu.h"

typedef struct conv_geom {
    int64_t N, groups;
    int64_t C_in, C_out;                                    /* input side, output side */
    int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3]; /* 3-d, leading dims padded */
    int64_t L_in, L_out, K;                                 /* products of in, out, k */
} conv_geom;

/* The regular geometry of params p: spatial sizes of the input side (`in`),
 * output side (`out`) and kernel (`k`) given for p->nd dims. */
conv_geom conv_geom_make(const em_conv_params *p, int64_t N, int64_t C_in, int64_t C_out, const int64_t *in,
                         const int64_t *out, const int64_t *k);

/* Is im2col the identity (1x1 kernel, stride 1, no padding)? Then the
 * columns of a sample are the sample itself. */
bool conv_cols_identity(const conv_geom *g);

/* Channels [c0, c1) of one input-side sample x (C_in, L_in) as columns:
 * col rows c * K + kernel offset, L_out columns; out-of-image taps are 0.
 * `dt` is EM_F32 or EM_F64. */
void conv_im2col(em_dtype dt, const conv_geom *g, const void *x, void *col, int64_t c0, int64_t c1);
/* The adjoint: adds the columns of channels [c0, c1) into x (C_in, L_in),
 * which the caller has zeroed (or holds a sum to add to). */
void conv_col2im(em_dtype dt, const conv_geom *g, const void *col, void *x, int64_t c0, int64_t c1);

/* How many chunks a loop over `n` samples of `work` elements each splits
 * into on the pool: 1 below the grain; at most one per sample and two per
 * thread (each chunk owns a column buffer: their number bounds the memory). */
int64_t conv_chunks(int64_t n, int64_t work);

/* fn(ctx, k, begin, end) for each chunk k of the samples [0, n) split into
 * nchunks ranges, over the pool (Note [Thread pool]). */
typedef void (*conv_chunk_fn)(void *ctx, int64_t k, int64_t begin, int64_t end);
void conv_run_chunks(int64_t n, int64_t nchunks, conv_chunk_fn fn, void *ctx);

#endif
