/* CPU kernels of the class losses over indices: nll_loss, the fused
 * cross_entropy (log-sum-exp of each row and the picked logit, never the
 * whole log-softmax) and their backward ops.
 *
 * Layout (the op layer made every operand contiguous in the compute dtype):
 * input [N][C][S] (S: the product of the extra dims d1..dk, 1 without),
 * target int64 [N][S], weight [C] or absent. Params: i[0] reduction, i[1]
 * ignore_index, i[2..4] N, C, S, i[5] has weight. A "row" is one (n, s):
 * its C class scores are contiguous when S == 1, S apart otherwise (then
 * blocks of up to COLS rows are walked together, vectorized across s). */
#include "cpu.h"
#include "ember/loss.h"
#include "vmath.h"

#define COLS 64

typedef struct geom {
    int64_t N, C, S, ignore;
    em_reduction red;
    const int64_t *t;
} geom;

static geom geom_of(const em_call *c, const em_tensor *target)
{
    return (geom){.N = c->i[2], .C = c->i[3], .S = c->i[4], .ignore = c->i[1], .red = (em_reduction)c->i[0],
                  .t = (const int64_t *)em_tensor_data(target)};
}

/* Every target is a class or ignore_index; else IndexError, before any write. */
static em_status check_targets(const geom *g)
{
    for (int64_t i = 0, n = g->N * g->S; i < n; i++) {
        int64_t t = g->t[i];
        if (t != g->ignore && (t < 0 || t >= g->C)) return em_fail(EM_ERR_INDEX, "Target %lld is out of bounds.", (long long)t);
    }
    return EM_OK;
}

/* A parallel pass over rows: its operands (void pointers: one struct for
 * both dtypes) and the call's scalars. */
typedef struct class_job {
    const geom *g;
    const void *gr, *w, *x;
    void *lse, *gx;
    bool per_row;
    double total;
} class_job;

#define CLASS_FNS(DT, T, EXP)                                                                        \
    /* log(sum(exp(x))) of a contiguous row, the max subtracted first */                          \
    EM_SIMD static T row_lse_##DT(const T *x, int64_t C)                                           \
    {                                                                                              \
        T mx = -INFINITY;                                                                          \
        _Pragma("omp simd reduction(max : mx)")                                                    \
        for (int64_t c = 0; c < C; c++) mx = x[c] > mx ? x[c] : mx;                                \
        if (mx == -INFINITY || mx == INFINITY) mx = 0; /* an infinite max is not subtracted */     \
        double total = 0;                                                                          \
        for (int64_t b = 0; b < C; b += 1024) {                                                    \
            int64_t e = b + 1024 < C ? b + 1024 : C;                                               \
            T s = 0;                                                                               \
            _Pragma("omp simd reduction(+ : s)")                                                   \
            for (int64_t c = b; c < e; c++) s += EXP(x[c] - mx);                                   \
            total += s;                                                                            \
        }                                                                                          \
        return mx + (T)log(total);                                                                 \
    }                                                                                              \
    /* the same for m <= COLS rows whose classes are S apart (x: row 0's class 0) */                \
    EM_SIMD static void cols_lse_##DT(const T *x, int64_t C, int64_t S, int64_t m, T *lse)         \
    {                                                                                              \
        T mx[COLS];                                                                                \
        double total[COLS] = {0};                                                                  \
        for (int64_t j = 0; j < m; j++) mx[j] = -INFINITY;                                         \
        for (int64_t c = 0; c < C; c++)                                                            \
            for (int64_t j = 0; j < m; j++) mx[j] = x[c * S + j] > mx[j] ? x[c * S + j] : mx[j];   \
        for (int64_t j = 0; j < m; j++)                                                            \
            if (mx[j] == -INFINITY || mx[j] == INFINITY) mx[j] = 0;                                \
        for (int64_t c = 0; c < C; c++) {                                                          \
            T e[COLS];                                                                             \
            for (int64_t j = 0; j < m; j++) e[j] = EXP(x[c * S + j] - mx[j]);                      \
            for (int64_t j = 0; j < m; j++) total[j] += e[j];                                      \
        }                                                                                          \
        for (int64_t j = 0; j < m; j++) lse[j] = mx[j] + (T)log(total[j]);                         \
    }                                                                                              \
    /* o = exp(x - lse) scale over a contiguous row */                                          \
    EM_SIMD static void row_softmax_##DT(const T *restrict x, T lse, T scale, T *restrict o, int64_t C) \
    {                                                                                              \
        for (int64_t c = 0; c < C; c++) o[c] = EXP(x[c] - lse) * scale;                            \
    }                                                                                              \
    static void lse_rows_##DT(void *p, int64_t k0, int64_t k1)                                     \
    {                                                                                              \
        const class_job *j = p;                                                                    \
        const geom *g = j->g;                                                                      \
        const T *x = j->x;                                                                         \
        T *lse = j->lse;                                                                           \
        int64_t nb = (g->S + COLS - 1) / COLS;                                                     \
        for (int64_t k = k0; k < k1; k++) {                                                        \
            int64_t n = k / nb, s0 = k % nb * COLS, m = g->S - s0 < COLS ? g->S - s0 : COLS;        \
            if (g->S == 1)                                                                         \
                lse[n] = row_lse_##DT(x + n * g->C, g->C);                                         \
            else                                                                                   \
                cols_lse_##DT(x + n * g->C * g->S + s0, g->C, g->S, m, lse + n * g->S + s0);        \
        }                                                                                          \
    }                                                                                              \
    static void lse_all_##DT(const geom *g, const T *x, T *lse)                                    \
    {                                                                                              \
        class_job j = {.g = g, .x = x, .lse = lse};                                                \
        int64_t nb = (g->S + COLS - 1) / COLS;                                                     \
        em_parallel_for(g->N * nb, g->C * (g->S < COLS ? g->S : COLS), EM_GRAIN_ROWS, lse_rows_##DT, &j);\
    }                                                                                              \
    /* loss of each row: w[t] (lse - x[t]) (nll: lse NULL, -w[t] x[t]); 0 when ignored. Writes    \
     * the per-row losses (none) or their sum / the total weight into out, the total to tw */      \
    static void pick_##DT(const geom *g, const T *x, const T *w, const T *lse, T *out, T *tw)      \
    {                                                                                              \
        double total = 0, wsum = 0;                                                                \
        for (int64_t n = 0; n < g->N; n++)                                                         \
            for (int64_t s = 0; s < g->S; s++) {                                                   \
                int64_t r = n * g->S + s, t = g->t[r];                                             \
                T l = 0;                                                                           \
                if (t != g->ignore) {                                                              \
                    T wt = w ? w[t] : (T)1;                                                        \
                    l = wt * ((lse ? lse[r] : (T)0) - x[(n * g->C + t) * g->S + s]);               \
                    wsum += wt;                                                                    \
                }                                                                                  \
                if (g->red == EM_REDUCTION_NONE) out[r] = l;                                       \
                total += l;                                                                        \
            }                                                                                      \
        if (g->red != EM_REDUCTION_NONE)                                                           \
            *out = (T)(g->red == EM_REDUCTION_MEAN ? total / wsum : total);                        \
        *tw = (T)wsum;                                                                             \
    }                                                                                              \
    /* d loss / d x: scale[r] = w[t] grad[r] / total at each picked entry (nll: -scale; cross     \
     * entropy: softmax(x) scale - onehot scale), rows are zeroed first */                         \
    static void backward_rows_##DT(void *p, int64_t n0, int64_t n1)                                \
    {                                                                                              \
        const class_job *j = p;                                                                    \
        const geom *g = j->g;                                                                      \
        const T *gr = j->gr, *w = j->w, *x = j->x, *lse = j->lse;                                  \
        const bool per_row = j->per_row;                                                           \
        const T total = (T)j->total;                                                               \
        T *gx = j->gx;                                                                             \
        int64_t CS = g->C * g->S;                                                                  \
        for (int64_t n = n0; n < n1; n++) {                                                        \
            T *o = gx + n * CS;                                                                    \
            const T *xr = x ? x + n * CS : NULL;                                                   \
            for (int64_t s = 0; s < g->S; s++) {                                                   \
                int64_t r = n * g->S + s, t = g->t[r];                                             \
                T scale = t == g->ignore ? (T)0                                                    \
                                         : (w ? w[t] : (T)1) * gr[per_row ? r : 0] / total;        \
                if (lse && g->S == 1) {                                                            \
                    row_softmax_##DT(xr, lse[r], scale, o, g->C);                                  \
                } else if (lse) {                                                                  \
                    for (int64_t c = 0; c < g->C; c++)                                             \
                        o[c * g->S + s] = EXP(xr[c * g->S + s] - lse[r]) * scale;                  \
                } else {                                                                           \
                    for (int64_t c = 0; c < g->C; c++) o[c * g->S + s] = 0;                        \
                }                                                                                  \
                if (t != g->ignore) o[t * g->S + s] -= scale;                                      \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void backward_##DT(const geom *g, const T *gr, bool per_row, T total, const T *w,       \
                              const T *x, const T *lse, T *gx)                                     \
    {                                                                                              \
        class_job j = {.g = g, .gr = gr, .w = w, .x = x, .lse = (void *)lse, .gx = gx, .per_row = per_row, \
                       .total = total};                                                            \
        em_parallel_for(g->N, g->C * g->S, EM_GRAIN_ROWS, backward_rows_##DT, &j);                 \
    }

CLASS_FNS(F32, float, em_vexpf)
CLASS_FNS(F64, double, exp)

#define DATA(T, k) ((T *)em_tensor_data(k))
#define CDATA(T, t) ((const T *)em_tensor_data(t))

/* in: input, target, weight?; out: loss, total weight (nll) or loss, lse, total weight (cross entropy) */
static em_status forward(const em_call *c, bool fused)
{
    geom g = geom_of(c, c->in[1]);
    if (check_targets(&g)) return em_error_code();
    const em_tensor *w = c->i[5] ? c->in[2] : NULL;
    em_tensor *tw = c->out[fused ? 2 : 1];
    if (c->dtype == EM_F64) {
        double *lse = fused ? DATA(double, c->out[1]) : NULL;
        if (fused) lse_all_F64(&g, CDATA(double, c->in[0]), lse);
        pick_F64(&g, CDATA(double, c->in[0]), w ? CDATA(double, w) : NULL, lse, DATA(double, c->out[0]),
                 DATA(double, tw));
    } else {
        float *lse = fused ? DATA(float, c->out[1]) : NULL;
        if (fused) lse_all_F32(&g, CDATA(float, c->in[0]), lse);
        pick_F32(&g, CDATA(float, c->in[0]), w ? CDATA(float, w) : NULL, lse, DATA(float, c->out[0]),
                 DATA(float, tw));
    }
    return EM_OK;
}
em_status cpu_nll_loss(const em_call *c) { return forward(c, false); }
em_status cpu_cross_entropy(const em_call *c) { return forward(c, true); }

/* in: grad, input, target, weight?, total weight (nll) or grad, input, target, weight?, lse, total weight */
static em_status backward(const em_call *c, bool fused)
{
    geom g = geom_of(c, c->in[2]);
    const em_tensor *w = c->i[5] ? c->in[3] : NULL, *grad = c->in[0];
    int k = w ? 4 : 3;
    const em_tensor *lse = fused ? c->in[k] : NULL, *tw = c->in[fused ? k + 1 : k];
    bool per_row = g.red == EM_REDUCTION_NONE;
    if (c->dtype == EM_F64) {
        double total = g.red == EM_REDUCTION_MEAN ? *CDATA(double, tw) : 1;
        backward_F64(&g, CDATA(double, grad), per_row, total, w ? CDATA(double, w) : NULL,
                     fused ? CDATA(double, c->in[1]) : NULL, lse ? CDATA(double, lse) : NULL, DATA(double, c->out[0]));
    } else {
        float total = g.red == EM_REDUCTION_MEAN ? *CDATA(float, tw) : 1;
        backward_F32(&g, CDATA(float, grad), per_row, total, w ? CDATA(float, w) : NULL,
                     fused ? CDATA(float, c->in[1]) : NULL, lse ? CDATA(float, lse) : NULL, DATA(float, c->out[0]));
    }
    return EM_OK;
}
em_status cpu_nll_loss_backward(const em_call *c) { return backward(c, false); }
em_status cpu_cross_entropy_backward(const em_call *c) { return backward(c, true); }
