/* Ember's index ops: the hand-declared C API of the EM_OP entries in ops/index.def. */
#ifndef EMBER_INDEX_H
#define EMBER_INDEX_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
