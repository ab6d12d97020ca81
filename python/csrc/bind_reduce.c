/* Reductions in Python (include/ember/reduce.h): sums and means, extrema,
 * all/any, arg-extrema, variance, norms, logsumexp, with PyTorch 1.13's
 * overloads. Scans, medians and softmax are in bind_scan.c. */
#include "emp.h"
#include "return_types.h"

/* ---- sums, means, products: (input, dim, keepdim, *, dtype, out) ------------- */
typedef em_tensor *(*sum_fn)(const em_tensor *, int, const int *, bool, em_dtype);
typedef em_status (*sum_out_fn)(em_tensor *, const em_tensor *, int, const int *, bool, em_dtype);

/* Args 0..4 are (input, dim list, keepdim, dtype, out); no dim reduces all. */
static PyObject *sum_like(emp_args *a, sum_fn f, sum_out_fn f_out)
{
    int dims[EM_MAX_DIMS];
    int n = a->nlist[1];
    emp_dims(a, 1, dims);
    em_dtype dt = emp_dtype_arg(a, 3);
    return EMP_OUT(4, f_out(a->t[4], a->t[0], n, dims, a->i[2], dt), f(a->t[0], n, dims, a->i[2], dt));
}

/* sum and mean: no dim, or dim None / int / tuple. */
#define SUM_BIND(name)                                                                                        \
    EMP_BIND(name, #name "(Tensor input, *, dtype? dtype=None)",                                              \
             #name "(Tensor input, int[1]? dim, bool keepdim=False, *, dtype? dtype=None, Tensor? out=None)") \
    {                                                                                                         \
        if (a->sig == 0) return emp_wrap(em_##name(a->t[0], 0, NULL, false, emp_dtype_arg(a, 1)));            \
        return sum_like(a, em_##name, em_##name##_out);                                                       \
    }
/* nansum and nanmean: dim defaults to None. */
#define NANSUM_BIND(name)                                                                                                \
    EMP_BIND(name, #name "(Tensor input, int[1]? dim=None, bool keepdim=False, *, dtype? dtype=None, Tensor? out=None)") \
    {                                                                                                                    \
        return sum_like(a, em_##name, em_##name##_out);                                                                  \
    }
SUM_BIND(sum)
SUM_BIND(mean)
NANSUM_BIND(nansum)
NANSUM_BIND(nanmean)
/* prod takes one int dim. */
EMP_BIND(prod, "prod(Tensor input, *, dtype? dtype=None)",
         "prod(Tensor input, int dim, bool keepdim=False, *, dtype? dtype=None, Tensor? out=None)")
{
    if (a->sig == 0) return emp_wrap(em_prod(a->t[0], 0, NULL, false, emp_dtype_arg(a, 1)));
    a->list[1][0] = a->i[1];
    a->nlist[1] = 1;
    return sum_like(a, em_prod, em_prod_out);
}

/* ---- extrema ------------------------------------------------------------------ */
/* max(input), max(input, other) (= maximum), max(input, dim) -> (values, indices). */
#define EXTREMUM_BIND(name, pairwise)                                                                           \
    EMP_BIND(name, #name "(Tensor input)", #name "(Tensor input, Tensor other, *, Tensor? out=None)",           \
             #name "(Tensor input, int dim, bool keepdim=False, *, Tensor[]? out=None)")                        \
    {                                                                                                           \
        if (a->sig == 0) return emp_wrap(em_##name(a->t[0]));                                                   \
        if (a->sig == 1)                                                                                        \
            return EMP_OUT(2, em_##pairwise##_out(a->t[2], a->t[0], a->t[1]), em_##pairwise(a->t[0], a->t[1])); \
        return emp_dim_pair(a, EMP_RT_##name, em_##name##_dim, em_##name##_dim_out);                            \
    }
EXTREMUM_BIND(max, maximum)
EXTREMUM_BIND(min, minimum)

/* amax/amin, all/any: (input, dims, keepdim, *, out), result of x's dtype or bool. */
typedef em_tensor *(*dims_fn)(const em_tensor *, int, const int *, bool);
typedef em_status (*dims_out_fn)(em_tensor *, const em_tensor *, int, const int *, bool);

static PyObject *over_dims(emp_args *a, dims_fn f, dims_out_fn f_out)
{
    int dims[EM_MAX_DIMS];
    int n = a->nlist[1];
    emp_dims(a, 1, dims);
    return EMP_OUT(3, f_out(a->t[3], a->t[0], n, dims, a->i[2]), f(a->t[0], n, dims, a->i[2]));
}

#define AMAX_BIND(name)                                                                               \
    EMP_BIND(name, #name "(Tensor input, int[1]? dim=None, bool keepdim=False, *, Tensor? out=None)") \
    {                                                                                                 \
        return over_dims(a, em_##name, em_##name##_out);                                              \
    }
AMAX_BIND(amax)
AMAX_BIND(amin)

/* all(input) or all(input, dim): one int dim in PyTorch 1.13. */
#define ALL_BIND(name)                                                                              \
    EMP_BIND(name, #name "(Tensor input, *, Tensor? out=None)",                                     \
             #name "(Tensor input, int dim, bool keepdim=False, *, Tensor? out=None)")              \
    {                                                                                               \
        if (a->sig == 0) {                                                                          \
            a->t[3] = a->t[1], a->obj[3] = a->obj[1], a->has[3] = a->has[1];                        \
            a->nlist[1] = 0;                                                                        \
            a->i[2] = false;                                                                        \
        } else {                                                                                    \
            a->list[1][0] = a->i[1];                                                                \
            a->nlist[1] = 1;                                                                        \
        }                                                                                           \
        return over_dims(a, em_##name, em_##name##_out);                                            \
    }
ALL_BIND(all)
ALL_BIND(any)

/* count_nonzero(input, dim): the method also takes the dims as varargs. */
static PyObject *count_nonzero_impl(emp_args *a)
{
    int dims[EM_MAX_DIMS];
    return emp_wrap(em_count_nonzero(a->t[0], a->nlist[1], emp_dims(a, 1, dims)));
}
EMP_BIND(count_nonzero, "count_nonzero(Tensor input, int[1]? dim=None)") { return count_nonzero_impl(a); }
EMP_BIND(count_nonzero_method, "count_nonzero(Tensor input, int...? dim=None)") { return count_nonzero_impl(a); }

/* argmax/argmin: dim None means the flattened input. */
#define ARGMAX_BIND(name)                                                                                       \
    EMP_BIND(name, #name "(Tensor input, int? dim=None, bool keepdim=False, *, Tensor? out=None)")              \
    {                                                                                                           \
        int dim = emp_dim(a, 1), *pdim = a->has[1] ? &dim : NULL;                                               \
        return EMP_OUT(3, em_##name##_out(a->t[3], a->t[0], pdim, a->i[2]), em_##name(a->t[0], pdim, a->i[2])); \
    }
ARGMAX_BIND(argmax)
ARGMAX_BIND(argmin)

/* ---- variance ---------------------------------------------------------------------
 * Three overloads with the same arg slots: (input, bool unbiased);
 * (input, dim, unbiased, keepdim, *, out); (input, dim, *, correction, keepdim, out).
 * (PyTorch tries them in another order; no call fits two of them differently.) */
#define VAR_SIGS(name, out)                                                                         \
    #name "(Tensor input, bool unbiased=True)",                                                     \
    #name "(Tensor input, int[1]? dim, bool unbiased=True, bool keepdim=False" out ")",             \
    #name "(Tensor input, int[1]? dim=None, *, int? correction=None, bool keepdim=False" out ")"

typedef struct {
    int ndims, dims[EM_MAX_DIMS];
    double correction;
    bool keepdim;
} var_args;

static var_args var_parse(emp_args *a)
{
    var_args v = {.correction = 1, .keepdim = false};
    if (a->sig == 0) {
        v.correction = a->i[1] ? 1 : 0;
        return v;
    }
    v.ndims = a->nlist[1];
    emp_dims(a, 1, v.dims);
    v.correction = a->sig == 1 ? (a->i[2] ? 1 : 0) : a->has[2] ? (double)a->i[2] : 1;
    v.keepdim = a->i[3];
    return v;
}

#define VAR_BIND(name)                                                                                          \
    EMP_BIND(name, VAR_SIGS(name, ", *, Tensor? out=None"))                                                     \
    {                                                                                                           \
        var_args v = var_parse(a);                                                                              \
        if (a->sig && a->has[4])                                                                                \
            return emp_status_self(em_##name##_out(a->t[4], a->t[0], v.ndims, v.dims, v.correction, v.keepdim), \
                                   a->obj[4]);                                                                  \
        return emp_wrap(em_##name(a->t[0], v.ndims, v.dims, v.correction, v.keepdim));                          \
    }
VAR_BIND(var)
VAR_BIND(std)

/* var_mean/std_mean: a plain (var, mean) tuple, as PyTorch. */
#define VAR_MEAN_BIND(name)                                                                                 \
    EMP_BIND(name, VAR_SIGS(name, ""))                                                                      \
    {                                                                                                       \
        var_args v = var_parse(a);                                                                          \
        em_tensor *r[2];                                                                                    \
        if (em_##name(a->t[0], v.ndims, v.dims, v.correction, v.keepdim, &r[0], &r[1])) return emp_raise(); \
        return emp_wrap_tuple(2, r);                                                                        \
    }
VAR_MEAN_BIND(var_mean)
VAR_MEAN_BIND(std_mean)

/* ---- norm ---------------------------------------------------------------------------
 * torch.norm(input, p='fro', dim=None, keepdim=False, out=None, dtype=None)
 * and Tensor.norm(p='fro', dim=None, keepdim=False, dtype=None): p is a
 * number (None: 2) or 'fro' (the 2-norm over at most 2 dims); 'nuc' needs
 * singular values, which Ember does not have. */
static PyObject *norm_impl(emp_args *a, int k_out, int k_dtype)
{
    int dims[EM_MAX_DIMS];
    em_tensor *x = a->t[0], *out = a->has[k_out] ? a->t[k_out] : NULL;
    int ndims = a->nlist[2];
    bool keepdim = a->i[3];
    em_dtype dt = emp_dtype_arg(a, k_dtype);
    double p = a->sig == 1 && a->has[1] ? a->d[1] : 2.0;
    emp_dims(a, 2, dims);
    if (a->sig == 0) {
        const char *mode = a->s[1];
        if (!strcmp(mode, "nuc"))
            return PyErr_Format(PyExc_NotImplementedError, "norm: the nuclear norm is not implemented in Ember");
        if (strcmp(mode, "fro"))
            return PyErr_Format(PyExc_RuntimeError, "only valid string values are 'fro' and 'nuc', found %s", mode);
        if (a->has[k_dtype]) return PyErr_Format(PyExc_ValueError, "dtype argument is not supported in frobenius norm");
        /* PyTorch's frobenius_norm takes at most 2 dims (all of them when dim is None and out is given) */
        int n = a->has[2] ? ndims : out ? em_ndim(x) : 0;
        if (n > 2) return PyErr_Format(PyExc_RuntimeError, "Expected at most 2 dimensions, but got %d dimensions instead.", n);
    }
    if (out) return emp_status_self(em_norm_out(out, x, p, ndims, dims, keepdim, dt), a->obj[k_out]);
    return emp_wrap(em_norm(x, p, ndims, dims, keepdim, dt));
}
#define NORM_SIGS(name, tail)                                                                       \
    #name "(Tensor input, str p='fro', int[1]? dim=None, bool keepdim=False" tail ")",              \
    #name "(Tensor input, Number? p, int[1]? dim=None, bool keepdim=False" tail ")"
EMP_BIND(norm, NORM_SIGS(norm, ", Tensor? out=None, dtype? dtype=None")) { return norm_impl(a, 4, 5); }
EMP_BIND(norm_method, NORM_SIGS(norm, ", dtype? dtype=None, *, Tensor? out=None")) { return norm_impl(a, 5, 4); }

/* ---- logsumexp ---------------------------------------------------------------------- */
EMP_BIND(logsumexp, "logsumexp(Tensor input, int[1] dim, bool keepdim=False, *, Tensor? out=None)")
{
    return over_dims(a, em_logsumexp, em_logsumexp_out);
}

/* function and method */
#define BOTH(X)                                                                                       \
    X(sum) X(mean) X(nansum) X(nanmean) X(prod) X(max) X(min) X(amax) X(amin) X(all) X(any) X(argmax) \
    X(argmin) X(var) X(std) X(logsumexp)
#define FN(name) EMP_FUNCTION(name),
#define METH(name) EMP_METHOD(name),
PyMethodDef emp_reduce_functions[] = {
    BOTH(FN) EMP_FUNCTION(count_nonzero), EMP_FUNCTION(var_mean), EMP_FUNCTION(std_mean), EMP_FUNCTION(norm),
    {NULL},
};
PyMethodDef emp_reduce_methods[] = {
    BOTH(METH) EMP_METHOD_AS("count_nonzero", count_nonzero_method), EMP_METHOD_AS("norm", norm_method),
    {NULL},
};
