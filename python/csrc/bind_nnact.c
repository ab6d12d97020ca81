/* Bindings of the nn activation family (include/ember/nnact.h): ember.*
 * functions where torch has them at the top level (threshold, prelu, rrelu,
 * dropout and its variants, embedding, distances, the in-place activations
 * torch.relu_ / selu_ / celu_; softshrink too, like the table's other
 * activations), the rest in ember._C._nn as in torch._C._nn (glu,
 * softshrink, the in-place elu_ / leaky_relu_ / hardtanh_ ...). */
#include "emp.h"

/* ---- activations -------------------------------------------------------------- */
EMP_BIND(threshold, "threshold(Tensor input, Number threshold, Number value, *, Tensor? out=None)")
{
    return EMP_OUT(3, em_threshold_out(a->t[3], a->t[0], a->d[1], a->d[2]), em_threshold(a->t[0], a->d[1], a->d[2]));
}
EMP_BIND(threshold_, "threshold_(Tensor input, Number threshold, Number value)")
{
    return emp_status_self(em_threshold_(a->t[0], a->d[1], a->d[2]), a->obj[0]);
}
EMP_BIND(hardshrink, "hardshrink(Tensor input, Number lambd=0.5, *, Tensor? out=None)")
{
    return EMP_OUT(2, em_hardshrink_out(a->t[2], a->t[0], a->d[1]), em_hardshrink(a->t[0], a->d[1]));
}
EMP_BIND(softshrink, "softshrink(Tensor input, Number lambd=0.5, *, Tensor? out=None)")
{
    return EMP_OUT(2, em_softshrink_out(a->t[2], a->t[0], a->d[1]), em_softshrink(a->t[0], a->d[1]));
}
EMP_BIND(prelu, "prelu(Tensor input, Tensor weight)") { return emp_wrap(em_prelu(a->t[0], a->t[1])); }
EMP_BIND(glu, "glu(Tensor input, int dim=-1)") { return emp_wrap(em_glu(a->t[0], emp_dim(a, 1))); }
EMP_BIND(softsign, "softsign(Tensor input)") { return emp_wrap(em_softsign(a->t[0])); }
EMP_BIND(tanhshrink, "tanhshrink(Tensor input)") { return emp_wrap(em_tanhshrink(a->t[0])); }

/* The generator at param k (NULL: the default one); -1 with a TypeError. */
static int generator_arg(emp_args *a, int k, em_generator **g)
{
    *g = emp_generator_arg(a->obj[k]);
    return !*g && PyErr_Occurred() ? -1 : 0;
}
#define RRELU_SIG(name) #name "(Tensor input, Number lower=0.125, Number upper=0.3333333333333333, bool training=False, object generator=None)"
EMP_BIND(rrelu, RRELU_SIG(rrelu))
{
    em_generator *g;
    if (generator_arg(a, 4, &g)) return NULL;
    return emp_wrap(em_rrelu(a->t[0], a->d[1], a->d[2], a->i[3], g));
}
EMP_BIND(rrelu_, RRELU_SIG(rrelu_))
{
    em_generator *g;
    if (generator_arg(a, 4, &g)) return NULL;
    return emp_status_self(em_rrelu_(a->t[0], a->d[1], a->d[2], a->i[3], g), a->obj[0]);
}

/* In-place forms of the table's activations: name_(input, params). */
#define INPLACE(name, sig, ...)                                                                       \
    EMP_BIND(name##_, #name "_(Tensor input" sig ")")                                                 \
    {                                                                                                 \
        return emp_status_self(em_##name##_(a->t[0] __VA_ARGS__), a->obj[0]);                         \
    }
INPLACE(relu, "")
INPLACE(selu, "")
INPLACE(celu, ", Number alpha=1.0", , a->d[1])
INPLACE(elu, ", Number alpha=1.0", , a->d[1])
INPLACE(leaky_relu, ", Number negative_slope=0.01", , a->d[1])
INPLACE(hardtanh, ", Number min_val=-1, Number max_val=1", , a->d[1], a->d[2])
INPLACE(relu6, "")
INPLACE(silu, "")
INPLACE(mish, "")
INPLACE(hardsigmoid, "")
INPLACE(hardswish, "")

/* ---- dropout ---------------------------------------------------------------------- */
#define DROPOUT(name)                                                                                 \
    EMP_BIND(name, #name "(Tensor input, float p, bool train)")                                       \
    {                                                                                                 \
        return emp_wrap(em_##name(a->t[0], a->d[1], a->i[2], NULL));                                  \
    }                                                                                                 \
    EMP_BIND(name##_, #name "_(Tensor input, float p, bool train)")                                   \
    {                                                                                                 \
        em_tensor *y = em_##name(a->t[0], a->d[1], a->i[2], NULL);                                    \
        em_status st = !y ? em_error_code() : y == a->t[0] ? EM_OK : em_copy_(a->t[0], y);            \
        em_release(y);                                                                                \
        return emp_status_self(st, a->obj[0]);                                                        \
    }
DROPOUT(dropout)
DROPOUT(feature_dropout)
DROPOUT(alpha_dropout)
DROPOUT(feature_alpha_dropout)
/* native_dropout(input, p, train) -> (output, mask); eval: (input, all-true mask) */
EMP_BIND(native_dropout, "native_dropout(Tensor input, float p, bool? train)")
{
    em_tensor *r[2] = {NULL, NULL};
    if (a->has[2] && !a->i[2]) {
        r[0] = em_clone(a->t[0]);
        r[1] = r[0] ? em_ones(em_ndim(a->t[0]), em_sizes(a->t[0]), EM_BOOL) : NULL;
    } else if (em_native_dropout(a->t[0], a->d[1], NULL, &r[0], &r[1])) {
        return emp_raise();
    }
    if (!r[0] || !r[1]) {
        em_release(r[0]);
        return emp_raise();
    }
    return emp_wrap_tuple(2, r);
}

/* ---- embedding ------------------------------------------------------------------------ */
EMP_BIND(embedding, "embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, "
                    "bool sparse=False)")
{
    if (a->i[4]) return PyErr_Format(PyExc_NotImplementedError, "embedding: sparse gradients are not supported by Ember");
    return emp_wrap(em_embedding(a->t[0], a->t[1], a->i[2], a->i[3]));
}
EMP_BIND(embedding_renorm_, "embedding_renorm_(Tensor input, Tensor indices, float max_norm, float norm_type)")
{
    return emp_status_self(em_embedding_renorm_(a->t[0], a->t[1], a->d[2], a->d[3]), a->obj[0]);
}
EMP_BIND(threshold_backward, "threshold_backward(Tensor grad_output, Tensor input, Number threshold)")
{
    return emp_wrap(em_threshold_backward(a->t[0], a->t[1], a->d[2]));
}
EMP_BIND(gelu_backward, "gelu_backward(Tensor grad_output, Tensor input, *, str approximate='none')")
{
    if (strcmp(a->s[2], "none") != 0 && strcmp(a->s[2], "tanh") != 0)
        return PyErr_Format(PyExc_RuntimeError, "approximate argument must be either none or tanh.");
    return emp_wrap(em_gelu_backward(a->t[0], a->t[1], strcmp(a->s[2], "tanh") == 0));
}
EMP_BIND(embedding_dense_backward, "embedding_dense_backward(Tensor grad_output, Tensor indices, int num_weights, "
                                   "int padding_idx, bool scale_grad_by_freq)")
{
    return emp_wrap(em_embedding_dense_backward(a->t[0], a->t[1], a->i[2], a->i[3], a->i[4]));
}

/* embedding_bag(...) -> (output, offset2bag, bag_size, max_indices), as torch's */
EMP_BIND(embedding_bag, "embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
                        "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, "
                        "bool include_last_offset=False, int? padding_idx=None)")
{
    if (a->i[5]) return PyErr_Format(PyExc_NotImplementedError, "embedding_bag: sparse gradients are not supported by Ember");
    em_tensor *r[4];
    if (em_embedding_bag(a->t[0], a->t[1], a->t[2], emp_dim(a, 4), a->has[6] ? a->t[6] : NULL, a->i[7],
                         a->has[8] ? a->i[8] : -1, a->i[3], &r[0], &r[1], &r[2], &r[3]))
        return emp_raise();
    return emp_wrap_tuple(4, r);
}
EMP_BIND(embedding_bag_backward, "embedding_bag_backward(Tensor grad, Tensor indices, Tensor offset2bag, "
                                 "Tensor bag_size, Tensor? per_sample_weights, Tensor? max_indices, int num_weights, "
                                 "int mode, int padding_idx, bool scale_grad_by_freq)")
{
    return emp_wrap(em_embedding_bag_backward(a->t[0], a->t[1], a->t[2], a->t[3], a->has[4] ? a->t[4] : NULL,
                                              a->has[5] ? a->t[5] : NULL, a->i[6], emp_dim(a, 7), a->i[8], a->i[9]));
}
EMP_BIND(pdist, "pdist(Tensor input, float p=2)") { return emp_wrap(em_pdist(a->t[0], a->d[1])); }

/* ---- distances ----------------------------------------------------------------------------- */
EMP_BIND(cosine_similarity, "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08)")
{
    return emp_wrap(em_cosine_similarity(a->t[0], a->t[1], emp_dim(a, 2), a->d[3]));
}
EMP_BIND(pairwise_distance, "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False)")
{
    return emp_wrap(em_pairwise_distance(a->t[0], a->t[1], a->d[2], a->d[3], a->i[4]));
}

PyMethodDef emp_nnact_functions[] = {
    EMP_FUNCTION(threshold), EMP_FUNCTION(threshold_), EMP_FUNCTION(hardshrink), EMP_FUNCTION(softshrink),
    EMP_FUNCTION(prelu),
    EMP_FUNCTION(rrelu), EMP_FUNCTION(rrelu_), EMP_FUNCTION(relu_), EMP_FUNCTION(selu_), EMP_FUNCTION(celu_),
    EMP_FUNCTION(dropout), EMP_FUNCTION(dropout_), EMP_FUNCTION(feature_dropout), EMP_FUNCTION(feature_dropout_),
    EMP_FUNCTION(alpha_dropout), EMP_FUNCTION(alpha_dropout_), EMP_FUNCTION(feature_alpha_dropout),
    EMP_FUNCTION(feature_alpha_dropout_), EMP_FUNCTION(native_dropout), EMP_FUNCTION(embedding),
    EMP_FUNCTION(embedding_renorm_), EMP_FUNCTION(embedding_bag), EMP_FUNCTION(pdist), EMP_FUNCTION(cosine_similarity), EMP_FUNCTION(pairwise_distance),
    {NULL},
};

PyMethodDef emp_nnact_methods[] = {
    EMP_METHOD(hardshrink), EMP_METHOD(prelu),
    {NULL},
};

PyMethodDef emp_nnact_nn[] = {
    EMP_FUNCTION(glu), EMP_FUNCTION(softshrink), EMP_FUNCTION(softsign), EMP_FUNCTION(tanhshrink),
    EMP_FUNCTION(elu_), EMP_FUNCTION(leaky_relu_), EMP_FUNCTION(hardtanh_), EMP_FUNCTION(relu6_),
    EMP_FUNCTION(silu_), EMP_FUNCTION(mish_), EMP_FUNCTION(hardsigmoid_), EMP_FUNCTION(hardswish_),
    EMP_FUNCTION(threshold_backward), EMP_FUNCTION(gelu_backward), EMP_FUNCTION(embedding_dense_backward), EMP_FUNCTION(embedding_bag_backward),
    {NULL},
};
