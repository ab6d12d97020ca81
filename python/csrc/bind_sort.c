/* Sort ops in Python (include/ember/sort.h): sort, argsort, msort, topk,
 * kthvalue, unique, unique_consecutive, searchsorted, bucketize, histc,
 * histogram, bincount, with PyTorch 1.13's signatures. */
#include "emp.h"
#include "return_types.h"

/* ---- sorting and selection ------------------------------------------------------
 * The stable= overloads keep the other args in the same slots: stable comes
 * last among the keyword-only ones, so the bodies need not tell them apart. */
EMP_BIND(sort, "sort(Tensor input, int dim=-1, bool descending=False, *, Tensor[]? out=None)",
         "sort(Tensor input, *, int dim=-1, bool descending=False, Tensor[]? out=None, bool? stable)")
{
    int dim = emp_dim(a, 1);
    bool stable = a->sig == 1 && a->has[4] && a->i[4];
    if (a->has[3]) {
        em_tensor *o[2];
        if (emp_out_pair(a->obj[3], o)) return NULL;
        return emp_return_out(EMP_RT_sort, em_sort_out(o[0], o[1], a->t[0], dim, a->i[2], stable), a->obj[3]);
    }
    em_tensor *values, *indices;
    em_status st = em_sort(a->t[0], dim, a->i[2], stable, &values, &indices);
    return emp_return_pair(EMP_RT_sort, st, values, indices);
}
EMP_BIND(argsort, "argsort(Tensor input, int dim=-1, bool descending=False)",
         "argsort(Tensor input, *, int dim=-1, bool descending=False, bool stable)")
{
    return emp_wrap(em_argsort(a->t[0], emp_dim(a, 1), a->i[2], a->sig == 1 && a->i[3]));
}
EMP_BIND(msort, "msort(Tensor input, *, Tensor? out=None)")
{
    return EMP_OUT(1, em_msort_out(a->t[1], a->t[0]), em_msort(a->t[0]));
}

EMP_BIND(topk, "topk(Tensor input, int k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor[]? out=None)")
{
    int dim = emp_dim(a, 2);
    if (a->has[5]) {
        em_tensor *o[2];
        if (emp_out_pair(a->obj[5], o)) return NULL;
        return emp_return_out(EMP_RT_topk, em_topk_out(o[0], o[1], a->t[0], a->i[1], dim, a->i[3], a->i[4]),
                              a->obj[5]);
    }
    em_tensor *values, *indices;
    em_status st = em_topk(a->t[0], a->i[1], dim, a->i[3], a->i[4], &values, &indices);
    return emp_return_pair(EMP_RT_topk, st, values, indices);
}

EMP_BIND(kthvalue, "kthvalue(Tensor input, int k, int dim=-1, bool keepdim=False, *, Tensor[]? out=None)")
{
    int dim = emp_dim(a, 2);
    if (a->has[4]) {
        em_tensor *o[2];
        if (emp_out_pair(a->obj[4], o)) return NULL;
        return emp_return_out(EMP_RT_kthvalue, em_kthvalue_out(o[0], o[1], a->t[0], a->i[1], dim, a->i[3]),
                              a->obj[4]);
    }
    em_tensor *values, *indices;
    em_status st = em_kthvalue(a->t[0], a->i[1], dim, a->i[3], &values, &indices);
    return emp_return_pair(EMP_RT_kthvalue, st, values, indices);
}

/* ---- unique -------------------------------------------------------------------------
 * The values alone, or a tuple with the inverse and/or counts asked for. */
static PyObject *unique_result(em_status st, em_tensor *values, em_tensor *inverse, em_tensor *counts)
{
    if (st) return emp_raise();
    if (!inverse && !counts) return emp_wrap(values);
    em_tensor *r[3] = {values};
    int n = 1;
    if (inverse) r[n++] = inverse;
    if (counts) r[n++] = counts;
    return emp_wrap_tuple(n, r);
}

/* args (input, ..., return_inverse at k, return_counts at k + 1, dim at k + 2) */
#define WANT(k) (a->i[k] ? &inverse : NULL), (a->i[(k) + 1] ? &counts : NULL)

EMP_BIND(unique,
         "unique(Tensor input, bool sorted=True, bool return_inverse=False, bool return_counts=False, int? dim=None)")
{
    em_tensor *values, *inverse = NULL, *counts = NULL;
    em_status st = a->has[4] ? em_unique_dim(a->t[0], emp_dim(a, 4), a->i[1], &values, WANT(2))
                             : em_unique(a->t[0], a->i[1], &values, WANT(2));
    return unique_result(st, values, inverse, counts);
}
EMP_BIND(unique_consecutive,
         "unique_consecutive(Tensor input, bool return_inverse=False, bool return_counts=False, int? dim=None)")
{
    em_tensor *values, *inverse = NULL, *counts = NULL;
    em_status st = a->has[3] ? em_unique_consecutive_dim(a->t[0], emp_dim(a, 3), &values, WANT(1))
                             : em_unique_consecutive(a->t[0], &values, WANT(1));
    return unique_result(st, values, inverse, counts);
}

/* ---- searching ------------------------------------------------------------------------
 * A Python number as `input` is searched as a 0-d tensor (PyTorch's Scalar
 * overloads). */
EMP_BIND(searchsorted,
         "searchsorted(Tensor sorted_sequence, TensorOrNumber input, *, bool out_int32=False, bool right=False, "
         "str? side=None, Tensor? sorter=None, Tensor? out=None)")
{
    const char *side = a->has[4] ? a->s[4] : NULL;
    return EMP_OUT(6, em_searchsorted_out(a->t[6], a->t[0], a->t[1], a->i[2], a->i[3], side, a->t[5]),
               em_searchsorted(a->t[0], a->t[1], a->i[2], a->i[3], side, a->t[5]));
}
EMP_BIND(bucketize,
         "bucketize(TensorOrNumber input, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor? out=None)")
{
    return EMP_OUT(4, em_bucketize_out(a->t[4], a->t[0], a->t[1], a->i[2], a->i[3]),
               em_bucketize(a->t[0], a->t[1], a->i[2], a->i[3]));
}

/* ---- counting --------------------------------------------------------------------------- */
EMP_BIND(histc, "histc(Tensor input, int bins=100, Number min=0, Number max=0, *, Tensor? out=None)")
{
    return EMP_OUT(4, em_histc_out(a->t[4], a->t[0], a->i[1], a->d[2], a->d[3]),
               em_histc(a->t[0], a->i[1], a->d[2], a->d[3]));
}

/* histogram's range=(min, max): 0, or -1 with PyTorch's TypeError. */
static int histogram_range(PyObject *o, double *range)
{
    if (!PyTuple_Check(o) && !PyList_Check(o)) {
        PyErr_Format(PyExc_TypeError, "histogram(): argument 'range' must be tuple of floats, not %s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(o) != 2) {
        PyErr_Format(PyExc_RuntimeError, "histogram(): range should have 2 elements");
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(o, i);
        if (!PyFloat_Check(v) && !PyLong_Check(v)) {
            PyErr_Format(PyExc_TypeError, "histogram(): argument 'range' must be tuple of floats, but found element of type %s",
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        range[i] = PyFloat_AsDouble(v);
        if (range[i] == -1.0 && PyErr_Occurred()) return -1;
    }
    return 0;
}

/* out=(hist, bin_edges): Ember's histogram has no out form, so the results
 * are written into the caller's tensors (of the results' dtype, resized). */
static PyObject *histogram_out(PyObject *seq, em_tensor *hist, em_tensor *edges)
{
    em_tensor *o[2], *r[2] = {hist, edges};
    em_status st = EM_OK;
    if (emp_out_pair(seq, o)) goto done;
    for (int i = 0; i < 2 && !st; i++) {
        if (em_dtype_of(o[i]) != em_dtype_of(r[i])) {
            PyErr_Format(PyExc_RuntimeError, "histogram(): out tensors must have the input's dtype");
            goto done;
        }
        st = em_resize_(o[i], em_ndim(r[i]), em_sizes(r[i]));
        if (!st) st = em_copy_(o[i], r[i]);
    }
    em_release(hist);
    em_release(edges);
    return emp_return_out(EMP_RT_histogram, st, seq);
done:
    em_release(hist);
    em_release(edges);
    return NULL;
}

EMP_BIND(histogram,
         "histogram(Tensor input, Tensor bins, *, Tensor? weight=None, bool density=False, Tensor[]? out=None)",
         "histogram(Tensor input, int bins=100, *, object? range=None, Tensor? weight=None, bool density=False, "
         "Tensor[]? out=None)")
{
    int k = a->sig == 0 ? 2 : 3; /* weight; density and out follow */
    em_tensor *hist, *edges;
    em_status st;
    if (a->sig == 0) {
        st = em_histogram_edges(a->t[0], a->t[1], a->t[k], a->i[k + 1], &hist, &edges);
    } else {
        double range[2];
        if (a->has[2] && histogram_range(a->obj[2], range)) return NULL;
        st = em_histogram(a->t[0], a->i[1], a->has[2] ? range : NULL, a->t[k], a->i[k + 1], &hist, &edges);
    }
    if (!st && a->has[k + 2]) return histogram_out(a->obj[k + 2], hist, edges);
    return emp_return_pair(EMP_RT_histogram, st, hist, edges);
}

EMP_BIND(bincount, "bincount(Tensor input, Tensor? weights=None, int minlength=0)")
{
    return emp_wrap(em_bincount(a->t[0], a->t[1], a->i[2]));
}

#define METHODS(X)                                                                                  \
    X(sort) X(argsort) X(msort) X(topk) X(kthvalue) X(unique) X(unique_consecutive) X(histc) X(histogram) X(bincount)
#define FN(name) EMP_FUNCTION(name),
#define METH(name) EMP_METHOD(name),
PyMethodDef emp_sort_functions[] = {METHODS(FN) EMP_FUNCTION(searchsorted), EMP_FUNCTION(bucketize), {NULL}};
PyMethodDef emp_sort_methods[] = {METHODS(METH){NULL}};
