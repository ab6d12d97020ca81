/* CPU kernels of the mask ops and nonzero (src/ops/mask.c). masked_fill is
 * pointwise (the shared runner); the others walk in row-major order on one
 * thread, and masked_select and nonzero first count, then size their output. */
#include "index_walk.h"

/* ---- masked_fill: out[0] = in[1] (a 0-d value) where in[0] (read as bool) */
#define MASKED_FILL(T)                                                                         \
    static void masked_fill_##T(char **d, const int64_t *s, int64_t n, const em_call *c)     \
    {                                                                                          \
        (void)c;                                                                               \
        const T v = *(const T *)d[2];                                                          \
        for (int64_t i = 0; i < n; i++)                                                        \
            if (*(const bool *)(d[1] + i * s[1])) *(T *)(d[0] + i * s[0]) = v;                 \
    }
MASKED_FILL(uint8_t)
MASKED_FILL(uint16_t)
MASKED_FILL(uint32_t)
MASKED_FILL(uint64_t)
typedef struct { uint64_t lo, hi; } bytes16;
MASKED_FILL(bytes16)
static const em_loop_fn masked_fill_loops[EM_DTYPE_COUNT] = {
    [EM_C32] = masked_fill_uint32_t,  [EM_C64] = masked_fill_uint64_t, [EM_C128] = masked_fill_bytes16,
    [EM_U8] = masked_fill_uint8_t,    [EM_I8] = masked_fill_uint8_t,   [EM_BOOL] = masked_fill_uint8_t,
    [EM_I16] = masked_fill_uint16_t,  [EM_F16] = masked_fill_uint16_t, [EM_BF16] = masked_fill_uint16_t,
    [EM_I32] = masked_fill_uint32_t,  [EM_F32] = masked_fill_uint32_t,
    [EM_I64] = masked_fill_uint64_t,  [EM_F64] = masked_fill_uint64_t,
};
em_status cpu_masked_fill(const em_call *c) { return cpu_pointwise(c, masked_fill_loops); }

/* ---- counting the true entries of a bool/uint8 mask ------------------- */
static void count_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    int64_t *count = ctx;
    for (int64_t i = 0; i < n; i++) *count += *(const uint8_t *)(ptrs[0] + i * strides[0]) != 0;
}

static int64_t count_true(const em_tensor *mask)
{
    cpu_walk w;
    int64_t count = 0;
    cpu_walk_init(&w, 1, &mask);
    cpu_walk_range(&w, 0, w.numel, count_row, &count);
    return count;
}

/* A cursor moving through a contiguous buffer of esize-byte elements. */
typedef struct cursor {
    char *p;
    size_t esize;
} cursor;

/* ---- masked_select: out[0] = in[0][in[1]] ----------------------------- */
static void select_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    cursor *out = ctx;
    for (int64_t i = 0; i < n; i++) {
        if (!*(const uint8_t *)(ptrs[1] + i * strides[1])) continue;
        memcpy(out->p, ptrs[0] + i * strides[0], out->esize);
        out->p += out->esize;
    }
}

em_status cpu_masked_select(const em_call *c)
{
    em_tensor *out = c->out[0];
    int64_t n = count_true(c->in[1]);
    if (em_resize_(out, 1, &n)) return em_error_code();
    cursor cur = {em_tensor_data(out), em_dtypes[out->dtype].size};
    cpu_walk w;
    cpu_walk_init(&w, 2, c->in);
    cpu_walk_range(&w, 0, w.numel, select_row, &cur);
    return EM_OK;
}

/* ---- masked_scatter: out[0][in[0]] = in[1] (contiguous), in order ----- */
static void scatter_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    cursor *src = ctx;
    for (int64_t i = 0; i < n; i++) {
        if (!*(const uint8_t *)(ptrs[1] + i * strides[1])) continue;
        memcpy(ptrs[0] + i * strides[0], src->p, src->esize);
        src->p += src->esize;
    }
}

em_status cpu_masked_scatter(const em_call *c)
{
    em_tensor *self = c->out[0];
    const em_tensor *mask = c->in[0], *source = c->in[1];
    int64_t n = count_true(mask);
    if (n > em_numel(source))
        return em_fail(EM_ERR_RUNTIME, "masked_scatter: Number of elements of source < number of ones in mask "
                       "(%lld < %lld)", (long long)em_numel(source), (long long)n);
    cursor cur = {em_tensor_data(source), em_dtypes[source->dtype].size};
    const em_tensor *ops[] = {self, mask};
    cpu_walk w;
    cpu_walk_init(&w, 2, ops);
    cpu_walk_range(&w, 0, w.numel, scatter_row, &cur);
    return EM_OK;
}

/* ---- nonzero ---------------------------------------------------------- */
/* An element is nonzero when any bit but a float's sign bit is set (so -0.0
 * is zero and NaN is not). */
static uint64_t value_bits(em_dtype dt)
{
    size_t size = em_dtypes[dt].size;
    uint64_t all = size == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (size * 8)) - 1;
    return em_dtype_is_float(dt) ? all >> 1 : all;
}

static inline bool is_nonzero(const char *p, size_t size, uint64_t bits)
{
    uint64_t v = size == 1 ? *(const uint8_t *)p : size == 2 ? *(const uint16_t *)p
               : size == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
    return (v & bits) != 0;
}

typedef struct nonzero_ctx {
    size_t size;
    uint64_t bits;
    int64_t count;
} nonzero_ctx;

static void nonzero_count_row(void *ctx, char **ptrs, const int64_t *strides, int64_t n)
{
    nonzero_ctx *c = ctx;
    for (int64_t i = 0; i < n; i++) c->count += is_nonzero(ptrs[0] + i * strides[0], c->size, c->bits);
}

em_status cpu_nonzero(const em_call *c)
{
    const em_tensor *t = c->in[0];
    em_tensor *out = c->out[0];
    nonzero_ctx nc = {em_dtypes[t->dtype].size, value_bits((em_dtype)t->dtype), 0};
    cpu_walk w;
    cpu_walk_init(&w, 1, &t);
    cpu_walk_range(&w, 0, w.numel, nonzero_count_row, &nc);
    int nd = t->ndim;
    if (em_resize_(out, 2, (const int64_t[]){nc.count, nd})) return em_error_code();
    if (nd == 0 || nc.count == 0) return EM_OK;
    /* coordinates: an odometer over the outer dims, a scan of the inner one */
    int64_t *o = (int64_t *)em_tensor_data(out), coord[EM_MAX_DIMS] = {0};
    int64_t inner = t->sizes[nd - 1], step = t->strides[nd - 1] * (int64_t)nc.size;
    for (int64_t row = 0, rows = em_numel(t) / inner; row < rows; row++) {
        const char *p = em_tensor_data(t);
        for (int d = 0; d < nd - 1; d++) p += coord[d] * t->strides[d] * (int64_t)nc.size;
        for (int64_t j = 0; j < inner; j++) {
            if (!is_nonzero(p + j * step, nc.size, nc.bits)) continue;
            memcpy(o, coord, (nd - 1) * sizeof *o);
            o[nd - 1] = j;
            o += nd;
        }
        for (int d = nd - 2; d >= 0 && ++coord[d] == t->sizes[d]; d--) coord[d] = 0;
    }
    return EM_OK;
}
