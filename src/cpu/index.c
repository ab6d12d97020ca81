/* The CPU kernel of the indexed loop (Note [Indexed loop] in
 * src/ops/index_plan.h): every gather/scatter style op of ops/index.def but
 * the mask ops runs here. A pass checks every index value first (on
 * several threads for large indices); then each row of the walk goes to one
 * per-dtype loop that applies the mode: a whole row at one offset when no
 * index moves along it (memcpy or a vectorized loop), else with the index
 * read in the element loop (several indices: summed first, by chunks). */
#include "index_walk.h"
#include "../ops/index_plan.h"

#define CHUNK 256

/* The index values moving along a row: value j is at data + j * step
 * (int64); it moves the indexed operand by value * scale bytes, a negative
 * value first adding `wrap` (the bound when wrapping, else 0: validation
 * ruled negative values out). */
typedef struct row_index {
    const char *data;
    int64_t step, scale, wrap;
} row_index;

static inline int64_t row_offset(const row_index *ix, int64_t j)
{
    int64_t v = *(const int64_t *)(ix->data + j * ix->step);
    return (v < 0 ? v + ix->wrap : v) * ix->scale;
}

/* Applies the mode to n (dst, src) element pairs: pair j is dst at
 * d + j * ds and src at s + j * ss, the indexed one (dst when `scatter`)
 * moved by row_offset(ix, j) unless ix is NULL. dst and src never overlap. */
typedef void (*apply_fn)(char *restrict d, int64_t ds, const char *restrict s, int64_t ss, const row_index *ix,
                         bool scatter, int64_t n, const em_index_plan *p);

/* One apply_fn: storage type S computed in C (float for the half types)
 * through LD/ST, SETUP(C) once, then ELEM(S, C, LD, ST, x, y) on each pair
 * (S *x, const S *y). Contiguous pairs get their own loop, so that the
 * compiler vectorizes it (the fixed rows of index_select/index_add). */
#define APPLY_FN(name, S, C, LD, ST, SETUP, ELEM)                                                          \
    EM_SIMD static void name(char *restrict d, int64_t ds, const char *restrict s, int64_t ss, const row_index *ix, \
                     bool scatter, int64_t n, const em_index_plan *p)                                      \
    {                                                                                                      \
        SETUP(C);                                                                                          \
        const row_index r = ix ? *ix : (row_index){0};                                                     \
        if (ix && scatter) {                                                                               \
            for (int64_t j = 0; j < n; j++)                                                                \
                ELEM(S, C, LD, ST, ((S *)(d + j * ds + row_offset(&r, j))), ((const S *)(s + j * ss)));    \
        } else if (ix && ds == (int64_t)sizeof(S) && r.step == (int64_t)sizeof(int64_t)) { /* gathers */  \
            S *restrict dv = (S *)d;                                                                       \
            const S *restrict sv = (const S *)s;                                                           \
            const int64_t *iv = (const int64_t *)r.data;                                                   \
            int64_t sstep = ss / (int64_t)sizeof(S), scale = r.scale / (int64_t)sizeof(S);                 \
            for (int64_t j = 0; j < n; j++)                                                                \
                ELEM(S, C, LD, ST, (dv + j), (sv + j * sstep + (iv[j] + (iv[j] < 0 ? r.wrap : 0)) * scale)); \
        } else if (ix) {                                                                                   \
            for (int64_t j = 0; j < n; j++)                                                                \
                ELEM(S, C, LD, ST, ((S *)(d + j * ds)), ((const S *)(s + j * ss + row_offset(&r, j))));    \
        } else if (ds == (int64_t)sizeof(S) && ss == (int64_t)sizeof(S)) {                                 \
            S *restrict dv = (S *)d;                                                                       \
            const S *restrict sv = (const S *)s;                                                           \
            for (int64_t j = 0; j < n; j++) ELEM(S, C, LD, ST, (dv + j), (sv + j));                        \
        } else {                                                                                           \
            for (int64_t j = 0; j < n; j++) ELEM(S, C, LD, ST, ((S *)(d + j * ds)), ((const S *)(s + j * ss))); \
        }                                                                                                  \
    }

/* ---- the element rules ------------------------------------------------ */
#define NO_SETUP(C) (void)p
#define LD_ID(v) (v)
#define ST_ID(v) (v)
#define COPY_ELEM(S, C, LD, ST, x, y) (*(x) = *(y))
/* Integers wrap around like PyTorch's (two's complement): sums and products
 * are computed in uint64 so that C's signed overflow never happens. */
#define INT_SETUP(C) uint64_t a = (uint64_t)p->alpha_int
#define SUM_INT(S, C, LD, ST, x, y) (*(x) = (S)((uint64_t) * (x) + a * (uint64_t) * (y)))
#define PROD_INT(S, C, LD, ST, x, y) (*(x) = (S)((uint64_t) * (x) * (uint64_t) * (y)))
#define AMAX_INT(S, C, LD, ST, x, y) (*(x) = *(y) > *(x) ? *(y) : *(x))
#define AMIN_INT(S, C, LD, ST, x, y) (*(x) = *(y) < *(x) ? *(y) : *(x))
/* Floats: amax/amin let a NaN on either side win, as in PyTorch (and store
 * only on change, so that the half types never rewrite a value). */
#define FLOAT_SETUP(C) C a = (C)p->alpha
#define SUM_FLOAT(S, C, LD, ST, x, y) (*(x) = ST(LD(*(x)) + a * LD(*(y))))
#define PROD_FLOAT(S, C, LD, ST, x, y) (*(x) = ST(LD(*(x)) * LD(*(y))))
#define PICK_FLOAT(S, C, LD, ST, x, y, CMP)                    \
    do {                                                       \
        C x_ = LD(*(x)), y_ = LD(*(y));                        \
        if (y_ CMP x_ || (y_ != y_ && x_ == x_)) *(x) = *(y);  \
    } while (0)
#define AMAX_FLOAT(S, C, LD, ST, x, y) PICK_FLOAT(S, C, LD, ST, x, y, >)
#define AMIN_FLOAT(S, C, LD, ST, x, y) PICK_FLOAT(S, C, LD, ST, x, y, <)
/* bool: sum and amax are "or", prod and amin "and" */
#define BOOL_SETUP(C) bool a = p->alpha_int != 0
#define SUM_BOOL_ELEM(S, C, LD, ST, x, y) (*(x) = *(x) || (a && *(y)))
#define PROD_BOOL_ELEM(S, C, LD, ST, x, y) (*(x) = *(x) && *(y))

APPLY_FN(copy_1, uint8_t, uint8_t, LD_ID, ST_ID, NO_SETUP, COPY_ELEM)
APPLY_FN(copy_2, uint16_t, uint16_t, LD_ID, ST_ID, NO_SETUP, COPY_ELEM)
APPLY_FN(copy_4, uint32_t, uint32_t, LD_ID, ST_ID, NO_SETUP, COPY_ELEM)
APPLY_FN(copy_8, uint64_t, uint64_t, LD_ID, ST_ID, NO_SETUP, COPY_ELEM)
typedef struct bytes16 { uint64_t w[2]; } bytes16; /* complex128 */
APPLY_FN(copy_16, bytes16, bytes16, LD_ID, ST_ID, NO_SETUP, COPY_ELEM)

#define INT_LOOPS(DT)                                                                  \
    APPLY_FN(sum_##DT, em_##DT##_t, em_##DT##_t, LD_ID, ST_ID, INT_SETUP, SUM_INT)     \
    APPLY_FN(prod_##DT, em_##DT##_t, em_##DT##_t, LD_ID, ST_ID, NO_SETUP, PROD_INT)    \
    APPLY_FN(amax_##DT, em_##DT##_t, em_##DT##_t, LD_ID, ST_ID, NO_SETUP, AMAX_INT)    \
    APPLY_FN(amin_##DT, em_##DT##_t, em_##DT##_t, LD_ID, ST_ID, NO_SETUP, AMIN_INT)
EM_FOR_INTS(INT_LOOPS)

#define LD_F16(v) em_f16_to_f32(v)
#define ST_F16(v) em_f32_to_f16(v)
#define LD_BF16(v) em_bf16_to_f32(v)
#define ST_BF16(v) em_f32_to_bf16(v)
#define FLOAT_LOOPS(DT, S, C, LD, ST)                                   \
    APPLY_FN(sum_##DT, S, C, LD, ST, FLOAT_SETUP, SUM_FLOAT)            \
    APPLY_FN(prod_##DT, S, C, LD, ST, NO_SETUP, PROD_FLOAT)             \
    APPLY_FN(amax_##DT, S, C, LD, ST, NO_SETUP, AMAX_FLOAT)             \
    APPLY_FN(amin_##DT, S, C, LD, ST, NO_SETUP, AMIN_FLOAT)
FLOAT_LOOPS(F32, float, float, LD_ID, ST_ID)
FLOAT_LOOPS(F64, double, double, LD_ID, ST_ID)
FLOAT_LOOPS(F16, uint16_t, float, LD_F16, ST_F16)
FLOAT_LOOPS(BF16, uint16_t, float, LD_BF16, ST_BF16)

/* complex: sums only (accumulating index_put/put: complex gradients) */
APPLY_FN(sum_C64, float _Complex, float _Complex, LD_ID, ST_ID, FLOAT_SETUP, SUM_FLOAT)
APPLY_FN(sum_C128, double _Complex, double _Complex, LD_ID, ST_ID, FLOAT_SETUP, SUM_FLOAT)
APPLY_FN(sum_BOOL, bool, bool, LD_ID, ST_ID, BOOL_SETUP, SUM_BOOL_ELEM)
APPLY_FN(prod_BOOL, bool, bool, LD_ID, ST_ID, NO_SETUP, PROD_BOOL_ELEM)

#define ALL_ENTRIES(op) [EM_U8] = op##_U8, [EM_I8] = op##_I8, [EM_I16] = op##_I16, [EM_I32] = op##_I32, \
    [EM_I64] = op##_I64, [EM_F16] = op##_F16, [EM_F32] = op##_F32, [EM_F64] = op##_F64, [EM_BF16] = op##_BF16
static const apply_fn mode_loops[][EM_DTYPE_COUNT] = {
    [EM_INDEX_SUM] = {ALL_ENTRIES(sum), [EM_BOOL] = sum_BOOL, [EM_C64] = sum_C64, [EM_C128] = sum_C128},
    [EM_INDEX_MEAN] = {ALL_ENTRIES(sum)}, /* the sum; counts and the division follow */
    [EM_INDEX_PROD] = {ALL_ENTRIES(prod), [EM_BOOL] = prod_BOOL},
    [EM_INDEX_AMAX] = {ALL_ENTRIES(amax), [EM_BOOL] = sum_BOOL},
    [EM_INDEX_AMIN] = {ALL_ENTRIES(amin), [EM_BOOL] = prod_BOOL},
};

static apply_fn copy_loop(size_t size)
{
    return size == 1 ? copy_1 : size == 2 ? copy_2 : size == 4 ? copy_4 : size == 8 ? copy_8 : copy_16;
}

/* ---- validation ------------------------------------------------------- */
typedef struct check_ctx {
    int64_t lo, hi; /* valid values: [lo, hi) */
    bool bad;
    int64_t value;  /* the first bad value */
} check_ctx;

/* Whether every v[i] lies in [lo, hi): branch-free, so it vectorizes. */
EM_SIMD static bool all_in_range(const int64_t *v, int64_t n, int64_t lo, int64_t hi)
{
    int64_t min = INT64_MAX, max = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        min = v[i] < min ? v[i] : min;
        max = v[i] > max ? v[i] : max;
    }
    return n == 0 || (min >= lo && max < hi);
}

static void check_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    check_ctx *c = ctx;
    if (c->bad) return;
    if (strides[0] == sizeof(int64_t) && all_in_range((const int64_t *)ptrs[0], n, c->lo, c->hi)) return;
    for (int64_t i = 0; i < n; i++) { /* find the first bad value */
        int64_t v = *(const int64_t *)(ptrs[0] + i * strides[0]);
        if (v < c->lo || v >= c->hi) {
            c->bad = true;
            c->value = v;
            return;
        }
    }
}

#define CHECK_MAX_CHUNKS 64

typedef struct check_job {
    const cpu_walk *w;
    int64_t nchunks;
    check_ctx *c; /* one per chunk */
} check_job;

static void check_chunk(void *ctx, int64_t k)
{
    const check_job *j = ctx;
    int64_t b, e;
    em_parallel_range(j->w->numel, j->nchunks, 1, k, &b, &e);
    if (b < e) cpu_walk_range(j->w, b, e, check_row, &j->c[k]);
}

/* Whether index k holds a bad value; *value: the first one. Large indices
 * are split over threads (read only), each chunk keeping its first. */
static bool find_bad(const em_index_plan *p, int k, int64_t *value)
{
    cpu_walk w;
    cpu_walk_init(&w, 1, &p->check[k]);
    int64_t nchunks = em_parallel_chunks(w.numel, EM_GRAIN_GATHER);
    if (nchunks > CHECK_MAX_CHUNKS) nchunks = CHECK_MAX_CHUNKS;
    check_ctx c[CHECK_MAX_CHUNKS];
    for (int64_t t = 0; t < nchunks; t++) c[t] = (check_ctx){.lo = p->wrap ? -p->bound[k] : 0, .hi = p->bound[k]};
    check_job j = {.w = &w, .nchunks = nchunks, .c = c};
    em_parallel_run(nchunks, check_chunk, &j);
    for (int64_t t = 0; t < nchunks; t++) {
        if (c[t].bad) {
            *value = c[t].value;
            return true;
        }
    }
    return false;
}

static em_status validate(const em_index_plan *p)
{
    for (int k = 0; k < p->nindex; k++) {
        int64_t value;
        if (!find_bad(p, k, &value)) continue;
        switch (p->msg) {
        case EM_INDEX_MSG_RANGE: return em_fail(p->code, "index out of range in self");
        case EM_INDEX_MSG_FLAT:
            return em_fail(p->code, "out of range: tried to access index %lld on a tensor of %lld elements.",
                           (long long)value, (long long)p->bound[k]);
        default:
            return em_fail(p->code, "%sindex %lld is out of bounds for dimension %d with size %lld", p->prefix,
                           (long long)value, p->dim[k], (long long)p->bound[k]);
        }
    }
    return EM_OK;
}

/* ---- the loop --------------------------------------------------------- */
typedef struct engine {
    const em_index_plan *p;
    apply_fn fn;
    int64_t stride[EM_MAX_DIMS]; /* bytes of the indexed operand per unit of index k */
    const char *fixed_src;       /* when set, every src element reads this value */
    int64_t *count;              /* EM_INDEX_MEAN's per-element counts, indexed like base */
    const char *base;            /* base's first element */
    int64_t esize;
} engine;

/* The row_index of index k along a row. */
static row_index index_of_row(const engine *e, char *const *ptrs, const int64_t *strides, int k)
{
    const em_index_plan *p = e->p;
    return (row_index){ptrs[2 + k], strides[2 + k], e->stride[k], p->wrap ? p->bound[k] : 0};
}

/* EM_INDEX_MEAN: one more value reduced into each of the m dst elements. */
static void count_row(const engine *e, const char *d, int64_t ds, const row_index *ix, int64_t m)
{
    for (int64_t j = 0; j < m; j++) e->count[(d + j * ds + (ix ? row_offset(ix, j) : 0) - e->base) / e->esize]++;
}

/* One run of the walk: when no index moves along it (index_select,
 * index_add, x[i] rows) the whole run is one strided (often contiguous)
 * row at one offset; one moving index (gather, scatter, take) is read in
 * the element loop; several are first summed into chunks of offsets. */
static void engine_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    const engine *e = ctx;
    const em_index_plan *p = e->p;
    bool fixed = true;
    for (int k = 0; k < p->nindex; k++) fixed &= strides[2 + k] == 0;
    char *d = ptrs[0];
    const char *s = e->fixed_src ? e->fixed_src : ptrs[1];
    int64_t ds = strides[0], ss = e->fixed_src ? 0 : strides[1];
    if (fixed) {
        int64_t off = 0;
        for (int k = 0; k < p->nindex; k++) {
            row_index ix = index_of_row(e, ptrs, strides, k);
            off += row_offset(&ix, 0);
        }
        if (p->scatter) d += off;
        else s += off;
        if (p->mode == EM_INDEX_ASSIGN && ds == e->esize && ss == e->esize) {
            memcpy(d, s, (size_t)(n * e->esize));
            return;
        }
        e->fn(d, ds, s, ss, NULL, p->scatter, n, p);
        if (e->count) count_row(e, d, ds, NULL, n);
        return;
    }
    if (p->nindex == 1) {
        row_index ix = index_of_row(e, ptrs, strides, 0);
        e->fn(d, ds, s, ss, &ix, p->scatter, n, p);
        if (e->count) count_row(e, d, ds, &ix, n);
        return;
    }
    int64_t off[CHUNK];
    row_index sum = {(const char *)off, sizeof *off, e->esize, 0}; /* off in elements */
    for (int64_t done = 0; done < n; done += CHUNK) {
        int64_t m = n - done < CHUNK ? n - done : CHUNK;
        for (int64_t j = 0; j < m; j++) off[j] = 0;
        for (int k = 0; k < p->nindex; k++) {
            row_index ix = index_of_row(e, ptrs, strides, k);
            ix.data += done * ix.step;
            ix.scale /= e->esize;
            for (int64_t j = 0; j < m; j++) off[j] += row_offset(&ix, j);
        }
        char *dc = d + done * ds;
        const char *sc = s + done * ss;
        e->fn(dc, ds, sc, ss, &sum, p->scatter, m, p);
        if (e->count) count_row(e, dc, ds, p->scatter ? &sum : NULL, m);
    }
}

/* The value include_self=false starts each target from (the mode's identity). */
static void identity_of(em_index_mode mode, em_dtype dt, char *out)
{
    bool hi = mode == EM_INDEX_AMIN;
    double v = mode == EM_INDEX_PROD ? 1 : 0;
    if (mode == EM_INDEX_AMAX || mode == EM_INDEX_AMIN) {
        int bits = (int)em_dtypes[dt].size * 8;
        if (em_dtype_is_float(dt)) v = hi ? INFINITY : -INFINITY;
        else if (dt == EM_BOOL) v = hi;
        else if (em_dtype_is_signed(dt)) v = hi ? ldexp(1, bits - 1) - 1 : -ldexp(1, bits - 1);
        else v = hi ? ldexp(1, bits) - 1 : 0; /* int64's max rounds up in double; the store clamps it */
    }
    em_store_f64(out, dt, v);
}

/* EM_INDEX_MEAN's last step: base[i] /= count[i] + include_self (floor for
 * integers), where that is positive. */
static void divide_by_counts(const em_index_plan *p, const int64_t *count)
{
    em_tensor *base = p->base;
    em_dtype dt = (em_dtype)base->dtype;
    char *data = em_tensor_data(base);
    size_t es = em_dtypes[dt].size;
    for (int64_t i = 0, n = em_numel(base); i < n; i++) {
        int64_t div = count[i] + (p->include_self ? 1 : 0);
        if (div <= 1) continue;
        char *x = data + i * es;
        if (em_dtype_is_float(dt)) {
            em_store_f64(x, dt, em_load_f64(x, dt) / (double)div);
        } else {
            int64_t a = dt == EM_I64 ? *(const int64_t *)x : (int64_t)em_load_f64(x, dt);
            int64_t q = a / div - (a % div != 0 && a < 0);
            if (dt == EM_I64) *(int64_t *)x = q;
            else em_store_f64(x, dt, (double)q);
        }
    }
}

static em_status index_loop(const em_call *c)
{
    const em_index_plan *p = c->arg;
    const em_tensor *ops[CPU_WALK_MAX_OPS] = {c->out[0], c->in[0]};
    for (int k = 0; k < p->nindex; k++) ops[2 + k] = p->index[k];
    cpu_walk w;
    cpu_walk_init(&w, 2 + p->nindex, ops);
    if ((w.numel || p->check_empty) && validate(p)) return em_error_code();
    if (w.numel == 0) return EM_OK;
    em_dtype dt = (em_dtype)c->out[0]->dtype;
    engine e = {.p = p, .esize = (int64_t)em_dtypes[dt].size};
    for (int k = 0; k < p->nindex; k++) e.stride[k] = p->stride[k] * e.esize;
    apply_fn fn = p->mode == EM_INDEX_ASSIGN ? copy_loop(em_dtypes[dt].size) : mode_loops[p->mode][dt];
    if (!fn) return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", em_ops[c->op].name, em_dtypes[dt].name);
    if (!p->include_self && p->mode != EM_INDEX_ASSIGN) { /* targets start from the identity */
        _Alignas(16) char identity[EM_MAX_ITEMSIZE];
        identity_of(p->mode, dt, identity);
        e.fn = copy_loop(em_dtypes[dt].size);
        e.fixed_src = identity;
        cpu_walk_run(&w, false, engine_row, &e);
        e.fixed_src = NULL;
    }
    e.fn = fn;
    if (p->mode == EM_INDEX_MEAN) {
        e.count = (int64_t *)em_tensor_data(p->count);
        e.base = em_tensor_data(p->base);
    }
    /* Only gathers write where the walk is (one writer per element): threads */
    cpu_walk_run(&w, !p->scatter, engine_row, &e);
    if (p->mode == EM_INDEX_MEAN) divide_by_counts(p, e.count);
    return EM_OK;
}

#define INDEX_KERNEL(op) \
    em_status cpu_##op(const em_call *c) { return index_loop(c); }
INDEX_KERNEL(index_select)
INDEX_KERNEL(gather)
INDEX_KERNEL(scatter)
INDEX_KERNEL(scatter_add)
INDEX_KERNEL(scatter_reduce)
INDEX_KERNEL(index_add)
INDEX_KERNEL(index_copy)
INDEX_KERNEL(index_fill)
INDEX_KERNEL(take)
INDEX_KERNEL(put)
INDEX_KERNEL(index)
INDEX_KERNEL(index_put)
