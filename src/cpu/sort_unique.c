/* CPU kernels of unique and unique_consecutive, flattened or along a dim.
 *
 * Both see the contiguous input as n slices of m elements: slice i is
 * t.select(dim, i) (flattened: n = numel, m = 1, one element each). Slices
 * are keyed (Note [Sort keys]); unique orders them lexicographically by one
 * stable radix pass per element column, last column first (an LSD sort over
 * columns); then runs of equal slices form groups. A slice holding a NaN
 * equals no other (NaN != NaN), as in PyTorch.
 *
 * c->in[0] the contiguous input; c->i[0] dim (-1: flattened). Outputs:
 * c->out[0] values, n slices' room, contiguous with dim first (group g at
 * g * m); c->out[1] inverse (n, int64) or NULL; c->out[2] counts (n, int64)
 * or NULL; c->out[3] 0-d int64: the number of groups. */
#include "sort.h"
#include <stdlib.h>

typedef struct slices {
    int64_t n, m, post; /* slices, elements per slice, elements after dim */
    uint64_t *keys;     /* n x m */
    bool *has_nan;      /* per slice */
    int64_t *perm, *next; /* slice order, and the next pass's */
    em_sort_item *items, *scratch;
} slices;

static void slices_free(slices *s)
{
    free(s->keys), free(s->has_nan), free(s->perm), free(s->next), free(s->items), free(s->scratch);
}

/* Keys column by column: column j = (p, q) holds element (p, i, q) of each slice i. */
static void make_keys(slices *s, const em_tensor *t)
{
    em_dtype dt = (em_dtype)t->dtype;
    int64_t es = (int64_t)em_dtypes[dt].size;
    const char *data = em_tensor_data(t);
    for (int64_t j = 0; j < s->m; j++) {
        int64_t p = j / s->post, q = j % s->post;
        em_sort_make_keys(s->items, data + (p * s->n * s->post + q) * es, s->post * es, s->n, dt, false);
        for (int64_t i = 0; i < s->n; i++) {
            s->keys[i * s->m + j] = s->items[i].key;
            s->has_nan[i] |= em_sort_key_is_nan(s->items[i].key, dt);
        }
    }
}

/* perm = the slices in lexicographic order, ties in input order. */
static void sort_slices(slices *s)
{
    for (int64_t j = s->m - 1; j >= 0; j--) {
        for (int64_t pos = 0; pos < s->n; pos++) s->items[pos] = (em_sort_item){s->keys[s->perm[pos] * s->m + j], pos};
        em_sort_items(s->items, s->scratch, s->n);
        for (int64_t pos = 0; pos < s->n; pos++) s->next[pos] = s->perm[s->items[pos].idx];
        int64_t *t = s->perm;
        s->perm = s->next;
        s->next = t;
    }
}

static bool same_slice(const slices *s, int64_t a, int64_t b)
{
    return !s->has_nan[a] && !s->has_nan[b] && !memcmp(s->keys + a * s->m, s->keys + b * s->m, s->m * sizeof *s->keys);
}

/* Copies slice i of t into group g of the values buffer. */
static void copy_slice(em_tensor *values, int64_t g, const em_tensor *t, const slices *s, int64_t i)
{
    int64_t es = (int64_t)em_dtypes[t->dtype].size;
    const char *src = em_tensor_data(t);
    char *dst = em_tensor_data(values) + g * s->m * es;
    for (int64_t p = 0; p < s->m / s->post; p++)
        memcpy(dst + p * s->post * es, src + (p * s->n + i) * s->post * es, s->post * es);
}

static em_status unique_run(const em_call *c, bool sorted)
{
    const em_tensor *t = c->in[0];
    int dim = (int)c->i[0];
    slices s = {.n = em_numel(t), .m = 1, .post = 1};
    if (dim >= 0) {
        s.n = t->sizes[dim];
        for (int d = dim + 1; d < t->ndim; d++) s.post *= t->sizes[d];
        s.m = s.n ? em_numel(t) / s.n : 1;
    }
    size_t n = s.n ? (size_t)s.n : 1;
    s.keys = malloc(n * s.m * sizeof *s.keys);
    s.has_nan = calloc(n, sizeof *s.has_nan);
    s.perm = malloc(n * sizeof *s.perm);
    s.next = malloc(n * sizeof *s.next);
    s.items = malloc(n * sizeof *s.items);
    s.scratch = malloc(n * sizeof *s.scratch);
    if (!s.keys || !s.has_nan || !s.perm || !s.next || !s.items || !s.scratch) {
        slices_free(&s);
        return em_fail(EM_ERR_MEMORY, "%s: out of memory", em_ops[c->op].name);
    }
    make_keys(&s, t);
    for (int64_t i = 0; i < s.n; i++) s.perm[i] = i;
    if (sorted) sort_slices(&s);

    int64_t *inverse = c->out[1] ? (int64_t *)em_tensor_data(c->out[1]) : NULL;
    int64_t *counts = c->out[2] ? (int64_t *)em_tensor_data(c->out[2]) : NULL;
    int64_t g = -1;
    for (int64_t pos = 0; pos < s.n; pos++) {
        int64_t i = s.perm[pos];
        if (pos == 0 || !same_slice(&s, s.perm[pos - 1], i)) {
            copy_slice(c->out[0], ++g, t, &s, i);
            if (counts) counts[g] = 0;
        }
        if (inverse) inverse[i] = g;
        if (counts) counts[g]++;
    }
    *(int64_t *)em_tensor_data(c->out[3]) = g + 1;
    slices_free(&s);
    return EM_OK;
}

em_status cpu_unique(const em_call *c) { return unique_run(c, true); }
em_status cpu_unique_consecutive(const em_call *c) { return unique_run(c, false); }
