/* Tensor indexing: __getitem__ and __setitem__ (the type's mapping slots),
 * following PyTorch 1.13 step by step (python_variable_indexing.cpp and
 * ATen's TensorIndexing.h), quirks included.
 *
 * Note [Indexing in two stages]: the index is read left to right into
 * 1. a view of self made with the C view ops: an int selects, a slice
 *    slices, None and bools unsqueeze (so results share storage and autograd
 *    records views), and
 * 2. a list of advanced indices (tensors, sequences, bools) at the dims of
 *    that view where they stand, NULL between them (full slices).
 * With no advanced index the view is the result (the target of copy_ for
 * __setitem__); otherwise em_index / em_index_put_ finish on the view. As in
 * PyTorch, an advanced index moves the dim counter by one, even a mask of
 * several dims (x[mask2d, 0] selects in the dim the mask's second dim
 * covers, and fails as it does in PyTorch). */
#include "emp.h"
#include <float.h>
#include <math.h>

typedef struct indexing {
    em_tensor *view;              /* stage 1 (owned) */
    int n;                        /* stage 2: entries 0..n-1 of adv */
    em_tensor *adv[EM_MAX_DIMS];  /* owned; NULL is a full slice */
} indexing;

static void indexing_clear(indexing *ix)
{
    em_release(ix->view);
    for (int k = 0; k < ix->n; k++) em_release(ix->adv[k]);
}

/* NULL from a helper that raised, or from C (whose error is raised now). */
static int failed(void)
{
    if (!PyErr_Occurred()) emp_raise();
    return -1;
}

/* Replaces the view with a new reference (NULL: failed). */
static int set_view(indexing *ix, em_tensor *v)
{
    if (!v) return failed();
    em_release(ix->view);
    ix->view = v;
    return 0;
}

/* Python's int as int64 (PyTorch's THPUtils_unpackLong). */
static int unpack_long(PyObject *o, int64_t *out)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
        PyErr_SetString(PyExc_RuntimeError, "Overflow when unpacking long");
        return -1;
    }
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
}

static bool is_int(PyObject *o) { return PyLong_CheckExact(o) || (PyLong_Check(o) && !PyBool_Check(o)); }

/* ---- stage 1: basic indices ---------------------------------------------------- */
/* PyTorch's applySelect: the bounds message names real_dim, the item's place in the index. */
static em_tensor *apply_select(const em_tensor *t, int dim, int64_t index, int real_dim)
{
    int nd = em_ndim(t);
    if (nd == 0 && index == 0 && dim == 0) {
        PyErr_SetString(PyExc_IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                                          "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
        return NULL;
    }
    int64_t size = dim < nd ? em_sizes(t)[dim] : 0;
    if (index >= size || index < -size) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld", (long long)index,
                     real_dim, (long long)size);
        return NULL;
    }
    em_tensor *r = em_select(t, dim, index);
    if (!r) emp_raise();
    return r;
}

/* PyTorch's applySlice (positive steps only). */
static em_tensor *apply_slice(const em_tensor *t, int dim, PyObject *slice)
{
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(slice, &start, &stop, &step) < 0) return NULL;
    if (step <= 0) {
        PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
        return NULL;
    }
    /* a step past the size takes one element: cap it so that no size or stride overflows */
    int64_t size = dim < em_ndim(t) ? em_sizes(t)[dim] : 0;
    if (step > INT32_MAX && step > size) step = size > 0 ? size : 1;
    em_tensor *r = em_slice(t, dim, start, stop, step);
    if (!r) emp_raise();
    return r;
}

/* x[int] and x[slice]: the common cases, without the tuple machinery.
 * 1 with *out set (NULL on error), 0 when index is neither. */
static int basic_fast(em_tensor *t, PyObject *index, em_tensor **out)
{
    int64_t i;
    if (is_int(index)) {
        *out = unpack_long(index, &i) ? NULL : apply_select(t, 0, i, 0);
        return 1;
    }
    if (PySlice_Check(index)) {
        *out = apply_slice(t, 0, index);
        return 1;
    }
    return 0;
}

/* ---- stage 2: advanced indices ------------------------------------------------- */
/* Stores t (stolen) as the index of the view's dim *dim. */
static int record(indexing *ix, int *dim, em_tensor *t)
{
    if (!t) return failed();
    if (*dim >= EM_MAX_DIMS) {
        em_release(t);
        PyErr_Format(PyExc_IndexError, "too many indices (at most %d dims are supported)", EM_MAX_DIMS);
        return -1;
    }
    while (ix->n <= *dim) ix->adv[ix->n++] = NULL;
    ix->adv[*dim] = t;
    (*dim)++;
    return 0;
}

/* A bool in the index: a new dim of size 1 at *dim, indexed by [0] (true)
 * or [] (false). */
static int apply_bool(indexing *ix, int *dim, bool v)
{
    if (set_view(ix, em_unsqueeze(ix->view, *dim))) return -1;
    int64_t n = v;
    return record(ix, dim, v ? em_zeros(1, &n, EM_I64) : em_empty(1, &n, EM_I64));
}

/* A list or other sequence as an index tensor: bool (a mask) or uint8 as
 * inferred, anything else int64 (floats truncated), as PyTorch's
 * indexing_tensor_from_data. NULL with a Python exception. */
static em_tensor *sequence_index(PyObject *seq)
{
    em_tensor *t = emp_tensor_from_object(seq, EM_DTYPE_NONE);
    em_dtype dt = t ? em_dtype_of(t) : EM_I64;
    if (dt == EM_I64 || dt == EM_BOOL || dt == EM_U8) return t;
    em_release(t);
    return emp_tensor_from_object(seq, EM_I64);
}

/* A tensor in the index: a 0-d integer tensor is an int, a 0-d bool or
 * uint8 tensor a bool; others are advanced indices as they are (em_index
 * checks their dtype). */
static int apply_tensor(indexing *ix, PyObject *obj, int *dim, int real_dim)
{
    em_tensor *t = emp_t(obj);
    em_dtype dt = em_dtype_of(t);
    if (em_ndim(t) == 0 && !em_dtype_is_float(dt)) {
        double v;
        if (em_item(t, &v)) return emp_raise(), -1;
        if (dt == EM_BOOL || dt == EM_U8) return apply_bool(ix, dim, v != 0);
        em_tensor *h = dt == EM_I64 ? em_host_tensor(t) : NULL; /* exact, not through a double */
        int64_t i = h ? *(int64_t *)em_data_ptr(h) : (int64_t)v;
        em_release(h);
        return set_view(ix, apply_select(ix->view, *dim, i, real_dim));
    }
    return record(ix, dim, em_retain(t));
}

/* One item of the index (PyTorch's applySlicing loop body). */
static int apply_item(indexing *ix, PyObject *obj, int *dim, int real_dim, int ndim, int specified)
{
    int64_t i;
    em_tensor *v;
    if (is_int(obj)) {
        if (unpack_long(obj, &i)) return -1;
        return set_view(ix, apply_select(ix->view, *dim, i, real_dim));
    }
    if (PySlice_Check(obj)) {
        if (!(v = apply_slice(ix->view, *dim, obj))) return -1;
        (*dim)++;
        return set_view(ix, v);
    }
    if (obj == Py_Ellipsis) {
        *dim += ndim - specified;
        return 0;
    }
    if (obj == Py_None) return set_view(ix, em_unsqueeze(ix->view, (*dim)++));
    if (PyBool_Check(obj)) return apply_bool(ix, dim, obj == Py_True);
    if (emp_is_tensor(obj)) return apply_tensor(ix, obj, dim, real_dim);
    if (PySequence_Check(obj)) {
        return record(ix, dim, sequence_index(obj));
    }
    PyObject *n = PyNumber_Index(obj); /* numpy integers and other __index__ objects */
    if (!n) {
        PyErr_Format(PyExc_IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     "Variables are valid indices (got %s)", Py_TYPE(obj)->tp_name);
        return -1;
    }
    int rc = unpack_long(n, &i);
    Py_DECREF(n);
    if (rc) return -1;
    return set_view(ix, apply_select(ix->view, *dim, i, real_dim));
}

/* The dims of self the index names: masks count their dims; None,
 * Ellipsis and bools none. */
static int count_specified(PyObject *const *items, Py_ssize_t n)
{
    int count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = items[i];
        if (emp_is_tensor(o)) {
            em_dtype dt = em_dtype_of(emp_t(o));
            count += dt == EM_BOOL || dt == EM_U8 ? em_ndim(emp_t(o)) : 1;
        } else if (o != Py_None && o != Py_Ellipsis && !PyBool_Check(o)) {
            count++;
        }
    }
    return count;
}

/* NumPy's rule, kept by PyTorch, for a sequence that is not a tuple: it is
 * a tuple of indices when short (< 32) and holding a tensor, a sequence, a
 * slice, Ellipsis or None; otherwise it is one index. */
static bool treat_as_tuple(PyObject *index)
{
    if (PyTuple_Check(index)) return true;
    if (emp_is_tensor(index) || !PySequence_Check(index)) return false;
    Py_ssize_t n = PySequence_Size(index);
    if (n < 0) PyErr_Clear();
    if (n < 0 || n >= 32) return false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_GetItem(index, i);
        if (!o) {
            PyErr_Clear();
            return false;
        }
        bool seq = emp_is_tensor(o) || PySequence_Check(o) || PySlice_Check(o) || o == Py_Ellipsis || o == Py_None;
        Py_DECREF(o);
        if (seq) return true;
    }
    return false;
}

/* Both stages for any index; on error ix holds nothing. */
static int apply_index(indexing *ix, em_tensor *self, PyObject *index)
{
    ix->view = em_retain(self);
    ix->n = 0;
    PyObject *holder = NULL, *const *items = &index;
    Py_ssize_t n = 1;
    if (PyTuple_Check(index)) {
        items = &PyTuple_GET_ITEM(index, 0), n = PyTuple_GET_SIZE(index);
    } else if (treat_as_tuple(index)) {
        if (!(holder = PySequence_Tuple(index))) goto fail;
        items = &PyTuple_GET_ITEM(holder, 0), n = PyTuple_GET_SIZE(holder);
    }
    int ndim = em_ndim(self), specified = count_specified(items, n), dim = 0;
    if (specified > ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim);
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (apply_item(ix, items[i], &dim, (int)i, ndim, specified)) goto fail;
    Py_XDECREF(holder);
    return 0;
fail:
    Py_XDECREF(holder);
    indexing_clear(ix);
    return -1;
}

/* ---- __getitem__ ----------------------------------------------------------------- */
static PyObject *tensor_getitem(PyObject *self, PyObject *index)
{
    em_tensor *t = emp_t(self), *r;
    if (basic_fast(t, index, &r)) return r ? emp_wrap(r) : NULL;
    indexing ix;
    if (apply_index(&ix, t, index)) return NULL;
    if (ix.n) r = em_index(ix.view, ix.n, (const em_tensor *const *)ix.adv);
    else if (ix.view == t) r = em_expand(t, em_ndim(t), em_sizes(t)); /* x[...] is a new view, not x */
    else r = em_retain(ix.view);
    indexing_clear(&ix);
    return emp_wrap(r);
}

/* ---- __setitem__ ----------------------------------------------------------------- */
/* c10's checked_convert of a Python number to dtype dt: out of dt's range
 * is an error (unsigned types take negative ints down to -max, which wrap;
 * floating types take inf and nan; bool takes anything). */
static const double dtype_max[EM_DTYPE_COUNT] = {
    [EM_U8] = 255, [EM_I8] = 127, [EM_I16] = 32767, [EM_I32] = 2147483647, [EM_I64] = 9223372036854775807.0,
    [EM_F16] = 65504, [EM_F32] = FLT_MAX, [EM_F64] = DBL_MAX, [EM_BOOL] = INFINITY, [EM_BF16] = 3.38953139e38,
    [EM_C32] = 65504, [EM_C64] = FLT_MAX, [EM_C128] = DBL_MAX, /* each part's */
};

static bool fits(double v, bool from_int, em_dtype dt)
{
    double max = dtype_max[dt];
    bool floating = em_dtype_is_float(dt) || em_dtype_is_complex(dt);
    if (dt == EM_BOOL || (floating && !isfinite(v))) return true;
    if (dt == EM_U8) return from_int ? v <= max && v >= -max : v <= max && v >= 0;
    if (dt == EM_I64) return v < max && v >= -max; /* max is 2^63 as a double */
    return v <= max && v >= (floating ? -max : -max - 1);
}

/* The value of x[...] = value as a tensor (new ref): a tensor as it is, a
 * Python number as a 0-d tensor of self's dtype (PyTorch's valueToTensor). */
static em_tensor *value_tensor(PyObject *value, em_dtype dt)
{
    if (emp_is_tensor(value)) return em_retain(emp_t(value));
    int64_t i = 0;
    double d, im = 0;
    bool from_int = PyLong_Check(value), lost_imag = false;
    if (!from_int && PyIndex_Check(value) && !PyFloat_Check(value)) { /* numpy integers */
        PyObject *tp = (PyObject *)Py_TYPE(value), *mod = PyObject_GetAttrString(tp, "__module__");
        from_int = mod && PyUnicode_Check(mod) && !PyUnicode_CompareWithASCIIString(mod, "numpy") &&
                   strcmp(Py_TYPE(value)->tp_name, "numpy.bool_");
        Py_XDECREF(mod);
        PyErr_Clear();
    }
    if (from_int) {
        PyObject *n = PyNumber_Index(value);
        int rc = n ? unpack_long(n, &i) : -1;
        Py_XDECREF(n);
        if (rc) return NULL;
        d = (double)i;
    } else if (PyFloat_Check(value)) {
        d = PyFloat_AS_DOUBLE(value);
    } else if (emp_is_complex_number(value)) { /* a real dtype takes only a real value */
        Py_complex z = PyComplex_AsCComplex(value);
        if (PyErr_Occurred()) return NULL;
        d = z.real, im = z.imag;
        lost_imag = im != 0 && !em_dtype_is_complex(dt);
    } else {
        return PyErr_Format(PyExc_TypeError, "can't assign a %s to a ember.%sTensor", Py_TYPE(value)->tp_name,
                            em_dtype_scalar_name(dt)), NULL;
    }
    if (lost_imag || !fits(d, from_int, dt) || !fits(im, false, dt))
        return PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow",
                            em_dtype_name(dt)), NULL;
    em_tensor *t = from_int && dt == EM_I64 ? em_from_data(&i, 0, NULL, EM_I64) : em_tensor_scalar(d, dt);
    if (t && im != 0 && em_fill_complex_(t, d, im)) em_release(t), t = NULL;
    if (!t) emp_raise();
    return t;
}

/* value with its leading size-1 dims dropped (new ref; PyTorch's slicePrefix1sSize). */
static em_tensor *drop_leading_ones(em_tensor *value)
{
    int nd = em_ndim(value), k = 0;
    while (k < nd && em_sizes(value)[k] == 1) k++;
    return k ? em_view(value, nd - k, em_sizes(value) + k) : em_retain(value);
}

/* dst[...] = src, src broadcast (PyTorch's copy_to). */
static int copy_to(em_tensor *dst, em_tensor *src)
{
    em_tensor *s = em_ndim(src) > em_ndim(dst) ? drop_leading_ones(src) : em_retain(src);
    em_status st = s ? em_copy_(dst, s) : em_error_code();
    em_release(s);
    return st ? failed() : 0;
}

/* "[2, 3]" into buf (room for EM_MAX_DIMS sizes of 20 digits). */
static const char *shape_str(char *buf, const em_tensor *t)
{
    char *p = buf;
    *p++ = '[';
    for (int i = 0; i < em_ndim(t); i++) p += sprintf(p, "%s%lld", i ? ", " : "", (long long)em_sizes(t)[i]);
    strcpy(p, "]");
    return buf;
}

/* PyTorch's index_put_ writes a one-element value under a single mask (and
 * no other index) with masked_fill_, where the value's dtype need not match
 * self's: the mask's entry in ix->adv, or -1 when this is not the case. */
static int single_mask(const indexing *ix)
{
    int at = -1;
    for (int k = 0; k < ix->n; k++) {
        if (!ix->adv[k]) continue;
        em_dtype dt = em_dtype_of(ix->adv[k]);
        if (at >= 0 || (dt != EM_BOOL && dt != EM_U8)) return -1;
        at = k;
    }
    return at;
}

/* view[mask] = value: the mask covers view dims at.. (the entries before
 * it are full slices) and gets trailing dims of size 1 to broadcast. */
static em_status masked_fill(em_tensor *view, const em_tensor *mask, int at, em_tensor *value)
{
    int mnd = em_ndim(mask), nd = em_ndim(view) - at;
    for (int j = 0; j < mnd; j++)
        if (j >= nd || em_sizes(mask)[j] != em_sizes(view)[at + j]) {
            char ms[EM_MAX_DIMS * 24], vs[EM_MAX_DIMS * 24];
            PyErr_Format(PyExc_IndexError, "The shape of the mask %s at index %d does not match the shape of the "
                         "indexed tensor %s at index %d", shape_str(ms, mask), j, shape_str(vs, view), at + j);
            return EM_ERR_INDEX;
        }
    int64_t sizes[EM_MAX_DIMS];
    for (int j = 0; j < nd; j++) sizes[j] = j < mnd ? em_sizes(mask)[j] : 1;
    em_tensor *m = em_view(mask, nd, sizes), *v = em_view(value, 0, NULL);
    em_status st = m && v ? em_masked_fill_tensor_(view, m, v) : em_error_code();
    em_release(m), em_release(v);
    return st;
}

/* Stage 2 of x[index] = value (PyTorch's index_put_ from __setitem__). */
static em_status put(indexing *ix, em_tensor *value)
{
    int at = em_numel(value) == 1 ? single_mask(ix) : -1;
    if (at >= 0) return masked_fill(ix->view, ix->adv[at], at, value);
    em_tensor *vals = drop_leading_ones(value);
    em_status st = vals ? em_index_put_(ix->view, ix->n, (const em_tensor *const *)ix->adv, vals, false)
                        : em_error_code();
    em_release(vals);
    return st;
}

static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items");
        return -1;
    }
    em_tensor *t = emp_t(self), *v = value_tensor(value, em_dtype_of(t)), *dst;
    if (!v) return -1;
    int rc = 0;
    if (index == Py_False) { /* nothing to write, and nothing checked */
    } else if (index == Py_True) {
        dst = em_unsqueeze(t, 0);
        rc = dst ? copy_to(dst, v) : failed();
        em_release(dst);
    } else if (basic_fast(t, index, &dst)) {
        rc = dst ? copy_to(dst, v) : -1;
        em_release(dst);
    } else {
        indexing ix;
        rc = apply_index(&ix, t, index);
        if (!rc) {
            rc = ix.n ? (put(&ix, v) ? failed() : 0) : copy_to(ix.view, v);
            indexing_clear(&ix);
        }
    }
    em_release(v);
    return rc;
}

PyMappingMethods emp_tensor_as_mapping = {
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};
