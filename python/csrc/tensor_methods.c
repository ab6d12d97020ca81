/* Tensor methods about the tensor itself: geometry queries, conversions,
 * copies, views, and the functions that share their bindings (ember.reshape,
 * ember.transpose...). */
#include "emp.h"

static PyObject *dim_or_all(emp_args *a, const int64_t *v, bool size)
{
    em_tensor *t = a->t[0];
    int nd = em_ndim(t);
    if (!a->has[1]) {
        if (size) return emp_size_new(nd, v);
        PyObject *r = PyTuple_New(nd);
        for (int i = 0; r && i < nd; i++) PyTuple_SET_ITEM(r, i, PyLong_FromLongLong(v[i]));
        return r;
    }
    int64_t d = a->i[1], n = nd ? nd : 1;
    if (d < -n || d >= n)
        return PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                            (long long)-n, (long long)n - 1, (long long)d);
    if (nd == 0) return PyLong_FromLong(size ? 1 : 1);
    return PyLong_FromLongLong(v[d < 0 ? d + nd : d]);
}

EMP_BIND(size, "size(Tensor input, int? dim=None)") { return dim_or_all(a, em_sizes(a->t[0]), true); }
EMP_BIND(stride, "stride(Tensor input, int? dim=None)") { return dim_or_all(a, em_strides(a->t[0]), false); }
EMP_BIND(dim, "dim(Tensor input)") { return PyLong_FromLong(em_ndim(a->t[0])); }
EMP_BIND(numel, "numel(Tensor input)") { return PyLong_FromLongLong(em_numel(a->t[0])); }
EMP_BIND(element_size, "element_size(Tensor input)") { return PyLong_FromSize_t(em_dtype_size(em_dtype_of(a->t[0]))); }
EMP_BIND(storage_offset, "storage_offset(Tensor input)") { return PyLong_FromLongLong(em_storage_offset(a->t[0])); }
EMP_BIND(is_contiguous, "is_contiguous(Tensor input, *, memory_format? memory_format=None)")
{
    return PyBool_FromLong(em_is_contiguous_as(a->t[0], a->has[1] ? (em_memory_format)a->i[1] : EM_CONTIGUOUS_FORMAT));
}
EMP_BIND(is_floating_point, "is_floating_point(Tensor input)") { return PyBool_FromLong(em_dtype_is_float(em_dtype_of(a->t[0]))); }
EMP_BIND(is_complex, "is_complex(Tensor input)") { return PyBool_FromLong(em_dtype_is_complex(em_dtype_of(a->t[0]))); }
EMP_BIND(data_ptr, "data_ptr(Tensor input)") { return PyLong_FromVoidPtr(em_data_ptr(a->t[0])); }
EMP_BIND(item, "item(Tensor input)") { return emp_tensor_item(a->obj[0]); }

/* tolist: nested lists of Python numbers, built from a contiguous copy. */
static PyObject *list_of(const char *p, em_dtype dt, int nd, const int64_t *sizes, int64_t *pos)
{
    if (nd == 0) {
        const char *e = p + *pos * (int64_t)em_dtype_size(dt);
        (*pos)++;
        switch (dt) {
        case EM_BOOL: return PyBool_FromLong(*(const bool *)e);
        case EM_U8: return PyLong_FromLong(*(const uint8_t *)e);
        case EM_I8: return PyLong_FromLong(*(const int8_t *)e);
        case EM_I16: return PyLong_FromLong(*(const int16_t *)e);
        case EM_I32: return PyLong_FromLong(*(const int32_t *)e);
        case EM_I64: return PyLong_FromLongLong(*(const int64_t *)e);
        case EM_F32: return PyFloat_FromDouble(*(const float *)e);
        case EM_F64: return PyFloat_FromDouble(*(const double *)e);
        case EM_C128: return PyComplex_FromDoubles(((const double *)e)[0], ((const double *)e)[1]);
        default: return NULL; /* half and complex64 types are converted before */
        }
    }
    PyObject *l = PyList_New(sizes[0]);
    for (int64_t i = 0; l && i < sizes[0]; i++) {
        PyObject *x = list_of(p, dt, nd - 1, sizes + 1, pos);
        if (!x) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, x);
    }
    return l;
}

EMP_BIND(tolist, "tolist(Tensor input)")
{
    em_tensor *t = a->t[0];
    em_dtype dt = em_dtype_of(t);
    em_dtype as = dt == EM_F16 || dt == EM_BF16 ? EM_F32 : em_dtype_is_complex(dt) ? EM_C128 : dt;
    em_tensor *c = em_to_dtype(t, as); /* (a clone holds the values of a tensor with lazy bits: Note [Conjugate bit]) */
    em_tensor *cc = c && (em_is_conj(c) || em_is_neg(c)) ? em_clone(c) : c ? em_contiguous(c) : NULL;
    em_release(c);
    if (!cc) return emp_raise();
    em_tensor *h = em_host_tensor(cc);
    em_release(cc);
    if (!h) return emp_raise();
    int64_t pos = 0;
    PyObject *r = list_of(em_data_ptr(h), as, em_ndim(h), em_sizes(h), &pos);
    em_release(h);
    return r;
}

/* ---- copies and conversions ------------------------------------------------ */
EMP_BIND(contiguous, "contiguous(Tensor input, *, memory_format? memory_format=None)")
{
    em_tensor *r = em_contiguous_format(a->t[0], a->has[1] ? (em_memory_format)a->i[1] : EM_CONTIGUOUS_FORMAT);
    return r == a->t[0] ? (em_release(r), Py_NewRef(a->obj[0])) : emp_wrap(r);
}
EMP_BIND(clone, "clone(Tensor input, *, memory_format? memory_format=None)")
{
    return emp_wrap(em_clone_format(a->t[0], a->has[1] ? (em_memory_format)a->i[1] : EM_PRESERVE_FORMAT));
}
EMP_BIND(detach, "detach(Tensor input)") { return emp_wrap(em_detach(a->t[0])); }
EMP_BIND(requires_grad_, "requires_grad_(Tensor input, bool requires_grad=True)")
{
    return emp_status_self(em_set_requires_grad(a->t[0], a->i[1]), a->obj[0]);
}
EMP_BIND(retain_grad, "retain_grad(Tensor input)")
{
    if (em_retain_grad(a->t[0])) return emp_raise();
    Py_RETURN_NONE;
}
EMP_BIND(copy_, "copy_(Tensor input, Tensor src, bool non_blocking=False)")
{
    return emp_status_self(em_copy_(a->t[0], a->t[1]), a->obj[0]);
}
EMP_BIND(fill_, "fill_(Tensor input, Number value)") { return emp_status_self(em_fill_(a->t[0], a->d[1]), a->obj[0]); }
EMP_BIND(zero_, "zero_(Tensor input)") { return emp_status_self(em_zero_(a->t[0]), a->obj[0]); }

/* The result of to()/type conversions: t itself when nothing changes and no
 * copy is asked for, else a converted copy (PyTorch's rule, em_to_format);
 * memory_format= is argument kmf (-1: none). */
static PyObject *convert_to(emp_args *a, em_dtype dt, em_device dev, bool copy, int kmf)
{
    em_tensor *t = a->t[0];
    if (dev.type == EM_CUDA) return PyErr_Format(PyExc_RuntimeError, EMP_NO_CUDA);
    em_memory_format f = kmf >= 0 && a->has[kmf] ? (em_memory_format)a->i[kmf] : EM_PRESERVE_FORMAT;
    bool move = dev.type != em_device_of(t).type;
    em_tensor *r = em_to_format(t, dt, f, copy && !move);
    if (r && move) { /* the dtype and layout on t's device, then the bytes to dev */
        em_tensor *m = em_to_device(r, dev);
        em_release(r);
        r = m;
    }
    return r == t ? (em_release(r), Py_NewRef(a->obj[0])) : emp_wrap(r);
}

EMP_BIND(to,
         "to(Tensor input, dtype dtype, bool non_blocking=False, bool copy=False, *, memory_format? memory_format=None)",
         "to(Tensor input, device? device=None, dtype? dtype=None, bool non_blocking=False, bool copy=False, *, memory_format? memory_format=None)",
         "to(Tensor input, Tensor other, bool non_blocking=False, bool copy=False, *, memory_format? memory_format=None)")
{
    em_device dev = em_device_of(a->t[0]);
    switch (a->sig) {
    case 0: return convert_to(a, (em_dtype)a->i[1], dev, a->i[3], 4);
    case 1: return convert_to(a, a->has[2] ? (em_dtype)a->i[2] : EM_DTYPE_NONE, a->has[1] ? a->dev[1] : dev, a->i[4], 5);
    default: return convert_to(a, em_dtype_of(a->t[1]), em_device_of(a->t[1]), a->i[3], 4);
    }
}

EMP_BIND(cpu, "cpu(Tensor input, *, memory_format? memory_format=None)") { return convert_to(a, EM_DTYPE_NONE, EM_DEVICE_CPU, false, 1); }
EMP_BIND(cuda, "cuda(Tensor input, device? device=None, bool non_blocking=False, *, memory_format? memory_format=None)")
{
    return convert_to(a, EM_DTYPE_NONE, (em_device){EM_CUDA, 0}, false, 3);
}

/* float(), double(), long()...: to(dtype) under PyTorch's names. */
#define DTYPE_METHODS(X) \
    X(float, EM_F32) X(double, EM_F64) X(half, EM_F16) X(bfloat16, EM_BF16) X(long, EM_I64) \
    X(int, EM_I32) X(short, EM_I16) X(char, EM_I8) X(byte, EM_U8) X(cfloat, EM_C64) X(cdouble, EM_C128) X(chalf, EM_C32)
#define DEFINE(name, dt) \
    EMP_BIND(name, #name "(Tensor input, *, memory_format? memory_format=None)") { return convert_to(a, dt, em_device_of(a->t[0]), false, 1); }
DTYPE_METHODS(DEFINE)
#undef DEFINE
/* `bool` is a macro in C: this one is spelled out. */
EMP_BIND(to_bool, "bool(Tensor input, *, memory_format? memory_format=None)")
{
    return convert_to(a, EM_BOOL, em_device_of(a->t[0]), false, 1);
}

/* type(): 'torch.FloatTensor', PyTorch's text (programs compare it); type(dtype)
 * converts (ember/_legacy.py adds the type-name and tensor-type forms). */
EMP_BIND(type, "type(Tensor input, dtype? dtype=None, bool non_blocking=False)")
{
    if (a->has[1]) return convert_to(a, (em_dtype)a->i[1], em_device_of(a->t[0]), false, -1);
    return PyUnicode_FromFormat("torch.%sTensor", em_dtype_scalar_name(em_dtype_of(a->t[0])));
}

/* ---- views ------------------------------------------------------------------ */
EMP_BIND(view, "view(Tensor input, int... size)", "view(Tensor input, dtype dtype)")
{
    if (a->sig == 1) {
        if (a->i[1] == em_dtype_of(a->t[0])) return Py_NewRef(a->obj[0]);
        return PyErr_Format(PyExc_NotImplementedError, "view(dtype) reinterpreting bytes is not implemented in Ember");
    }
    return emp_wrap(em_view(a->t[0], a->nlist[1], a->list[1]));
}
EMP_BIND(view_as, "view_as(Tensor input, Tensor other)")
{
    return emp_wrap(em_view(a->t[0], em_ndim(a->t[1]), em_sizes(a->t[1])));
}
EMP_BIND(reshape, "reshape(Tensor input, int... shape)") { return emp_wrap(em_reshape(a->t[0], a->nlist[1], a->list[1])); }
EMP_BIND(reshape_as, "reshape_as(Tensor input, Tensor other)")
{
    return emp_wrap(em_reshape(a->t[0], em_ndim(a->t[1]), em_sizes(a->t[1])));
}
EMP_BIND(permute, "permute(Tensor input, int... dims)")
{
    int dims[EM_MAX_DIMS];
    if (a->nlist[1] != em_ndim(a->t[0]))
        return PyErr_Format(PyExc_RuntimeError,
                            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d",
                            em_ndim(a->t[0]), a->nlist[1]);
    return emp_wrap(em_permute(a->t[0], emp_dims(a, 1, dims)));
}
EMP_BIND(transpose, "transpose(Tensor input, int dim0, int dim1)")
{
    return emp_wrap(em_transpose(a->t[0], emp_dim(a, 1), emp_dim(a, 2)));
}
EMP_BIND(t, "t(Tensor input)") { return emp_wrap(em_t(a->t[0])); }
EMP_BIND(expand, "expand(Tensor input, int... size, *, bool implicit=False)")
{
    return emp_wrap(em_expand(a->t[0], a->nlist[1], a->list[1]));
}
EMP_BIND(expand_as, "expand_as(Tensor input, Tensor other)") { return emp_wrap(em_expand_as(a->t[0], a->t[1])); }
EMP_BIND(narrow, "narrow(Tensor input, int dim, int start, int length)")
{
    return emp_wrap(em_narrow(a->t[0], emp_dim(a, 1), a->i[2], a->i[3]));
}
EMP_BIND(select, "select(Tensor input, int dim, int index)") { return emp_wrap(em_select(a->t[0], emp_dim(a, 1), a->i[2])); }
EMP_BIND(squeeze, "squeeze(Tensor input)", "squeeze(Tensor input, int dim)")
{
    return emp_wrap(a->sig == 0 ? em_squeeze(a->t[0]) : em_squeeze_dim(a->t[0], emp_dim(a, 1)));
}
EMP_BIND(unsqueeze, "unsqueeze(Tensor input, int dim)") { return emp_wrap(em_unsqueeze(a->t[0], emp_dim(a, 1))); }
EMP_BIND(flatten, "flatten(Tensor input, int start_dim=0, int end_dim=-1)")
{
    return emp_wrap(em_flatten(a->t[0], emp_dim(a, 1), emp_dim(a, 2)));
}
EMP_BIND(unflatten, "unflatten(Tensor input, int dim, int[] sizes)")
{
    return emp_wrap(em_unflatten(a->t[0], emp_dim(a, 1), a->nlist[2], a->list[2]));
}
EMP_BIND(movedim, "movedim(Tensor input, int[] source, int[] destination)")
{
    int src[EM_MAX_DIMS], dst[EM_MAX_DIMS];
    if (a->nlist[1] != a->nlist[2])
        return PyErr_Format(PyExc_RuntimeError,
                            "movedim: Invalid source or destination dims: source (%d dims) should contain the same number of dims as destination (%d dims)",
                            a->nlist[1], a->nlist[2]);
    return emp_wrap(em_movedim(a->t[0], a->nlist[1], emp_dims(a, 1, src), emp_dims(a, 2, dst)));
}
EMP_BIND(diagonal, "diagonal(Tensor input, int offset=0, int dim1=0, int dim2=1)")
{
    return emp_wrap(em_diagonal(a->t[0], a->i[1], emp_dim(a, 2), emp_dim(a, 3)));
}
EMP_BIND(unfold, "unfold(Tensor input, int dimension, int size, int step)")
{
    return emp_wrap(em_unfold(a->t[0], emp_dim(a, 1), a->i[2], a->i[3]));
}
EMP_BIND(as_strided, "as_strided(Tensor input, int[] size, int[] stride, int? storage_offset=None)")
{
    if (a->nlist[1] != a->nlist[2])
        return PyErr_Format(PyExc_RuntimeError, "mismatch in length of strides and shape");
    return emp_wrap(em_as_strided(a->t[0], a->nlist[1], a->list[1], a->list[2],
                                  a->has[3] ? a->i[3] : em_storage_offset(a->t[0])));
}

/* split/chunk/unbind return tuples of views. */
static PyObject *pieces(em_status st, int n, em_tensor **out)
{
    if (st) return emp_raise();
    return emp_wrap_tuple(n, out);
}

#define MAX_PIECES 4096
EMP_BIND(split, "split(Tensor input, int split_size_or_sections, int dim=0)",
         "split(Tensor input, int[] split_size_or_sections, int dim=0)")
{
    em_tensor *t = a->t[0];
    int dim = emp_dim(a, 2), n = 0;
    if (a->sig == 1) {
        em_tensor *out[EM_MAX_DIMS];
        em_status st = em_split_sizes(t, a->nlist[1], a->list[1], dim, out);
        return pieces(st, st ? 0 : a->nlist[1], out);
    }
    em_tensor **out = PyMem_Malloc(MAX_PIECES * sizeof *out);
    if (!out) return PyErr_NoMemory();
    n = MAX_PIECES;
    em_status st = em_split(t, a->i[1], dim, out, &n);
    PyObject *r = pieces(st, n, out);
    PyMem_Free(out);
    return r;
}
EMP_BIND(chunk, "chunk(Tensor input, int chunks, int dim=0)")
{
    if (a->i[1] <= 0) return PyErr_Format(PyExc_RuntimeError, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)a->i[1]);
    int n = (int)(a->i[1] < MAX_PIECES ? a->i[1] : MAX_PIECES);
    em_tensor **out = PyMem_Malloc(n * sizeof *out);
    if (!out) return PyErr_NoMemory();
    em_status st = em_chunk(a->t[0], n, emp_dim(a, 2), out, &n);
    PyObject *r = pieces(st, n, out);
    PyMem_Free(out);
    return r;
}
EMP_BIND(unbind, "unbind(Tensor input, int dim=0)")
{
    int d = emp_dim(a, 1), nd = em_ndim(a->t[0]);
    int64_t size = nd && d >= -nd && d < nd ? em_sizes(a->t[0])[d < 0 ? d + nd : d] : 1;
    em_tensor **out = PyMem_Malloc((size ? size : 1) * sizeof *out);
    if (!out) return PyErr_NoMemory();
    int n = (int)size;
    em_status st = em_unbind(a->t[0], d, out, &n);
    PyObject *r = pieces(st, n, out);
    PyMem_Free(out);
    return r;
}

/* ---- new_* ---------------------------------------------------------------- */
#define NEW_SIG(name, extra) \
    #name "(Tensor input, int... size, " extra "*, dtype? dtype=None, device? device=None, bool requires_grad=False, layout? layout=None, bool pin_memory=False)"

static PyObject *finish_new(emp_args *a, em_tensor *t, int rg)
{
    if (t && a->i[rg] && em_set_requires_grad(t, true)) {
        em_release(t);
        t = NULL;
    }
    return emp_wrap(t);
}

static em_dtype new_dtype(emp_args *a, int k) { return a->has[k] ? (em_dtype)a->i[k] : em_dtype_of(a->t[0]); }

EMP_BIND(new_empty, NEW_SIG(new_empty, "")) { return finish_new(a, em_empty(a->nlist[1], a->list[1], new_dtype(a, 2)), 4); }
EMP_BIND(new_zeros, NEW_SIG(new_zeros, "")) { return finish_new(a, em_zeros(a->nlist[1], a->list[1], new_dtype(a, 2)), 4); }
EMP_BIND(new_ones, NEW_SIG(new_ones, "")) { return finish_new(a, em_ones(a->nlist[1], a->list[1], new_dtype(a, 2)), 4); }
EMP_BIND(new_full,
         "new_full(Tensor input, int[] size, Number fill_value, *, dtype? dtype=None, device? device=None, bool requires_grad=False, layout? layout=None, bool pin_memory=False)")
{
    return finish_new(a, em_full(a->nlist[1], a->list[1], a->d[2], new_dtype(a, 3)), 5);
}
EMP_BIND(new_tensor,
         "new_tensor(Tensor input, object data, *, dtype? dtype=None, device? device=None, bool requires_grad=False)")
{
    /* PyTorch: the data's own dtype when it is a tensor, else self's */
    em_dtype dt = a->has[2] ? (em_dtype)a->i[2] : emp_is_tensor(a->obj[1]) ? EM_DTYPE_NONE : em_dtype_of(a->t[0]);
    em_tensor *t = emp_tensor_from_object(a->obj[1], dt);
    return t ? finish_new(a, t, 4) : NULL;
}

/* Both ember.f(x, ...) and x.f(...). */
#define BOTH(X) \
    X(numel) X(is_floating_point) X(is_complex) X(clone) X(detach) X(view_as) X(reshape) X(permute) X(transpose) \
    X(t) X(narrow) X(select) X(squeeze) X(unsqueeze) X(flatten) X(unflatten) X(movedim) X(diagonal) X(as_strided) \
    X(split) X(chunk) X(unbind)
/* Methods only. */
#define METHODS(X) \
    X(size) X(stride) X(dim) X(element_size) X(storage_offset) X(is_contiguous) X(data_ptr) X(item) X(tolist)   \
    X(contiguous) X(requires_grad_) X(retain_grad) X(copy_) X(fill_) X(zero_) X(to) X(cpu) X(cuda) X(type)      \
    X(view) X(reshape_as) X(expand) X(expand_as) X(unfold) X(new_empty) X(new_zeros) X(new_ones) X(new_full)     \
    X(new_tensor) DTYPE_METHODS(X)

#define FN(name, ...) EMP_FUNCTION(name),
#define METH(name, ...) EMP_METHOD(name),
PyMethodDef emp_tensor_functions[] = {
    BOTH(FN)
    EMP_FUNCTION_AS("swapaxes", transpose), EMP_FUNCTION_AS("swapdims", transpose),
    EMP_FUNCTION_AS("moveaxis", movedim),
    {NULL},
};
PyMethodDef emp_tensor_methods[] = {
    BOTH(METH) METHODS(METH)
    EMP_METHOD_AS("ndimension", dim), EMP_METHOD_AS("nelement", numel), EMP_METHOD_AS("swapaxes", transpose),
    EMP_METHOD_AS("swapdims", transpose), EMP_METHOD_AS("moveaxis", movedim), EMP_METHOD_AS("bool", to_bool),
    {NULL},
};
