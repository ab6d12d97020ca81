/* CPU kernels of the sampling ops: randperm (Fisher-Yates) and multinomial
 * (inverse CDF with replacement, Efraimidis-Spirakis keys without). Both
 * number their draws and take draw d from words [2d, 2d + 2) of the op's
 * Philox stream (Note [Philox streams] in src/core/rng.h): c->i[0] = key,
 * c->i[1] = offset. */
#include "philox_block.h"
#include <stdlib.h>

/* Reads draws of two words from a stream, a Philox block at a time. */
typedef struct stream {
    uint64_t key, offset, block; /* block: the one in w, or UINT64_MAX */
    uint32_t w[EM_PHILOX_WORDS];
} stream;

static void stream_init(stream *s, const em_call *c)
{
    s->key = (uint64_t)c->i[0], s->offset = (uint64_t)c->i[1], s->block = UINT64_MAX;
}

enum { DRAWS_PER_BLOCK = EM_PHILOX_WORDS / 2 };

static const uint32_t *draw_words(stream *s, uint64_t d)
{
    const uint64_t block = d / DRAWS_PER_BLOCK;
    if (s->block != block) {
        s->block = block;
        cpu_philox_block(s->key, s->offset + block * EM_PHILOX_BLOCK, s->w);
    }
    return s->w + 2 * (d % DRAWS_PER_BLOCK);
}

/* ---- randperm: for i = n-1 .. 1, swap i with j uniform in [0, i] (draw
 * n-1-i, 64 bits, multiply-shift: bias below n / 2^64). */
em_status cpu_randperm(const em_call *c)
{
    const em_tensor *t = c->out[0];
    const em_dtype dt = (em_dtype)t->dtype;
    const int64_t n = em_numel(t);
    int64_t *perm = dt == EM_I64 ? (int64_t *)em_tensor_data(t) : malloc((size_t)(n ? n : 1) * sizeof *perm);
    if (!perm) return em_fail(EM_ERR_MEMORY, "randperm: out of memory for %lld indices", (long long)n);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    stream s;
    stream_init(&s, c);
    for (int64_t d = 0; d + 1 < n; d++) {
        const int64_t i = n - 1 - d;
        const uint32_t *w = draw_words(&s, (uint64_t)d);
        const uint64_t x = ((uint64_t)w[0] << 32) | w[1];
        const int64_t j = (int64_t)(((unsigned __int128)x * (uint64_t)(i + 1)) >> 64);
        const int64_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    if (dt != EM_I64) {
        em_cast_table[dt][EM_I64](em_tensor_data(t), (int64_t)em_dtypes[dt].size, (const char *)perm, 8, n);
        free(perm);
    }
    return EM_OK;
}

/* ---- multinomial: in[0] float64 probabilities (rows, ncat), contiguous;
 * out int64 (rows, nsample); i[3] = nsample, i[4] = replacement. */

/* PyTorch checks probabilities with different words on its two paths. */
static em_status check_probabilities(const double *p, int64_t rows, int64_t ncat, bool sampling)
{
    for (int64_t r = 0; r < rows; r++) {
        double sum = 0;
        for (int64_t k = 0; k < ncat; k++) {
            double x = p[r * ncat + k];
            if (!sampling && !(x >= 0 && isfinite(x)))
                return em_fail(EM_ERR_RUNTIME, "multinomial: probability tensor contains either `inf`, `nan` or element < 0");
            if (sampling && !isfinite(x))
                return em_fail(EM_ERR_RUNTIME, "multinomial: invalid multinomial distribution (encountering probability "
                               "entry = infinity or NaN)");
            if (sampling && x < 0)
                return em_fail(EM_ERR_RUNTIME, "multinomial: invalid multinomial distribution (encountering probability "
                               "entry < 0)");
            sum += x;
        }
        if (!(sum > 0))
            return em_fail(EM_ERR_RUNTIME, "multinomial: invalid multinomial distribution (sum of probabilities <= 0)");
    }
    return EM_OK;
}

/* With replacement: sample s of row r is the first category whose running
 * sum exceeds U * total (U draw r * nsample + s); zero-probability
 * categories can never be that one. */
static void sample_with_replacement(const em_call *c, const double *p, int64_t ncat, int64_t r, int64_t *out,
                                    double *cdf)
{
    const int64_t nsample = c->i[3];
    int64_t last = 0; /* the last category with p > 0: the answer when rounding puts U * total past the end */
    double sum = 0;
    for (int64_t k = 0; k < ncat; k++) {
        sum += p[k];
        cdf[k] = sum;
        if (p[k] > 0) last = k;
    }
    stream st;
    stream_init(&st, c);
    for (int64_t s = 0; s < nsample; s++) {
        const double target = em_rng_unit53(draw_words(&st, (uint64_t)(r * nsample + s))) * sum;
        int64_t lo = 0, hi = ncat; /* first k with cdf[k] > target */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (cdf[mid] > target)
                hi = mid;
            else
                lo = mid + 1;
        }
        out[s] = lo < ncat ? lo : last;
    }
}

typedef struct keyed {
    double key;
    int64_t index;
} keyed;

/* larger keys first; ties by index */
static int by_key_desc(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Without replacement: category k gets key p_k / E_k with E_k ~ Exp(1)
 * (draw r * ncat + k); the nsample largest keys, in decreasing order, are
 * distributed as sequential draws without replacement (Efraimidis &
 * Spirakis; PyTorch uses the same keys). Zero-probability categories come
 * last, by index. */
static void sample_without_replacement(const em_call *c, const double *p, int64_t ncat, int64_t r, int64_t *out,
                                       keyed *keys)
{
    const int64_t nsample = c->i[3];
    stream st;
    stream_init(&st, c);
    for (int64_t k = 0; k < ncat; k++) {
        const double e = -log1p(-em_rng_unit53(draw_words(&st, (uint64_t)(r * ncat + k))));
        keys[k] = (keyed){p[k] > 0 ? p[k] / e : -1.0, k}; /* e == 0: an infinite key, first */
    }
    if (nsample == 1) {
        int64_t best = 0;
        for (int64_t k = 1; k < ncat; k++)
            if (keys[k].key > keys[best].key) best = k;
        out[0] = best;
        return;
    }
    qsort(keys, (size_t)ncat, sizeof *keys, by_key_desc);
    for (int64_t s = 0; s < nsample; s++) out[s] = keys[s].index;
}

typedef struct sample_job {
    const em_call *c;
    const double *p;
    int64_t *out;
    int64_t rows, ncat, nsample, nchunks;
    bool replacement;
    char *scratch; /* row_bytes per chunk */
    size_t row_bytes;
} sample_job;

static void sample_chunk(void *ctx, int64_t k)
{
    const sample_job *j = ctx;
    void *mine = j->scratch + j->row_bytes * (size_t)k;
    int64_t begin, end;
    em_parallel_range(j->rows, j->nchunks, 1, k, &begin, &end);
    for (int64_t r = begin; r < end; r++) {
        if (j->replacement)
            sample_with_replacement(j->c, j->p + r * j->ncat, j->ncat, r, j->out + r * j->nsample, mine);
        else
            sample_without_replacement(j->c, j->p + r * j->ncat, j->ncat, r, j->out + r * j->nsample, mine);
    }
}

em_status cpu_multinomial(const em_call *c)
{
    const em_tensor *probs = c->in[0];
    const int64_t rows = probs->sizes[0], ncat = probs->sizes[1], nsample = c->i[3];
    const bool replacement = c->i[4] != 0;
    const double *p = (const double *)em_tensor_data(probs);
    int64_t *out = (int64_t *)em_tensor_data(c->out[0]);
    if (rows == 0) return EM_OK;
    if (check_probabilities(p, rows, ncat, replacement && nsample > 1)) return em_error_code();

    const int64_t work = replacement ? nsample : ncat; /* per row */
    int64_t nchunks = em_parallel_chunks(rows * work, EM_GRAIN);
    if (nchunks > rows) nchunks = rows;
    /* scratch per chunk: a running sum or the keys of one row */
    const size_t row_bytes = (size_t)ncat * (replacement ? sizeof(double) : sizeof(keyed));
    char *scratch = malloc(row_bytes * (size_t)nchunks);
    if (!scratch) return em_fail(EM_ERR_MEMORY, "multinomial: out of memory for %lld categories", (long long)ncat);
    sample_job j = {.c = c, .p = p, .out = out, .rows = rows, .ncat = ncat, .nsample = nsample,
                    .nchunks = nchunks, .replacement = replacement, .scratch = scratch,
                    .row_bytes = row_bytes};
    em_parallel_run(j.nchunks, sample_chunk, &j);
    free(scratch);
    return EM_OK;
}
