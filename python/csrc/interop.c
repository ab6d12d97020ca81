/* NumPy arrays and buffer-protocol objects as tensors (from_numpy,
 * frombuffer, asarray, and the copies ember.tensor makes), with PyTorch's
 * checks and messages, all without the NumPy C API: arrays are read through
 * the buffer protocol. The other direction (numpy(), the Tensor's buffer
 * protocol) is in array_export.c, DLPack in dlpack.c.
 *
 * Note [Shared buffers]: a tensor that shares an object's memory keeps the
 * object's exported Py_buffer (which holds a reference to the object) as its
 * storage's deleter context; the deleter releases it, with the GIL, when the
 * last tensor over that memory dies. */
#include "emp.h"
#include <string.h>

/* ---- what a buffer holds -------------------------------------------------------- */
/* True if o's type is, or derives from, the NumPy type named tp_name
 * ("numpy.ndarray", "numpy.generic"): no import of numpy needed. */
static bool is_numpy(PyObject *o, const char *tp_name)
{
    PyObject *mro = Py_TYPE(o)->tp_mro;
    for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); i++)
        if (!strcmp(((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_name, tp_name)) return true;
    return false;
}

bool emp_is_ndarray(PyObject *o) { return is_numpy(o, "numpy.ndarray"); }
bool emp_is_complex_number(PyObject *o) { return PyComplex_Check(o) || is_numpy(o, "numpy.complexfloating"); }

enum { FORMAT_OK, FORMAT_UNSUPPORTED, FORMAT_BYTE_ORDER };

/* The dtype of a buffer's items from its struct-module format ("<f", "d",
 * "?", "=q") and item size. */
static int buffer_dtype(const Py_buffer *v, em_dtype *dt)
{
    static const struct { const char *chars; char kind; } kinds[] = {
        {"bhilqn", 'i'}, {"BHILQN", 'u'}, {"efd", 'f'}, {"?", 'b'},
    };
    static const struct { char kind; int size; em_dtype dt; } types[] = {
        {'i', 1, EM_I8}, {'i', 2, EM_I16}, {'i', 4, EM_I32}, {'i', 8, EM_I64}, {'u', 1, EM_U8},
        {'f', 2, EM_F16}, {'f', 4, EM_F32}, {'f', 8, EM_F64}, {'b', 1, EM_BOOL},
        {'c', 8, EM_C64}, {'c', 16, EM_C128},
    };
    const char *f = v->format ? v->format : "B";
    char order = '@';
    if (*f && strchr("@=<>!^", *f)) order = *f++;
    bool complex = *f == 'Z'; /* "Zf": a pair of floats */
    f += complex;
    if (!f[0] || f[1]) return FORMAT_UNSUPPORTED;
    char kind = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (strchr(kinds[i].chars, f[0])) kind = kinds[i].kind;
    if (complex) kind = kind == 'f' && f[0] != 'e' ? 'c' : 0;
    for (size_t i = 0; kind && i < sizeof types / sizeof *types; i++)
        if (types[i].kind == kind && types[i].size == v->itemsize) {
            *dt = types[i].dt;
            bool big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
            bool swapped = v->itemsize > 1 && (order == '>' || order == '!' ? !big_endian : order == '<' && big_endian);
            return swapped ? FORMAT_BYTE_ORDER : FORMAT_OK;
        }
    return FORMAT_UNSUPPORTED;
}

/* PyTorch's TypeError for an array whose dtype has no tensor dtype. */
static void unsupported_array_dtype(PyObject *arr)
{
    PyObject *dtype = PyObject_GetAttrString(arr, "dtype");
    PyObject *type = dtype ? PyObject_GetAttrString(dtype, "type") : NULL;
    PyObject *name = type ? PyObject_GetAttrString(type, "__name__") : NULL;
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "can't convert np.ndarray of type numpy.%s. The only supported types are: float64, float32, "
                 "float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.",
                 name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : "unknown");
    Py_XDECREF(name);
    Py_XDECREF(type);
    Py_XDECREF(dtype);
}

/* A NumPy array's (or scalar's) strided view, checked as PyTorch's
 * tensor_from_numpy checks it: a supported dtype in native byte order,
 * strides that are non-negative multiples of the item size. Fills the dtype,
 * sizes and strides in elements; `writable` asks for a writable view first
 * (*readonly says whether only a read-only one could be had). */
static int array_view(PyObject *arr, Py_buffer *v, bool writable, bool *readonly, em_dtype *dt, int64_t *sizes,
                      int64_t *strides)
{
    *readonly = !writable;
    if (!writable || PyObject_GetBuffer(arr, v, PyBUF_RECORDS) < 0) {
        PyErr_Clear();
        *readonly = true;
        if (PyObject_GetBuffer(arr, v, PyBUF_RECORDS_RO) < 0) {
            unsupported_array_dtype(arr); /* e.g. datetime64: no buffer format */
            return -1;
        }
    }
    const char *err = NULL;
    PyObject *type = PyExc_ValueError;
    int fmt = buffer_dtype(v, dt);
    if (fmt == FORMAT_UNSUPPORTED) {
        PyBuffer_Release(v);
        unsupported_array_dtype(arr);
        return -1;
    }
    if (fmt == FORMAT_BYTE_ORDER)
        err = "given numpy array has byte order different from the native byte order. Conversion between byte "
              "orders is currently not supported.";
    if (v->ndim > EM_MAX_DIMS) err = "given numpy array has too many dimensions for a tensor";
    for (int i = 0; !err && i < v->ndim; i++) {
        if (v->strides[i] < 0)
            err = "At least one stride in the given numpy array is negative, and tensors with negative strides are "
                  "not currently supported. (You can probably work around this by making a copy of your array  "
                  "with array.copy().) ";
        else if (v->strides[i] % v->itemsize)
            err = "given numpy array strides not a multiple of the element byte size. Copy the numpy array to "
                  "reallocate the memory.";
        sizes[i] = v->shape[i];
        strides[i] = v->strides[i] / (v->itemsize ? v->itemsize : 1);
    }
    if (err) {
        PyBuffer_Release(v);
        PyErr_SetString(type, err);
        return -1;
    }
    return 0;
}

/* ---- sharing -------------------------------------------------------------------- */
static void release_view(void *ctx) /* see Note [Shared buffers] */
{
    PyGILState_STATE g = PyGILState_Ensure();
    PyBuffer_Release(ctx);
    PyMem_RawFree(ctx);
    PyGILState_Release(g);
}

static const char not_writable_warning[] =
    "The given NumPy array is not writable, and Ember does not support non-writable tensors. This means writing "
    "to this tensor will result in undefined behavior. You may want to copy the array to protect its data or make "
    "it writable before converting it to a tensor.";

/* A tensor over a NumPy array's memory. *readonly (may be NULL: warn as
 * from_numpy does) tells the caller the array was not writable. */
static em_tensor *share_array(PyObject *arr, bool *readonly_out)
{
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    em_dtype dt;
    bool readonly;
    Py_buffer *v = PyMem_RawMalloc(sizeof *v); /* lives as long as the storage: not moved */
    if (!v) return (em_tensor *)PyErr_NoMemory();
    if (array_view(arr, v, true, &readonly, &dt, sizes, strides)) {
        PyMem_RawFree(v);
        return NULL;
    }
    if ((uintptr_t)v->buf % v->itemsize) {
        PyBuffer_Release(v);
        PyMem_RawFree(v);
        PyErr_SetString(PyExc_ValueError, "given numpy array is not aligned to its element size; copy it first");
        return NULL;
    }
    em_tensor *t = em_from_blob(v->buf, v->ndim, sizes, strides, dt, release_view, v);
    if (!t) {
        PyBuffer_Release(v);
        PyMem_RawFree(v);
        return emp_raise(), NULL;
    }
    if (readonly_out) *readonly_out = readonly;
    else if (readonly && PyErr_WarnEx(PyExc_UserWarning, not_writable_warning, 1)) {
        em_release(t);
        return NULL;
    }
    return t;
}

/* A new contiguous tensor holding a copy of an array (or NumPy scalar). */
static em_tensor *copy_array(PyObject *arr, em_dtype want)
{
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    em_dtype dt;
    bool readonly;
    Py_buffer v;
    if (array_view(arr, &v, false, &readonly, &dt, sizes, strides)) return NULL;
    em_tensor *t = em_empty(v.ndim, sizes, dt);
    if (t && v.len && PyBuffer_ToContiguous(em_data_ptr(t), &v, v.len, 'C') < 0) {
        em_release(t);
        PyBuffer_Release(&v);
        return NULL;
    }
    PyBuffer_Release(&v);
    if (t && want != EM_DTYPE_NONE && want != dt) {
        em_tensor *c = em_to_dtype(t, want);
        em_release(t);
        t = c;
    }
    if (!t) emp_raise();
    return t;
}

em_tensor *emp_array_share(PyObject *arr) { return share_array(arr, NULL); }

em_tensor *emp_array_to_tensor(PyObject *obj, em_dtype dt)
{
    if (!emp_is_ndarray(obj) && !is_numpy(obj, "numpy.generic")) return NULL;
    return copy_array(obj, dt);
}

/* A 1-d tensor over a buffer's bytes read as `dt` (frombuffer; also asarray
 * of buffer objects), with PyTorch's checks. */
static em_tensor *share_buffer(PyObject *obj, em_dtype dt, int64_t count, int64_t offset)
{
    Py_buffer *v = PyMem_RawMalloc(sizeof *v);
    if (!v) return (em_tensor *)PyErr_NoMemory();
    bool readonly = false;
    if (PyObject_GetBuffer(obj, v, PyBUF_WRITABLE) < 0) {
        PyErr_Clear();
        readonly = true;
        if (PyObject_GetBuffer(obj, v, PyBUF_SIMPLE) < 0) {
            PyMem_RawFree(v);
            return NULL;
        }
    }
    int64_t len = v->len, elsize = (int64_t)em_dtype_size(dt), n = count;
    if (len <= 0 || count == 0)
        PyErr_Format(PyExc_ValueError, "both buffer length (%lld) and count (%lld) must not be 0", (long long)len,
                     (long long)count);
    else if (offset < 0 || offset >= len)
        PyErr_Format(PyExc_ValueError,
                     "offset (%lld bytes) must be non-negative and no greater than buffer length (%lld bytes) minus 1",
                     (long long)offset, (long long)len);
    else if (count < 0 && (len - offset) % elsize)
        PyErr_Format(PyExc_ValueError,
                     "buffer length (%lld bytes) after offset (%lld bytes) must be a multiple of element size (%lld)",
                     (long long)(len - offset), (long long)offset, (long long)elsize);
    else if (count > 0 && count > (len - offset) / elsize)
        PyErr_Format(PyExc_ValueError,
                     "requested buffer length (%lld * %lld bytes) after offset (%lld bytes) must not be greater than "
                     "actual buffer length (%lld bytes)",
                     (long long)count, (long long)elsize, (long long)offset, (long long)len);
    else if (((uintptr_t)v->buf + offset) % elsize)
        PyErr_Format(PyExc_ValueError, "frombuffer: the data at offset %lld is not aligned to the element size (%lld)",
                     (long long)offset, (long long)elsize);
    em_tensor *t = NULL;
    if (!PyErr_Occurred()) {
        if (n < 0) n = (len - offset) / elsize;
        t = em_from_blob((char *)v->buf + offset, 1, &n, NULL, dt, release_view, v);
        if (!t) emp_raise();
    }
    if (!t) {
        PyBuffer_Release(v);
        PyMem_RawFree(v);
        return NULL;
    }
    if (readonly &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "The given buffer is not writable, and Ember does not support non-writable tensors. This means "
                     "you can write to the underlying (supposedly non-writable) buffer using the tensor. You may want "
                     "to copy the buffer to protect its data or make it writable before converting it to a tensor.",
                     1)) {
        em_release(t);
        return NULL;
    }
    return t;
}

/* ---- bindings ------------------------------------------------------------------- */
static PyObject *obj_or_none(PyObject *o) { return o ? o : Py_None; }

EMP_BIND(from_numpy, "from_numpy(object ndarray)")
{
    PyObject *arr = obj_or_none(a->obj[0]);
    if (!emp_is_ndarray(arr)) return PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", Py_TYPE(arr)->tp_name);
    em_tensor *t = share_array(arr, NULL);
    return t ? emp_wrap(t) : NULL;
}

EMP_BIND(frombuffer,
         "frombuffer(object buffer, *, dtype dtype, int count=-1, int offset=0, bool requires_grad=False)")
{
    em_tensor *t = share_buffer(obj_or_none(a->obj[0]), (em_dtype)a->i[1], a->i[2], a->i[3]);
    if (!t) return NULL;
    if (a->i[4] && em_set_requires_grad(t, true)) {
        em_release(t);
        return emp_raise();
    }
    return emp_wrap(t);
}

/* asarray(obj, *, dtype, device, copy, requires_grad): PyTorch 1.13's rules.
 * A tensor, array, DLPack capsule or buffer is aliased unless copy=True or
 * (copy=None) the dtype differs; copy=False refuses to copy. Anything else
 * (numbers, sequences) is built as ember.tensor builds it. */
EMP_BIND(asarray, "asarray(object obj, *, dtype? dtype=None, device? device=None, bool? copy=None, "
                  "bool requires_grad=False)")
{
    PyObject *obj = obj_or_none(a->obj[0]);
    em_dtype want = emp_dtype_arg(a, 1);
    bool copy_given = a->has[3], copy = copy_given && a->i[3], requires_grad = a->i[4], readonly = false;
    if (a->has[2] && a->dev[2].type != EM_CPU)
        return PyErr_Format(PyExc_RuntimeError, EMP_NO_CUDA);
    em_tensor *t = NULL;
    if (emp_is_tensor(obj)) t = em_retain(emp_t(obj));
    else if (emp_is_ndarray(obj)) t = share_array(obj, &readonly);
    else if (is_numpy(obj, "numpy.generic")) t = copy_array(obj, EM_DTYPE_NONE);
    else if (PyCapsule_IsValid(obj, "dltensor")) t = emp_tensor_from_dlpack(obj);
    else if (PyObject_CheckBuffer(obj)) t = share_buffer(obj, want != EM_DTYPE_NONE ? want : em_get_default_dtype(), -1, 0);
    else {
        if (copy_given && !copy) return PyErr_Format(PyExc_ValueError, "can't alias arbitrary sequence into a tensor.");
        t = emp_tensor_from_object(obj, want);
    }
    if (!t) return PyErr_Occurred() ? NULL : emp_raise();
    bool wrong_dtype = want != EM_DTYPE_NONE && want != em_dtype_of(t);
    if (copy || (!copy_given && wrong_dtype)) {
        em_tensor *c = wrong_dtype ? em_to_dtype(t, want) : em_clone(t);
        em_release(t);
        if (!(t = c)) return emp_raise();
    } else if (wrong_dtype) {
        PyErr_Format(PyExc_ValueError, "can't alias tensor with dtype '%s' into dtype '%s'.",
                     em_dtype_scalar_name(em_dtype_of(t)), em_dtype_scalar_name(want));
        em_release(t);
        return NULL;
    } else if (readonly && PyErr_WarnEx(PyExc_UserWarning, not_writable_warning, 1)) {
        em_release(t);
        return NULL;
    }
    if (requires_grad && em_set_requires_grad(t, true)) {
        em_release(t);
        return emp_raise();
    }
    return emp_wrap(t);
}

PyMethodDef emp_interop_functions[] = {
    EMP_FUNCTION(from_numpy), EMP_FUNCTION(frombuffer), EMP_FUNCTION(asarray),
    {NULL},
};
