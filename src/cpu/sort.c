/* CPU kernels of sort, topk and kthvalue: each row along the dim is copied
 * out, keyed (Note [Sort keys]), sorted or selected, and its values and
 * indices written back. Rows run in parallel (em_sort_run_rows).
 *
 * The op layer hands every kernel tensors of >= 1 dim: c->in[0] the input,
 * c->out[0] the int64 indices and c->out[1] the values (t's dtype; NULL when
 * not wanted), both of the input's rank (kthvalue's are keepdim views). */
#include "sort.h"
#include <stdlib.h>

/* One thread's buffers for rows of n elements of es bytes. */
typedef struct row_bufs {
    em_sort_item *items, *scratch; /* scratch: NULL unless full rows are sorted */
    char *vals;                    /* the row's elements, contiguous */
} row_bufs;

static bool bufs_alloc(row_bufs *b, int64_t n, size_t es, bool scratch)
{
    size_t m = n > 0 ? (size_t)n : 1;
    b->items = malloc(m * sizeof *b->items);
    b->scratch = scratch ? malloc(m * sizeof *b->scratch) : NULL;
    b->vals = malloc(m * es);
    return b->items && (b->scratch || !scratch) && b->vals;
}

static void bufs_free(row_bufs *b)
{
    free(b->items);
    free(b->scratch);
    free(b->vals);
}

/* dst[i * ds] = src[i * ss] for n elements of es bytes (strides in bytes). */
static void copy_elems(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n, size_t es)
{
    switch (es) {
#define COPY(T)                                                                          \
    for (int64_t i = 0; i < n; i++) *(T *)(dst + i * ds) = *(const T *)(src + i * ss);   \
    break;
    case 1: COPY(uint8_t)
    case 2: COPY(uint16_t)
    case 4: COPY(uint32_t)
    default: COPY(uint64_t)
#undef COPY
    }
}

/* dst[j * ds] = vals[items[j].idx] for j < m (elements of es bytes). */
static void gather_elems(char *dst, int64_t ds, const char *vals, const em_sort_item *items, int64_t m, size_t es)
{
    switch (es) {
#define GATHER(T)                                                                                       \
    for (int64_t j = 0; j < m; j++) *(T *)(dst + j * ds) = ((const T *)vals)[items[j].idx];             \
    break;
    case 1: GATHER(uint8_t)
    case 2: GATHER(uint16_t)
    case 4: GATHER(uint32_t)
    default: GATHER(uint64_t)
#undef GATHER
    }
}

/* Copies row `row` of t along dim into b->vals and keys it into b->items. */
static void load_row(row_bufs *b, const em_tensor *t, int dim, int64_t row, bool descending)
{
    size_t es = em_dtypes[t->dtype].size;
    int64_t n = t->sizes[dim];
    const char *src = em_tensor_data(t) + em_row_offset(t, dim, row) * (int64_t)es;
    copy_elems(b->vals, (int64_t)es, src, t->strides[dim] * (int64_t)es, n, es);
    em_sort_make_keys(b->items, b->vals, (int64_t)es, n, (em_dtype)t->dtype, descending);
}

/* Writes items[0..m) of a row: values (if wanted) from b->vals, and indices. */
static void store_row(const row_bufs *b, const em_sort_item *items, int64_t m, em_tensor *values,
                      em_tensor *indices, int dim, int64_t row)
{
    if (values) {
        size_t es = em_dtypes[values->dtype].size;
        char *dst = em_tensor_data(values) + em_row_offset(values, dim, row) * (int64_t)es;
        gather_elems(dst, values->strides[dim] * (int64_t)es, b->vals, items, m, es);
    }
    int64_t *di = (int64_t *)em_tensor_data(indices) + em_row_offset(indices, dim, row);
    for (int64_t j = 0; j < m; j++) di[j * indices->strides[dim]] = items[j].idx;
}

/* The row loop every kernel here shares; `pick` orders b->items for a row
 * and returns the first item and how many to store. */
typedef const em_sort_item *(*pick_fn)(const em_call *c, row_bufs *b, int64_t n, int64_t *m);

static em_status run_rows(const em_call *c, int64_t begin, int64_t end, pick_fn pick, bool descending,
                          bool scratch)
{
    const em_tensor *t = c->in[0];
    int dim = (int)c->i[0];
    int64_t n = t->sizes[dim];
    row_bufs b;
    if (!bufs_alloc(&b, n, em_dtypes[t->dtype].size, scratch)) {
        bufs_free(&b);
        return EM_ERR_MEMORY;
    }
    for (int64_t row = begin; row < end; row++) {
        load_row(&b, t, dim, row, descending);
        int64_t m;
        const em_sort_item *first = pick(c, &b, n, &m);
        store_row(&b, first, m, c->out[1], c->out[0], dim, row);
    }
    bufs_free(&b);
    return EM_OK;
}

static int64_t rows_of(const em_call *c)
{
    const em_tensor *t = c->in[0];
    int64_t n = t->sizes[c->i[0]];
    return n ? em_numel(t) / n : 0;
}

/* ---- sort: c->i[0] dim, c->i[1] descending ---- */
static const em_sort_item *pick_sorted(const em_call *c, row_bufs *b, int64_t n, int64_t *m)
{
    em_sort_items(b->items, b->scratch, n);
    *m = n;
    return b->items;
}
static em_status sort_rows(const em_call *c, int64_t begin, int64_t end)
{
    return run_rows(c, begin, end, pick_sorted, c->i[1] != 0, true);
}
em_status cpu_sort(const em_call *c)
{
    return em_sort_run_rows(c, rows_of(c), c->in[0]->sizes[c->i[0]], sort_rows);
}

/* Few of many: a heap pass beats partitioning. */
static bool few(int64_t k, int64_t n) { return k * 16 <= n; }

/* ---- topk: c->i[0] dim, c->i[1] k, c->i[2] largest; results in order ---- */
static bool topk_sorts_rows(int64_t k, int64_t n) { return 2 * k >= n; } /* most of the row: as cheap */

static const em_sort_item *pick_topk(const em_call *c, row_bufs *b, int64_t n, int64_t *m)
{
    int64_t k = c->i[1];
    if (topk_sorts_rows(k, n)) {
        em_sort_items(b->items, b->scratch, n);
    } else if (k > 0) {
        if (few(k, n))
            em_select_smallest(b->items, n, k);
        else
            em_select_item(b->items, n, k - 1);
        em_sort_items_merge(b->items, b->items + k, k); /* the other n - k > k items are free */
    }
    *m = k;
    return b->items;
}
static em_status topk_rows(const em_call *c, int64_t begin, int64_t end)
{
    bool full = topk_sorts_rows(c->i[1], c->in[0]->sizes[c->i[0]]);
    return run_rows(c, begin, end, pick_topk, c->i[2] != 0, full);
}
em_status cpu_topk(const em_call *c)
{
    return em_sort_run_rows(c, rows_of(c), c->in[0]->sizes[c->i[0]], topk_rows);
}

/* ---- kthvalue: c->i[0] dim, c->i[1] k (1-based); outputs are keepdim ---- */
static const em_sort_item *pick_kth(const em_call *c, row_bufs *b, int64_t n, int64_t *m)
{
    int64_t k = c->i[1];
    *m = 1;
    if (few(k, n)) {
        em_select_smallest(b->items, n, k);
        return b->items; /* the heap's top */
    }
    em_select_item(b->items, n, k - 1);
    return b->items + k - 1;
}
static em_status kth_rows(const em_call *c, int64_t begin, int64_t end)
{
    return run_rows(c, begin, end, pick_kth, false, false);
}
em_status cpu_kthvalue(const em_call *c)
{
    return em_sort_run_rows(c, rows_of(c), c->in[0]->sizes[c->i[0]], kth_rows);
}
