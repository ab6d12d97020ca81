/* CPU kernels that move values by per-dim index maps over (planes, d, h, w) contiguous tensors:
 * reflect / replicate / circular padding and nearest upsampling (geometry in c->arg: an
 * em_map_geom). Forward gathers out[o] = in[map(o)]; the backward ops scatter-add the
 * gradient back through the same maps. */
#include "cpu.h"
#include "../nn/pool_call.h"
#include <stdlib.h>

/* Input index of output index o along dim j (mode: em_pad_mode, or -1: nearest). */
static int64_t map_index(const em_map_geom *g, int j, int64_t o)
{
    int64_t n = g->in[j], i = o - g->before[j];
    switch (g->mode) {
    case EM_PAD_REFLECT:
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
        return i;
    case EM_PAD_REPLICATE: return i < 0 ? 0 : i >= n ? n - 1 : i;
    case EM_PAD_CIRCULAR: return ((i % n) + n) % n;
    default: {
        /* PyTorch's nearest_idx, in float as its kernel computes it */
        if (g->out[j] == n) return o;
        if (g->out[j] == 2 * n) return o >> 1;
        int64_t s = (int64_t)floorf((float)o * (float)g->scale[j]);
        return s < n - 1 ? s : n - 1;
    }
    }
}

/* The planes of one call, split over the pool; each plane written by one chunk. */
typedef struct map_job {
    const em_call *c;
    const em_map_geom *g;
    int64_t *const *ix; /* per dim, the input index of each output index */
    int64_t pi, po;     /* elements of an input and of an output plane */
    bool back;
} map_job;

#define MAP_KERNELS(DT, T)                                                                           \
    static void map_plane_##DT(const T *src, T *dst, const em_map_geom *g, int64_t *const *ix, bool back) \
    {                                                                                                \
        int64_t H = g->in[1], W = g->in[2], OW = g->out[2];                                          \
        if (back) memset(dst, 0, g->in[0] * H * W * sizeof(T));                                      \
        for (int64_t od = 0; od < g->out[0]; od++)                                                   \
            for (int64_t oh = 0; oh < g->out[1]; oh++) {                                             \
                int64_t row = (ix[0][od] * H + ix[1][oh]) * W, o = (od * g->out[1] + oh) * OW;       \
                if (back)                                                                            \
                    for (int64_t ow = 0; ow < OW; ow++) dst[row + ix[2][ow]] += src[o + ow];         \
                else                                                                                 \
                    for (int64_t ow = 0; ow < OW; ow++) dst[o + ow] = src[row + ix[2][ow]];          \
            }                                                                                        \
    }                                                                                                \
    static void map_planes_##DT(void *ctx, int64_t begin, int64_t end)                               \
    {                                                                                                \
        const map_job *j = ctx;                                                                      \
        const T *src = (const T *)em_tensor_data(j->c->in[0]);                                       \
        T *dst = (T *)em_tensor_data(j->c->out[0]);                                                  \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            if (j->back) map_plane_##DT(src + pl * j->po, dst + pl * j->pi, j->g, j->ix, true);      \
            else map_plane_##DT(src + pl * j->pi, dst + pl * j->po, j->g, j->ix, false);             \
        }                                                                                            \
    }

MAP_KERNELS(f32, float)
MAP_KERNELS(f64, double)

static em_status run_map(const em_call *c, bool back)
{
    const em_map_geom *g = c->arg;
    int64_t *ix[3];
    int64_t total = g->out[0] + g->out[1] + g->out[2];
    int64_t *buf = malloc((size_t)(total ? total : 1) * sizeof *buf);
    if (!buf) return em_fail(EM_ERR_MEMORY, "%s: out of memory", em_ops[c->op].name);
    int64_t at = 0;
    for (int j = 0; j < 3; at += g->out[j], j++) {
        ix[j] = buf + at;
        for (int64_t o = 0; o < g->out[j]; o++) ix[j][o] = map_index(g, j, o);
    }
    map_job job = {.c = c, .g = g, .ix = ix, .pi = g->in[0] * g->in[1] * g->in[2],
                   .po = g->out[0] * g->out[1] * g->out[2], .back = back};
    em_parallel_for(g->planes, job.pi + job.po, EM_GRAIN_WINDOW, c->dtype == EM_F64 ? map_planes_f64 : map_planes_f32,
                    &job);
    free(buf);
    return EM_OK;
}

em_status cpu_pad(const em_call *c) { return run_map(c, false); }
em_status cpu_pad_backward(const em_call *c) { return run_map(c, true); }
em_status cpu_upsample_nearest(const em_call *c) { return run_map(c, false); }
em_status cpu_upsample_nearest_backward(const em_call *c) { return run_map(c, true); }
