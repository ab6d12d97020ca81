/* Ember's recurrent cells (fused gates): the hand-declared C API of the
 * EM_OP entries in ops/rnn.def. */
#ifndef EMBER_RNN_H
#define EMBER_RNN_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
