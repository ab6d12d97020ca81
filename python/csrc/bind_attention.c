/* Bindings of the attention family (include/ember/attention.h): ember.* functions where
 * torch has them at the top level, the rest in ember._C._nn (as torch 2.x's
 * torch._C._nn.scaled_dot_product_attention). Dropout and the mask
 * conventions of torch's functionals are handled in nn/functional/_attention.py. */
#include "emp.h"
#include <math.h>

#define SCALE(k) (a->has[k] ? a->d[k] : NAN)

EMP_BIND(scaled_dot_product_attention,
         "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
         "bool is_causal=False, *, float? scale=None)")
{
    return emp_wrap(em_scaled_dot_product_attention(a->t[0], a->t[1], a->t[2], a->t[3], a->i[4], SCALE(5)));
}

/* (output, log-sum-exp): what the backward op reads */
EMP_BIND(scaled_dot_product_attention_lse,
         "scaled_dot_product_attention_lse(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
         "bool is_causal=False, *, float? scale=None)")
{
    em_tensor *r[2];
    if (em_scaled_dot_product_attention_lse(a->t[0], a->t[1], a->t[2], a->t[3], a->i[4], SCALE(5), &r[0], &r[1]))
        return emp_raise();
    return emp_wrap_tuple(2, r);
}

EMP_BIND(scaled_dot_product_attention_backward,
         "scaled_dot_product_attention_backward(Tensor grad_out, Tensor? grad_lse, Tensor query, Tensor key, "
         "Tensor value, Tensor out, Tensor lse, Tensor? attn_mask=None, bool is_causal=False, *, float? scale=None)")
{
    em_tensor *r[3];
    if (em_scaled_dot_product_attention_backward(a->t[0], a->t[1], a->t[2], a->t[3], a->t[4], a->t[5], a->t[6],
                                                 a->t[7], a->i[8], SCALE(9), &r[0], &r[1], &r[2]))
        return emp_raise();
    return emp_wrap_tuple(3, r);
}

EMP_BIND(attention_weights,
         "attention_weights(Tensor query, Tensor key, Tensor? attn_mask=None, bool is_causal=False, *, "
         "float? scale=None)")
{
    return emp_wrap(em_attention_weights(a->t[0], a->t[1], a->t[2], a->i[3], SCALE(4)));
}

PyMethodDef emp_attention_functions[] = {
    {NULL},
};

PyMethodDef emp_attention_nn[] = {
    EMP_FUNCTION(scaled_dot_product_attention),
    EMP_FUNCTION(scaled_dot_product_attention_lse),
    EMP_FUNCTION(scaled_dot_product_attention_backward),
    EMP_FUNCTION(attention_weights),
    {NULL},
};
