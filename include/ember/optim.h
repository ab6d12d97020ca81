/* Ember's optimizer steps: one call updates every parameter of a group in
 * place (a fused multi-tensor step), with PyTorch 1.13's update rules.
 * The Python optimizers (ember.optim) keep the state; C programs may call
 * em_optimizer_step directly with state tensors they own.
 *
 * Conventions (besides core.h's):
 * - Every tensor of a group has one float dtype (float32 or float64) and one
 *   device; a parameter, its gradient and its state tensors have the same
 *   shape. Any layout is accepted (contiguous ones are fastest).
 * - Steps run outside autograd: with grad mode on, a parameter that
 *   requires grad is refused (PyTorch's leaf in-place error), as in PyTorch
 *   where optimizer.step() runs under no_grad.
 * - A failed call changes nothing. */
#ifndef EMBER_OPTIM_H
#define EMBER_OPTIM_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum em_optimizer {
    EM_SGD,      /* state[0] momentum_buffer (momentum != 0) */
    EM_ADAM,     /* state exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad); steps */
    EM_ADAMW,    /* as Adam, with decoupled weight decay */
    EM_RMSPROP,  /* state square_avg, momentum_buffer (momentum > 0), grad_avg (centered) */
    EM_ADAGRAD,  /* state sum (start it at initial_accumulator_value); steps */
    EM_ADADELTA, /* state square_avg, acc_delta */
    EM_ADAMAX,   /* state exp_avg, exp_inf; steps */
    EM_NADAM,    /* state exp_avg, exp_avg_sq; steps; scalars mu_product (start at 1) */
    EM_RADAM,    /* state exp_avg, exp_avg_sq; steps */
    EM_OPTIMIZER_COUNT
} em_optimizer;

/* Hyperparameters; each algorithm reads the fields its PyTorch class has. */
typedef struct em_optim_options {
    double lr, weight_decay, eps;
    double momentum, dampening; /* SGD; RMSprop's momentum */
    double beta1, beta2;        /* Adam, AdamW, Adamax, NAdam, RAdam */
    double alpha;               /* RMSprop's smoothing constant */
    double rho;                 /* Adadelta */
    double lr_decay;            /* Adagrad */
    double momentum_decay;      /* NAdam */
    bool nesterov, maximize, amsgrad, centered;
    bool first_step; /* SGD: the momentum buffers are new: they take the first update (PyTorch's clone) */
} em_optim_options;

/* The tensors of one group: n parameters and their gradients, and per
 * parameter up to three state tensors (state[k] is NULL where the algorithm
 * or its options use no slot k), `steps` (0-d float tensors holding the
 * step count, incremented by the call; NULL for SGD, RMSprop, Adadelta,
 * whose updates do not depend on it) and `scalars` (0-d
 * float tensors, NAdam's mu_product; NULL otherwise). */
typedef struct em_optim_group {
    int n;
    em_tensor *const *params;
    const em_tensor *const *grads;
    em_tensor *const *state[3];
    em_tensor *const *steps;
    em_tensor *const *scalars;
} em_optim_group;

/* PyTorch's checks of the hyperparameters (its constructors' ValueErrors):
 * EM_ERR_VALUE naming the bad value. em_optimizer_step runs it too. */
em_status em_optimizer_check(em_optimizer alg, const em_optim_options *o);

/* Applies one step of `alg` to every parameter of the group. */
em_status em_optimizer_step(em_optimizer alg, const em_optim_options *o, const em_optim_group *g);

/* The state slots `alg` uses with these options, as a bit mask (bit k:
 * state[k]); and whether it needs steps / scalars. For callers that
 * allocate state. */
unsigned em_optimizer_state_slots(em_optimizer alg, const em_optim_options *o);
bool em_optimizer_uses_steps(em_optimizer alg);
bool em_optimizer_uses_scalars(em_optimizer alg);

#ifdef __cplusplus
}
#endif
#endif
