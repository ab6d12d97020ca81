/* Ember's fused losses: the hand-declared C API of the
 * EM_OP entries in ops/loss.def. */
#ifndef EMBER_LOSS_H
#define EMBER_LOSS_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
