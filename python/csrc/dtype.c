/* ember.dtype, ember.device and ember.Size: the small value types of the API. */
#include "emp.h"

/* ---- dtype -------------------------------------------------------------- */
static EmpDtype dtype_objs[EM_DTYPE_COUNT];

/* PyTorch's aliases, registered on the module next to the canonical names. */
static const struct { const char *alias; em_dtype dt; } dtype_aliases[] = {
    {"float", EM_F32}, {"double", EM_F64}, {"half", EM_F16}, {"short", EM_I16},
    {"int", EM_I32},   {"long", EM_I64},  {"cfloat", EM_C64}, {"cdouble", EM_C128}, {"chalf", EM_C32},
};

PyObject *emp_dtype_obj(em_dtype dt) { return (PyObject *)&dtype_objs[dt]; }

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("ember.%s", em_dtype_name(((EmpDtype *)self)->dtype));
}

static PyObject *dtype_is_floating_point(PyObject *self, void *c)
{
    return PyBool_FromLong(em_dtype_is_float(((EmpDtype *)self)->dtype));
}
static PyObject *dtype_is_signed(PyObject *self, void *c)
{
    return PyBool_FromLong(em_dtype_is_signed(((EmpDtype *)self)->dtype));
}
static PyObject *dtype_is_complex(PyObject *self, void *c)
{
    return PyBool_FromLong(em_dtype_is_complex(((EmpDtype *)self)->dtype));
}
static PyObject *dtype_itemsize(PyObject *self, void *c)
{
    return PyLong_FromSize_t(em_dtype_size(((EmpDtype *)self)->dtype));
}
static PyObject *dtype_reduce(PyObject *self, PyObject *unused)
{
    return PyUnicode_FromString(em_dtype_name(((EmpDtype *)self)->dtype)); /* pickled as the module global */
}

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_is_floating_point, NULL, NULL, NULL},
    {"is_signed", dtype_is_signed, NULL, NULL, NULL},
    {"is_complex", dtype_is_complex, NULL, NULL, NULL},
    {"itemsize", dtype_itemsize, NULL, NULL, NULL},
    {NULL},
};
static PyMethodDef dtype_methods[] = {{"__reduce__", dtype_reduce, METH_NOARGS, NULL}, {NULL}};

PyTypeObject EmpDtype_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember.dtype",
    .tp_basicsize = sizeof(EmpDtype),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_repr = dtype_repr,
    .tp_getset = dtype_getset,
    .tp_methods = dtype_methods,
};

/* ---- device ------------------------------------------------------------- */
static const char *device_type_names[EM_DEVICE_TYPE_COUNT] = {[EM_CPU] = "cpu", [EM_CUDA] = "cuda", [EM_META] = "meta"};

static int device_type_from(const char *s, size_t n)
{
    for (int i = 0; i < EM_DEVICE_TYPE_COUNT; i++)
        if (strlen(device_type_names[i]) == n && !strncmp(s, device_type_names[i], n)) return i;
    return -1;
}

int emp_parse_device(PyObject *o, em_device *out)
{
    if (Py_TYPE(o) == &EmpDevice_Type) {
        *out = ((EmpDevice *)o)->device;
        return 0;
    }
    if (PyLong_Check(o)) { /* an ordinal means a CUDA device, as in PyTorch */
        int64_t i;
        if (emp_as_int64(o, &i)) return -1;
        if (i < 0 || i > 127) {
            PyErr_Format(PyExc_RuntimeError, "Device index must not be negative");
            return -1;
        }
        *out = (em_device){EM_CUDA, (int8_t)i};
        return 0;
    }
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "expected a device, not %s", Py_TYPE(o)->tp_name);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(o);
    if (!s) return -1;
    const char *colon = strchr(s, ':');
    int type = device_type_from(s, colon ? (size_t)(colon - s) : strlen(s));
    long index = 0;
    if (colon) {
        char *end;
        index = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || index < 0 || index > 127) type = -1;
    }
    if (type < 0) {
        PyErr_Format(PyExc_RuntimeError,
                     "Expected one of cpu, cuda, meta device type at start of device string: %s", s);
        return -1;
    }
    *out = (em_device){(int8_t)type, (int8_t)(colon ? index : (type == EM_CUDA ? -1 : 0))}; /* cpu, meta: index 0 */
    return 0;
}

PyObject *emp_device_obj(em_device d)
{
    EmpDevice *o = PyObject_New(EmpDevice, &EmpDevice_Type);
    if (o) o->device = d;
    return (PyObject *)o;
}

static PyObject *device_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"type", "index", NULL};
    PyObject *spec, *index = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:device", names, &spec, &index)) return NULL;
    em_device d;
    if (emp_parse_device(spec, &d)) return NULL;
    if (index != Py_None) {
        if (!PyUnicode_Check(spec) || strchr(PyUnicode_AsUTF8(spec), ':')) {
            PyErr_SetString(PyExc_RuntimeError, "type (string) must not include an index because index was passed explicitly");
            return NULL;
        }
        int64_t i;
        if (emp_as_int64(index, &i)) return NULL;
        if (i < 0 || i > 127) return PyErr_Format(PyExc_RuntimeError, "Device index must not be negative");
        d.index = (int8_t)i;
    }
    return emp_device_obj(d);
}

static PyObject *device_str(PyObject *self)
{
    em_device d = ((EmpDevice *)self)->device;
    if (d.index < 0 || (d.type != EM_CUDA && d.index == 0)) return PyUnicode_FromString(device_type_names[d.type]);
    return PyUnicode_FromFormat("%s:%d", device_type_names[d.type], d.index);
}

static PyObject *device_repr(PyObject *self)
{
    em_device d = ((EmpDevice *)self)->device;
    if (d.index < 0 || (d.type != EM_CUDA && d.index == 0))
        return PyUnicode_FromFormat("device(type='%s')", device_type_names[d.type]);
    return PyUnicode_FromFormat("device(type='%s', index=%d)", device_type_names[d.type], d.index);
}

static PyObject *device_type(PyObject *self, void *c)
{
    return PyUnicode_FromString(device_type_names[((EmpDevice *)self)->device.type]);
}
static PyObject *device_index(PyObject *self, void *c)
{
    em_device d = ((EmpDevice *)self)->device;
    if (d.index < 0 || d.type != EM_CUDA) Py_RETURN_NONE;
    return PyLong_FromLong(d.index);
}

static PyObject *device_richcompare(PyObject *a, PyObject *b, int op)
{
    if (Py_TYPE(b) != &EmpDevice_Type || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
    em_device x = ((EmpDevice *)a)->device, y = ((EmpDevice *)b)->device;
    return PyBool_FromLong((x.type == y.type && x.index == y.index) == (op == Py_EQ));
}

static Py_hash_t device_hash(PyObject *self)
{
    em_device d = ((EmpDevice *)self)->device;
    return (Py_hash_t)(d.type * 256 + d.index + 2);
}

static PyGetSetDef device_getset[] = {
    {"type", device_type, NULL, NULL, NULL},
    {"index", device_index, NULL, NULL, NULL},
    {NULL},
};

PyTypeObject EmpDevice_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember.device",
    .tp_basicsize = sizeof(EmpDevice),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = device_new,
    .tp_repr = device_repr,
    .tp_str = device_str,
    .tp_hash = device_hash,
    .tp_richcompare = device_richcompare,
    .tp_getset = device_getset,
};

/* ---- Size: a tuple of ints ----------------------------------------------- */
PyObject *emp_size_new(int n, const int64_t *v)
{
    PyObject *s = PyTuple_Type.tp_alloc(&EmpSize_Type, n);
    for (int i = 0; s && i < n; i++) {
        PyObject *x = PyLong_FromLongLong(v[i]);
        if (!x) Py_CLEAR(s);
        else PyTuple_SET_ITEM(s, i, x);
    }
    return s;
}

static PyObject *size_repr(PyObject *self)
{
    PyObject *list = PySequence_List(self);
    if (!list) return NULL;
    PyObject *r = PyUnicode_FromFormat("ember.Size(%R)", list);
    Py_DECREF(list);
    return r;
}

static PyObject *size_numel(PyObject *self, PyObject *unused)
{
    long long n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); i++) n *= PyLong_AsLongLong(PyTuple_GET_ITEM(self, i));
    return PyErr_Occurred() ? NULL : PyLong_FromLongLong(n);
}

static PyObject *size_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *t = PyTuple_Type.tp_new(type, args, kw);
    for (Py_ssize_t i = 0; t && i < PyTuple_GET_SIZE(t); i++)
        if (!PyLong_Check(PyTuple_GET_ITEM(t, i))) {
            PyErr_Format(PyExc_TypeError, "ember.Size() takes an iterable of 'int' (item %zd is '%s')", i,
                         Py_TYPE(PyTuple_GET_ITEM(t, i))->tp_name);
            Py_CLEAR(t);
        }
    return t;
}

static PyObject *size_reduce(PyObject *self, PyObject *unused)
{
    PyObject *t = PySequence_Tuple(self);
    return t ? Py_BuildValue("(O(N))", (PyObject *)Py_TYPE(self), t) : NULL;
}

/* Slicing, `size + tuple` and `size * n` give a Size, as in PyTorch (a
 * plain tuple subclass would give tuples). */
static PyObject *size_from_tuple(PyObject *t)
{
    if (!t || !PyTuple_Check(t)) return t;
    PyObject *r = PyObject_CallOneArg((PyObject *)&EmpSize_Type, t);
    Py_DECREF(t);
    return r;
}
static PyObject *size_subscript(PyObject *self, PyObject *key)
{
    PyObject *r = PyTuple_Type.tp_as_mapping->mp_subscript(self, key);
    return PySlice_Check(key) ? size_from_tuple(r) : r;
}
static PyObject *size_concat(PyObject *self, PyObject *other)
{
    return size_from_tuple(PyTuple_Type.tp_as_sequence->sq_concat(self, other));
}
static PyObject *size_repeat(PyObject *self, Py_ssize_t n)
{
    return size_from_tuple(PyTuple_Type.tp_as_sequence->sq_repeat(self, n));
}
static PyMappingMethods size_as_mapping = {.mp_subscript = size_subscript};
static PySequenceMethods size_as_sequence;

static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "The number of elements of a tensor of this size."},
    {"__reduce__", size_reduce, METH_NOARGS, NULL},
    {NULL},
};

PyTypeObject EmpSize_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember.Size",
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_TUPLE_SUBCLASS,
    .tp_repr = size_repr,
    .tp_as_mapping = &size_as_mapping,
    .tp_as_sequence = &size_as_sequence,
    .tp_methods = size_methods,
    .tp_new = size_new,
};

int emp_dtype_init(PyObject *m)
{
    EmpSize_Type.tp_base = &PyTuple_Type;
    size_as_sequence = *PyTuple_Type.tp_as_sequence;
    size_as_sequence.sq_concat = size_concat;
    size_as_sequence.sq_repeat = size_repeat;
    size_as_mapping.mp_length = PyTuple_Type.tp_as_mapping->mp_length;
    if (PyType_Ready(&EmpDtype_Type) || PyType_Ready(&EmpDevice_Type) || PyType_Ready(&EmpSize_Type)) return -1;
    if (PyModule_AddObjectRef(m, "dtype", (PyObject *)&EmpDtype_Type) ||
        PyModule_AddObjectRef(m, "device", (PyObject *)&EmpDevice_Type) ||
        PyModule_AddObjectRef(m, "Size", (PyObject *)&EmpSize_Type))
        return -1;
    for (int dt = 0; dt < EM_DTYPE_COUNT; dt++) {
        PyObject *o = (PyObject *)&dtype_objs[dt];
        Py_SET_TYPE(o, &EmpDtype_Type);
        Py_SET_REFCNT(o, 1); /* static objects: never freed */
        dtype_objs[dt].dtype = (em_dtype)dt;
        if (PyModule_AddObjectRef(m, em_dtype_name(dt), o)) return -1;
    }
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof *dtype_aliases; i++)
        if (PyModule_AddObjectRef(m, dtype_aliases[i].alias, emp_dtype_obj(dtype_aliases[i].dt))) return -1;
    return 0;
}
