/* CPU kernels of the CTC loss: the forward (alpha) recursion in log space,
 * one sample per thread, and its backward op (beta recursion, then the
 * gradient per time step and class, as PyTorch's ctc_loss_backward: the
 * gradient w.r.t. log_probs that, composed with log_softmax, is the
 * gradient w.r.t. the logits).
 *
 * Operands (contiguous): log_probs [T][N][C] in the compute dtype; targets
 * int64, [N][S] padded (c->i[6] = S) or concatenated (i[6] = -1); lengths
 * [2][N] int64 (input lengths, target lengths); log_alpha [N][T][W] with
 * W = 2 max(target length) + 1. Params: i[0] blank, i[1] zero_infinity,
 * i[2..5] N, T, C, W. */
#include "cpu.h"
#include "ember/loss.h"
#include <stdatomic.h>
#include <stdlib.h>

typedef struct ctc_geom {
    int64_t blank, N, T, C, W, S;
    bool zero_inf;
    const int64_t *targets, *il, *tl;
    int64_t *offsets; /* where each sample's targets start */
} ctc_geom;

/* Lengths fit log_probs and targets (else the PyTorch error, nothing written);
 * fills g (g->offsets malloc'ed: the caller frees it). */
static em_status ctc_setup(const em_call *c, const em_tensor *targets, const em_tensor *lengths, ctc_geom *g)
{
    *g = (ctc_geom){.blank = c->i[0], .zero_inf = c->i[1], .N = c->i[2], .T = c->i[3], .C = c->i[4], .W = c->i[5],
                    .S = c->i[6], .targets = (const int64_t *)em_tensor_data(targets)};
    g->il = (const int64_t *)em_tensor_data(lengths);
    g->tl = g->il + g->N;
    int64_t total = 0, avail = em_shape_numel(targets->ndim, targets->sizes);
    for (int64_t b = 0; b < g->N; b++) {
        if (g->il[b] < 0 || g->il[b] > g->T)
            return em_fail(EM_ERR_RUNTIME, "Expected input_lengths to have value at most %lld, but got value %lld "
                           "(while checking arguments for ctc_loss_cpu)", (long long)g->T, (long long)g->il[b]);
        if (g->tl[b] < 0 || (g->S >= 0 && g->tl[b] > g->S))
            return em_fail(EM_ERR_RUNTIME, "Expected tensor to have size at least %lld at dimension 1, but got size "
                           "%lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                           (long long)g->tl[b], (long long)g->S);
        total += g->tl[b];
    }
    if (g->S < 0 && total > avail)
        return em_fail(EM_ERR_RUNTIME, "ctc_loss: the target lengths sum to %lld but targets has %lld elements",
                       (long long)total, (long long)avail);
    g->offsets = malloc((g->N + 1) * sizeof *g->offsets);
    if (!g->offsets) return em_fail(EM_ERR_MEMORY, "ctc_loss: out of memory");
    for (int64_t b = 0, off = 0; b < g->N; b++) {
        g->offsets[b] = g->S >= 0 ? b * g->S : off;
        off += g->tl[b];
        for (int64_t i = 0; i < g->tl[b]; i++) {
            int64_t t = g->targets[g->offsets[b] + i];
            if (t < 0 || t >= g->C) {
                free(g->offsets);
                return em_fail(EM_ERR_INDEX, "ctc_loss: target %lld is out of bounds for %lld classes", (long long)t,
                               (long long)g->C);
            }
        }
    }
    return EM_OK;
}

static inline double lae(double a, double b) /* log(exp(a) + exp(b)) */
{
    double m = a > b ? a : b;
    return m == -INFINITY ? -INFINITY : m + log(exp(a - m) + exp(b - m));
}

/* The extended label s of sample b: blank at even s, target (s - 1) / 2 at odd s. */
static inline int64_t label(const ctc_geom *g, int64_t b, int64_t s)
{
    return s % 2 == 0 ? g->blank : g->targets[g->offsets[b] + s / 2];
}
/* May a path skip from s - 2 (forward) to s: a non-blank differing from it. */
static inline bool may_skip(const ctc_geom *g, int64_t b, int64_t s)
{
    return s >= 2 && s % 2 == 1 && label(g, b, s) != label(g, b, s - 2);
}

/* The operands of one call; samples are split over the pool. */
typedef struct ctc_job {
    const ctc_geom *g;
    const void *grad, *lp, *nll, *alpha; /* grad and alpha: backward's inputs */
    void *out;       /* forward: nll; backward: the gradient */
    void *alpha_out; /* forward: log_alpha */
    _Atomic bool failed;
} ctc_job;

#define CTC_FNS(DT, TY)                                                                               \
    static void forward_##DT(void *ctx, int64_t begin, int64_t end)                                \
    {                                                                                              \
        const ctc_job *j = ctx;                                                                    \
        const ctc_geom *g = j->g;                                                                  \
        const TY *lp = j->lp;                                                                      \
        TY *nll = j->out, *alpha = j->alpha_out;                                                   \
        for (int64_t b = begin; b < end; b++) {                                                    \
            int64_t Tb = g->il[b], Sp = 2 * g->tl[b] + 1;                                          \
            TY *a = alpha + b * g->T * g->W;                                                        \
            for (int64_t i = 0; i < g->T * g->W; i++) a[i] = -INFINITY;                            \
            if (Tb == 0) {                                                                         \
                nll[b] = g->tl[b] == 0 ? 0 : INFINITY;                                             \
                continue;                                                                          \
            }                                                                                      \
            const TY *l0 = lp + b * g->C;                                                           \
            a[0] = l0[g->blank];                                                                   \
            if (Sp > 1) a[1] = l0[label(g, b, 1)];                                                 \
            for (int64_t t = 1; t < Tb; t++) {                                                     \
                const TY *lt = lp + (t * g->N + b) * g->C;                                          \
                TY *cur = a + t * g->W, *prev = cur - g->W;                                         \
                for (int64_t s = 0; s < Sp; s++) {                                                 \
                    double v = prev[s];                                                            \
                    if (s > 0) v = lae(v, prev[s - 1]);                                            \
                    if (may_skip(g, b, s)) v = lae(v, prev[s - 2]);                                \
                    cur[s] = (TY)(v + lt[label(g, b, s)]);                                          \
                }                                                                                  \
            }                                                                                      \
            const TY *last = a + (Tb - 1) * g->W;                                                   \
            double ll = Sp > 1 ? lae(last[Sp - 1], last[Sp - 2]) : last[0];                        \
            nll[b] = (TY)-ll;                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void backward_##DT(void *ctx, int64_t begin, int64_t end)                               \
    {                                                                                              \
        ctc_job *j = ctx;                                                                          \
        const ctc_geom *g = j->g;                                                                  \
        const TY *gr = j->grad, *lp = j->lp, *nll = j->nll, *alpha = j->alpha;                     \
        TY *gx = j->out;                                                                           \
        for (int64_t b = begin; b < end; b++) {                                                    \
            int64_t Tb = g->il[b], Sp = 2 * g->tl[b] + 1;                                          \
            bool zero = g->zero_inf && isinf(nll[b]);                                              \
            double *beta = zero || Tb == 0 ? NULL : malloc((Tb * Sp + g->C) * sizeof *beta);        \
            for (int64_t t = 0; t < g->T; t++)                                                     \
                for (int64_t c = 0; c < g->C; c++) gx[(t * g->N + b) * g->C + c] = 0;              \
            if (!beta) {                                                                           \
                if (!zero && Tb > 0) atomic_store(&j->failed, true);                               \
                continue;                                                                          \
            }                                                                                      \
            double *lcab = beta + Tb * Sp;                                                         \
            for (int64_t i = 0; i < Tb * Sp; i++) beta[i] = -INFINITY;                             \
            const TY *lend = lp + ((Tb - 1) * g->N + b) * g->C;                                     \
            double *bl = beta + (Tb - 1) * Sp;                                                     \
            bl[Sp - 1] = lend[label(g, b, Sp - 1)];                                                \
            if (Sp > 1) bl[Sp - 2] = lend[label(g, b, Sp - 2)];                                    \
            for (int64_t t = Tb - 2; t >= 0; t--) {                                                \
                const TY *lt = lp + (t * g->N + b) * g->C;                                          \
                double *cur = beta + t * Sp, *next = cur + Sp;                                     \
                for (int64_t s = 0; s < Sp; s++) {                                                 \
                    double v = next[s];                                                            \
                    if (s + 1 < Sp) v = lae(v, next[s + 1]);                                       \
                    if (s + 2 < Sp && may_skip(g, b, s + 2)) v = lae(v, next[s + 2]);              \
                    cur[s] = v + lt[label(g, b, s)];                                               \
                }                                                                                  \
            }                                                                                      \
            for (int64_t t = 0; t < Tb; t++) {                                                     \
                const TY *lt = lp + (t * g->N + b) * g->C, *at = alpha + (b * g->T + t) * g->W;     \
                for (int64_t c = 0; c < g->C; c++) lcab[c] = -INFINITY;                            \
                for (int64_t s = 0; s < Sp; s++) {                                                 \
                    int64_t l = label(g, b, s);                                                    \
                    lcab[l] = lae(lcab[l], at[s] + beta[t * Sp + s]);                              \
                }                                                                                  \
                TY *o = gx + (t * g->N + b) * g->C;                                                 \
                for (int64_t c = 0; c < g->C; c++)                                                 \
                    o[c] = (TY)((exp((double)lt[c]) - exp(lcab[c] + nll[b] - lt[c])) * gr[b]);      \
            }                                                                                      \
            free(beta);                                                                            \
        }                                                                                          \
    }

CTC_FNS(F32, float)
CTC_FNS(F64, double)

/* Runs fn over the samples: threads pay off above the grain (each sample's
 * recursion costs about T * W log-add-exps). */
static void run_samples(const ctc_geom *g, em_range_fn fn, ctc_job *j)
{
    em_parallel_for(g->N, g->T * g->W, EM_GRAIN_ROWS, fn, j);
}

/* in: log_probs, targets, lengths; out: nll, log_alpha */
em_status cpu_ctc_loss(const em_call *c)
{
    ctc_geom g;
    if (ctc_setup(c, c->in[1], c->in[2], &g)) return em_error_code();
    ctc_job j = {.g = &g, .lp = em_tensor_data(c->in[0]), .out = em_tensor_data(c->out[0]),
                 .alpha_out = em_tensor_data(c->out[1])};
    run_samples(&g, c->dtype == EM_F64 ? forward_F64 : forward_F32, &j);
    free(g.offsets);
    return EM_OK;
}

/* in: grad, log_probs, targets, lengths, nll, log_alpha; out: grad of log_probs */
em_status cpu_ctc_loss_backward(const em_call *c)
{
    ctc_geom g;
    if (ctc_setup(c, c->in[2], c->in[3], &g)) return em_error_code();
    ctc_job j = {.g = &g, .grad = em_tensor_data(c->in[0]), .lp = em_tensor_data(c->in[1]),
                 .nll = em_tensor_data(c->in[4]), .alpha = em_tensor_data(c->in[5]), .out = em_tensor_data(c->out[0])};
    run_samples(&g, c->dtype == EM_F64 ? backward_F64 : backward_F32, &j);
    free(g.offsets);
    /* a worker's error message lives in its own thread: report on ours */
    return atomic_load(&j.failed) ? em_fail(EM_ERR_MEMORY, "ctc_loss_backward: out of memory") : EM_OK;
}
