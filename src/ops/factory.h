/* Op-layer helpers shared by the factory ops (factory.c) and the random ops
 * (random.c): both run a kernel that writes every element of one output
 * from scratch, into a new tensor, an out= tensor or a tensor in place. */
#ifndef EMBER_OPS_FACTORY_H
#define EMBER_OPS_FACTORY_H

#include "dispatch.h"

/* Dispatches `c` (inputs and params filled in) with `target` as its output.
 * Kernels get a contiguous output: a non-contiguous target is written
 * through a contiguous temporary. Errors if target has overlapping elements.
 * Bumps target's version on success; leaves it unchanged on failure. */
em_status em_generate(em_call *c, em_tensor *target);
/* A new tensor of (ndim, sizes, dt) written by `c`; NULL on error. */
em_tensor *em_generate_new(em_call *c, int ndim, const int64_t *sizes, em_dtype dt);
/* out= : writes into `out` when it already has shape (ndim, sizes), else
 * into a new tensor of out's dtype that is then copied into the resized
 * `out`, so a failure (even one the kernel finds) leaves `out` as it was. */
em_status em_generate_out(em_call *c, em_tensor *out, int ndim, const int64_t *sizes);

/* The range of finite values of dtype dt, as doubles (bool: [0, 1]). */
double em_dtype_lowest(em_dtype dt);
double em_dtype_max(em_dtype dt);
/* v rounded to dtype dt's precision (as storing and loading it does). */
double em_round_to_dtype(double v, em_dtype dt);
/* PyTorch's checked scalar conversion (c10::checked_convert): RuntimeError
 * "value cannot be converted to type <dt> without overflow" when v is out
 * of dt's range (unsigned types accept [-max, max], wrapping; floating
 * types accept inf and nan). */
em_status em_check_convert(double v, em_dtype dt, const char *op);

#endif
