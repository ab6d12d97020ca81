/* Ember's normalization, dropout, embedding: the hand-declared C API of the
 * EM_OP entries in ops/norm.def. */
#ifndef EMBER_NORM_H
#define EMBER_NORM_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
