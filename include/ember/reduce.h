/* Ember's reduce ops: the hand-declared C API of the EM_OP entries in ops/reduce.def. */
#ifndef EMBER_REDUCE_H
#define EMBER_REDUCE_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
