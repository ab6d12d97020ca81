/* Shared by the loss family's op layer (src/nn/loss*.c): argument checks
 * and operand preparation. */
#ifndef EMBER_NN_LOSS_COMMON_H
#define EMBER_NN_LOSS_COMMON_H

#include "../ops/dispatch.h"
#include "ember/ember.h"

/* EM_ERR_VALUE "<r> is not a valid value for reduction" unless r is one of the enum's. */
em_status em_loss_check_reduction(em_reduction r, const char *op);
/* PyTorch refuses gradients for some loss arguments (weights): EM_ERR_RUNTIME
 * when t requires grad while grad mode is on. */
em_status em_loss_check_no_grad(const em_tensor *t, const char *op, const char *arg);
/* t converted to dt, broadcast to (ndim, shape) and made contiguous: every
 * step a recorded op, so gradients flow back to t. A new reference. */
em_tensor *em_loss_operand(const em_tensor *t, em_dtype dt, int ndim, const int64_t *shape);

#endif
