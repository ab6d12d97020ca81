/* Dtype conversion loops for every (dst, src) pair, and the copy and fill
 * kernels built on them. Half types convert through float32. */
#include "cpu.h"
#include <complex.h>

/* Loads and stores through float for the half types, plain C casts otherwise.
 * Float -> integer casts of out-of-range values are undefined in C; they are
 * clamped to int64 first (PyTorch's result there is unspecified too). C's
 * casts give PyTorch's complex conversions: complex -> real keeps the real
 * part, complex -> bool tests both parts, real -> complex has imag 0. */
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
#define LOAD_C32(p) load_c32(p)
#define LOAD_C64(p) (*(const float _Complex *)(p))
#define LOAD_C128(p) (*(const double _Complex *)(p))

static inline float _Complex load_c32(const char *p)
{
    const uint16_t *h = (const uint16_t *)p;
    return CMPLXF(em_f16_to_f32(h[0]), em_f16_to_f32(h[1]));
}
static inline void store_c32(char *p, float _Complex v)
{
    uint16_t *h = (uint16_t *)p;
    h[0] = em_f32_to_f16(crealf(v)), h[1] = em_f32_to_f16(cimagf(v));
}

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
#define IS_FLOAT_C32 1
#define IS_FLOAT_C64 1
#define IS_FLOAT_C128 1
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
#define STORE_C32(p, v, SRC) store_c32((p), (float _Complex)(v))
#define STORE_C64(p, v, SRC) (*(float _Complex *)(p) = (float _Complex)(v))
#define STORE_C128(p, v, SRC) (*(double _Complex *)(p) = (double _Complex)(v))

#define CAST_FN(D, S)                                                                                 \
    EM_SIMD static void cast_##D##_##S(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n) \
    {                                                                                                 \
        for (int64_t i = 0; i < n; i++) STORE_##D(dst + i * ds, LOAD_##S(src + i * ss), S);           \
    }
/* Every dtype, for the table's rows and its columns: two copies of one list,
 * since a macro cannot expand itself inside its own expansion. */
#define CAST_ROWS(M) M(U8) M(I8) M(I16) M(I32) M(I64) M(F16) M(F32) M(F64) M(BOOL) M(BF16) M(C32) M(C64) M(C128)
#define CAST_COLS(M, D) M(D, U8) M(D, I8) M(D, I16) M(D, I32) M(D, I64) M(D, F16) M(D, F32) M(D, F64) \
    M(D, BOOL) M(D, BF16) M(D, C32) M(D, C64) M(D, C128)
#define CAST_FNS(D) CAST_COLS(CAST_FN, D)
CAST_ROWS(CAST_FNS)

#define CAST_ENTRY(D, S) [EM_##S] = cast_##D##_##S,
#define CAST_TABLE_ROW(D) [EM_##D] = {CAST_COLS(CAST_ENTRY, D)},
const em_cast_fn em_cast_table[EM_DTYPE_COUNT][EM_DTYPE_COUNT] = {CAST_ROWS(CAST_TABLE_ROW)};

/* copy: out[0] = in[0] broadcast to out's shape. The runner's conversion
 * does the dtype change, so the loop itself is a plain element copy by size. */
#define COPY_LOOP(DT) EM_UNARY_LOOP(copy_##DT, em_##DT##_t, em_##DT##_t, a)
EM_FOR_ALL(COPY_LOOP)
static void copy_half(char **d, const int64_t *s, int64_t n, const em_call *c)
{
    (void)c;
    for (int64_t i = 0; i < n; i++) *(uint16_t *)(d[0] + i * s[0]) = *(const uint16_t *)(d[1] + i * s[1]);
}
EM_FOR_COMPLEX(COPY_LOOP)
EM_UNARY_LOOP(copy_C32, em_complex32_bits, em_complex32_bits, a) /* two float16 bit patterns */
#define LOOP_ENTRY(DT) [EM_##DT] = copy_##DT,
static const em_loop_fn copy_loops[EM_DTYPE_COUNT] = {EM_FOR_ALL(LOOP_ENTRY) EM_FOR_COMPLEX(LOOP_ENTRY)[EM_F16] = copy_half,
                                                      [EM_BF16] = copy_half, [EM_C32] = copy_C32};

em_status cpu_copy(const em_call *c) { return cpu_pointwise(c, copy_loops); }

/* A contiguous fill as a store loop of the element's width: the copy loop's
 * stride-0 read does not vectorize (ones_like of 1e5 floats: 76 us vs 8). */
typedef struct fill_job {
    char *d;
    size_t size;
    _Alignas(16) char one[EM_MAX_ITEMSIZE]; /* an element: up to complex128 */
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
    case 8: FILL_AS(uint64_t); break;
    default: FILL_AS(double _Complex); break;
    }
}
#undef FILL_AS

static void fill_contiguous(char *d, int64_t n, size_t size, const char *one)
{
    fill_job j = {.d = d, .size = size};
    memcpy(j.one, one, size);
    em_parallel_for(n, 1, EM_GRAIN_STORE, fill_range, &j);
}

/* fill: every element of out[0] = c->f[0] (c->i[0] for int64, exact;
 * c->f[0] + c->f[1] i for complex). */
em_status cpu_fill(const em_call *c)
{
    em_tensor *t = c->out[0];
    _Alignas(16) char one[EM_MAX_ITEMSIZE];
    if (t->dtype == EM_I64)
        memcpy(one, &c->i[0], 8);
    else if (em_dtype_is_complex((em_dtype)t->dtype))
        em_store_c128(one, (em_dtype)t->dtype, CMPLX(c->f[0], c->f[1]));
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
