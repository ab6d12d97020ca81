/* The CPU reduction driver: builds the geometry of a reduction (Note
 * [Reduction geometry] in reduce.h) and runs a reduction kind over it in
 * shape-determined blocks, merged pairwise, split over threads (Note
 * [Deterministic blocking]). */
#include "reduce.h"
#include <stdlib.h>


#define ROW_BLOCK (1 << 15) /* elements of a plain row reduced as one block */
#define COL_BLOCK 4096      /* rows of a vertical reduction reduced as one block */
#define MAX_ACC 16          /* largest accumulator (value + index) */
/* a kind's pairwise stack must hold log2(blocks per call) + 1 levels */
_Static_assert(ROW_BLOCK / (EM_RED_LANES * EM_RED_LANE_ROWS) <= 1 << (EM_RED_LEVELS - 1), "row block too long");
_Static_assert(COL_BLOCK / EM_RED_COL_ROWS <= 1 << (EM_RED_LEVELS - 1), "column block too long");

void em_red_for(int64_t ntask, int64_t numel, em_range_fn fn, void *ctx)
{
    em_parallel_for(ntask, ntask ? (numel + ntask - 1) / ntask : 1, EM_GRAIN_REDUCE, fn, ctx);
}

/* Merges the reduced dims of t into one run (*n elements, stride *sn) if
 * their strides chain; `ordered` requires the run to follow row-major order. */
static bool merge_reduced(const em_tensor *t, uint32_t mask, bool ordered, int64_t *n, int64_t *sn)
{
    int d[EM_MAX_DIMS], k = 0;
    *n = 1;
    *sn = 1;
    for (int i = t->ndim - 1; i >= 0; i--) /* innermost first */
        if (mask >> i & 1) {
            *n *= t->sizes[i];
            if (t->sizes[i] != 1) d[k++] = i;
        }
    if (*n == 0) return true;
    if (!ordered)
        for (int i = 1; i < k; i++)
            for (int j = i; j > 0 && t->strides[d[j]] < t->strides[d[j - 1]]; j--) {
                int s = d[j];
                d[j] = d[j - 1];
                d[j - 1] = s;
            }
    for (int i = 1; i < k; i++)
        if (t->strides[d[i]] != t->strides[d[i - 1]] * t->sizes[d[i - 1]]) return false;
    if (k) *sn = t->strides[d[0]];
    return true;
}

/* A copy of t whose reduced dims are innermost and contiguous (in their
 * order), returned as a view in t's dim order. */
static em_tensor *permuted_copy(const em_tensor *t, uint32_t mask)
{
    int perm[EM_MAX_DIMS], n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < t->ndim; i++)
            if ((int)(mask >> i & 1) == pass) perm[n++] = i;
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        sizes[i] = t->sizes[perm[i]];
        strides[i] = t->strides[perm[i]];
    }
    em_tensor *src = em_tensor_view(t, n, sizes, strides, t->offset);
    em_tensor *dst = em_tensor_new(n, sizes, (em_dtype)t->dtype, t->storage->device);
    em_tensor *view = NULL;
    if (src && dst) {
        em_call c = {.op = EM_OP_copy, .nin = 1, .nout = 1, .dtype = (em_dtype)t->dtype};
        c.out[0] = dst;
        c.in[0] = src;
        c.operand_dtypes[0] = c.operand_dtypes[1] = t->dtype;
        if (cpu_copy(&c) == EM_OK) {
            for (int i = 0; i < n; i++) strides[perm[i]] = dst->strides[i];
            view = em_tensor_view(dst, n, t->sizes, strides, 0);
        }
    }
    em_release(src);
    em_release(dst);
    return view;
}

static void remove_at(int *d, int *n, int i)
{
    for (int k = i; k + 1 < *n; k++) d[k] = d[k + 1];
    (*n)--;
}

em_status em_red_geom_init(em_red_geom *g, const em_tensor *x, const int64_t *os, uint32_t mask, int flags)
{
    memset(g, 0, sizeof *g);
    const em_tensor *t = x;
    bool ordered = flags & EM_GEOM_ORDERED;
    if (!merge_reduced(t, mask, ordered, &g->n, &g->sn)) {
        g->copy = permuted_copy(x, mask);
        if (!g->copy) return em_error_code();
        t = g->copy;
        merge_reduced(t, mask, ordered, &g->n, &g->sn);
    }
    g->x = em_tensor_data(t);
    g->xsize = em_dtypes[t->dtype].size;

    int kept[EM_MAX_DIMS], nk = 0, inner = -1;
    for (int i = 0; i < t->ndim; i++) {
        if (mask >> i & 1) {
            if (t->sizes[i] != 1) g->on = os[i]; /* scans reduce (scan) a single dim */
        } else if (t->sizes[i] != 1) {
            if (inner < 0 || t->strides[i] < t->strides[kept[inner]]) inner = nk;
            kept[nk++] = i;
        }
    }
    /* the inner run: the fastest kept dim, when it is faster than the reduced run */
    g->m = 1;
    if (inner >= 0 && (g->n <= 1 || t->strides[kept[inner]] < g->sn)) {
        int d = kept[inner];
        g->m = t->sizes[d];
        g->si = t->strides[d];
        g->oi = os[d];
        remove_at(kept, &nk, inner);
        for (bool grown = true; grown;) {
            grown = false;
            for (int k = 0; k < nk; k++) {
                int e = kept[k];
                if (t->strides[e] == g->si * g->m && os[e] == g->oi * g->m) {
                    g->m *= t->sizes[e];
                    remove_at(kept, &nk, k);
                    grown = true;
                    break;
                }
            }
        }
    }
    /* outer dims, slowest first, merged where both strides chain */
    g->nrows = 1;
    for (int k = 0; k < nk; k++) {
        int d = kept[k];
        int o = g->nouter - 1;
        if (o >= 0 && g->outer_si[o] == t->strides[d] * t->sizes[d] && g->outer_so[o] == os[d] * t->sizes[d]) {
            g->outer[o] *= t->sizes[d];
            g->outer_si[o] = t->strides[d];
            g->outer_so[o] = os[d];
        } else {
            g->outer[g->nouter] = t->sizes[d];
            g->outer_si[g->nouter] = t->strides[d];
            g->outer_so[g->nouter++] = os[d];
        }
        g->nrows *= t->sizes[d];
    }
    return EM_OK;
}

void em_red_geom_free(em_red_geom *g)
{
    em_release(g->copy);
    g->copy = NULL;
}

void em_red_geom_row(const em_red_geom *g, int64_t o, int64_t *xoff, int64_t *ooff)
{
    int64_t xo = 0, oo = 0;
    for (int d = g->nouter - 1; d >= 0; d--) {
        int64_t c = o % g->outer[d];
        o /= g->outer[d];
        xo += c * g->outer_si[d];
        oo += c * g->outer_so[d];
    }
    *xoff = xo;
    *ooff = oo;
}

/* A double buffer of one value per output (for two-pass kernels). */
static double *aux_alloc(const em_red_geom *g)
{
    double *a = malloc((size_t)(em_red_nout(g) ? em_red_nout(g) : 1) * sizeof *a);
    if (!a) em_error(EM_ERR_MEMORY, "reduction: out of memory");
    return a;
}

/* One run: tasks are (row o, column chunk, row block), row block fastest. */
typedef struct red_job {
    const em_red_kind *k;
    const em_red_geom *g;
    char *out[2];
    bool flat;
    const double *aux;
    const em_call *c;
    int64_t rb, nrb, cw, ncc;
    char *partial; /* [row][row block][column] accumulators when nrb > 1 */
} red_job;

/* Where the outputs of row o, columns from j0, go; *os the column stride. */
static void out_ptrs(const red_job *jb, int64_t o, int64_t ooff, int64_t j0, char **p, int64_t *os)
{
    const em_red_geom *g = jb->g;
    int64_t e = jb->flat ? o * g->m + j0 : ooff + j0 * g->oi;
    p[0] = jb->out[0] + e * (int64_t)jb->k->out_size[0];
    p[1] = jb->out[1] ? jb->out[1] + e * (int64_t)jb->k->out_size[1] : NULL;
    *os = jb->flat ? 1 : g->oi;
}

static void run_task(const red_job *jb, int64_t t)
{
    const em_red_geom *g = jb->g;
    const em_red_kind *k = jb->k;
    int64_t rbi = t % jb->nrb, cc = t / jb->nrb % jb->ncc, o = t / jb->nrb / jb->ncc;
    int64_t xoff, ooff;
    em_red_geom_row(g, o, &xoff, &ooff);
    int64_t j0 = cc * jb->cw, mm = g->m - j0 < jb->cw ? g->m - j0 : jb->cw;
    int64_t r0 = rbi * jb->rb, nr = g->n - r0 < jb->rb ? g->n - r0 : jb->rb;
    if (nr < 0) nr = 0;
    const char *xp = g->x + (xoff + r0 * g->sn + j0 * g->si) * (int64_t)g->xsize;
    const double *aux = jb->aux ? jb->aux + o * g->m + j0 : NULL;
    _Alignas(64) char local[EM_RED_COLS * MAX_ACC];
    char *acc = jb->nrb > 1 ? jb->partial + ((o * jb->nrb + rbi) * g->m + j0) * (int64_t)k->acc_size : local;
    if (g->m > 1)
        k->cols(xp, nr, g->sn, mm, g->si, r0, acc, aux, jb->c);
    else
        k->row(xp, nr, g->sn, r0, acc, aux ? aux[0] : 0, jb->c);
    if (jb->nrb == 1) {
        char *p[2];
        int64_t os;
        out_ptrs(jb, o, ooff, j0, p, &os);
        k->finish(acc, mm, p[0], p[1], os, aux, g->n, jb->c);
    }
}

/* Merges the row-block partials of (row o, chunk cc) pairwise and finishes. */
static void merge_task(const red_job *jb, int64_t t)
{
    const em_red_geom *g = jb->g;
    const em_red_kind *k = jb->k;
    int64_t cc = t % jb->ncc, o = t / jb->ncc;
    int64_t j0 = cc * jb->cw, mm = g->m - j0 < jb->cw ? g->m - j0 : jb->cw;
    size_t stride = (size_t)g->m * k->acc_size;
    char *base = jb->partial + ((size_t)(o * jb->nrb) * g->m + j0) * k->acc_size;
    for (int64_t step = 1; step < jb->nrb; step *= 2)
        for (int64_t r = 0; r + step < jb->nrb; r += 2 * step)
            k->merge(base + r * stride, base + (r + step) * stride, mm);
    int64_t xoff, ooff;
    em_red_geom_row(g, o, &xoff, &ooff);
    char *p[2];
    int64_t os;
    out_ptrs(jb, o, ooff, j0, p, &os);
    k->finish(base, mm, p[0], p[1], os, jb->aux ? jb->aux + o * g->m + j0 : NULL, g->n, jb->c);
}

static void run_tasks(void *jb, int64_t begin, int64_t end)
{
    for (int64_t t = begin; t < end; t++) run_task(jb, t);
}

static void merge_tasks(void *jb, int64_t begin, int64_t end)
{
    for (int64_t t = begin; t < end; t++) merge_task(jb, t);
}

em_status em_red_run(const em_red_kind *k, const em_red_geom *g, char *out0, char *out1, bool flat,
                     const double *aux, const em_call *c)
{
    red_job jb = {.k = k, .g = g, .out = {out0, out1}, .flat = flat, .aux = aux, .c = c};
    bool vertical = g->m > 1;
    jb.rb = vertical ? COL_BLOCK : ROW_BLOCK;
    jb.nrb = g->n > jb.rb ? (g->n + jb.rb - 1) / jb.rb : 1;
    jb.cw = vertical ? EM_RED_COLS : 1;
    jb.ncc = (g->m + jb.cw - 1) / jb.cw;
    int64_t ntask = g->nrows * jb.ncc * jb.nrb;
    if (ntask == 0) return EM_OK;
    if (jb.nrb > 1) {
        jb.partial = malloc((size_t)(g->nrows * jb.nrb * g->m) * k->acc_size);
        if (!jb.partial) return em_fail(EM_ERR_MEMORY, "%s: out of memory for partial results", em_ops[c->op].name);
    }
    const int64_t numel = g->nrows * g->m * (g->n > 1 ? g->n : 1);
    em_red_for(ntask, numel, run_tasks, &jb);
    if (jb.nrb > 1) em_red_for(g->nrows * jb.ncc, numel, merge_tasks, &jb);
    free(jb.partial);
    return EM_OK;
}

/* The output's stride along each of x's dims: an output without the reduced
 * dims (em_reduce_plan.kernel_drops) has stride 0 there. */
static const int64_t *out_strides(const em_call *c, int64_t *buf)
{
    const em_tensor *x = c->in[0], *o = c->out[0];
    if (o->ndim == x->ndim) return o->strides;
    uint32_t mask = (uint32_t)c->i[0];
    for (int d = 0, k = 0; d < x->ndim; d++) buf[d] = mask >> d & 1 ? 0 : o->strides[k++];
    return buf;
}

em_status em_red_call(const em_call *c, const em_red_kind *k, int flags)
{
    em_red_geom g;
    int64_t os[EM_MAX_DIMS];
    if (em_red_geom_init(&g, c->in[0], out_strides(c, os), (uint32_t)c->i[0], flags)) return em_error_code();
    em_status st = em_red_run(k, &g, em_tensor_data(c->out[0]), c->nout > 1 ? em_tensor_data(c->out[1]) : NULL,
                              false, NULL, c);
    em_red_geom_free(&g);
    return st;
}

em_status em_red_no_kernel(const em_call *c)
{
    return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", em_ops[c->op].name, em_dtypes[c->dtype].name);
}

em_status em_red_kinds(const em_call *c, const em_red_kind *const *kinds, int flags)
{
    return kinds[c->dtype] ? em_red_call(c, kinds[c->dtype], flags) : em_red_no_kernel(c);
}

em_status em_red_call2(const em_call *c, const em_red_kind *first, const em_red_kind *second)
{
    em_red_geom g;
    int64_t os[EM_MAX_DIMS];
    if (em_red_geom_init(&g, c->in[0], out_strides(c, os), (uint32_t)c->i[0], 0)) return em_error_code();
    double *aux = aux_alloc(&g);
    em_status st = aux ? em_red_run(first, &g, (char *)aux, NULL, true, NULL, c) : em_error_code();
    if (st == EM_OK)
        st = em_red_run(second, &g, em_tensor_data(c->out[0]), c->nout > 1 ? em_tensor_data(c->out[1]) : NULL,
                        false, aux, c);
    free(aux);
    em_red_geom_free(&g);
    return st;
}
