/* Tensors seen as arrays, without copying: Tensor.numpy(), the buffer
 * protocol (checked flag by flag as NumPy's buffer.c does) and
 * __array_interface__. NumPy is imported only when numpy() is called.
 *
 * Every exported view owns a reference to the em_tensor it shows (not only
 * to the Python object, whose tensor `.data = ...` can swap), so the memory
 * stays valid while the array or buffer lives. */
#include "emp.h"

/* NumPy's typestr of each dtype ("<f4"); NULL: NumPy has no such dtype. */
static const char *typestr(em_dtype dt)
{
    static const char *const names[EM_DTYPE_COUNT] = {
        [EM_U8] = "|u1", [EM_I8] = "|i1", [EM_I16] = "<i2", [EM_I32] = "<i4", [EM_I64] = "<i8",
        [EM_F16] = "<f2", [EM_F32] = "<f4", [EM_F64] = "<f8", [EM_BOOL] = "|b1",
        [EM_C64] = "<c8", [EM_C128] = "<c16",
    };
    return names[dt];
}

/* The buffer protocol's struct-module format of each dtype. */
static char *buffer_format(em_dtype dt)
{
    static char formats[EM_DTYPE_COUNT][3] = {
        [EM_U8] = "B", [EM_I8] = "b", [EM_I16] = "h", [EM_I32] = "i", [EM_I64] = "q",
        [EM_F16] = "e", [EM_F32] = "f", [EM_F64] = "d", [EM_BOOL] = "?", [EM_C64] = "Zf", [EM_C128] = "Zd",
    };
    return formats[dt][0] ? formats[dt] : NULL;
}

/* Whether a tensor may be shown as an array: PyTorch's numpy() checks. */
static int check_exportable(em_tensor *t)
{
    if (em_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
        return -1;
    }
    if (em_is_conj(t) || em_is_neg(t)) { /* (the array would show the storage, not the values) */
        PyErr_SetString(PyExc_RuntimeError,
                        em_is_conj(t) ? "Can't call numpy() on Tensor that has conjugate bit set. Use "
                                        "tensor.resolve_conj().numpy() instead."
                                      : "Can't call numpy() on Tensor that has negative bit set. Use "
                                        "tensor.resolve_neg().numpy() instead.");
        return -1;
    }
    if (em_device_of(t).type != EM_CPU) {
        em_device d = em_device_of(t);
        PyErr_Format(PyExc_TypeError,
                     "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
                     "memory first.", d.type == EM_META ? "meta" : "cuda:0");
        return -1;
    }
    if (!typestr(em_dtype_of(t))) {
        PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", em_dtype_scalar_name(em_dtype_of(t)));
        return -1;
    }
    return 0;
}

/* NumPy refuses a NULL data pointer even for empty arrays: empty tensors
 * (which may have none) point here; nothing is ever read through it. */
static void *data_or_dummy(em_tensor *t)
{
    static max_align_t dummy;
    return em_numel(t) && em_data_ptr(t) ? em_data_ptr(t) : &dummy;
}

/* The __array_interface__ dict (version 3) of a tensor's memory. */
static PyObject *array_interface(em_tensor *t)
{
    if (check_exportable(t)) return NULL;
    int nd = em_ndim(t);
    int64_t esize = (int64_t)em_dtype_size(em_dtype_of(t));
    PyObject *shape = PyTuple_New(nd), *strides = PyTuple_New(nd);
    for (int i = 0; shape && strides && i < nd; i++) {
        PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(em_sizes(t)[i]));
        PyTuple_SET_ITEM(strides, i, PyLong_FromLongLong(em_strides(t)[i] * esize));
    }
    PyObject *d = shape && strides ? Py_BuildValue("{s:(N,O),s:O,s:O,s:s,s:i}", "data",
                                                   PyLong_FromVoidPtr(data_or_dummy(t)), Py_False, "shape", shape,
                                                   "strides", strides, "typestr", typestr(em_dtype_of(t)), "version", 3)
                                   : NULL;
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    return d;
}

static PyObject *tensor_array_interface(PyObject *m, PyObject *self)
{
    if (!emp_is_tensor(self)) return PyErr_Format(PyExc_TypeError, "expected a Tensor, got %s", Py_TYPE(self)->tp_name);
    return array_interface(emp_t(self));
}

/* ---- numpy() -------------------------------------------------------------------- */
/* The base object of the arrays numpy() returns: owns a reference to the
 * em_tensor and shows its memory through __array_interface__. */
typedef struct {
    PyObject_HEAD
    em_tensor *t;
} ArrayBase;

static void array_base_dealloc(ArrayBase *self)
{
    em_release(self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *array_base_interface(ArrayBase *self, void *c) { return array_interface(self->t); }

static PyGetSetDef array_base_getset[] = {
    {"__array_interface__", (getter)array_base_interface, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject ArrayBase_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ember._C._TensorMemory",
    .tp_doc = "The memory of a tensor, kept alive for the NumPy arrays that show it.",
    .tp_basicsize = sizeof(ArrayBase),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)array_base_dealloc,
    .tp_getset = array_base_getset,
};

EMP_BIND(numpy, "numpy(Tensor input, *, bool force=False)")
{
    static PyObject *asarray; /* numpy.asarray, imported on first use, kept for the process */
    if (!asarray) {
        PyObject *np = PyImport_ImportModule("numpy");
        asarray = np ? PyObject_GetAttrString(np, "asarray") : NULL;
        Py_XDECREF(np);
        if (!asarray) return NULL;
    }
    if (!(ArrayBase_Type.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&ArrayBase_Type)) return NULL;
    em_tensor *t = a->i[1] ? em_detach(a->t[0]) : em_retain(a->t[0]); /* force: as .detach().resolve_conj().numpy() */
    if (t && a->i[1] && (em_is_conj(t) || em_is_neg(t))) {
        em_tensor *r = em_clone(t);
        em_release(t);
        t = r;
    }
    if (!t) return emp_raise();
    if (check_exportable(t)) {
        em_release(t);
        return NULL;
    }
    ArrayBase *base = PyObject_New(ArrayBase, &ArrayBase_Type);
    if (!base) {
        em_release(t);
        return NULL;
    }
    base->t = t;
    PyObject *arr = PyObject_CallOneArg(asarray, (PyObject *)base);
    Py_DECREF(base);
    return arr;
}

/* ---- the buffer protocol -------------------------------------------------------- */
/* What a buffer export owns, freed by releasebuffer. */
typedef struct {
    em_tensor *t;
    Py_ssize_t shape[EM_MAX_DIMS], strides[EM_MAX_DIMS];
} BufferInfo;

/* Contiguity as NumPy defines it: dims of size 1 do not count, an empty
 * tensor is contiguous. fortran: column-major order. */
static bool is_contiguous_order(em_tensor *t, bool fortran)
{
    int nd = em_ndim(t);
    int64_t expected = 1;
    if (em_numel(t) == 0) return true;
    for (int k = 0; k < nd; k++) {
        int i = fortran ? k : nd - 1 - k;
        if (em_sizes(t)[i] == 1) continue;
        if (em_strides(t)[i] != expected) return false;
        expected *= em_sizes(t)[i];
    }
    return true;
}

static int buffer_error(const char *msg)
{
    PyErr_SetString(PyExc_BufferError, msg);
    return -1;
}

static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    em_tensor *t = emp_t(self);
    em_dtype dt = em_dtype_of(t);
    if (em_requires_grad(t)) return buffer_error("Can't export a Tensor that requires grad as a buffer. Use tensor.detach().");
    if (em_device_of(t).type != EM_CPU) return buffer_error("Only CPU tensors can be exported as buffers.");
    if (em_is_conj(t) || em_is_neg(t))
        return buffer_error("Can't export a Tensor with the conjugate or negative bit set as a buffer. Use "
                            "tensor.resolve_conj().resolve_neg().");
    bool c_contig = is_contiguous_order(t, false), f_contig = is_contiguous_order(t, true);
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c_contig) return buffer_error("Tensor is not C-contiguous");
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f_contig)
        return buffer_error("Tensor is not Fortran contiguous");
    if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c_contig && !f_contig)
        return buffer_error("Tensor is not contiguous");
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !c_contig) /* no strides given: the consumer assumes C order */
        return buffer_error("Tensor is not C-contiguous");
    if ((flags & PyBUF_FORMAT) == PyBUF_FORMAT && !buffer_format(dt))
        return buffer_error("bfloat16 tensors have no buffer format");
    BufferInfo *info = PyMem_Malloc(sizeof *info);
    if (!info) return PyErr_NoMemory(), -1;
    int nd = em_ndim(t);
    Py_ssize_t esize = (Py_ssize_t)em_dtype_size(dt);
    for (int i = 0; i < nd; i++) {
        info->shape[i] = (Py_ssize_t)em_sizes(t)[i];
        info->strides[i] = (Py_ssize_t)em_strides(t)[i] * esize;
    }
    info->t = em_retain(t);
    *view = (Py_buffer){
        .buf = data_or_dummy(t),
        .obj = Py_NewRef(self),
        .len = (Py_ssize_t)em_numel(t) * esize,
        .itemsize = esize,
        .readonly = 0, /* tensors are writable (PyBUF_WRITABLE always granted) */
        .ndim = (flags & PyBUF_ND) == PyBUF_ND ? nd : 0, /* no shape asked: a flat run of bytes (NumPy) */
        .format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT ? buffer_format(dt) : NULL,
        .shape = (flags & PyBUF_ND) == PyBUF_ND ? info->shape : NULL,
        .strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? info->strides : NULL,
        .internal = info,
    };
    return 0;
}

static void tensor_releasebuffer(PyObject *self, Py_buffer *view)
{
    BufferInfo *info = view->internal;
    em_release(info->t);
    PyMem_Free(info);
}

PyBufferProcs emp_tensor_as_buffer = {
    .bf_getbuffer = tensor_getbuffer,
    .bf_releasebuffer = tensor_releasebuffer,
};

PyMethodDef emp_array_export_functions[] = {
    {"_array_interface", tensor_array_interface, METH_O, "The __array_interface__ dict of a tensor."},
    {NULL},
};
PyMethodDef emp_array_export_methods[] = {EMP_METHOD(numpy), {NULL}};
