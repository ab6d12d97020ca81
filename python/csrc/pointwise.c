/* Pointwise ops in Python: the bindings the op table gives for free, and the
 * operators (+ - * / // % ** @ & | ^ << >> ~, comparisons) of the Tensor.
 *
 * Every parameterless EM_UNARY / EM_BINARY op of ops.def becomes `ember.f`,
 * `Tensor.f` and (unless EM_F_NO_INPLACE) `Tensor.f_`, with out=. Ops with
 * params or PyTorch-specific signatures are bound by hand in
 * pointwise_params.c, whose entries replace or hide these. */
#include "emp.h"

/* ---- generated from the table ------------------------------------------- */
/* The binary ops PyTorch has no Scalar overload for: a number as `other` is a TypeError there. */
static const char *const tensor_only[] = {"atan2", "hypot", "logaddexp", "logaddexp2", "nextafter", "maximum",
                                          "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor",
                                          "gcd", "lcm", "heaviside", "igamma", "igammac"};

/* -1 with PyTorch's TypeError when op (name, or name_ in place) refuses the number given as other. */
static int refuse_number(const char *name, const emp_args *a)
{
    if (emp_is_tensor(a->obj[1])) return 0;
    for (size_t j = 0; j < sizeof tensor_only / sizeof *tensor_only; j++) {
        size_t n = strlen(tensor_only[j]);
        if (strncmp(name, tensor_only[j], n) || (name[n] && strcmp(name + n, "_"))) continue;
        PyErr_Format(PyExc_TypeError, "%s(): argument 'other' (position 2) must be Tensor, not %s", name,
                     Py_TYPE(a->obj[1])->tp_name);
        return -1;
    }
    return 0;
}

#define UNARY_BIND(name)                                                                        \
    EMP_BIND(name, #name "(Tensor input, *, Tensor? out=None)")                                 \
    {                                                                                           \
        if (a->has[1]) return emp_status_self(em_##name##_out(a->t[1], a->t[0]), a->obj[1]);    \
        return emp_wrap(em_##name(a->t[0]));                                                    \
    }                                                                                           \
    EMP_BIND(name##_, #name "_(Tensor input)")                                                  \
    {                                                                                           \
        return emp_status_self(em_##name##_(a->t[0]), a->obj[0]);                               \
    }
#define BINARY_BIND(name)                                                                       \
    EMP_BIND(name, #name "(Tensor input, TensorOrNumber other, *, Tensor? out=None)")           \
    {                                                                                           \
        if (refuse_number(#name, a)) return NULL;                                               \
        if (a->has[2]) return emp_status_self(em_##name##_out(a->t[2], a->t[0], a->t[1]), a->obj[2]); \
        return emp_wrap(em_##name(a->t[0], a->t[1]));                                           \
    }                                                                                           \
    EMP_BIND(name##_, #name "_(Tensor input, TensorOrNumber other)")                            \
    {                                                                                           \
        if (refuse_number(#name "_", a)) return NULL;                                           \
        return emp_status_self(em_##name##_(a->t[0], a->t[1]), a->obj[0]);                      \
    }
/* Only parameterless ops are generated: EM_*_0 binds, EM_*_1..3 are hand-bound. */
#define UNARY_0(name) UNARY_BIND(name)
#define BINARY_0(name) BINARY_BIND(name)
#define UNARY_1(name)
#define UNARY_2(name)
#define UNARY_3(name)
#define BINARY_1(name)

#define EM_OP(name, flags)
#define EM_UNARY(name, rule, flags, n, ps) UNARY_##n(name)
#define EM_BINARY(name, rule, flags, n, ps) BINARY_##n(name)
#define EM_TERNARY(name, rule, flags, n, ps)
#include <ember/ops.def>
#undef EM_UNARY
#undef EM_BINARY

/* Table rows: the op (for its flags), its function, method and in-place method. */
typedef struct {
    em_op op;
    PyMethodDef fn, meth, inplace;
} generated_binding;
static const generated_binding generated[] = {
#define EM_UNARY(name, rule, flags, n, ps) ROW_##n(name)
#define EM_BINARY(name, rule, flags, n, ps) ROW_##n(name)
#define ROW_0(name) {EM_OP_##name, EMP_FUNCTION(name), EMP_METHOD(name), EMP_METHOD(name##_)},
#define ROW_1(name)
#define ROW_2(name)
#define ROW_3(name)
#include <ember/ops.def>
};
#undef EM_OP
#undef EM_UNARY
#undef EM_BINARY
#undef EM_TERNARY

void emp_pointwise_tables(emp_table *functions, emp_table *methods, const char *const *hidden)
{
    for (size_t i = 0; i < sizeof generated / sizeof *generated; i++) {
        const generated_binding *g = &generated[i];
        bool hide = false;
        for (const char *const *h = hidden; *h; h++) hide |= !strcmp(*h, g->fn.ml_name);
        if (hide) continue;
        emp_table_add(functions, &g->fn);
        if (!strncmp(g->fn.ml_name, "special_", 8)) continue; /* torch.special's: functions only */
        emp_table_add(methods, &g->meth);
        if (!(em_ops[g->op].flags & EM_F_NO_INPLACE)) emp_table_add(methods, &g->inplace);
    }
}
