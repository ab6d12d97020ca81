/* CPU kernels of the selection reductions: median and nanmedian (the lower
 * median, with the index of its first occurrence) and mode (the smallest of
 * the most frequent values, with the index of its last occurrence). Each
 * output gathers its n elements into a scratch buffer. */
#include "reduce.h"
#include <stdatomic.h>
#include <stdlib.h>

/* The value of an empty median: NaN, or 0 for integers. */
#define EMPTY_VALUE(T) ((T)0.5 == 0 ? (T)0 : (T)NAN)

/* Per dtype: quickselect (3-way partition: duplicates cost nothing). */
#define MEDIAN_FNS(DT, T)                                                                            \
    static T select_##DT(T *a, int64_t n, int64_t k)                                                 \
    {                                                                                                \
        int64_t lo = 0, hi = n - 1;                                                                  \
        while (lo < hi) {                                                                            \
            T x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];                                       \
            T p = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);                 \
            int64_t lt = lo, i = lo, gt = hi;                                                        \
            while (i <= gt) {                                                                        \
                T v = a[i];                                                                          \
                if (v < p) a[i++] = a[lt], a[lt++] = v;                                              \
                else if (v > p) a[i] = a[gt], a[gt--] = v;                                           \
                else i++;                                                                            \
            }                                                                                        \
            if (k < lt) hi = lt - 1;                                                                 \
            else if (k > gt) lo = gt + 1;                                                            \
            else return p;                                                                           \
        }                                                                                            \
        return a[k];                                                                                 \
    }                                                                                                \
    /* flag: ignore NaN (nanmedian); otherwise a NaN is the median */                                \
    static void median_##DT(const char *xv, int64_t n, int64_t sn, bool ignore_nan, void *scratch, char *val, \
                            int64_t *idx)                                                            \
    {                                                                                                \
        const T *x = (const T *)xv;                                                                  \
        T *buf = (T *)scratch;                                                                       \
        int64_t cnt = 0, first_nan = -1;                                                             \
        for (int64_t i = 0; i < n; i++) {                                                            \
            T v = x[i * sn];                                                                         \
            if (v != v) {                                                                            \
                if (first_nan < 0) first_nan = i;                                                    \
            } else {                                                                                 \
                buf[cnt++] = v;                                                                      \
            }                                                                                        \
        }                                                                                            \
        if (first_nan >= 0 && (!ignore_nan || cnt == 0)) {                                           \
            *(T *)val = x[first_nan * sn];                                                           \
            *idx = first_nan;                                                                        \
            return;                                                                                  \
        }                                                                                            \
        if (cnt == 0) {                                                                              \
            *(T *)val = EMPTY_VALUE(T);                                                              \
            *idx = 0;                                                                                \
            return;                                                                                  \
        }                                                                                            \
        T m = select_##DT(buf, cnt, (cnt - 1) / 2);                                                  \
        int64_t i = 0;                                                                               \
        while (x[i * sn] != m) i++;                                                                  \
        *(T *)val = m;                                                                               \
        *idx = i;                                                                                    \
    }

/* Per dtype: mode by a sort of (value, index) pairs, NaN ordered last. */
#define MODE_FNS(DT, T)                                                                              \
    typedef struct pair_##DT {                                                                       \
        T v;                                                                                         \
        int64_t i;                                                                                   \
    } pair_##DT;                                                                                     \
    static int pair_cmp_##DT(const void *pa, const void *pb)                                         \
    {                                                                                                \
        const pair_##DT *a = (const pair_##DT *)pa, *b = (const pair_##DT *)pb;                      \
        bool na = a->v != a->v, nb = b->v != b->v;                                                   \
        if (na != nb) return na ? 1 : -1;                                                            \
        if (!na && a->v != b->v) return a->v < b->v ? -1 : 1;                                       \
        return a->i < b->i ? -1 : a->i > b->i;                                                       \
    }                                                                                                \
    static void mode_##DT(const char *xv, int64_t n, int64_t sn, bool flag, void *scratch, char *val, int64_t *idx) \
    {                                                                                                \
        const T *x = (const T *)xv;                                                                  \
        pair_##DT *p = (pair_##DT *)scratch;                                                         \
        for (int64_t i = 0; i < n; i++) p[i] = (pair_##DT){x[i * sn], i};                            \
        qsort(p, (size_t)n, sizeof *p, pair_cmp_##DT);                                               \
        int64_t best = 0, best_len = 0, run = 0;                                                     \
        for (int64_t i = 0; i < n; i++) {                                                            \
            run++;                                                                                   \
            if (i == n - 1 || p[i].v != p[i + 1].v) { /* NaN != NaN: each NaN is its own run */      \
                if (run > best_len) best = i, best_len = run;                                        \
                run = 0;                                                                             \
            }                                                                                        \
        }                                                                                            \
        *(T *)val = p[best].v;                                                                       \
        *idx = p[best].i;                                                                            \
    }
#define MEDIAN_DT(DT) MEDIAN_FNS(DT, em_##DT##_t)
#define MODE_DT(DT) MODE_FNS(DT, em_##DT##_t)
EM_FOR_NUMERIC(MEDIAN_DT)
EM_FOR_ALL(MODE_DT)

typedef void (*select_fn)(const char *x, int64_t n, int64_t sn, bool flag, void *scratch, char *val, int64_t *idx);

typedef struct select_job {
    const em_red_geom *g;
    select_fn fn;
    size_t scratch_size;
    bool flag;
    char *out;
    int64_t *idx;
    _Atomic bool failed;
} select_job;

static void select_tasks(void *p, int64_t begin, int64_t end)
{
    select_job *s = p;
    const em_red_geom *g = s->g;
    const int64_t vsize = (int64_t)g->xsize;
    void *scratch = malloc((size_t)(g->n ? g->n : 1) * s->scratch_size);
    if (!scratch) {
        s->failed = true;
        return;
    }
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / g->m, j = t % g->m, xoff, ooff, i;
        em_red_geom_row(g, o, &xoff, &ooff);
        s->fn(g->x + (xoff + j * g->si) * vsize, g->n, g->sn, s->flag, scratch, s->out + (ooff + j * g->oi) * vsize, &i);
        if (s->idx) s->idx[ooff + j * g->oi] = i;
    }
    free(scratch);
}

/* Runs fn for every output of c (values in out[0], indices in out[1] if
 * any); scratch holds scratch_size bytes per reduced element. */
static em_status run_select(const em_call *c, select_fn fn, size_t scratch_size, bool flag)
{
    if (!fn) return em_red_no_kernel(c);
    em_red_geom g;
    if (em_red_geom_init(&g, c->in[0], c->out[0]->strides, (uint32_t)c->i[0], 0)) return em_error_code();
    select_job s = {.g = &g, .fn = fn, .scratch_size = scratch_size, .flag = flag, .out = em_tensor_data(c->out[0]),
                    .idx = c->nout > 1 ? (int64_t *)em_tensor_data(c->out[1]) : NULL};
    int64_t nout = em_red_nout(&g);
    em_red_for(nout, nout * g.n, select_tasks, &s);
    em_red_geom_free(&g);
    return s.failed ? em_fail(EM_ERR_MEMORY, "%s: out of memory", em_ops[c->op].name) : EM_OK;
}

#define MEDIAN_ENTRY(DT) [EM_##DT] = median_##DT,
#define MODE_ENTRY(DT) [EM_##DT] = mode_##DT,
static const select_fn median_fns[EM_DTYPE_COUNT] = {EM_FOR_NUMERIC(MEDIAN_ENTRY)};
static const select_fn mode_fns[EM_DTYPE_COUNT] = {EM_FOR_ALL(MODE_ENTRY)};

#define MEDIAN_SCRATCH em_dtypes[c->dtype].size
em_status cpu_median(const em_call *c) { return run_select(c, median_fns[c->dtype], MEDIAN_SCRATCH, false); }
em_status cpu_median_dim(const em_call *c) { return run_select(c, median_fns[c->dtype], MEDIAN_SCRATCH, false); }
em_status cpu_nanmedian(const em_call *c) { return run_select(c, median_fns[c->dtype], MEDIAN_SCRATCH, true); }
em_status cpu_nanmedian_dim(const em_call *c) { return run_select(c, median_fns[c->dtype], MEDIAN_SCRATCH, true); }
em_status cpu_mode(const em_call *c) { return run_select(c, mode_fns[c->dtype], sizeof(pair_I64), false); }
