/* Ember's convolution (conv1d/2d/3d, transposed, im2col/unfold/fold): the hand-declared C API of the
 * EM_OP entries in ops/conv.def. */
#ifndef EMBER_CONV_H
#define EMBER_CONV_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
