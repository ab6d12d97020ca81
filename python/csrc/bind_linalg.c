/* Linear algebra in Python (include/ember/linalg.h): the matrix products
 * and their beta/alpha forms (new, in place, out=), trace, kron, einsum
 * (equation or sublist form) and tensordot, with PyTorch 1.13's signatures. */
#include "emp.h"

/* ---- products of two tensors: name(input, <second>, *, out) ---------------------- */
#define PRODUCT_BIND(name, second, c_name)                                                              \
    EMP_BIND(name, #name "(Tensor input, Tensor " #second ", *, Tensor? out=None)")                     \
    {                                                                                                   \
        return EMP_OUT(2, em_##c_name##_out(a->t[2], a->t[0], a->t[1]), em_##c_name(a->t[0], a->t[1])); \
    }
#define PRODUCTS(X)                                                                                 \
    X(mm, mat2, mm) X(bmm, mat2, bmm) X(matmul, other, matmul) X(mv, vec, mv) X(dot, tensor, dot)   \
    X(vdot, other, vdot) X(outer, vec2, outer) X(ger, vec2, outer) X(kron, other, kron)
PRODUCTS(PRODUCT_BIND)

/* ---- beta * input + alpha * product: new (with out=) and in-place forms ---------- */
/* PyTorch reads a batch's size(1) and size(2) before checking its rank: a batch of
 * fewer than 2 dims is its IndexError. -1 raised, else 0. */
static int batch_rank(const char *name, const emp_args *a)
{
    if (strcmp(name + strlen(name) - 3, "bmm") && strcmp(name + strlen(name) - 4, "bmm_")) return 0;
    for (int k = 1; k <= 2; k++) {
        int nd = em_ndim(a->t[k]);
        if (nd >= 2) continue;
        PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
        return -1;
    }
    return 0;
}
#define ADD_PRODUCT_BIND(name, first, second)                                                         \
    EMP_BIND(name, #name "(Tensor input, Tensor " #first ", Tensor " #second                          \
                   ", *, Number beta=1, Number alpha=1, Tensor? out=None)")                           \
    {                                                                                                 \
        if (batch_rank(#name, a)) return NULL;                                                        \
        return EMP_OUT(5, em_##name##_out(a->t[5], a->t[0], a->t[1], a->t[2], a->d[3], a->d[4]),      \
                   em_##name(a->t[0], a->t[1], a->t[2], a->d[3], a->d[4]));                           \
    }                                                                                                 \
    EMP_BIND(name##_, #name "_(Tensor input, Tensor " #first ", Tensor " #second                      \
                      ", *, Number beta=1, Number alpha=1)")                                          \
    {                                                                                                 \
        if (batch_rank(#name "_", a)) return NULL;                                                    \
        return emp_status_self(em_##name##_(a->t[0], a->t[1], a->t[2], a->d[3], a->d[4]), a->obj[0]); \
    }
#define ADD_PRODUCTS(X) X(addmm, mat1, mat2) X(addmv, mat, vec) X(baddbmm, batch1, batch2) X(addbmm, batch1, batch2)
ADD_PRODUCTS(ADD_PRODUCT_BIND)

EMP_BIND(trace, "trace(Tensor input)") { return emp_wrap(em_trace(a->t[0])); }

/* ---- einsum ---------------------------------------------------------------------------
 * einsum(equation, *operands), einsum(equation, [operands]), or the sublist
 * form einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]), whose
 * subscripts 0..51 read as A-Z a-z and Ellipsis as '...' (as PyTorch). */
#define MAX_OPERANDS 64

/* Appends one sublist's subscripts to buf (which has room for 3 per item). */
static int sublist_subscripts(PyObject *list, char *buf, size_t *len)
{
    if (!PyList_Check(list) && !PyTuple_Check(list)) {
        PyErr_Format(PyExc_TypeError, "einsum(): expected a subscript list, got %s", Py_TYPE(list)->tp_name);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(list); i++) {
        PyObject *s = PySequence_Fast_GET_ITEM(list, i);
        if (s == Py_Ellipsis) {
            memcpy(buf + *len, "...", 3);
            *len += 3;
            continue;
        }
        int64_t v = -1;
        if (PyLong_Check(s) && emp_as_int64(s, &v)) return -1;
        if (!PyLong_Check(s) || v < 0 || v >= 52) {
            PyErr_Format(PyExc_ValueError, "einsum(): subscript in subscript list is not within the valid range [0, 52)");
            return -1;
        }
        buf[(*len)++] = (char)(v < 26 ? 'A' + v : 'a' + v - 26);
    }
    return 0;
}

/* The sublist form: operands at even positions, their subscripts after each. */
static PyObject *einsum_sublists(PyObject *const *args, Py_ssize_t n)
{
    size_t cap = 4, len = 0;
    em_tensor *ops[MAX_OPERANDS];
    int nops = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        cap += (PyList_Check(args[i]) || PyTuple_Check(args[i]) ? 3 * PySequence_Fast_GET_SIZE(args[i]) : 0) + 2;
    char *eq = PyMem_Malloc(cap);
    if (!eq) return PyErr_NoMemory();
    PyObject *r = NULL;
    for (Py_ssize_t i = 0; i + 1 < n; i += 2) {
        if (!emp_is_tensor(args[i])) {
            PyErr_Format(PyExc_TypeError, "einsum(): expected a Tensor as operand %zd, got %s", i / 2,
                         Py_TYPE(args[i])->tp_name);
            goto done;
        }
        if (nops == MAX_OPERANDS) {
            PyErr_Format(PyExc_ValueError, "einsum(): at most %d operands are supported", MAX_OPERANDS);
            goto done;
        }
        ops[nops++] = emp_t(args[i]);
        if (i) eq[len++] = ',';
        if (sublist_subscripts(args[i + 1], eq, &len)) goto done;
    }
    if (n % 2) {
        memcpy(eq + len, "->", 2);
        len += 2;
        if (sublist_subscripts(args[n - 1], eq, &len)) goto done;
    }
    eq[len] = 0;
    r = emp_wrap(em_einsum(eq, nops, (const em_tensor *const *)ops));
done:
    PyMem_Free(eq);
    return r;
}

static PyObject *einsum(PyObject *m, PyObject *const *args, Py_ssize_t n, PyObject *kwnames)
{
    if (kwnames && PyTuple_GET_SIZE(kwnames))
        return PyErr_Format(PyExc_TypeError, "einsum() got an unexpected keyword argument '%U'",
                            PyTuple_GET_ITEM(kwnames, 0));
    if (n < 2)
        return PyErr_Format(PyExc_ValueError, "einsum(): must specify the equation string and at least one operand, "
                                              "or at least one operand and its subscripts list");
    if (emp_is_tensor(args[0])) return einsum_sublists(args, n);
    if (!PyUnicode_Check(args[0]))
        return PyErr_Format(PyExc_TypeError, "einsum(): argument 'equation' must be str, not %s",
                            Py_TYPE(args[0])->tp_name);
    const char *eq = PyUnicode_AsUTF8(args[0]);
    if (!eq) return NULL;
    em_tensor *ops[MAX_OPERANDS];
    int nops;
    if (n == 2 && (PyList_Check(args[1]) || PyTuple_Check(args[1]))) {
        if ((nops = emp_tensor_seq(args[1], ops, MAX_OPERANDS, "einsum(): operands")) < 0) return NULL;
    } else {
        if (n - 1 > MAX_OPERANDS)
            return PyErr_Format(PyExc_ValueError, "einsum(): at most %d operands are supported", MAX_OPERANDS);
        for (nops = 0; nops < n - 1; nops++) {
            if (!emp_is_tensor(args[nops + 1]))
                return PyErr_Format(PyExc_TypeError, "einsum(): argument 'tensors' (position 2) must be tuple of Tensors, "
                                                     "but found element of type %s at pos %d",
                                    Py_TYPE(args[nops + 1])->tp_name, nops);
            ops[nops] = emp_t(args[nops + 1]);
        }
    }
    return emp_wrap(em_einsum(eq, nops, (const em_tensor *const *)ops));
}

/* ---- tensordot --------------------------------------------------------------------------
 * dims: an int d (the last d dims of a against the first d of b), a pair
 * of dim lists, or a tensor holding either (as PyTorch). */
static int dim_list(PyObject *o, int *dims, int *n)
{
    if (!PyList_Check(o) && !PyTuple_Check(o)) {
        PyErr_Format(PyExc_TypeError, "tensordot(): argument 'dims_self' must be tuple of ints, not %s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(o);
    if (len > EM_MAX_DIMS) {
        PyErr_Format(PyExc_RuntimeError, "tensordot(): at most %d dims can be contracted", EM_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *v = PySequence_Fast_GET_ITEM(o, i);
        if (!PyLong_Check(v) || PyBool_Check(v)) {
            PyErr_Format(PyExc_TypeError, "tensordot(): argument 'dims_self' must be tuple of ints, but found element of type %s",
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        int64_t d;
        if (emp_as_int64(v, &d)) return -1;
        dims[i] = emp_dim_value(d);
    }
    *n = (int)len;
    return 0;
}

/* Fills the contracted dims of a and b from the dims argument; 0 or -1. */
static int tensordot_dims(PyObject *dims, const em_tensor *a, int *da, int *db, int *n)
{
    int na, nb;
    if (emp_is_tensor(dims)) { /* a tensor's values read as a Python number or lists */
        PyObject *v = PyObject_CallMethod(dims, em_numel(emp_t(dims)) > 1 ? "tolist" : "item", NULL);
        int r = v ? tensordot_dims(v, a, da, db, n) : -1;
        Py_XDECREF(v);
        return r;
    }
    if (PyLong_Check(dims) && !PyBool_Check(dims)) {
        int64_t d;
        if (emp_as_int64(dims, &d)) return -1;
        if (d < 0) {
            PyErr_Format(PyExc_RuntimeError, "tensordot expects dims >= 0, but got dims=%lld", (long long)d);
            return -1;
        }
        int nd = em_ndim(a);
        if (d > nd) { /* the dim -d of a is out of range */
            PyErr_Format(PyExc_IndexError, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                         -nd, nd - 1, (long long)-d);
            return -1;
        }
        for (int i = 0; i < d; i++) da[i] = (int)(i - d), db[i] = i;
        *n = (int)d;
        return 0;
    }
    if (!PyList_Check(dims) && !PyTuple_Check(dims)) {
        PyErr_Format(PyExc_RuntimeError, "tensordot expects dims to be int or Tuple[List[int], List[int]] or "
                                         "List[List[int]] containing two lists, but got dims=%R", dims);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(dims) != 2) {
        PyErr_Format(PyExc_ValueError, "tensordot expects two lists of dims, got %zd", PySequence_Fast_GET_SIZE(dims));
        return -1;
    }
    if (dim_list(PySequence_Fast_GET_ITEM(dims, 0), da, &na) || dim_list(PySequence_Fast_GET_ITEM(dims, 1), db, &nb))
        return -1;
    if (na != nb) {
        PyErr_Format(PyExc_RuntimeError, "both dimension lists should have same length");
        return -1;
    }
    *n = na;
    return 0;
}

EMP_BIND(tensordot, "tensordot(Tensor a, Tensor b, object dims=2, Tensor? out=None)")
{
    int da[EM_MAX_DIMS], db[EM_MAX_DIMS], n;
    if (tensordot_dims(a->obj[2], a->t[0], da, db, &n)) return NULL;
    return EMP_OUT(3, em_tensordot_dims_out(a->t[3], a->t[0], a->t[1], n, da, db),
               em_tensordot_dims(a->t[0], a->t[1], n, da, db));
}

#define FN(name, ...) EMP_FUNCTION(name),
#define METH(name, ...) EMP_METHOD(name),
#define METH_INPLACE(name, ...) EMP_METHOD(name##_),
PyMethodDef emp_linalg_functions[] = {
    PRODUCTS(FN) ADD_PRODUCTS(FN) EMP_FUNCTION(trace), EMP_FUNCTION(tensordot),
    EMP_FUNCTION(addmv_), /* torch.addmv_ exists too (the only one of the four) */
    {"einsum", (PyCFunction)(void (*)(void))einsum, EMP_FASTCALL, "Einstein summation (PyTorch's torch.einsum)."},
    {NULL},
};
PyMethodDef emp_linalg_methods[] = {PRODUCTS(METH) ADD_PRODUCTS(METH) ADD_PRODUCTS(METH_INPLACE) EMP_METHOD(trace), {NULL}};
