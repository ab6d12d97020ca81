/* The op layer of softmax and log_softmax along one dim (numerically
 * stable: the kernels subtract the max first). */
#include "reduce_common.h"
#include <stdio.h>

static em_tensor *softmax_like(em_op op, const em_tensor *x, int dim, em_dtype dtype)
{
    const char *name = em_ops[op].name;
    em_reduce_plan p = {.op = op, .same_shape = true, .via = dtype, .nout = 1};
    if (em_reduce_dim_mask(x, dim, name, &p.mask) || em_reduce_check_dtype_arg(dtype, name)) return NULL;
    em_dtype r = dtype != EM_DTYPE_NONE ? dtype : (em_dtype)x->dtype;
    if (r != EM_F32 && r != EM_F64 && r != EM_BF16) { /* PyTorch 1.13 names its kernels */
        bool last = x->ndim == 0 || em_wrap_dim(dim, x->ndim, name) == x->ndim - 1;
        char kernel[64];
        snprintf(kernel, sizeof kernel, "%s%s_kernel_impl", name, last ? "_lastdim" : "");
        em_reduce_dtype_error(kernel, r);
        return NULL;
    }
    p.result[0] = r;
    p.compute = p.kout[0] = em_reduce_compute_float(r);
    return em_reduce_run1(&p, x);
}

em_tensor *em_softmax(const em_tensor *x, int dim, em_dtype dtype)
{
    return softmax_like(EM_OP_softmax, x, dim, dtype);
}
em_tensor *em_log_softmax(const em_tensor *x, int dim, em_dtype dtype)
{
    return softmax_like(EM_OP_log_softmax, x, dim, dtype);
}

static em_status softmax_out(em_op op, em_tensor *out, const em_tensor *x, int dim, em_dtype dtype)
{
    const char *name = em_ops[op].name;
    em_dtype want = dtype != EM_DTYPE_NONE ? dtype : x ? (em_dtype)x->dtype : EM_F32;
    if (em_reduce_check_out(1, &out, &want, name)) return em_error_code();
    em_tensor *r = softmax_like(op, x, dim, dtype);
    return r ? em_reduce_into(1, &out, &r, name) : em_error_code();
}
em_status em_softmax_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype)
{
    return softmax_out(EM_OP_softmax, out, x, dim, dtype);
}
em_status em_log_softmax_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype)
{
    return softmax_out(EM_OP_log_softmax, out, x, dim, dtype);
}
