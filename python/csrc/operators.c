/* The Tensor's operators: Python's number protocol and comparisons, each a
 * direct call of the C op (no argument parser: this is the hottest path).
 * A Python number on either side becomes a wrapped number, weak in type
 * promotion as in PyTorch; anything else gives NotImplemented so Python can
 * try the other operand. */
#include "emp.h"

/* Both operands as tensors (new refs in *ta, *tb); 0 when one is not a tensor or number. */
static int operands(PyObject *a, PyObject *b, em_tensor **ta, em_tensor **tb)
{
    *ta = emp_is_tensor(a) ? em_retain(emp_t(a)) : emp_number_tensor(a);
    if (!*ta) return 0;
    *tb = emp_is_tensor(b) ? em_retain(emp_t(b)) : emp_number_tensor(b);
    if (!*tb) {
        em_release(*ta);
        return 0;
    }
    return 1;
}

typedef em_tensor *(*binary_fn)(const em_tensor *, const em_tensor *);
typedef em_status (*inplace_fn)(em_tensor *, const em_tensor *);

static PyObject *binary(PyObject *a, PyObject *b, binary_fn f)
{
    em_tensor *ta, *tb;
    if (!operands(a, b, &ta, &tb)) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    em_tensor *r = f(ta, tb);
    em_release(ta);
    em_release(tb);
    return emp_wrap(r);
}

static PyObject *inplace(PyObject *self, PyObject *b, inplace_fn f)
{
    em_tensor *tb = emp_is_tensor(b) ? em_retain(emp_t(b)) : emp_number_tensor(b);
    if (!tb) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    em_status st = f(emp_t(self), tb);
    em_release(tb);
    return emp_status_self(st, self);
}

/* add/sub carry alpha; the operators use alpha = 1. */
static em_tensor *add1(const em_tensor *a, const em_tensor *b) { return em_add(a, b, 1.0); }
static em_tensor *sub1(const em_tensor *a, const em_tensor *b) { return em_sub(a, b, 1.0); }
static em_status add1_(em_tensor *a, const em_tensor *b) { return em_add_(a, b, 1.0); }
static em_status sub1_(em_tensor *a, const em_tensor *b) { return em_sub_(a, b, 1.0); }

#define OPERATOR(slot, f)                                                              \
    static PyObject *nb_##slot(PyObject *a, PyObject *b) { return binary(a, b, f); }
#define INPLACE_OPERATOR(slot, f)                                                      \
    static PyObject *nb_inplace_##slot(PyObject *a, PyObject *b) { return inplace(a, b, f); }
#define OPERATORS(X)                                                                   \
    X(add, add1, add1_) X(subtract, sub1, sub1_) X(multiply, em_mul, em_mul_)          \
    X(true_divide, em_div, em_div_) X(floor_divide, em_div_floor, em_div_floor_)       \
    X(remainder, em_remainder, em_remainder_) X(and, em_bitwise_and, em_bitwise_and_)  \
    X(or, em_bitwise_or, em_bitwise_or_) X(xor, em_bitwise_xor, em_bitwise_xor_)       \
    X(lshift, em_bitwise_left_shift, em_bitwise_left_shift_)                           \
    X(rshift, em_bitwise_right_shift, em_bitwise_right_shift_)
#define DEFINE(slot, f, f_) OPERATOR(slot, f)
OPERATORS(DEFINE)
#undef DEFINE
#define DEFINE(slot, f, f_) INPLACE_OPERATOR(slot, f_)
OPERATORS(DEFINE)
#undef DEFINE

OPERATOR(matrix_multiply, em_matmul) /* PyTorch has no in-place @= either */

static PyObject *nb_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return binary(a, b, em_pow);
}
static PyObject *nb_inplace_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    return inplace(a, b, em_pow_);
}

static PyObject *nb_negative(PyObject *a) { return emp_wrap(em_neg(emp_t(a))); }
static PyObject *nb_positive(PyObject *a) { return emp_wrap(em_positive(emp_t(a))); }
static PyObject *nb_absolute(PyObject *a) { return emp_wrap(em_abs(emp_t(a))); }
static PyObject *nb_invert(PyObject *a)
{
    em_tensor *t = emp_t(a);
    if (em_dtype_is_float(em_dtype_of(t)))
        return PyErr_Format(PyExc_TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
    return emp_wrap(em_bitwise_not(t));
}

PyNumberMethods emp_tensor_as_number = {
#define SLOT(slot, f, f_) .nb_##slot = nb_##slot, .nb_inplace_##slot = nb_inplace_##slot,
    OPERATORS(SLOT)
#undef SLOT
    .nb_matrix_multiply = nb_matrix_multiply,
    .nb_power = nb_power,
    .nb_inplace_power = nb_inplace_power,
    .nb_negative = nb_negative,
    .nb_positive = nb_positive,
    .nb_absolute = nb_absolute,
    .nb_invert = nb_invert,
};

PyObject *emp_tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    static const binary_fn compare[] = {
        [Py_LT] = em_lt, [Py_LE] = em_le, [Py_EQ] = em_eq, [Py_NE] = em_ne, [Py_GT] = em_gt, [Py_GE] = em_ge,
    };
    return binary(a, b, compare[op]);
}
