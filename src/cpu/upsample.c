/* CPU kernels of linear / bilinear / trilinear upsampling and their backward over
 * (planes, d, h, w) contiguous tensors (geometry in c->arg: an em_map_geom whose scale[] is
 * PyTorch's area_pixel scale per dim). Each output cell blends the 2 neighbours of its source
 * coordinate along every dim; the backward scatter-adds with the same weights. */
#include "cpu.h"
#include "../nn/pool_call.h"
#include <stdlib.h>

/* The planes of one call, split over the pool; each plane written by one chunk. Per dim:
 * each output index's two neighbours i0, i1 and the weight w1 of i1 (a T). */
typedef struct linear_job {
    const em_call *c;
    const em_map_geom *g;
    int64_t *i0[3], *i1[3];
    const void *w1[3];
    bool back;
} linear_job;

#define LINEAR_KERNELS(DT, T)                                                                        \
    /* PyTorch's area_pixel_compute_source_index and neighbour weights, per output index */          \
    static void linear_table_##DT(const em_map_geom *g, int j, int64_t *i0, int64_t *i1, T *w1)      \
    {                                                                                                \
        int64_t n = g->in[j];                                                                        \
        T scale = (T)g->scale[j];                                                                    \
        for (int64_t o = 0; o < g->out[j]; o++) {                                                    \
            T src = g->align_corners ? scale * (T)o : scale * ((T)o + (T)0.5) - (T)0.5;              \
            if (src < 0) src = 0;                                                                    \
            int64_t lo = (int64_t)src;                                                               \
            if (lo > n - 1) lo = n - 1;                                                              \
            i0[o] = lo;                                                                              \
            i1[o] = lo < n - 1 ? lo + 1 : lo;                                                        \
            w1[o] = src - (T)lo;                                                                     \
        }                                                                                            \
    }                                                                                                \
    static void linear_planes_##DT(void *ctx, int64_t begin, int64_t end)                            \
    {                                                                                                \
        const linear_job *j = ctx;                                                                   \
        const em_map_geom *g = j->g;                                                                 \
        int64_t *const *i0 = j->i0, *const *i1 = j->i1;                                              \
        const T *w1[3] = {j->w1[0], j->w1[1], j->w1[2]};                                             \
        const bool back = j->back;                                                                   \
        const T *src = (const T *)em_tensor_data(j->c->in[0]);                                       \
        T *dst = (T *)em_tensor_data(j->c->out[0]);                                                  \
        int64_t H = g->in[1], W = g->in[2], pi = g->in[0] * H * W;                                   \
        int64_t OH = g->out[1], OW = g->out[2], po = g->out[0] * OH * OW;                            \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            const T *x = back ? NULL : src + pl * pi, *gy = back ? src + pl * po : NULL;             \
            T *y = back ? NULL : dst + pl * po, *gx = back ? dst + pl * pi : NULL;                   \
            if (back) memset(gx, 0, pi * sizeof(T));                                                 \
            for (int64_t od = 0; od < g->out[0]; od++) {                                             \
                T ld = w1[0][od];                                                                    \
                const int64_t d[2] = {i0[0][od] * H, i1[0][od] * H};                                 \
                const T wd[2] = {1 - ld, ld};                                                        \
                for (int64_t oh = 0; oh < OH; oh++) {                                                \
                    T lh = w1[1][oh];                                                                \
                    const int64_t h[2] = {i0[1][oh], i1[1][oh]};                                     \
                    const T wh[2] = {1 - lh, lh};                                                    \
                    int64_t rows[4];                                                                 \
                    T wr[4];                                                                         \
                    for (int a = 0; a < 2; a++)                                                      \
                        for (int b = 0; b < 2; b++)                                                  \
                            rows[2 * a + b] = (d[a] + h[b]) * W, wr[2 * a + b] = wd[a] * wh[b];      \
                    int64_t o = (od * OH + oh) * OW;                                                 \
                    for (int64_t ow = 0; ow < OW; ow++) {                                            \
                        int64_t w0i = i0[2][ow], w1i = i1[2][ow];                                    \
                        T lw = w1[2][ow], l0 = 1 - lw;                                               \
                        if (back) {                                                                  \
                            T gv = gy[o + ow];                                                       \
                            for (int r = 0; r < 4; r++) {                                            \
                                gx[rows[r] + w0i] += gv * wr[r] * l0;                                \
                                gx[rows[r] + w1i] += gv * wr[r] * lw;                                \
                            }                                                                        \
                        } else {                                                                     \
                            T acc = 0;                                                               \
                            for (int r = 0; r < 4; r++)                                              \
                                acc += wr[r] * (l0 * x[rows[r] + w0i] + lw * x[rows[r] + w1i]);      \
                            y[o + ow] = acc;                                                         \
                        }                                                                            \
                    }                                                                                \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static em_status linear_##DT(const em_call *c, bool back)                                        \
    {                                                                                                \
        const em_map_geom *g = c->arg;                                                               \
        int64_t total = g->out[0] + g->out[1] + g->out[2];                                           \
        int64_t *ib = malloc((size_t)total * 2 * sizeof *ib + 1);                                    \
        T *wb = malloc((size_t)total * sizeof *wb + 1);                                              \
        if (!ib || !wb) {                                                                            \
            free(ib), free(wb);                                                                      \
            return em_fail(EM_ERR_MEMORY, "%s: out of memory", em_ops[c->op].name);                  \
        }                                                                                            \
        linear_job j = {.c = c, .g = g, .back = back};                                               \
        int64_t at = 0;                                                                              \
        for (int k = 0; k < 3; at += g->out[k], k++) {                                               \
            j.i0[k] = ib + 2 * at, j.i1[k] = j.i0[k] + g->out[k], j.w1[k] = wb + at;                 \
            linear_table_##DT(g, k, j.i0[k], j.i1[k], wb + at);                                      \
        }                                                                                            \
        int64_t pi = g->in[0] * g->in[1] * g->in[2], po = g->out[0] * g->out[1] * g->out[2];         \
        em_parallel_for(g->planes, (pi + po) * 4, EM_GRAIN_WINDOW, linear_planes_##DT, &j);          \
        free(ib), free(wb);                                                                          \
        return EM_OK;                                                                                \
    }

LINEAR_KERNELS(f32, float)
LINEAR_KERNELS(f64, double)

em_status cpu_upsample_linear(const em_call *c) { return c->dtype == EM_F64 ? linear_f64(c, false) : linear_f32(c, false); }
em_status cpu_upsample_linear_backward(const em_call *c)
{
    return c->dtype == EM_F64 ? linear_f64(c, true) : linear_f32(c, true);
}
