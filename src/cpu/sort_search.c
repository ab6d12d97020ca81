/* CPU kernel of searchsorted (and so bucketize): a binary search per value in
 * its row of the sorted sequence, with PyTorch's comparisons, so that NaN
 * (in either) behaves as there: "left" finds the first element e with
 * e >= v, "right" the first with e > v.
 *
 * c->in[0] the sequence, c->in[1] the values (both contiguous, of the
 * compute dtype c->dtype), c->in[2] the int64 sorter (contiguous) or NULL;
 * c->out[0] the contiguous int32 or int64 result; c->i[0] right. The
 * sequence is 1-d (shared by every value) or has a row per values row. */
#include "cpu.h"

#define SEARCH(DT)                                                                                         \
    static void search_##DT(const em_call *c, int64_t begin, int64_t end, int64_t len, int64_t per_row)    \
    {                                                                                                      \
        typedef em_##DT##_t T;                                                                             \
        const T *seq = (const T *)em_tensor_data(c->in[0]), *vals = (const T *)em_tensor_data(c->in[1]);   \
        const int64_t *sorter = c->in[2] ? (const int64_t *)em_tensor_data(c->in[2]) : NULL;               \
        em_tensor *out = c->out[0];                                                                        \
        bool right = c->i[0] != 0, i32 = out->dtype == EM_I32;                                             \
        for (int64_t i = begin; i < end; i++) {                                                            \
            int64_t base = per_row ? i / per_row * len : 0, lo = 0, hi = len;                              \
            T v = vals[i];                                                                                 \
            while (lo < hi) {                                                                              \
                int64_t mid = lo + (hi - lo) / 2;                                                          \
                T e = seq[base + (sorter ? sorter[base + mid] : mid)];                                     \
                if (right ? !(e > v) : !(e >= v))                                                          \
                    lo = mid + 1;                                                                          \
                else                                                                                       \
                    hi = mid;                                                                              \
            }                                                                                              \
            if (i32)                                                                                       \
                ((int32_t *)em_tensor_data(out))[i] = (int32_t)lo;                                         \
            else                                                                                           \
                ((int64_t *)em_tensor_data(out))[i] = lo;                                                  \
        }                                                                                                  \
    }
EM_FOR_NUMERIC(SEARCH)

typedef void (*search_fn)(const em_call *c, int64_t begin, int64_t end, int64_t len, int64_t per_row);
#define SEARCH_ENTRY(DT) [EM_##DT] = search_##DT,
static const search_fn searches[EM_DTYPE_COUNT] = {EM_FOR_NUMERIC(SEARCH_ENTRY)};

typedef struct search_job {
    const em_call *c;
    search_fn fn;
    int64_t len, per_row;
} search_job;

static void search_range(void *ctx, int64_t begin, int64_t end)
{
    const search_job *j = ctx;
    j->fn(j->c, begin, end, j->len, j->per_row);
}

em_status cpu_searchsorted(const em_call *c)
{
    const em_tensor *seq = c->in[0], *values = c->in[1], *sorter = c->in[2];
    search_fn fn = searches[c->dtype];
    if (!fn)
        return em_fail(EM_ERR_DTYPE, "\"searchsorted_out_cpu\" not implemented for '%s'", em_dtypes[c->dtype].name);
    int64_t len = seq->sizes[seq->ndim - 1], n = em_numel(values);
    /* rows of the sequence pair with rows of values unless it is 1-d */
    int64_t per_row = seq->ndim > 1 ? values->sizes[values->ndim - 1] : 0;
    if (sorter) { /* its entries index the rows: all must be in range before anything is written */
        const int64_t *s = (const int64_t *)em_tensor_data(sorter);
        for (int64_t i = 0, m = em_numel(sorter); i < m; i++)
            if (s[i] < 0 || s[i] >= len)
                return em_fail(EM_ERR_RUNTIME, "torch.searchsorted(): sorter index out of range: got %lld for a "
                               "boundaries row of length %lld", (long long)s[i], (long long)len);
    }
    int64_t loads = 1; /* a binary search's: about log2(len) + 1 */
    while (loads < 64 && (INT64_C(1) << loads) <= len) loads++;
    search_job j = {.c = c, .fn = fn, .len = len, .per_row = per_row};
    em_parallel_for(n, loads, EM_GRAIN_GATHER, search_range, &j);
    return EM_OK;
}
