/* Bindings of the attention family (include/ember/attention.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. */
#include "emp.h"

PyMethodDef emp_attention_functions[] = {
    {NULL},
};

PyMethodDef emp_attention_nn[] = {
    {NULL},
};
