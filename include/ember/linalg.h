/* Ember's linalg ops: the hand-declared C API of the EM_OP entries in ops/linalg.def. */
#ifndef EMBER_LINALG_H
#define EMBER_LINALG_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
