/* The CPU sort family's algorithms (Note [Sort keys] in sort.h): key making
 * per dtype, an LSD radix sort and a merge sort of (key, idx) items, a
 * quickselect, and the row-parallel driver of the "along a dim" kernels. */
#include "sort.h"
#include <stdatomic.h>
#include <stdlib.h>

/* ---- keys ---------------------------------------------------------------- */
/* NaN keys are em_sort_key_is_nan's: UINT32_MAX for float32 and the half
 * types (they key as float32), UINT64_MAX for float64. */
static inline uint64_t key_f32(float v)
{
    if (v != v) return UINT32_MAX; /* every NaN: above +inf (0xFF800000) */
    if (v == 0) v = 0;             /* -0.0 ties with 0.0 */
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 31 ? ~b : b | 0x80000000u;
}
static inline uint64_t key_f64(double v)
{
    if (v != v) return UINT64_MAX;
    if (v == 0) v = 0;
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 63 ? ~b : b | 0x8000000000000000ull;
}
#define KEY_U8(v) ((uint64_t)(v))
#define KEY_BOOL(v) ((uint64_t)(v))
#define KEY_I8(v) ((uint64_t)(uint8_t)((uint8_t)(v) ^ 0x80u))
#define KEY_I16(v) ((uint64_t)(uint16_t)((uint16_t)(v) ^ 0x8000u))
#define KEY_I32(v) ((uint64_t)((uint32_t)(v) ^ 0x80000000u))
#define KEY_I64(v) ((uint64_t)(v) ^ 0x8000000000000000ull)
#define KEY_F32(v) key_f32(v)
#define KEY_F64(v) key_f64(v)
#define KEY_F16(v) key_f32(em_f16_to_f32(v))
#define KEY_BF16(v) key_f32(em_bf16_to_f32(v))
typedef uint16_t em_F16_t;
typedef uint16_t em_BF16_t;

void em_sort_make_keys(em_sort_item *items, const char *src, int64_t stride, int64_t n, em_dtype dt,
                       bool descending)
{
    const uint64_t flip = descending ? UINT64_MAX : 0; /* complemented keys sort in reverse */
    switch (dt) {
#define KEYS(DT)                                                                        \
    case EM_##DT:                                                                       \
        for (int64_t i = 0; i < n; i++) {                                               \
            em_##DT##_t v;                                                              \
            memcpy(&v, src + i * stride, sizeof v);                                     \
            items[i].key = KEY_##DT(v) ^ flip;                                          \
            items[i].idx = i;                                                           \
        }                                                                               \
        break;
        KEYS(U8) KEYS(I8) KEYS(I16) KEYS(I32) KEYS(I64) KEYS(F16) KEYS(F32) KEYS(F64) KEYS(BOOL) KEYS(BF16)
#undef KEYS
    default: break;
    }
}

/* ---- comparison sorts ------------------------------------------------------ */
static inline bool item_less(em_sort_item a, em_sort_item b)
{
    return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

static void insertion_sort(em_sort_item *a, int64_t n)
{
    for (int64_t i = 1; i < n; i++) {
        em_sort_item x = a[i];
        int64_t j = i;
        for (; j > 0 && item_less(x, a[j - 1]); j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

static void merge(const em_sort_item *a, int64_t na, const em_sort_item *b, int64_t nb, em_sort_item *out)
{
    int64_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) out[k++] = item_less(b[j], a[i]) ? b[j++] : a[i++];
    while (i < na) out[k++] = a[i++];
    while (j < nb) out[k++] = b[j++];
}

#define MERGE_RUN 16 /* runs this short are insertion-sorted first */

void em_sort_items_merge(em_sort_item *items, em_sort_item *scratch, int64_t n)
{
    for (int64_t i = 0; i < n; i += MERGE_RUN) insertion_sort(items + i, n - i < MERGE_RUN ? n - i : MERGE_RUN);
    em_sort_item *src = items, *dst = scratch;
    for (int64_t w = MERGE_RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            if (mid == hi || item_less(src[mid - 1], src[mid])) /* already in order: copy */
                memcpy(dst + lo, src + lo, (hi - lo) * sizeof *src);
            else
                merge(src + lo, mid - lo, src + mid, hi - mid, dst + lo);
        }
        em_sort_item *t = src;
        src = dst;
        dst = t;
    }
    if (src != items) memcpy(items, src, n * sizeof *items);
}

/* ---- radix sort ------------------------------------------------------------
 * LSD, one byte per pass, only over the bytes where keys differ (a float32
 * key has 4 at most; complemented keys have constant high bytes too). */
static void radix_sort(em_sort_item *items, em_sort_item *scratch, int64_t n)
{
    uint64_t first = items[0].key, varying = 0;
    for (int64_t i = 0; i < n; i++) varying |= items[i].key ^ first;
    int shifts[8], npass = 0;
    for (int b = 0; b < 8; b++)
        if ((varying >> (8 * b)) & 0xFF) shifts[npass++] = 8 * b;
    if (!npass) return; /* all keys equal: idx order is the sorted order */
    int64_t count[8][256];
    memset(count, 0, sizeof count);
    for (int64_t i = 0; i < n; i++)
        for (int p = 0; p < npass; p++) count[p][(items[i].key >> shifts[p]) & 0xFF]++;
    for (int p = 0; p < npass; p++)
        for (int64_t d = 0, sum = 0; d < 256; d++) {
            int64_t c = count[p][d];
            count[p][d] = sum;
            sum += c;
        }
    em_sort_item *src = items, *dst = scratch;
    for (int p = 0; p < npass; p++) {
        int s = shifts[p];
        int64_t *pos = count[p];
        for (int64_t i = 0; i < n; i++) dst[pos[(src[i].key >> s) & 0xFF]++] = src[i];
        em_sort_item *t = src;
        src = dst;
        dst = t;
    }
    if (src != items) memcpy(items, src, n * sizeof *items);
}

/* Below this many items the merge sort beats the radix sort's fixed cost. */
#define RADIX_MIN 96

void em_sort_items(em_sort_item *items, em_sort_item *scratch, int64_t n)
{
    if (n < RADIX_MIN)
        em_sort_items_merge(items, scratch, n);
    else
        radix_sort(items, scratch, n);
}

/* ---- selection ------------------------------------------------------------ */
static inline void swap_items(em_sort_item *a, em_sort_item *b)
{
    em_sort_item t = *a;
    *a = *b;
    *b = t;
}

/* Restores the max-heap h[0..k) below position i. */
static void sift_down(em_sort_item *h, int64_t k, int64_t i)
{
    em_sort_item x = h[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= k) break;
        if (c + 1 < k && item_less(h[c], h[c + 1])) c++;
        if (!item_less(x, h[c])) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

void em_select_smallest(em_sort_item *a, int64_t n, int64_t k)
{
    if (k <= 0) return;
    for (int64_t i = k / 2 - 1; i >= 0; i--) sift_down(a, k, i);
    for (int64_t i = k; i < n; i++)
        if (item_less(a[i], a[0])) { /* one compare for most items when k << n */
            a[0] = a[i];
            sift_down(a, k, 0);
        }
}

void em_select_item(em_sort_item *a, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    int budget = 16; /* partitions before the heap fallback (bad pivots): ~2 log2(n) */
    for (int64_t m = n; m > 1; m >>= 1) budget += 2;
    while (hi - lo >= MERGE_RUN) {
        if (budget-- == 0) { /* k - lo + 1 smallest of the range, then its largest to k */
            em_select_smallest(a + lo, hi - lo + 1, k - lo + 1);
            swap_items(&a[lo], &a[k]);
            return;
        }
        /* median of three: a[lo] <= a[lo + 1] = pivot <= a[hi], sentinels for the scans */
        int64_t mid = lo + (hi - lo) / 2;
        swap_items(&a[mid], &a[lo + 1]);
        if (item_less(a[hi], a[lo])) swap_items(&a[lo], &a[hi]);
        if (item_less(a[hi], a[lo + 1])) swap_items(&a[lo + 1], &a[hi]);
        if (item_less(a[lo + 1], a[lo])) swap_items(&a[lo], &a[lo + 1]);
        em_sort_item pivot = a[lo + 1];
        int64_t i = lo + 1, j = hi;
        for (;;) {
            do i++; while (item_less(a[i], pivot));
            do j--; while (item_less(pivot, a[j]));
            if (i > j) break;
            swap_items(&a[i], &a[j]);
        }
        a[lo + 1] = a[j];
        a[j] = pivot;
        if (j == k) return;
        if (k < j)
            hi = j - 1;
        else
            lo = j + 1;
    }
    insertion_sort(a + lo, hi - lo + 1);
}

/* ---- the row driver --------------------------------------------------------- */
/* Sorting costs about 16 pointwise ops per element: threads pay off sooner. */
#define SORT_COST 16

typedef struct rows_job {
    const em_call *c;
    em_rows_fn fn;
    _Atomic bool failed;
} rows_job;

static void sort_rows(void *ctx, int64_t begin, int64_t end)
{
    rows_job *j = ctx;
    if (j->fn(j->c, begin, end) != EM_OK) atomic_store(&j->failed, true);
}

em_status em_sort_run_rows(const em_call *c, int64_t nrows, int64_t row_len, em_rows_fn fn)
{
    if (em_parallel_chunks(nrows * row_len * SORT_COST, EM_GRAIN) < 2 || nrows < 2) return fn(c, 0, nrows);
    rows_job j = {.c = c, .fn = fn};
    em_parallel_for(nrows, row_len * SORT_COST, EM_GRAIN, sort_rows, &j);
    const bool failed = atomic_load(&j.failed);
    /* a worker's error message lives in its own thread: report on ours */
    if (failed) return em_fail(EM_ERR_MEMORY, "%s: out of memory for the sort buffers", em_ops[c->op].name);
    return EM_OK;
}
