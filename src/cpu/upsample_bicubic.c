/* CPU kernels of bicubic upsampling and its backward over (planes, h, w) contiguous tensors
 * (geometry in c->arg: an em_map_geom with d = 1, scale[] PyTorch's area_pixel scale per dim).
 * Each output cell blends a 4x4 neighbourhood of its source coordinate with the cubic
 * convolution weights (A = -0.75), the taps' indices clamped to the border; the backward
 * scatter-adds with the same weights, each plane by one chunk (race-free). */
#include "cpu.h"
#include "../nn/pool_call.h"
#include <math.h>
#include <stdlib.h>

#define CUBIC_A (-0.75)

/* The planes of one call, split over the pool; each plane written by one chunk. Per output
 * row and column: its 4 tap indices and their weights (of the call's dtype). */
typedef struct bicubic_job {
    const em_call *c;
    const em_map_geom *g;
    const int64_t *ih, *iw;
    const void *wh, *ww;
    bool back;
} bicubic_job;

#define BICUBIC_KERNELS(DT, T)                                                                       \
    /* per output index along dim j: the 4 clamped tap indices and their weights. The source         \
     * coordinate is not clamped at 0 (PyTorch's cubic area_pixel_compute_source_index). */          \
    static void cubic_table_##DT(const em_map_geom *g, int j, int64_t *idx, T *w)                    \
    {                                                                                                \
        int64_t n = g->in[j];                                                                        \
        T scale = (T)g->scale[j], A = (T)CUBIC_A;                                                    \
        for (int64_t o = 0; o < g->out[j]; o++) {                                                    \
            T src = g->align_corners ? scale * (T)o : scale * ((T)o + (T)0.5) - (T)0.5;              \
            T fl = (T)floor(src), t = src - fl;                                                      \
            int64_t base = (int64_t)fl - 1;                                                          \
            for (int k = 0; k < 4; k++) {                                                            \
                int64_t i = base + k;                                                                \
                idx[4 * o + k] = i < 0 ? 0 : i > n - 1 ? n - 1 : i;                                  \
            }                                                                                        \
            T x0 = t + 1, x1 = t, x2 = 1 - t, x3 = 2 - t; /* distances to the 4 taps */              \
            w[4 * o + 0] = ((A * x0 - 5 * A) * x0 + 8 * A) * x0 - 4 * A;                             \
            w[4 * o + 1] = ((A + 2) * x1 - (A + 3)) * x1 * x1 + 1;                                   \
            w[4 * o + 2] = ((A + 2) * x2 - (A + 3)) * x2 * x2 + 1;                                   \
            w[4 * o + 3] = ((A * x3 - 5 * A) * x3 + 8 * A) * x3 - 4 * A;                             \
        }                                                                                            \
    }                                                                                                \
    static void bicubic_planes_##DT(void *ctx, int64_t begin, int64_t end)                           \
    {                                                                                                \
        const bicubic_job *j = ctx;                                                                  \
        const em_map_geom *g = j->g;                                                                 \
        const int64_t *ih = j->ih, *iw = j->iw;                                                      \
        const T *wh = j->wh, *ww = j->ww;                                                            \
        const bool back = j->back;                                                                   \
        int64_t W = g->in[2], OH = g->out[1], OW = g->out[2], pi = g->in[1] * W, po = OH * OW;       \
        const T *src = (const T *)em_tensor_data(j->c->in[0]);                                       \
        T *dst = (T *)em_tensor_data(j->c->out[0]);                                                  \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            const T *x = back ? NULL : src + pl * pi, *gy = back ? src + pl * po : NULL;             \
            T *y = back ? NULL : dst + pl * po, *gx = back ? dst + pl * pi : NULL;                   \
            if (back) memset(gx, 0, (size_t)pi * sizeof(T));                                         \
            for (int64_t oh = 0; oh < OH; oh++) {                                                    \
                const int64_t *rh = ih + 4 * oh;                                                     \
                const T *vh = wh + 4 * oh;                                                           \
                for (int64_t ow = 0; ow < OW; ow++) {                                                \
                    const int64_t *rw = iw + 4 * ow;                                                 \
                    const T *vw = ww + 4 * ow;                                                       \
                    if (back) {                                                                      \
                        T gv = gy[oh * OW + ow];                                                     \
                        for (int a = 0; a < 4; a++) {                                                \
                            T *row = gx + rh[a] * W, ga = gv * vh[a];                                \
                            for (int b = 0; b < 4; b++) row[rw[b]] += ga * vw[b];                    \
                        }                                                                            \
                    } else {                                                                         \
                        T acc = 0;                                                                   \
                        for (int a = 0; a < 4; a++) {                                                \
                            const T *row = x + rh[a] * W;                                            \
                            acc += vh[a] * (vw[0] * row[rw[0]] + vw[1] * row[rw[1]] +                \
                                            vw[2] * row[rw[2]] + vw[3] * row[rw[3]]);                \
                        }                                                                            \
                        y[oh * OW + ow] = acc;                                                       \
                    }                                                                                \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static em_status bicubic_##DT(const em_call *c, bool back)                                       \
    {                                                                                                \
        const em_map_geom *g = c->arg;                                                               \
        int64_t OH = g->out[1], OW = g->out[2];                                                      \
        int64_t *ib = malloc((size_t)(OH + OW) * 4 * sizeof *ib);                                    \
        T *wb = malloc((size_t)(OH + OW) * 4 * sizeof *wb);                                          \
        if (!ib || !wb) {                                                                            \
            free(ib), free(wb);                                                                      \
            return em_fail(EM_ERR_MEMORY, "%s: out of memory", em_ops[c->op].name);                  \
        }                                                                                            \
        bicubic_job j = {.c = c, .g = g, .ih = ib, .iw = ib + 4 * OH, .wh = wb, .ww = wb + 4 * OH, .back = back}; \
        cubic_table_##DT(g, 1, ib, wb);                                                              \
        cubic_table_##DT(g, 2, ib + 4 * OH, wb + 4 * OH);                                            \
        em_parallel_for(g->planes, g->in[1] * g->in[2] + OH * OW * 16, EM_GRAIN_WINDOW, bicubic_planes_##DT, &j); \
        free(ib), free(wb);                                                                          \
        return EM_OK;                                                                                \
    }

BICUBIC_KERNELS(f32, float)
BICUBIC_KERNELS(f64, double)

em_status cpu_upsample_bicubic(const em_call *c)
{
    return c->dtype == EM_F64 ? bicubic_f64(c, false) : bicubic_f32(c, false);
}
em_status cpu_upsample_bicubic_backward(const em_call *c)
{
    return c->dtype == EM_F64 ? bicubic_f64(c, true) : bicubic_f32(c, true);
}
