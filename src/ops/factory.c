/* The op layer of the factory ops (arange, linspace, logspace, eye): their
 * argument checks, result sizes and dtypes, and the helpers every
 * "write a whole tensor" op shares (factory.h). Kernels: src/cpu/factory.c. */
#include "factory.h"
#include <float.h>
#include <math.h>

/* ---- shared helpers (factory.h) ---------------------------------------- */
em_status em_generate(em_call *c, em_tensor *target)
{
    const char *name = em_ops[c->op].name;
    if (!target) return em_fail(EM_ERR_VALUE, "%s: output tensor is NULL", name);
    if (em_check_overlap(target, NULL, name)) return em_error_code();
    em_tensor *dst = target;
    if (!em_is_contiguous(target)) {
        dst = em_tensor_new(target->ndim, target->sizes, (em_dtype)target->dtype, target->storage->device);
        if (!dst) return em_error_code();
    }
    c->nout = 1;
    c->out[0] = dst;
    c->dtype = (em_dtype)dst->dtype;
    c->operand_dtypes[0] = dst->dtype;
    em_status st = em_dispatch(c);
    if (dst != target) {
        if (st == EM_OK) st = em_copy_(target, dst);
        em_release(dst);
    }
    return st;
}

em_tensor *em_generate_new(em_call *c, int ndim, const int64_t *sizes, em_dtype dt)
{
    em_tensor *t = em_empty(ndim, sizes, dt);
    if (t && em_generate(c, t)) {
        em_release(t);
        return NULL;
    }
    return t;
}

em_status em_generate_out(em_call *c, em_tensor *out, int ndim, const int64_t *sizes)
{
    if (!out) return em_fail(EM_ERR_VALUE, "%s: out is NULL", em_ops[c->op].name);
    if (out->ndim == ndim && !memcmp(out->sizes, sizes, ndim * sizeof *sizes)) return em_generate(c, out);
    em_tensor *r = em_generate_new(c, ndim, sizes, (em_dtype)out->dtype);
    if (!r) return em_error_code();
    em_status st = em_resize_(out, ndim, sizes);
    if (st == EM_OK) st = em_copy_(out, r);
    em_release(r);
    return st;
}

double em_dtype_lowest(em_dtype dt)
{
    switch (dt) {
    case EM_U8: return 0;
    case EM_I8: return INT8_MIN;
    case EM_I16: return INT16_MIN;
    case EM_I32: return INT32_MIN;
    case EM_I64: return (double)INT64_MIN;
    case EM_F16: return -65504.0;
    case EM_F32: return -FLT_MAX;
    case EM_BF16: return -0x1.fep127;
    case EM_BOOL: return 0;
    default: return -DBL_MAX;
    }
}

double em_dtype_max(em_dtype dt)
{
    switch (dt) {
    case EM_U8: return UINT8_MAX;
    case EM_I8: return INT8_MAX;
    case EM_I16: return INT16_MAX;
    case EM_I32: return INT32_MAX;
    case EM_I64: return 0x1p63; /* INT64_MAX rounds up to 2^63: compare with >= */
    case EM_F16: return 65504.0;
    case EM_F32: return FLT_MAX;
    case EM_BF16: return 0x1.fep127;
    case EM_BOOL: return 1;
    default: return DBL_MAX;
    }
}

double em_round_to_dtype(double v, em_dtype dt)
{
    _Alignas(16) char buf[EM_MAX_ITEMSIZE];
    em_store_f64(buf, dt, v);
    return em_load_f64(buf, dt);
}

em_status em_check_convert(double v, em_dtype dt, const char *op)
{
    bool bad;
    if (dt == EM_BOOL) return EM_OK;
    if (em_dtype_is_float(dt))
        bad = isfinite(v) && (v < em_dtype_lowest(dt) || v > em_dtype_max(dt));
    else if (dt == EM_U8)
        bad = !(v > -256.0 && v < 256.0);
    else
        bad = !(v >= em_dtype_lowest(dt) && (dt == EM_I64 ? v < em_dtype_max(dt) : v <= em_dtype_max(dt)));
    if (bad)
        return em_fail(EM_ERR_RUNTIME, "%s: value %g cannot be converted to type %s without overflow", op, v,
                       em_dtypes[dt].name);
    return EM_OK;
}

/* ---- arange ------------------------------------------------------------- */
/* A Python number as given: an int (exact) or a float. */
typedef struct number {
    bool is_int;
    int64_t i;
    double d;
} number;

static number num_f(double d) { return (number){false, (int64_t)0, d}; }
static number num_i(int64_t i) { return (number){true, i, (double)i}; }

/* x as an int64 (PyTorch's Scalar.to<int64_t>(): truncation, checked). */
static em_status to_i64(number x, int64_t *out)
{
    if (x.is_int) {
        *out = x.i;
        return EM_OK;
    }
    if (em_check_convert(x.d, EM_I64, "arange")) return em_error_code();
    *out = (int64_t)x.d;
    return EM_OK;
}

/* Checks arange's arguments for dtype dt (in the dtype's accumulate type:
 * int64 for integral dtypes, float for half types, else double, as
 * PyTorch) and fills the kernel's params and the result size. */
static em_status arange_setup(em_call *c, number start, number end, number step, em_dtype dt, int64_t *size)
{
    *c = (em_call){.op = EM_OP_arange};
    if (dt == EM_BOOL) return em_fail(EM_ERR_DTYPE, "\"arange_cpu\" not implemented for '%s'", em_dtypes[dt].name);
    double xstart, xend, xstep, size_d;
    if (em_dtype_is_int(dt)) {
        int64_t s = 0, e = 0, st = 0;
        if (to_i64(start, &s) || to_i64(end, &e) || to_i64(step, &st)) return em_error_code();
        xstart = (double)s, xend = (double)e, xstep = (double)st;
        c->i[0] = s, c->i[1] = st;
        if (st == 0) return em_fail(EM_ERR_RUNTIME, "arange: step must be nonzero");
        if (!((st > 0 && e >= s) || (st < 0 && e <= s)))
            return em_fail(EM_ERR_RUNTIME, "arange: upper bound and larger bound inconsistent with step sign");
        /* int64 results size exactly from the truncated bounds, others in
         * double from the given ones */
        size_d = dt == EM_I64 ? (double)(((__int128)e - s + st - (st > 0 ? 1 : -1)) / st)
                              : ceil((end.d - start.d) / step.d);
    } else {
        bool half = dt == EM_F16 || dt == EM_BF16;
        if (half && (em_check_convert(start.d, EM_F32, "arange") || em_check_convert(end.d, EM_F32, "arange") ||
                     em_check_convert(step.d, EM_F32, "arange")))
            return em_error_code();
        xstart = half ? (float)start.d : start.d;
        xend = half ? (float)end.d : end.d;
        xstep = half ? (float)step.d : step.d;
        if (xstep == 0) return em_fail(EM_ERR_RUNTIME, "arange: step must be nonzero");
        if (!isfinite(xstart) || !isfinite(xend))
            return em_fail(EM_ERR_RUNTIME, "arange: unsupported range: %g -> %g", start.d, end.d);
        if (!((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart)))
            return em_fail(EM_ERR_RUNTIME, "arange: upper bound and larger bound inconsistent with step sign");
        size_d = ceil((end.d - start.d) / step.d);
    }
    if (!(size_d >= 0 && size_d <= (double)INT64_MAX))
        return em_fail(EM_ERR_RUNTIME, "arange: invalid size, possible overflow?");
    c->f[0] = xstart, c->f[1] = xstep;
    *size = (int64_t)size_d;
    return em_check_sizes(1, size, dt, "arange");
}

static em_tensor *arange_new(number start, number end, number step, em_dtype dt)
{
    em_call c;
    int64_t n;
    if (!em_dtype_valid(dt)) return em_error(EM_ERR_DTYPE, "arange: invalid dtype %d", (int)dt);
    if (arange_setup(&c, start, end, step, dt, &n)) return NULL;
    return em_generate_new(&c, 1, &n, dt);
}

static em_status arange_out(em_tensor *out, number start, number end, number step)
{
    em_call c;
    int64_t n;
    if (!out) return em_fail(EM_ERR_VALUE, "arange: out is NULL");
    if (arange_setup(&c, start, end, step, (em_dtype)out->dtype, &n)) return em_error_code();
    return em_generate_out(&c, out, 1, &n);
}

em_tensor *em_arange(double start, double end, double step, em_dtype dt)
{
    return arange_new(num_f(start), num_f(end), num_f(step), dt == EM_DTYPE_NONE ? em_get_default_dtype() : dt);
}

em_tensor *em_arange_int(int64_t start, int64_t end, int64_t step, em_dtype dt)
{
    return arange_new(num_i(start), num_i(end), num_i(step), dt == EM_DTYPE_NONE ? EM_I64 : dt);
}

em_status em_arange_out(em_tensor *out, double start, double end, double step)
{
    return arange_out(out, num_f(start), num_f(end), num_f(step));
}

em_status em_arange_int_out(em_tensor *out, int64_t start, int64_t end, int64_t step)
{
    return arange_out(out, num_i(start), num_i(end), num_i(step));
}

/* ---- linspace, logspace ---------------------------------------------------- */
/* Shared checks: steps >= 0, a dtype the op has, start and end converted
 * to it as PyTorch does (checked, then truncated for integral dtypes). */
static em_status spaced_setup(em_call *c, em_op op, double start, double end, int64_t steps, em_dtype dt)
{
    const char *name = em_ops[op].name;
    *c = (em_call){.op = op};
    if (!em_dtype_valid(dt)) return em_fail(EM_ERR_DTYPE, "%s: invalid dtype %d", name, (int)dt);
    if (dt == EM_BOOL || (op == EM_OP_logspace && dt == EM_F16 && steps > 1))
        return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", name, em_dtypes[dt].name);
    if (steps < 0) return em_fail(EM_ERR_RUNTIME, "%s: number of steps must be non-negative", name);
    if (em_check_convert(start, dt, name) || em_check_convert(end, dt, name)) return em_error_code();
    /* a single step is start as given (linspace stores it, logspace takes
     * base ** start); else start and end in dt, and end - start as torch
     * computes it in dt (logspace's step) */
    c->f[0] = steps == 1 ? start : em_round_to_dtype(start, dt);
    c->f[1] = em_round_to_dtype(end, dt);
    c->f[3] = em_dtype_is_float(dt) ? em_round_to_dtype(c->f[1] - c->f[0], dt) : c->f[1] - c->f[0];
    return EM_OK;
}

em_tensor *em_linspace(double start, double end, int64_t steps, em_dtype dt)
{
    em_call c;
    if (dt == EM_DTYPE_NONE) dt = em_get_default_dtype();
    if (spaced_setup(&c, EM_OP_linspace, start, end, steps, dt)) return NULL;
    return em_generate_new(&c, 1, &steps, dt);
}

em_status em_linspace_out(em_tensor *out, double start, double end, int64_t steps)
{
    em_call c;
    if (!out) return em_fail(EM_ERR_VALUE, "linspace: out is NULL");
    if (spaced_setup(&c, EM_OP_linspace, start, end, steps, (em_dtype)out->dtype)) return em_error_code();
    return em_generate_out(&c, out, 1, &steps);
}

em_tensor *em_logspace(double start, double end, int64_t steps, double base, em_dtype dt)
{
    em_call c;
    if (dt == EM_DTYPE_NONE) dt = em_get_default_dtype();
    if (spaced_setup(&c, EM_OP_logspace, start, end, steps, dt)) return NULL;
    c.f[2] = base;
    return em_generate_new(&c, 1, &steps, dt);
}

em_status em_logspace_out(em_tensor *out, double start, double end, int64_t steps, double base)
{
    em_call c;
    if (!out) return em_fail(EM_ERR_VALUE, "logspace: out is NULL");
    if (spaced_setup(&c, EM_OP_logspace, start, end, steps, (em_dtype)out->dtype)) return em_error_code();
    c.f[2] = base;
    return em_generate_out(&c, out, 1, &steps);
}

/* ---- eye ------------------------------------------------------------------ */
static em_status eye_check(int64_t n, int64_t m)
{
    if (n < 0) return em_fail(EM_ERR_RUNTIME, "eye: n must be greater or equal to 0, got %lld", (long long)n);
    if (m < 0) return em_fail(EM_ERR_RUNTIME, "eye: m must be greater or equal to 0, got %lld", (long long)m);
    return EM_OK;
}

em_tensor *em_eye(int64_t n, int64_t m, em_dtype dt)
{
    if (eye_check(n, m)) return NULL;
    em_call c = {.op = EM_OP_eye};
    const int64_t sizes[2] = {n, m};
    return em_generate_new(&c, 2, sizes, dt == EM_DTYPE_NONE ? em_get_default_dtype() : dt);
}

em_status em_eye_out(em_tensor *out, int64_t n, int64_t m)
{
    if (eye_check(n, m)) return em_error_code();
    em_call c = {.op = EM_OP_eye};
    const int64_t sizes[2] = {n, m};
    return em_generate_out(&c, out, 2, sizes);
}
