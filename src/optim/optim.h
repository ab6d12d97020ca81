/* What the optimizer op layer (src/optim/step.c) hands its kernels. */
#ifndef EMBER_OPTIM_INTERNAL_H
#define EMBER_OPTIM_INTERNAL_H

#include "ember/optim.h"

typedef struct em_optim_args {
    em_optimizer alg;
    const em_optim_options *o;
    const em_optim_group *g; /* checked: every tensor contiguous, one dtype and device */
} em_optim_args;

#endif
