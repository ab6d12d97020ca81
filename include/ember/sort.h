/* Ember's sort ops: the hand-declared C API of the EM_OP entries in ops/sort.def. */
#ifndef EMBER_SORT_H
#define EMBER_SORT_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
