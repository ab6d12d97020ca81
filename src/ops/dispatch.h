/* The op layer's contract with devices: an em_call carries one op's checked
 * arguments to a device kernel; a device (src/core/device.h) holds a table
 * of kernels, one slot per op, expanded from ops.def (Note [Dispatch]).
 *
 * Note [Dispatch]
 * The op layer validates every argument, computes result shapes and dtypes,
 * allocates outputs, then calls em_dispatch(). A kernel may assume valid
 * input: same device, shapes that fit, outputs allocated, no bad overlap.
 * A device's slot left NULL means "not implemented for <device>". */
#ifndef EMBER_DISPATCH_H
#define EMBER_DISPATCH_H

#include "../core/device.h"

#define EM_CALL_MAX_IN 6
#define EM_CALL_MAX_OUT 4

typedef struct em_call {
    em_op op;
    int nin, nout;
    em_tensor *out[EM_CALL_MAX_OUT];
    const em_tensor *in[EM_CALL_MAX_IN];
    /* dtype the kernel computes in (selects the per-dtype loop), and the
     * dtype each operand is read/written as (outputs first, then inputs);
     * an operand stored in another dtype is converted on the fly. */
    em_dtype dtype;
    int8_t operand_dtypes[EM_CALL_MAX_OUT + EM_CALL_MAX_IN];
    double f[4];     /* float params (the table's params, alpha, eps, ...) */
    int64_t i[8];    /* integer params: dims, flags, counts */
    const void *arg; /* op-specific struct when f[] and i[] do not fit */
} em_call;

/* Runs c->op on the device of its first tensor; checks every tensor shares
 * it (PyTorch's "Expected all tensors to be on the same device" error). On
 * success every output's version is bumped (it was written). */
em_status em_dispatch(const em_call *c);
void em_bump_outputs(const em_call *c);
/* The device kernel em_dispatch runs for c (NULL: none). */
em_kernel em_call_kernel(const em_call *c);
/* Runs c's kernel on plain copies of its operands that have lazy bits and
 * writes its outputs back through theirs (Note [Conjugate bit]; complex.c). */
em_status em_resolving_kernel(const em_call *c);
/* For ops whose kernels read a list of tensors through em_call.arg, out of
 * the resolve step's sight: *plain is NULL when no tensor of ts has lazy
 * bits, else a new array of n new references, those with bits replaced by
 * their values (free it with em_release_list). */
em_status em_resolve_list(int n, const em_tensor *const *ts, em_tensor ***plain);
void em_release_list(int n, em_tensor **ts);

/* Can a value of dtype `from` be written into `to` without a category loss
 * (PyTorch's canCast: no complex -> real, no float -> int, no non-bool -> bool)? */
bool em_can_cast(em_dtype from, em_dtype to);

/* Errors if writing to `out` while reading `in` would read a written value:
 * out overlaps itself (a stride-0 dim) or partially overlaps `in`. */
em_status em_check_overlap(const em_tensor *out, const em_tensor *in, const char *op);
/* Errors if `written` and `read` share any memory (identical geometry too):
 * for ops that read other elements than the one they write (index, scatter). */
em_status em_check_no_overlap(const em_tensor *written, const em_tensor *read, const char *op);

/* Checks a unary pointwise op's params for the dtype it computes in
 * (src/ops/unary.c): PyTorch's argument errors, such as clamp with no bound
 * or a bound that overflows the dtype. Run by the op layer before anything
 * is allocated or written; EM_OK for ops without such checks. */
em_status em_unary_check_params(em_op op, em_dtype compute, const double *params);

int em_infer_size(int n, const int64_t *sizes, int64_t numel, int64_t *out, const char *op);
bool em_view_possible(const em_tensor *t, int n, const int64_t *sizes, int64_t *strides);

/* r (consumed) laid out in f when f is channels_last(_3d) of r's rank, else r
 * itself: ops that keep their input's channels_last lay out their contiguous
 * result so (Note [Memory formats] in core.h). NULL-safe; copy_format.c. */
em_tensor *em_in_format(em_tensor *r, em_memory_format f);

#endif
