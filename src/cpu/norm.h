/* Shared pieces of the CPU normalization kernels (norm_batch.c, norm_rows.c):
 * numerically stable mean/variance of contiguous runs, merged pairwise.
 *
 * Note [Stable statistics]
 * A run is cut into chunks of at most NORM_CHUNK elements. Each chunk is read
 * from memory once: its sum gives a rough mean m, and a second sweep over the
 * chunk (now in L1) sums d = x - m and d * d, giving the chunk's exact mean
 * m + sum(d) / n and squared deviations sum(d * d) - sum(d)^2 / n. Chunks
 * merge in double with Chan et al.'s pairwise update, so values like
 * 1e4 + N(0, 1) keep their variance (the naive E[x^2] - E[x]^2 in float32
 * loses it entirely). */
#ifndef EMBER_CPU_NORM_H
#define EMBER_CPU_NORM_H

#include "cpu.h"

#define NORM_CHUNK 512

/* count, mean and sum of squared deviations (M2) of the values seen so far */
typedef struct norm_stats {
    double n, mean, m2;
} norm_stats;

static inline void norm_stats_merge(norm_stats *a, double n, double mean, double m2)
{
    if (n == 0) return;
    double tot = a->n + n, d = mean - a->mean;
    a->mean += d * (n / tot);
    a->m2 += m2 + d * d * (a->n * n / tot);
    a->n = tot;
}
static inline double norm_stats_var(const norm_stats *s) { return s->n > 0 ? s->m2 / s->n : NAN; }

/* Chunked statistics of one contiguous run, merged into *st. */
#define NORM_RUN_STATS(DT, T)                                                                   \
    static inline __attribute__((always_inline)) void norm_run_stats_##DT(const T *x, int64_t len, \
                                                                          norm_stats *st)        \
    {                                                                                           \
        for (int64_t c0 = 0; c0 < len; c0 += NORM_CHUNK) {                                      \
            int64_t n = len - c0 < NORM_CHUNK ? len - c0 : NORM_CHUNK;                          \
            const T *p = x + c0;                                                                \
            T s = 0, sd = 0, sq = 0;                                                            \
            _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++) s += p[i];     \
            T m = s / (T)n;                                                                     \
            _Pragma("omp simd reduction(+ : sd, sq)") for (int64_t i = 0; i < n; i++)           \
            {                                                                                   \
                T d = p[i] - m;                                                                 \
                sd += d;                                                                        \
                sq += d * d;                                                                    \
            }                                                                                   \
            norm_stats_merge(st, (double)n, (double)m + (double)sd / (double)n,                  \
                             (double)sq - (double)sd * (double)sd / (double)n);                  \
        }                                                                                       \
    }
NORM_RUN_STATS(F32, float)
NORM_RUN_STATS(F64, double)

/* Address of element i (row-major order) of any strided tensor: for the
 * few per-channel values (running stats) a kernel reads or writes. */
static inline char *norm_elem(const em_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += i % t->sizes[d] * t->strides[d];
        i /= t->sizes[d];
    }
    return em_tensor_data(t) + off * (int64_t)em_dtypes[t->dtype].size;
}

#endif
