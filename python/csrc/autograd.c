/* Autograd in Python: graph nodes, backward, hooks, custom Functions. */
#include "emp.h"

PyObject *emp_node_obj(em_node *n)
{
    (void)n;
    return PyErr_Format(PyExc_NotImplementedError, "grad_fn objects are not bound yet");
}
