/* Scans, medians and softmax in Python (include/ember/reduce.h): cumsum,
 * cumprod (and their in-place forms), cummax, cummin, logcumsumexp, median,
 * nanmedian, mode, softmax, log_softmax. */
#include "emp.h"
#include "return_types.h"

/* ---- cumulative sums and products, with dtype= ------------------------------------ */
#define CUM_BIND(name)                                                                                \
    EMP_BIND(name, #name "(Tensor input, int dim, *, dtype? dtype=None, Tensor? out=None)")           \
    {                                                                                                 \
        int dim = emp_dim(a, 1);                                                                      \
        em_dtype dt = emp_dtype_arg(a, 2);                                                            \
        return EMP_OUT(3, em_##name##_out(a->t[3], a->t[0], dim, dt), em_##name(a->t[0], dim, dt));   \
    }                                                                                                 \
    EMP_BIND(name##_, #name "_(Tensor input, int dim, *, dtype? dtype=None)")                         \
    {                                                                                                 \
        return emp_status_self(em_##name##_(a->t[0], emp_dim(a, 1), emp_dtype_arg(a, 2)), a->obj[0]); \
    }
CUM_BIND(cumsum)
CUM_BIND(cumprod)

/* cummax/cummin: running extreme and its index, out=(values, indices). */
#define CUMMAX_BIND(name)                                                                               \
    EMP_BIND(name, #name "(Tensor input, int dim, *, Tensor[]? out=None)")                              \
    {                                                                                                   \
        int dim = emp_dim(a, 1);                                                                        \
        if (a->has[2]) {                                                                                \
            em_tensor *o[2];                                                                            \
            if (emp_out_pair(a->obj[2], o)) return NULL;                                                \
            return emp_return_out(EMP_RT_##name, em_##name##_out(o[0], o[1], a->t[0], dim), a->obj[2]); \
        }                                                                                               \
        em_tensor *values, *indices;                                                                    \
        em_status st = em_##name(a->t[0], dim, &values, &indices);                                      \
        return emp_return_pair(EMP_RT_##name, st, values, indices);                                     \
    }
CUMMAX_BIND(cummax)
CUMMAX_BIND(cummin)

EMP_BIND(logcumsumexp, "logcumsumexp(Tensor input, int dim, *, Tensor? out=None)")
{
    int dim = emp_dim(a, 1);
    return EMP_OUT(2, em_logcumsumexp_out(a->t[2], a->t[0], dim), em_logcumsumexp(a->t[0], dim));
}

/* ---- median, nanmedian, mode: (values, indices) along a dim --------------------------- */
/* median(input) of every element; median(input, dim) -> (values, indices). */
#define MEDIAN_BIND(name)                                                                           \
    EMP_BIND(name, #name "(Tensor input)",                                                          \
             #name "(Tensor input, int dim, bool keepdim=False, *, Tensor[]? out=None)")            \
    {                                                                                               \
        if (a->sig == 0) return emp_wrap(em_##name(a->t[0]));                                       \
        return emp_dim_pair(a, EMP_RT_##name, em_##name##_dim, em_##name##_dim_out);                \
    }
MEDIAN_BIND(median)
MEDIAN_BIND(nanmedian)
EMP_BIND(mode, "mode(Tensor input, int dim=-1, bool keepdim=False, *, Tensor[]? out=None)")
{
    return emp_dim_pair(a, EMP_RT_mode, em_mode, em_mode_out);
}

/* ---- softmax ---------------------------------------------------------------------------- */
#define SOFTMAX_BIND(name)                                                                          \
    EMP_BIND(name, #name "(Tensor input, int dim, dtype? dtype=None, *, Tensor? out=None)")         \
    {                                                                                               \
        int dim = emp_dim(a, 1);                                                                    \
        em_dtype dt = emp_dtype_arg(a, 2);                                                          \
        return EMP_OUT(3, em_##name##_out(a->t[3], a->t[0], dim, dt), em_##name(a->t[0], dim, dt)); \
    }
SOFTMAX_BIND(softmax)
SOFTMAX_BIND(log_softmax)

#define BOTH(X)                                                                                     \
    X(cumsum) X(cumprod) X(cummax) X(cummin) X(logcumsumexp) X(median) X(nanmedian) X(mode) X(softmax) X(log_softmax)
#define FN(name) EMP_FUNCTION(name),
#define METH(name) EMP_METHOD(name),
PyMethodDef emp_scan_functions[] = {BOTH(FN){NULL}};
PyMethodDef emp_scan_methods[] = {BOTH(METH) EMP_METHOD(cumsum_), EMP_METHOD(cumprod_), {NULL}};
