/* Autograd in Python: graph nodes (t.grad_fn), the engine entry points
 * (ember.autograd.backward / grad, run with the GIL released) and tensor
 * hooks. Custom Functions are in function.c; argument handling in
 * python/ember/autograd/__init__.py. */
#include "emp_autograd.h"

/* ---- node objects ---------------------------------------------------------------- */
static PyObject *live_nodes; /* Note [Node identity]: PyLong(node) -> PyLong(object) */
static PyObject *node_types; /* node name -> its Python type (type(y.grad_fn).__name__ == "MulBackward0") */

int emp_node_remember(em_node *n, PyObject *obj)
{
    PyObject *k = PyLong_FromVoidPtr(n), *v = PyLong_FromVoidPtr(obj);
    int r = k && v ? PyDict_SetItem(live_nodes, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    return r;
}

void emp_node_forget(em_node *n, PyObject *obj)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb); /* called from deallocators: keep a pending exception */
    PyObject *k = PyLong_FromVoidPtr(n), *v = k ? PyDict_GetItemWithError(live_nodes, k) : NULL;
    if (v && PyLong_AsVoidPtr(v) == obj) PyDict_DelItem(live_nodes, k);
    Py_XDECREF(k);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

/* The type of nodes named `name` (borrowed), made on first use. */
static PyTypeObject *node_type(const char *name)
{
    PyObject *t = PyDict_GetItemString(node_types, name);
    if (t) return (PyTypeObject *)t;
    t = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O){s:(),s:s}", name, (PyObject *)&EmpNode_Type,
                              "__slots__", "__module__", "builtins");
    if (!t || PyDict_SetItemString(node_types, name, t)) {
        Py_XDECREF(t);
        return NULL;
    }
    Py_DECREF(t); /* node_types keeps it */
    return (PyTypeObject *)t;
}

PyObject *emp_node_obj(em_node *n)
{
    PyObject *k = PyLong_FromVoidPtr(n);
    if (!k) return NULL;
    PyObject *v = PyDict_GetItemWithError(live_nodes, k);
    Py_DECREF(k);
    if (v) return Py_NewRef((PyObject *)PyLong_AsVoidPtr(v));
    if (PyErr_Occurred()) return NULL;
    PyTypeObject *type = node_type(em_node_name(n));
    EmpNode *o = type ? (EmpNode *)type->tp_alloc(type, 0) : NULL;
    if (!o) return NULL;
    em_node_retain(n);
    o->node = n;
    o->owns_node = true;
    if (emp_node_remember(n, (PyObject *)o)) Py_CLEAR(o);
    return (PyObject *)o;
}

static int node_traverse(EmpNode *self, visitproc visit, void *arg)
{
    Py_VISIT(self->metadata); /* subtype_traverse visits the (heap) type */
    return 0;
}

static int node_clear(EmpNode *self)
{
    Py_CLEAR(self->metadata);
    return 0;
}

static void node_dealloc(EmpNode *self)
{
    PyObject_GC_UnTrack(self);
    if (self->node) {
        emp_node_forget(self->node, (PyObject *)self);
        if (self->owns_node) em_node_release(self->node);
        self->node = NULL;
    }
    node_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *node_name(EmpNode *self, PyObject *unused)
{
    return PyUnicode_FromString(self->node ? em_node_name(self->node) : _PyType_Name(Py_TYPE(self)));
}

static PyObject *node_next_functions(EmpNode *self, void *c)
{
    int n = self->node ? em_node_num_next(self->node) : 0;
    PyObject *r = PyTuple_New(n);
    for (int i = 0; r && i < n; i++) {
        int nr = 0;
        em_node *m = em_node_next(self->node, i, &nr);
        PyObject *fn = m ? emp_node_obj(m) : Py_NewRef(Py_None);
        PyObject *pair = fn ? Py_BuildValue("(Ni)", fn, nr) : NULL;
        if (!pair) Py_CLEAR(r);
        else PyTuple_SET_ITEM(r, i, pair);
    }
    return r;
}

static PyObject *node_metadata(EmpNode *self, void *c)
{
    if (!self->metadata && !(self->metadata = PyDict_New())) return NULL;
    return Py_NewRef(self->metadata);
}

/* AccumulateGrad.variable: the leaf it accumulates into. */
static PyObject *node_variable(EmpNode *self, void *c)
{
    em_tensor *leaf = self->node ? em_node_variable(self->node) : NULL;
    if (!leaf)
        return PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute 'variable'", Py_TYPE(self)->tp_name);
    return emp_wrap(em_retain(leaf));
}

static PyMethodDef node_methods[] = {
    {"name", (PyCFunction)node_name, METH_NOARGS, "The node's name, such as 'MulBackward0'."},
    {NULL},
};

/* grad_fn._saved_self / _saved_other / _saved_result (input 0, input 1, output 0 of what the
 * node saved), and the _raw_saved_ forms: an ember.autograd.graph.SavedTensor on which hooks
 * can be registered. A slot the node did not save is an AttributeError, as in PyTorch. The
 * closure is the slot (0, 1, 2), plus 3 for the raw form. */
static const char *const saved_names[] = {"self", "other", "result"};

static PyObject *node_saved(EmpNode *self, void *closure)
{
    int which = (int)(intptr_t)closure, slot = which % 3, index = slot == 2 ? 0 : slot;
    bool output = slot == 2, raw = which >= 3;
    if (!self->node || !em_node_has_saved(self->node, output, index))
        return PyErr_Format(PyExc_AttributeError, "'%s' object has no attribute '_%ssaved_%s'", Py_TYPE(self)->tp_name,
                            raw ? "raw_" : "", saved_names[slot]);
    if (!raw) {
        em_tensor *t = NULL;
        return em_node_saved(self->node, output, index, &t) ? emp_raise() : emp_wrap(t);
    }
    PyObject *graph = PyImport_ImportModule("ember.autograd.graph");
    PyObject *r = graph ? PyObject_CallMethod(graph, "SavedTensor", "(Oii)", (PyObject *)self, (int)output, index)
                        : NULL;
    Py_XDECREF(graph);
    return r;
}

/* _C._node_pack_saved(node, output, index): packs that saved tensor through the hooks set now. */
static PyObject *node_pack_saved(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyObject_TypeCheck(args[0], &EmpNode_Type))
        return PyErr_Format(PyExc_TypeError, "_node_pack_saved(node, output, index)");
    int output = PyObject_IsTrue(args[1]);
    long index = PyLong_AsLong(args[2]);
    if (output < 0 || (index == -1 && PyErr_Occurred())) return NULL;
    em_node *n = ((EmpNode *)args[0])->node;
    if (!n) return PyErr_Format(PyExc_RuntimeError, "_node_pack_saved: the node is gone");
    if (em_node_pack_saved(n, output, (int)index)) return emp_raise();
    Py_RETURN_NONE;
}

static PyGetSetDef node_getset[] = {
    {"_saved_self", (getter)node_saved, NULL, "The input `self` the node saved.", (void *)0},
    {"_saved_other", (getter)node_saved, NULL, "The input `other` the node saved.", (void *)1},
    {"_saved_result", (getter)node_saved, NULL, "The output the node saved.", (void *)2},
    {"_raw_saved_self", (getter)node_saved, NULL, "SavedTensor of the input `self`.", (void *)3},
    {"_raw_saved_other", (getter)node_saved, NULL, "SavedTensor of the input `other`.", (void *)4},
    {"_raw_saved_result", (getter)node_saved, NULL, "SavedTensor of the output.", (void *)5},
    {"next_functions", (getter)node_next_functions, NULL, "((node or None, input_nr), ...) for each input.", NULL},
    {"metadata", (getter)node_metadata, NULL, "A dict for the user's data about this node.", NULL},
    {"variable", (getter)node_variable, NULL, "AccumulateGrad only: the leaf tensor.", NULL},
    {NULL},
};

PyTypeObject EmpNode_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember._C.Node",
    .tp_basicsize = sizeof(EmpNode),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A node of the autograd graph (the grad_fn of a tensor).",
    .tp_dealloc = (destructor)node_dealloc,
    .tp_traverse = (traverseproc)node_traverse,
    .tp_clear = (inquiry)node_clear,
    .tp_methods = node_methods,
    .tp_getset = node_getset,
};

/* ---- the engine ---------------------------------------------------------------------- */
/* A tuple's tensors, retained (the C engine reads them without the GIL, when
 * another thread could swap a tensor's storage with `x.data = ...`). None
 * entries stay NULL where allowed. */
typedef struct tensor_list {
    int n;
    em_tensor **t;
} tensor_list;

static void tensor_list_free(tensor_list *l)
{
    for (int i = 0; i < l->n; i++) em_release(l->t[i]);
    PyMem_Free(l->t);
    l->t = NULL;
    l->n = 0;
}

static int tensor_list_from(PyObject *tup, bool none_ok, const char *what, tensor_list *l)
{
    l->n = 0;
    l->t = NULL;
    if (!PyTuple_Check(tup)) return PyErr_Format(PyExc_TypeError, "%s must be a tuple", what), -1;
    Py_ssize_t n = PyTuple_GET_SIZE(tup);
    if (n > INT_MAX / 2) return PyErr_Format(PyExc_ValueError, "too many %s", what), -1;
    if (!(l->t = PyMem_Calloc(n ? n : 1, sizeof *l->t))) return PyErr_NoMemory(), -1;
    l->n = (int)n;
    for (int i = 0; i < l->n; i++) {
        PyObject *o = PyTuple_GET_ITEM(tup, i);
        if (o == Py_None && none_ok) continue;
        if (!emp_is_tensor(o)) {
            PyErr_Format(PyExc_TypeError, "%s must be Tensors%s, but got %s", what, none_ok ? " or None" : "",
                         Py_TYPE(o)->tp_name);
            tensor_list_free(l);
            return -1;
        }
        l->t[i] = em_retain(emp_t(o));
    }
    return 0;
}

static int flag(PyObject *o, bool *out)
{
    int v = PyObject_IsTrue(o);
    *out = v > 0;
    return v < 0 ? -1 : 0;
}

/* _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs):
 * tuples prepared by ember.autograd.backward. */
static PyObject *run_backward(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) return PyErr_Format(PyExc_TypeError, "_run_backward expects 5 arguments");
    bool retain, create;
    if (flag(args[2], &retain) || flag(args[3], &create)) return NULL;
    tensor_list ts, gs, ins;
    if (tensor_list_from(args[0], false, "tensors", &ts)) return NULL;
    if (tensor_list_from(args[1], true, "grad_tensors", &gs)) return tensor_list_free(&ts), NULL;
    if (tensor_list_from(args[4], false, "inputs", &ins)) return tensor_list_free(&ts), tensor_list_free(&gs), NULL;
    em_status st = EM_OK;
    if (ts.n != gs.n) PyErr_Format(PyExc_RuntimeError, "got %d tensors and %d gradients", ts.n, gs.n);
    else EMP_WITHOUT_GIL(st = em_backward(ts.n, ts.t, gs.t, retain, create, ins.n, ins.t));
    tensor_list_free(&ts);
    tensor_list_free(&gs);
    tensor_list_free(&ins);
    if (PyErr_Occurred()) return NULL;
    if (st) return emp_raise();
    Py_RETURN_NONE;
}

/* _run_grad(outputs, grad_outputs, inputs, retain_graph, create_graph, allow_unused) -> tuple */
static PyObject *run_grad(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) return PyErr_Format(PyExc_TypeError, "_run_grad expects 6 arguments");
    bool retain, create, allow_unused;
    if (flag(args[3], &retain) || flag(args[4], &create) || flag(args[5], &allow_unused)) return NULL;
    tensor_list outs, gs, ins;
    if (tensor_list_from(args[0], false, "outputs", &outs)) return NULL;
    if (tensor_list_from(args[1], true, "grad_outputs", &gs)) return tensor_list_free(&outs), NULL;
    if (tensor_list_from(args[2], false, "inputs", &ins)) return tensor_list_free(&outs), tensor_list_free(&gs), NULL;
    em_tensor **grads = PyMem_Calloc(ins.n ? ins.n : 1, sizeof *grads);
    em_status st = EM_OK;
    if (!grads) PyErr_NoMemory();
    else if (outs.n != gs.n) PyErr_Format(PyExc_RuntimeError, "got %d tensors and %d gradients", outs.n, gs.n);
    else EMP_WITHOUT_GIL(st = em_autograd_grad(outs.n, outs.t, gs.t, ins.n, ins.t, retain, create, allow_unused,
                                               grads));
    int n = ins.n;
    tensor_list_free(&outs);
    tensor_list_free(&gs);
    tensor_list_free(&ins);
    PyObject *r = NULL;
    if (!PyErr_Occurred()) r = st ? emp_raise() : emp_wrap_tuple(n, grads);
    PyMem_Free(grads);
    return r;
}

/* ---- hooks --------------------------------------------------------------------------- */
/* Python callables called by the engine, which runs without the GIL; an
 * exception is parked (Note [Parked exceptions] in errors.c). */
static void free_callable(void *fn)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF((PyObject *)fn);
    PyGILState_Release(gil);
}

static PyObject *hook_name(PyObject *fn)
{
    PyObject *name = PyObject_GetAttrString(fn, "__name__");
    if (!name) PyErr_Clear(), name = PyObject_Repr(fn);
    return name;
}

/* PyTorch's checks on what a tensor hook returned instead of grad. */
static int check_hook_result(PyObject *fn, PyObject *grad, PyObject *res)
{
    if (!emp_is_tensor(res))
        return PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%s'", Py_TYPE(res)->tp_name), -1;
    const em_tensor *g = emp_t(grad), *r = emp_t(res);
    bool same_size = em_ndim(g) == em_ndim(r) && !memcmp(em_sizes(g), em_sizes(r), em_ndim(g) * sizeof(int64_t));
    if (same_size && em_dtype_of(g) == em_dtype_of(r)) return 0;
    PyObject *name = hook_name(fn);
    if (!same_size) {
        PyErr_Format(PyExc_RuntimeError, "hook '%S' has changed the size of value", name);
    } else {
        PyObject *was = PyObject_CallMethod(grad, "type", NULL), *got = PyObject_CallMethod(res, "type", NULL);
        if (was && got)
            PyErr_Format(PyExc_RuntimeError, "hook '%S' has changed the type of value (was %S got %S)", name, was, got);
        Py_XDECREF(was);
        Py_XDECREF(got);
    }
    Py_XDECREF(name);
    return -1;
}

static em_tensor *run_grad_hook(const em_tensor *grad, void *fn)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    em_tensor *r = NULL;
    PyObject *g = emp_wrap(em_retain((em_tensor *)grad));
    PyObject *res = g ? PyObject_CallOneArg((PyObject *)fn, g) : NULL;
    if (res && res != Py_None && !check_hook_result(fn, g, res)) r = em_retain(emp_t(res));
    if (PyErr_Occurred()) emp_park_exception();
    Py_XDECREF(res);
    Py_XDECREF(g);
    PyGILState_Release(gil);
    return r;
}

static void run_post_accumulate_hook(em_tensor *leaf, void *fn)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *t = emp_wrap(em_retain(leaf));
    PyObject *res = t ? PyObject_CallOneArg((PyObject *)fn, t) : NULL;
    if (res && res != Py_None)
        PyErr_Format(PyExc_RuntimeError, "post accumulate grad hooks must return None, got %s", Py_TYPE(res)->tp_name);
    if (PyErr_Occurred()) emp_park_exception();
    Py_XDECREF(res);
    Py_XDECREF(t);
    PyGILState_Release(gil);
}

/* _register_hook(tensor, fn) / _register_post_accumulate_grad_hook(tensor, fn) -> handle id */
static PyObject *add_hook(PyObject *const *args, Py_ssize_t nargs, bool post)
{
    if (nargs != 2 || !emp_is_tensor(args[0]) || !PyCallable_Check(args[1]))
        return PyErr_Format(PyExc_TypeError, "register_hook expects a Tensor and a callable");
    PyObject *fn = Py_NewRef(args[1]); /* owned by the hook, released by free_callable */
    int id = post ? em_register_post_accumulate_grad_hook(emp_t(args[0]), run_post_accumulate_hook, fn, free_callable)
                  : em_register_hook(emp_t(args[0]), run_grad_hook, fn, free_callable);
    if (id < 0) {
        Py_DECREF(fn);
        return emp_raise();
    }
    return PyLong_FromLong(id);
}

static PyObject *register_hook(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    return add_hook(args, nargs, false);
}

static PyObject *register_post_accumulate_grad_hook(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    return add_hook(args, nargs, true);
}

/* _remove_hook(tensor, id) -> False when it was already gone */
static PyObject *remove_hook(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !emp_is_tensor(args[0])) return PyErr_Format(PyExc_TypeError, "_remove_hook(tensor, id)");
    long id = PyLong_AsLong(args[1]);
    if (id == -1 && PyErr_Occurred()) return NULL;
    if (id <= 0 || id > INT_MAX || em_remove_hook(emp_t(args[0]), (int)id)) {
        em_clear_error();
        Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

#define FASTCALL(name, fn) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, NULL}
PyMethodDef emp_autograd_functions[] = {
    FASTCALL("_run_backward", run_backward),
    FASTCALL("_run_grad", run_grad),
    FASTCALL("_register_hook", register_hook),
    FASTCALL("_register_post_accumulate_grad_hook", register_post_accumulate_grad_hook),
    FASTCALL("_remove_hook", remove_hook),
    FASTCALL("_node_pack_saved", node_pack_saved),
    {NULL},
};

int emp_autograd_init(PyObject *m)
{
    if (!(live_nodes = PyDict_New()) || !(node_types = PyDict_New())) return -1;
    if (PyType_Ready(&EmpNode_Type) || PyModule_AddObjectRef(m, "Node", (PyObject *)&EmpNode_Type)) return -1;
    return emp_function_init(m) || emp_autograd_hooks_init(m) ? -1 : 0;
}
