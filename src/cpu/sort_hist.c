/* CPU kernels of histc, histogram and bincount. Inputs arrive contiguous;
 * c->i[0] is the em_hist_mode (src/ops/sort_ops.h). Counts accumulate in
 * int64 (weights in double) and are stored in the result dtype at the end.
 * Elements outside the bins and NaN are skipped. */
#include "cpu.h"
#include "../ops/sort_ops.h"
#include <stdlib.h>

/* ---- the data's range (EM_HIST_RANGE) -------------------------------------- */
/* out[0] (float64, 2) = [min, max] of the floating c->in[0]; NaN wins, as in aminmax. */
static void float_range(const em_call *c)
{
    const em_tensor *t = c->in[0];
    const char *p = em_tensor_data(t);
    size_t es = em_dtypes[t->dtype].size;
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0, n = em_numel(t); i < n; i++) {
        double x = em_load_f64(p + i * es, (em_dtype)t->dtype);
        if (x != x) {
            lo = hi = x;
            break;
        }
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
    }
    double *r = (double *)em_tensor_data(c->out[0]);
    r[0] = lo;
    r[1] = hi;
}

/* ---- histc ---------------------------------------------------------------------
 * PyTorch computes the bin as (x - min) / (max - min) * bins in the input
 * dtype, rounding after every operation (bfloat16 too); so does this, so
 * elements near bin edges land where they do there. */
static inline float round_bf16(float x) { return em_bf16_to_f32(em_f32_to_bf16(x)); }
#define LOAD_F32(p, i) (((const float *)(p))[i])
#define LOAD_F64(p, i) (((const double *)(p))[i])
#define LOAD_BF16(p, i) em_bf16_to_f32(((const uint16_t *)(p))[i])
#define ROUND_F32(x) ((float)(x))
#define ROUND_F64(x) ((double)(x))
#define ROUND_BF16(x) round_bf16(x)
#define STORE_F32(p, i, v) (((float *)(p))[i] = (float)(v))
#define STORE_F64(p, i, v) (((double *)(p))[i] = (double)(v))
#define STORE_BF16(p, i, v) (((uint16_t *)(p))[i] = em_f32_to_bf16((float)(v)))

#define HISTC(DT, T)                                                                               \
    static void histc_##DT(const em_call *c, int64_t *counts)                                     \
    {                                                                                              \
        const char *x = em_tensor_data(c->in[0]);                                                  \
        int64_t bins = c->i[1];                                                                    \
        const T left = ROUND_##DT(c->f[0]), right = ROUND_##DT(c->f[1]);                           \
        const T span = ROUND_##DT(right - left), nb = ROUND_##DT((T)bins);                         \
        for (int64_t i = 0, n = em_numel(c->in[0]); i < n; i++) {                                  \
            T v = LOAD_##DT(x, i);                                                                 \
            if (!(v >= left && v <= right)) continue;                                              \
            int64_t pos = (int64_t)ROUND_##DT(ROUND_##DT(ROUND_##DT(v - left) / span) * nb);       \
            counts[pos < 0 ? 0 : pos >= bins ? bins - 1 : pos]++; /* max belongs to the last bin */ \
        }                                                                                          \
        char *h = em_tensor_data(c->out[0]);                                                       \
        for (int64_t b = 0; b < bins; b++) STORE_##DT(h, b, counts[b]);                            \
    }
HISTC(F32, float)
HISTC(F64, double)
HISTC(BF16, float)

em_status cpu_histc(const em_call *c)
{
    if (c->i[0] == EM_HIST_RANGE) {
        float_range(c);
        return EM_OK;
    }
    int64_t *counts = calloc(c->i[1], sizeof *counts);
    if (!counts) return em_fail(EM_ERR_MEMORY, "histc: out of memory for %lld bins", (long long)c->i[1]);
    switch (c->in[0]->dtype) {
    case EM_F32: histc_F32(c, counts); break;
    case EM_F64: histc_F64(c, counts); break;
    default: histc_BF16(c, counts); break;
    }
    free(counts);
    return EM_OK;
}

/* ---- histogram -------------------------------------------------------------------
 * c->in[0] input, c->in[1] weight or NULL, c->in[2] the edges (EM_HIST_EDGES);
 * c->out[0] hist, c->out[1] bin_edges; c->i[1] bins, c->i[2] density.
 * Equal bins: edges as PyTorch's linspace makes them, the bin of x guessed
 * by interpolation then fixed against the edges (their exact bin). */
#define HISTOGRAM(DT, T)                                                                           \
    static void histogram_##DT(const em_call *c, double *acc)                                     \
    {                                                                                              \
        int64_t nb = c->i[1];                                                                      \
        T *e = (T *)em_tensor_data(c->out[1]);                                                     \
        if (c->i[0] == EM_HIST_LINEAR) {                                                           \
            T start = (T)c->f[0], end = (T)c->f[1], step = (end - start) / (T)nb;                  \
            for (int64_t k = 0; k <= nb; k++) e[k] = k < (nb + 1) / 2 ? start + step * (T)k : end - step * (T)(nb - k); \
        } else {                                                                                   \
            memcpy(e, em_tensor_data(c->in[2]), (nb + 1) * sizeof *e);                             \
        }                                                                                          \
        const T *x = (const T *)em_tensor_data(c->in[0]);                                          \
        const T *w = c->in[1] ? (const T *)em_tensor_data(c->in[1]) : NULL;                        \
        const T left = e[0], right = e[nb];                                                        \
        for (int64_t i = 0, n = em_numel(c->in[0]); i < n; i++) {                                  \
            T v = x[i];                                                                            \
            if (!(v >= left && v <= right)) continue;                                              \
            int64_t lo = 0, hi = nb + 1; /* search edges[lo, hi) for the first edge > v */         \
            if (c->i[0] == EM_HIST_LINEAR) {                                                       \
                int64_t guess = (int64_t)((v - left) * (T)nb / (right - left));                    \
                lo = guess - 1 > 0 ? guess - 1 : 0;                                                \
                hi = guess + 2 < nb + 1 ? guess + 2 : nb + 1;                                      \
            }                                                                                      \
            while (lo < hi) {                                                                      \
                int64_t mid = lo + (hi - lo) / 2;                                                  \
                if (e[mid] <= v)                                                                   \
                    lo = mid + 1;                                                                  \
                else                                                                               \
                    hi = mid;                                                                      \
            }                                                                                      \
            int64_t pos = lo - 1 < 0 ? 0 : lo - 1 >= nb ? nb - 1 : lo - 1;                         \
            acc[pos] += w ? (double)w[i] : 1.0;                                                    \
        }                                                                                          \
        double total = 0;                                                                          \
        for (int64_t b = 0; b < nb; b++) total += acc[b];                                          \
        T *h = (T *)em_tensor_data(c->out[0]);                                                     \
        for (int64_t b = 0; b < nb; b++) h[b] = c->i[2] ? (T)(acc[b] / total) / (e[b + 1] - e[b]) : (T)acc[b]; \
    }
HISTOGRAM(F32, float)
HISTOGRAM(F64, double)

em_status cpu_histogram(const em_call *c)
{
    if (c->i[0] == EM_HIST_RANGE) {
        float_range(c);
        return EM_OK;
    }
    double *acc = calloc(c->i[1], sizeof *acc);
    if (!acc) return em_fail(EM_ERR_MEMORY, "histogram: out of memory for %lld bins", (long long)c->i[1]);
    if (c->in[0]->dtype == EM_F32)
        histogram_F32(c, acc);
    else
        histogram_F64(c, acc);
    free(acc);
    return EM_OK;
}

/* ---- bincount ---------------------------------------------------------------------
 * c->in[0] the 1-d integral input, c->in[1] float32/float64 weights or NULL;
 * EM_HIST_RANGE: out[0] (int64, 2) = [min, max]; else out[0] (its length
 * covers max) = the counts (int64) or the summed weights, in input order. */
static int64_t load_int(const char *p, int64_t i, em_dtype dt)
{
    switch (dt) {
    case EM_U8: return ((const uint8_t *)p)[i];
    case EM_I8: return ((const int8_t *)p)[i];
    case EM_I16: return ((const int16_t *)p)[i];
    case EM_I32: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

em_status cpu_bincount(const em_call *c)
{
    const em_tensor *t = c->in[0], *w = c->in[1];
    const char *p = em_tensor_data(t);
    em_dtype dt = (em_dtype)t->dtype;
    int64_t n = em_numel(t);
    char *out = em_tensor_data(c->out[0]);
    if (c->i[0] == EM_HIST_RANGE) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = load_int(p, i, dt);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        ((int64_t *)out)[0] = lo;
        ((int64_t *)out)[1] = hi;
        return EM_OK;
    }
    memset(out, 0, em_numel(c->out[0]) * em_dtypes[c->out[0]->dtype].size);
    if (!w)
        for (int64_t i = 0; i < n; i++) ((int64_t *)out)[load_int(p, i, dt)]++;
    else if (w->dtype == EM_F32) /* summed in float32, in order, as PyTorch */
        for (int64_t i = 0; i < n; i++) ((float *)out)[load_int(p, i, dt)] += ((const float *)em_tensor_data(w))[i];
    else
        for (int64_t i = 0; i < n; i++) ((double *)out)[load_int(p, i, dt)] += ((const double *)em_tensor_data(w))[i];
    return EM_OK;
}
