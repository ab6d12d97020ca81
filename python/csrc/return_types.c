/* Named result pairs: one PyStructSequence type per PyTorch return type,
 * made on first use (ember.return_types.<name>), and the binding body the
 * (values, indices) ops along a dim share. */
#include "return_types.h"

static PyStructSequence_Field fields[EMP_RT_COUNT][3] = {
#define FIELDS(name, a, b) [EMP_RT_##name] = {{#a, NULL}, {#b, NULL}, {NULL, NULL}},
    EMP_RETURN_TYPES(FIELDS)
#undef FIELDS
};
static PyStructSequence_Desc descs[EMP_RT_COUNT] = {
#define DESC(name, a, b) [EMP_RT_##name] = {"ember.return_types." #name, NULL, fields[EMP_RT_##name], 2},
    EMP_RETURN_TYPES(DESC)
#undef DESC
};
static PyTypeObject *types[EMP_RT_COUNT]; /* live as long as the process */

static PyObject *new_pair(emp_return_type kind)
{
    if (!types[kind] && !(types[kind] = PyStructSequence_NewType(&descs[kind]))) return NULL;
    return PyStructSequence_New(types[kind]);
}

PyObject *emp_return_pair(emp_return_type kind, em_status st, em_tensor *first, em_tensor *second)
{
    if (st) return emp_raise();
    PyObject *r = new_pair(kind);
    if (!r) {
        em_release(first);
        em_release(second);
        return NULL;
    }
    PyObject *a = emp_wrap(first), *b = emp_wrap(second);
    if (!a || !b) {
        Py_XDECREF(a);
        Py_XDECREF(b);
        Py_DECREF(r);
        return NULL;
    }
    PyStructSequence_SetItem(r, 0, a);
    PyStructSequence_SetItem(r, 1, b);
    return r;
}

PyObject *emp_return_out(emp_return_type kind, em_status st, PyObject *seq)
{
    if (st) return emp_raise();
    PyObject *r = new_pair(kind);
    if (!r) return NULL;
    for (int i = 0; i < 2; i++) PyStructSequence_SetItem(r, i, Py_NewRef(PySequence_Fast_GET_ITEM(seq, i)));
    return r;
}

int emp_out_pair(PyObject *seq, em_tensor **outs)
{
    int n = emp_tensor_seq(seq, outs, 2, "out");
    if (n < 0 && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyErr_Clear();
        n = (int)PySequence_Fast_GET_SIZE(seq);
    }
    if (n == 2) return 0;
    if (n >= 0) PyErr_Format(PyExc_TypeError, "expected tuple of 2 elements but got %d", n);
    return -1;
}

PyObject *emp_dim_pair(emp_args *a, emp_return_type kind, emp_dim_pair_fn f, emp_dim_pair_out_fn f_out)
{
    int dim = emp_dim(a, 1);
    if (a->has[3]) {
        em_tensor *o[2];
        if (emp_out_pair(a->obj[3], o)) return NULL;
        return emp_return_out(kind, f_out(o[0], o[1], a->t[0], dim, a->i[2]), a->obj[3]);
    }
    em_tensor *values, *indices;
    em_status st = f(a->t[0], dim, a->i[2], &values, &indices);
    return emp_return_pair(kind, st, values, indices);
}
