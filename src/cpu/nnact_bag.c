/* CPU kernels of embedding_bag and its weight gradient. Indices, offsets
 * and the bag tensors arrive contiguous; the forward checks offsets and
 * index ranges before it writes anything. Bags run in parallel (each writes
 * its own output row); the gradient partitions the vocabulary across
 * threads as embedding's does, so rows are summed without races. */
#include "cpu.h"
#include <stdlib.h>

static inline int64_t int_at(const em_tensor *t, int64_t i)
{
    const char *p = em_tensor_data(t);
    return t->dtype == EM_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

/* offsets[0] == 0, non-decreasing, within [0, n] (== n at the end with
 * include_last_offset); every index in [0, nw). */
static em_status check_bags(const em_tensor *idx, const em_tensor *off, int64_t nw, bool include_last)
{
    const int64_t n = em_numel(idx), no = em_numel(off);
    if (no && int_at(off, 0) != 0)
        return em_fail(EM_ERR_RUNTIME, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                       "start from position 0. However, got %lld", (long long)int_at(off, 0));
    for (int64_t b = 1; b < no; b++)
        if (int_at(off, b) < int_at(off, b - 1))
            return em_fail(EM_ERR_RUNTIME, "embedding_bag: offsets have to be non-decreasing, but offsets[%lld] = %lld "
                           "< offsets[%lld] = %lld", (long long)b, (long long)int_at(off, b), (long long)(b - 1),
                           (long long)int_at(off, b - 1));
    if (no && int_at(off, no - 1) > n)
        return em_fail(EM_ERR_RUNTIME, "offsets[-1] can not be greater than input's length %lld but got offsets[-1] of %lld",
                       (long long)n, (long long)int_at(off, no - 1));
    if (include_last && int_at(off, no - 1) != n)
        return em_fail(EM_ERR_RUNTIME, "embedding_bag: with include_last_offset, offsets[-1] (%lld) has to be the "
                       "input's length %lld", (long long)int_at(off, no - 1), (long long)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = int_at(idx, i);
        if (v < 0 || v >= nw)
            return em_fail(EM_ERR_RUNTIME, "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to "
                           "be %lld", (long long)v);
    }
    return EM_OK;
}

/* One bag per iteration: out row b, offset2bag of its entries, its count and argmaxes. */
#define BAG_FORWARD(DT, T)                                                                              \
    static void bag_forward_rows_##DT(void *ctx, int64_t begin, int64_t end)                           \
    {                                                                                                  \
        const em_call *c = ctx;                                                                        \
        const em_tensor *w = c->in[0], *idx = c->in[1], *off = c->in[2];                               \
        const T *psw = c->in[3] ? (const T *)em_tensor_data(c->in[3]) : NULL;                           \
        const int64_t mode = c->i[0], pad = c->i[2], n = em_numel(idx);                                \
        const int64_t D = w->sizes[1], rs = w->strides[0], cs = w->strides[1];                          \
        const T *wd = (const T *)em_tensor_data(w);                                                    \
        T *out = (T *)em_tensor_data(c->out[0]);                                                       \
        int64_t *o2b = (int64_t *)em_tensor_data(c->out[1]), *size = (int64_t *)em_tensor_data(c->out[2]); \
        int64_t *maxi = (int64_t *)em_tensor_data(c->out[3]);                                          \
        for (int64_t b = begin; b < end; b++) {                                                        \
            const int64_t lo = int_at(off, b), hi = b + 1 < em_numel(off) ? int_at(off, b + 1) : n;    \
            T *o = out + b * D;                                                                        \
            int64_t *mi = mode == EM_BAG_MAX ? maxi + b * D : NULL, count = 0;                         \
            for (int64_t j = 0; j < D; j++) o[j] = 0;                                                  \
            if (mi)                                                                                    \
                for (int64_t j = 0; j < D; j++) mi[j] = 0;                                             \
            for (int64_t i = lo; i < hi; i++) {                                                        \
                const int64_t v = int_at(idx, i);                                                      \
                o2b[i] = b;                                                                            \
                if (v == pad) continue;                                                                \
                const T *row = wd + v * rs, s = psw ? psw[i] : (T)1;                                   \
                if (mi) {                                                                              \
                    for (int64_t j = 0; j < D; j++)                                                    \
                        if (count == 0 || row[j * cs] > o[j]) o[j] = row[j * cs], mi[j] = v;            \
                } else {                                                                               \
                    for (int64_t j = 0; j < D; j++) o[j] += row[j * cs] * s;                           \
                }                                                                                      \
                count++;                                                                               \
            }                                                                                          \
            if (mode == EM_BAG_MEAN && count > 0)                                                      \
                for (int64_t j = 0; j < D; j++) o[j] /= (T)count;                                      \
            size[b] = mode == EM_BAG_SUM ? 0 : count;                                                  \
            if (!mi) maxi[b] = size[b];                                                                \
        }                                                                                              \
    }                                                                                                  \
    static void bag_forward_##DT(const em_call *c)                                                     \
    {                                                                                                  \
        const int64_t n = em_numel(c->in[1]), nb = c->out[0]->sizes[0], D = c->in[0]->sizes[1];        \
        em_parallel_for(nb, nb ? (n / nb + 1) * D : 1, EM_GRAIN_GATHER, bag_forward_rows_##DT, (void *)c); \
    }
BAG_FORWARD(F32, float)
BAG_FORWARD(F64, double)

em_status cpu_embedding_bag(const em_call *c)
{
    if (check_bags(c->in[1], c->in[2], c->in[0]->sizes[0], c->i[1])) return em_error_code();
    if (c->dtype == EM_F32) bag_forward_F32(c);
    else bag_forward_F64(c);
    return EM_OK;
}

/* out (V, D); in grad, indices, offset2bag, bag_size, psw?, max_indices?;
 * i = V, mode, padding_idx, scale_grad_by_freq (not in max mode, as PyTorch) */
typedef struct bag_job {
    const em_call *c;
    const int64_t *counts;
    int64_t nchunks;
} bag_job;

/* Chunk k owns rows [lo, hi) of the gradient: it scans every entry and adds
 * those that land in its rows, so no two chunks write the same row. */
#define BAG_BACKWARD(DT, T)                                                                             \
    static void bag_backward_rows_##DT(void *ctx, int64_t k)                                           \
    {                                                                                                  \
        const bag_job *job = ctx;                                                                      \
        const em_call *c = job->c;                                                                     \
        const int64_t *counts = job->counts;                                                           \
        const em_tensor *g = c->in[0], *idx = c->in[1];                                                \
        const T *gd = (const T *)em_tensor_data(g), *psw = c->in[4] ? (const T *)em_tensor_data(c->in[4]) : NULL; \
        const int64_t *o2b = (const int64_t *)em_tensor_data(c->in[2]);                                \
        const int64_t *size = (const int64_t *)em_tensor_data(c->in[3]);                              \
        const int64_t *maxi = c->in[5] ? (const int64_t *)em_tensor_data(c->in[5]) : NULL;             \
        const int64_t nw = c->i[0], mode = c->i[1], pad = c->i[2], n = em_numel(idx);                  \
        const int64_t nb = g->sizes[0], D = g->sizes[1];                                               \
        T *out = (T *)em_tensor_data(c->out[0]);                                                       \
        int64_t lo, hi;                                                                                \
        em_parallel_range(nw, job->nchunks, 1, k, &lo, &hi);                                          \
        if (maxi) {                                                                                    \
            for (int64_t b = 0; b < nb; b++)                                                           \
                for (int64_t j = 0; size[b] && j < D; j++) {                                           \
                    const int64_t v = maxi[b * D + j];                                                 \
                    if (v >= lo && v < hi) out[v * D + j] += gd[b * D + j];                            \
                }                                                                                      \
        } else {                                                                                       \
            for (int64_t i = 0; i < n; i++) {                                                          \
                const int64_t v = int_at(idx, i), b = o2b[i];                                          \
                if (v < lo || v >= hi || v == pad) continue;                                           \
                T s = psw ? psw[i] : (T)1;                                                             \
                if (mode == EM_BAG_MEAN) s /= (T)size[b];                                              \
                if (counts) s /= (T)counts[v];                                                         \
                for (int64_t j = 0; j < D; j++) out[v * D + j] += gd[b * D + j] * s;                   \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    static void bag_backward_##DT(const em_call *c, const int64_t *counts)                             \
    {                                                                                                  \
        const int64_t n = em_numel(c->in[1]), nb = c->in[0]->sizes[0], D = c->in[0]->sizes[1];         \
        memset(em_tensor_data(c->out[0]), 0, (size_t)(c->i[0] * D) * sizeof(T));                       \
        /* every chunk scans all entries: no more chunks than threads */                               \
        int64_t nchunks = em_parallel_chunks((n + nb) * D, EM_GRAIN_GATHER), threads = em_get_num_threads(); \
        bag_job job = {.c = c, .counts = counts, .nchunks = nchunks < threads ? nchunks : threads};   \
        em_parallel_run(job.nchunks, bag_backward_rows_##DT, &job);                                    \
    }
BAG_BACKWARD(F32, float)
BAG_BACKWARD(F64, double)

em_status cpu_embedding_bag_backward(const em_call *c)
{
    const em_tensor *idx = c->in[1];
    const int64_t n = em_numel(idx), nw = c->i[0], nb = c->in[0]->sizes[0], D = c->in[0]->sizes[1];
    for (int64_t i = 0; i < n; i++) { /* the bag tensors come from a forward; still, never index out of range */
        const int64_t v = int_at(idx, i), b = ((const int64_t *)em_tensor_data(c->in[2]))[i];
        if (v < 0 || v >= nw || b < 0 || b >= nb)
            return em_fail(EM_ERR_RUNTIME, "embedding_bag_backward: index %lld or bag %lld out of range", (long long)v,
                           (long long)b);
    }
    const int64_t *size = (const int64_t *)em_tensor_data(c->in[3]);
    for (int64_t k = 0; c->in[5] && k < nb * D; k++) {
        const int64_t v = ((const int64_t *)em_tensor_data(c->in[5]))[k];
        if (!size[k / D]) continue; /* an empty bag has no argmax */
        if (v < 0 || v >= nw) return em_fail(EM_ERR_RUNTIME, "embedding_bag_backward: max index %lld out of range", (long long)v);
    }
    int64_t *counts = NULL;
    if (c->i[3] && c->i[1] != EM_BAG_MAX) {
        if (!(counts = calloc(nw ? nw : 1, sizeof *counts)))
            return em_fail(EM_ERR_MEMORY, "embedding_bag_backward: out of memory");
        for (int64_t i = 0; i < n; i++) counts[int_at(idx, i)]++;
    }
    if (c->dtype == EM_F32) bag_backward_F32(c, counts);
    else bag_backward_F64(c, counts);
    free(counts);
    return EM_OK;
}
