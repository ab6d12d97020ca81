/* CPU kernels of the nn activation family (include/ember/ops/nnact.def):
 * threshold and the shrinks (pointwise loops), prelu and glu (pointwise
 * loops over views the kernel makes of its operands), and the two random
 * kernels, rrelu's slopes and dropout, which draw element e's uniform from
 * words [e * wpe, (e + 1) * wpe) of the op's Philox stream (Note [Philox
 * streams] in src/core/rng.h): the same numbers on any thread count. */
#include "philox_block.h"
#include "unary_ops.h"
#include "vmath.h"

/* ---- pointwise -------------------------------------------------------------- */
/* threshold(x; threshold, value) = x > threshold ? x : value, numeric dtypes */
#define THRESHOLD(DT)                                                                                 \
    EM_UNARY_LOOP_P(threshold_##DT, em_##DT##_t, em_##DT##_t, const em_##DT##_t th = EM_PARAM(DT, p[0]); \
                    const em_##DT##_t value = EM_PARAM(DT, p[1]);, a > th ? a : value)
EM_FOR_NUMERIC(THRESHOLD)
static em_status check_threshold(const em_call *c)
{
    em_status st = cpu_check_param(c->f[0], c->dtype);
    return st ? st : cpu_check_param(c->f[1], c->dtype);
}
CPU_POINTWISE_CHECKED(threshold, check_threshold, EM_LOOPS_NUMERIC(threshold))

/* threshold_backward(g, x; threshold) = x <= threshold ? 0 : g */
#define THRESHOLD_BACKWARD(DT)                                                    \
    EM_BINARY_LOOP(threshold_backward_##DT, em_##DT##_t, em_##DT##_t,             \
                   b <= (em_##DT##_t)EM_PARAM(DT, p[0]) ? (em_##DT##_t)0 : a)
EM_FOR_NUMERIC(THRESHOLD_BACKWARD)
static em_status check_threshold_backward(const em_call *c) { return cpu_check_param(c->f[0], c->dtype); }
CPU_POINTWISE_CHECKED(threshold_backward, check_threshold_backward, EM_LOOPS_NUMERIC(threshold_backward))

/* gelu'(x), exact: Phi(x) + x phi(x), Phi through erfc as em_vgeluf (no cancellation in the
 * negative tail); tanh form: s + 2 x s (1 - s) u', s = sigmoid(2u), u = c (x + k x^3) */
static inline float gelu_grad_f32(float x)
{
    float w = x * -0.707106781f, tail = em_verfc_tail_scaled(x, 0.5f, 0.353553391f) * 0x1p-24f * 0.5f;
    float cdf = __builtin_fabsf(w) < 0.5f ? 0.5f * em_verfc_mid(w) : w > 0.0f ? tail : 1.0f - tail;
    return cdf + x * 0.398942280f * em_vexpf(-0.5f * x * x);
}
static inline float gelu_tanh_grad_f32(float x)
{
    float s = em_vsigmoidf(1.59576912f * (x + 0.044715f * x * x * x));
    return s + 2.0f * x * s * (1.0f - s) * 0.797884561f * (1.0f + 0.134145f * x * x);
}
static inline double gelu_grad_f64(double x, bool tanh_form)
{
    if (!tanh_form) return 0.5 * erfc(x * -M_SQRT1_2) + x * 0.39894228040143267794 * exp(-0.5 * x * x);
    double t = tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.79788456080286535588 * (1 + 0.134145 * x * x);
}
EM_BINARY_LOOP(gelu_backward_erf_F32, float, float, a * gelu_grad_f32(b))
EM_BINARY_LOOP(gelu_backward_tanh_F32, float, float, a * gelu_tanh_grad_f32(b))
EM_BINARY_LOOP(gelu_backward_F64, double, double, a * gelu_grad_f64(b, p[0] != 0))
static const em_loop_fn gelu_backward_erf_loops[EM_DTYPE_COUNT] = {L(gelu_backward_erf, F32) L(gelu_backward, F64)};
static const em_loop_fn gelu_backward_tanh_loops[EM_DTYPE_COUNT] = {L(gelu_backward_tanh, F32) L(gelu_backward, F64)};
em_status cpu_gelu_backward(const em_call *c)
{
    return cpu_pointwise(c, c->f[0] == 0 ? gelu_backward_erf_loops : gelu_backward_tanh_loops);
}

/* hardshrink: 0 on [-lambd, lambd]; softshrink: also moves the rest by lambd */
#define SHRINKS(DT, T)                                                                                \
    EM_UNARY_LOOP_P(hardshrink_##DT, T, T, const T l = (T)p[0];, a >= -l && a <= l ? (T)0 : a)       \
    EM_UNARY_LOOP_P(softshrink_##DT, T, T, const T l = (T)p[0];, a > l ? a - l : a < -l ? a + l : (T)0)
SHRINKS(F32, float)
SHRINKS(F64, double)
CPU_POINTWISE(hardshrink, L(hardshrink, F32) L(hardshrink, F64))
static em_status check_lambd(const em_call *c)
{
    if (!(c->f[0] >= 0))
        return em_fail(EM_ERR_RUNTIME, "lambda must be greater or equal to 0, but found to be %g.", c->f[0]);
    return EM_OK;
}
CPU_POINTWISE_CHECKED(softshrink, check_lambd, L(softshrink, F32) L(softshrink, F64))

/* prelu: out, x, and the weight seen at x's shape (stride 0 off dim 1) */
EM_BINARY_LOOP(prelu_F32, float, float, a > 0 ? a : a * b)
EM_BINARY_LOOP(prelu_F64, double, double, a > 0 ? a : a * b)
static const em_loop_fn prelu_loops[EM_DTYPE_COUNT] = {L(prelu, F32) L(prelu, F64)};
em_status cpu_prelu(const em_call *c)
{
    const em_tensor *x = c->in[0], *w = c->in[1];
    em_tensor wide = *w; /* a borrowed view of w's storage, for the loop only */
    wide.ndim = x->ndim;
    for (int d = 0; d < x->ndim; d++) {
        wide.sizes[d] = x->sizes[d];
        wide.strides[d] = d == 1 && em_numel(w) > 1 ? w->strides[0] : 0;
    }
    const em_tensor *ops[3] = {c->out[0], x, &wide};
    return cpu_pointwise_run(c, prelu_loops, 3, ops, x->ndim, x->sizes);
}

/* glu: out, the first half a and the second half b of x along dim c->i[0] */
EM_BINARY_LOOP(glu_F32, float, float, a / (1.0f + expf(-b)))
EM_BINARY_LOOP(glu_F64, double, double, a / (1.0 + exp(-b)))
static const em_loop_fn glu_loops[EM_DTYPE_COUNT] = {L(glu, F32) L(glu, F64)};
em_status cpu_glu(const em_call *c)
{
    const em_tensor *x = c->in[0];
    int d = (int)c->i[0];
    em_tensor first = *x, second = *x; /* borrowed views of x's storage, for the loop only */
    first.sizes[d] = second.sizes[d] = x->sizes[d] / 2;
    second.offset += first.sizes[d] * x->strides[d];
    const em_tensor *ops[3] = {c->out[0], &first, &second};
    return cpu_pointwise_run(c, glu_loops, 3, ops, x->ndim, c->out[0]->sizes);
}

/* ---- random kernels ----------------------------------------------------------- */
/* Walks a strided tensor's elements in row-major order. */
typedef struct {
    int ndim;
    const int64_t *sizes, *strides;
    int64_t coord[EM_MAX_DIMS], offset; /* offset in elements */
} walker;
static void walker_at(walker *w, const em_tensor *t, int64_t e)
{
    w->ndim = t->ndim, w->sizes = t->sizes, w->strides = t->strides, w->offset = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        w->coord[d] = t->sizes[d] ? e % t->sizes[d] : 0;
        e = t->sizes[d] ? e / t->sizes[d] : 0;
        w->offset += w->coord[d] * t->strides[d];
    }
}
static inline void walker_next(walker *w)
{
    for (int d = w->ndim - 1; d >= 0; d--) {
        w->offset += w->strides[d];
        if (++w->coord[d] < w->sizes[d]) return;
        w->offset -= w->strides[d] * w->sizes[d];
        w->coord[d] = 0;
    }
}

/* Uniforms on [0, 1) of element i of a block: 24 bits (float and the
 * half types, one word) or 53 (double, two words). */
#define UNIT24(w, i) ((float)(int32_t)((w)[i] >> 8) * 0x1p-24f)
#define UNIT53(w, i) em_rng_unit53((w) + 2 * (i))
/* Element access per dtype: the C type stored, the compute type, load, store. */
#define LOAD_F32(p) (*(const float *)(p))
#define LOAD_F64(p) (*(const double *)(p))
#define LOAD_F16(p) em_f16_to_f32(*(const uint16_t *)(p))
#define LOAD_BF16(p) em_bf16_to_f32(*(const uint16_t *)(p))
#define STORE_F32(p, v) (*(float *)(p) = (v))
#define STORE_F64(p, v) (*(double *)(p) = (v))
#define STORE_F16(p, v) (*(uint16_t *)(p) = em_f32_to_f16(v))
#define STORE_BF16(p, v) (*(uint16_t *)(p) = em_f32_to_bf16(v))
/* (DT, compute type, stored size, uniform) */
#define RANDOM_DTYPES(M) M(F32, float, 4, UNIT24) M(F64, double, 8, UNIT53) M(F16, float, 2, UNIT24) \
    M(BF16, float, 2, UNIT24)

/* Runs fn over blocks of the op's stream: element [first, first + n) of the
 * contiguous output(s), x walked from element `first`. c->i: key, offset, wpe. */
typedef void (*block_fn)(const em_call *c, const uint32_t *w, int64_t first, int64_t n, walker *x);
typedef struct block_ctx {
    const em_call *c;
    block_fn fn;
} block_ctx;

static void stream_block(void *ctx, const uint32_t *w, int64_t first, int64_t n)
{
    const block_ctx *d = ctx;
    walker x;
    walker_at(&x, d->c->in[0], first);
    d->fn(d->c, w, first, n, &x);
}

static void run_blocks(const em_call *c, block_fn fn)
{
    block_ctx d = {.c = c, .fn = fn};
    cpu_philox_for(c, em_numel(c->in[0]), stream_block, &d);
}

/* rrelu's slopes: 1 where x > 0, else lower + u (upper - lower); f = lower, upper */
#define RRELU_NOISE(DT, T, SIZE, UNIT)                                                             \
    static void rrelu_noise_##DT(const em_call *c, const uint32_t *w, int64_t first, int64_t n, walker *x) \
    {                                                                                              \
        const char *in = em_tensor_data(c->in[0]);                                                 \
        char *out = em_tensor_data(c->out[0]) + first * SIZE;                                      \
        const T lower = (T)c->f[0], span = (T)(c->f[1] - c->f[0]);                                 \
        for (int64_t i = 0; i < n; i++, walker_next(x)) {                                          \
            T v = LOAD_##DT(in + x->offset * SIZE);                                                \
            STORE_##DT(out + i * SIZE, v > 0 ? (T)1 : lower + (T)UNIT(w, i) * span);               \
        }                                                                                          \
    }
RANDOM_DTYPES(RRELU_NOISE)

/* dropout: y = x * (u >= p ? scale : 0) (NaN stays NaN, as x * mask * scale)
 * and mask = u >= p; f = p, scale */
#define DROPOUT(DT, T, SIZE, UNIT)                                                                 \
    static void dropout_##DT(const em_call *c, const uint32_t *w, int64_t first, int64_t n, walker *x) \
    {                                                                                              \
        const char *in = em_tensor_data(c->in[0]);                                                 \
        char *out = em_tensor_data(c->out[0]) + first * SIZE;                                      \
        bool *mask = (bool *)em_tensor_data(c->out[1]) + first;                                    \
        const T p = (T)c->f[0], scale = (T)c->f[1];                                                \
        for (int64_t i = 0; i < n; i++, walker_next(x)) {                                          \
            bool keep = (T)UNIT(w, i) >= p;                                                        \
            mask[i] = keep;                                                                        \
            STORE_##DT(out + i * SIZE, LOAD_##DT(in + x->offset * SIZE) * (keep ? scale : (T)0));  \
        }                                                                                          \
    }
RANDOM_DTYPES(DROPOUT)

#define ENTRY(op, DT, T, SIZE, UNIT) [EM_##DT] = op##_##DT,
#define RRELU_ENTRY(DT, T, SIZE, UNIT) ENTRY(rrelu_noise, DT, T, SIZE, UNIT)
#define DROPOUT_ENTRY(DT, T, SIZE, UNIT) ENTRY(dropout, DT, T, SIZE, UNIT)
static const block_fn rrelu_noise_fns[EM_DTYPE_COUNT] = {RANDOM_DTYPES(RRELU_ENTRY)};
static const block_fn dropout_fns[EM_DTYPE_COUNT] = {RANDOM_DTYPES(DROPOUT_ENTRY)};

/* (the op layers accept floating dtypes only: every one has an entry) */
em_status cpu_rrelu_noise(const em_call *c)
{
    run_blocks(c, rrelu_noise_fns[c->dtype]);
    return EM_OK;
}
em_status cpu_dropout(const em_call *c)
{
    run_blocks(c, dropout_fns[c->dtype]);
    return EM_OK;
}
