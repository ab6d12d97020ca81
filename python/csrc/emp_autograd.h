/* Autograd glue shared by autograd.c (graph nodes, backward, hooks) and
 * function.c (custom Functions, whose ctx object is also their node). */
#ifndef EMP_AUTOGRAD_H
#define EMP_AUTOGRAD_H

#include "emp.h"

/* A graph node seen from Python (t.grad_fn, next_functions). */
typedef struct EmpNode {
    PyObject_HEAD
    em_node *node;      /* strong; for a Function ctx weak, cleared when the node is freed */
    bool owns_node;
    PyObject *metadata; /* the .metadata dict, made on first use */
} EmpNode;

extern PyTypeObject EmpNode_Type;

/* Note [Node identity]: a C node is shown by one Python object while that
 * object lives, so grad_fn objects compare (and hash) by identity. A table
 * maps node -> object (not owned); an object leaves it when it dies, or for
 * a Function ctx when its node is freed (its pointer could then be reused). */
int emp_node_remember(em_node *n, PyObject *obj);
void emp_node_forget(em_node *n, PyObject *obj);

/* Releases the GIL around a C engine call; Python callbacks re-take it. */
#define EMP_WITHOUT_GIL(stmt) \
    do {                      \
        Py_BEGIN_ALLOW_THREADS stmt; \
        Py_END_ALLOW_THREADS  \
    } while (0)

int emp_function_init(PyObject *module);
int emp_autograd_hooks_init(PyObject *module); /* autograd_hooks.c */
extern PyMethodDef emp_function_functions[];

#endif
