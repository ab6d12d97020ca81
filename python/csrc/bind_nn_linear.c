/* Binding of em_linear (include/ember/nn.h) as ember._C._nn.linear, as
 * torch._C._nn.linear (torch.nn.functional.linear calls it). */
#include "emp.h"

EMP_BIND(linear, "linear(Tensor input, Tensor weight, Tensor? bias=None)")
{
    return emp_wrap(em_linear(a->t[0], a->t[1], a->has[2] ? a->t[2] : NULL));
}

PyMethodDef emp_nn_linear_nn[] = {
    EMP_FUNCTION(linear),
    {NULL},
};
