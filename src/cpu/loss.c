/* CPU kernels of the pointwise losses (mse, l1, smooth_l1, huber,
 * binary_cross_entropy[_with_logits]): one pass over contiguous operands of
 * one shape (the op layer broadcast and converted them) that writes each
 * element's loss (reduction none) or sums them in double.
 *
 * Operands: in[0] input x, in[1] target y, then (BCE) the weight w and
 * (with logits) pos_weight q when c->i[1] has bit 0 / bit 1; c->i[0] the
 * reduction, c->f[0] beta or delta. Sums are taken over fixed chunks added
 * in order, so the result does not depend on the thread count. */
#include "cpu.h"
#include "ember/loss.h"
#include "vmath.h"
#include <stdlib.h>

#define CHUNK 8192

/* Element loss expressions; x, y, w, q and b (the param) are T values. LOG,
 * LOG1P, EXP: T's math. FMAX is std::max, as PyTorch's kernels: a nan in a
 * stays nan (fmax would drop it), and it vectorizes (fmaxf is a libm call). */
#define FMAX(a, b) ((a) < (b) ? (b) : (a))
#define MSE_EXPR (x - y) * (x - y)
#define L1_EXPR FABS(x - y)
#define SMOOTH_L1_EXPR (FABS(x - y) < b ? (T)0.5 * (x - y) * (x - y) / b : FABS(x - y) - (T)0.5 * b)
#define HUBER_EXPR (FABS(x - y) <= b ? (T)0.5 * (x - y) * (x - y) : b * (FABS(x - y) - (T)0.5 * b))
/* log clamped at -100, as PyTorch: a probability of exactly 0 or 1 costs 100, not inf */
#define BCE_EXPR -w * (y * FMAX(LOG(x), (T)-100) + (1 - y) * FMAX(LOG1P(-x), (T)-100))
/* (1 - y) x + (1 + (q - 1) y) (log(1 + exp(-|x|)) + max(-x, 0)): never exp of a positive number */
#define BCE_LOGITS_EXPR w * ((1 - y) * x + (1 + (q - 1) * y) * (LOG1P(EXP(-FABS(x))) + FMAX(-x, (T)0)))

/* op_<DT>(out, operands, n, b): out[i] = loss (out non-NULL) or the sum of
 * the losses. The body is inlined once per presence of the weight w and
 * pos_weight q: with `ws ? ws[i] : 1` in one loop the compiler emits masked
 * loads from the NULL pointer, which AMD's cores run through a microcode
 * assist (binary_cross_entropy_with_logits ran at 30 ns an element). */
#define LOSS_LOOP(op, DT, EXPR)                                                                      \
    static inline __attribute__((always_inline)) double op##_##DT##_body(                           \
        T *restrict out, const T *restrict xs, const T *restrict ys, const T *restrict ws,           \
        const T *restrict qs, int64_t n, T b, const bool has_w, const bool has_q)                    \
    {                                                                                                \
        double total = 0;                                                                            \
        if (out) {                                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T x = xs[i], y = ys[i], w = has_w ? ws[i] : (T)1, q = has_q ? qs[i] : (T)1;          \
                (void)w, (void)q, (void)b;                                                           \
                out[i] = EXPR;                                                                       \
            }                                                                                        \
        } else {                                                                                     \
            _Pragma("omp simd reduction(+ : total)")                                                 \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T x = xs[i], y = ys[i], w = has_w ? ws[i] : (T)1, q = has_q ? qs[i] : (T)1;          \
                (void)w, (void)q, (void)b;                                                           \
                total += (double)(EXPR);                                                             \
            }                                                                                        \
        }                                                                                            \
        return total;                                                                                \
    }                                                                                                \
    EM_SIMD static double op##_##DT(T *restrict out, const T *restrict xs, const T *restrict ys,       \
                                    const T *restrict ws, const T *restrict qs, int64_t n, T b)        \
    {                                                                                                \
        if (ws && qs) return op##_##DT##_body(out, xs, ys, ws, qs, n, b, true, true);                \
        if (ws) return op##_##DT##_body(out, xs, ys, ws, qs, n, b, true, false);                     \
        if (qs) return op##_##DT##_body(out, xs, ys, ws, qs, n, b, false, true);                     \
        return op##_##DT##_body(out, xs, ys, ws, qs, n, b, false, false);                            \
    }
#define LOSS_LOOPS(DT)                                  \
    LOSS_LOOP(mse, DT, MSE_EXPR)                        \
    LOSS_LOOP(l1, DT, L1_EXPR)                          \
    LOSS_LOOP(smooth_l1, DT, SMOOTH_L1_EXPR)            \
    LOSS_LOOP(huber, DT, HUBER_EXPR)                    \
    LOSS_LOOP(bce, DT, BCE_EXPR)                        \
    LOSS_LOOP(bce_logits, DT, BCE_LOGITS_EXPR)

#define T float
#define FABS fabsf
#define LOG em_vlogf
#define LOG1P em_vlog1pf
#define EXP em_vexpf
LOSS_LOOPS(F32)
#undef T
#undef FABS
#undef LOG
#undef LOG1P
#undef EXP
#define T double
#define FABS fabs
#define LOG log
#define LOG1P log1p
#define EXP exp
LOSS_LOOPS(F64)
#undef T

typedef double (*loss_f32)(float *, const float *, const float *, const float *, const float *, int64_t, float);
typedef double (*loss_f64)(double *, const double *, const double *, const double *, const double *, int64_t,
                           double);

typedef struct loss_job {
    const em_call *c;
    loss_f32 f32;
    loss_f64 f64;
    int64_t n;
    const char *xs, *ys, *ws, *qs;
    char *out;
    double *sums; /* one per chunk of CHUNK elements */
} loss_job;

static void loss_chunks(void *ctx, int64_t begin, int64_t end)
{
    const loss_job *j = ctx;
    const size_t es = em_dtypes[j->c->dtype].size;
    for (int64_t k = begin; k < end; k++) {
        int64_t o = k * CHUNK, m = j->n - o < CHUNK ? j->n - o : CHUNK;
#define AT(p) ((p) ? (p) + o * es : NULL)
        if (j->c->dtype == EM_F64)
            j->sums[k] = j->f64((double *)AT(j->out), (const double *)AT(j->xs), (const double *)AT(j->ys),
                                (const double *)AT(j->ws), (const double *)AT(j->qs), m, j->c->f[0]);
        else
            j->sums[k] = j->f32((float *)AT(j->out), (const float *)AT(j->xs), (const float *)AT(j->ys),
                                (const float *)AT(j->ws), (const float *)AT(j->qs), m, (float)j->c->f[0]);
#undef AT
    }
}

/* Runs one loss over c's operands in chunks of CHUNK elements, whose sums
 * are added in order (the same result for any thread count). */
static em_status run_loss(const em_call *c, loss_f32 f32, loss_f64 f64)
{
    const em_tensor *x = c->in[0];
    int64_t n = em_shape_numel(x->ndim, x->sizes), nchunks = (n + CHUNK - 1) / CHUNK;
    em_reduction red = (em_reduction)c->i[0];
    bool has_w = c->i[1] & 1, has_q = c->i[1] & 2;
    double *part = nchunks > 1 ? malloc(nchunks * sizeof *part) : NULL, single = 0;
    if (nchunks > 1 && !part) return em_fail(EM_ERR_MEMORY, "%s: out of memory", em_ops[c->op].name);
    loss_job j = {.c = c, .f32 = f32, .f64 = f64, .n = n, .xs = em_tensor_data(x), .ys = em_tensor_data(c->in[1]),
                  .ws = has_w ? em_tensor_data(c->in[2]) : NULL, .qs = has_q ? em_tensor_data(c->in[has_w ? 3 : 2]) : NULL,
                  .out = red == EM_REDUCTION_NONE ? em_tensor_data(c->out[0]) : NULL, .sums = part ? part : &single};
    em_parallel_for(nchunks, CHUNK, EM_GRAIN, loss_chunks, &j);
    if (red != EM_REDUCTION_NONE) {
        double total = 0;
        for (int64_t k = 0; k < nchunks; k++) total += j.sums[k];
        if (red == EM_REDUCTION_MEAN) total /= (double)n; /* 0 / 0: NaN for an empty input */
        em_store_f64(em_tensor_data(c->out[0]), c->dtype, total);
    }
    free(part);
    return EM_OK;
}

#define LOSS_KERNEL(op, fn) \
    em_status cpu_##op(const em_call *c) { return run_loss(c, fn##_F32, fn##_F64); }
LOSS_KERNEL(mse_loss, mse)
LOSS_KERNEL(l1_loss, l1)
LOSS_KERNEL(smooth_l1_loss, smooth_l1)
LOSS_KERNEL(huber_loss, huber)
LOSS_KERNEL(binary_cross_entropy_with_logits, bce_logits)

/* BCE first checks every input is a probability: nothing is written otherwise. */
em_status cpu_binary_cross_entropy(const em_call *c)
{
    const em_tensor *x = c->in[0];
    int64_t n = em_shape_numel(x->ndim, x->sizes);
    bool bad = false;
    if (c->dtype == EM_F64) {
        const double *p = (const double *)em_tensor_data(x);
        for (int64_t i = 0; i < n; i++) bad |= !(p[i] >= 0 && p[i] <= 1);
    } else {
        const float *p = (const float *)em_tensor_data(x);
        for (int64_t i = 0; i < n; i++) bad |= !(p[i] >= 0 && p[i] <= 1);
    }
    if (bad) return em_fail(EM_ERR_RUNTIME, "all elements of input should be between 0 and 1");
    return run_loss(c, bce_F32, bce_F64);
}
