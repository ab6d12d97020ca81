/* CPU kernels of the factory ops: arange, linspace, logspace and eye. Each
 * writes its contiguous output in chunks, in parallel above EM_GRAIN; every
 * value depends only on its index, so threads never change a result.
 *
 * Note [Vector-block formulas]
 * PyTorch's CPU arange and linspace kernels (1.13, AVX2 build) compute every
 * full vector of W = 32 / sizeof(T) lanes as base + k * step from the
 * value at the vector's first index, and only the tail after the last
 * multiple of 2 * W one element at a time. In floating point the two
 * formulas differ by an ulp now and then, so Ember evaluates, for each
 * index, the formula torch uses at that index: its results equal torch's
 * bit for bit (within one parallel chunk of torch's, i.e. below 32768
 * elements). Which operations torch's build fuses into an fma was read off
 * its outputs: arange fuses all; linspace fuses the per-element formula but
 * not the lane step (so this file must not contract a * b + c on its own:
 * NO_CONTRACT); float16 and bfloat16 linspace round every operation to the
 * dtype. */
#include "cpu.h"

#if defined(__GNUC__) && !defined(__clang__)
#define NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define NO_CONTRACT
#endif

#define CHUNK 256

/* Writes the values of elements [begin, begin + m) of c's output, in the
 * dtype `fill_chunks` was given, to buf. */
typedef void (*chunk_fn)(const em_call *c, int64_t begin, int64_t m, void *buf);

typedef struct fill_job {
    const em_call *c;
    em_dtype src;
    chunk_fn fn;
    int64_t n;
} fill_job;

static void fill_range(void *ctx, int64_t begin, int64_t end)
{
    const fill_job *j = ctx;
    const em_dtype dt = (em_dtype)j->c->out[0]->dtype;
    const size_t size = em_dtypes[dt].size;
    char *o = em_tensor_data(j->c->out[0]);
    for (int64_t ch = begin; ch < end; ch++) {
        int64_t b = ch * CHUNK, m = j->n - b < CHUNK ? j->n - b : CHUNK;
        if (dt == j->src) {
            j->fn(j->c, b, m, o + b * size);
        } else {
            _Alignas(64) char buf[CHUNK * 8];
            j->fn(j->c, b, m, buf);
            em_cast_table[dt][j->src](o + b * size, (int64_t)size, buf, (int64_t)em_dtypes[j->src].size, m);
        }
    }
}

/* Runs fn over the output in chunks; values made in dtype `src` are cast to
 * the output's dtype (int64 wraps to narrower integers, as C++ casts do). */
static void fill_chunks(const em_call *c, em_dtype src, chunk_fn fn)
{
    const int64_t n = em_numel(c->out[0]);
    fill_job j = {.c = c, .src = src, .fn = fn, .n = n};
    em_parallel_for((n + CHUNK - 1) / CHUNK, CHUNK, EM_GRAIN, fill_range, &j);
}

/* Lanes per AVX2 vector of the output's dtype (Note [Vector-block formulas]). */
static int64_t lanes(const em_call *c) { return 32 / (int64_t)em_dtypes[c->out[0]->dtype].size; }

/* double -> int64 as x86-64 converts (out of range or NaN: INT64_MIN), the
 * result PyTorch's static_cast gives there. */
static inline int64_t i64_of(double v) { return v >= -0x1p63 && v < 0x1p63 ? (int64_t)v : INT64_MIN; }

static float round_f16(float v) { return em_f16_to_f32(em_f32_to_f16(v)); }
static float round_bf16(float v) { return em_bf16_to_f32(em_f32_to_bf16(v)); }

/* ---- arange: start + step * i (c->f: start, step; c->i: the same for int64) */
static void arange_I64(const em_call *c, int64_t b, int64_t m, void *buf)
{
    int64_t *o = buf;
    const uint64_t start = (uint64_t)c->i[0], step = (uint64_t)c->i[1]; /* wraps like int64 */
    for (int64_t j = 0; j < m; j++) o[j] = (int64_t)(start + step * (uint64_t)(b + j));
}

/* float32 and float64 accumulate in double; the half types in float. */
#define ARANGE(DT, T, A, FMA, TO, FROM)                                                        \
    EM_SIMD static void arange_##DT(const em_call *c, int64_t b, int64_t m, void *buf)         \
    {                                                                                          \
        T *o = buf;                                                                            \
        const A start = (A)c->f[0], step = (A)c->f[1];                                         \
        const int64_t n = em_numel(c->out[0]), w = lanes(c), nvec = n - n % (2 * w);           \
        for (int64_t j = 0; j < m; j++) {                                                      \
            const int64_t i = b + j, k = i % w;                                                \
            if (i < nvec) {                                                                    \
                const T base = TO(FMA(step, (A)(i - k), start));                               \
                o[j] = TO(FMA((A)k, step, (A)FROM(base)));                                     \
            } else {                                                                           \
                o[j] = TO(FMA(step, (A)i, start));                                             \
            }                                                                                  \
        }                                                                                      \
    }
#define SAME(x) (x)
#define TO_F32(x) ((float)(x))
ARANGE(F32, float, double, fma, TO_F32, SAME)
ARANGE(F64, double, double, fma, SAME, SAME)
ARANGE(F16, uint16_t, float, fmaf, em_f32_to_f16, em_f16_to_f32)
ARANGE(BF16, uint16_t, float, fmaf, em_f32_to_bf16, em_bf16_to_f32)

em_status cpu_arange(const em_call *c)
{
    switch (c->out[0]->dtype) {
    case EM_F32: fill_chunks(c, EM_F32, arange_F32); break;
    case EM_F64: fill_chunks(c, EM_F64, arange_F64); break;
    case EM_F16: fill_chunks(c, EM_F16, arange_F16); break;
    case EM_BF16: fill_chunks(c, EM_BF16, arange_BF16); break;
    default: fill_chunks(c, EM_I64, arange_I64); break;
    }
    return EM_OK;
}

/* ---- linspace: start + step * i for the first half, end - step * (n - 1 - i)
 * for the second; a single step is start (c->f: start and end, in the
 * output's dtype but for a single step) */
#define LINSPACE(DT, T, FMA)                                                                   \
    NO_CONTRACT EM_SIMD static void linspace_##DT(const em_call *c, int64_t b, int64_t m, void *buf) \
    {                                                                                          \
        T *o = buf;                                                                            \
        const T start = (T)c->f[0], end = (T)c->f[1];                                          \
        const int64_t n = em_numel(c->out[0]), half = n / 2, w = lanes(c), nvec = n - n % (2 * w); \
        const T step = n > 1 ? (end - start) / (T)(n - 1) : 0;                                 \
        if (n == 1) o[0] = (T)c->f[0];                                                         \
        for (int64_t j = 0; j < m && n > 1; j++) {                                             \
            const int64_t i = b + j, k = i < nvec ? i % w : 0, at = i - k;                     \
            const T v = at < half ? FMA(step, (T)at, start) : FMA(-step, (T)(n - 1 - at), end); \
            o[j] = k ? v + (T)k * step : v;                                                    \
        }                                                                                      \
    }
LINSPACE(F32, float, fmaf)
LINSPACE(F64, double, fma)

/* float16 and bfloat16: each operation rounds to the dtype, as c10::Half's do. */
#define LINSPACE_HALF(DT, R, TO)                                                               \
    static void linspace_##DT(const em_call *c, int64_t b, int64_t m, void *buf)               \
    {                                                                                          \
        uint16_t *o = buf;                                                                     \
        const float start = (float)c->f[0], end = (float)c->f[1];                              \
        const int64_t n = em_numel(c->out[0]), half = n / 2, w = lanes(c), nvec = n - n % (2 * w); \
        const float step = n > 1 ? R(R(end - start) / R((float)(n - 1))) : 0;                  \
        if (n == 1) o[0] = TO((float)c->f[0]);                                                 \
        for (int64_t j = 0; j < m && n > 1; j++) {                                             \
            const int64_t i = b + j, k = i < nvec ? i % w : 0, at = i - k;                     \
            const float v = at < half ? R(start + R(step * R((float)at)))                      \
                                      : R(end - R(step * R((float)(n - 1 - at))));             \
            o[j] = TO(k ? v + R(R((float)k) * step) : v);                                      \
        }                                                                                      \
    }
LINSPACE_HALF(F16, round_f16, em_f32_to_f16)
LINSPACE_HALF(BF16, round_bf16, em_f32_to_bf16)

/* Integral dtypes: a double step; every value truncates to an integer. */
NO_CONTRACT static void linspace_I64(const em_call *c, int64_t b, int64_t m, void *buf)
{
    int64_t *o = buf;
    const double start = c->f[0], end = c->f[1];
    const int64_t n = em_numel(c->out[0]), half = n / 2, w = lanes(c), nvec = n - n % (2 * w);
    const double step = n > 1 ? (end - start) / (double)(n - 1) : 0;
    if (n == 1) o[0] = i64_of(c->f[0]);
    for (int64_t j = 0; j < m && n > 1; j++) {
        const int64_t i = b + j, k = i < nvec ? i % w : 0, at = i - k;
        const int64_t v = i64_of(at < half ? fma(step, (double)at, start) : fma(-step, (double)(n - 1 - at), end));
        o[j] = k ? i64_of((double)v + (double)k * step) : v;
    }
}

em_status cpu_linspace(const em_call *c)
{
    switch (c->out[0]->dtype) {
    case EM_F32: fill_chunks(c, EM_F32, linspace_F32); break;
    case EM_F64: fill_chunks(c, EM_F64, linspace_F64); break;
    case EM_F16: fill_chunks(c, EM_F16, linspace_F16); break;
    case EM_BF16: fill_chunks(c, EM_BF16, linspace_BF16); break;
    default: fill_chunks(c, EM_I64, linspace_I64); break;
    }
    return EM_OK;
}

/* ---- logspace: base ** (linspace's exponents, in double, unfused, with
 * the step from c->f[3] = end - start as torch computes it in the dtype);
 * c->f[2] = base */
NO_CONTRACT static double logspace_value(const em_call *c, int64_t i)
{
    const double start = c->f[0], end = c->f[1], base = c->f[2];
    const int64_t n = em_numel(c->out[0]);
    if (n == 1) return pow(base, start);
    const double step = c->f[3] / (double)(n - 1);
    return pow(base, i < n / 2 ? start + step * (double)i : end - step * (double)(n - 1 - i));
}

static void logspace_F64(const em_call *c, int64_t b, int64_t m, void *buf)
{
    double *o = buf;
    for (int64_t j = 0; j < m; j++) o[j] = logspace_value(c, b + j);
}

/* integral dtypes: truncated as C++ casts on x86-64 */
static void logspace_I64(const em_call *c, int64_t b, int64_t m, void *buf)
{
    int64_t *o = buf;
    for (int64_t j = 0; j < m; j++) o[j] = i64_of(logspace_value(c, b + j));
}

em_status cpu_logspace(const em_call *c)
{
    bool integral = em_dtype_is_int((em_dtype)c->out[0]->dtype);
    fill_chunks(c, integral ? EM_I64 : EM_F64, integral ? logspace_I64 : logspace_F64);
    return EM_OK;
}

/* ---- eye: zeros with ones on the diagonal of an (n, m) matrix */
em_status cpu_eye(const em_call *c)
{
    const em_tensor *t = c->out[0];
    const em_dtype dt = (em_dtype)t->dtype;
    const size_t size = em_dtypes[dt].size;
    const int64_t n = t->sizes[0], m = t->sizes[1], diag = n < m ? n : m;
    char *o = em_tensor_data(t);
    _Alignas(16) char one[EM_MAX_ITEMSIZE];
    memset(o, 0, (size_t)(n * m) * size); /* all-zero bits are 0 in every dtype */
    em_store_f64(one, dt, 1.0);
    for (int64_t i = 0; i < diag; i++) memcpy(o + (i * m + i) * (int64_t)size, one, size);
    return EM_OK;
}
