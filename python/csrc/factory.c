/* Tensors made from Python data (ember.tensor, as_tensor) and the factory
 * functions (zeros, ones, empty, full, their *_like, arange, linspace, eye,
 * rand, randn), with PyTorch's dtype inference and keyword arguments. */
#include "emp.h"

/* ---- nested sequences ------------------------------------------------------ */
/* What the scalars seen so far need: bool < int < float < complex (PyTorch's inference). */
enum { KIND_NONE, KIND_BOOL, KIND_INT, KIND_FLOAT, KIND_COMPLEX };

static bool is_sequence(PyObject *o) { return PyList_Check(o) || PyTuple_Check(o); }

/* Walks obj to find its shape (sizes/ndim at `depth`) and the widest scalar kind. */
static int infer(PyObject *o, int depth, int64_t *sizes, int *ndim, int *kind)
{
    if (!is_sequence(o)) {
        if (depth != *ndim && *ndim >= 0) goto ragged;
        *ndim = depth;
        int k;
        if (emp_is_tensor(o) && em_ndim(emp_t(o)) == 0) { /* a 0-d tensor is a scalar */
            em_dtype dt = em_dtype_of(emp_t(o));
            k = dt == EM_BOOL ? KIND_BOOL : em_dtype_is_float(dt) ? KIND_FLOAT : em_dtype_is_complex(dt) ? KIND_COMPLEX : KIND_INT;
        } else if (PyBool_Check(o)) k = KIND_BOOL;
        else if (emp_is_complex_number(o)) k = KIND_COMPLEX;
        else if (PyLong_Check(o) || (PyIndex_Check(o) && !emp_is_tensor(o))) k = KIND_INT;
        else if (PyFloat_Check(o) || (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float && !emp_is_tensor(o) &&
                                      !PyComplex_Check(o)))
            k = KIND_FLOAT;
        else {
            PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
            return -1;
        }
        if (k > *kind) *kind = k;
        return 0;
    }
    if (depth >= EM_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "too many dimensions (at most %d)", EM_MAX_DIMS);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (*ndim >= 0 && depth < *ndim) {
        if (sizes[depth] != n) {
            PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %zd)", (long long)sizes[depth],
                         depth, n);
            return -1;
        }
    } else if (*ndim >= 0) {
        goto ragged;
    } else {
        sizes[depth] = n;
    }
    if (n == 0 && *ndim < 0) *ndim = depth + 1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (infer(PySequence_Fast_GET_ITEM(o, i), depth + 1, sizes, ndim, kind)) return -1;
    return 0;
ragged:
    PyErr_Format(PyExc_ValueError, "expected a sequence at dim %d, not a number, or a number, not a sequence", depth);
    return -1;
}

/* Writes the scalars of o in row-major order into buf (dtype dt), through
 * a double or an int64 so that large integers stay exact. */
static int fill(PyObject *o, em_dtype dt, char **pos)
{
    if (is_sequence(o)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        for (Py_ssize_t i = 0; i < n; i++)
            if (fill(PySequence_Fast_GET_ITEM(o, i), dt, pos)) return -1;
        return 0;
    }
    double d = 0, im = 0;
    long long v = 0;
    bool is_int = false;
    if (emp_is_tensor(o)) {
        if (em_item_complex(emp_t(o), &d, &im)) return emp_raise(), -1;
    } else if (emp_is_complex_number(o)) {
        Py_complex z = PyComplex_AsCComplex(o);
        if (PyErr_Occurred()) return -1;
        d = z.real, im = z.imag;
    } else if (PyBool_Check(o)) {
        v = o == Py_True, is_int = true;
    } else if (PyLong_Check(o) || PyIndex_Check(o)) {
        PyObject *i = PyNumber_Index(o);
        int overflow = 0;
        v = i ? PyLong_AsLongLongAndOverflow(i, &overflow) : -1;
        if (overflow) d = PyLong_AsDouble(i);
        else is_int = true;
        Py_XDECREF(i);
        if (PyErr_Occurred()) return -1;
        if (overflow && em_dtype_is_int(dt)) {
            PyErr_Format(PyExc_RuntimeError, "Overflow when unpacking long");
            return -1;
        }
    } else {
        d = PyFloat_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) return -1;
    }
    char *p = *pos;
    switch (dt) {
    case EM_BOOL: *(bool *)p = is_int ? v != 0 : d != 0; break;
    case EM_U8: *(uint8_t *)p = (uint8_t)(is_int ? v : (long long)d); break;
    case EM_I8: *(int8_t *)p = (int8_t)(is_int ? v : (long long)d); break;
    case EM_I16: *(int16_t *)p = (int16_t)(is_int ? v : (long long)d); break;
    case EM_I32: *(int32_t *)p = (int32_t)(is_int ? v : (long long)d); break;
    case EM_I64: *(int64_t *)p = is_int ? v : (int64_t)d; break;
    case EM_F32: *(float *)p = (float)(is_int ? (double)v : d); break;
    case EM_C128: ((double *)p)[0] = is_int ? (double)v : d, ((double *)p)[1] = im; break;
    default: *(double *)p = is_int ? (double)v : d; break; /* F64; half types go through F64 */
    }
    *pos = p + em_dtype_size(dt);
    return 0;
}

em_tensor *emp_tensor_from_object(PyObject *obj, em_dtype dt)
{
    em_tensor *t;
    if (emp_is_tensor(obj)) {
        t = emp_t(obj);
        t = dt == EM_DTYPE_NONE || dt == em_dtype_of(t) ? em_clone(t) : em_to_dtype(t, dt);
        if (!t) emp_raise();
        return t;
    }
    t = emp_array_to_tensor(obj, dt);
    if (t || PyErr_Occurred()) return t;
    int64_t sizes[EM_MAX_DIMS];
    int ndim = -1, kind = KIND_NONE;
    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (infer(obj, 0, sizes, &ndim, &kind)) return NULL;
    if (ndim < 0) ndim = 0;
    if (dt == EM_DTYPE_NONE)
        dt = kind == KIND_BOOL ? EM_BOOL : kind == KIND_INT ? EM_I64 : kind == KIND_COMPLEX ? em_get_default_complex_dtype()
                                                                                           : em_get_default_dtype();
    /* half types go through F64; complex ones and complex data (into a real dtype: PyTorch
     * keeps the real part) through C128 */
    em_dtype store = em_dtype_is_complex(dt) || kind == KIND_COMPLEX ? EM_C128 : dt == EM_F16 || dt == EM_BF16 ? EM_F64 : dt;
    t = em_empty(ndim, sizes, store);
    if (!t) {
        emp_raise();
        return NULL;
    }
    char *pos = em_data_ptr(t);
    if (fill(obj, store, &pos)) {
        em_release(t);
        return NULL;
    }
    if (store != dt) {
        em_tensor *c = em_to_dtype(t, dt);
        em_release(t);
        if (!c) emp_raise();
        t = c;
    }
    return t;
}

/* requires_grad=True on a fresh result (PyTorch: only floating point). */
static PyObject *finish(em_tensor *t, bool requires_grad)
{
    if (!t) {
        if (!PyErr_Occurred()) emp_raise();
        return NULL;
    }
    if (requires_grad && em_set_requires_grad(t, true)) {
        em_release(t);
        return emp_raise();
    }
    return emp_wrap(t);
}

#define DEVICE_KW "dtype? dtype=None, device? device=None, bool requires_grad=False, layout? layout=None, bool pin_memory=False"

/* t (consumed) moved to device= argument k when one is given: the data of
 * tensor() and as_tensor() is gathered on the host first. */
static em_tensor *on_device(emp_args *a, int k, em_tensor *t)
{
    if (!t || !a->has[k] || a->dev[k].type == EM_CPU) return t;
    if (a->dev[k].type != EM_META) {
        em_release(t);
        PyErr_SetString(PyExc_RuntimeError, EMP_NO_CUDA);
        return NULL;
    }
    em_tensor *r = em_to_device(t, a->dev[k]);
    em_release(t);
    return r;
}

EMP_BIND(tensor, "tensor(object data, *, " DEVICE_KW ")")
{
    return finish(on_device(a, 2, emp_tensor_from_object(a->obj[0], emp_dtype_arg(a, 1))), a->i[3]);
}

/* as_tensor: no copy when data already is a tensor or a NumPy array of that
 * dtype (the result shares its memory). */
EMP_BIND(as_tensor, "as_tensor(object data, dtype? dtype=None, device? device=None)")
{
    if (emp_is_tensor(a->obj[0])) {
        em_tensor *t = emp_t(a->obj[0]);
        em_device dev = a->has[2] ? a->dev[2] : em_device_of(t);
        if ((!a->has[1] || a->i[1] == em_dtype_of(t)) && dev.type == em_device_of(t).type) return Py_NewRef(a->obj[0]);
        return finish(on_device(a, 2, em_to_dtype(t, a->has[1] ? (em_dtype)a->i[1] : em_dtype_of(t))), false);
    }
    if (a->has[2] && a->dev[2].type != EM_CPU) /* a copy on the device */
        return finish(on_device(a, 2, emp_tensor_from_object(a->obj[0], emp_dtype_arg(a, 1))), false);
    if (a->obj[0] && emp_is_ndarray(a->obj[0])) {
        em_tensor *t = emp_array_share(a->obj[0]);
        if (!t) return NULL;
        em_tensor *r = a->has[1] ? em_to_dtype(t, (em_dtype)a->i[1]) : em_retain(t);
        em_release(t);
        return emp_wrap(r);
    }
    return finish(emp_tensor_from_object(a->obj[0], emp_dtype_arg(a, 1)), false);
}

EMP_BIND(scalar_tensor, "scalar_tensor(Number s, *, " DEVICE_KW ")")
{
    em_dtype dt = a->has[1] ? (em_dtype)a->i[1] : em_get_default_dtype();
    return finish(em_tensor_scalar(a->d[0], dt), a->i[3]);
}

/* ---- sized factories ------------------------------------------------------------ */
#define SIZED_SIG(name, extra) #name "(int... size, " extra "*, Tensor? out=None, " DEVICE_KW ")"

static em_dtype float_default(emp_args *a, int k) { return a->has[k] ? (em_dtype)a->i[k] : em_get_default_dtype(); }

/* out= for the sized factories: resize out, then fill. */
static PyObject *sized(emp_args *a, int kout, em_tensor *(*make)(int, const int64_t *, em_dtype), double fill_value,
                       bool use_fill)
{
    if (emp_use_device(a, kout + 2)) return NULL;
    if (a->has[kout]) {
        em_tensor *out = a->t[kout];
        em_tensor *t = make(a->nlist[0], a->list[0], em_dtype_of(out));
        if (!t) return emp_raise();
        em_status st = em_resize_(out, a->nlist[0], a->list[0]);
        if (!st) st = em_copy_(out, t);
        em_release(t);
        return emp_status_self(st, a->obj[kout]);
    }
    em_dtype dt = float_default(a, kout + 1);
    return finish(use_fill ? em_full(a->nlist[0], a->list[0], fill_value, dt) : make(a->nlist[0], a->list[0], dt),
                  a->i[kout + 3]);
}

EMP_BIND(zeros, SIZED_SIG(zeros, "")) { return sized(a, 1, em_zeros, 0, false); }
EMP_BIND(ones, SIZED_SIG(ones, "")) { return sized(a, 1, em_ones, 0, false); }
EMP_BIND(empty, "empty(int... size, *, Tensor? out=None, " DEVICE_KW ", memory_format? memory_format=None)")
{
    if (a->has[1] && a->has[7] && a->i[7] >= EM_CHANNELS_LAST)
        return PyErr_Format(PyExc_NotImplementedError, "empty(out=..., memory_format=channels_last) is not implemented "
                            "in Ember; call empty(..., memory_format=...) without out=");
    if (!a->has[7] || a->has[1]) return sized(a, 1, em_empty, 0, false);
    if (emp_use_device(a, 3)) return NULL;
    return finish(em_empty_format(a->nlist[0], a->list[0], float_default(a, 2), (em_memory_format)a->i[7]), a->i[4]);
}
/* full: the dtype follows fill_value when not given (bool, int64, default float). */
EMP_BIND(full, "full(int[] size, Number fill_value, *, Tensor? out=None, " DEVICE_KW ")")
{
    if (emp_use_device(a, 4)) return NULL;
    em_dtype dt = a->has[3] ? (em_dtype)a->i[3]
                : PyBool_Check(a->obj[1]) ? EM_BOOL
                : a->isint[1] ? EM_I64 : em_get_default_dtype();
    em_tensor *t = em_full(a->nlist[0], a->list[0], a->d[1], a->has[2] ? em_dtype_of(a->t[2]) : dt);
    if (a->has[2]) {
        if (!t) return emp_raise();
        em_status st = em_resize_(a->t[2], a->nlist[0], a->list[0]);
        if (!st) st = em_copy_(a->t[2], t);
        em_release(t);
        return emp_status_self(st, a->obj[2]);
    }
    return finish(t, a->i[5]);
}

/* *_like(input, ..., dtype=k, ..., memory_format=k + 5): made contiguous,
 * then laid out as memory_format= asks (emp_like_layout). */
#define LIKE_SIG(name, extra) #name "(Tensor input, " extra "*, " DEVICE_KW ", memory_format? memory_format=None)"
static em_dtype like_dtype(emp_args *a, int k) { return a->has[k] ? (em_dtype)a->i[k] : EM_DTYPE_NONE; }

em_tensor *emp_like_layout(em_tensor *r, emp_args *a, int kmf)
{
    if (!r) return NULL;
    em_memory_format f = a->has[kmf] ? (em_memory_format)a->i[kmf] : EM_PRESERVE_FORMAT;
    em_tensor *e = em_empty_like_format(a->t[0], em_dtype_of(r), f);
    if (e && !memcmp(em_strides(e), em_strides(r), em_ndim(r) * sizeof(int64_t))) {
        em_release(e);
        return r;
    }
    if (e && em_copy_(e, r)) {
        em_release(e);
        e = NULL;
    }
    em_release(r);
    return e;
}

static PyObject *like(emp_args *a, int kdt, em_tensor *r) { return finish(emp_like_layout(r, a, kdt + 5), a->i[kdt + 2]); }

/* device= (argument k) other than the input's: the input is replaced by an
 * uninitialised tensor of its geometry on that device (owned by a), whose
 * device the *_like result takes; no data crosses. 0 or -1 (raised). */
static int like_device(emp_args *a, int k)
{
    em_tensor *t = a->t[0];
    if (!a->has[k] || a->dev[k].type == em_device_of(t).type) return 0;
    if (a->dev[k].type == EM_CUDA) {
        PyErr_SetString(PyExc_RuntimeError, EMP_NO_CUDA);
        return -1;
    }
    em_device old = em_set_factory_device(a->dev[k]);
    em_tensor *d = em_empty_strided(em_ndim(t), em_sizes(t), em_strides(t), em_dtype_of(t));
    em_set_factory_device(old);
    if (!d) return emp_raise(), -1;
    a->t[0] = a->owned[a->nowned++] = d;
    return 0;
}
EMP_BIND(zeros_like, LIKE_SIG(zeros_like, "")) { return like_device(a, 2) ? NULL : like(a, 1, em_zeros_like(a->t[0], like_dtype(a, 1))); }
EMP_BIND(ones_like, LIKE_SIG(ones_like, "")) { return like_device(a, 2) ? NULL : like(a, 1, em_ones_like(a->t[0], like_dtype(a, 1))); }
EMP_BIND(empty_like, LIKE_SIG(empty_like, "")) { return like_device(a, 2) ? NULL : like(a, 1, em_empty_like(a->t[0], like_dtype(a, 1))); }
EMP_BIND(full_like, LIKE_SIG(full_like, "Number fill_value, "))
{
    return like_device(a, 3) ? NULL : like(a, 2, em_full_like(a->t[0], a->d[1], like_dtype(a, 2)));
}
EMP_BIND(rand_like, LIKE_SIG(rand_like, ""))
{
    if (like_device(a, 2) || emp_use_device(a, 2)) return NULL; /* the donor, then where em_rand makes */
    em_tensor *t = a->t[0];
    em_dtype dt = a->has[1] ? (em_dtype)a->i[1] : em_dtype_of(t);
    return like(a, 1, em_rand(em_ndim(t), em_sizes(t), dt, NULL));
}
EMP_BIND(randn_like, LIKE_SIG(randn_like, ""))
{
    if (like_device(a, 2) || emp_use_device(a, 2)) return NULL; /* the donor, then where em_rand makes */
    em_tensor *t = a->t[0];
    em_dtype dt = a->has[1] ? (em_dtype)a->i[1] : em_dtype_of(t);
    return like(a, 1, em_randn(em_ndim(t), em_sizes(t), dt, NULL));
}

/* ---- ranges --------------------------------------------------------------------- */
/* arange(end) / arange(start, end, step=1): all-int arguments give int64
 * (computed exactly), any float gives the default float dtype. */
EMP_BIND(arange, "arange(Number end, *, Tensor? out=None, " DEVICE_KW ")",
         "arange(Number start, Number end, Number step=1, *, Tensor? out=None, " DEVICE_KW ")")
{
    bool one = a->sig == 0;
    int kout = one ? 1 : 3;
    double start = one ? 0 : a->d[0], end = one ? a->d[0] : a->d[1], step = one ? 1 : a->d[2];
    bool ints = one ? a->isint[0] : a->isint[0] && a->isint[1] && a->isint[2];
    if (emp_use_device(a, kout + 2)) return NULL;
    if (a->has[kout])
        return emp_status_self(ints ? em_arange_int_out(a->t[kout], (int64_t)start, (int64_t)end, (int64_t)step)
                                    : em_arange_out(a->t[kout], start, end, step),
                               a->obj[kout]);
    em_dtype dt = emp_dtype_arg(a, kout + 1);
    em_tensor *t = ints ? em_arange_int(one ? 0 : a->i[0], one ? a->i[0] : a->i[1], one ? 1 : a->i[2], dt)
                        : em_arange(start, end, step, dt);
    return finish(t, a->i[kout + 3]);
}

EMP_BIND(linspace, "linspace(Number start, Number end, int steps, *, Tensor? out=None, " DEVICE_KW ")")
{
    if (emp_use_device(a, 5)) return NULL;
    if (a->has[3]) return emp_status_self(em_linspace_out(a->t[3], a->d[0], a->d[1], a->i[2]), a->obj[3]);
    return finish(em_linspace(a->d[0], a->d[1], a->i[2], emp_dtype_arg(a, 4)), a->i[6]);
}

EMP_BIND(logspace, "logspace(Number start, Number end, int steps, float base=10.0, *, Tensor? out=None, " DEVICE_KW ")")
{
    if (emp_use_device(a, 6)) return NULL;
    if (a->has[4]) return emp_status_self(em_logspace_out(a->t[4], a->d[0], a->d[1], a->i[2], a->d[3]), a->obj[4]);
    return finish(em_logspace(a->d[0], a->d[1], a->i[2], a->d[3], emp_dtype_arg(a, 5)), a->i[7]);
}

EMP_BIND(eye, "eye(int n, int? m=None, *, Tensor? out=None, " DEVICE_KW ")")
{
    int64_t m = a->has[1] ? a->i[1] : a->i[0];
    if (emp_use_device(a, 4)) return NULL;
    if (a->has[2]) return emp_status_self(em_eye_out(a->t[2], a->i[0], m), a->obj[2]);
    return finish(em_eye(a->i[0], m, float_default(a, 3)), a->i[5]);
}

/* ---- random --------------------------------------------------------------------- */
#define RANDOM_SIZED(name)                                                                              \
    EMP_BIND(name, #name "(int... size, *, object generator=None, Tensor? out=None, " DEVICE_KW ")")    \
    {                                                                                                   \
        em_generator *g = emp_generator_arg(a->obj[1]);                                                 \
        if (!g && PyErr_Occurred()) return NULL;                                                        \
        if (emp_use_device(a, 4)) return NULL;                                                            \
        if (a->has[2]) return emp_status_self(em_##name##_out(a->t[2], a->nlist[0], a->list[0], g), a->obj[2]); \
        return finish(em_##name(a->nlist[0], a->list[0], float_default(a, 3), g), a->i[5]);             \
    }
RANDOM_SIZED(rand)
RANDOM_SIZED(randn)

PyMethodDef emp_factory_functions[] = {
    EMP_FUNCTION(tensor), EMP_FUNCTION(as_tensor), EMP_FUNCTION(scalar_tensor),
    EMP_FUNCTION(zeros), EMP_FUNCTION(ones), EMP_FUNCTION(empty), EMP_FUNCTION(full),
    EMP_FUNCTION(zeros_like), EMP_FUNCTION(ones_like), EMP_FUNCTION(empty_like), EMP_FUNCTION(full_like),
    EMP_FUNCTION(rand_like), EMP_FUNCTION(randn_like), EMP_FUNCTION(arange), EMP_FUNCTION(linspace), EMP_FUNCTION(logspace),
    EMP_FUNCTION(eye), EMP_FUNCTION(rand), EMP_FUNCTION(randn),
    {NULL},
};
