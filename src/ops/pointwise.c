/* The op layer of pointwise ops: one path for every unary, binary and
 * ternary op of the table (dtype rules, broadcasting, out= and in-place
 * checks), and the public C functions expanded from ops.def. */
#include "dispatch.h"

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

/* Runs op on `in`; mode says where the result goes (a new tensor, in[0], or
 * `out`). Returns the result (a new reference in MODE_NEW, else borrowed). */
static em_tensor *pointwise(em_op op, int mode, em_tensor *out, int nin, const em_tensor *const *in,
                            const double *params)
{
    const char *name = em_ops[op].name;
    int64_t shape[EM_MAX_DIMS];
    int ndim = 0;
    if (null_argument(op, mode, out, nin, in)) return NULL;
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
