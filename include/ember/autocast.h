/* Automatic mixed precision (PyTorch's autocast), per thread. While autocast
 * is enabled for the CPU, the matrix products and convolutions (mm, bmm,
 * matmul, addmm, baddbmm, addbmm, linear, convolution) compute in the
 * autocast dtype (bfloat16) and the losses in float32, whatever the floating
 * dtypes of their inputs (float64 inputs are left alone); the casts are
 * recorded ops, so gradients flow back to the original dtypes. Casts of
 * leaf tensors that require grad (weights) are cached until
 * em_autocast_clear_cache(). Backward runs without autocast. */
#ifndef EMBER_AUTOCAST_H
#define EMBER_AUTOCAST_H
#include "core.h"

em_status em_autocast_set_enabled(em_device_type dev, bool enabled);
bool em_autocast_is_enabled(em_device_type dev);
/* The CPU supports bfloat16 only (EM_ERR_VALUE otherwise); the default. */
em_status em_autocast_set_dtype(em_device_type dev, em_dtype dt);
em_dtype em_autocast_get_dtype(em_device_type dev);
void em_autocast_set_cache_enabled(bool enabled);
bool em_autocast_is_cache_enabled(void);
/* Drops this thread's cached weight casts. */
void em_autocast_clear_cache(void);
/* Nesting of autocast regions (a binding's context managers): the new depth. */
int em_autocast_increment_nesting(void);
int em_autocast_decrement_nesting(void);

#endif
