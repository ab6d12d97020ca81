/* The CPU sort family's shared machinery: order-preserving integer keys for
 * every dtype, sorting and selecting (key, index) items, and the row
 * geometry of "along a dim" kernels. Used by src/cpu/sort*.c only.
 *
 * Note [Sort keys]
 * Every element becomes an unsigned 64-bit key whose integer order is the
 * element order PyTorch uses: signed integers get their sign bit flipped,
 * floats their sign-magnitude bits folded (negative: all bits flipped,
 * positive: sign bit set), -0.0 counts as 0.0 and every NaN gets one key
 * above +inf. A descending order is the bitwise complement of the keys. Items
 * are ordered by (key, idx), so all are distinct: sorting is stable and
 * selection is deterministic. Values are never rebuilt from keys (that would
 * lose -0.0 and NaN payloads): kernels copy the original element at `idx`. */
#ifndef EMBER_CPU_SORT_H
#define EMBER_CPU_SORT_H

#include "cpu.h"

typedef struct em_sort_item {
    uint64_t key;
    int64_t idx;
} em_sort_item;

/* items[i] = {key of the element at src + i * stride (bytes), i}, i < n. */
void em_sort_make_keys(em_sort_item *items, const char *src, int64_t stride, int64_t n, em_dtype dt,
                       bool descending);

/* Sorts items ascending by (key, idx). The items must come in ascending idx
 * order (as em_sort_make_keys makes them): large inputs use an LSD radix
 * sort, which keeps that order among equal keys. scratch holds n items. */
void em_sort_items(em_sort_item *items, em_sort_item *scratch, int64_t n);
/* The same order for items in any order (a merge sort); scratch: n items. */
void em_sort_items_merge(em_sort_item *items, em_sort_item *scratch, int64_t n);
/* Reorders items so that items[k] is what a sort would put there, smaller
 * items before it and larger after (in no particular order); k < n. A
 * quickselect, with a heap fallback that bounds its worst case. */
void em_select_item(em_sort_item *items, int64_t n, int64_t k);
/* Moves the k smallest of items[0..n) into items[0..k) as a max-heap (the
 * k-th smallest first); O(n log k), about one compare per item when k << n. */
void em_select_smallest(em_sort_item *items, int64_t n, int64_t k);

/* Is key (made from an element of dtype dt) the key of NaN? */
static inline bool em_sort_key_is_nan(uint64_t key, em_dtype dt)
{
    return em_dtype_is_float(dt) && key == (dt == EM_F64 ? UINT64_MAX : UINT32_MAX);
}

/* Offset (in elements) of the first element of row `row` of t along dim:
 * rows enumerate the other dims in row-major order. */
static inline int64_t em_row_offset(const em_tensor *t, int dim, int64_t row)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (d == dim) continue;
        off += (row % t->sizes[d]) * t->strides[d];
        row /= t->sizes[d];
    }
    return off;
}

/* A kernel's work on rows [begin, end): allocates what it needs, returns a status. */
typedef em_status (*em_rows_fn)(const em_call *c, int64_t begin, int64_t end);
/* Runs fn over nrows rows of row_len elements each, splitting the rows over
 * threads when there is enough work. Returns the first failure. */
em_status em_sort_run_rows(const em_call *c, int64_t nrows, int64_t row_len, em_rows_fn fn);

#endif
