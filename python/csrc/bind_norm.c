/* Bindings of the norm family (include/ember/norm.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. */
#include "emp.h"

PyMethodDef emp_norm_functions[] = {
    {NULL},
};

PyMethodDef emp_norm_nn[] = {
    {NULL},
};
