/* CPU kernels of the scans along one dim: cumsum, cumprod, logcumsumexp
 * (accumulating in double for floats, as PyTorch's CPU kernels do, and in
 * wrapping uint64 for integers) and cummax/cummin (values and indices).
 * Uses the reduction geometry with x's shape as the output's: a scan along
 * a slow dim runs over whole rows of columns at once (vectorized). */
#include "reduce.h"

/* out[i * on] = scan of x[0..i]; cols does m columns (strides si, oi) at
 * once. idx (cummax/cummin) receives indices with out's strides. */
typedef struct scan_kind {
    void (*row)(const char *x, int64_t n, int64_t sn, char *out, int64_t on, char *idx);
    void (*cols)(const char *x, int64_t n, int64_t sn, int64_t m, int64_t si, char *out, int64_t on, int64_t oi,
                 char *idx);
    size_t out_size;
} scan_kind;

#define SCAN_KIND(name, T, ACC, INIT, COMB)                                                          \
    EM_SIMD static void name##_row(const char *xv, int64_t n, int64_t sn, char *ov, int64_t on, char *idx) \
    {                                                                                                \
        const T *x = (const T *)xv;                                                                  \
        T *out = (T *)ov;                                                                            \
        ACC a = (INIT);                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                            \
            a = COMB(a, (ACC)x[i * sn]);                                                             \
            out[i * on] = (T)a;                                                                      \
        }                                                                                            \
    }                                                                                                \
    static inline __attribute__((always_inline)) void name##_cols_body(const T *x, int64_t n, int64_t sn, int64_t m, \
                                                                       int64_t si, T *out, int64_t on, int64_t oi) \
    {                                                                                                \
        ACC a[EM_RED_COLS];                                                                          \
        for (int64_t j = 0; j < m; j++) a[j] = (INIT);                                               \
        for (int64_t i = 0; i < n; i++)                                                              \
            for (int64_t j = 0; j < m; j++) {                                                        \
                a[j] = COMB(a[j], (ACC)x[i * sn + j * si]);                                          \
                out[i * on + j * oi] = (T)a[j];                                                      \
            }                                                                                        \
    }                                                                                                \
    EM_SIMD static void name##_cols(const char *xv, int64_t n, int64_t sn, int64_t m, int64_t si, char *ov, \
                                    int64_t on, int64_t oi, char *idx)                               \
    {                                                                                                \
        if (si == 1 && oi == 1)                                                                      \
            name##_cols_body((const T *)xv, n, sn, m, 1, (T *)ov, on, 1);                            \
        else                                                                                         \
            name##_cols_body((const T *)xv, n, sn, m, si, (T *)ov, on, oi);                          \
    }                                                                                                \
    static const scan_kind name = {name##_row, name##_cols, sizeof(T)};

#define ADD(x, y) ((x) + (y))
#define MUL(x, y) ((x) * (y))
SCAN_KIND(cumsum_F32, float, double, 0.0, ADD)
SCAN_KIND(cumsum_F64, double, double, 0.0, ADD)
SCAN_KIND(cumsum_I64, int64_t, uint64_t, 0, ADD)
SCAN_KIND(cumprod_F32, float, double, 1.0, MUL)
SCAN_KIND(cumprod_F64, double, double, 1.0, MUL)
SCAN_KIND(cumprod_I64, int64_t, uint64_t, 1, MUL)
SCAN_KIND(cumsum_C64, em_C64_t, em_C128_t, 0.0, ADD)
SCAN_KIND(cumsum_C128, em_C128_t, em_C128_t, 0.0, ADD)
SCAN_KIND(cumprod_C64, em_C64_t, em_C128_t, 1.0, MUL)
SCAN_KIND(cumprod_C128, em_C128_t, em_C128_t, 1.0, MUL)

/* log(exp(a) + exp(v)) without overflow; equal infinities stay as they are
 * and NaN propagates (PyTorch's _log_add_exp_helper). */
static inline double log_add_exp(double a, double v)
{
    double lo = isnan(v) ? v : v < a ? v : a, hi = isnan(v) ? v : a < v ? v : a; /* std::min, std::max */
    if (lo != hi || isfinite(lo)) return log1p(exp(lo - hi)) + hi;
    return a;
}
SCAN_KIND(logcumsumexp_F32, float, double, -INFINITY, log_add_exp)
SCAN_KIND(logcumsumexp_F64, double, double, -INFINITY, log_add_exp)

/* cummax/cummin: a NaN, or an element at least as good as the running best
 * (so the latest of equal elements), takes over. */
#define CUM_MAX_TAKES(v, best) ((v) != (v) || ((best) == (best) && (v) >= (best)))
#define CUM_MIN_TAKES(v, best) ((v) != (v) || ((best) == (best) && (v) <= (best)))
#define CUM_ARG_KIND(name, T, TAKES)                                                                 \
    static void name##_row(const char *xv, int64_t n, int64_t sn, char *ov, int64_t on, char *iv)    \
    {                                                                                                \
        const T *x = (const T *)xv;                                                                  \
        T *out = (T *)ov, best = x[0];                                                               \
        int64_t *idx = (int64_t *)iv, bi = 0;                                                        \
        for (int64_t i = 0; i < n; i++) {                                                            \
            T v = x[i * sn];                                                                         \
            if (TAKES(v, best)) best = v, bi = i;                                                    \
            out[i * on] = best;                                                                      \
            idx[i * on] = bi;                                                                        \
        }                                                                                            \
    }                                                                                                \
    static void name##_cols(const char *xv, int64_t n, int64_t sn, int64_t m, int64_t si, char *ov, int64_t on, \
                            int64_t oi, char *iv)                                                    \
    {                                                                                                \
        const T *x = (const T *)xv;                                                                  \
        T *out = (T *)ov, best[EM_RED_COLS];                                                         \
        int64_t *idx = (int64_t *)iv, bi[EM_RED_COLS];                                               \
        for (int64_t j = 0; j < m; j++) best[j] = x[j * si], bi[j] = 0;                              \
        for (int64_t i = 0; i < n; i++)                                                              \
            for (int64_t j = 0; j < m; j++) {                                                        \
                T v = x[i * sn + j * si];                                                            \
                if (TAKES(v, best[j])) best[j] = v, bi[j] = i;                                       \
                out[i * on + j * oi] = best[j];                                                      \
                idx[i * on + j * oi] = bi[j];                                                        \
            }                                                                                        \
    }                                                                                                \
    static const scan_kind name = {name##_row, name##_cols, sizeof(T)};
#define CUM_ARG_KINDS(DT)                                                                            \
    CUM_ARG_KIND(cummax_##DT, em_##DT##_t, CUM_MAX_TAKES) CUM_ARG_KIND(cummin_##DT, em_##DT##_t, CUM_MIN_TAKES)
EM_FOR_ALL(CUM_ARG_KINDS)

typedef struct scan_job {
    const scan_kind *k;
    const em_red_geom *g;
    char *out, *idx;
    int64_t cw, ncc;
} scan_job;

static void scan_tasks(void *p, int64_t begin, int64_t end)
{
    const scan_job *s = p;
    const em_red_geom *g = s->g;
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / s->ncc, j0 = t % s->ncc * s->cw, mm = g->m - j0 < s->cw ? g->m - j0 : s->cw, xoff, ooff;
        em_red_geom_row(g, o, &xoff, &ooff);
        const char *xp = g->x + (xoff + j0 * g->si) * (int64_t)g->xsize;
        int64_t oe = ooff + j0 * g->oi;
        char *op = s->out + oe * (int64_t)s->k->out_size, *ip = s->idx ? s->idx + oe * (int64_t)sizeof(int64_t) : NULL;
        if (g->m > 1)
            s->k->cols(xp, g->n, g->sn, mm, g->si, op, g->on, g->oi, ip);
        else
            s->k->row(xp, g->n, g->sn, op, g->on, ip);
    }
}

/* Runs a scan over c->in[0] along the dim in c->i[0] into c->out[0] (and
 * the indices into c->out[1]); tasks are (outer row, column chunk). */
static em_status run_scan(const em_call *c, const scan_kind *const *kinds)
{
    const scan_kind *k = kinds[c->dtype];
    if (!k) return em_red_no_kernel(c);
    em_red_geom g;
    if (em_red_geom_init(&g, c->in[0], c->out[0]->strides, (uint32_t)c->i[0], 0)) return em_error_code();
    scan_job s = {.k = k, .g = &g, .out = em_tensor_data(c->out[0]), .idx = c->nout > 1 ? em_tensor_data(c->out[1]) : NULL};
    s.cw = g.m > 1 ? EM_RED_COLS : 1;
    s.ncc = (g.m + s.cw - 1) / s.cw;
    int64_t ntask = g.n ? g.nrows * s.ncc : 0;
    em_red_for(ntask, g.nrows * g.m * g.n, scan_tasks, &s);
    em_red_geom_free(&g);
    return EM_OK;
}

#define CPU_SCAN(op, ...)                                                                            \
    static const scan_kind *const op##_kinds[EM_DTYPE_COUNT] = {__VA_ARGS__};                        \
    em_status cpu_##op(const em_call *c) { return run_scan(c, op##_kinds); }
CPU_SCAN(cumsum, [EM_F32] = &cumsum_F32, [EM_F64] = &cumsum_F64, [EM_I64] = &cumsum_I64, [EM_C64] = &cumsum_C64,
         [EM_C128] = &cumsum_C128)
CPU_SCAN(cumprod, [EM_F32] = &cumprod_F32, [EM_F64] = &cumprod_F64, [EM_I64] = &cumprod_I64, [EM_C64] = &cumprod_C64,
         [EM_C128] = &cumprod_C128)
CPU_SCAN(logcumsumexp, [EM_F32] = &logcumsumexp_F32, [EM_F64] = &logcumsumexp_F64)
#define CUMMAX_ENTRY(DT) [EM_##DT] = &cummax_##DT,
#define CUMMIN_ENTRY(DT) [EM_##DT] = &cummin_##DT,
CPU_SCAN(cummax, EM_FOR_ALL(CUMMAX_ENTRY))
CPU_SCAN(cummin, EM_FOR_ALL(CUMMIN_ENTRY))
