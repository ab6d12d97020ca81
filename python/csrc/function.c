/* Custom autograd Functions (ember.autograd.Function) on em_function_apply:
 * a Python class's static forward and backward run as the C node's
 * callbacks; the Function class itself is in python/ember/autograd/function.py.
 *
 * As in PyTorch, the ctx given to forward and backward is also the node
 * (y.grad_fn): an object of the class's `_backward_cls`, a Python subclass of
 * _C._FunctionCtx (so user attributes live in its __dict__). The C node owns
 * it (the `user` data of em_function_apply), and it points back weakly.
 * Only tensor arguments and results go to C (EM_FUNCTION_MAX_IN /
 * EM_FUNCTION_MAX_OUT of them); the others stay in Python, and get None as
 * their gradient. */
#include "emp_autograd.h"

typedef struct EmpFunctionCtx {
    EmpNode base;               /* base.node: set once apply made the node, cleared when it is freed */
    em_function_ctx *c;         /* from forward until the node is freed */
    PyObject *cls;              /* the Function subclass: its forward and backward */
    PyObject *needs_input_grad; /* a bool per argument */
    PyObject *args, *result;    /* forward's arguments and return value, during apply only */
    /* what forward asked for (ctx.save_for_backward...), handed to C when it returns */
    PyObject *to_save, *dirty, *non_differentiable;
    bool materialize_grads;
    int nargs, nresults, nin;
    int in_pos[EM_FUNCTION_MAX_IN];   /* the argument position of C input i */
    int out_pos[EM_FUNCTION_MAX_OUT]; /* the result position of C output k */
} EmpFunctionCtx;

static PyTypeObject EmpFunctionCtx_Type;

static const char *ctx_name(EmpFunctionCtx *ctx)
{
    return ctx->base.node ? em_node_name(ctx->base.node) : _PyType_Name(Py_TYPE(ctx));
}

/* Calls fn(ctx, items[0..n)) where items may hold NULL for None. */
static PyObject *call_with_ctx(PyObject *owner, const char *method, EmpFunctionCtx *ctx, int n, PyObject *const *items)
{
    PyObject *fn = PyObject_GetAttrString(owner, method);
    PyObject **v = fn ? PyMem_Malloc((n + 1) * sizeof *v) : NULL;
    PyObject *r = NULL;
    if (fn && !v) PyErr_NoMemory();
    if (v) {
        v[0] = (PyObject *)ctx;
        for (int i = 0; i < n; i++) v[i + 1] = items[i] ? items[i] : Py_None;
        r = PyObject_Vectorcall(fn, v, n + 1, NULL);
    }
    PyMem_Free(v);
    Py_XDECREF(fn);
    return r;
}

/* ---- forward ------------------------------------------------------------------------ */
/* Hands what forward marked to C, then forgets it (the tuples would hold the
 * outputs: a cycle through the node). */
static int pass_marks(EmpFunctionCtx *ctx)
{
    em_function_ctx *c = ctx->c;
    em_status st = EM_OK;
    if (ctx->to_save) {
        int n = (int)PyTuple_GET_SIZE(ctx->to_save);
        const em_tensor **ts = PyMem_Calloc(n ? n : 1, sizeof *ts);
        if (!ts) return PyErr_NoMemory(), -1;
        for (int i = 0; i < n; i++) {
            PyObject *o = PyTuple_GET_ITEM(ctx->to_save, i);
            ts[i] = o == Py_None ? NULL : emp_t(o);
        }
        st = em_ctx_save_for_backward(c, n, ts);
        PyMem_Free(ts);
    }
    for (Py_ssize_t i = 0; !st && ctx->dirty && i < PyTuple_GET_SIZE(ctx->dirty); i++)
        st = em_ctx_mark_dirty(c, emp_t(PyTuple_GET_ITEM(ctx->dirty, i)));
    for (Py_ssize_t i = 0; !st && ctx->non_differentiable && i < PyTuple_GET_SIZE(ctx->non_differentiable); i++)
        st = em_ctx_mark_non_differentiable(c, emp_t(PyTuple_GET_ITEM(ctx->non_differentiable, i)));
    em_ctx_set_materialize_grads(c, ctx->materialize_grads);
    Py_CLEAR(ctx->to_save);
    Py_CLEAR(ctx->dirty);
    Py_CLEAR(ctx->non_differentiable);
    return st ? (emp_raise(), -1) : 0;
}

/* Records which tensors forward returned (at most EM_FUNCTION_MAX_OUT). */
static int collect_outputs(EmpFunctionCtx *ctx, PyObject *res, int *nout, em_tensor **out)
{
    bool tuple = PyTuple_Check(res);
    ctx->nresults = tuple ? (int)PyTuple_GET_SIZE(res) : 1;
    for (int i = 0; i < ctx->nresults; i++) {
        PyObject *o = tuple ? PyTuple_GET_ITEM(res, i) : res;
        if (!emp_is_tensor(o)) continue;
        if (*nout == EM_FUNCTION_MAX_OUT)
            return PyErr_Format(PyExc_RuntimeError, "%s: forward returned more than %d tensors, the most a "
                                "custom Function supports in Ember", ctx_name(ctx), EM_FUNCTION_MAX_OUT), -1;
        ctx->out_pos[*nout] = i;
        out[(*nout)++] = em_retain(emp_t(o));
    }
    return 0;
}

static em_status ctx_forward(em_function_ctx *c, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    EmpFunctionCtx *ctx = em_ctx_user(c);
    ctx->c = c;
    int r = -1;
    PyObject *needs = PyTuple_New(ctx->nargs);
    for (int i = 0; needs && i < ctx->nargs; i++) PyTuple_SET_ITEM(needs, i, Py_NewRef(Py_False));
    for (int i = 0; needs && i < ctx->nin; i++)
        Py_SETREF(PyTuple_GET_ITEM(needs, ctx->in_pos[i]), PyBool_FromLong(em_ctx_needs_input_grad(c, i)));
    Py_XSETREF(ctx->needs_input_grad, needs);
    if (needs) ctx->result = call_with_ctx(ctx->cls, "forward", ctx, ctx->nargs, &PyTuple_GET_ITEM(ctx->args, 0));
    if (ctx->result && !collect_outputs(ctx, ctx->result, nout, out)) r = pass_marks(ctx);
    em_status st = r ? emp_park_exception() : EM_OK;
    PyGILState_Release(gil);
    return st;
}

/* ---- backward ------------------------------------------------------------------------ */
static int check_grad_count(EmpFunctionCtx *ctx, PyObject *grads)
{
    Py_ssize_t n = PyTuple_GET_SIZE(grads);
    bool ok = n >= ctx->nargs;
    for (Py_ssize_t i = ctx->nargs; i < n; i++) ok &= PyTuple_GET_ITEM(grads, i) == Py_None; /* extra Nones are fine */
    if (ok) return 0;
    PyErr_Format(PyExc_RuntimeError, "function %s returned an incorrect number of gradients (expected %d, got %zd)",
                 ctx_name(ctx), ctx->nargs, n);
    return -1;
}

/* Backward's results, one per argument, into grad_in (one per C input). */
static int take_grads(EmpFunctionCtx *ctx, PyObject *res, em_tensor **grad_in)
{
    PyObject *grads = PyTuple_Check(res) ? Py_NewRef(res) : PyTuple_Pack(1, res);
    if (!grads || check_grad_count(ctx, grads)) return Py_XDECREF(grads), -1;
    int r = 0;
    for (int pos = 0, i = 0; pos < ctx->nargs && !r; pos++) {
        PyObject *g = PyTuple_GET_ITEM(grads, pos);
        bool is_tensor_arg = i < ctx->nin && ctx->in_pos[i] == pos;
        if (g == Py_None) {
            i += is_tensor_arg;
        } else if (!is_tensor_arg) {
            r = -1;
            PyErr_Format(PyExc_RuntimeError, "function %s returned a gradient different than None at position %d, "
                         "but the corresponding forward input was not a Variable", ctx_name(ctx), pos + 1);
        } else if (!emp_is_tensor(g)) {
            r = -1;
            PyErr_Format(PyExc_RuntimeError, "expected Variable or None (got %s)", Py_TYPE(g)->tp_name);
        } else {
            grad_in[i++] = em_retain(emp_t(g)); /* the engine releases them, also on failure */
        }
    }
    Py_DECREF(grads);
    return r;
}

static em_status ctx_backward(em_function_ctx *c, int nout, em_tensor *const *grad_out, int nin, em_tensor **grad_in)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    EmpFunctionCtx *ctx = em_ctx_user(c);
    PyObject **grads = PyMem_Calloc(ctx->nresults ? ctx->nresults : 1, sizeof *grads), *res = NULL;
    int ok = grads != NULL;
    for (int k = 0; ok && k < nout; k++)
        if (grad_out[k] && !(grads[ctx->out_pos[k]] = emp_wrap(em_retain(grad_out[k])))) ok = 0;
    if (ok) res = call_with_ctx(ctx->cls, "backward", ctx, ctx->nresults, grads);
    for (int i = 0; grads && i < ctx->nresults; i++) Py_XDECREF(grads[i]);
    PyMem_Free(grads);
    if (!grads) PyErr_NoMemory();
    em_status st = !res || take_grads(ctx, res, grad_in) ? emp_park_exception() : EM_OK;
    Py_XDECREF(res);
    PyGILState_Release(gil);
    return st;
}

/* The node is freed: the ctx loses its C side (Note [Node identity]). */
static void ctx_free(void *user)
{
    PyGILState_STATE gil = PyGILState_Ensure();
    EmpFunctionCtx *ctx = user;
    ctx->c = NULL;
    if (ctx->base.node) emp_node_forget(ctx->base.node, (PyObject *)ctx);
    ctx->base.node = NULL;
    Py_DECREF(ctx);
    PyGILState_Release(gil);
}

/* ---- apply ------------------------------------------------------------------------ */
static void capsule_free(PyObject *cap) { PyMem_RawFree(PyCapsule_GetPointer(cap, "ember.function")); }

/* _function_spec(name): the C description of a Function class, kept on its
 * _backward_cls (which every ctx, hence every node using it, keeps alive). */
static PyObject *function_spec(PyObject *m, PyObject *name)
{
    const char *s = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!s) return PyErr_Format(PyExc_TypeError, "_function_spec expects a str");
    em_function *f = PyMem_RawCalloc(1, sizeof *f + strlen(s) + 1);
    if (!f) return PyErr_NoMemory();
    *f = (em_function){.name = strcpy((char *)(f + 1), s), .forward = ctx_forward, .backward = ctx_backward,
                       .free_user = ctx_free};
    PyObject *cap = PyCapsule_New(f, "ember.function", capsule_free);
    if (!cap) PyMem_RawFree(f);
    return cap;
}

/* forward's return value with its tensors replaced by the outputs (stolen). */
static PyObject *wrap_results(EmpFunctionCtx *ctx, int nout, em_tensor **out)
{
    if (!PyTuple_Check(ctx->result)) return nout ? emp_wrap(out[0]) : Py_NewRef(ctx->result);
    PyObject *r = PyTuple_New(ctx->nresults); /* a copy: forward's tuple may be the user's */
    for (int i = 0; r && i < ctx->nresults; i++) PyTuple_SET_ITEM(r, i, Py_NewRef(PyTuple_GET_ITEM(ctx->result, i)));
    for (int k = 0; k < nout; k++) {
        PyObject *o = r ? emp_wrap(out[k]) : (em_release(out[k]), NULL);
        if (!o) Py_CLEAR(r);
        else Py_SETREF(PyTuple_GET_ITEM(r, ctx->out_pos[k]), o);
    }
    return r;
}

/* The node made for ctx (it is the grad_fn of its differentiable outputs),
 * so that y.grad_fn is ctx. */
static int remember_node(EmpFunctionCtx *ctx, int nout, em_tensor *const *out)
{
    for (int k = 0; ctx->c && k < nout; k++) {
        em_node *n = em_grad_fn(out[k]);
        if (!n) continue;
        ctx->base.node = n;
        return emp_node_remember(n, (PyObject *)ctx);
    }
    return 0;
}

static EmpFunctionCtx *new_ctx(PyObject *cls, em_function **f)
{
    PyObject *bcls = PyObject_GetAttrString(cls, "_backward_cls");
    PyObject *cap = bcls ? PyObject_GetAttrString(bcls, "_em_function") : NULL;
    *f = cap ? PyCapsule_GetPointer(cap, "ember.function") : NULL;
    EmpFunctionCtx *ctx = NULL;
    if (*f && (!PyType_Check(bcls) || !PyType_IsSubtype((PyTypeObject *)bcls, &EmpFunctionCtx_Type)))
        PyErr_Format(PyExc_TypeError, "%R is not an ember.autograd.Function", cls);
    else if (*f)
        ctx = (EmpFunctionCtx *)((PyTypeObject *)bcls)->tp_alloc((PyTypeObject *)bcls, 0);
    Py_XDECREF(cap); /* bcls keeps it, and ctx keeps bcls */
    Py_XDECREF(bcls);
    return ctx;
}

/* _function_apply(cls, args): Function.apply */
static PyObject *function_apply(PyObject *m, PyObject *const *argv, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(argv[1])) return PyErr_Format(PyExc_TypeError, "_function_apply(cls, args)");
    PyObject *args = argv[1];
    em_function *f;
    EmpFunctionCtx *ctx = new_ctx(argv[0], &f);
    if (!ctx) return NULL;
    if (PyTuple_GET_SIZE(args) > INT_MAX / 2) return Py_DECREF(ctx), PyErr_NoMemory();
    ctx->cls = Py_NewRef(argv[0]);
    ctx->args = Py_NewRef(args);
    ctx->nargs = (int)PyTuple_GET_SIZE(args);
    ctx->materialize_grads = true;
    em_tensor *in[EM_FUNCTION_MAX_IN]; /* held: forward could swap an argument's tensor (x.data = ...) */
    for (int i = 0; i < ctx->nargs; i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        if (!emp_is_tensor(a)) continue;
        if (ctx->nin == EM_FUNCTION_MAX_IN) {
            PyErr_Format(PyExc_RuntimeError, "%s.apply: more than %d tensor arguments, the most a custom Function "
                         "supports in Ember", ((PyTypeObject *)argv[0])->tp_name, EM_FUNCTION_MAX_IN);
            break;
        }
        ctx->in_pos[ctx->nin] = i;
        in[ctx->nin++] = em_retain(emp_t(a));
    }
    PyObject *r = NULL;
    if (!PyErr_Occurred()) {
        em_tensor *out[EM_FUNCTION_MAX_OUT];
        int nout = 0;
        em_status st = em_function_apply(f, Py_NewRef(ctx), ctx->nin, (const em_tensor *const *)in, &nout, out);
        if (st) r = emp_raise();
        else if (remember_node(ctx, nout, out)) for (int k = 0; k < nout; k++) em_release(out[k]);
        else r = wrap_results(ctx, nout, out);
    }
    for (int i = 0; i < ctx->nin; i++) em_release(in[i]);
    Py_CLEAR(ctx->args);
    Py_CLEAR(ctx->result);
    Py_DECREF(ctx);
    return r;
}

/* ---- the ctx object ---------------------------------------------------------------- */
/* Stores *args (tensors, or None where none_ok) in *slot. */
static PyObject *store_tensors(PyObject **slot, PyObject *const *args, Py_ssize_t n, bool none_ok, const char *what)
{
    for (Py_ssize_t i = 0; i < n; i++)
        if (!emp_is_tensor(args[i]) && !(none_ok && args[i] == Py_None))
            return PyErr_Format(PyExc_TypeError, "%s can only save variables, but argument %zd is of type %s", what,
                                i, Py_TYPE(args[i])->tp_name);
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(args[i]));
    Py_XSETREF(*slot, t);
    Py_RETURN_NONE;
}

static PyObject *save_for_backward(EmpFunctionCtx *self, PyObject *const *args, Py_ssize_t n)
{
    return store_tensors(&self->to_save, args, n, true, "save_for_backward");
}

static PyObject *mark_dirty(EmpFunctionCtx *self, PyObject *const *args, Py_ssize_t n)
{
    return store_tensors(&self->dirty, args, n, false, "mark_dirty");
}

static PyObject *mark_non_differentiable(EmpFunctionCtx *self, PyObject *const *args, Py_ssize_t n)
{
    return store_tensors(&self->non_differentiable, args, n, false, "mark_non_differentiable");
}

static PyObject *set_materialize_grads(EmpFunctionCtx *self, PyObject *value)
{
    int v = PyObject_IsTrue(value);
    if (v < 0) return NULL;
    self->materialize_grads = v;
    if (self->c) em_ctx_set_materialize_grads(self->c, v);
    Py_RETURN_NONE;
}

static PyObject *get_saved_tensors(EmpFunctionCtx *self, void *unused)
{
    if (!self->c)
        return PyErr_Format(PyExc_RuntimeError, "saved tensors of %s are not available: nothing was recorded, or "
                            "its graph was freed", ctx_name(self));
    int n = em_ctx_num_saved(self->c);
    PyObject *r = PyTuple_New(n);
    for (int i = 0; r && i < n; i++) {
        em_tensor *t = em_ctx_saved_tensor(self->c, i);
        PyObject *o = t ? emp_wrap(t) : em_error_code() ? emp_raise() : Py_NewRef(Py_None);
        if (!o) Py_CLEAR(r);
        else PyTuple_SET_ITEM(r, i, o);
    }
    return r;
}

static PyObject *get_needs_input_grad(EmpFunctionCtx *self, void *unused)
{
    if (!self->needs_input_grad) return PyErr_Format(PyExc_AttributeError, "needs_input_grad is set by apply");
    return Py_NewRef(self->needs_input_grad);
}

#define CTX_FASTCALL(name, doc) {#name, (PyCFunction)(void (*)(void))name, METH_FASTCALL, doc}
static PyMethodDef ctx_methods[] = {
    CTX_FASTCALL(save_for_backward, "Saves tensors (or None) for backward, read there as ctx.saved_tensors."),
    CTX_FASTCALL(mark_dirty, "Marks inputs that forward modified in place (they must be returned)."),
    CTX_FASTCALL(mark_non_differentiable, "Marks outputs that get no gradient."),
    {"set_materialize_grads", (PyCFunction)set_materialize_grads, METH_O,
     "False: missing output gradients reach backward as None instead of zeros."},
    {NULL},
};

static PyGetSetDef ctx_getset[] = {
    {"saved_tensors", (getter)get_saved_tensors, NULL, "The tensors given to save_for_backward.", NULL},
    {"needs_input_grad", (getter)get_needs_input_grad, NULL, "A bool per argument of forward.", NULL},
    {NULL},
};

static int ctx_traverse(EmpFunctionCtx *self, visitproc visit, void *arg)
{
    Py_VISIT(self->cls);
    Py_VISIT(self->needs_input_grad);
    Py_VISIT(self->args);
    Py_VISIT(self->result);
    Py_VISIT(self->to_save);
    Py_VISIT(self->dirty);
    Py_VISIT(self->non_differentiable);
    return EmpNode_Type.tp_traverse((PyObject *)self, visit, arg);
}

static int ctx_clear(EmpFunctionCtx *self)
{
    Py_CLEAR(self->cls);
    Py_CLEAR(self->needs_input_grad);
    Py_CLEAR(self->args);
    Py_CLEAR(self->result);
    Py_CLEAR(self->to_save);
    Py_CLEAR(self->dirty);
    Py_CLEAR(self->non_differentiable);
    return EmpNode_Type.tp_clear((PyObject *)self);
}

static void ctx_dealloc(EmpFunctionCtx *self)
{
    PyObject_GC_UnTrack(self);
    ctx_clear(self);
    EmpNode_Type.tp_dealloc((PyObject *)self);
}

static PyTypeObject EmpFunctionCtx_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember._C._FunctionCtx",
    .tp_basicsize = sizeof(EmpFunctionCtx),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The ctx of a custom Function, which is also its graph node.",
    .tp_base = &EmpNode_Type,
    .tp_dealloc = (destructor)ctx_dealloc,
    .tp_traverse = (traverseproc)ctx_traverse,
    .tp_clear = (inquiry)ctx_clear,
    .tp_methods = ctx_methods,
    .tp_getset = ctx_getset,
};

PyMethodDef emp_function_functions[] = {
    {"_function_spec", function_spec, METH_O, NULL},
    {"_function_apply", (PyCFunction)(void (*)(void))function_apply, METH_FASTCALL, NULL},
    {NULL},
};

int emp_function_init(PyObject *m)
{
    if (PyType_Ready(&EmpFunctionCtx_Type)) return -1;
    if (PyModule_AddObjectRef(m, "_FunctionCtx", (PyObject *)&EmpFunctionCtx_Type)) return -1;
    return PyModule_AddFunctions(m, emp_function_functions);
}
