/* Bindings of the rnn family (include/ember/rnn.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. */
#include "emp.h"

PyMethodDef emp_rnn_functions[] = {
    {NULL},
};

PyMethodDef emp_rnn_nn[] = {
    {NULL},
};
