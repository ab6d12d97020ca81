/* Ember's random ops: the hand-declared C API of the EM_OP entries in ops/random.def. */
#ifndef EMBER_RANDOM_H
#define EMBER_RANDOM_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
