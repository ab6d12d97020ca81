/* Pointwise ops whose Python signature is more than "(input[, other])":
 * params with PyTorch's defaults, Number-or-Tensor overloads, rounding
 * modes, and the aliases PyTorch gives some ops. These entries replace the
 * generated ones of pointwise.c. */
#include "emp.h"
#include <math.h>

/* The table names Python does not see (their PyTorch spelling is a param
 * of another op, bound below). */
const char *const emp_pointwise_hidden[] = {"div_trunc", "div_floor", "clamp_min_tensor", "clamp_max_tensor", NULL};

/* Activations PyTorch offers as functions only (torch.nn.functional): no
 * Tensor method, in place or not. */
const char *const emp_function_only[] = {"logsigmoid", "relu6", "gelu", "silu", "mish", "softplus", "elu",
                                         "celu", "selu", "leaky_relu", "hardtanh", "hardsigmoid", "hardswish", NULL};

/* ---- add / sub with alpha ------------------------------------------------- */
EMP_BIND(add, "add(Tensor input, TensorOrNumber other, *, Number alpha=1, Tensor? out=None)")
{
    return EMP_OUT(3, em_add_out(a->t[3], a->t[0], a->t[1], a->d[2]), em_add(a->t[0], a->t[1], a->d[2]));
}
EMP_BIND(add_, "add_(Tensor input, TensorOrNumber other, *, Number alpha=1)")
{
    return emp_status_self(em_add_(a->t[0], a->t[1], a->d[2]), a->obj[0]);
}
EMP_BIND(sub, "sub(Tensor input, TensorOrNumber other, *, Number alpha=1, Tensor? out=None)")
{
    return EMP_OUT(3, em_sub_out(a->t[3], a->t[0], a->t[1], a->d[2]), em_sub(a->t[0], a->t[1], a->d[2]));
}
EMP_BIND(sub_, "sub_(Tensor input, TensorOrNumber other, *, Number alpha=1)")
{
    return emp_status_self(em_sub_(a->t[0], a->t[1], a->d[2]), a->obj[0]);
}
/* rsub(input, other, alpha) = other - alpha * input */
EMP_BIND(rsub, "rsub(Tensor input, TensorOrNumber other, *, Number alpha=1)")
{
    em_tensor *alpha = a->isint[2] ? em_scalar_int(a->i[2]) : em_scalar_float(a->d[2]);
    em_tensor *scaled = alpha ? em_mul(a->t[0], alpha) : NULL;
    em_release(alpha);
    if (!scaled) return emp_raise();
    em_tensor *r = em_sub(a->t[1], scaled, 1.0);
    em_release(scaled);
    return emp_wrap(r);
}

/* ---- division ------------------------------------------------------------- */
/* rounding_mode None / 'trunc' / 'floor'; -1 with RuntimeError (as PyTorch) otherwise. */
static int rounding_mode(emp_args *a, int k)
{
    if (!a->has[k]) return 0;
    if (!strcmp(a->s[k], "trunc")) return 1;
    if (!strcmp(a->s[k], "floor")) return 2;
    PyErr_Format(PyExc_RuntimeError,
                 "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", a->s[k]);
    return -1;
}

typedef em_tensor *(*div_fn)(const em_tensor *, const em_tensor *);
typedef em_status (*div_inplace_fn)(em_tensor *, const em_tensor *);
typedef em_status (*div_out_fn)(em_tensor *, const em_tensor *, const em_tensor *);
static const div_fn div_fns[] = {em_div, em_div_trunc, em_div_floor};
static const div_inplace_fn div_inplace_fns[] = {em_div_, em_div_trunc_, em_div_floor_};
static const div_out_fn div_out_fns[] = {em_div_out, em_div_trunc_out, em_div_floor_out};

EMP_BIND(div, "div(Tensor input, TensorOrNumber other, *, str? rounding_mode=None, Tensor? out=None)")
{
    int r = rounding_mode(a, 2);
    if (r < 0) return NULL;
    return EMP_OUT(3, div_out_fns[r](a->t[3], a->t[0], a->t[1]), div_fns[r](a->t[0], a->t[1]));
}
EMP_BIND(div_, "div_(Tensor input, TensorOrNumber other, *, str? rounding_mode=None)")
{
    int r = rounding_mode(a, 2);
    if (r < 0) return NULL;
    return emp_status_self(div_inplace_fns[r](a->t[0], a->t[1]), a->obj[0]);
}
EMP_BIND(floor_divide, "floor_divide(Tensor input, TensorOrNumber other, *, Tensor? out=None)")
{
    return EMP_OUT(2, em_div_floor_out(a->t[2], a->t[0], a->t[1]), em_div_floor(a->t[0], a->t[1]));
}
EMP_BIND(floor_divide_, "floor_divide_(Tensor input, TensorOrNumber other)")
{
    return emp_status_self(em_div_floor_(a->t[0], a->t[1]), a->obj[0]);
}

/* ---- powers: the base may be a Python number ------------------------------ */
EMP_BIND(pow, "pow(Tensor input, TensorOrNumber exponent, *, Tensor? out=None)",
         "pow(Number self, Tensor exponent, *, Tensor? out=None)")
{
    em_tensor *base = a->t[0];
    if (a->sig == 1 && !(base = a->owned[a->nowned++] = a->isint[0] ? em_scalar_int(a->i[0]) : em_scalar_float(a->d[0])))
        return emp_raise();
    return EMP_OUT(2, em_pow_out(a->t[2], base, a->t[1]), em_pow(base, a->t[1]));
}
EMP_BIND(pow_, "pow_(Tensor input, TensorOrNumber exponent)") { return emp_status_self(em_pow_(a->t[0], a->t[1]), a->obj[0]); }
EMP_BIND(float_power, "float_power(Tensor input, TensorOrNumber exponent, *, Tensor? out=None)",
         "float_power(Number self, Tensor exponent, *, Tensor? out=None)")
{
    em_tensor *base = a->t[0];
    if (a->sig == 1 && !(base = a->owned[a->nowned++] = em_scalar_float(a->d[0]))) return emp_raise();
    return EMP_OUT(2, em_float_power_out(a->t[2], base, a->t[1]), em_float_power(base, a->t[1]));
}
EMP_BIND(float_power_, "float_power_(Tensor input, TensorOrNumber exponent)")
{
    return emp_status_self(em_float_power_(a->t[0], a->t[1]), a->obj[0]);
}

/* ---- clamp: bounds are numbers, tensors or None ----------------------------- */
/* Numbers stay numbers (the fast scalar kernel) when they fit the input's
 * dtype; otherwise (a float bound on an integer input, a tensor bound) they
 * go through the tensor form, which promotes as PyTorch does. */
static PyObject *clamp_impl(emp_args *a, int mode /* 0 new, 1 in place, 2 out */)
{
    em_tensor *x = a->t[0], *out = mode == 2 ? a->t[3] : NULL;
    PyObject *lo = a->obj[1], *hi = a->obj[2];
    if (!lo && !hi) return PyErr_Format(PyExc_RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None");
    bool numbers = (!lo || !emp_is_tensor(lo)) && (!hi || !emp_is_tensor(hi));
    bool fits = em_dtype_is_float(em_dtype_of(x)) || ((!lo || PyLong_Check(lo)) && (!hi || PyLong_Check(hi)));
    if (numbers && fits) {
        double l = lo ? a->d[1] : NAN, h = hi ? a->d[2] : NAN;
        if (mode == 1) return emp_status_self(em_clamp_(x, l, h), a->obj[0]);
        if (mode == 2) return emp_status_self(em_clamp_out(out, x, l, h), a->obj[3]);
        return emp_wrap(em_clamp(x, l, h));
    }
    em_tensor *tl = NULL, *th = NULL;
    if (lo && !(tl = emp_is_tensor(lo) ? em_retain(emp_t(lo)) : emp_number_tensor(lo))) return emp_raise();
    if (hi && !(th = emp_is_tensor(hi) ? em_retain(emp_t(hi)) : emp_number_tensor(hi))) {
        em_release(tl);
        return emp_raise();
    }
    PyObject *r;
    if (tl && th)
        r = mode == 1 ? emp_status_self(em_clamp_tensor_(x, tl, th), a->obj[0])
          : mode == 2 ? emp_status_self(em_clamp_tensor_out(out, x, tl, th), a->obj[3])
                      : emp_wrap(em_clamp_tensor(x, tl, th));
    else if (tl)
        r = mode == 1 ? emp_status_self(em_clamp_min_tensor_(x, tl), a->obj[0])
          : mode == 2 ? emp_status_self(em_clamp_min_tensor_out(out, x, tl), a->obj[3])
                      : emp_wrap(em_clamp_min_tensor(x, tl));
    else
        r = mode == 1 ? emp_status_self(em_clamp_max_tensor_(x, th), a->obj[0])
          : mode == 2 ? emp_status_self(em_clamp_max_tensor_out(out, x, th), a->obj[3])
                      : emp_wrap(em_clamp_max_tensor(x, th));
    em_release(tl);
    em_release(th);
    return r;
}

#define CLAMP_SIGS(name) \
    #name "(Tensor input, Number? min=None, Number? max=None, *, Tensor? out=None)", \
    #name "(Tensor input, TensorOrNumber? min=None, TensorOrNumber? max=None, *, Tensor? out=None)"
EMP_BIND(clamp, CLAMP_SIGS(clamp)) { return clamp_impl(a, a->has[3] ? 2 : 0); }
EMP_BIND(clamp_, CLAMP_SIGS(clamp_)) { return clamp_impl(a, 1); }
/* clamp_min(input, min) and clamp_max(input, max): clamp with one bound.
 * Moves the parsed (input, bound, out) into clamp's (input, min, max, out). */
static PyObject *clamp_one(emp_args *a, int bound)
{
    PyObject *b = a->obj[1];
    a->t[3] = a->t[2];
    a->obj[3] = a->obj[2];
    a->has[3] = a->has[2];
    a->obj[1] = a->obj[2] = NULL;
    a->obj[bound] = b;
    if (!emp_is_tensor(b) && (a->d[bound] = PyFloat_AsDouble(b)) == -1.0 && PyErr_Occurred()) return NULL;
    return clamp_impl(a, a->has[3] ? 2 : 0);
}
EMP_BIND(clamp_min, "clamp_min(Tensor input, TensorOrNumber min, *, Tensor? out=None)") { return clamp_one(a, 1); }
EMP_BIND(clamp_max, "clamp_max(Tensor input, TensorOrNumber max, *, Tensor? out=None)") { return clamp_one(a, 2); }

/* ---- activations and rounding with params ------------------------------------ */
#define PARAM_UNARY(name, sig, ...)                                                                   \
    EMP_BIND(name, #name "(Tensor input" sig ", *, Tensor? out=None)")                                \
    {                                                                                                 \
        int k_out = emp_parser_##name.parsed[0].nparams - 1;                                          \
        return EMP_OUT(k_out, em_##name##_out(a->t[k_out], a->t[0], __VA_ARGS__), em_##name(a->t[0], __VA_ARGS__)); \
    }                                                                                                 \
    EMP_BIND(name##_, #name "_(Tensor input" sig ")")                                                 \
    {                                                                                                 \
        return emp_status_self(em_##name##_(a->t[0], __VA_ARGS__), a->obj[0]);                        \
    }
PARAM_UNARY(softplus, ", Number beta=1, Number threshold=20", a->d[1], a->d[2])
PARAM_UNARY(elu, ", Number alpha=1.0", a->d[1])
PARAM_UNARY(celu, ", Number alpha=1.0", a->d[1])
PARAM_UNARY(leaky_relu, ", Number negative_slope=0.01", a->d[1])
PARAM_UNARY(hardtanh, ", Number min_val=-1.0, Number max_val=1.0", a->d[1], a->d[2])
PARAM_UNARY(round, ", *, int decimals=0", (double)a->i[1])
PARAM_UNARY(nan_to_num, ", float? nan=0.0, float? posinf=None, float? neginf=None", a->d[1],
            a->has[2] ? a->d[2] : INFINITY, a->has[3] ? a->d[3] : -INFINITY)

/* polygamma(n, input): the order first, as PyTorch's; the method takes it second. */
EMP_BIND(polygamma, "polygamma(int n, Tensor input, *, Tensor? out=None)")
{
    return EMP_OUT(2, em_polygamma_out(a->t[2], a->t[1], (double)a->i[0]), em_polygamma(a->t[1], (double)a->i[0]));
}
EMP_BIND(polygamma_method, "polygamma(Tensor input, int n)") { return emp_wrap(em_polygamma(a->t[0], (double)a->i[1])); }
EMP_BIND(polygamma_, "polygamma_(Tensor input, int n)")
{
    return emp_status_self(em_polygamma_(a->t[0], (double)a->i[1]), a->obj[0]);
}

/* gelu's approximate is a string. */
static int gelu_mode(emp_args *a)
{
    if (!strcmp(a->s[1], "none")) return 0;
    if (!strcmp(a->s[1], "tanh")) return 1;
    PyErr_Format(PyExc_RuntimeError, "approximate argument must be either none or tanh.");
    return -1;
}
EMP_BIND(gelu, "gelu(Tensor input, *, str approximate='none', Tensor? out=None)")
{
    int m = gelu_mode(a);
    if (m < 0) return NULL;
    return EMP_OUT(2, em_gelu_out(a->t[2], a->t[0], m), em_gelu(a->t[0], m));
}
EMP_BIND(gelu_, "gelu_(Tensor input, *, str approximate='none')")
{
    int m = gelu_mode(a);
    return m < 0 ? NULL : emp_status_self(em_gelu_(a->t[0], m), a->obj[0]);
}

/* ---- ternary ------------------------------------------------------------------- */
/* where(condition) alone is nonzero(condition, as_tuple=True). Tensor.where
 * (self is the input, not the condition) is bind_index.c's. */
EMP_BIND(where, "where(Tensor condition)",
         "where(Tensor condition, TensorOrNumber input, TensorOrNumber other, *, Tensor? out=None)")
{
    if (a->sig == 0) return emp_nonzero_tuple(a->t[0]);
    return EMP_OUT(3, em_where_out(a->t[3], a->t[0], a->t[1], a->t[2]), em_where(a->t[0], a->t[1], a->t[2]));
}
EMP_BIND(lerp, "lerp(Tensor input, Tensor end, TensorOrNumber weight, *, Tensor? out=None)")
{
    return EMP_OUT(3, em_lerp_out(a->t[3], a->t[0], a->t[1], a->t[2]), em_lerp(a->t[0], a->t[1], a->t[2]));
}
EMP_BIND(lerp_, "lerp_(Tensor input, Tensor end, TensorOrNumber weight)")
{
    return emp_status_self(em_lerp_(a->t[0], a->t[1], a->t[2]), a->obj[0]);
}
#define ADDC(name)                                                                                    \
    EMP_BIND(name, #name "(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value=1, Tensor? out=None)") \
    {                                                                                                 \
        return EMP_OUT(4, em_##name##_out(a->t[4], a->t[0], a->t[1], a->t[2], a->d[3]),                   \
                   em_##name(a->t[0], a->t[1], a->t[2], a->d[3]));                                    \
    }                                                                                                 \
    EMP_BIND(name##_, #name "_(Tensor input, Tensor tensor1, Tensor tensor2, *, Number value=1)")     \
    {                                                                                                 \
        return emp_status_self(em_##name##_(a->t[0], a->t[1], a->t[2], a->d[3]), a->obj[0]);          \
    }
ADDC(addcmul)
ADDC(addcdiv)

/* name, in-place name: bound as function + method, and as in-place method */
#define BOUND(X)                                                                                      \
    X(add) X(sub) X(div) X(floor_divide) X(pow) X(float_power) X(clamp) X(softplus) X(elu) X(celu)   \
    X(leaky_relu) X(hardtanh) X(round) X(nan_to_num) X(gelu) X(lerp) X(addcmul) X(addcdiv)
#define FN(name) EMP_FUNCTION(name),
#define METH(name) EMP_METHOD(name), EMP_METHOD(name##_),
PyMethodDef emp_params_functions[] = {
    BOUND(FN) EMP_FUNCTION(rsub), EMP_FUNCTION(clamp_min), EMP_FUNCTION(clamp_max), EMP_FUNCTION(where),
    EMP_FUNCTION_AS("clip", clamp), EMP_FUNCTION(polygamma),
    {NULL},
};
PyMethodDef emp_params_methods[] = {
    BOUND(METH) EMP_METHOD(clamp_min), EMP_METHOD(clamp_max), EMP_METHOD_AS("clip", clamp),
    EMP_METHOD_AS("clip_", clamp_), EMP_METHOD_AS("polygamma", polygamma_method), EMP_METHOD(polygamma_),
    {NULL},
};
