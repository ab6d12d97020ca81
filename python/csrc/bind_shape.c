/* Shape ops in Python (include/ember/shape.h): joining (cat, stack, ...),
 * meshgrid and cartesian_prod, flips and rolls, repeats, diff, triangles
 * and diagonals, one_hot. The views of core.h are in tensor_methods.c. */
#include "emp.h"

/* ---- lists of tensors --------------------------------------------------- */
/* Borrowed tensors of a call's list argument: `small` holds short lists
 * (the usual case, no allocation), longer ones go on the heap. */
#define SMALL_LIST 32
typedef struct {
    em_tensor **v;
    int n;
    em_tensor *small[SMALL_LIST];
} tensor_array;

static void tensor_array_free(tensor_array *l)
{
    if (l->v != l->small) PyMem_Free(l->v);
}

/* items[0..n) must all be tensors (PyTorch's TypeError otherwise). 0 or -1 (raised). */
static int tensor_array_from(tensor_array *l, PyObject *const *items, Py_ssize_t n, const char *op)
{
    if (n > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s(): too many tensors", op);
        return -1;
    }
    l->n = (int)n;
    l->v = n <= SMALL_LIST ? l->small : PyMem_Malloc(n * sizeof *l->v);
    if (!l->v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        if (!emp_is_tensor(items[j])) {
            PyErr_Format(PyExc_TypeError, "%s(): expected Tensor as element %zd in argument 0, but got %s", op, j,
                         Py_TYPE(items[j])->tp_name);
            tensor_array_free(l);
            return -1;
        }
        l->v[j] = emp_t(items[j]);
    }
    return 0;
}

/* A tuple or list argument (the parser checked which). */
static int tensor_array_seq(tensor_array *l, PyObject *seq, const char *op)
{
    return tensor_array_from(l, PySequence_Fast_ITEMS(seq), PySequence_Fast_GET_SIZE(seq), op);
}

#define LIST(l) ((const em_tensor *const *)(l).v)

/* ---- joining ------------------------------------------------------------ */
/* name(Tensor[] tensors[, int dim=0], *, Tensor? out=None); DIM_ARG passes the dim. */
#define DIM_ARG , emp_dim(a, 1)
#define JOIN_BIND(name, dim_sig, k_out, dim_arg)                                                   \
    EMP_BIND(name, #name "(Tensor[] tensors" dim_sig ", *, Tensor? out=None)")                     \
    {                                                                                              \
        tensor_array l;                                                                            \
        if (tensor_array_seq(&l, a->obj[0], #name)) return NULL;                                   \
        PyObject *r = EMP_OUT(k_out, em_##name##_out(a->t[k_out], l.n, LIST(l) dim_arg),           \
                              em_##name(l.n, LIST(l) dim_arg));                                    \
        tensor_array_free(&l);                                                                     \
        return r;                                                                                  \
    }
JOIN_BIND(cat, ", int dim=0", 2, DIM_ARG)
JOIN_BIND(stack, ", int dim=0", 2, DIM_ARG)
JOIN_BIND(hstack, "", 1, )
JOIN_BIND(vstack, "", 1, )
JOIN_BIND(dstack, "", 1, )

/* meshgrid(*tensors, indexing=None) and cartesian_prod(*tensors) are
 * Python functions in PyTorch: the tensors come as separate arguments
 * (meshgrid also takes one list), so they parse their own arguments. */
static int varargs_tensors(tensor_array *l, PyObject *const *args, Py_ssize_t nargs, bool allow_list, const char *op)
{
    if (allow_list && nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0])))
        return tensor_array_seq(l, args[0], op);
    return tensor_array_from(l, args, nargs, op);
}

static PyObject *meshgrid(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const char *indexing = NULL;
    for (Py_ssize_t j = 0; kwnames && j < PyTuple_GET_SIZE(kwnames); j++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, j), *v = args[nargs + j];
        if (PyUnicode_CompareWithASCIIString(name, "indexing"))
            return PyErr_Format(PyExc_TypeError, "meshgrid() got an unexpected keyword argument '%U'", name);
        if (v != Py_None && !(indexing = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL))
            return PyErr_Occurred() ? NULL
                                    : PyErr_Format(PyExc_TypeError, "meshgrid(): indexing must be str, not %s",
                                                   Py_TYPE(v)->tp_name);
    }
    if (!indexing &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.", 1))
        return NULL;
    tensor_array l;
    if (varargs_tensors(&l, args, nargs, true, "meshgrid")) return NULL;
    em_tensor **out = PyMem_Malloc((l.n ? l.n : 1) * sizeof *out);
    PyObject *r = !out ? PyErr_NoMemory()
                : em_meshgrid(l.n, LIST(l), indexing, out) ? emp_raise()
                                                            : emp_wrap_tuple(l.n, out);
    PyMem_Free(out);
    tensor_array_free(&l);
    return r;
}

static PyObject *cartesian_prod(PyObject *m, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (kwnames && PyTuple_GET_SIZE(kwnames))
        return PyErr_Format(PyExc_TypeError, "cartesian_prod() got an unexpected keyword argument '%U'",
                            PyTuple_GET_ITEM(kwnames, 0));
    tensor_array l;
    if (varargs_tensors(&l, args, nargs, false, "cartesian_prod")) return NULL;
    PyObject *r = emp_wrap(em_cartesian_prod(l.n, LIST(l)));
    tensor_array_free(&l);
    return r;
}

/* ---- reordering --------------------------------------------------------- */
EMP_BIND(flip, "flip(Tensor input, int... dims)")
{
    int dims[EM_MAX_DIMS];
    return emp_wrap(em_flip(a->t[0], a->nlist[1], emp_dims(a, 1, dims)));
}
EMP_BIND(fliplr, "fliplr(Tensor input)") { return emp_wrap(em_fliplr(a->t[0])); }
EMP_BIND(flipud, "flipud(Tensor input)") { return emp_wrap(em_flipud(a->t[0])); }
EMP_BIND(roll, "roll(Tensor input, int[1] shifts, int[1]? dims=None)")
{
    int dims[EM_MAX_DIMS];
    return emp_wrap(em_roll(a->t[0], a->nlist[1], a->list[1], a->nlist[2], emp_dims(a, 2, dims)));
}
EMP_BIND(rot90, "rot90(Tensor input, int k=1, int[]? dims=None)")
{
    int dims[EM_MAX_DIMS] = {0, 1};
    return emp_wrap(em_rot90(a->t[0], a->i[1], a->has[2] ? a->nlist[2] : 2, a->has[2] ? emp_dims(a, 2, dims) : dims));
}

/* ---- repeating ---------------------------------------------------------- */
EMP_BIND(repeat, "repeat(Tensor input, int... repeats)") { return emp_wrap(em_repeat(a->t[0], a->nlist[1], a->list[1])); }
EMP_BIND(tile, "tile(Tensor input, int... dims)") { return emp_wrap(em_tile(a->t[0], a->nlist[1], a->list[1])); }
/* The third overload is PyTorch's one-argument (indices) form, a function only. */
EMP_BIND(repeat_interleave,
         "repeat_interleave(Tensor input, Tensor repeats, int? dim=None, *, int? output_size=None)",
         "repeat_interleave(Tensor input, int repeats, int? dim=None, *, int? output_size=None)",
         "repeat_interleave(Tensor repeats, *, int? output_size=None)")
{
    if (a->sig == 2 && a->self)
        return PyErr_Format(PyExc_TypeError, "repeat_interleave() missing 1 required positional arguments: \"repeats\"");
    if (a->sig == 2) return emp_wrap(em_repeat_interleave_indices(a->t[0], a->has[1] ? a->i[1] : -1));
    int dim = a->has[2] ? emp_dim(a, 2) : EM_DIM_NONE;
    int64_t output_size = a->has[3] ? a->i[3] : -1;
    if (a->sig == 0) return emp_wrap(em_repeat_interleave_tensor(a->t[0], a->t[1], dim, output_size));
    return emp_wrap(em_repeat_interleave(a->t[0], a->i[1], dim, output_size));
}

/* ---- differences -------------------------------------------------------- */
EMP_BIND(diff, "diff(Tensor input, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None, *, Tensor? out=None)")
{
    return EMP_OUT(5, em_diff_out(a->t[5], a->t[0], a->i[1], emp_dim(a, 2), a->t[3], a->t[4]),
                   em_diff(a->t[0], a->i[1], emp_dim(a, 2), a->t[3], a->t[4]));
}

/* ---- triangles and diagonals -------------------------------------------- */
#define TRIANGLE_BIND(name)                                                                        \
    EMP_BIND(name, #name "(Tensor input, int diagonal=0, *, Tensor? out=None)")                    \
    {                                                                                              \
        return EMP_OUT(2, em_##name##_out(a->t[2], a->t[0], a->i[1]), em_##name(a->t[0], a->i[1])); \
    }                                                                                              \
    EMP_BIND(name##_, #name "_(Tensor input, int diagonal=0)")                                     \
    {                                                                                              \
        return emp_status_self(em_##name##_(a->t[0], a->i[1]), a->obj[0]);                         \
    }                                                                                              \
    EMP_BIND(name##_indices, #name "_indices(int row, int col, int offset=0, *, dtype? dtype=None, "  \
                             "device? device=None, layout? layout=None, bool pin_memory=False)")     \
    {                                                                                              \
        if (emp_use_device(a, 4)) return NULL;                                                      \
        return emp_wrap(em_##name##_indices(a->i[0], a->i[1], a->i[2], a->has[3] ? (em_dtype)a->i[3] : EM_I64)); \
    }
TRIANGLE_BIND(tril)
TRIANGLE_BIND(triu)

EMP_BIND(diag, "diag(Tensor input, int diagonal=0, *, Tensor? out=None)")
{
    return EMP_OUT(2, em_diag_out(a->t[2], a->t[0], a->i[1]), em_diag(a->t[0], a->i[1]));
}
EMP_BIND(diag_embed, "diag_embed(Tensor input, int offset=0, int dim1=-2, int dim2=-1)")
{
    return emp_wrap(em_diag_embed(a->t[0], a->i[1], emp_dim(a, 2), emp_dim(a, 3)));
}
EMP_BIND(diagflat, "diagflat(Tensor input, int offset=0)") { return emp_wrap(em_diagflat(a->t[0], a->i[1])); }

/* ---- encodings ---------------------------------------------------------- */
/* ember.nn.functional.one_hot (PyTorch has no ember.one_hot or method). */
EMP_BIND(one_hot, "one_hot(Tensor tensor, int num_classes=-1)") { return emp_wrap(em_one_hot(a->t[0], a->i[1])); }

/* Both ember.f and Tensor.f. */
#define BOTH(X) \
    X(flip) X(fliplr) X(flipud) X(roll) X(rot90) X(tile) X(repeat_interleave) X(diff) X(tril) X(triu) X(diag) \
    X(diag_embed) X(diagflat)
#define FN(name) EMP_FUNCTION(name),
#define METH(name) EMP_METHOD(name),
PyMethodDef emp_shape_functions[] = {
    BOTH(FN) FN(cat) FN(stack) FN(hstack) FN(vstack) FN(dstack) FN(tril_indices) FN(triu_indices) FN(one_hot)
    EMP_FUNCTION_AS("concat", cat), EMP_FUNCTION_AS("concatenate", cat),
    {"meshgrid", (PyCFunction)(void (*)(void))meshgrid, EMP_FASTCALL, NULL},
    {"cartesian_prod", (PyCFunction)(void (*)(void))cartesian_prod, EMP_FASTCALL, NULL},
    {NULL},
};
PyMethodDef emp_shape_methods[] = {
    BOTH(METH) METH(repeat) METH(tril_) METH(triu_)
    {NULL},
};
