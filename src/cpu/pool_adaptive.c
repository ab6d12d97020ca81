/* CPU kernels of adaptive average and max pooling over (planes, d, h, w) contiguous tensors
 * (geometry in c->arg, src/nn/pool_adaptive.c). Output cell i of a dim (in -> out) pools
 * [floor(i * in / out), ceil((i + 1) * in / out)), PyTorch's windows. */
#include "cpu.h"
#include "../nn/pool_call.h"

static int64_t start_of(int64_t i, int64_t out, int64_t in) { return i * in / out; }
static int64_t end_of(int64_t i, int64_t out, int64_t in) { return ((i + 1) * in + out - 1) / out; }

/* The window of output cell (od, oh, ow): lo[3], hi[3]. */
static void cell_window(const em_pool_geom *g, int64_t od, int64_t oh, int64_t ow, int64_t *lo, int64_t *hi)
{
    const int64_t o[3] = {od, oh, ow};
    for (int j = 0; j < 3; j++) lo[j] = start_of(o[j], g->out[j], g->in[j]), hi[j] = end_of(o[j], g->out[j], g->in[j]);
}

#define FOR_CELLS(g)                                                                                 \
    for (int64_t od = 0, o = 0; od < (g)->out[0]; od++)                                              \
        for (int64_t oh = 0; oh < (g)->out[1]; oh++)                                                 \
            for (int64_t ow = 0; ow < (g)->out[2]; ow++, o++)
#define FOR_WINDOW(lo, hi)                                                                           \
    for (int64_t id = lo[0]; id < hi[0]; id++)                                                       \
        for (int64_t ih = lo[1]; ih < hi[1]; ih++)                                                   \
            for (int64_t iw = lo[2]; iw < hi[2]; iw++)

typedef enum { ADAPTIVE_AVG, ADAPTIVE_AVG_BACKWARD, ADAPTIVE_MAX } adaptive_kind;

typedef struct adaptive_job {
    const em_call *c;
    const em_pool_geom *g;
    adaptive_kind kind;
    int64_t pi, po; /* elements of an input and of an output plane */
} adaptive_job;

#define ADAPTIVE_KERNELS(DT, T)                                                                      \
    static void adaptive_avg_plane_##DT(const T *src, T *dst, const em_pool_geom *g, bool back)      \
    {                                                                                                \
        int64_t lo[3], hi[3], H = g->in[1], W = g->in[2];                                            \
        if (back) memset(dst, 0, g->in[0] * H * W * sizeof(T));                                      \
        FOR_CELLS(g)                                                                                 \
        {                                                                                            \
            cell_window(g, od, oh, ow, lo, hi);                                                      \
            T count = (T)((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));                      \
            if (back) {                                                                              \
                T v = src[o] / count;                                                                \
                FOR_WINDOW(lo, hi) dst[(id * H + ih) * W + iw] += v;                                 \
            } else {                                                                                 \
                T sum = 0;                                                                           \
                FOR_WINDOW(lo, hi) sum += src[(id * H + ih) * W + iw];                               \
                dst[o] = sum / count;                                                                \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void adaptive_max_plane_##DT(const T *x, T *y, int64_t *ind, const em_pool_geom *g)       \
    {                                                                                                \
        int64_t lo[3], hi[3], H = g->in[1], W = g->in[2];                                            \
        FOR_CELLS(g)                                                                                 \
        {                                                                                            \
            cell_window(g, od, oh, ow, lo, hi);                                                      \
            int64_t bi = (lo[0] * H + lo[1]) * W + lo[2];                                            \
            T best = x[bi];                                                                          \
            FOR_WINDOW(lo, hi)                                                                       \
            {                                                                                        \
                int64_t k = (id * H + ih) * W + iw;                                                  \
                if (x[k] > best || x[k] != x[k]) best = x[k], bi = k;                                \
            }                                                                                        \
            y[o] = best;                                                                             \
            ind[o] = bi;                                                                             \
        }                                                                                            \
    }                                                                                                \
    static void adaptive_planes_##DT(void *ctx, int64_t begin, int64_t end)                          \
    {                                                                                                \
        const adaptive_job *j = ctx;                                                                 \
        const T *src = (const T *)em_tensor_data(j->c->in[0]);                                       \
        T *dst = (T *)em_tensor_data(j->c->out[0]);                                                  \
        int64_t *ind = j->kind == ADAPTIVE_MAX ? (int64_t *)em_tensor_data(j->c->out[1]) : NULL;     \
        const int64_t pi = j->pi, po = j->po;                                                        \
        const bool back = j->kind == ADAPTIVE_AVG_BACKWARD;                                          \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            if (j->kind == ADAPTIVE_MAX)                                                             \
                adaptive_max_plane_##DT(src + pl * pi, dst + pl * po, ind + pl * po, j->g);          \
            else if (back) adaptive_avg_plane_##DT(src + pl * po, dst + pl * pi, j->g, true);        \
            else adaptive_avg_plane_##DT(src + pl * pi, dst + pl * po, j->g, false);                 \
        }                                                                                            \
    }

ADAPTIVE_KERNELS(f32, float)
ADAPTIVE_KERNELS(f64, double)

/* The planes run over the pool above EM_GRAIN_WINDOW, each by one chunk. */
static em_status adaptive(const em_call *c, adaptive_kind kind)
{
    const em_pool_geom *g = c->arg;
    adaptive_job j = {.c = c, .g = g, .kind = kind, .pi = g->in[0] * g->in[1] * g->in[2],
                      .po = g->out[0] * g->out[1] * g->out[2]};
    em_parallel_for(g->planes, (j.po > j.pi ? j.po : j.pi) * 2, EM_GRAIN_WINDOW,
                    c->dtype == EM_F64 ? adaptive_planes_f64 : adaptive_planes_f32, &j);
    return EM_OK;
}
em_status cpu_adaptive_avg_pool(const em_call *c) { return adaptive(c, ADAPTIVE_AVG); }
em_status cpu_adaptive_avg_pool_backward(const em_call *c) { return adaptive(c, ADAPTIVE_AVG_BACKWARD); }
em_status cpu_adaptive_max_pool(const em_call *c) { return adaptive(c, ADAPTIVE_MAX); }
