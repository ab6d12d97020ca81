/* Ember's scaled dot-product attention: the hand-declared C API of the
 * EM_OP entries in ops/attention.def. */
#ifndef EMBER_ATTENTION_H
#define EMBER_ATTENTION_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
