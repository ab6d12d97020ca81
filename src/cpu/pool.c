/* CPU kernels of max and average pooling over (planes, d, h, w) contiguous tensors (the op
 * layer, src/nn/pool.c, passes the geometry in c->arg). One 3-d window loop serves 1-d, 2-d
 * and 3-d pooling; 2x2 stride-2 max pooling (LeNet, ResNet) has its own loop. Planes run in
 * parallel above a grain (run_planes). Max: NaN wins, ties keep the first; indices are flat
 * in the plane. */
#include "cpu.h"
#include "../nn/pool_call.h"
#include <stdatomic.h>
#include <stdlib.h>

/* The planes of one call, split over the pool: a range function of each kernel below runs
 * planes [begin, end), each plane written by one chunk only. */
typedef struct planes_job {
    const em_call *c;
    const em_pool_geom *g; /* NULL for max_pool_backward */
    int64_t pi, po;        /* elements of an input and of an output plane */
    bool back;             /* avg_pool: the backward */
    _Atomic bool failed;   /* an index outside its plane; out of memory */
} planes_job;

/* Runs f32 or f64 (by c's dtype) over `planes` planes of `work` each (output x window);
 * false when a chunk failed (reported by the caller: an em_fail on a worker is lost). */
static bool run_planes(planes_job *j, int64_t planes, int64_t work, em_range_fn f32, em_range_fn f64)
{
    atomic_init(&j->failed, false);
    em_parallel_for(planes, work, EM_GRAIN_WINDOW, j->c->dtype == EM_F64 ? f64 : f32, j);
    return !atomic_load(&j->failed);
}

static int64_t plane_in(const em_pool_geom *g) { return g->in[0] * g->in[1] * g->in[2]; }
static int64_t plane_out(const em_pool_geom *g) { return g->out[0] * g->out[1] * g->out[2]; }
static int64_t window(const em_pool_geom *g) { return g->k[0] * g->k[1] * g->k[2]; }
/* elements of t's nd trailing dims (a plane) */
static int64_t trailing(const em_tensor *t, int nd)
{
    int64_t n = 1;
    for (int k = t->ndim - nd; k < t->ndim; k++) n *= t->sizes[k];
    return n;
}

static bool is_2x2(const em_pool_geom *g)
{
    return g->k[0] == 1 && g->s[0] == 1 && g->k[1] == 2 && g->k[2] == 2 && g->s[1] == 2 && g->s[2] == 2 &&
           g->p[1] == 0 && g->p[2] == 0 && g->d[1] == 1 && g->d[2] == 1 && 2 * g->out[1] <= g->in[1] &&
           2 * g->out[2] <= g->in[2]; /* ceil_mode's partial windows take the general loop */
}

/* v (at flat index i) replaces the running maximum *best (bits of a T) when greater or nan,
 * selected with masks so that no branch depends on the data */
#define TAKE_IF(DT, T, U)                                                                            \
    static inline U bits_##DT(T v)                                                                   \
    {                                                                                                \
        U u;                                                                                         \
        memcpy(&u, &v, sizeof u);                                                                    \
        return u;                                                                                    \
    }                                                                                                \
    static inline void take_if_##DT(T v, int64_t i, U *best, int64_t *bi)                            \
    {                                                                                                \
        T b;                                                                                         \
        memcpy(&b, best, sizeof b);                                                                  \
        bool take = (v > b) | (v != v);                                                              \
        U m = (U)0 - (U)take;                                                                        \
        uint64_t mi = (uint64_t)0 - (uint64_t)take;                                                  \
        *best = (bits_##DT(v) & m) | (*best & ~m);                                                   \
        *bi = (int64_t)(((uint64_t)i & mi) | ((uint64_t)*bi & ~mi));                                 \
    }
TAKE_IF(f32, float, uint32_t)
TAKE_IF(f64, double, uint64_t)

#define POOL_KERNELS(DT, T, U)                                                                       \
    static void max_plane_##DT(const T *x, T *y, int64_t *ind, const em_pool_geom *g)                \
    {                                                                                                \
        int64_t o = 0;                                                                               \
        for (int64_t od = 0; od < g->out[0]; od++)                                                   \
            for (int64_t oh = 0; oh < g->out[1]; oh++)                                               \
                for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {                                    \
                    int64_t d0 = od * g->s[0] - g->p[0], h0 = oh * g->s[1] - g->p[1];                \
                    int64_t w0 = ow * g->s[2] - g->p[2], bi = -1;                                    \
                    T best = -INFINITY;                                                              \
                    for (int64_t kd = 0; kd < g->k[0]; kd++) {                                       \
                        int64_t id = d0 + kd * g->d[0];                                              \
                        if (id < 0 || id >= g->in[0]) continue;                                      \
                        for (int64_t kh = 0; kh < g->k[1]; kh++) {                                   \
                            int64_t ih = h0 + kh * g->d[1];                                          \
                            if (ih < 0 || ih >= g->in[1]) continue;                                  \
                            const T *row = x + (id * g->in[1] + ih) * g->in[2];                      \
                            for (int64_t kw = 0; kw < g->k[2]; kw++) {                               \
                                int64_t iw = w0 + kw * g->d[2];                                      \
                                if (iw < 0 || iw >= g->in[2]) continue;                              \
                                T v = row[iw];                                                       \
                                if (v > best || v != v || bi < 0) {                                  \
                                    best = v;                                                        \
                                    bi = (id * g->in[1] + ih) * g->in[2] + iw;                       \
                                }                                                                    \
                            }                                                                        \
                        }                                                                            \
                    }                                                                                \
                    y[o] = best;                                                                     \
                    ind[o] = bi < 0 ? 0 : bi;                                                        \
                }                                                                                    \
    }                                                                                                \
    /* 2x2 windows, stride 2, no padding: four loads per output, in PyTorch's scan order (a          \
     * later value wins when greater or nan). After relu the comparisons are coin flips, so          \
     * the choice is made on the bits (take_if), not by a branch the CPU would mispredict. */        \
    EM_SIMD static void max_plane_2x2_##DT(const T *x, T *y, int64_t *ind, const em_pool_geom *g)    \
    {                                                                                                \
        int64_t W = g->in[2], OW = g->out[2];                                                        \
        for (int64_t oh = 0; oh < g->out[1]; oh++) {                                                 \
            const T *r0 = x + 2 * oh * W, *r1 = r0 + W;                                              \
            T *yo = y + oh * OW;                                                                     \
            int64_t *io = ind + oh * OW;                                                             \
            int64_t ow = 0;                                                                          \
            for (; ow < (OW & ~(int64_t)7); ow++) { /* vectorized: selects become blends */          \
                int64_t base = 2 * oh * W + 2 * ow, bi = base;                                       \
                T best = r0[2 * ow], v = r0[2 * ow + 1];                                             \
                bool m = (v > best) | (v != v);                                                      \
                best = m ? v : best, bi = m ? base + 1 : bi;                                         \
                v = r1[2 * ow], m = (v > best) | (v != v);                                           \
                best = m ? v : best, bi = m ? base + W : bi;                                         \
                v = r1[2 * ow + 1], m = (v > best) | (v != v);                                       \
                best = m ? v : best, bi = m ? base + W + 1 : bi;                                     \
                yo[ow] = best;                                                                       \
                io[ow] = bi;                                                                         \
            }                                                                                        \
            for (; ow < OW; ow++) { /* the rest, scalar: masks, not branches */                      \
                int64_t base = 2 * oh * W + 2 * ow, bi = base;                                       \
                U best = bits_##DT(r0[2 * ow]);                                                      \
                take_if_##DT(r0[2 * ow + 1], base + 1, &best, &bi);                                  \
                take_if_##DT(r1[2 * ow], base + W, &best, &bi);                                      \
                take_if_##DT(r1[2 * ow + 1], base + W + 1, &best, &bi);                              \
                memcpy(&yo[ow], &best, sizeof best);                                                 \
                io[ow] = bi;                                                                         \
            }                                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void max_planes_##DT(void *ctx, int64_t begin, int64_t end)                               \
    {                                                                                                \
        const planes_job *j = ctx;                                                                   \
        const T *x = (const T *)em_tensor_data(j->c->in[0]);                                         \
        T *y = (T *)em_tensor_data(j->c->out[0]);                                                    \
        int64_t *ind = (int64_t *)em_tensor_data(j->c->out[1]), pi = j->pi, po = j->po;              \
        const bool fast = is_2x2(j->g);                                                              \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            if (fast) max_plane_2x2_##DT(x + pl * pi, y + pl * po, ind + pl * po, j->g);             \
            else max_plane_##DT(x + pl * pi, y + pl * po, ind + pl * po, j->g);                      \
        }                                                                                            \
    }                                                                                                \
    /* max_pool_backward: gin = 0, then gin[ind[o]] += g[o] in each plane; fails when an index       \
     * falls outside its plane (a caller's indices: skipped, and the fresh output is dropped) */     \
    static void max_backward_planes_##DT(void *ctx, int64_t begin, int64_t end)                      \
    {                                                                                                \
        planes_job *j = ctx;                                                                         \
        const T *g = (const T *)em_tensor_data(j->c->in[0]);                                         \
        const int64_t *ind = (const int64_t *)em_tensor_data(j->c->in[1]);                           \
        T *gin = (T *)em_tensor_data(j->c->out[0]);                                                  \
        const int64_t pi = j->pi, po = j->po;                                                        \
        bool bad = false;                                                                            \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            T *dst = gin + pl * pi;                                                                  \
            const T *src = g + pl * po;                                                              \
            const int64_t *ix = ind + pl * po;                                                       \
            memset(dst, 0, (size_t)pi * sizeof(T));                                                  \
            for (int64_t o = 0; o < po; o++) {                                                       \
                if ((uint64_t)ix[o] < (uint64_t)pi) dst[ix[o]] += src[o];                            \
                else bad = true;                                                                     \
            }                                                                                        \
        }                                                                                            \
        if (bad) atomic_store(&j->failed, true);                                                     \
    }                                                                                                \
    /* avg_pool (backward when `back`: gin[window] += g / divisor, gin zeroed first) */              \
    static void avg_plane_##DT(const T *src, T *dst, const em_pool_geom *g, bool back)               \
    {                                                                                                \
        int64_t o = 0;                                                                               \
        if (back) memset(dst, 0, plane_in(g) * sizeof(T));                                           \
        for (int64_t od = 0; od < g->out[0]; od++)                                                   \
            for (int64_t oh = 0; oh < g->out[1]; oh++)                                               \
                for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {                                    \
                    int64_t lo[3] = {od * g->s[0] - g->p[0], oh * g->s[1] - g->p[1], ow * g->s[2] - g->p[2]}; \
                    int64_t hi[3], padded = 1, inside = 1;                                           \
                    for (int j = 0; j < 3; j++) {                                                    \
                        hi[j] = lo[j] + g->k[j] < g->in[j] + g->p[j] ? lo[j] + g->k[j] : g->in[j] + g->p[j]; \
                        padded *= hi[j] - lo[j];                                                     \
                        lo[j] = lo[j] < 0 ? 0 : lo[j];                                               \
                        hi[j] = hi[j] > g->in[j] ? g->in[j] : hi[j];                                 \
                        inside *= hi[j] > lo[j] ? hi[j] - lo[j] : 0;                                 \
                    }                                                                                \
                    if (inside == 0) {                                                               \
                        if (!back) dst[o] = 0;                                                       \
                        continue;                                                                    \
                    }                                                                                \
                    T div = (T)(g->divisor ? g->divisor : g->count_include_pad ? padded : inside);   \
                    if (back) {                                                                      \
                        T v = src[o] / div;                                                          \
                        for (int64_t id = lo[0]; id < hi[0]; id++)                                   \
                            for (int64_t ih = lo[1]; ih < hi[1]; ih++) {                             \
                                T *row = dst + (id * g->in[1] + ih) * g->in[2];                      \
                                for (int64_t iw = lo[2]; iw < hi[2]; iw++) row[iw] += v;             \
                            }                                                                        \
                    } else {                                                                         \
                        T sum = 0;                                                                   \
                        for (int64_t id = lo[0]; id < hi[0]; id++)                                   \
                            for (int64_t ih = lo[1]; ih < hi[1]; ih++) {                             \
                                const T *row = src + (id * g->in[1] + ih) * g->in[2];                \
                                for (int64_t iw = lo[2]; iw < hi[2]; iw++) sum += row[iw];           \
                            }                                                                        \
                        dst[o] = sum / div;                                                          \
                    }                                                                                \
                }                                                                                    \
    }                                                                                                \
    static void avg_planes_##DT(void *ctx, int64_t begin, int64_t end)                               \
    {                                                                                                \
        const planes_job *j = ctx;                                                                   \
        const T *src = (const T *)em_tensor_data(j->c->in[0]);                                       \
        T *dst = (T *)em_tensor_data(j->c->out[0]);                                                  \
        const int64_t pi = j->pi, po = j->po;                                                        \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            if (j->back) avg_plane_##DT(src + pl * po, dst + pl * pi, j->g, true);                   \
            else avg_plane_##DT(src + pl * pi, dst + pl * po, j->g, false);                          \
        }                                                                                            \
    }

POOL_KERNELS(f32, float, uint32_t)
POOL_KERNELS(f64, double, uint64_t)

/* Fractional max pooling: window starts per dim from the plane's sample u as PyTorch computes
 * them, in T: start i = int((i + u) alpha) - int(u alpha), alpha = (in - k) / (out - 1), the
 * last window flush with the input's end. Samples are (planes, nd): for 2-d, u[0] steps the
 * width and u[1] the height; for 3-d, u[0..2] time, height, width (PyTorch's orders). */
#define FRACTIONAL_KERNEL(DT, T)                                                                     \
    static void intervals_##DT(T u, int64_t in, int64_t out, int64_t k, int64_t *start)              \
    {                                                                                                \
        if (out > 1) {                                                                               \
            T alpha = (T)(in - k) / (T)(out - 1);                                                    \
            for (int64_t i = 0; i < out - 1; i++) start[i] = (int)(((T)i + u) * alpha) - (int)(u * alpha); \
        }                                                                                            \
        start[out - 1] = in - k;                                                                     \
    }                                                                                                \
    /* scratch per chunk: the window starts of a plane */                                            \
    static void fractional_planes_##DT(void *ctx, int64_t begin, int64_t end)                        \
    {                                                                                                \
        planes_job *j = ctx;                                                                         \
        const em_pool_geom *g = j->g;                                                                \
        const T *x = (const T *)em_tensor_data(j->c->in[0]), *u = (const T *)em_tensor_data(j->c->in[1]); \
        T *y = (T *)em_tensor_data(j->c->out[0]);                                                    \
        int64_t *ind = (int64_t *)em_tensor_data(j->c->out[1]), pi = j->pi, po = j->po;              \
        const int nd = (int)j->c->i[0];                                                              \
        int64_t *st[3], *starts = malloc((size_t)(g->out[0] + g->out[1] + g->out[2]) * sizeof *starts); \
        if (!starts) {                                                                               \
            atomic_store(&j->failed, true);                                                          \
            return;                                                                                  \
        }                                                                                            \
        st[0] = starts, st[1] = starts + g->out[0], st[2] = st[1] + g->out[1];                       \
        for (int64_t pl = begin; pl < end; pl++) {                                                   \
            for (int k = 0; k < 3; k++)                                                              \
                intervals_##DT(k < 3 - nd ? 0 : u[pl * nd + (nd == 3 ? k : 2 - k)], g->in[k], g->out[k], \
                               g->k[k], st[k]);                                                      \
            const T *xp = x + pl * pi;                                                               \
            int64_t o = pl * po;                                                                     \
            for (int64_t od = 0; od < g->out[0]; od++)                                               \
                for (int64_t oh = 0; oh < g->out[1]; oh++)                                           \
                    for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {                                \
                        int64_t d0 = st[0][od], h0 = st[1][oh], w0 = st[2][ow];                      \
                        int64_t bi = (d0 * g->in[1] + h0) * g->in[2] + w0;                           \
                        T best = -INFINITY;                                                          \
                        for (int64_t id = d0; id < d0 + g->k[0]; id++)                               \
                            for (int64_t ih = h0; ih < h0 + g->k[1]; ih++)                           \
                                for (int64_t iw = w0; iw < w0 + g->k[2]; iw++) {                     \
                                    int64_t at = (id * g->in[1] + ih) * g->in[2] + iw;               \
                                    T v = xp[at];                                                    \
                                    if (v > best || v != v) best = v, bi = at;                       \
                                }                                                                    \
                        y[o] = best;                                                                 \
                        ind[o] = bi;                                                                 \
                    }                                                                                \
        }                                                                                            \
        free(starts);                                                                                \
    }

FRACTIONAL_KERNEL(f32, float)
FRACTIONAL_KERNEL(f64, double)

/* Runs a pooling kernel over the planes of c's geometry (c->arg); false when a chunk failed. */
static bool run_pool(const em_call *c, bool back, em_range_fn f32, em_range_fn f64)
{
    const em_pool_geom *g = c->arg;
    planes_job j = {.c = c, .g = g, .pi = plane_in(g), .po = plane_out(g), .back = back};
    return run_planes(&j, g->planes, j.po * window(g), f32, f64);
}

em_status cpu_fractional_max_pool(const em_call *c)
{
    if (!run_pool(c, false, fractional_planes_f32, fractional_planes_f64))
        return em_fail(EM_ERR_MEMORY, "fractional_max_pool: out of memory");
    return EM_OK;
}

em_status cpu_max_pool(const em_call *c)
{
    run_pool(c, false, max_planes_f32, max_planes_f64);
    return EM_OK;
}

em_status cpu_max_pool_backward(const em_call *c)
{
    const int nd = (int)c->i[0];
    planes_job j = {.c = c, .pi = trailing(c->out[0], nd), .po = trailing(c->in[0], nd)};
    if (!run_planes(&j, j.pi ? em_numel(c->out[0]) / j.pi : 0, j.pi + j.po, max_backward_planes_f32,
                    max_backward_planes_f64))
        return em_fail(EM_ERR_INDEX, "max_pool_backward: an index is outside its plane");
    return EM_OK;
}

em_status cpu_avg_pool(const em_call *c)
{
    run_pool(c, false, avg_planes_f32, avg_planes_f64);
    return EM_OK;
}

em_status cpu_avg_pool_backward(const em_call *c)
{
    run_pool(c, true, avg_planes_f32, avg_planes_f64);
    return EM_OK;
}
