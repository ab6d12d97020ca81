/* Ember's fused multi-tensor optimizer steps: the hand-declared C API of the
 * EM_OP entries in ops/optim.def. */
#ifndef EMBER_OPTIM_H
#define EMBER_OPTIM_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
