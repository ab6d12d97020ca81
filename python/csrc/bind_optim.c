/* Bindings of the optim family (include/ember/optim.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. */
#include "emp.h"

PyMethodDef emp_optim_functions[] = {
    {NULL},
};

PyMethodDef emp_optim_nn[] = {
    {NULL},
};
