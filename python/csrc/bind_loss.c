/* Bindings of the loss family (include/ember/loss.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. Reductions come
 * as PyTorch's enum ints (0 none, 1 mean, 2 sum), as torch._C._nn takes them. */
#include "emp.h"

#define OPT(k) (a->has[k] ? a->t[k] : NULL)

#define REGRESSION_BIND(name)                                                          \
    EMP_BIND(name, #name "(Tensor input, Tensor target, int reduction=1)")               \
    {                                                                                  \
        return emp_wrap(em_##name(a->t[0], a->t[1], (em_reduction)a->i[2]));           \
    }
REGRESSION_BIND(mse_loss)
REGRESSION_BIND(l1_loss)

EMP_BIND(smooth_l1_loss, "smooth_l1_loss(Tensor input, Tensor target, int reduction=1, float beta=1.0)")
{
    return emp_wrap(em_smooth_l1_loss(a->t[0], a->t[1], (em_reduction)a->i[2], a->d[3]));
}
EMP_BIND(huber_loss, "huber_loss(Tensor input, Tensor target, int reduction=1, float delta=1.0)")
{
    return emp_wrap(em_huber_loss(a->t[0], a->t[1], (em_reduction)a->i[2], a->d[3]));
}
EMP_BIND(binary_cross_entropy,
         "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, int reduction=1)")
{
    return emp_wrap(em_binary_cross_entropy(a->t[0], a->t[1], OPT(2), (em_reduction)a->i[3]));
}
EMP_BIND(binary_cross_entropy_with_logits,
         "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, "
         "Tensor? pos_weight=None, int reduction=1)")
{
    return emp_wrap(em_binary_cross_entropy_with_logits(a->t[0], a->t[1], OPT(2), OPT(3), (em_reduction)a->i[4]));
}

/* nll_loss, nll_loss_nd and nll_loss2d: one op for every rank */
EMP_BIND(nll_loss, "nll_loss(Tensor input, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100)")
{
    return emp_wrap(em_nll_loss(a->t[0], a->t[1], OPT(2), (em_reduction)a->i[3], a->i[4]));
}

/* Class-index targets without label smoothing run the fused op; probability
 * targets and label smoothing are composites written in Python
 * (ember.nn.functional.cross_entropy), which this forwards to. */
EMP_BIND(cross_entropy_loss, "cross_entropy_loss(Tensor input, Tensor target, Tensor? weight=None, int reduction=1, "
                             "int ignore_index=-100, float label_smoothing=0.0)")
{
    if (em_dtype_is_float(em_dtype_of(a->t[1])) || a->d[5] != 0) {
        static const char *const names[] = {"none", "mean", "sum"};
        if (a->i[3] < 0 || a->i[3] > 2) return PyErr_Format(PyExc_ValueError, "%lld is not a valid value for reduction",
                                                            (long long)a->i[3]);
        PyObject *F = PyImport_ImportModule("ember.nn.functional");
        PyObject *r = F ? PyObject_CallMethod(F, "cross_entropy", "OOOOiOsd", a->obj[0], a->obj[1],
                                              a->has[2] ? a->obj[2] : Py_None, Py_None, emp_dim(a, 4), Py_None,
                                              names[a->i[3]], a->d[5])
                        : NULL;
        Py_XDECREF(F);
        return r;
    }
    return emp_wrap(em_cross_entropy(a->t[0], a->t[1], OPT(2), (em_reduction)a->i[3], a->i[4]));
}

/* A lengths argument: a tensor, or a sequence of ints (a new reference). */
static em_tensor *lengths_arg(PyObject *o)
{
    if (emp_is_tensor(o)) return em_retain(emp_t(o));
    return emp_tensor_from_object(o, EM_I64);
}

EMP_BIND(ctc_loss, "ctc_loss(Tensor log_probs, Tensor targets, object input_lengths, object target_lengths, "
                   "int blank=0, int reduction=1, bool zero_infinity=False)")
{
    em_tensor *il = lengths_arg(a->obj[2]), *tl = il ? lengths_arg(a->obj[3]) : NULL;
    if (!tl) {
        em_release(il);
        return NULL;
    }
    em_tensor *r = em_ctc_loss(a->t[0], a->t[1], il, tl, a->i[4], (em_reduction)a->i[5], a->i[6]);
    em_release(il);
    em_release(tl);
    return emp_wrap(r);
}

/* The fused op and the backward ops as the C API has them (for programs
 * that write their own backward; the functionals never need them). */
EMP_BIND(cross_entropy, "cross_entropy(Tensor input, Tensor target, Tensor? weight=None, int reduction=1, "
                        "int ignore_index=-100)")
{
    return emp_wrap(em_cross_entropy(a->t[0], a->t[1], OPT(2), (em_reduction)a->i[3], a->i[4]));
}
EMP_BIND(nll_loss_backward, "nll_loss_backward(Tensor grad_output, Tensor input, Tensor target, Tensor? weight, "
                            "int reduction, int ignore_index, Tensor total_weight)")
{
    return emp_wrap(em_nll_loss_backward(a->t[0], a->t[1], a->t[2], OPT(3), (em_reduction)a->i[4], a->i[5], a->t[6]));
}
EMP_BIND(cross_entropy_backward, "cross_entropy_backward(Tensor grad_output, Tensor input, Tensor target, "
                                 "Tensor? weight, int reduction, int ignore_index, Tensor lse, Tensor total_weight)")
{
    return emp_wrap(em_cross_entropy_backward(a->t[0], a->t[1], a->t[2], OPT(3), (em_reduction)a->i[4], a->i[5],
                                              a->t[6], a->t[7]));
}
EMP_BIND(ctc_loss_backward, "ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, Tensor lengths, "
                            "Tensor nll, Tensor log_alpha, int blank, bool zero_infinity)")
{
    return emp_wrap(em_ctc_loss_backward(a->t[0], a->t[1], a->t[2], a->t[3], a->t[4], a->t[5], a->i[6], a->i[7]));
}

PyMethodDef emp_loss_functions[] = {
    EMP_FUNCTION(binary_cross_entropy_with_logits),
    EMP_FUNCTION(ctc_loss),
    {NULL},
};

PyMethodDef emp_loss_nn[] = {
    EMP_FUNCTION(mse_loss),
    EMP_FUNCTION(l1_loss),
    EMP_FUNCTION(smooth_l1_loss),
    EMP_FUNCTION(huber_loss),
    EMP_FUNCTION(binary_cross_entropy),
    EMP_FUNCTION(nll_loss),
    EMP_FUNCTION_AS("nll_loss_nd", nll_loss),
    EMP_FUNCTION_AS("nll_loss2d", nll_loss),
    EMP_FUNCTION(cross_entropy_loss),
    EMP_FUNCTION(cross_entropy),
    EMP_FUNCTION(nll_loss_backward),
    EMP_FUNCTION(cross_entropy_backward),
    EMP_FUNCTION(ctc_loss_backward),
    {NULL},
};
