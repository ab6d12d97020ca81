/* Complex tensors in Python: the views between complex and real tensors
 * (view_as_real, view_as_complex), the conjugate and the fill with a complex value that
 * the Number parser (real-only) cannot carry. The functions written with
 * these are in python/ember/_complex.py. */
#include "emp.h"

EMP_BIND(view_as_real, "view_as_real(Tensor input)") { return emp_wrap(em_view_as_real(a->t[0])); }
EMP_BIND(view_as_complex, "view_as_complex(Tensor input)") { return emp_wrap(em_view_as_complex(a->t[0])); }
EMP_BIND(_conj_physical, "_conj_physical(Tensor input)") { return emp_wrap(em_conj_physical(a->t[0])); }
/* the conjugate and negative bits (Note [Conjugate bit] in src/core/internal.h) */
EMP_BIND(_conj, "_conj(Tensor input)") { return emp_wrap(em_conj(a->t[0])); }
EMP_BIND(_neg_view, "_neg_view(Tensor input)") { return emp_wrap(em_neg_view(a->t[0])); }
EMP_BIND(_is_conj, "_is_conj(Tensor input)") { return PyBool_FromLong(em_is_conj(a->t[0])); }
EMP_BIND(_is_neg, "_is_neg(Tensor input)") { return PyBool_FromLong(em_is_neg(a->t[0])); }
EMP_BIND(_resolve_conj, "_resolve_conj(Tensor input)") { return emp_wrap(em_resolve_conj(a->t[0])); }
EMP_BIND(_resolve_neg, "_resolve_neg(Tensor input)") { return emp_wrap(em_resolve_neg(a->t[0])); }

/* _fill_complex_(t, value): t filled with a Python complex (or real) number. */
EMP_BIND(_fill_complex_, "_fill_complex_(Tensor input, object value)")
{
    Py_complex z = PyComplex_AsCComplex(a->obj[1]);
    if (PyErr_Occurred()) return NULL;
    return emp_status_self(em_fill_complex_(a->t[0], z.real, z.imag), a->obj[0]);
}

PyMethodDef emp_complex_functions[] = {
    EMP_FUNCTION(view_as_real), EMP_FUNCTION(view_as_complex), EMP_FUNCTION(_conj_physical),
    EMP_FUNCTION(_fill_complex_), EMP_FUNCTION(_conj), EMP_FUNCTION(_neg_view), EMP_FUNCTION(_is_conj),
    EMP_FUNCTION(_is_neg), EMP_FUNCTION(_resolve_conj), EMP_FUNCTION(_resolve_neg), {NULL},
};
