/* CPU kernels of batch_norm and batch_norm_backward (layout in
 * src/nn/norm_call.h): one task per channel, over the pool above a grain.
 * A channel's values are N runs of S contiguous elements; its statistics come
 * from those runs (Note [Stable statistics] in norm.h), and its output is one
 * multiply-add per element. */
#include "norm.h"
#include "../nn/norm_call.h"

#define BATCH_NORM_FNS(DT, T)                                                                     \
    /* mean and biased variance of channel c: chunked runs when they are long,                   \
     * else two strided sweeps (mean, then squared deviations) */                                \
    static void bn_stats_##DT(const T *x, int64_t N, int64_t C, int64_t S, int64_t c, double *mean, \
                              double *var)                                                        \
    {                                                                                             \
        norm_stats st = {0};                                                                      \
        if (S >= 64) {                                                                            \
            for (int64_t n = 0; n < N; n++) norm_run_stats_##DT(x + (n * C + c) * S, S, &st);     \
            *mean = st.mean, *var = norm_stats_var(&st);                                          \
            return;                                                                               \
        }                                                                                         \
        double s = 0, q = 0, cnt = (double)(N * S);                                               \
        for (int64_t n = 0; n < N; n++)                                                           \
            for (int64_t i = 0; i < S; i++) s += x[(n * C + c) * S + i];                          \
        double m = s / cnt;                                                                       \
        for (int64_t n = 0; n < N; n++)                                                           \
            for (int64_t i = 0; i < S; i++) {                                                     \
                double d = x[(n * C + c) * S + i] - m;                                            \
                q += d * d;                                                                       \
            }                                                                                     \
        *mean = m, *var = cnt > 0 ? q / cnt : NAN;                                                \
    }                                                                                             \
    EM_SIMD static void bn_affine_##DT(const T *x, T *y, int64_t N, int64_t C, int64_t S, int64_t c, \
                                       T mean, T a, T b)                                         \
    {                                                                                             \
        for (int64_t n = 0; n < N; n++) {                                                         \
            const T *xp = x + (n * C + c) * S;                                                    \
            T *yp = y + (n * C + c) * S;                                                          \
            for (int64_t i = 0; i < S; i++) yp[i] = (xp[i] - mean) * a + b;                          \
        }                                                                                         \
    }                                                                                             \
    static void bn_forward_channels_##DT(void *ctx, int64_t begin, int64_t end)                   \
    {                                                                                             \
        const em_call *c = ctx;                                                                   \
        const int64_t N = c->i[0], C = c->i[1], S = c->i[2], M = N * S;                           \
        const bool training = c->i[3];                                                            \
        const double momentum = c->f[0], eps = c->f[1];                                           \
        const norm_running *run = c->arg;                                                         \
        const T *x = (const T *)em_tensor_data(c->in[0]), *w = (const T *)em_tensor_data(c->in[1]); \
        const T *b = (const T *)em_tensor_data(c->in[2]);                                         \
        T *y = (T *)em_tensor_data(c->out[0]), *smean = (T *)em_tensor_data(c->out[1]);           \
        T *sinv = (T *)em_tensor_data(c->out[2]);                                                 \
        for (int64_t ch = begin; ch < end; ch++) {                                                \
            double mean, var;                                                                     \
            if (training) {                                                                       \
                bn_stats_##DT(x, N, C, S, ch, &mean, &var);                                       \
                if (run && run->mean && M > 0) {                                                  \
                    T *rm = (T *)norm_elem(run->mean, ch);                                        \
                    *rm = (T)((1 - momentum) * *rm + momentum * mean);                            \
                }                                                                                 \
                if (run && run->var && M > 0) {                                                   \
                    T *rv = (T *)norm_elem(run->var, ch);                                         \
                    *rv = (T)((1 - momentum) * *rv + momentum * var * M / (double)(M - 1));      \
                }                                                                                 \
            } else {                                                                              \
                mean = *(const T *)norm_elem(run->mean, ch);                                      \
                var = *(const T *)norm_elem(run->var, ch);                                        \
            }                                                                                     \
            double invstd = 1 / sqrt(var + eps), a = invstd * w[ch];                              \
            smean[ch] = (T)mean, sinv[ch] = (T)invstd;                                            \
            bn_affine_##DT(x, y, N, C, S, ch, (T)mean, (T)a, b[ch]);                                 \
        }                                                                                         \
    }                                                                                             \
    /* sum(dy) and sum(dy * (x - mean)) over channel c */                                         \
    EM_SIMD static void bn_grad_sums_##DT(const T *dy, const T *x, int64_t N, int64_t C, int64_t S, \
                                          int64_t c, T mean, double *sdy, double *sdyx)           \
    {                                                                                             \
        double s1 = 0, s2 = 0;                                                                    \
        for (int64_t n = 0; n < N; n++) {                                                         \
            const T *gp = dy + (n * C + c) * S, *xp = x + (n * C + c) * S;                        \
            for (int64_t i0 = 0; i0 < S; i0 += NORM_CHUNK) {                                      \
                int64_t e = S - i0 < NORM_CHUNK ? S : i0 + NORM_CHUNK;                            \
                T a1 = 0, a2 = 0;                                                                 \
                _Pragma("omp simd reduction(+ : a1, a2)") for (int64_t i = i0; i < e; i++)        \
                {                                                                                 \
                    a1 += gp[i];                                                                  \
                    a2 += gp[i] * (xp[i] - mean);                                                 \
                }                                                                                 \
                s1 += a1, s2 += a2;                                                               \
            }                                                                                     \
        }                                                                                         \
        *sdy = s1, *sdyx = s2;                                                                    \
    }                                                                                             \
    /* gx = dy * k1 + (x - mean) * k2 + k3 over channel c */                                           \
    EM_SIMD static void bn_grad_input_##DT(const T *dy, const T *x, T *gx, int64_t N, int64_t C,  \
                                           int64_t S, int64_t c, T mean, T k1, T k2, T k3)        \
    {                                                                                             \
        for (int64_t n = 0; n < N; n++) {                                                         \
            const T *gp = dy + (n * C + c) * S, *xp = x + (n * C + c) * S;                        \
            T *op = gx + (n * C + c) * S;                                                         \
            for (int64_t i = 0; i < S; i++) op[i] = gp[i] * k1 + (xp[i] - mean) * k2 + k3;        \
        }                                                                                         \
    }                                                                                             \
    static void bn_backward_channels_##DT(void *ctx, int64_t begin, int64_t end)                  \
    {                                                                                             \
        const em_call *c = ctx;                                                                   \
        const int64_t N = c->i[0], C = c->i[1], S = c->i[2];                                      \
        const double M = (double)(N * S);                                                         \
        const bool training = c->i[3];                                                            \
        const T *dy = (const T *)em_tensor_data(c->in[0]), *x = (const T *)em_tensor_data(c->in[1]); \
        const T *w = (const T *)em_tensor_data(c->in[2]), *mean = (const T *)em_tensor_data(c->in[3]); \
        const T *inv = (const T *)em_tensor_data(c->in[4]);                                       \
        T *gx = c->out[0] ? (T *)em_tensor_data(c->out[0]) : NULL;                                \
        T *gw = c->out[1] ? (T *)em_tensor_data(c->out[1]) : NULL;                                \
        T *gb = c->out[2] ? (T *)em_tensor_data(c->out[2]) : NULL;                                \
        const bool sums = gw || gb || (gx && training);                                           \
        for (int64_t ch = begin; ch < end; ch++) {                                                \
            double sdy = 0, sdyx = 0, iv = inv[ch];                                               \
            if (sums) bn_grad_sums_##DT(dy, x, N, C, S, ch, mean[ch], &sdy, &sdyx);               \
            if (gw) gw[ch] = (T)(sdyx * iv);                                                      \
            if (gb) gb[ch] = (T)sdy;                                                              \
            if (!gx) continue;                                                                    \
            double k1 = iv * w[ch], k2 = 0, k3 = 0;                                               \
            if (training && M > 0) {                                                              \
                k2 = -k1 * iv * iv * sdyx / M;                                                    \
                k3 = -k1 * sdy / M;                                                               \
            }                                                                                     \
            bn_grad_input_##DT(dy, x, gx, N, C, S, ch, mean[ch], (T)k1, (T)k2, (T)k3);           \
        }                                                                                         \
    }
BATCH_NORM_FNS(F32, float)
BATCH_NORM_FNS(F64, double)

/* The channels split over the pool above EM_GRAIN_ROWS, each by one chunk. */
static void run_channels(const em_call *c, em_range_fn f32, em_range_fn f64)
{
    em_parallel_for(c->i[1], c->i[0] * c->i[2], EM_GRAIN_ROWS, c->dtype == EM_F32 ? f32 : f64, (void *)c);
}

em_status cpu_batch_norm(const em_call *c)
{
    run_channels(c, bn_forward_channels_F32, bn_forward_channels_F64);
    return EM_OK;
}

em_status cpu_batch_norm_backward(const em_call *c)
{
    run_channels(c, bn_backward_channels_F32, bn_backward_channels_F64);
    return EM_OK;
}
