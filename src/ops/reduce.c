/* The op layer of the plain reductions: sum, nansum, mean, nanmean, prod,
 * max/min of everything, amax/amin, all, any, count_nonzero. Dtype rules
 * and edge cases follow PyTorch 1.13 (checked against it). */
#include "reduce_common.h"

/* ---- sum, nansum, prod, mean, nanmean --------------------------------- */

/* The result dtype of a sum-like op and the dtype its kernel computes in. */
static em_status sum_dtypes(em_op op, const em_tensor *x, em_dtype dtype, em_dtype *result, em_dtype *compute)
{
    const char *name = em_ops[op].name;
    em_dtype in = (em_dtype)x->dtype;
    if (em_reduce_check_dtype_arg(dtype, name)) return em_error_code();
    if (op == EM_OP_mean || op == EM_OP_nanmean) {
        if (op == EM_OP_nanmean && !em_dtype_is_float(in))
            return em_fail(EM_ERR_DTYPE, "nanmean(): expected input to have floating point dtype but got %s",
                           em_reduce_type_name(in));
        if (dtype == EM_DTYPE_NONE && !em_dtype_is_float(in) && !em_dtype_is_complex(in))
            return em_fail(EM_ERR_DTYPE, "%s(): could not infer output dtype. Input dtype must be either a floating "
                           "point or complex dtype. Got: %s", name, em_reduce_type_name(in));
        if (dtype != EM_DTYPE_NONE && !em_dtype_is_float(dtype) && !em_dtype_is_complex(dtype))
            return em_fail(EM_ERR_DTYPE, "%s(): could not infer output dtype. Optional dtype must be either a "
                           "floating point or complex dtype. Got: %s", name, em_reduce_type_name(dtype));
        *result = dtype != EM_DTYPE_NONE ? dtype : in;
        *compute = em_dtype_is_complex(*result) ? em_promote_types(*result, EM_C64) : em_reduce_compute_float(*result);
        return EM_OK;
    }
    /* sum, nansum, prod: integral and bool inputs give int64; complex32 computes in complex64 */
    *result = dtype != EM_DTYPE_NONE ? dtype : em_dtype_is_float(in) || em_dtype_is_complex(in) ? in : EM_I64;
    *compute = em_dtype_is_float(*result) ? em_reduce_compute_float(*result)
             : em_dtype_is_complex(*result) ? em_promote_types(*result, EM_C64) : EM_I64;
    if (op == EM_OP_nansum && em_dtype_is_float(in) && !em_dtype_is_float(*result))
        return em_reduce_dtype_error("nansum_cpu", *result);
    if (op == EM_OP_prod && (*result == EM_F16 || *result == EM_BF16))
        return em_reduce_dtype_error("prod_cpu", *result);
    return EM_OK;
}

static em_tensor *sum_like(em_op op, const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype)
{
    em_reduce_plan p = {.op = op, .keepdim = keepdim, .kernel_drops = true, .via = dtype, .nout = 1};
    if (em_reduce_mask(x, ndims, dims, em_ops[op].name, &p.mask)) return NULL;
    if (sum_dtypes(op, x, dtype, &p.result[0], &p.compute)) return NULL;
    p.kout[0] = p.compute;
    return em_reduce_run1(&p, x);
}

/* out=: without dtype=, the op computes in out's dtype (as PyTorch does),
 * though mean still requires a float input then. */
static em_status sum_like_out(em_op op, em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim,
                              em_dtype dtype)
{
    const char *name = em_ops[op].name;
    if (em_reduce_check_out(1, &out, dtype == EM_DTYPE_NONE ? NULL : &dtype, name)) return em_error_code();
    em_dtype result, compute; /* mean and nanmean still infer from the input */
    bool is_mean = op == EM_OP_mean || op == EM_OP_nanmean;
    if (is_mean && x && dtype == EM_DTYPE_NONE && sum_dtypes(op, x, dtype, &result, &compute)) return em_error_code();
    em_tensor *r = sum_like(op, x, ndims, dims, keepdim, dtype == EM_DTYPE_NONE ? (em_dtype)out->dtype : dtype);
    return r ? em_reduce_into(1, &out, &r, name) : em_error_code();
}

#define SUM_LIKE_API(name)                                                                              \
    em_tensor *em_##name(const em_tensor *x, int ndims, const int *dims, bool keepdim, em_dtype dtype)  \
    {                                                                                                   \
        return sum_like(EM_OP_##name, x, ndims, dims, keepdim, dtype);                                  \
    }                                                                                                   \
    em_status em_##name##_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim, \
                              em_dtype dtype)                                                           \
    {                                                                                                   \
        return sum_like_out(EM_OP_##name, out, x, ndims, dims, keepdim, dtype);                         \
    }
SUM_LIKE_API(sum)
SUM_LIKE_API(nansum)
SUM_LIKE_API(mean)
SUM_LIKE_API(nanmean)
SUM_LIKE_API(prod)

/* ---- max/min of everything, amax/amin --------------------------------- */

static em_tensor *extremum(em_op op, const char *name, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    em_reduce_plan p = {.op = op, .keepdim = keepdim, .via = EM_DTYPE_NONE, .nout = 1};
    if (em_reduce_mask(x, ndims, dims, name, &p.mask)) return NULL;
    if (em_reduce_check_nonempty(x, p.mask, ndims == 0, name, EM_ERR_RUNTIME)) return NULL;
    p.compute = p.kout[0] = em_reduce_compute_float((em_dtype)x->dtype);
    p.result[0] = (em_dtype)x->dtype;
    return em_reduce_run1(&p, x);
}

em_tensor *em_max(const em_tensor *x) { return extremum(EM_OP_max, "max", x, 0, NULL, false); }
em_tensor *em_min(const em_tensor *x) { return extremum(EM_OP_min, "min", x, 0, NULL, false); }
em_tensor *em_amax(const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return extremum(EM_OP_amax, "amax", x, ndims, dims, keepdim);
}
em_tensor *em_amin(const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return extremum(EM_OP_amin, "amin", x, ndims, dims, keepdim);
}

static em_status extremum_out(em_op op, em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    const char *name = em_ops[op].name;
    if (em_reduce_check_out(1, &out, x ? &(em_dtype){(em_dtype)x->dtype} : NULL, name)) return em_error_code();
    em_tensor *r = extremum(op, name, x, ndims, dims, keepdim);
    return r ? em_reduce_into(1, &out, &r, name) : em_error_code();
}
em_status em_amax_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return extremum_out(EM_OP_amax, out, x, ndims, dims, keepdim);
}
em_status em_amin_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return extremum_out(EM_OP_amin, out, x, ndims, dims, keepdim);
}

/* ---- all, any, count_nonzero ------------------------------------------ */

/* The kernels read bools; all/any give uint8 for uint8 input (PyTorch 1.13). */
static em_tensor *logical(em_op op, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    em_reduce_plan p = {.op = op, .keepdim = keepdim, .via = EM_DTYPE_NONE, .compute = EM_BOOL, .nout = 1};
    if (em_reduce_mask(x, ndims, dims, em_ops[op].name, &p.mask)) return NULL;
    p.kout[0] = op == EM_OP_count_nonzero ? EM_I64 : EM_BOOL;
    p.result[0] = op == EM_OP_count_nonzero ? EM_I64 : x->dtype == EM_U8 ? EM_U8 : EM_BOOL;
    return em_reduce_run1(&p, x);
}

em_tensor *em_all(const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return logical(EM_OP_all, x, ndims, dims, keepdim);
}
em_tensor *em_any(const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return logical(EM_OP_any, x, ndims, dims, keepdim);
}
em_tensor *em_count_nonzero(const em_tensor *x, int ndims, const int *dims)
{
    return logical(EM_OP_count_nonzero, x, ndims, dims, false);
}

static em_status logical_out(em_op op, em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    const char *name = em_ops[op].name;
    if (em_reduce_check_out(1, &out, NULL, name)) return em_error_code();
    if (out->dtype != EM_BOOL && out->dtype != EM_U8)
        return em_fail(EM_ERR_DTYPE, "%s only supports bool tensor for result, got: %s", name,
                       em_reduce_type_name((em_dtype)out->dtype));
    em_tensor *r = logical(op, x, ndims, dims, keepdim);
    return r ? em_reduce_into(1, &out, &r, name) : em_error_code();
}
em_status em_all_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return logical_out(EM_OP_all, out, x, ndims, dims, keepdim);
}
em_status em_any_out(em_tensor *out, const em_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return logical_out(EM_OP_any, out, x, ndims, dims, keepdim);
}
