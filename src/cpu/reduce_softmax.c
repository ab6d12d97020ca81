/* CPU kernels of softmax and log_softmax along one dim (c->i[0]):
 * max, then exp(x - max) and its sum (float lanes added into a double every
 * LANES * LANES elements), then a scale by 1 / sum
 * or a subtraction of max + log(sum). A row along a contiguous dim runs
 * vectorized loops over lanes; along a slow dim, whole rows of columns. */
#include "reduce.h"
#include "vmath.h"

#define LANES 16

#define SOFTMAX_FNS(DT, T, EXP)                                                                      \
    /* the max, NaN if any (omp simd: a max reduction that vectorizes) */                         \
    static inline __attribute__((always_inline)) T row_max_##DT(const T *x, int64_t n, int64_t sn)    \
    {                                                                                                \
        T mx = -INFINITY;                                                                            \
        int nan = 0;                                                                                 \
        _Pragma("omp simd reduction(max : mx) reduction(| : nan)")                                   \
        for (int64_t i = 0; i < n; i++) {                                                            \
            T v = x[i * sn];                                                                         \
            mx = v > mx ? v : mx;                                                                    \
            nan |= v != v;                                                                           \
        }                                                                                            \
        return nan ? (T)NAN : mx;                                                                    \
    }                                                                                                \
    /* sum of exp(x - mx), also stored to out when `store`; blocks of T lanes add into a double */   \
    static inline __attribute__((always_inline)) double row_sum_exp_##DT(const T *x, int64_t n, int64_t sn, T mx, \
                                                                         T *out, int64_t on, bool store) \
    {                                                                                                \
        double total = 0;                                                                            \
        int64_t nl = n / LANES * LANES;                                                              \
        for (int64_t b = 0; b < nl; b += LANES * LANES) {                                            \
            T l[LANES] = {0};                                                                        \
            int64_t e = b + LANES * LANES < nl ? b + LANES * LANES : nl;                             \
            for (int64_t i = b; i < e; i += LANES)                                                   \
                for (int k = 0; k < LANES; k++) {                                                    \
                    T v = EXP(x[(i + k) * sn] - mx);                                                 \
                    if (store) out[(i + k) * on] = v;                                                \
                    l[k] += v;                                                                       \
                }                                                                                    \
            for (int k = 0; k < LANES; k++) total += l[k];                                           \
        }                                                                                            \
        for (int64_t i = nl; i < n; i++) {                                                           \
            T v = EXP(x[i * sn] - mx);                                                               \
            if (store) out[i * on] = v;                                                              \
            total += v;                                                                              \
        }                                                                                            \
        return total;                                                                                \
    }                                                                                                \
    static inline __attribute__((always_inline)) void softmax_row_##DT##_body(const T *x, int64_t n, int64_t sn, \
                                                                              T *out, int64_t on, bool take_log) \
    {                                                                                                \
        T mx = row_max_##DT(x, n, sn);                                                               \
        if (take_log) {                                                                              \
            T shift = mx + (T)log(row_sum_exp_##DT(x, n, sn, mx, out, on, false));                   \
            for (int64_t i = 0; i < n; i++) out[i * on] = x[i * sn] - shift;                         \
        } else {                                                                                     \
            T inv = (T)(1 / row_sum_exp_##DT(x, n, sn, mx, out, on, true));                          \
            for (int64_t i = 0; i < n; i++) out[i * on] *= inv;                                      \
        }                                                                                            \
    }                                                                                                \
    EM_SIMD static void softmax_row_##DT(const T *x, int64_t n, int64_t sn, T *out, int64_t on, bool take_log) \
    {                                                                                                \
        if (sn == 1 && on == 1)                                                                      \
            softmax_row_##DT##_body(x, n, 1, out, 1, take_log);                                      \
        else                                                                                         \
            softmax_row_##DT##_body(x, n, sn, out, on, take_log);                                    \
    }                                                                                                \
    /* sum[j] += exp(x - mx[j]) down the rows of m columns, stored to out when `store`; exp goes     \
     * through a row buffer so that both loops vectorize */                                         \
    static inline __attribute__((always_inline)) void cols_sum_exp_##DT(                              \
        const T *x, int64_t n, int64_t sn, int64_t m, int64_t si, const T *mx, T *out, int64_t on, int64_t oi, \
        double *sum, bool store)                                                                     \
    {                                                                                                \
        T e[EM_RED_COLS];                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                            \
            for (int64_t j = 0; j < m; j++) e[j] = EXP(x[i * sn + j * si] - mx[j]);                  \
            for (int64_t j = 0; j < m; j++) sum[j] += e[j];                                          \
            if (store)                                                                               \
                for (int64_t j = 0; j < m; j++) out[i * on + j * oi] = e[j];                         \
        }                                                                                            \
    }                                                                                                \
    static inline __attribute__((always_inline)) void softmax_cols_##DT##_body(                       \
        const T *x, int64_t n, int64_t sn, int64_t m, int64_t si, T *out, int64_t on, int64_t oi, bool take_log) \
    {                                                                                                \
        T mx[EM_RED_COLS];                                                                           \
        double sum[EM_RED_COLS];                                                                     \
        for (int64_t j = 0; j < m; j++) mx[j] = -INFINITY, sum[j] = 0;                               \
        for (int64_t i = 0; i < n; i++)                                                              \
            for (int64_t j = 0; j < m; j++) mx[j] = EM_MAX_NAN(mx[j], x[i * sn + j * si]);           \
        if (take_log) {                                                                              \
            cols_sum_exp_##DT(x, n, sn, m, si, mx, out, on, oi, sum, false);                         \
            for (int64_t j = 0; j < m; j++) mx[j] += (T)log(sum[j]);                                 \
            for (int64_t i = 0; i < n; i++)                                                          \
                for (int64_t j = 0; j < m; j++) out[i * on + j * oi] = x[i * sn + j * si] - mx[j];   \
        } else {                                                                                     \
            cols_sum_exp_##DT(x, n, sn, m, si, mx, out, on, oi, sum, true);                          \
            for (int64_t j = 0; j < m; j++) mx[j] = (T)(1 / sum[j]);                                 \
            for (int64_t i = 0; i < n; i++)                                                          \
                for (int64_t j = 0; j < m; j++) out[i * on + j * oi] *= mx[j];                       \
        }                                                                                            \
    }                                                                                                \
    EM_SIMD static void softmax_cols_##DT(const T *x, int64_t n, int64_t sn, int64_t m, int64_t si, T *out, \
                                          int64_t on, int64_t oi, bool take_log)                          \
    {                                                                                                \
        if (si == 1 && oi == 1 && take_log)                                                          \
            softmax_cols_##DT##_body(x, n, sn, m, 1, out, on, 1, true);                              \
        else if (si == 1 && oi == 1)                                                                 \
            softmax_cols_##DT##_body(x, n, sn, m, 1, out, on, 1, false);                             \
        else                                                                                         \
            softmax_cols_##DT##_body(x, n, sn, m, si, out, on, oi, take_log);                        \
    }                                                                                                \
    static void softmax_task_##DT(const em_red_geom *g, int64_t o, int64_t j0, int64_t mm, T *out, bool take_log) \
    {                                                                                                \
        int64_t xoff, ooff;                                                                          \
        em_red_geom_row(g, o, &xoff, &ooff);                                                         \
        const T *xp = (const T *)g->x + xoff + j0 * g->si;                                           \
        T *op = out + ooff + j0 * g->oi;                                                             \
        if (g->m > 1)                                                                                \
            softmax_cols_##DT(xp, g->n, g->sn, mm, g->si, op, g->on, g->oi, take_log);                    \
        else                                                                                         \
            softmax_row_##DT(xp, g->n, g->sn, op, g->on, take_log);                                       \
    }
SOFTMAX_FNS(F32, float, em_vexpf)
SOFTMAX_FNS(F64, double, exp)

typedef struct softmax_job {
    const em_red_geom *g;
    char *out;
    int64_t cw, ncc;
    bool take_log, f32;
} softmax_job;

static void softmax_tasks(void *p, int64_t begin, int64_t end)
{
    const softmax_job *s = p;
    const int64_t m = s->g->m;
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / s->ncc, j0 = t % s->ncc * s->cw, mm = m - j0 < s->cw ? m - j0 : s->cw;
        if (s->f32)
            softmax_task_F32(s->g, o, j0, mm, (float *)s->out, s->take_log);
        else
            softmax_task_F64(s->g, o, j0, mm, (double *)s->out, s->take_log);
    }
}

static em_status run_softmax(const em_call *c, bool take_log)
{
    em_red_geom g;
    if (em_red_geom_init(&g, c->in[0], c->out[0]->strides, (uint32_t)c->i[0], 0)) return em_error_code();
    softmax_job s = {.g = &g, .out = em_tensor_data(c->out[0]), .take_log = take_log, .f32 = c->dtype == EM_F32};
    s.cw = g.m > 1 ? EM_RED_COLS : 1;
    s.ncc = (g.m + s.cw - 1) / s.cw;
    int64_t ntask = g.n ? g.nrows * s.ncc : 0;
    em_red_for(ntask, g.nrows * g.m * g.n, softmax_tasks, &s);
    em_red_geom_free(&g);
    return EM_OK;
}

em_status cpu_softmax(const em_call *c) { return run_softmax(c, false); }
em_status cpu_log_softmax(const em_call *c) { return run_softmax(c, true); }
