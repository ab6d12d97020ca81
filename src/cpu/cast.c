/* Dtype conversion loops for every (dst, src) pair, and the copy and fill
 * kernels built on them. Half types convert through float32. */
#include "cpu.h"

/* Loads and stores through float for the half types, plain C casts otherwise.
 * Float -> integer casts of out-of-range values are undefined in C; they are
 * clamped to int64 first (PyTorch's result there is unspecified too). */
#define LOAD_U8(p) (*(const uint8_t *)(p))
#define LOAD_I8(p) (*(const int8_t *)(p))
#define LOAD_I16(p) (*(const int16_t *)(p))
#define LOAD_I32(p) (*(const int32_t *)(p))
#define LOAD_I64(p) (*(const int64_t *)(p))
#define LOAD_F16(p) em_f16_to_f32(*(const uint16_t *)(p))
#define LOAD_F32(p) (*(const float *)(p))
#define LOAD_F64(p) (*(const double *)(p))
#define LOAD_BOOL(p) (*(const bool *)(p))
#define LOAD_BF16(p) em_bf16_to_f32(*(const uint16_t *)(p))

static inline int64_t to_i64(double v)
{
    if (!(v == v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}
#define IS_FLOAT_U8 0
#define IS_FLOAT_I8 0
#define IS_FLOAT_I16 0
#define IS_FLOAT_I32 0
#define IS_FLOAT_I64 0
#define IS_FLOAT_BOOL 0
#define IS_FLOAT_F16 1
#define IS_FLOAT_F32 1
#define IS_FLOAT_F64 1
#define IS_FLOAT_BF16 1
/* integer destination: via int64 (clamped) when the source is floating */
#define INT_VAL(SRC, v) (IS_FLOAT_##SRC ? to_i64((double)(v)) : (int64_t)(v))
#define STORE_U8(p, v, SRC) (*(uint8_t *)(p) = (uint8_t)INT_VAL(SRC, v))
#define STORE_I8(p, v, SRC) (*(int8_t *)(p) = (int8_t)INT_VAL(SRC, v))
#define STORE_I16(p, v, SRC) (*(int16_t *)(p) = (int16_t)INT_VAL(SRC, v))
#define STORE_I32(p, v, SRC) (*(int32_t *)(p) = (int32_t)INT_VAL(SRC, v))
#define STORE_I64(p, v, SRC) (*(int64_t *)(p) = INT_VAL(SRC, v))
#define STORE_F16(p, v, SRC) (*(uint16_t *)(p) = em_f32_to_f16((float)(v)))
#define STORE_F32(p, v, SRC) (*(float *)(p) = (float)(v))
#define STORE_F64(p, v, SRC) (*(double *)(p) = (double)(v))
#define STORE_BOOL(p, v, SRC) (*(bool *)(p) = (v) != 0)
#define STORE_BF16(p, v, SRC) (*(uint16_t *)(p) = em_f32_to_bf16((float)(v)))

#define CAST_FN(D, S)                                                                                 \
    EM_SIMD static void cast_##D##_##S(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n) \
    {                                                                                                 \
        for (int64_t i = 0; i < n; i++) STORE_##D(dst + i * ds, LOAD_##S(src + i * ss), S);           \
    }
#define CAST_ROW(S) CAST_FN(U8, S) CAST_FN(I8, S) CAST_FN(I16, S) CAST_FN(I32, S) CAST_FN(I64, S) \
    CAST_FN(F16, S) CAST_FN(F32, S) CAST_FN(F64, S) CAST_FN(BOOL, S) CAST_FN(BF16, S)
CAST_ROW(U8) CAST_ROW(I8) CAST_ROW(I16) CAST_ROW(I32) CAST_ROW(I64)
CAST_ROW(F16) CAST_ROW(F32) CAST_ROW(F64) CAST_ROW(BOOL) CAST_ROW(BF16)

#define CAST_ENTRY(D, S) [EM_##S] = cast_##D##_##S,
#define CAST_TABLE_ROW(D) [EM_##D] = {CAST_ENTRY(D, U8) CAST_ENTRY(D, I8) CAST_ENTRY(D, I16) CAST_ENTRY(D, I32) \
    CAST_ENTRY(D, I64) CAST_ENTRY(D, F16) CAST_ENTRY(D, F32) CAST_ENTRY(D, F64) CAST_ENTRY(D, BOOL) CAST_ENTRY(D, BF16)},
const em_cast_fn em_cast_table[EM_DTYPE_COUNT][EM_DTYPE_COUNT] = {
    CAST_TABLE_ROW(U8) CAST_TABLE_ROW(I8) CAST_TABLE_ROW(I16) CAST_TABLE_ROW(I32) CAST_TABLE_ROW(I64)
    CAST_TABLE_ROW(F16) CAST_TABLE_ROW(F32) CAST_TABLE_ROW(F64) CAST_TABLE_ROW(BOOL) CAST_TABLE_ROW(BF16)
};

/* copy: out[0] = in[0] broadcast to out's shape. The runner's conversion
 * does the dtype change, so the loop itself is a plain element copy by size. */
#define COPY_LOOP(DT) EM_UNARY_LOOP(copy_##DT, em_##DT##_t, em_##DT##_t, a)
EM_FOR_ALL(COPY_LOOP)
static void copy_half(char **d, const int64_t *s, int64_t n, const em_call *c)
{
    (void)c;
    for (int64_t i = 0; i < n; i++) *(uint16_t *)(d[0] + i * s[0]) = *(const uint16_t *)(d[1] + i * s[1]);
}
#define LOOP_ENTRY(DT) [EM_##DT] = copy_##DT,
static const em_loop_fn copy_loops[EM_DTYPE_COUNT] = {EM_FOR_ALL(LOOP_ENTRY)[EM_F16] = copy_half, [EM_BF16] = copy_half};

em_status cpu_copy(const em_call *c) { return cpu_pointwise(c, copy_loops); }

/* A contiguous fill as a store loop of the element's width: the copy loop's
 * stride-0 read does not vectorize (ones_like of 1e5 floats: 76 us vs 8). */
typedef struct fill_job {
    char *d;
    size_t size;
    char one[8];
} fill_job;

#define FILL_AS(T)                                                                   \
    do {                                                                             \
        T v, *p = (T *)j->d;                                                         \
        memcpy(&v, j->one, sizeof v);                                                \
        for (int64_t i = begin; i < end; i++) p[i] = v;                              \
    } while (0)
EM_SIMD static void fill_range(void *ctx, int64_t begin, int64_t end)
{
    const fill_job *j = ctx;
    switch (j->size) {
    case 1: memset(j->d + begin, j->one[0], (size_t)(end - begin)); break;
    case 2: FILL_AS(uint16_t); break;
    case 4: FILL_AS(uint32_t); break;
    default: FILL_AS(uint64_t); break;
    }
}
#undef FILL_AS

static void fill_contiguous(char *d, int64_t n, size_t size, const char *one)
{
    fill_job j = {.d = d, .size = size};
    memcpy(j.one, one, size);
    em_parallel_for(n, 1, EM_GRAIN_STORE, fill_range, &j);
}

/* fill: every element of out[0] = c->f[0] (c->i[0] for int64, exact). */
em_status cpu_fill(const em_call *c)
{
    em_tensor *t = c->out[0];
    char one[8];
    if (t->dtype == EM_I64)
        memcpy(one, &c->i[0], 8);
    else
        em_store_f64(one, (em_dtype)t->dtype, c->f[0]);
    if (em_is_contiguous(t)) {
        fill_contiguous(em_tensor_data(t), em_numel(t), em_dtypes[t->dtype].size, one);
        return EM_OK;
    }
    em_tensor *src = em_from_data(one, 0, NULL, (em_dtype)t->dtype);
    if (!src) return em_error_code();
    em_call cc = *c;
    cc.in[0] = src;
    cc.nin = 1;
    cc.dtype = (em_dtype)t->dtype;
    cc.operand_dtypes[0] = cc.operand_dtypes[1] = t->dtype;
    em_status st = cpu_pointwise(&cc, copy_loops);
    em_release(src);
    return st;
}
