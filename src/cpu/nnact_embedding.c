/* CPU kernels of embedding: row lookup, the dense weight gradient, and the
 * max_norm renormalisation. Indices arrive contiguous (int64 or int32); each
 * kernel checks their range before it writes anything. The gradient
 * partitions the vocabulary across threads (each owns a block of rows and
 * scans every index), so rows are summed without races, in index order. */
#include "cpu.h"
#include <stdlib.h>

static inline int64_t index_at(const em_tensor *idx, int64_t i)
{
    const char *p = em_tensor_data(idx);
    return idx->dtype == EM_I64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

static em_status check_range(const em_tensor *idx, int64_t num_weights)
{
    int64_t n = em_numel(idx);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = index_at(idx, i);
        if (v < 0 || v >= num_weights) return em_fail(EM_ERR_INDEX, "index out of range in self");
    }
    return EM_OK;
}

typedef struct emb_job {
    const em_tensor *idx;
    const char *src;
    char *out;
    int64_t dim, rs, cs, es;
} emb_job;

static void embedding_rows(void *p, int64_t i0, int64_t i1)
{
    const emb_job *j = p;
    for (int64_t i = i0; i < i1; i++) {
        const char *row = j->src + index_at(j->idx, i) * j->rs * j->es;
        char *o = j->out + i * j->dim * j->es;
        if (j->cs == 1) memcpy(o, row, (size_t)(j->dim * j->es));
        else
            for (int64_t k = 0; k < j->dim; k++) memcpy(o + k * j->es, row + k * j->cs * j->es, (size_t)j->es);
    }
}

/* out (N..., D) = weight[idx] (weight (V, D), any strides, any dtype) */
em_status cpu_embedding(const em_call *c)
{
    const em_tensor *w = c->in[0], *idx = c->in[1];
    if (check_range(idx, w->sizes[0])) return em_error_code();
    const int64_t n = em_numel(idx), dim = w->sizes[1], rs = w->strides[0], cs = w->strides[1];
    const size_t es = em_dtypes[w->dtype].size;
    emb_job j = {.idx = idx, .src = em_tensor_data(w), .out = em_tensor_data(c->out[0]), .dim = dim, .rs = rs,
                 .cs = cs, .es = (int64_t)es};
    em_parallel_for(n, dim, EM_GRAIN_GATHER, embedding_rows, &j);
    return EM_OK;
}

/* Byte offsets of grad's rows (every dim but the last), in row-major order. */
static int64_t *row_offsets(const em_tensor *g, int64_t nrows)
{
    int64_t *off = malloc((nrows ? nrows : 1) * sizeof *off);
    if (!off) return NULL;
    int64_t coord[EM_MAX_DIMS] = {0}, o = 0, es = (int64_t)em_dtypes[g->dtype].size;
    for (int64_t r = 0; r < nrows; r++) {
        off[r] = o * es;
        for (int d = g->ndim - 2; d >= 0; d--) {
            o += g->strides[d];
            if (++coord[d] < g->sizes[d]) break;
            o -= g->strides[d] * g->sizes[d];
            coord[d] = 0;
        }
    }
    return off;
}

typedef struct dense_job {
    const em_call *c;
    const int64_t *off, *counts;
} dense_job;

/* out (V, D) = sum of grad rows by index; i = padding_idx, scale_grad_by_freq, V. Threads take
 * ranges of the vocabulary, each scanning every index: a row sums in index order either way */
#define DENSE_BACKWARD(DT, T)                                                                          \
    static void dense_backward_rows_##DT(void *p, int64_t lo, int64_t hi)                              \
    {                                                                                                  \
        const dense_job *jb = p;                                                                       \
        const em_call *c = jb->c;                                                                      \
        const em_tensor *g = c->in[0], *idx = c->in[1];                                                \
        const int64_t n = em_numel(idx), dim = g->ndim ? g->sizes[g->ndim - 1] : 0;                    \
        const int64_t cs = g->strides[g->ndim - 1], pad = c->i[0];                                     \
        const char *gd = em_tensor_data(g);                                                            \
        T *out = (T *)em_tensor_data(c->out[0]);                                                       \
        for (int64_t i = 0; i < n; i++) {                                                              \
            int64_t v = index_at(idx, i);                                                              \
            if (v < lo || v >= hi || v == pad) continue;                                               \
            const T *row = (const T *)(gd + jb->off[i]);                                               \
            T *o = out + v * dim, s = jb->counts ? (T)1 / (T)jb->counts[v] : (T)1;                     \
            for (int64_t j = 0; j < dim; j++) o[j] += row[j * cs] * s;                                 \
        }                                                                                              \
    }                                                                                                  \
    static void dense_backward_##DT(const em_call *c, const int64_t *off, const int64_t *counts)       \
    {                                                                                                  \
        const em_tensor *g = c->in[0];                                                                 \
        const int64_t n = em_numel(c->in[1]), nw = c->i[2], dim = g->ndim ? g->sizes[g->ndim - 1] : 0; \
        memset(em_tensor_data(c->out[0]), 0, nw * dim * sizeof(T));                                    \
        dense_job jb = {c, off, counts};                                                               \
        em_parallel_for(nw, nw ? (n * dim + nw - 1) / nw : 1, EM_GRAIN_GATHER, dense_backward_rows_##DT, &jb); \
    }
DENSE_BACKWARD(F32, float)
DENSE_BACKWARD(F64, double)

em_status cpu_embedding_dense_backward(const em_call *c)
{
    const em_tensor *idx = c->in[1];
    const int64_t n = em_numel(idx), nw = c->i[2];
    if (check_range(idx, nw)) return em_error_code();
    int64_t *off = row_offsets(c->in[0], n), *counts = NULL;
    if (off && c->i[1] && (counts = calloc(nw ? nw : 1, sizeof *counts)))
        for (int64_t i = 0; i < n; i++) counts[index_at(idx, i)]++;
    if (!off || (c->i[1] && !counts)) {
        free(off);
        return em_fail(EM_ERR_MEMORY, "embedding_dense_backward: out of memory");
    }
    if (c->dtype == EM_F32) dense_backward_F32(c, off, counts);
    else dense_backward_F64(c, off, counts);
    free(off);
    free(counts);
    return EM_OK;
}

/* The p-norm of a row of n values at stride s (p: inf, 0 counts nonzeros). */
static double row_norm(const char *row, em_dtype dt, int64_t n, int64_t s, double p)
{
    double acc = 0;
    for (int64_t j = 0; j < n; j++) {
        double v = fabs(dt == EM_F32 ? (double)((const float *)row)[j * s] : ((const double *)row)[j * s]);
        if (isinf(p)) acc = v > acc ? v : acc;
        else if (p == 0) acc += v != 0;
        else if (p == 1) acc += v;
        else if (p == 2) acc += v * v;
        else acc += pow(v, p);
    }
    return isinf(p) || p == 0 || p == 1 ? acc : p == 2 ? sqrt(acc) : pow(acc, 1 / p);
}

/* weight rows named by idx (each once) scaled to norm <= max_norm; f = max_norm, norm_type */
em_status cpu_embedding_renorm(const em_call *c)
{
    em_tensor *w = c->out[0];
    const em_tensor *idx = c->in[0];
    const int64_t nw = w->sizes[0], dim = w->sizes[1], n = em_numel(idx);
    if (check_range(idx, nw)) return em_error_code();
    bool *seen = calloc(nw ? nw : 1, 1);
    if (!seen) return em_fail(EM_ERR_MEMORY, "embedding_renorm_: out of memory");
    const em_dtype dt = (em_dtype)w->dtype;
    const int64_t es = (int64_t)em_dtypes[dt].size, cs = w->strides[1];
    for (int64_t i = 0; i < n; i++) {
        int64_t v = index_at(idx, i);
        if (seen[v]) continue;
        seen[v] = true;
        char *row = em_tensor_data(w) + v * w->strides[0] * es;
        double norm = row_norm(row, dt, dim, cs, c->f[1]);
        if (norm <= c->f[0]) continue;
        double scale = c->f[0] / (norm + 1e-7);
        for (int64_t j = 0; j < dim; j++) {
            if (dt == EM_F32) ((float *)row)[j * cs] *= (float)scale;
            else ((double *)row)[j * cs] *= scale;
        }
    }
    free(seen);
    return EM_OK;
}
