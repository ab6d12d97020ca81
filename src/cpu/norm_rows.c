/* CPU kernels of layer_norm and group_norm, forward and backward (layout in
 * src/nn/norm_call.h): R contiguous rows normalized each on its own, one row
 * per task, over threads above a grain. Layer norm's rows (S == 1) take a
 * weight per element and vectorize across the row; group norm's take one per
 * run of S elements. */
#include "norm.h"
#include "../nn/norm_call.h"
#include <stdlib.h>

#define ROW_NORM_FNS(DT, T)                                                                       \
    EM_SIMD static void row_forward_##DT(const T *x, T *y, const T *w, const T *b, int64_t K,     \
                                         int64_t S, double eps, T *mean_out, T *rstd_out)         \
    {                                                                                             \
        norm_stats st = {0};                                                                      \
        norm_run_stats_##DT(x, K * S, &st);                                                       \
        double rstd = 1 / sqrt(norm_stats_var(&st) + eps);                                        \
        const T m = (T)st.mean, r = (T)rstd;                                                      \
        *mean_out = m, *rstd_out = r;                                                             \
        if (S == 1) {                                                                             \
            for (int64_t k = 0; k < K; k++) y[k] = (x[k] - m) * r * w[k] + b[k];                  \
            return;                                                                               \
        }                                                                                         \
        for (int64_t k = 0; k < K; k++) {                                                         \
            const T a = r * w[k], bk = b[k], *xp = x + k * S;                                     \
            T *yp = y + k * S;                                                                    \
            for (int64_t i = 0; i < S; i++) yp[i] = (xp[i] - m) * a + bk;                         \
        }                                                                                         \
    }                                                                                             \
    /* One row's input gradient; adds its weight and bias gradients into                         \
     * gw[K], gb[K] (this thread's accumulators) when they are wanted. */                         \
    EM_SIMD static void row_backward_##DT(const T *dy, const T *x, T *gx, const T *w, int64_t K,  \
                                          int64_t S, T m, T r, double *gw, double *gb)            \
    {                                                                                             \
        double s1 = 0, s2 = 0; /* sum(dy * w), sum(dy * w * (x - m)) */                          \
        if (S == 1) {                                                                             \
            if (gw)                                                                               \
                for (int64_t k = 0; k < K; k++) gw[k] += (double)(dy[k] * (x[k] - m) * r);        \
            if (gb)                                                                               \
                for (int64_t k = 0; k < K; k++) gb[k] += (double)dy[k];                           \
            _Pragma("omp simd reduction(+ : s1, s2)") for (int64_t k = 0; k < K; k++)             \
            {                                                                                     \
                double g = (double)dy[k] * (double)w[k];                                          \
                s1 += g;                                                                          \
                s2 += g * (double)(x[k] - m);                                                     \
            }                                                                                     \
        } else {                                                                                  \
            for (int64_t k = 0; k < K; k++) {                                                     \
                const T *gp = dy + k * S, *xp = x + k * S;                                        \
                double a1 = 0, a2 = 0;                                                            \
                for (int64_t i0 = 0; i0 < S; i0 += NORM_CHUNK) {                                  \
                    int64_t e = S - i0 < NORM_CHUNK ? S : i0 + NORM_CHUNK;                        \
                    T c1 = 0, c2 = 0;                                                             \
                    _Pragma("omp simd reduction(+ : c1, c2)") for (int64_t i = i0; i < e; i++)    \
                    {                                                                             \
                        c1 += gp[i];                                                              \
                        c2 += gp[i] * (xp[i] - m);                                                \
                    }                                                                             \
                    a1 += c1, a2 += c2;                                                           \
                }                                                                                 \
                if (gw) gw[k] += a2 * r;                                                          \
                if (gb) gb[k] += a1;                                                              \
                s1 += a1 * w[k], s2 += a2 * w[k];                                                 \
            }                                                                                     \
        }                                                                                         \
        if (!gx) return;                                                                          \
        const double L = (double)(K * S);                                                         \
        const T k2 = (T)(-(double)r * r * r * s2 / L), k3 = (T)(-(double)r * s1 / L);             \
        if (S == 1) {                                                                             \
            for (int64_t k = 0; k < K; k++) gx[k] = dy[k] * w[k] * r + (x[k] - m) * k2 + k3;      \
            return;                                                                               \
        }                                                                                         \
        for (int64_t k = 0; k < K; k++) {                                                         \
            const T a = w[k] * r, *gp = dy + k * S, *xp = x + k * S;                              \
            T *op = gx + k * S;                                                                   \
            for (int64_t i = 0; i < S; i++) op[i] = gp[i] * a + (xp[i] - m) * k2 + k3;            \
        }                                                                                         \
    }                                                                                             \
    static void rows_forward_chunk_##DT(void *p, int64_t r0, int64_t r1)                            \
    {                                                                                               \
        const em_call *c = p;                                                                       \
        const int64_t G = c->i[1], K = c->i[2], S = c->i[3], L = K * S;                             \
        const T *x = (const T *)em_tensor_data(c->in[0]), *w = (const T *)em_tensor_data(c->in[1]); \
        const T *b = (const T *)em_tensor_data(c->in[2]);                                           \
        T *y = (T *)em_tensor_data(c->out[0]), *mean = (T *)em_tensor_data(c->out[1]);              \
        T *rstd = (T *)em_tensor_data(c->out[2]);                                                   \
        for (int64_t r = r0; r < r1; r++) {                                                         \
            int64_t wo = r % G * K;                                                                 \
            row_forward_##DT(x + r * L, y + r * L, w + wo, b + wo, K, S, c->f[0], mean + r, rstd + r);\
        }                                                                                           \
    }                                                                                               \
    static void rows_forward_##DT(const em_call *c)                                                 \
    {                                                                                               \
        em_parallel_for(c->i[0], c->i[2] * c->i[3], EM_GRAIN_ROWS, rows_forward_chunk_##DT, (void *)c);\
    }                                                                                               \
    /* a chunk of rows of the backward, with its own accumulators of the weight                     \
     * and bias gradients (acc: 2 * G * K per chunk) */                                             \
    typedef struct rows_bwd_##DT {                                                                  \
        const em_call *c;                                                                           \
        int64_t nchunks;                                                                            \
        double *acc;                                                                                \
    } rows_bwd_##DT;                                                                                \
    static void rows_backward_chunk_##DT(void *p, int64_t k)                                        \
    {                                                                                               \
        const rows_bwd_##DT *j = p;                                                                 \
        const em_call *c = j->c;                                                                    \
        const int64_t R = c->i[0], G = c->i[1], K = c->i[2], S = c->i[3], L = K * S, GK = G * K;    \
        const T *dy = (const T *)em_tensor_data(c->in[0]), *x = (const T *)em_tensor_data(c->in[1]);\
        const T *mean = (const T *)em_tensor_data(c->in[2]), *rstd = (const T *)em_tensor_data(c->in[3]);\
        const T *w = (const T *)em_tensor_data(c->in[4]);                                           \
        T *gx = c->out[0] ? (T *)em_tensor_data(c->out[0]) : NULL;                                  \
        double *aw = j->acc && c->out[1] ? j->acc + 2 * GK * k : NULL;                              \
        double *ab = j->acc && c->out[2] ? j->acc + 2 * GK * k + GK : NULL;                         \
        int64_t r0, r1;                                                                             \
        em_parallel_range(R, j->nchunks, 1, k, &r0, &r1);                                           \
        for (int64_t r = r0; r < r1; r++) {                                                         \
            int64_t wo = r % G * K;                                                                 \
            row_backward_##DT(dy + r * L, x + r * L, gx ? gx + r * L : NULL, w + wo, K, S, mean[r], rstd[r],\
                              aw ? aw + wo : NULL, ab ? ab + wo : NULL);                            \
        }                                                                                           \
    }                                                                                               \
    static em_status rows_backward_##DT(const em_call *c)                                           \
    {                                                                                               \
        const int64_t R = c->i[0], GK = c->i[1] * c->i[2];                                          \
        T *gw = c->out[1] ? (T *)em_tensor_data(c->out[1]) : NULL;                                  \
        T *gb = c->out[2] ? (T *)em_tensor_data(c->out[2]) : NULL;                                  \
        int64_t nth = em_parallel_chunks(R * c->i[2] * c->i[3], EM_GRAIN_ROWS);                     \
        if (nth > R) nth = R > 0 ? R : 1;                                                           \
        double *acc = gw || gb ? calloc((size_t)(2 * GK * nth), sizeof(double)) : NULL;             \
        if ((gw || gb) && !acc) return em_fail(EM_ERR_MEMORY, "group/layer norm backward: out of memory");\
        rows_bwd_##DT job = {c, nth, acc};                                                          \
        em_parallel_run(nth, rows_backward_chunk_##DT, &job);                                       \
        for (int64_t j = 0; j < GK && acc; j++) {                                                   \
            double sw = 0, sb = 0;                                                                  \
            for (int64_t t = 0; t < nth; t++) sw += acc[2 * GK * t + j], sb += acc[2 * GK * t + GK + j];\
            if (gw) gw[j] = (T)sw;                                                                  \
            if (gb) gb[j] = (T)sb;                                                                  \
        }                                                                                           \
        free(acc);                                                                                \
        return EM_OK;                                                                             \
    }
ROW_NORM_FNS(F32, float)
ROW_NORM_FNS(F64, double)

static em_status rows_forward(const em_call *c)
{
    if (c->dtype == EM_F32) rows_forward_F32(c);
    else rows_forward_F64(c);
    return EM_OK;
}
static em_status rows_backward(const em_call *c)
{
    return c->dtype == EM_F32 ? rows_backward_F32(c) : rows_backward_F64(c);
}

em_status cpu_layer_norm(const em_call *c) { return rows_forward(c); }
em_status cpu_group_norm(const em_call *c) { return rows_forward(c); }
em_status cpu_layer_norm_backward(const em_call *c) { return rows_backward(c); }
em_status cpu_group_norm_backward(const em_call *c) { return rows_backward(c); }
