/* Bindings of the optimizer steps (include/ember/optim.h) for ember.optim:
 *   _C._nn._optimizer_step(name, options, params, grads, states, steps, scalars)
 *   _C._nn._optimizer_check(name, options)
 * `name` is the PyTorch class name ("SGD", "AdamW"...); `options` a param
 * group dict (the hyperparameters are read from it by PyTorch's names);
 * `states` three lists (or None) of state tensors. */
#include "emp.h"
#include "ember/optim.h"
#include <stdlib.h>

static const char *const names[EM_OPTIMIZER_COUNT] = {
    [EM_SGD] = "SGD", [EM_ADAM] = "Adam", [EM_ADAMW] = "AdamW", [EM_RMSPROP] = "RMSprop", [EM_ADAGRAD] = "Adagrad",
    [EM_ADADELTA] = "Adadelta", [EM_ADAMAX] = "Adamax", [EM_NADAM] = "NAdam", [EM_RADAM] = "RAdam",
};

static int parse_alg(PyObject *name)
{
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    for (int k = 0; s && k < EM_OPTIMIZER_COUNT; k++)
        if (!strcmp(s, names[k])) return k;
    if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "unknown optimizer %R", name);
    return -1;
}

/* Reads options[key] as a number (absent: 0) or a bool flag. */
static int get_number(PyObject *d, const char *key, double *out)
{
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v || v == Py_None) return 0;
    *out = PyFloat_AsDouble(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

static int get_flag(PyObject *d, const char *key, bool *out)
{
    PyObject *v = PyDict_GetItemString(d, key);
    int r = v ? PyObject_IsTrue(v) : 0;
    *out = r == 1;
    return r < 0 ? -1 : 0;
}

static int get_betas(PyObject *d, em_optim_options *o)
{
    PyObject *v = PyDict_GetItemString(d, "betas");
    if (!v) return 0;
    if (!PyArg_ParseTuple(v, "dd;betas must be a pair of floats", &o->beta1, &o->beta2)) return -1;
    return 0;
}

static int parse_options(PyObject *d, em_optim_options *o)
{
    *o = (em_optim_options){0};
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "optimizer options must be a dict");
        return -1;
    }
    if (get_number(d, "lr", &o->lr) || get_number(d, "weight_decay", &o->weight_decay) ||
        get_number(d, "eps", &o->eps) || get_number(d, "momentum", &o->momentum) ||
        get_number(d, "dampening", &o->dampening) || get_number(d, "alpha", &o->alpha) ||
        get_number(d, "rho", &o->rho) || get_number(d, "lr_decay", &o->lr_decay) ||
        get_number(d, "momentum_decay", &o->momentum_decay) || get_betas(d, o) ||
        get_flag(d, "nesterov", &o->nesterov) || get_flag(d, "maximize", &o->maximize) ||
        get_flag(d, "amsgrad", &o->amsgrad) || get_flag(d, "centered", &o->centered) ||
        get_flag(d, "first_step", &o->first_step))
        return -1;
    return 0;
}

static PyObject *optimizer_check(PyObject *m, PyObject *args)
{
    PyObject *name, *opts;
    em_optim_options o;
    if (!PyArg_ParseTuple(args, "OO", &name, &opts)) return NULL;
    int alg = parse_alg(name);
    if (alg < 0 || parse_options(opts, &o)) return NULL;
    if (em_optimizer_check((em_optimizer)alg, &o)) return emp_raise();
    Py_RETURN_NONE;
}

/* The n tensors of list `seq` into out (borrowed), or out = NULL for None. */
static int tensor_list(PyObject *seq, int n, em_tensor ***out, const char *what)
{
    *out = NULL;
    if (seq == Py_None) return 0;
    if (!PyList_Check(seq) || PyList_GET_SIZE(seq) != n) {
        PyErr_Format(PyExc_TypeError, "%s must be a list of %d tensors", what, n);
        return -1;
    }
    if (!(*out = malloc((n ? n : 1) * sizeof **out))) {
        PyErr_NoMemory();
        return -1;
    }
    if (emp_tensor_seq(seq, *out, n, what) < 0) return -1;
    return 0;
}

static PyObject *optimizer_step(PyObject *m, PyObject *args)
{
    PyObject *name, *opts, *params, *grads, *states, *steps, *scalars;
    if (!PyArg_ParseTuple(args, "OOO!OO!OO", &name, &opts, &PyList_Type, &params, &grads, &PyTuple_Type, &states,
                          &steps, &scalars))
        return NULL;
    em_optim_options o;
    int alg = parse_alg(name);
    if (alg < 0 || parse_options(opts, &o)) return NULL;
    if (PyTuple_GET_SIZE(states) != 3) return PyErr_Format(PyExc_TypeError, "states must be a 3-tuple");
    int n = (int)PyList_GET_SIZE(params);
    em_tensor **lists[7] = {0}; /* params, grads, 3 states, steps, scalars */
    PyObject *seqs[7] = {params, grads, PyTuple_GET_ITEM(states, 0), PyTuple_GET_ITEM(states, 1),
                         PyTuple_GET_ITEM(states, 2), steps, scalars};
    static const char *const what[7] = {"params", "grads", "state", "state", "state", "steps", "scalars"};
    PyObject *result = NULL;
    for (int k = 0; k < 7; k++)
        if (tensor_list(seqs[k], n, &lists[k], what[k])) goto done;
    em_optim_group g = {n, lists[0], (const em_tensor *const *)lists[1], {lists[2], lists[3], lists[4]},
                        lists[5], lists[6]};
    em_status st;
    Py_BEGIN_ALLOW_THREADS
    st = em_optimizer_step((em_optimizer)alg, &o, &g);
    Py_END_ALLOW_THREADS
    result = st ? emp_raise() : Py_NewRef(Py_None);
done:
    for (int k = 0; k < 7; k++) free(lists[k]);
    return result;
}

PyMethodDef emp_optim_functions[] = {
    {NULL},
};

PyMethodDef emp_optim_nn[] = {
    {"_optimizer_step", optimizer_step, METH_VARARGS, NULL},
    {"_optimizer_check", optimizer_check, METH_VARARGS, NULL},
    {NULL},
};
