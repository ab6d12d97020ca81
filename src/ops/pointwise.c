/* The op layer of pointwise ops: one path for every unary, binary and
 * ternary op of the table (dtype rules, broadcasting, out= and in-place
 * checks), and the public C functions expanded from ops.def. */
#include "dispatch.h"
#include "ember/ops.h"
#include "ember/reduce.h"
#include <math.h>

enum { MODE_NEW, MODE_INPLACE, MODE_OUT };

/* The dtype the kernel computes in and the dtype of the result. */
static void pointwise_dtypes(em_op op, int nin, const em_tensor *const *in, em_dtype *compute, em_dtype *result)
{
    em_rule rule = (em_rule)em_ops[op].rule;
    em_dtype p = rule == EM_RULE_SELECT ? em_result_type(nin - 1, in + 1) : em_result_type(nin, in);
    switch (rule) {
    case EM_RULE_FLOAT:
        if (!em_dtype_is_float(p) && !em_dtype_is_complex(p)) p = em_get_default_dtype();
        *compute = *result = p;
        break;
    case EM_RULE_BOOL:
    case EM_RULE_COMPARE:
        *compute = p;
        *result = EM_BOOL;
        break;
    case EM_RULE_LOGICAL: *compute = *result = EM_BOOL; break;
    case EM_RULE_DOUBLE: *compute = *result = EM_F64; break;
    default: *compute = *result = p; break;
    }
}

/* Puts back out's geometry and storage saved (with a storage reference) in
 * `before`, undoing an out= resize after a failed kernel. */
static void undo_resize(em_tensor *out, const em_tensor *before)
{
    em_storage_release(out->storage);
    out->storage = before->storage;
    out->offset = before->offset;
    out->ndim = before->ndim;
    memcpy(out->sizes, before->sizes, sizeof out->sizes);
    memcpy(out->strides, before->strides, sizeof out->strides);
}

/* Note [NULL arguments] for the whole family: "em_add_out: b is NULL", with
 * the parameter names of ops.h's declarations. */
static bool null_argument(em_op op, int mode, const em_tensor *out, int nin, const em_tensor *const *in)
{
    static const char *const params[2][3][3] = {{{"x"}, {"a", "b"}, {"a", "b", "c"}},
                                                {{"self"}, {"self", "other"}, {"self", "b", "c"}}};
    static const char *const suffix[] = {[MODE_NEW] = "", [MODE_INPLACE] = "_", [MODE_OUT] = "_out"};
    const char *arg = mode == MODE_OUT && !out ? "out" : NULL;
    for (int k = 0; k < nin && !arg; k++)
        if (!in[k]) arg = params[mode == MODE_INPLACE][nin - 1][k];
    if (arg) em_error(EM_ERR_VALUE, "em_%s%s: %s is NULL", em_ops[op].name, suffix[mode], arg);
    return arg != NULL;
}

static em_tensor *pointwise(em_op op, int mode, em_tensor *out, int nin, const em_tensor *const *in,
                            const double *params);

/* Note [Complex compositions]
 * Ops whose complex form is a composition of ops with complex kernels
 * (Note [Complex kernels] in src/ops/dispatch.c), differentiated through
 * them: abs, the 2-norm of view_as_real's (re, im) pairs; log2 and log10,
 * log with both parts times 1/log(base) (a complex product would make
 * 0 * inf a NaN: log2(0) is -inf + 0i); positive, a view of x (PyTorch's
 * returns x itself); the logical ops, on x != 0; lerp(a, b, w) as
 * a + w (b - a), addcmul/addcdiv(x, a, b, value) as x + value (a * b or a / b);
 * float_power, pow in complex128. */
static bool complex_composed(em_op op, int nin, const em_tensor *const *in)
{
    bool complex = false;
    for (int k = 0; k < nin; k++) complex |= em_dtype_is_complex((em_dtype)in[k]->dtype);
    return complex && (op == EM_OP_abs || op == EM_OP_log2 || op == EM_OP_log10 || op == EM_OP_positive ||
                       op == EM_OP_lerp || op == EM_OP_addcmul || op == EM_OP_addcdiv || op == EM_OP_float_power ||
                       em_ops[op].rule == EM_RULE_LOGICAL);
}

static em_tensor *complex_new(em_op op, int nin, const em_tensor *const *in, const double *params)
{
    if (op == EM_OP_abs) {
        em_tensor *r = em_view_as_real(in[0]), *a = r ? em_norm(r, 2, 1, (const int[]){-1}, false, EM_DTYPE_NONE) : NULL;
        em_release(r);
        return a;
    }
    if (op == EM_OP_positive) return em_reshape(in[0], in[0]->ndim, in[0]->sizes);
    if (op == EM_OP_float_power) {
        em_tensor *a = em_to_dtype(in[0], EM_C128), *b = a ? em_to_dtype(in[1], EM_C128) : NULL;
        em_tensor *y = b ? em_pow(a, b) : NULL;
        em_release(a), em_release(b);
        return y;
    }
    if (op == EM_OP_lerp) /* no promotion: end, and weight unless a Python scalar, of input's dtype */
        for (int k = 1; k < 3; k++)
            if (in[k]->dtype != in[0]->dtype && !(k == 2 && em_is_wrapped_number(in[2])))
                return em_error(EM_ERR_RUNTIME, "expected dtype %s for `%s` but got dtype %s", em_dtypes[in[0]->dtype].name,
                                k == 1 ? "end" : "weight", em_dtypes[in[k]->dtype].name);
    if (op == EM_OP_lerp || op == EM_OP_addcmul || op == EM_OP_addcdiv) {
        em_tensor *d = op == EM_OP_lerp ? em_sub(in[1], in[0], 1) : NULL;
        em_tensor *t = op == EM_OP_lerp ? (d ? em_mul(in[2], d) : NULL)
                       : op == EM_OP_addcmul ? em_mul(in[1], in[2]) : em_div(in[1], in[2]);
        em_tensor *y = t ? em_add(in[0], t, op == EM_OP_lerp ? 1 : params[0]) : NULL;
        em_release(d), em_release(t);
        return y;
    }
    if (op == EM_OP_log2 || op == EM_OP_log10) {
        em_tensor *l = em_log(in[0]), *r = l ? em_view_as_real(l) : NULL;
        em_tensor *c = r ? em_tensor_scalar(1 / log(op == EM_OP_log2 ? 2.0 : 10.0), (em_dtype)r->dtype) : NULL;
        em_tensor *m = c ? em_mul(r, c) : NULL, *y = m ? em_view_as_complex(m) : NULL;
        em_release(l), em_release(r), em_release(c), em_release(m);
        return y;
    }
    const em_tensor *nz[3] = {NULL};
    em_tensor *owned[3] = {NULL}, *y = NULL;
    bool ok = true;
    for (int k = 0; k < nin && ok; k++) {
        if (!em_dtype_is_complex((em_dtype)in[k]->dtype)) {
            nz[k] = in[k];
            continue;
        }
        em_tensor *zero = em_tensor_scalar(0, (em_dtype)in[k]->dtype);
        nz[k] = owned[k] = zero ? em_ne(in[k], zero) : NULL;
        em_release(zero);
        ok = nz[k] != NULL;
    }
    if (ok) y = pointwise(op, MODE_NEW, NULL, nin, nz, params);
    for (int k = 0; k < nin; k++) em_release(owned[k]);
    return y;
}

/* The composed result written to `out` (in[0] for MODE_INPLACE) under the
 * kernel path's rules: the result dtype must cast, in-place keeps its shape. */
static em_tensor *complex_composition(em_op op, int mode, em_tensor *out, int nin, const em_tensor *const *in,
                                      const double *params)
{
    if (op == EM_OP_abs && mode == MODE_INPLACE)
        return em_error(EM_ERR_RUNTIME, "In-place abs is not supported for complex tensors.");
    if (op == EM_OP_float_power && mode != MODE_NEW && out->dtype != EM_C128)
        return em_error(EM_ERR_RUNTIME, "the %s given to float_power%s has dtype %s but the operation's result requires "
                        "dtype complex128", mode == MODE_INPLACE ? "base" : "output", mode == MODE_INPLACE ? "_" : "",
                        em_dtypes[out->dtype].name);
    em_tensor *y = complex_new(op, nin, in, params);
    if (!y || mode == MODE_NEW) return y;
    const char *name = em_ops[op].name;
    em_status st = EM_OK;
    if (!em_can_cast((em_dtype)y->dtype, (em_dtype)out->dtype))
        st = em_fail(EM_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", name,
                     em_dtypes[y->dtype].name, em_dtypes[out->dtype].name);
    else if (mode == MODE_INPLACE && (out->ndim != y->ndim || memcmp(out->sizes, y->sizes, y->ndim * sizeof *y->sizes)))
        st = em_fail(EM_ERR_SHAPE, "%s: output with shape %s doesn't match the broadcast shape %s", name,
                     em_shape_str(out->ndim, out->sizes), em_shape_str(y->ndim, y->sizes));
    else if (out->ndim != y->ndim || memcmp(out->sizes, y->sizes, y->ndim * sizeof *y->sizes))
        st = em_resize_(out, y->ndim, y->sizes);
    if (!st) st = em_copy_(out, y);
    em_release(y);
    return st ? NULL : out;
}

/* Runs op on `in`; mode says where the result goes (a new tensor, in[0], or
 * `out`). Returns the result (a new reference in MODE_NEW, else borrowed). */
static em_tensor *pointwise(em_op op, int mode, em_tensor *out, int nin, const em_tensor *const *in,
                            const double *params)
{
    const char *name = em_ops[op].name;
    int64_t shape[EM_MAX_DIMS];
    int ndim = 0;
    if (null_argument(op, mode, out, nin, in)) return NULL;
    if (complex_composed(op, nin, in)) return complex_composition(op, mode, out, nin, in, params);
    for (int k = 0; k < nin; k++) {
        ndim = em_broadcast_shapes(ndim, shape, in[k]->ndim, in[k]->sizes, shape, name);
        if (ndim < 0) return NULL;
    }
    em_dtype compute, result;
    pointwise_dtypes(op, nin, in, &compute, &result);
    if (nin == 1 && em_unary_check_params(op, compute, params)) return NULL;

    em_tensor before; /* out's geometry before a resize, put back if the kernel fails */
    bool resized = false;
    if (mode == MODE_NEW) {
        const em_tensor *lead = in[0]; /* the result's device: a 0-d CPU input (a CPU scalar) joins the others' */
        for (int k = 0; k < nin; k++)
            if (in[k]->ndim || in[k]->storage->device.type != EM_CPU) {
                lead = in[k];
                break;
            }
        bool like = lead == in[0] && in[0]->ndim == ndim && !memcmp(in[0]->sizes, shape, ndim * sizeof *shape);
        out = like ? em_tensor_new_like(in[0], result) : em_tensor_new(ndim, shape, result, lead->storage->device);
        if (!out) return NULL;
    } else {
        if (!em_can_cast(result, (em_dtype)out->dtype))
            return em_error(EM_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", name,
                            em_dtypes[result].name, em_dtypes[out->dtype].name);
        bool fits = out->ndim == ndim && !memcmp(out->sizes, shape, ndim * sizeof *shape);
        if (!fits && mode == MODE_INPLACE)
            return em_error(EM_ERR_SHAPE, "%s: output with shape %s doesn't match the broadcast shape %s", name,
                            em_shape_str(out->ndim, out->sizes), em_shape_str(ndim, shape));
        if (em_check_overlap(out, NULL, name)) return NULL;
        for (int k = mode == MODE_INPLACE ? 1 : 0; k < nin; k++)
            if (em_check_overlap(out, in[k], name)) return NULL;
        if (!fits) {
            before = *out;
            __atomic_add_fetch(&before.storage->refcount, 1, __ATOMIC_RELAXED);
            if (em_resize_(out, ndim, shape)) {
                em_storage_release(before.storage);
                return NULL;
            }
            resized = true;
        }
    }

    em_call c = {.op = op, .nin = nin, .nout = 1, .dtype = compute};
    c.out[0] = out;
    c.operand_dtypes[0] = (int8_t)result;
    for (int k = 0; k < nin; k++) {
        c.in[k] = in[k];
        c.operand_dtypes[1 + k] = (int8_t)compute;
    }
    if (em_ops[op].rule == EM_RULE_LOGICAL)
        for (int k = 0; k < nin; k++) c.operand_dtypes[1 + k] = EM_BOOL;
    if (em_ops[op].rule == EM_RULE_SELECT) c.operand_dtypes[1] = EM_BOOL;
    for (int k = 0; k < em_ops[op].nparams; k++) c.f[k] = params[k];

    if (em_dispatch(&c)) { /* kernels fail before writing (value checks such as an integer division by zero) */
        if (mode == MODE_NEW) em_release(out);
        if (resized) undo_resize(out, &before);
        return NULL;
    }
    if (resized) em_storage_release(before.storage);
    return out;
}

static em_tensor *op_new(em_op op, int nin, const em_tensor *const *in, const double *p)
{
    return pointwise(op, MODE_NEW, NULL, nin, in, p);
}
static em_status op_inplace(em_op op, int nin, const em_tensor *const *in, const double *p)
{
    if (null_argument(op, MODE_INPLACE, NULL, nin, in)) return em_error_code();
    if ((em_ops[op].flags & EM_F_NO_INPLACE))
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "%s: has no in-place form", em_ops[op].name);
    return pointwise(op, MODE_INPLACE, (em_tensor *)in[0], nin, in, p) ? EM_OK : em_error_code();
}
static em_status op_out(em_op op, em_tensor *out, int nin, const em_tensor *const *in, const double *p)
{
    return pointwise(op, MODE_OUT, out, nin, in, p) ? EM_OK : em_error_code();
}

/* ---- the public functions, one set per table entry ------------------- */
#define EM_OP(name, flags)
#define EM_UNARY(name, rule, flags, n, ps)                                                     \
    em_tensor *em_##name(const em_tensor *x EM_PDECL(n, ps))                                   \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        return op_new(EM_OP_##name, 1, &x, p + 1);                                             \
    }                                                                                          \
    em_status em_##name##_(em_tensor *self EM_PDECL(n, ps))                                    \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        const em_tensor *in[] = {self};                                                        \
        return op_inplace(EM_OP_##name, 1, in, p + 1);                                         \
    }                                                                                          \
    em_status em_##name##_out(em_tensor *out, const em_tensor *x EM_PDECL(n, ps))              \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        return op_out(EM_OP_##name, out, 1, &x, p + 1);                                        \
    }
#define EM_BINARY(name, rule, flags, n, ps)                                                    \
    em_tensor *em_##name(const em_tensor *a, const em_tensor *b EM_PDECL(n, ps))               \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        const em_tensor *in[] = {a, b};                                                        \
        return op_new(EM_OP_##name, 2, in, p + 1);                                             \
    }                                                                                          \
    em_status em_##name##_(em_tensor *self, const em_tensor *other EM_PDECL(n, ps))            \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        const em_tensor *in[] = {self, other};                                                 \
        return op_inplace(EM_OP_##name, 2, in, p + 1);                                         \
    }                                                                                          \
    em_status em_##name##_out(em_tensor *out, const em_tensor *a, const em_tensor *b EM_PDECL(n, ps)) \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        const em_tensor *in[] = {a, b};                                                        \
        return op_out(EM_OP_##name, out, 2, in, p + 1);                                        \
    }
#define EM_TERNARY(name, rule, flags, n, ps)                                                   \
    em_tensor *em_##name(const em_tensor *a, const em_tensor *b, const em_tensor *c EM_PDECL(n, ps)) \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        const em_tensor *in[] = {a, b, c};                                                     \
        return op_new(EM_OP_##name, 3, in, p + 1);                                             \
    }                                                                                          \
    em_status em_##name##_(em_tensor *self, const em_tensor *b, const em_tensor *c EM_PDECL(n, ps)) \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        const em_tensor *in[] = {self, b, c};                                                  \
        return op_inplace(EM_OP_##name, 3, in, p + 1);                                         \
    }                                                                                          \
    em_status em_##name##_out(em_tensor *out, const em_tensor *a, const em_tensor *b,          \
                              const em_tensor *c EM_PDECL(n, ps))                              \
    {                                                                                          \
        const double p[] = {0, EM_PARGS(n, ps)};                                               \
        const em_tensor *in[] = {a, b, c};                                                     \
        return op_out(EM_OP_##name, out, 3, in, p + 1);                                        \
    }
#include "ember/ops.def"
