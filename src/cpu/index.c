/* The CPU kernel of the indexed loop (Note [Indexed loop] in
 * src/ops/index_plan.h): every gather/scatter style op of ops/index.def but
 * the mask ops runs here. A pass checks every index value first; then rows
 * of the walk are cut into chunks whose dst/src element addresses are
 * computed, and one per-dtype loop applies the mode to the chunk. */
#include "index_walk.h"
#include "../ops/index_plan.h"

#define CHUNK 256

/* Applies the mode to n (dst, src) element pairs. */
typedef void (*apply_fn)(char *const *d, const char *const *s, int64_t n, const em_index_plan *p);

/* ---- per-dtype element loops ------------------------------------------ */
#define COPY(T)                                                                               \
    static void copy_##T(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        (void)p;                                                                              \
        for (int64_t j = 0; j < n; j++) *(T *)d[j] = *(const T *)s[j];                        \
    }
COPY(uint8_t)
COPY(uint16_t)
COPY(uint32_t)
COPY(uint64_t)

/* Integers wrap around like PyTorch's (two's complement): sums and products
 * are computed in uint64 so that C's signed overflow never happens. */
#define INT_LOOPS(DT)                                                                         \
    static void sum_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        uint64_t a = (uint64_t)p->alpha_int;                                                  \
        for (int64_t j = 0; j < n; j++) {                                                     \
            em_##DT##_t *x = (em_##DT##_t *)d[j];                                             \
            *x = (em_##DT##_t)((uint64_t)*x + a * (uint64_t) * (const em_##DT##_t *)s[j]);    \
        }                                                                                     \
    }                                                                                         \
    static void prod_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        (void)p;                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                     \
            em_##DT##_t *x = (em_##DT##_t *)d[j];                                             \
            *x = (em_##DT##_t)((uint64_t)*x * (uint64_t) * (const em_##DT##_t *)s[j]);        \
        }                                                                                     \
    }                                                                                         \
    static void amax_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        (void)p;                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                     \
            em_##DT##_t *x = (em_##DT##_t *)d[j], y = *(const em_##DT##_t *)s[j];             \
            if (y > *x) *x = y;                                                               \
        }                                                                                     \
    }                                                                                         \
    static void amin_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        (void)p;                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                     \
            em_##DT##_t *x = (em_##DT##_t *)d[j], y = *(const em_##DT##_t *)s[j];             \
            if (y < *x) *x = y;                                                               \
        }                                                                                     \
    }
EM_FOR_INTS(INT_LOOPS)

/* Floating types compute in T (float for the half types, through LD/ST).
 * amax/amin: a NaN on either side wins, as in PyTorch. */
#define LD_NATIVE(T, p) (*(const T *)(p))
#define ST_NATIVE(T, p, v) (*(T *)(p) = (v))
#define LD_F16(T, p) em_f16_to_f32(*(const uint16_t *)(p))
#define ST_F16(T, p, v) (*(uint16_t *)(p) = em_f32_to_f16(v))
#define LD_BF16(T, p) em_bf16_to_f32(*(const uint16_t *)(p))
#define ST_BF16(T, p, v) (*(uint16_t *)(p) = em_f32_to_bf16(v))
#define FLOAT_LOOPS(DT, T, LD, ST)                                                            \
    static void sum_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        T a = (T)p->alpha;                                                                    \
        for (int64_t j = 0; j < n; j++) ST(T, d[j], LD(T, d[j]) + a * LD(T, s[j]));           \
    }                                                                                         \
    static void prod_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        (void)p;                                                                              \
        for (int64_t j = 0; j < n; j++) ST(T, d[j], LD(T, d[j]) * LD(T, s[j]));               \
    }                                                                                         \
    static void amax_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        (void)p;                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                     \
            T x = LD(T, d[j]), y = LD(T, s[j]);                                               \
            if (y > x || (y != y && x == x)) ST(T, d[j], y);                                  \
        }                                                                                     \
    }                                                                                         \
    static void amin_##DT(char *const *d, const char *const *s, int64_t n, const em_index_plan *p) \
    {                                                                                         \
        (void)p;                                                                              \
        for (int64_t j = 0; j < n; j++) {                                                     \
            T x = LD(T, d[j]), y = LD(T, s[j]);                                               \
            if (y < x || (y != y && x == x)) ST(T, d[j], y);                                  \
        }                                                                                     \
    }
FLOAT_LOOPS(F32, float, LD_NATIVE, ST_NATIVE)
FLOAT_LOOPS(F64, double, LD_NATIVE, ST_NATIVE)
FLOAT_LOOPS(F16, float, LD_F16, ST_F16)
FLOAT_LOOPS(BF16, float, LD_BF16, ST_BF16)

/* bool: sum and amax are "or", prod and amin "and" */
static void sum_BOOL(char *const *d, const char *const *s, int64_t n, const em_index_plan *p)
{
    bool a = p->alpha_int != 0;
    for (int64_t j = 0; j < n; j++) *(bool *)d[j] = *(bool *)d[j] || (a && *(const bool *)s[j]);
}
static void prod_BOOL(char *const *d, const char *const *s, int64_t n, const em_index_plan *p)
{
    (void)p;
    for (int64_t j = 0; j < n; j++) *(bool *)d[j] = *(bool *)d[j] && *(const bool *)s[j];
}

#define ALL_ENTRIES(op) [EM_U8] = op##_U8, [EM_I8] = op##_I8, [EM_I16] = op##_I16, [EM_I32] = op##_I32, \
    [EM_I64] = op##_I64, [EM_F16] = op##_F16, [EM_F32] = op##_F32, [EM_F64] = op##_F64, [EM_BF16] = op##_BF16
static const apply_fn mode_loops[][EM_DTYPE_COUNT] = {
    [EM_INDEX_SUM] = {ALL_ENTRIES(sum), [EM_BOOL] = sum_BOOL},
    [EM_INDEX_MEAN] = {ALL_ENTRIES(sum)}, /* the sum; counts and the division follow */
    [EM_INDEX_PROD] = {ALL_ENTRIES(prod), [EM_BOOL] = prod_BOOL},
    [EM_INDEX_AMAX] = {ALL_ENTRIES(amax), [EM_BOOL] = sum_BOOL},
    [EM_INDEX_AMIN] = {ALL_ENTRIES(amin), [EM_BOOL] = prod_BOOL},
};

static apply_fn copy_loop(size_t size)
{
    return size == 1 ? copy_uint8_t : size == 2 ? copy_uint16_t : size == 4 ? copy_uint32_t : copy_uint64_t;
}

/* ---- validation ------------------------------------------------------- */
typedef struct check_ctx {
    int64_t lo, hi; /* valid values: [lo, hi) */
    bool bad;
    int64_t value;  /* the first bad value */
} check_ctx;

static void check_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    check_ctx *c = ctx;
    if (c->bad) return;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = *(const int64_t *)(ptrs[0] + i * strides[0]);
        if (v < c->lo || v >= c->hi) {
            c->bad = true;
            c->value = v;
            return;
        }
    }
}

static em_status validate(const em_index_plan *p)
{
    for (int k = 0; k < p->nindex; k++) {
        check_ctx c = {.lo = p->wrap ? -p->bound[k] : 0, .hi = p->bound[k]};
        cpu_walk w;
        cpu_walk_init(&w, 1, &p->check[k]);
        cpu_walk_range(&w, 0, w.numel, check_row, &c);
        if (!c.bad) continue;
        switch (p->msg) {
        case EM_INDEX_MSG_RANGE: return em_fail(p->code, "index out of range in self");
        case EM_INDEX_MSG_FLAT:
            return em_fail(p->code, "out of range: tried to access index %lld on a tensor of %lld elements.",
                           (long long)c.value, (long long)p->bound[k]);
        default:
            return em_fail(p->code, "%sindex %lld is out of bounds for dimension %d with size %lld", p->prefix,
                           (long long)c.value, p->dim[k], (long long)p->bound[k]);
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

/* Byte offset the index tensors add at element i of a row. */
static inline int64_t index_offset(const engine *e, char *const *ptrs, const int64_t *strides, int64_t i)
{
    const em_index_plan *p = e->p;
    int64_t off = 0;
    for (int k = 0; k < p->nindex; k++) {
        int64_t v = *(const int64_t *)(ptrs[2 + k] + i * strides[2 + k]);
        off += (v < 0 ? v + p->bound[k] : v) * e->stride[k]; /* validated: v >= 0 unless wrapping */
    }
    return off;
}

/* Fast path of plain copies with one index tensor (gather, take, scatter,
 * index_put): no address arrays. Agrees with the general path (the tests
 * run both: several index tensors take the general one). */
#define COPY_ONE_INDEX(T)                                                                     \
    static void copy_one_index_##T(const engine *e, char *const *ptrs, const int64_t *st, int64_t n) \
    {                                                                                         \
        const int64_t bound = e->p->bound[0], stride = e->stride[0];                           \
        for (int64_t i = 0; i < n; i++) {                                                     \
            int64_t v = *(const int64_t *)(ptrs[2] + i * st[2]);                              \
            int64_t off = (v < 0 ? v + bound : v) * stride;                                   \
            if (e->p->scatter)                                                                \
                *(T *)(ptrs[0] + i * st[0] + off) = *(const T *)(ptrs[1] + i * st[1]);        \
            else                                                                              \
                *(T *)(ptrs[0] + i * st[0]) = *(const T *)(ptrs[1] + i * st[1] + off);        \
        }                                                                                     \
    }
COPY_ONE_INDEX(uint8_t)
COPY_ONE_INDEX(uint16_t)
COPY_ONE_INDEX(uint32_t)
COPY_ONE_INDEX(uint64_t)

static void engine_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    const engine *e = ctx;
    const em_index_plan *p = e->p;
    bool fixed = true; /* no index moves along the row (index_select, x[i] rows): one offset */
    for (int k = 0; k < p->nindex; k++) fixed &= strides[2 + k] == 0;
    int64_t off = fixed ? index_offset(e, ptrs, strides, 0) : 0;
    bool copy = p->mode == EM_INDEX_ASSIGN && !e->fixed_src;
    if (copy && fixed && strides[0] == e->esize && strides[1] == e->esize) {
        memcpy(ptrs[0] + (p->scatter ? off : 0), ptrs[1] + (p->scatter ? 0 : off), (size_t)(n * e->esize));
        return;
    }
    if (copy && !fixed && p->nindex == 1) {
        switch (e->esize) {
        case 1: copy_one_index_uint8_t(e, ptrs, strides, n); return;
        case 2: copy_one_index_uint16_t(e, ptrs, strides, n); return;
        case 4: copy_one_index_uint32_t(e, ptrs, strides, n); return;
        default: copy_one_index_uint64_t(e, ptrs, strides, n); return;
        }
    }
    char *dp[CHUNK];
    const char *sp[CHUNK];
    for (int64_t done = 0; done < n; done += CHUNK) {
        int64_t m = n - done < CHUNK ? n - done : CHUNK;
        for (int64_t j = 0; j < m; j++) {
            int64_t i = done + j;
            if (!fixed) off = index_offset(e, ptrs, strides, i);
            dp[j] = ptrs[0] + i * strides[0] + (p->scatter ? off : 0);
            sp[j] = e->fixed_src ? e->fixed_src : ptrs[1] + i * strides[1] + (p->scatter ? 0 : off);
        }
        e->fn(dp, sp, m, p);
        if (e->count)
            for (int64_t j = 0; j < m; j++) e->count[(dp[j] - e->base) / e->esize]++;
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
        _Alignas(8) char identity[8];
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
