/* The op layer's shared plumbing for reductions, scans and softmax
 * (src/ops/reduce*.c, scan.c, softmax.c): dims to a bitmask, PyTorch's
 * dtype names for messages, one runner that converts the input, allocates
 * and dispatches, and the out= epilogue. */
#ifndef EMBER_OPS_REDUCE_COMMON_H
#define EMBER_OPS_REDUCE_COMMON_H

#include "dispatch.h"

/* The reduced dims as a bitmask: each dim wrapped (IndexError when out of
 * range), a repeat is an error; ndims == 0 means every dim. A 0-d x accepts
 * dims 0 and -1 and gives an empty mask. Also checks x is not NULL. */
em_status em_reduce_mask(const em_tensor *x, int ndims, const int *dims, const char *name, uint32_t *mask);
/* One dim (scans, softmax, ops with a single dim): wrapped, as a mask. */
em_status em_reduce_dim_mask(const em_tensor *x, int dim, const char *name, uint32_t *mask);
static inline uint32_t em_reduce_all_dims(const em_tensor *x)
{
    return x->ndim ? (uint32_t)((1ull << x->ndim) - 1) : 0;
}

/* PyTorch's ScalarType name of dt ("Float", "Long") and its
 * `"<kernel>" not implemented for '<Type>'` error (EM_ERR_DTYPE). */
const char *em_reduce_type_name(em_dtype dt);
em_status em_reduce_dtype_error(const char *kernel, em_dtype dt);
/* dt must be a valid dtype or EM_DTYPE_NONE. */
em_status em_reduce_check_dtype_arg(em_dtype dt, const char *name);

/* max/argmax-like ops have no identity: every reduced dim must be nonempty,
 * and a reduction over every dim (dims not given) of an empty x errors with
 * `all_code` (PyTorch: RuntimeError for max, IndexError for argmax). */
em_status em_reduce_check_nonempty(const em_tensor *x, uint32_t mask, bool all_dims, const char *name,
                                   em_status all_code);

/* The dtype that a kernel computes `dt` in: float32 for the half types. */
static inline em_dtype em_reduce_compute_float(em_dtype dt) { return dt == EM_F16 || dt == EM_BF16 ? EM_F32 : dt; }

/* One call of a reduce-family kernel. x is converted to `via` (a dtype=
 * argument; EM_DTYPE_NONE: skip), then to `compute`; the kernel writes
 * outputs of dtypes kout[], returned converted to result[]. Outputs have x's
 * shape with size 1 in the masked dims (reductions), or x's shape (`same_shape`:
 * scans, softmax). Without keepdim the masked dims are dropped: by a view
 * afterwards (a recorded view node), or, with `kernel_drops`, by the kernel
 * writing an output that lacks them (em_red_call: one graph node, not two;
 * the op's backward formula must put the dims back, formulas_reduce.c). */
typedef struct em_reduce_plan {
    em_op op;
    uint32_t mask;
    bool keepdim, same_shape, kernel_drops;
    em_dtype via, compute;
    int nout;
    em_dtype kout[2], result[2];
    double f[4];     /* the kernel's c->f */
    int64_t i[7];    /* the kernel's c->i[1..7] (c->i[0] is the mask) */
} em_reduce_plan;

/* Runs p on x; on success res[k] (k < p->nout) are new references. On
 * failure nothing is leaked and res[] is left NULL. */
em_status em_reduce_run(const em_reduce_plan *p, const em_tensor *x, em_tensor **res);
/* The single-output case: the result or NULL. */
em_tensor *em_reduce_run1(const em_reduce_plan *p, const em_tensor *x);

/* The out= epilogue for n outputs: outs[k] (checked non-NULL and not
 * self-overlapping) are resized to res[k]'s shape and receive its values
 * (converted to their dtype). Releases res[] in every case. */
em_status em_reduce_into(int n, em_tensor *const *outs, em_tensor **res, const char *name);
/* out= checks done before computing: outs non-NULL, their dtype exactly
 * want[k] (PyTorch: "Expected out tensor to have dtype ..."). */
em_status em_reduce_check_out(int n, em_tensor *const *outs, const em_dtype *want, const char *name);

#endif
