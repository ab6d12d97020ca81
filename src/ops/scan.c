/* The op layer of the scans along one dim: cumsum, cumprod (with dtype=,
 * out= and in place), cummax, cummin (values and indices), logcumsumexp. */
#include "reduce_common.h"

/* ---- cumsum, cumprod ----------------------------------------------------- */

/* Integral and bool inputs give int64 (computed in int64 and converted to a
 * narrower dtype= afterwards: wrapping makes that exact); PyTorch 1.13 has
 * no float16 or bool kernel. */
static em_tensor *cum_sum_like(em_op op, const em_tensor *x, int dim, em_dtype dtype)
{
    const char *name = em_ops[op].name;
    em_reduce_plan p = {.op = op, .same_shape = true, .via = dtype, .nout = 1};
    if (em_reduce_dim_mask(x, dim, name, &p.mask) || em_reduce_check_dtype_arg(dtype, name)) return NULL;
    em_dtype in = (em_dtype)x->dtype;
    em_dtype r = dtype != EM_DTYPE_NONE ? dtype : em_dtype_is_float(in) || em_dtype_is_complex(in) ? in : EM_I64;
    if (r == EM_F16 || r == EM_BOOL || r == EM_C32 || (em_dtype_is_complex(in) && !em_dtype_is_complex(r))) {
        em_reduce_dtype_error(op == EM_OP_cumsum ? "cumsum_out_cpu" : "cumprod_out_cpu", r);
        return NULL;
    }
    p.result[0] = r;
    p.compute = p.kout[0] = em_dtype_is_float(r) ? em_reduce_compute_float(r) : em_dtype_is_complex(r) ? r : EM_I64;
    return em_reduce_run1(&p, x);
}

em_tensor *em_cumsum(const em_tensor *x, int dim, em_dtype dtype)
{
    return cum_sum_like(EM_OP_cumsum, x, dim, dtype);
}
em_tensor *em_cumprod(const em_tensor *x, int dim, em_dtype dtype)
{
    return cum_sum_like(EM_OP_cumprod, x, dim, dtype);
}

/* out=: without dtype=, computes in out's dtype (as PyTorch). */
static em_status cum_out(em_op op, em_tensor *out, const em_tensor *x, int dim, em_dtype dtype)
{
    const char *name = em_ops[op].name;
    if (em_reduce_check_out(1, &out, dtype == EM_DTYPE_NONE ? NULL : &dtype, name)) return em_error_code();
    em_tensor *r = cum_sum_like(op, x, dim, dtype == EM_DTYPE_NONE ? (em_dtype)out->dtype : dtype);
    return r ? em_reduce_into(1, &out, &r, name) : em_error_code();
}
em_status em_cumsum_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype)
{
    return cum_out(EM_OP_cumsum, out, x, dim, dtype);
}
em_status em_cumprod_out(em_tensor *out, const em_tensor *x, int dim, em_dtype dtype)
{
    return cum_out(EM_OP_cumprod, out, x, dim, dtype);
}

static em_status cum_inplace(em_op op, em_tensor *self, int dim, em_dtype dtype)
{
    if (self && dtype != EM_DTYPE_NONE && dtype != self->dtype)
        return em_fail(EM_ERR_DTYPE, "%s_: Bad in-place call: input tensor dtype %s and output tensor dtype %s should "
                       "match", em_ops[op].name, em_dtype_name((em_dtype)self->dtype), em_dtype_name(dtype));
    return cum_out(op, self, self, dim, EM_DTYPE_NONE);
}
em_status em_cumsum_(em_tensor *self, int dim, em_dtype dtype) { return cum_inplace(EM_OP_cumsum, self, dim, dtype); }
em_status em_cumprod_(em_tensor *self, int dim, em_dtype dtype) { return cum_inplace(EM_OP_cumprod, self, dim, dtype); }

/* ---- cummax, cummin -------------------------------------------------------- */

static em_status cum_extremum(em_op op, const em_tensor *x, int dim, em_tensor **values, em_tensor **indices)
{
    const char *name = em_ops[op].name;
    em_reduce_plan p = {.op = op, .same_shape = true, .via = EM_DTYPE_NONE, .nout = 2};
    *values = *indices = NULL;
    if (em_reduce_dim_mask(x, dim, name, &p.mask)) return em_error_code();
    if (x->dtype == EM_F16) return em_reduce_dtype_error(op == EM_OP_cummax ? "cummax_cpu" : "cummin_cpu", EM_F16);
    p.compute = p.kout[0] = em_reduce_compute_float((em_dtype)x->dtype);
    p.result[0] = (em_dtype)x->dtype;
    p.kout[1] = p.result[1] = EM_I64;
    em_tensor *r[2];
    em_status st = em_reduce_run(&p, x, r);
    if (st == EM_OK) *values = r[0], *indices = r[1];
    return st;
}
em_status em_cummax(const em_tensor *x, int dim, em_tensor **values, em_tensor **indices)
{
    if (EM_NULL(x) || EM_NULL(values) || EM_NULL(indices)) return em_error_code();
    return cum_extremum(EM_OP_cummax, x, dim, values, indices);
}
em_status em_cummin(const em_tensor *x, int dim, em_tensor **values, em_tensor **indices)
{
    if (EM_NULL(x) || EM_NULL(values) || EM_NULL(indices)) return em_error_code();
    return cum_extremum(EM_OP_cummin, x, dim, values, indices);
}

static em_status cum_extremum_out(em_op op, em_tensor *values, em_tensor *indices, const em_tensor *x, int dim)
{
    const char *name = em_ops[op].name;
    em_tensor *outs[2] = {values, indices}, *r[2];
    em_dtype want[2] = {x ? (em_dtype)x->dtype : EM_F32, EM_I64};
    if (em_reduce_check_out(2, outs, x ? want : NULL, name) || cum_extremum(op, x, dim, &r[0], &r[1]))
        return em_error_code();
    return em_reduce_into(2, outs, r, name);
}
em_status em_cummax_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim)
{
    return cum_extremum_out(EM_OP_cummax, values, indices, x, dim);
}
em_status em_cummin_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim)
{
    return cum_extremum_out(EM_OP_cummin, values, indices, x, dim);
}

/* ---- logcumsumexp ------------------------------------------------------------ */

em_tensor *em_logcumsumexp(const em_tensor *x, int dim)
{
    em_reduce_plan p = {.op = EM_OP_logcumsumexp, .same_shape = true, .via = EM_DTYPE_NONE, .nout = 1};
    if (em_reduce_dim_mask(x, dim, "logcumsumexp", &p.mask)) return NULL;
    em_dtype in = (em_dtype)x->dtype;
    if (in != EM_F32 && in != EM_F64 && in != EM_BF16) {
        em_reduce_dtype_error("logcumsumexp_out_cpu", in);
        return NULL;
    }
    p.compute = p.kout[0] = em_reduce_compute_float(in);
    p.result[0] = in;
    return em_reduce_run1(&p, x);
}

em_status em_logcumsumexp_out(em_tensor *out, const em_tensor *x, int dim)
{
    if (em_reduce_check_out(1, &out, x ? &(em_dtype){(em_dtype)x->dtype} : NULL, "logcumsumexp"))
        return em_error_code();
    em_tensor *r = em_logcumsumexp(x, dim);
    return r ? em_reduce_into(1, &out, &r, "logcumsumexp") : em_error_code();
}
