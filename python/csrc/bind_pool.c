/* Bindings of the pool family (include/ember/pool.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. */
#include "emp.h"

PyMethodDef emp_pool_functions[] = {
    {NULL},
};

PyMethodDef emp_pool_nn[] = {
    {NULL},
};
