/* The op layer of the reductions that return indices or select an element:
 * max/min along a dim, argmax/argmin, median/nanmedian, mode. None has an
 * identity, so reduced dims must be nonempty (except a full median: NaN). */
#include "reduce_common.h"

/* Values (x's dtype) and int64 indices; `name` for messages. */
static em_status values_indices(em_op op, const char *name, const em_tensor *x, uint32_t mask, bool keepdim,
                                em_tensor **values, em_tensor **indices)
{
    em_reduce_plan p = {.op = op, .mask = mask, .keepdim = keepdim, .via = EM_DTYPE_NONE, .nout = 2};
    p.compute = p.kout[0] = em_reduce_compute_float((em_dtype)x->dtype);
    p.kout[1] = p.result[1] = EM_I64;
    p.result[0] = (em_dtype)x->dtype;
    em_tensor *r[2];
    em_status st = em_reduce_run(&p, x, r);
    *values = st ? NULL : r[0];
    *indices = st ? NULL : r[1];
    return st;
}

/* A dim op's checks: x, the dim, the dtypes PyTorch supports (`bad` lists
 * the rejected ones as a bitmask of dtypes) and a nonempty reduced dim. */
static em_status dim_checks(const em_tensor *x, int dim, const char *name, const char *kernel, unsigned bad,
                            uint32_t *mask)
{
    if (em_reduce_dim_mask(x, dim, name, mask)) return em_error_code();
    if (bad >> x->dtype & 1) return em_reduce_dtype_error(kernel, (em_dtype)x->dtype);
    return em_reduce_check_nonempty(x, *mask, false, name, EM_ERR_INDEX);
}

#define NO_DTYPES 0u
#define MEDIAN_BAD (1u << EM_F16 | 1u << EM_BOOL)

/* ---- max/min along a dim ------------------------------------------------- */

static em_status extremum_dim(em_op op, const char *name, const em_tensor *x, int dim, bool keepdim, em_tensor **values,
                              em_tensor **indices)
{
    uint32_t mask;
    *values = *indices = NULL;
    if (dim_checks(x, dim, name, name, NO_DTYPES, &mask)) return em_error_code();
    return values_indices(op, name, x, mask, keepdim, values, indices);
}

em_status em_max_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices)
{
    if (EM_NULL(x) || EM_NULL(values) || EM_NULL(indices)) return em_error_code();
    return extremum_dim(EM_OP_max_dim, "max", x, dim, keepdim, values, indices);
}
em_status em_min_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices)
{
    if (EM_NULL(x) || EM_NULL(values) || EM_NULL(indices)) return em_error_code();
    return extremum_dim(EM_OP_min_dim, "min", x, dim, keepdim, values, indices);
}

/* out= of a (values, indices) op: exact dtypes, as PyTorch. */
typedef em_status (*pair_fn)(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices);
static em_status pair_out(pair_fn fn, const char *name, em_tensor *values, em_tensor *indices, const em_tensor *x,
                          int dim, bool keepdim)
{
    em_tensor *outs[2] = {values, indices}, *r[2];
    em_dtype want[2] = {x ? (em_dtype)x->dtype : EM_F32, EM_I64};
    if (em_reduce_check_out(2, outs, x ? want : NULL, name) || fn(x, dim, keepdim, &r[0], &r[1]))
        return em_error_code();
    return em_reduce_into(2, outs, r, name);
}
em_status em_max_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim)
{
    return pair_out(em_max_dim, "max", values, indices, x, dim, keepdim);
}
em_status em_min_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim)
{
    return pair_out(em_min_dim, "min", values, indices, x, dim, keepdim);
}

/* ---- argmax/argmin --------------------------------------------------------- */

static em_tensor *arg_extremum(em_op op, const em_tensor *x, const int *dim, bool keepdim)
{
    const char *name = em_ops[op].name;
    em_reduce_plan p = {.op = op, .keepdim = keepdim, .via = EM_DTYPE_NONE, .nout = 1};
    if (em_reduce_mask(x, dim ? 1 : 0, dim, name, &p.mask)) return NULL;
    if (x->dtype == EM_BOOL) {
        em_reduce_dtype_error(op == EM_OP_argmax ? "argmax_cpu" : "argmin_cpu", EM_BOOL);
        return NULL;
    }
    if (em_reduce_check_nonempty(x, p.mask, !dim, name, EM_ERR_INDEX)) return NULL;
    p.compute = em_reduce_compute_float((em_dtype)x->dtype);
    p.kout[0] = p.result[0] = EM_I64;
    return em_reduce_run1(&p, x);
}

em_tensor *em_argmax(const em_tensor *x, const int *dim, bool keepdim)
{
    return arg_extremum(EM_OP_argmax, x, dim, keepdim);
}
em_tensor *em_argmin(const em_tensor *x, const int *dim, bool keepdim)
{
    return arg_extremum(EM_OP_argmin, x, dim, keepdim);
}

static em_status arg_out(em_op op, em_tensor *out, const em_tensor *x, const int *dim, bool keepdim)
{
    const char *name = em_ops[op].name;
    if (em_reduce_check_out(1, &out, &(em_dtype){EM_I64}, name)) return em_error_code();
    em_tensor *r = arg_extremum(op, x, dim, keepdim);
    return r ? em_reduce_into(1, &out, &r, name) : em_error_code();
}
em_status em_argmax_out(em_tensor *out, const em_tensor *x, const int *dim, bool keepdim)
{
    return arg_out(EM_OP_argmax, out, x, dim, keepdim);
}
em_status em_argmin_out(em_tensor *out, const em_tensor *x, const int *dim, bool keepdim)
{
    return arg_out(EM_OP_argmin, out, x, dim, keepdim);
}

/* ---- median, nanmedian, mode ------------------------------------------------ */

static em_tensor *median_all(em_op op, const em_tensor *x)
{
    const char *name = em_ops[op].name;
    em_reduce_plan p = {.op = op, .keepdim = false, .via = EM_DTYPE_NONE, .nout = 1};
    if (em_reduce_mask(x, 0, NULL, name, &p.mask)) return NULL;
    if (MEDIAN_BAD >> x->dtype & 1) {
        em_reduce_dtype_error("median_cpu", (em_dtype)x->dtype);
        return NULL;
    }
    p.compute = p.kout[0] = em_reduce_compute_float((em_dtype)x->dtype);
    p.result[0] = (em_dtype)x->dtype;
    return em_reduce_run1(&p, x);
}
em_tensor *em_median(const em_tensor *x) { return median_all(EM_OP_median, x); }
em_tensor *em_nanmedian(const em_tensor *x) { return median_all(EM_OP_nanmedian, x); }

static em_status select_dim(em_op op, const char *name, const char *kernel, unsigned bad, const em_tensor *x, int dim,
                            bool keepdim, em_tensor **values, em_tensor **indices)
{
    uint32_t mask;
    *values = *indices = NULL;
    if (dim_checks(x, dim, name, kernel, bad, &mask)) return em_error_code();
    return values_indices(op, name, x, mask, keepdim, values, indices);
}
em_status em_median_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices)
{
    if (EM_NULL(x) || EM_NULL(values) || EM_NULL(indices)) return em_error_code();
    return select_dim(EM_OP_median_dim, "median", "median_out", MEDIAN_BAD, x, dim, keepdim, values, indices);
}
em_status em_nanmedian_dim(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices)
{
    if (EM_NULL(x) || EM_NULL(values) || EM_NULL(indices)) return em_error_code();
    return select_dim(EM_OP_nanmedian_dim, "nanmedian", "median_out", MEDIAN_BAD, x, dim, keepdim, values, indices);
}
em_status em_mode(const em_tensor *x, int dim, bool keepdim, em_tensor **values, em_tensor **indices)
{
    if (EM_NULL(x) || EM_NULL(values) || EM_NULL(indices)) return em_error_code();
    return select_dim(EM_OP_mode, "mode", "mode", NO_DTYPES, x, dim, keepdim, values, indices);
}
em_status em_median_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim)
{
    return pair_out(em_median_dim, "median", values, indices, x, dim, keepdim);
}
em_status em_nanmedian_dim_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim)
{
    return pair_out(em_nanmedian_dim, "nanmedian", values, indices, x, dim, keepdim);
}
em_status em_mode_out(em_tensor *values, em_tensor *indices, const em_tensor *x, int dim, bool keepdim)
{
    return pair_out(em_mode, "mode", values, indices, x, dim, keepdim);
}
