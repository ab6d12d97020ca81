/* The optimizer op layer: checks a group and its options, stages tensors
 * that are not contiguous, and dispatches one fused step (src/cpu/optim.c). */
#include "optim.h"
#include "../ops/dispatch.h"
#include <stdlib.h>
#include <string.h>

/* Which state slots each algorithm may use (bit k: state[k]), whether it
 * counts steps, and whether it keeps per-tensor scalars. */
static const struct {
    const char *name;
    unsigned slots;
    bool steps, scalars;
} algs[EM_OPTIMIZER_COUNT] = {
    [EM_SGD] = {"SGD", 1, false, false},
    [EM_ADAM] = {"Adam", 7, true, false},
    [EM_ADAMW] = {"AdamW", 7, true, false},
    [EM_RMSPROP] = {"RMSprop", 7, false, false},
    [EM_ADAGRAD] = {"Adagrad", 1, true, false},
    [EM_ADADELTA] = {"Adadelta", 3, false, false},
    [EM_ADAMAX] = {"Adamax", 3, true, false},
    [EM_NADAM] = {"NAdam", 3, true, true},
    [EM_RADAM] = {"RAdam", 3, true, false},
};

unsigned em_optimizer_state_slots(em_optimizer alg, const em_optim_options *o)
{
    if (EM_NULL(o)) return 0;
    switch (alg) {
    case EM_SGD: return o->momentum != 0;
    case EM_ADAM:
    case EM_ADAMW: return o->amsgrad ? 7 : 3;
    case EM_RMSPROP: return 1 | (o->momentum > 0) << 1 | o->centered << 2;
    default: return (unsigned)alg < EM_OPTIMIZER_COUNT ? algs[alg].slots : 0;
    }
}

bool em_optimizer_uses_steps(em_optimizer alg) { return (unsigned)alg < EM_OPTIMIZER_COUNT && algs[alg].steps; }
bool em_optimizer_uses_scalars(em_optimizer alg) { return (unsigned)alg < EM_OPTIMIZER_COUNT && algs[alg].scalars; }

em_status em_optimizer_check(em_optimizer alg, const em_optim_options *o)
{
    if (EM_NULL(o)) return em_error_code();
    if ((unsigned)alg >= EM_OPTIMIZER_COUNT) return em_fail(EM_ERR_VALUE, "optimizer_step: unknown optimizer");
    /* PyTorch's constructor checks, with its messages */
    if (!(o->lr >= 0)) return em_fail(EM_ERR_VALUE, "Invalid learning rate: %g", o->lr);
    if (!(o->eps >= 0)) return em_fail(EM_ERR_VALUE, "Invalid epsilon value: %g", o->eps);
    if (!(o->weight_decay >= 0)) return em_fail(EM_ERR_VALUE, "Invalid weight_decay value: %g", o->weight_decay);
    if (!(o->momentum >= 0)) return em_fail(EM_ERR_VALUE, "Invalid momentum value: %g", o->momentum);
    if (alg == EM_SGD && o->nesterov && (o->momentum <= 0 || o->dampening != 0))
        return em_fail(EM_ERR_VALUE, "Nesterov momentum requires a momentum and zero dampening");
    bool betas = alg == EM_ADAM || alg == EM_ADAMW || alg == EM_ADAMAX || alg == EM_NADAM || alg == EM_RADAM;
    if (betas && !(o->beta1 >= 0 && o->beta1 < 1)) return em_fail(EM_ERR_VALUE, "Invalid beta parameter at index 0: %g", o->beta1);
    if (betas && !(o->beta2 >= 0 && o->beta2 < 1)) return em_fail(EM_ERR_VALUE, "Invalid beta parameter at index 1: %g", o->beta2);
    if (alg == EM_RMSPROP && !(o->alpha >= 0)) return em_fail(EM_ERR_VALUE, "Invalid alpha value: %g", o->alpha);
    if (alg == EM_ADADELTA && !(o->rho >= 0 && o->rho <= 1)) return em_fail(EM_ERR_VALUE, "Invalid rho value: %g", o->rho);
    if (alg == EM_ADAGRAD && !(o->lr_decay >= 0)) return em_fail(EM_ERR_VALUE, "Invalid lr_decay value: %g", o->lr_decay);
    if (alg == EM_NADAM && !(o->momentum_decay >= 0))
        return em_fail(EM_ERR_VALUE, "Invalid momentum_decay value: %g", o->momentum_decay);
    return EM_OK;
}

static bool same_shape(const em_tensor *a, const em_tensor *b)
{
    return a->ndim == b->ndim && !memcmp(a->sizes, b->sizes, a->ndim * sizeof *a->sizes);
}

static em_status check_like(const em_tensor *t, const em_tensor *p, const char *what, int i, const char *alg)
{
    if (!t) return em_fail(EM_ERR_VALUE, "%s: %s of parameter %d is missing", alg, what, i);
    if (t->dtype != p->dtype || t->storage->device.type != p->storage->device.type ||
        t->storage->device.index != p->storage->device.index)
        return em_fail(EM_ERR_TYPE, "%s: %s of parameter %d (%s) must have the parameter's dtype (%s) and device",
                       alg, what, i, em_dtype_name(t->dtype), em_dtype_name(p->dtype));
    if (!same_shape(t, p))
        return em_fail(EM_ERR_SHAPE, "%s: %s of parameter %d has a different shape than the parameter", alg, what, i);
    return EM_OK;
}

static em_status check_scalar(const em_tensor *t, const char *what, int i, const char *alg)
{
    if (!t || em_numel(t) != 1 || !em_dtype_is_float(t->dtype) || t->dtype == EM_F16 || t->dtype == EM_BF16 ||
        t->storage->device.type != EM_CPU)
        return em_fail(EM_ERR_VALUE, "%s: %s of parameter %d must be a one-element float32 or float64 CPU tensor",
                       alg, what, i);
    return EM_OK;
}

static em_status check_group(em_optimizer alg, const em_optim_group *g, unsigned slots)
{
    const char *name = algs[alg].name;
    const em_tensor *p0 = g->params ? g->params[0] : NULL;
    if (!g->params || !g->grads || !p0) return em_fail(EM_ERR_VALUE, "%s: parameters and gradients are required", name);
    if (p0->dtype != EM_F32 && p0->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "%s: parameters must be float32 or float64, got %s", name,
                       em_dtype_name(p0->dtype));
    for (int k = 0; k < 3; k++)
        if ((slots >> k & 1) && !g->state[k]) return em_fail(EM_ERR_VALUE, "%s: state slot %d is required", name, k);
    if (algs[alg].steps && !g->steps) return em_fail(EM_ERR_VALUE, "%s: step counts are required", name);
    if (algs[alg].scalars && !g->scalars) return em_fail(EM_ERR_VALUE, "%s: per-parameter scalars are required", name);
    bool grad_mode = em_grad_mode();
    for (int i = 0; i < g->n; i++) {
        const em_tensor *p = g->params[i];
        if (!p || p->dtype != p0->dtype || p->storage->device.type != p0->storage->device.type ||
            p->storage->device.index != p0->storage->device.index)
            return em_fail(EM_ERR_TYPE, "%s: all parameters of a group must share one dtype and device", name);
        if (grad_mode && em_requires_grad(p))
            return em_fail(EM_ERR_RUNTIME, "%s: a leaf Variable that requires grad is being used in an in-place "
                           "operation (run the step under no_grad).", name);
        if (check_like(g->grads[i], p, "gradient", i, name)) return em_error_code();
        for (int k = 0; k < 3; k++)
            if ((slots >> k & 1) && check_like(g->state[k][i], p, "state", i, name)) return em_error_code();
        if (algs[alg].steps && check_scalar(g->steps[i], "step", i, name)) return em_error_code();
        if (algs[alg].scalars && check_scalar(g->scalars[i], "scalar state", i, name)) return em_error_code();
    }
    return EM_OK;
}

/* Note [Staging]: kernels read and write flat memory, so a tensor that is
 * not contiguous is replaced by a contiguous copy for the step and the
 * updated values copied back afterwards. */
typedef struct staged {
    em_tensor **params, **grads, **state[3];
} staged;

static void unstage(staged *s, const em_optim_group *g, bool copy_back)
{
    for (int i = 0; i < g->n; i++) {
        if (s->params[i] && s->params[i] != g->params[i]) {
            if (copy_back) em_copy_(g->params[i], s->params[i]);
            em_release(s->params[i]);
        }
        if (s->grads[i]) em_release(s->grads[i]);
        for (int k = 0; k < 3; k++) {
            if (!s->state[k] || !s->state[k][i] || s->state[k][i] == g->state[k][i]) continue;
            if (copy_back) em_copy_(g->state[k][i], s->state[k][i]);
            em_release(s->state[k][i]);
        }
    }
    free(s->params);
    free(s->grads);
    for (int k = 0; k < 3; k++) free(s->state[k]);
}

/* A contiguous version of t, or t itself (borrowed) when it already is. */
static em_tensor *stage_one(em_tensor *t) { return em_is_contiguous(t) ? t : em_contiguous(t); }

static em_status stage(staged *s, const em_optim_group *g, unsigned slots)
{
    *s = (staged){0};
    size_t bytes = (size_t)g->n * sizeof(em_tensor *);
    s->params = calloc(1, bytes);
    s->grads = calloc(1, bytes);
    for (int k = 0; k < 3; k++)
        if (slots >> k & 1) s->state[k] = calloc(1, bytes);
    bool ok = s->params && s->grads;
    for (int k = 0; k < 3; k++) ok &= !(slots >> k & 1) || s->state[k];
    for (int i = 0; ok && i < g->n; i++) {
        ok = (s->params[i] = stage_one(g->params[i])) != NULL;
        /* gradients are only read: a staged copy is owned, a contiguous one borrowed (NULL here) */
        if (ok && !em_is_contiguous(g->grads[i])) ok = (s->grads[i] = em_contiguous(g->grads[i])) != NULL;
        for (int k = 0; ok && k < 3; k++)
            if (s->state[k]) ok = (s->state[k][i] = stage_one(g->state[k][i])) != NULL;
    }
    if (ok) return EM_OK;
    unstage(s, g, false);
    return em_error_code() ? em_error_code() : em_fail(EM_ERR_MEMORY, "optimizer_step: out of memory");
}

em_status em_optimizer_step(em_optimizer alg, const em_optim_options *o, const em_optim_group *g)
{
    if (EM_NULL(o) || EM_NULL(g) || em_optimizer_check(alg, o)) return em_error_code();
    if (g->n < 0) return em_fail(EM_ERR_VALUE, "optimizer_step: negative parameter count %d", g->n);
    if (g->n == 0) return EM_OK;
    unsigned slots = em_optimizer_state_slots(alg, o);
    if (check_group(alg, g, slots)) return em_error_code();
    staged s;
    if (stage(&s, g, slots)) return em_error_code();
    const em_tensor **grads = malloc(g->n * sizeof *grads);
    if (!grads) {
        unstage(&s, g, false);
        return em_fail(EM_ERR_MEMORY, "optimizer_step: out of memory");
    }
    for (int i = 0; i < g->n; i++) grads[i] = s.grads[i] ? s.grads[i] : g->grads[i];
    em_optim_group flat = {g->n, s.params, grads, {s.state[0], s.state[1], s.state[2]}, g->steps, g->scalars};
    em_optim_args args = {alg, o, &flat};
    em_call c = {.op = EM_OP_optimizer_step, .nin = 1, .in = {s.params[0]}, .arg = &args};
    em_status st = em_dispatch(&c);
    free(grads);
    unstage(&s, g, st == EM_OK);
    if (st) return st;
    for (int i = 0; i < g->n; i++) { /* written in place: saved copies of these now read as stale */
        em_bump_version(g->params[i]);
        for (int k = 0; k < 3; k++)
            if (slots >> k & 1) em_bump_version(g->state[k][i]);
        if (g->steps) em_bump_version(g->steps[i]);
        if (g->scalars) em_bump_version(g->scalars[i]);
    }
    return EM_OK;
}
