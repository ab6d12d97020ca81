/* Ember's shape ops: the hand-declared C API of the EM_OP entries in ops/shape.def. */
#ifndef EMBER_SHAPE_H
#define EMBER_SHAPE_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
