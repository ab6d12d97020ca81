/* The Tensor type: lifetime, identity and the attributes (shape, dtype,
 * grad, requires_grad...). Methods live in tensor_methods.c, operators in
 * pointwise.c, indexing in indexing.c.
 *
 * Note [One object per tensor]: an em_tensor keeps a pointer to its live
 * Python object (em_binding), so the same C tensor always comes back as the
 * same object (`x.grad is x.grad`, a Parameter stays a Parameter when it
 * comes back from C). The object owns one reference to the em_tensor; the
 * pointer back is not owned and is cleared when the object dies. */
#include "emp.h"
#include <math.h>

PyTypeObject *emp_tensor_class = &EmpTensorBase_Type;

static PyObject *wrap_as(PyTypeObject *type, em_tensor *t)
{
    EmpTensor *o = (EmpTensor *)type->tp_alloc(type, 0);
    if (!o) {
        em_release(t);
        return NULL;
    }
    o->t = t;
    em_set_binding(t, o);
    return (PyObject *)o;
}

PyObject *emp_wrap(em_tensor *t)
{
    if (!t) return emp_raise();
    PyObject *o = em_binding(t);
    if (o) {
        em_release(t);
        return Py_NewRef(o);
    }
    return wrap_as(emp_tensor_class, t);
}

PyObject *emp_wrap_tuple(int n, em_tensor **ts)
{
    PyObject *r = PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *o = !r ? NULL : ts[i] ? emp_wrap(ts[i]) : Py_NewRef(Py_None);
        if (!r) em_release(ts[i]);
        else if (!o) Py_CLEAR(r);
        else PyTuple_SET_ITEM(r, i, o);
    }
    return r;
}

PyObject *emp_status_self(em_status st, PyObject *self)
{
    if (st) return emp_raise();
    return Py_NewRef(self);
}

static int tensor_traverse(EmpTensor *self, visitproc visit, void *arg)
{
    Py_VISIT(self->dict);
    return 0;
}

static int tensor_clear(EmpTensor *self)
{
    Py_CLEAR(self->dict);
    return 0;
}

static void tensor_dealloc(EmpTensor *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (self->weakrefs) PyObject_ClearWeakRefs((PyObject *)self);
    tensor_clear(self);
    if (self->t) {
        em_set_binding(self->t, NULL);
        em_release(self->t);
    }
    type->tp_free((PyObject *)self); /* a Python subclass's subtype_dealloc drops its type reference */
}

/* Tensor(*sizes) or Tensor(sequence): PyTorch's legacy constructor, always
 * the default float dtype. */
static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if (kw && PyDict_GET_SIZE(kw)) return PyErr_Format(PyExc_TypeError, "Tensor() takes no keyword arguments");
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n == 1 && !PyLong_Check(PyTuple_GET_ITEM(args, 0))) {
        PyObject *obj = PyTuple_GET_ITEM(args, 0);
        em_tensor *t;
        if (emp_is_tensor(obj)) t = em_retain(emp_t(obj));
        else if (!(t = emp_tensor_from_object(obj, em_get_default_dtype()))) return NULL;
        return wrap_as(type, t);
    }
    int64_t sizes[EM_MAX_DIMS];
    if (n > EM_MAX_DIMS) return PyErr_Format(PyExc_ValueError, "at most %d dims are supported", EM_MAX_DIMS);
    for (Py_ssize_t i = 0; i < n; i++) {
        sizes[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(args, i));
        if (sizes[i] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return PyErr_Format(PyExc_TypeError, "Tensor(): expected ints or one sequence, got %s",
                                Py_TYPE(PyTuple_GET_ITEM(args, i))->tp_name);
        }
    }
    em_tensor *t = em_empty(n ? (int)n : 1, n ? sizes : (int64_t[]){0}, em_get_default_dtype());
    if (!t) return emp_raise();
    return wrap_as(type, t);
}

/* Tensor._make_subclass(cls, data, require_grad=False): a `cls` object over
 * data's storage, cut from data's history (how nn.Parameter is made). */
static PyObject *tensor_make_subclass(PyObject *unused, PyObject *args, PyObject *kw)
{
    static char *names[] = {"cls", "data", "require_grad", NULL};
    PyObject *cls, *data;
    int require_grad = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|p:_make_subclass", names, &cls, &data, &require_grad)) return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &EmpTensorBase_Type))
        return PyErr_Format(PyExc_TypeError, "cls must be a Tensor subclass");
    if (!emp_is_tensor(data))
        return PyErr_Format(PyExc_TypeError, "data must be a Tensor, not %s", Py_TYPE(data)->tp_name);
    em_tensor *t = em_detach(emp_t(data));
    if (!t) return emp_raise();
    if (require_grad && em_set_requires_grad(t, true)) {
        em_release(t);
        return emp_raise();
    }
    return wrap_as((PyTypeObject *)cls, t);
}

/* ---- attributes ------------------------------------------------------------ */
static PyObject *get_shape(EmpTensor *self, void *c) { return emp_size_new(em_ndim(self->t), em_sizes(self->t)); }
static PyObject *get_dtype(EmpTensor *self, void *c) { return Py_NewRef(emp_dtype_obj(em_dtype_of(self->t))); }
static PyObject *get_device(EmpTensor *self, void *c) { return emp_device_obj(em_device_of(self->t)); }
static PyObject *get_ndim(EmpTensor *self, void *c) { return PyLong_FromLong(em_ndim(self->t)); }
static PyObject *get_is_leaf(EmpTensor *self, void *c) { return PyBool_FromLong(em_is_leaf(self->t)); }
static PyObject *get_retains_grad(EmpTensor *self, void *c) { return PyBool_FromLong(em_retains_grad(self->t)); }
static PyObject *get_output_nr(EmpTensor *self, void *c) { return PyLong_FromLong(em_output_nr(self->t)); }
static PyObject *get_requires_grad(EmpTensor *self, void *c) { return PyBool_FromLong(em_requires_grad(self->t)); }
static PyObject *get_is_cuda(EmpTensor *self, void *c) { return PyBool_FromLong(em_device_of(self->t).type == EM_CUDA); }
static PyObject *get_is_meta(EmpTensor *self, void *c) { return PyBool_FromLong(em_device_of(self->t).type == EM_META); }
static PyObject *get_version(EmpTensor *self, void *c) { return PyLong_FromUnsignedLongLong(em_version(self->t)); }
static PyObject *get_itemsize(EmpTensor *self, void *c) { return PyLong_FromSize_t(em_dtype_size(em_dtype_of(self->t))); }
static PyObject *get_nbytes(EmpTensor *self, void *c)
{
    return PyLong_FromLongLong(em_numel(self->t) * (int64_t)em_dtype_size(em_dtype_of(self->t)));
}
static PyObject *get_is_inference(EmpTensor *self, void *c) { return PyBool_FromLong(em_is_inference(self->t)); }

static int set_requires_grad(EmpTensor *self, PyObject *v, void *c)
{
    if (!v || !PyBool_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool");
        return -1;
    }
    if (em_set_requires_grad(self->t, v == Py_True)) return emp_raise(), -1;
    return 0;
}

static PyObject *get_grad(EmpTensor *self, void *c)
{
    em_tensor *g = em_get_grad(self->t);
    if (!g) Py_RETURN_NONE;
    return emp_wrap(g);
}

static int set_grad(EmpTensor *self, PyObject *v, void *c)
{
    if (v && v != Py_None && !emp_is_tensor(v)) {
        PyErr_Format(PyExc_TypeError, "assigned grad expected to be a Tensor or None but got grad of type %s",
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    if (em_set_grad(self->t, v && v != Py_None ? emp_t(v) : NULL)) return emp_raise(), -1;
    return 0;
}

/* .data: the same storage without history; assigning swaps the tensor this
 * object stands for (PyTorch's `p.data = new`, which keeps p's identity). */
static PyObject *get_data(EmpTensor *self, void *c) { return emp_wrap(em_detach(self->t)); }

static int set_data(EmpTensor *self, PyObject *v, void *c)
{
    if (!v || !emp_is_tensor(v)) {
        PyErr_SetString(PyExc_TypeError, "Variable data has to be a tensor, but got something else");
        return -1;
    }
    em_tensor *src = emp_t(v), *t = em_detach(src);
    if (!t) return emp_raise(), -1;
    bool rg = em_requires_grad(self->t);
    if (rg && em_set_requires_grad(t, true)) {
        em_release(t);
        return emp_raise(), -1;
    }
    em_set_binding(self->t, NULL);
    em_release(self->t);
    self->t = t;
    em_set_binding(t, self);
    return 0;
}

static PyObject *get_grad_fn(EmpTensor *self, void *c)
{
    em_node *n = em_grad_fn(self->t);
    if (!n) Py_RETURN_NONE;
    return emp_node_obj(n);
}

/* T: every dim reversed (PyTorch 1.13 allows any ndim); mT: the last two. */
static PyObject *get_T(EmpTensor *self, void *c)
{
    int nd = em_ndim(self->t), perm[EM_MAX_DIMS];
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
    return emp_wrap(em_permute(self->t, perm));
}

static PyObject *get_mT(EmpTensor *self, void *c)
{
    if (em_ndim(self->t) == 0) return emp_wrap(em_t(self->t)); /* PyTorch: a 0-d tensor is its own mT */
    if (em_ndim(self->t) < 2) {
        PyErr_SetString(PyExc_RuntimeError, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.");
        return NULL;
    }
    return emp_wrap(em_transpose(self->t, -2, -1));
}

static PyObject *get_H(EmpTensor *self, void *c)
{
    if (em_ndim(self->t) == 1 || em_ndim(self->t) > 2) {
        PyErr_Format(PyExc_RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got %d-D tensor.",
                     em_ndim(self->t));
        return NULL;
    }
    em_tensor *t = em_t(self->t), *h = t ? em_conj(t) : NULL; /* the conjugate transpose: a conj view */
    em_release(t);
    return emp_wrap(h);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", (getter)get_shape, NULL, "The size of each dim (an ember.Size).", NULL},
    {"dtype", (getter)get_dtype, NULL, NULL, NULL},
    {"device", (getter)get_device, NULL, NULL, NULL},
    {"ndim", (getter)get_ndim, NULL, NULL, NULL},
    {"is_leaf", (getter)get_is_leaf, NULL, NULL, NULL},
    {"retains_grad", (getter)get_retains_grad, NULL, "Whether retain_grad() keeps this non-leaf's .grad.", NULL},
    {"output_nr", (getter)get_output_nr, NULL, "Which output of its grad_fn this tensor is (0 for leaves).", NULL},
    {"requires_grad", (getter)get_requires_grad, (setter)set_requires_grad, NULL, NULL},
    {"grad", (getter)get_grad, (setter)set_grad, NULL, NULL},
    {"data", (getter)get_data, (setter)set_data, NULL, NULL},
    {"grad_fn", (getter)get_grad_fn, NULL, NULL, NULL},
    {"is_cuda", (getter)get_is_cuda, NULL, NULL, NULL},
    {"is_meta", (getter)get_is_meta, NULL, NULL, NULL},
    {"is_inference_tensor", (getter)get_is_inference, NULL, NULL, NULL},
    {"_version", (getter)get_version, NULL, NULL, NULL},
    {"itemsize", (getter)get_itemsize, NULL, NULL, NULL},
    {"nbytes", (getter)get_nbytes, NULL, NULL, NULL},
    {"T", (getter)get_T, NULL, NULL, NULL},
    {"mT", (getter)get_mT, NULL, NULL, NULL},
    {"H", (getter)get_H, NULL, NULL, NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyMethodDef make_subclass_def = {"_make_subclass", (PyCFunction)(void (*)(void))tensor_make_subclass,
                                        METH_VARARGS | METH_KEYWORDS, NULL};

/* .item(): the one element as a Python bool, int or float (int64 exactly). */
PyObject *emp_tensor_item(PyObject *self)
{
    em_tensor *t = emp_t(self);
    double v;
    if (em_numel(t) != 1)
        return PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar",
                            (long long)em_numel(t));
    em_dtype dt = em_dtype_of(t);
    if (dt == EM_I64 && !em_is_neg(t)) { /* exact, not through a double; a negative view: em_item */
        em_tensor *h = em_host_tensor(t);
        PyObject *r = h ? PyLong_FromLongLong(*(int64_t *)em_data_ptr(h)) : emp_raise();
        em_release(h);
        return r;
    }
    if (em_item(t, &v)) return emp_raise();
    if (dt == EM_BOOL) return PyBool_FromLong(v != 0);
    if (em_dtype_is_complex(dt)) {
        double re, im;
        if (em_item_complex(t, &re, &im)) return emp_raise();
        return PyComplex_FromDoubles(re, im);
    }
    if (em_dtype_is_float(dt)) return PyFloat_FromDouble(v);
    return PyLong_FromDouble(v);
}

static int tensor_bool(EmpTensor *self)
{
    double v;
    if (em_numel(self->t) != 1) {
        PyErr_Format(PyExc_RuntimeError, "Boolean value of Tensor with %s values is ambiguous",
                     em_numel(self->t) ? "more than one" : "no");
        return -1;
    }
    double im;
    if (em_item_complex(self->t, &v, &im)) return emp_raise(), -1;
    return v != 0 || im != 0;
}

/* A complex element with a nonzero imaginary part has no real value (PyTorch's error). */
static int real_item(EmpTensor *self, double *v)
{
    double im;
    if (em_item_complex(self->t, v, &im)) return emp_raise(), -1;
    if (im != 0) {
        PyErr_SetString(PyExc_RuntimeError, "value cannot be converted to type double without overflow");
        return -1;
    }
    return 0;
}

static PyObject *tensor_float(EmpTensor *self)
{
    double v;
    if (em_numel(self->t) != 1)
        return PyErr_Format(PyExc_ValueError, "only one element tensors can be converted to Python scalars");
    if (real_item(self, &v)) return NULL;
    return PyFloat_FromDouble(v);
}

static PyObject *tensor_int(EmpTensor *self)
{
    double v;
    if (em_numel(self->t) != 1)
        return PyErr_Format(PyExc_ValueError, "only one element tensors can be converted to Python scalars");
    em_dtype dt = em_dtype_of(self->t);
    if (!em_dtype_is_float(dt) && !em_dtype_is_complex(dt)) return PyNumber_Long(emp_tensor_item((PyObject *)self));
    if (real_item(self, &v)) return NULL;
    if (isnan(v) || isinf(v)) return PyLong_FromDouble(v); /* raises as Python's int(float) */
    return PyLong_FromDouble(trunc(v));
}

static PyObject *tensor_index(EmpTensor *self)
{
    if (em_numel(self->t) != 1 || em_dtype_is_float(em_dtype_of(self->t)) || em_dtype_of(self->t) == EM_BOOL)
        return PyErr_Format(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
    return tensor_int(self);
}

void emp_tensor_number_slots(PyNumberMethods *nb)
{
    nb->nb_bool = (inquiry)tensor_bool;
    nb->nb_float = (unaryfunc)tensor_float;
    nb->nb_int = (unaryfunc)tensor_int;
    nb->nb_index = (unaryfunc)tensor_index;
}

static Py_ssize_t tensor_len(EmpTensor *self)
{
    if (em_ndim(self->t) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)em_sizes(self->t)[0];
}

PySequenceMethods emp_tensor_as_sequence = {.sq_length = (lenfunc)tensor_len};

PyTypeObject EmpTensorBase_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember._C.TensorBase",
    .tp_basicsize = sizeof(EmpTensor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_traverse = (traverseproc)tensor_traverse,
    .tp_clear = (inquiry)tensor_clear,
    .tp_new = tensor_new,
    .tp_getset = tensor_getset,
    .tp_as_number = &emp_tensor_as_number,
    .tp_as_sequence = &emp_tensor_as_sequence,
    .tp_as_buffer = &emp_tensor_as_buffer,
    .tp_as_mapping = &emp_tensor_as_mapping,
    .tp_richcompare = emp_tensor_richcompare,
    .tp_dictoffset = offsetof(EmpTensor, dict),
    .tp_weaklistoffset = offsetof(EmpTensor, weakrefs),
};

int emp_tensor_init(PyObject *m)
{
    EmpTensorBase_Type.tp_hash = PyBaseObject_Type.tp_hash; /* by identity, though == is elementwise */
    emp_tensor_number_slots(&emp_tensor_as_number);
    if (PyType_Ready(&EmpTensorBase_Type)) return -1;
    PyObject *f = PyCFunction_New(&make_subclass_def, NULL);
    PyObject *st = f ? PyStaticMethod_New(f) : NULL;
    Py_XDECREF(f);
    if (!st || PyDict_SetItemString(EmpTensorBase_Type.tp_dict, "_make_subclass", st)) {
        Py_XDECREF(st);
        return -1;
    }
    Py_DECREF(st);
    PyType_Modified(&EmpTensorBase_Type);
    return PyModule_AddObjectRef(m, "TensorBase", (PyObject *)&EmpTensorBase_Type);
}
