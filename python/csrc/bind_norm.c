/* Bindings of the norm family (include/ember/norm.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn. The cudnn flags
 * of PyTorch's signatures are accepted and ignored. */
#include "emp.h"

#define T(k) (a->has[k] ? a->t[k] : NULL)

#define BATCH_NORM_ARGS "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
EMP_BIND(batch_norm, "batch_norm(" BATCH_NORM_ARGS "bool training, float momentum, float eps, bool cudnn_enabled)")
{
    return emp_wrap(em_batch_norm(a->t[0], T(1), T(2), T(3), T(4), a->i[5], a->d[6], a->d[7]));
}

EMP_BIND(native_batch_norm, "native_batch_norm(" BATCH_NORM_ARGS "bool training, float momentum, float eps)")
{
    em_tensor *r[3];
    if (em_native_batch_norm(r, a->t[0], T(1), T(2), T(3), T(4), a->i[5], a->d[6], a->d[7])) return emp_raise();
    for (int k = 1; k < 3 && !a->i[5]; k++) { /* PyTorch returns no saved statistics in eval mode: (0,) */
        em_release(r[k]);
        r[k] = em_empty(1, (const int64_t[]){0}, em_dtype_of(r[0]));
    }
    return emp_wrap_tuple(3, r);
}

EMP_BIND(instance_norm,
         "instance_norm(" BATCH_NORM_ARGS "bool use_input_stats, float momentum, float eps, bool cudnn_enabled)")
{
    return emp_wrap(em_instance_norm(a->t[0], T(1), T(2), T(3), T(4), a->i[5], a->d[6], a->d[7]));
}

EMP_BIND(layer_norm, "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
                     "float eps=1e-05, bool cudnn_enable=True)")
{
    return emp_wrap(em_layer_norm(a->t[0], a->nlist[1], a->list[1], T(2), T(3), a->d[4]));
}

EMP_BIND(native_layer_norm,
         "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps)")
{
    em_tensor *r[3];
    if (em_native_layer_norm(r, a->t[0], a->nlist[1], a->list[1], T(2), T(3), a->d[4])) return emp_raise();
    return emp_wrap_tuple(3, r);
}

EMP_BIND(group_norm, "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
                     "float eps=1e-05, bool cudnn_enabled=True)")
{
    return emp_wrap(em_group_norm(a->t[0], a->i[1], T(2), T(3), a->d[4]));
}

/* N, C and HxW restate the input's shape (PyTorch's signature); group and eps matter. */
EMP_BIND(native_group_norm, "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, int N, int C, int HxW, "
                            "int group, float eps)")
{
    em_tensor *r[3];
    if (em_native_group_norm(r, a->t[0], a->i[6], T(1), T(2), a->d[7])) return emp_raise();
    return emp_wrap_tuple(3, r);
}

EMP_BIND(local_response_norm,
         "local_response_norm(Tensor input, int size, float alpha=0.0001, float beta=0.75, float k=1.0)")
{
    return emp_wrap(em_local_response_norm(a->t[0], a->i[1], a->d[2], a->d[3], a->d[4]));
}

/* The backward ops (Ember's own names; PyTorch keeps its native_*_backward
 * out of the torch namespace): a tuple of three gradients, None where
 * output_mask is 0. */
static PyObject *backward_result(em_status st, em_tensor **g)
{
    return st ? emp_raise() : emp_wrap_tuple(3, g);
}
static void mask_of(emp_args *a, int k, bool *mask)
{
    for (int j = 0; j < 3; j++) mask[j] = a->list[k][j] != 0;
}

EMP_BIND(batch_norm_backward, "batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor save_mean, "
                              "Tensor save_invstd, bool train, int[3] output_mask=1)")
{
    em_tensor *g[3];
    bool mask[3];
    mask_of(a, 6, mask);
    return backward_result(em_batch_norm_backward(g, mask, a->t[0], a->t[1], T(2), a->t[3], a->t[4], a->i[5]), g);
}

EMP_BIND(layer_norm_backward, "layer_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, "
                              "Tensor mean, Tensor rstd, Tensor? weight, int[3] output_mask=1)")
{
    em_tensor *g[3];
    bool mask[3];
    mask_of(a, 6, mask);
    return backward_result(em_layer_norm_backward(g, mask, a->t[0], a->t[1], a->nlist[2], a->list[2], a->t[3],
                                                  a->t[4], T(5)), g);
}

EMP_BIND(group_norm_backward, "group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
                              "Tensor? weight, int group, int[3] output_mask=1)")
{
    em_tensor *g[3];
    bool mask[3];
    mask_of(a, 6, mask);
    return backward_result(em_group_norm_backward(g, mask, a->t[0], a->t[1], a->t[2], a->t[3], T(4), a->i[5]), g);
}

PyMethodDef emp_norm_functions[] = {
    EMP_FUNCTION(batch_norm), EMP_FUNCTION(native_batch_norm), EMP_FUNCTION(instance_norm),
    EMP_FUNCTION(layer_norm), EMP_FUNCTION(native_layer_norm), EMP_FUNCTION(group_norm),
    EMP_FUNCTION(native_group_norm), EMP_FUNCTION(batch_norm_backward), EMP_FUNCTION(layer_norm_backward),
    EMP_FUNCTION(group_norm_backward),
    /* not in torch's namespace (F.local_response_norm is), but reachable like every table op */
    EMP_FUNCTION(local_response_norm), {NULL},
};

PyMethodDef emp_norm_nn[] = {
    {NULL},
};
