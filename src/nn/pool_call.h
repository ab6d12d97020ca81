/* What the pool family's op layer hands its kernels (em_call.arg) and how a recorded call
 * keeps its pooling params for the backward formula (em_call.i/f; a node has no `arg`).
 * Kernels see contiguous (planes, d, h, w) tensors: the spatial dims padded in front with 1s,
 * so one 3-d loop serves 1-d, 2-d and 3-d. */
#ifndef EMBER_NN_POOL_CALL_H
#define EMBER_NN_POOL_CALL_H

#include "../ops/dispatch.h"

typedef struct em_pool_geom {
    int64_t planes;              /* N * C */
    int64_t in[3], out[3];       /* spatial sizes (d, h, w) */
    int64_t k[3], s[3], p[3], d[3];
    bool count_include_pad;
    int64_t divisor;             /* 0: none */
} em_pool_geom;

/* Pads: before[3], after[3] per (d, h, w); mode an em_pad_mode. Upsampling: scales. */
typedef struct em_map_geom {
    int64_t planes;
    int64_t in[3], out[3];
    int64_t before[3];           /* pads */
    int mode;                    /* em_pad_mode, or -1: nearest upsampling */
    double scale[3];             /* upsampling: in/out per dim as PyTorch computes it */
    bool align_corners;
} em_map_geom;

/* avg_pool params in a call's i/f: i[0..2] kernel, i[3..5] stride, f[0..2] padding,
 * f[3] divisor, i[6] count_include_pad | ceil_mode << 1, i[7] nd. */
static inline void em_pool_params_to_call(em_call *c, const em_pool_params *p)
{
    for (int k = 0; k < 3; k++) {
        c->i[k] = p->kernel[k], c->i[3 + k] = p->stride[k];
        c->f[k] = (double)p->padding[k];
    }
    c->f[3] = (double)p->divisor_override;
    c->i[6] = p->count_include_pad | p->ceil_mode << 1;
    c->i[7] = p->nd;
}
static inline em_pool_params em_pool_params_of_call(const em_call *c)
{
    em_pool_params p = {.nd = (int)c->i[7], .count_include_pad = c->i[6] & 1, .ceil_mode = c->i[6] >> 1 & 1,
                        .divisor_override = (int64_t)c->f[3]};
    for (int k = 0; k < 3; k++) {
        p.kernel[k] = c->i[k], p.stride[k] = c->i[3 + k];
        p.padding[k] = (int64_t)c->f[k], p.dilation[k] = 1;
    }
    return p;
}

/* Upsampling scales (<= 0: none) in f[0..2]; align_corners in i[0]. */

#endif
