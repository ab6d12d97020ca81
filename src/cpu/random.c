/* CPU kernels of the elementwise random ops: uniform, normal, exponential,
 * random (integers) and bernoulli. Each fills its contiguous output from
 * blocks of Philox counters, in parallel over blocks; element e takes words
 * [e * wpe, (e + 1) * wpe) of the op's stream (Note [Philox streams] in
 * src/core/rng.h), so results do not depend on the thread count.
 *
 * c->i[0] = key, c->i[1] = offset, c->i[2] = wpe (words per element), set
 * by the op layer; op parameters follow in c->f[] and c->i[3..]. */
#include "philox_block.h"
#include "vmath.h" /* libmvec's sin, cos and log: the Box-Muller loop vectorizes */

#ifdef EM_LIBMVEC
EM_LIBMVEC(float, logf) /* only this file: the unary ops' float32 log is vmath.h's own */
#endif

#define BLOCK EM_PHILOX_BLOCK
#define WORDS EM_PHILOX_WORDS

/* Written as independent lanes so that the ten rounds vectorize. */
EM_SIMD void cpu_philox_block(uint64_t key, uint64_t ctr, uint32_t *restrict w)
{
    uint32_t c0[BLOCK], c1[BLOCK], c2[BLOCK], c3[BLOCK];
    for (int j = 0; j < BLOCK; j++) {
        c0[j] = (uint32_t)(ctr + (uint64_t)j);
        c1[j] = (uint32_t)((ctr + (uint64_t)j) >> 32);
        c2[j] = c3[j] = 0;
    }
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
        for (int j = 0; j < BLOCK; j++) {
            uint64_t p0 = (uint64_t)EM_PHILOX_M0 * c0[j], p1 = (uint64_t)EM_PHILOX_M1 * c2[j];
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[j] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3[j] ^ k1;
            c0[j] = n0, c1[j] = (uint32_t)p1, c2[j] = n2, c3[j] = (uint32_t)p0;
        }
        k0 += EM_PHILOX_W0, k1 += EM_PHILOX_W1;
    }
    for (int j = 0; j < BLOCK; j++) w[4 * j] = c0[j], w[4 * j + 1] = c1[j], w[4 * j + 2] = c2[j], w[4 * j + 3] = c3[j];
}

typedef struct philox_job {
    const em_call *c;
    cpu_philox_fn fn;
    void *ctx;
    int64_t n, per; /* elements, elements per block */
} philox_job;

static void philox_blocks(void *ctx, int64_t begin, int64_t end)
{
    const philox_job *j = ctx;
    const uint64_t key = (uint64_t)j->c->i[0], offset = (uint64_t)j->c->i[1];
    for (int64_t b = begin; b < end; b++) {
        _Alignas(64) uint32_t w[WORDS];
        cpu_philox_block(key, offset + (uint64_t)b * BLOCK, w);
        j->fn(j->ctx, w, b * j->per, j->n - b * j->per < j->per ? j->n - b * j->per : j->per);
    }
}

void cpu_philox_for(const em_call *c, int64_t n, cpu_philox_fn fn, void *ctx)
{
    const int64_t per = WORDS / c->i[2];
    philox_job j = {.c = c, .fn = fn, .ctx = ctx, .n = n, .per = per};
    em_parallel_for((n + per - 1) / per, per, EM_GRAIN, philox_blocks, &j);
}

/* Writes output elements [first, first + n) from the block's words w, which
 * start at element `first`'s. */
typedef void (*draw_fn)(const uint32_t *w, int64_t first, int64_t n, const em_call *c);
typedef struct draw_ctx {
    const em_call *c;
    draw_fn fn;
} draw_ctx;

static void draw(void *ctx, const uint32_t *w, int64_t first, int64_t n)
{
    const draw_ctx *d = ctx;
    d->fn(w, first, n, d->c);
}

static void run_draws(const em_call *c, draw_fn fn)
{
    draw_ctx d = {.c = c, .fn = fn};
    cpu_philox_for(c, em_numel(c->out[0]), draw, &d);
}

static em_status run(const em_call *c, const draw_fn fns[EM_DTYPE_COUNT])
{
    em_dtype dt = (em_dtype)c->out[0]->dtype;
    if (!fns[dt])
        return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", em_ops[c->op].name, em_dtypes[dt].name);
    run_draws(c, fns[dt]);
    return EM_OK;
}

/* ---- words to numbers ------------------------------------------------- */
/* Uniform on [0, 1) with `bits` bits (the dtype's mantissa), from one word. */
#define UNIT(x, bits) ((double)(int32_t)((x) >> (32 - (bits))) * (1.0 / (double)(1u << (bits))))
#define UNIT_F32(w, i) UNIT(w[i], 24)
#define UNIT_F16(w, i) UNIT(w[i], 11)
#define UNIT_BF16(w, i) UNIT(w[i], 8)
#define UNIT_F64(w, i) em_rng_unit53(w + 2 * (i))

/* double -> each floating dtype's storage, and back */
#define TO_F32(x) ((float)(x))
#define TO_F64(x) ((double)(x))
#define TO_F16(x) em_f32_to_f16((float)(x))
#define TO_BF16(x) em_f32_to_bf16((float)(x))
#define AS_F32(v) ((double)(v))
#define AS_F64(v) (v)
#define AS_F16(v) ((double)em_f16_to_f32(v))
#define AS_BF16(v) ((double)em_bf16_to_f32(v))
#define FOR_FLOATS(M) M(F32, float) M(F64, double) M(F16, uint16_t) M(BF16, uint16_t)
#define ENTRY(op, DT, T) [EM_##DT] = op##_##DT,

/* ---- uniform: from + U * (to - from) on [from, to); f = from, to, the
 * largest value of the dtype below `to` (or from when from == to) */
#define UNIFORM(DT, T)                                                                         \
    EM_SIMD static void uniform_##DT(const uint32_t *w, int64_t first, int64_t n, const em_call *c) \
    {                                                                                          \
        T *o = (T *)em_tensor_data(c->out[0]) + first;                                         \
        const double from = c->f[0], to = c->f[1], span = to - from;                           \
        const T below = TO_##DT(c->f[2]);                                                      \
        for (int64_t i = 0; i < n; i++) {                                                      \
            T v = TO_##DT(from + UNIT_##DT(w, i) * span);                                      \
            o[i] = AS_##DT(v) < to ? v : below; /* rounding may reach `to` */                  \
        }                                                                                      \
    }
FOR_FLOATS(UNIFORM)
#define UNIFORM_ENTRY(DT, T) ENTRY(uniform, DT, T)
static const draw_fn uniform_fns[EM_DTYPE_COUNT] = {FOR_FLOATS(UNIFORM_ENTRY)};
em_status cpu_uniform(const em_call *c) { return run(c, uniform_fns); }

/* ---- normal: Box-Muller. Each pair of outputs (2j, 2j + 1) comes from the
 * pair's uniforms u1 in (0, 1] and u2 in [0, 1): r = sqrt(-2 log u1),
 * z = r cos(2 pi u2), r sin(2 pi u2). float32 (and the half types) use one
 * 24-bit uniform per output, float64 one 53-bit uniform (two words). */
#define TWO_PI 6.283185307179586

/* The block's WORDS standard normals in float. */
EM_SIMD static void box_muller_f32(const uint32_t *restrict w, float *restrict z)
{
    float r[WORDS / 2], t[WORDS / 2];
    for (int j = 0; j < WORDS / 2; j++) {
        float u1 = ((float)(int32_t)(w[2 * j] >> 8) + 1.0f) * 0x1p-24f;
        float u2 = (float)(int32_t)(w[2 * j + 1] >> 8) * 0x1p-24f;
        r[j] = sqrtf(-2.0f * logf(u1));
        t[j] = (float)TWO_PI * u2;
        z[2 * j] = r[j] * cosf(t[j]);
    }
    /* a separate loop: GCC would merge sinf and cosf of one value into a
     * sincos call that does not vectorize */
    for (int j = 0; j < WORDS / 2; j++) z[2 * j + 1] = r[j] * sinf(t[j]);
}

/* The block's WORDS / 2 standard normals in double. */
EM_SIMD static void box_muller_f64(const uint32_t *restrict w, double *restrict z)
{
    double r[WORDS / 4], t[WORDS / 4];
    for (int j = 0; j < WORDS / 4; j++) {
        double u1 = em_rng_unit53(w + 4 * j) + 0x1p-53;
        r[j] = sqrt(-2.0 * log(u1));
        t[j] = TWO_PI * em_rng_unit53(w + 4 * j + 2);
        z[2 * j] = r[j] * cos(t[j]);
    }
    for (int j = 0; j < WORDS / 4; j++) z[2 * j + 1] = r[j] * sin(t[j]); /* see box_muller_f32 */
}

/* mean + std * z, with mean and std the scalars c->f[0..1] or, for the
 * tensor forms, float64 arrays c->in[0..1] of the output's shape. */
#define NORMAL(DT, T, Z, BOX_MULLER)                                                           \
    EM_SIMD static void normal_##DT(const uint32_t *w, int64_t first, int64_t n, const em_call *c) \
    {                                                                                          \
        T *o = (T *)em_tensor_data(c->out[0]) + first;                                         \
        Z z[WORDS];                                                                            \
        BOX_MULLER(w, z);                                                                      \
        if (c->nin == 2) {                                                                     \
            const double *mean = (const double *)em_tensor_data(c->in[0]) + first;             \
            const double *std = (const double *)em_tensor_data(c->in[1]) + first;              \
            for (int64_t i = 0; i < n; i++) o[i] = TO_##DT(mean[i] + std[i] * (double)z[i]);   \
        } else {                                                                               \
            const Z mean = (Z)c->f[0], std = (Z)c->f[1];                                       \
            for (int64_t i = 0; i < n; i++) o[i] = TO_##DT(mean + std * z[i]);                 \
        }                                                                                      \
    }
NORMAL(F32, float, float, box_muller_f32)
NORMAL(F64, double, double, box_muller_f64)
NORMAL(F16, uint16_t, float, box_muller_f32)
NORMAL(BF16, uint16_t, float, box_muller_f32)
#define NORMAL_ENTRY(DT, T) ENTRY(normal, DT, T)
static const draw_fn normal_fns[EM_DTYPE_COUNT] = {FOR_FLOATS(NORMAL_ENTRY)};

/* Checks the std tensor (before anything is written), then draws. */
em_status cpu_normal(const em_call *c)
{
    if (c->nin == 2) {
        const double *std = (const double *)em_tensor_data(c->in[1]);
        for (int64_t i = 0, n = em_numel(c->in[1]); i < n; i++)
            if (!(std[i] >= 0.0)) return em_fail(EM_ERR_RUNTIME, "normal expects all elements of std >= 0.0");
    }
    return run(c, normal_fns);
}

/* ---- exponential: -log(1 - U) / lambd with a 53-bit U in every dtype (as
 * PyTorch); f[0] = lambd */
#define EXPONENTIAL(DT, T)                                                                     \
    static void exponential_##DT(const uint32_t *w, int64_t first, int64_t n, const em_call *c) \
    {                                                                                          \
        T *o = (T *)em_tensor_data(c->out[0]) + first;                                         \
        const double scale = -1.0 / c->f[0];                                                   \
        for (int64_t i = 0; i < n; i++) o[i] = TO_##DT(scale * log1p(-em_rng_unit53(w + 2 * i)));     \
    }
FOR_FLOATS(EXPONENTIAL)
#define EXPONENTIAL_ENTRY(DT, T) ENTRY(exponential, DT, T)
static const draw_fn exponential_fns[EM_DTYPE_COUNT] = {FOR_FLOATS(EXPONENTIAL_ENTRY)};
em_status cpu_exponential(const em_call *c) { return run(c, exponential_fns); }

/* ---- random: integers from + [0, range) (i[3] = from, i[4] = range as
 * uint64, 0 meaning 2^64). Ranges up to 2^16 take one word per element
 * (multiply-shift of 32 bits), larger ones two (of 64 bits): the bias is
 * at most range / 2^32 resp. range / 2^64. */
static inline uint64_t draw_below(const uint32_t *w, int64_t i, int wpe, uint64_t range)
{
    if (wpe == 1) return ((uint64_t)w[i] * range) >> 32;
    uint64_t x = ((uint64_t)w[2 * i] << 32) | w[2 * i + 1];
    return range ? (uint64_t)(((unsigned __int128)x * range) >> 64) : x;
}

/* int64 -> each dtype (wrapping to narrower integers; bool: nonzero) */
#define FROM_INT(T, v) ((T)(v))
#define FROM_INT_F16(v) em_f32_to_f16((float)(v))
#define FROM_INT_BF16(v) em_f32_to_bf16((float)(v))
#define FOR_ALL(M) M(U8, uint8_t) M(I8, int8_t) M(I16, int16_t) M(I32, int32_t) M(I64, int64_t) \
    M(F32, float) M(F64, double) M(BOOL, bool) M(F16, uint16_t) M(BF16, uint16_t)
#define STORE_U8(v) FROM_INT(uint8_t, v)
#define STORE_I8(v) FROM_INT(int8_t, v)
#define STORE_I16(v) FROM_INT(int16_t, v)
#define STORE_I32(v) FROM_INT(int32_t, v)
#define STORE_I64(v) FROM_INT(int64_t, v)
#define STORE_F32(v) FROM_INT(float, v)
#define STORE_F64(v) FROM_INT(double, v)
#define STORE_BOOL(v) ((v) != 0)
#define STORE_F16(v) FROM_INT_F16(v)
#define STORE_BF16(v) FROM_INT_BF16(v)

#define RANDOM(DT, T)                                                                          \
    EM_SIMD static void random_##DT(const uint32_t *w, int64_t first, int64_t n, const em_call *c) \
    {                                                                                          \
        T *o = (T *)em_tensor_data(c->out[0]) + first;                                         \
        const uint64_t from = (uint64_t)c->i[3], range = (uint64_t)c->i[4];                    \
        const int wpe = (int)c->i[2];                                                          \
        for (int64_t i = 0; i < n; i++) o[i] = STORE_##DT((int64_t)(from + draw_below(w, i, wpe, range))); \
    }
FOR_ALL(RANDOM)
#define RANDOM_ENTRY(DT, T) ENTRY(random, DT, T)
static const draw_fn random_fns[EM_DTYPE_COUNT] = {FOR_ALL(RANDOM_ENTRY)};
em_status cpu_random(const em_call *c) { return run(c, random_fns); }

/* ---- bernoulli: 1 where a 53-bit uniform < p, else 0; p is the scalar
 * f[0] or a float64 array c->in[0] of the output's shape */
#define BERNOULLI(DT, T)                                                                       \
    static void bernoulli_##DT(const uint32_t *w, int64_t first, int64_t n, const em_call *c)  \
    {                                                                                          \
        T *o = (T *)em_tensor_data(c->out[0]) + first;                                         \
        const double *p = c->nin ? (const double *)em_tensor_data(c->in[0]) + first : NULL;    \
        const T one = STORE_##DT(1), zero = STORE_##DT(0);                                     \
        for (int64_t i = 0; i < n; i++) o[i] = em_rng_unit53(w + 2 * i) < (p ? p[i] : c->f[0]) ? one : zero; \
    }
FOR_ALL(BERNOULLI)
#define BERNOULLI_ENTRY(DT, T) ENTRY(bernoulli, DT, T)
static const draw_fn bernoulli_fns[EM_DTYPE_COUNT] = {FOR_ALL(BERNOULLI_ENTRY)};

em_status cpu_bernoulli(const em_call *c)
{
    if (c->nin) {
        const double *p = (const double *)em_tensor_data(c->in[0]);
        for (int64_t i = 0, n = em_numel(c->in[0]); i < n; i++)
            if (!(p[i] >= 0 && p[i] <= 1))
                return em_fail(EM_ERR_RUNTIME, "bernoulli: expected all probabilities p_in >= 0 && p_in <= 1, got %g",
                               p[i]);
    }
    return run(c, bernoulli_fns);
}
