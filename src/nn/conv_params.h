/* The geometry of a convolution as the conv family's ops carry it: an
 * em_call's i[] (autograd nodes keep i[], not `arg`, so backward formulas
 * read the same numbers). Shared by the op layer (src/nn/conv*.c), the CPU
 * kernels (src/cpu/conv*.c) and the formulas (src/autograd/formulas_conv.c).
 *
 * Layout of i[]: i[0] nd (spatial dims, 1..3), i[1] transposed, i[2] groups,
 * i[3..6] stride, padding, dilation, extra: three 21-bit fields each (dim 0
 * in the low bits). `extra` is output_padding for convolution and the kernel
 * size for convolution_weight_grad, im2col and col2im. The op
 * layer refuses any value above EM_CONV_FIELD_MAX before packing. */
#ifndef EMBER_NN_CONV_PARAMS_H
#define EMBER_NN_CONV_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#define EM_CONV_FIELD_BITS 21
#define EM_CONV_FIELD_MAX ((INT64_C(1) << EM_CONV_FIELD_BITS) - 1)

typedef struct em_conv_params {
    int nd;
    bool transposed;
    int64_t groups;
    int64_t stride[3], padding[3], dilation[3], extra[3];
} em_conv_params;

static inline int64_t em_conv_pack3(const int64_t *v, int nd)
{
    int64_t r = 0;
    for (int d = 0; d < nd; d++) r |= v[d] << (EM_CONV_FIELD_BITS * d);
    return r;
}

static inline void em_conv_unpack3(int64_t r, int nd, int64_t *v)
{
    for (int d = 0; d < 3; d++) v[d] = d < nd ? (r >> (EM_CONV_FIELD_BITS * d)) & EM_CONV_FIELD_MAX : 0;
}

static inline void em_conv_pack(const em_conv_params *p, int64_t *i)
{
    i[0] = p->nd;
    i[1] = p->transposed;
    i[2] = p->groups;
    i[3] = em_conv_pack3(p->stride, p->nd);
    i[4] = em_conv_pack3(p->padding, p->nd);
    i[5] = em_conv_pack3(p->dilation, p->nd);
    i[6] = em_conv_pack3(p->extra, p->nd);
}

static inline em_conv_params em_conv_unpack(const int64_t *i)
{
    em_conv_params p = {.nd = (int)i[0], .transposed = i[1] != 0, .groups = i[2]};
    em_conv_unpack3(i[3], p.nd, p.stride);
    em_conv_unpack3(i[4], p.nd, p.padding);
    em_conv_unpack3(i[5], p.nd, p.dilation);
    em_conv_unpack3(i[6], p.nd, p.extra);
    return p;
}

#endif
