/* The op layer of the statistical reductions: var, std, var_mean,
 * std_mean, norm and logsumexp. */
#include "reduce_common.h"
#include <math.h>

/* ---- var, std, var_mean, std_mean -------------------------------------- */

static em_status var_like(em_op op, const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim,
                          em_tensor **res);

/* Note [Complex var and norm]
 * The statistics of a complex x are those of its parts, as ops on
 * view_as_real(x) (whose last dim holds re, im): var(x) = var(re) + var(im)
 * (std its square root), the mean complex; norm(x, p) = norm(|x|, p), |x| the
 * 2-norm over the last dim (a complex dtype= gives that real value in it, as
 * torch.norm does). Autograd differentiates through these ops. */
static em_status var_complex(em_op op, const em_tensor *x, uint32_t mask, double correction, bool keepdim,
                             em_tensor **res)
{
    int dims[EM_MAX_DIMS], n = 0;
    for (int d = 0; d < x->ndim; d++)
        if (mask >> d & 1) dims[n++] = d;
    const int64_t one = 1;
    em_tensor *x1 = x->ndim ? NULL : em_reshape(x, 1, &one); /* a 0-d x: its one entry along dim 0 */
    if (!x->ndim) dims[n++] = 0, keepdim = false;
    em_tensor *r = em_view_as_real(x1 ? x1 : x);
    em_tensor *v = r ? em_var(r, n, dims, correction, keepdim) : NULL;
    em_tensor *s = v ? em_sum(v, 1, (const int[]){-1}, false, EM_DTYPE_NONE) : NULL;
    const bool root = op == EM_OP_std || op == EM_OP_std_mean;
    res[0] = s && root ? em_sqrt(s) : s ? em_retain(s) : NULL;
    if (res[0] && (op == EM_OP_var_mean || op == EM_OP_std_mean)) {
        res[1] = em_mean(x1 ? x1 : x, n, dims, keepdim, EM_DTYPE_NONE);
        if (!res[1]) em_release(res[0]), res[0] = NULL;
    }
    em_release(x1), em_release(r), em_release(v), em_release(s);
    return res[0] ? EM_OK : em_error_code();
}

static em_status var_like(em_op op, const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim,
                          em_tensor **res)
{
    const char *name = em_ops[op].name;
    bool pair = op == EM_OP_var_mean || op == EM_OP_std_mean;
    em_reduce_plan p = {.op = op, .keepdim = keepdim, .via = EM_DTYPE_NONE, .nout = pair ? 2 : 1};
    if (em_reduce_mask(x, ndims, dims, name, &p.mask)) return em_error_code();
    if (em_dtype_is_complex((em_dtype)x->dtype)) return var_complex(op, x, p.mask, correction, keepdim, res);
    if (!em_dtype_is_float((em_dtype)x->dtype))
        return em_fail(EM_ERR_DTYPE, "%s only support floating point and complex dtypes",
                       pair ? name : "std and var");
    p.compute = p.kout[0] = p.kout[1] = em_reduce_compute_float((em_dtype)x->dtype);
    p.result[0] = p.result[1] = (em_dtype)x->dtype;
    p.f[0] = correction;
    p.i[0] = op == EM_OP_std || op == EM_OP_std_mean; /* c->i[1]: take the square root */
    return em_reduce_run(&p, x, res);
}

em_tensor *em_var(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim)
{
    em_tensor *r;
    return var_like(EM_OP_var, x, ndims, dims, correction, keepdim, &r) ? NULL : r;
}
em_tensor *em_std(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim)
{
    em_tensor *r;
    return var_like(EM_OP_std, x, ndims, dims, correction, keepdim, &r) ? NULL : r;
}
em_status em_var_mean(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim,
                      em_tensor **var, em_tensor **mean)
{
    if (EM_NULL(x) || EM_NULL(var) || EM_NULL(mean)) return em_error_code();
    em_tensor *r[2];
    em_status st = var_like(EM_OP_var_mean, x, ndims, dims, correction, keepdim, r);
    *var = st ? NULL : r[0];
    *mean = st ? NULL : r[1];
    return st;
}
em_status em_std_mean(const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim,
                      em_tensor **std, em_tensor **mean)
{
    if (EM_NULL(x) || EM_NULL(std) || EM_NULL(mean)) return em_error_code();
    em_tensor *r[2];
    em_status st = var_like(EM_OP_std_mean, x, ndims, dims, correction, keepdim, r);
    *std = st ? NULL : r[0];
    *mean = st ? NULL : r[1];
    return st;
}

/* out= of var/std: computed in x's dtype, then converted; out must be a
 * float dtype (PyTorch names its std_cpu kernel in the error). */
static em_status var_out(em_op op, em_tensor *out, const em_tensor *x, int ndims, const int *dims, double correction,
                         bool keepdim)
{
    const char *name = em_ops[op].name;
    if (em_reduce_check_out(1, &out, NULL, name)) return em_error_code();
    if (!em_dtype_is_float((em_dtype)out->dtype)) return em_reduce_dtype_error("std_cpu", (em_dtype)out->dtype);
    em_tensor *r;
    if (var_like(op, x, ndims, dims, correction, keepdim, &r)) return em_error_code();
    return em_reduce_into(1, &out, &r, name);
}
em_status em_var_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim)
{
    return var_out(EM_OP_var, out, x, ndims, dims, correction, keepdim);
}
em_status em_std_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, double correction, bool keepdim)
{
    return var_out(EM_OP_std, out, x, ndims, dims, correction, keepdim);
}

/* ---- norm ---------------------------------------------------------------- */

em_tensor *em_norm(const em_tensor *x, double p, int ndims, const int *dims, bool keepdim, em_dtype dtype)
{
    em_reduce_plan pl = {.op = EM_OP_norm, .keepdim = keepdim, .via = dtype, .nout = 1};
    if (em_reduce_mask(x, ndims, dims, "norm", &pl.mask) || em_reduce_check_dtype_arg(dtype, "norm")) return NULL;
    if (em_dtype_is_complex((em_dtype)x->dtype)) { /* Note [Complex var and norm] */
        em_tensor *r = em_view_as_real(x), *a = r ? em_norm(r, 2, 1, (const int[]){-1}, false, EM_DTYPE_NONE) : NULL;
        em_tensor *n = a ? em_norm(a, p, ndims, dims, keepdim, em_dtype_to_real(dtype)) : NULL;
        em_tensor *y = n && em_dtype_is_complex(dtype) ? em_to_dtype(n, dtype) : em_retain(n); /* torch.norm's dtype= */
        em_release(r), em_release(a), em_release(n);
        return y;
    }
    if (!em_dtype_is_float((em_dtype)x->dtype))
        return em_error(EM_ERR_DTYPE, "norm(): input dtype should be either floating point or complex. Got %s instead.",
                        em_reduce_type_name((em_dtype)x->dtype));
    if (dtype != EM_DTYPE_NONE && !em_dtype_is_float(dtype))
        return em_error(EM_ERR_DTYPE, "norm(): the desired output dtype should be either floating point or complex. "
                        "Got %s instead.", em_reduce_type_name(dtype));
    pl.result[0] = dtype != EM_DTYPE_NONE ? dtype : (em_dtype)x->dtype;
    pl.compute = pl.kout[0] = em_reduce_compute_float(pl.result[0]);
    pl.f[0] = p;
    return em_reduce_run1(&pl, x);
}

em_status em_norm_out(em_tensor *out, const em_tensor *x, double p, int ndims, const int *dims, bool keepdim,
                      em_dtype dtype)
{
    if (em_reduce_check_out(1, &out, dtype == EM_DTYPE_NONE ? NULL : &dtype, "norm")) return em_error_code();
    em_tensor *r = em_norm(x, p, ndims, dims, keepdim, dtype == EM_DTYPE_NONE ? (em_dtype)out->dtype : dtype);
    return r ? em_reduce_into(1, &out, &r, "norm") : em_error_code();
}

/* ---- logsumexp ------------------------------------------------------------ */

em_tensor *em_logsumexp(const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    em_reduce_plan p = {.op = EM_OP_logsumexp, .keepdim = keepdim, .via = EM_DTYPE_NONE, .nout = 1};
    if (em_reduce_mask(x, ndims, dims, "logsumexp", &p.mask)) return NULL;
    em_dtype in = (em_dtype)x->dtype;
    if (in == EM_F16) {
        em_reduce_dtype_error("exp_vml_cpu", in);
        return NULL;
    }
    p.result[0] = em_dtype_is_float(in) ? in : em_get_default_dtype();
    p.compute = p.kout[0] = em_reduce_compute_float(p.result[0]);
    return em_reduce_run1(&p, x);
}

em_status em_logsumexp_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    if (em_reduce_check_out(1, &out, NULL, "logsumexp")) return em_error_code();
    if (!em_dtype_is_float((em_dtype)out->dtype))
        return em_fail(EM_ERR_DTYPE, "logsumexp(): Expected floating point type for result tensor, but got: %s",
                       em_reduce_type_name((em_dtype)out->dtype));
    if (out->dtype == EM_F16) return em_reduce_dtype_error("log_vml_cpu", EM_F16);
    em_tensor *r = em_logsumexp(x, ndims, dims, keepdim);
    return r ? em_reduce_into(1, &out, &r, "logsumexp") : em_error_code();
}
