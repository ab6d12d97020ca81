/* Fused optimizer steps: every parameter of a group updated in one call.
 * Per-tensor scalars (bias corrections from the step count) are computed
 * first; then the elementwise updates run over chunks of all tensors in one
 * parallel region, so a model of many small parameters still uses every
 * thread. Each update follows PyTorch 1.13's single-tensor code operation
 * by operation, in the parameter's dtype. */
#include "cpu.h"
#include "../optim/optim.h"
#include <stdlib.h>

enum { CHUNK = 16384 };

/* Per-tensor scalars of one step. */
typedef struct coefs {
    double a, b, c;
} coefs;

static double read_scalar(const em_tensor *t)
{
    const void *p = em_data_ptr(t);
    return t->dtype == EM_F64 ? *(const double *)p : *(const float *)p;
}

static void write_scalar(em_tensor *t, double v)
{
    void *p = em_data_ptr(t);
    if (t->dtype == EM_F64) *(double *)p = v;
    else *(float *)p = (float)v;
}

/* Advances step (and NAdam's mu_product) of tensor i; returns its scalars. */
static coefs step_coefs(const em_optim_args *s, int i)
{
    const em_optim_options *o = s->o;
    const em_optim_group *g = s->g;
    coefs k = {0};
    if (!g->steps) return k;
    double step = read_scalar(g->steps[i]) + 1;
    write_scalar(g->steps[i], step);
    double b1 = o->beta1, b2 = o->beta2;
    switch (s->alg) {
    case EM_ADAM:
    case EM_ADAMW:
        k.a = -(o->lr / (1 - pow(b1, step))); /* -step_size */
        k.b = sqrt(1 - pow(b2, step));       /* bias_correction2_sqrt */
        break;
    case EM_ADAGRAD: k.a = -(o->lr / (1 + (step - 1) * o->lr_decay)); break;
    case EM_ADAMAX: k.a = -(o->lr / (1 - pow(b1, step))); break;
    case EM_NADAM: {
        double mu = b1 * (1 - 0.5 * pow(0.96, step * o->momentum_decay));
        double mu_next = b1 * (1 - 0.5 * pow(0.96, (step + 1) * o->momentum_decay));
        write_scalar(g->scalars[i], read_scalar(g->scalars[i]) * mu);
        double mu_product = read_scalar(g->scalars[i]); /* as stored (PyTorch keeps a float32 tensor) */
        k.a = 1 - pow(b2, step);                    /* bias_correction2 */
        k.b = -o->lr * (1 - mu) / (1 - mu_product); /* grad's coefficient */
        /* exp_avg's: PyTorch 1.13 multiplies mu in twice (mu_product * mu * mu_next); kept for parity */
        k.c = -o->lr * mu_next / (1 - mu_product * mu * mu_next);
        break;
    }
    case EM_RADAM: {
        double bc1 = 1 - pow(b1, step), bc2 = 1 - pow(b2, step);
        double rho_inf = 2 / (1 - b2) - 1;
        double rho_t = rho_inf - 2 * step * pow(b2, step) / bc2;
        k.a = bc1;
        k.b = sqrt(bc2);
        k.c = rho_t > 5 ? sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 0;
        break;
    }
    default: break;
    }
    return k;
}

/* Adam's first and second moments of gradient d, stored back: m and v. */
#define ADAM_MOMENTS(T)                          \
    T m = s0[i] * b1 + (1 - b1) * d;             \
    T v = s1[i] * b2 + (1 - b2) * (d * d);       \
    s0[i] = m;                                   \
    s1[i] = v;

/* The elementwise update of n elements for one dtype T. */
#define DEFINE_UPDATE(T, SQRT)                                                                         \
    EM_SIMD static void update_##T(const em_optim_args *s, coefs k, T *restrict p, const T *restrict g, \
                           T *restrict s0, T *restrict s1, T *restrict s2, int64_t n)                  \
    {                                                                                                  \
        const em_optim_options *o = s->o;                                                              \
        const T lr = (T)o->lr, wd = (T)o->weight_decay, eps = (T)o->eps, sign = o->maximize ? -1 : 1; \
        const T b1 = (T)o->beta1, b2 = (T)o->beta2, ka = (T)k.a, kb = (T)k.b, kc = (T)k.c;             \
        /* loop invariants in locals: GCC then unswitches and vectorizes the loops */                  \
        const bool decay = o->weight_decay != 0, first = o->first_step, nesterov = o->nesterov;        \
        const bool has_momentum = o->momentum != 0, amsgrad = o->amsgrad, adamw = s->alg == EM_ADAMW;  \
        const bool centered = o->centered;                                                             \
        switch (s->alg) {                                                                              \
        case EM_SGD: {                                                                                 \
            const T m = (T)o->momentum, damp = (T)(1 - o->dampening);                                  \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = sign * g[i];                                                                     \
                if (decay) d = d + wd * p[i];                                                          \
                if (has_momentum) {                                                                    \
                    T buf = first ? d : s0[i] * m + damp * d;                                         \
                    s0[i] = buf;                                                                       \
                    d = nesterov ? d + m * buf : buf;                                                  \
                }                                                                                      \
                p[i] = p[i] - lr * d;                                                                  \
            }                                                                                          \
            break;                                                                                     \
        }                                                                                              \
        case EM_ADAM:                                                                                  \
        case EM_ADAMW: {                                                                               \
            const bool l2 = decay && s->alg == EM_ADAM;                                                \
            const T shrink = (T)(1 - o->lr * o->weight_decay);                                         \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = sign * g[i];                                                                     \
                if (adamw) p[i] = p[i] * shrink;                                                       \
                else if (l2) d = d + wd * p[i];                                                        \
                ADAM_MOMENTS(T)                                                                        \
                if (amsgrad) v = s2[i] = v > s2[i] ? v : s2[i];                                        \
                T denom = SQRT(v) / kb + eps;                                                          \
                p[i] = p[i] + ka * (m / denom);                                                        \
            }                                                                                          \
            break;                                                                                     \
        }                                                                                              \
        case EM_RMSPROP: {                                                                             \
            const T a = (T)o->alpha, m = (T)o->momentum;                                               \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = sign * g[i];                                                                     \
                if (decay) d = d + wd * p[i];                                                          \
                T sq = s0[i] * a + (1 - a) * (d * d);                                                  \
                s0[i] = sq;                                                                            \
                T avg;                                                                                 \
                if (centered) {                                                                        \
                    T ga = s2[i] * a + (1 - a) * d;                                                    \
                    s2[i] = ga;                                                                        \
                    avg = SQRT(sq - ga * ga) + eps;                                                    \
                } else {                                                                               \
                    avg = SQRT(sq) + eps;                                                              \
                }                                                                                      \
                if (o->momentum > 0) {                                                                 \
                    T buf = s1[i] * m + d / avg;                                                       \
                    s1[i] = buf;                                                                       \
                    p[i] = p[i] - lr * buf;                                                            \
                } else {                                                                               \
                    p[i] = p[i] - lr * (d / avg);                                                      \
                }                                                                                      \
            }                                                                                          \
            break;                                                                                     \
        }                                                                                              \
        case EM_ADAGRAD:                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = sign * g[i];                                                                     \
                if (decay) d = d + wd * p[i];                                                          \
                T sum = s0[i] + d * d;                                                                 \
                s0[i] = sum;                                                                           \
                p[i] = p[i] + ka * (d / (SQRT(sum) + eps));                                            \
            }                                                                                          \
            break;                                                                                     \
        case EM_ADADELTA: {                                                                            \
            const T rho = (T)o->rho;                                                                   \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = sign * g[i];                                                                     \
                if (decay) d = d + wd * p[i];                                                          \
                T sq = s0[i] * rho + (1 - rho) * (d * d);                                              \
                s0[i] = sq;                                                                            \
                T delta = SQRT(s1[i] + eps) / SQRT(sq + eps) * d;                                      \
                s1[i] = s1[i] * rho + (1 - rho) * (delta * delta);                                     \
                p[i] = p[i] - lr * delta;                                                              \
            }                                                                                          \
            break;                                                                                     \
        }                                                                                              \
        case EM_ADAMAX:                                                                                \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = sign * g[i];                                                                     \
                if (decay) d = d + wd * p[i];                                                          \
                T m = s0[i] * b1 + (1 - b1) * d;                                                       \
                T u = s1[i] * b2, ad = (d < 0 ? -d : d) + eps;                                         \
                u = u > ad ? u : ad;                                                                   \
                s0[i] = m;                                                                             \
                s1[i] = u;                                                                             \
                p[i] = p[i] + ka * (m / u);                                                            \
            }                                                                                          \
            break;                                                                                     \
        case EM_NADAM:                                                                                 \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = g[i];                                                                            \
                if (decay) d = d + wd * p[i];                                                          \
                ADAM_MOMENTS(T)                                                                        \
                T denom = SQRT(v / ka) + eps;                                                          \
                T q = p[i] + kb * (d / denom);                                                         \
                p[i] = q + kc * (m / denom);                                                           \
            }                                                                                          \
            break;                                                                                     \
        case EM_RADAM:                                                                                 \
            for (int64_t i = 0; i < n; i++) {                                                          \
                T d = g[i];                                                                            \
                if (decay) d = d + wd * p[i];                                                          \
                ADAM_MOMENTS(T)                                                                        \
                T bcm = m / ka;                                                                        \
                p[i] = kc != 0 ? p[i] - bcm * lr * (kb / (SQRT(v) + eps)) * kc : p[i] - bcm * lr;      \
            }                                                                                          \
            break;                                                                                     \
        default: break;                                                                                \
        }                                                                                              \
    }

DEFINE_UPDATE(float, sqrtf)
DEFINE_UPDATE(double, sqrt)

static void *at(const em_tensor *t, int64_t off)
{
    return t ? (char *)em_data_ptr(t) + off * (int64_t)em_dtypes[t->dtype].size : NULL;
}

/* Updates elements [off, off + n) of tensor i. */
static void update_range(const em_optim_args *s, const coefs *k, int i, int64_t off, int64_t n)
{
    const em_optim_group *g = s->g;
    em_tensor *st[3];
    for (int j = 0; j < 3; j++) st[j] = g->state[j] ? g->state[j][i] : NULL;
    if (g->params[i]->dtype == EM_F64)
        update_double(s, k[i], at(g->params[i], off), at(g->grads[i], off), at(st[0], off), at(st[1], off),
                      at(st[2], off), n);
    else
        update_float(s, k[i], at(g->params[i], off), at(g->grads[i], off), at(st[0], off), at(st[1], off),
                     at(st[2], off), n);
}

typedef struct step_job {
    const em_optim_args *s;
    const coefs *k;
    const int64_t *first_chunk;
} step_job;

static void step_chunks(void *p, int64_t begin, int64_t end)
{
    const step_job *j = p;
    const em_optim_group *g = j->s->g;
    for (int64_t ch = begin; ch < end; ch++) {
        int lo = 0, hi = g->n - 1; /* the tensor holding chunk ch: first_chunk[t] <= ch < first_chunk[t + 1] */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (j->first_chunk[mid] <= ch) lo = mid;
            else hi = mid - 1;
        }
        int64_t off = (ch - j->first_chunk[lo]) * CHUNK, numel = em_numel(g->params[lo]);
        update_range(j->s, j->k, lo, off, numel - off < CHUNK ? numel - off : CHUNK);
    }
}

em_status cpu_optimizer_step(const em_call *c)
{
    const em_optim_args *s = c->arg;
    const em_optim_group *g = s->g;
    coefs *k = malloc(g->n * sizeof *k);
    int64_t *first_chunk = malloc((g->n + 1) * sizeof *first_chunk); /* chunk index where tensor i starts */
    if (!k || !first_chunk) {
        free(k);
        free(first_chunk);
        return em_fail(EM_ERR_MEMORY, "optimizer_step: out of memory");
    }
    int64_t total = 0;
    first_chunk[0] = 0;
    for (int i = 0; i < g->n; i++) {
        k[i] = step_coefs(s, i);
        int64_t numel = em_numel(g->params[i]);
        total += numel;
        first_chunk[i + 1] = first_chunk[i] + (numel + CHUNK - 1) / CHUNK;
    }
    int64_t chunks = first_chunk[g->n];
    step_job j = {s, k, first_chunk};
    em_parallel_for(chunks, total / (chunks ? chunks : 1), EM_GRAIN, step_chunks, &j);
    free(k);
    free(first_chunk);
    return EM_OK;
}
