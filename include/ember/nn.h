/* Ember's nn composites that are not ops of the table: layers built from
 * recorded ops (so autograd, every dtype and every device come for free). */
#ifndef EMBER_NN_H
#define EMBER_NN_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* linear: input @ weight^T + bias (torch.nn.functional.linear).
 * input (*, in), weight (out, in) or (in) (then the last dim is reduced),
 * bias (out) or NULL, or any shape that broadcasts to the result's shape
 * without changing it. A 2-d input with a bias is one addmm; otherwise
 * matmul then add. Errors (NULL): weight of more than 2 dims, sizes that
 * cannot be multiplied, a bias that does not broadcast to the result, dtypes
 * that differ. Returns a new reference; arguments are borrowed. */
em_tensor *em_linear(const em_tensor *input, const em_tensor *weight, const em_tensor *bias);

#ifdef __cplusplus
}
#endif
#endif
