/* Bindings of the conv family (include/ember/conv.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. */
#include "emp.h"

PyMethodDef emp_conv_functions[] = {
    {NULL},
};

PyMethodDef emp_conv_nn[] = {
    {NULL},
};
