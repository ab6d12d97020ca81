/* Tensor.set_ and resize_: the calls that change a tensor's own storage or
 * geometry (ember/_functions_extra.py builds squeeze_, t_, as_strided_... on
 * set_). Tensors that require grad are refused: a graph node would otherwise
 * see its input change shape under it. */
#include "emp.h"

static int refuse_grad(const em_tensor *t, const char *op)
{
    if (!em_requires_grad(t)) return 0;
    PyErr_Format(PyExc_RuntimeError, "%s: in-place changes of the size or storage of a tensor that requires grad "
                 "are not supported in Ember (use the out-of-place op, or detach() first)", op);
    return -1;
}

EMP_BIND(set_, "set_(Tensor input, Tensor source)", "set_(Tensor input)")
{
    if (refuse_grad(a->t[0], "set_")) return NULL;
    if (a->sig == 1) return emp_status_self(em_resize_(a->t[0], 1, (const int64_t[]){0}), a->obj[0]);
    return emp_status_self(em_set_(a->t[0], a->t[1]), a->obj[0]);
}

EMP_BIND(resize_, "resize_(Tensor input, int... size, *, object memory_format=None)")
{
    if (refuse_grad(a->t[0], "resize_")) return NULL;
    return emp_status_self(em_resize_(a->t[0], a->nlist[1], a->list[1]), a->obj[0]);
}

PyMethodDef emp_inplace_view_methods[] = {EMP_METHOD(set_), EMP_METHOD(resize_), {NULL}};
