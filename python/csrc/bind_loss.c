/* Bindings of the loss family (include/ember/loss.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. */
#include "emp.h"

PyMethodDef emp_loss_functions[] = {
    {NULL},
};

PyMethodDef emp_loss_nn[] = {
    {NULL},
};
