/* Ember's pooling, padding, upsampling, pixel/channel shuffle: the hand-declared C API of the
 * EM_OP entries in ops/pool.def. */
#ifndef EMBER_POOL_H
#define EMBER_POOL_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
