/* Bindings of the conv family (include/ember/conv.h): ember.conv1d/2d/3d,
 * conv_transpose1d/2d/3d and convolution (torch has them at the top level),
 * and ember._C._nn.im2col / col2im (F.unfold / F.fold). */
#include "emp.h"

/* A geometry argument of nd values: a single value is repeated (PyTorch's
 * expand_param_if_needed); another length is PyTorch's RuntimeError. 0 or -1. */
static int geometry_arg(emp_args *a, int k, int nd, const char *name, int64_t *out)
{
    const int n = a->nlist[k];
    if (n != 1 && n != nd) {
        char buf[256];
        int len = snprintf(buf, sizeof buf, "[");
        for (int j = 0; j < n && len < (int)sizeof buf; j++)
            len += snprintf(buf + len, sizeof buf - (size_t)len, j ? ", %lld" : "%lld", (long long)a->list[k][j]);
        PyErr_Format(PyExc_RuntimeError, "expected %s to be a single integer value or a list of %d values to match "
                     "the convolution dimensions, but got %s=%s]", name, nd, name, buf);
        return -1;
    }
    for (int d = 0; d < nd; d++) out[d] = a->list[k][n == 1 ? 0 : d];
    return 0;
}

static PyObject *conv_nd(emp_args *a, int nd)
{
    int64_t stride[3], padding[3], dilation[3];
    if (geometry_arg(a, 3, nd, "stride", stride) || geometry_arg(a, 5, nd, "dilation", dilation)) return NULL;
    const em_tensor *bias = a->has[2] ? a->t[2] : NULL;
    if (a->sig == 0) {
        if (geometry_arg(a, 4, nd, "padding", padding)) return NULL;
        return emp_wrap(em_conv(a->t[0], a->t[1], bias, nd, stride, padding, dilation, a->i[6]));
    }
    if (!strcmp(a->s[4], "same")) return emp_wrap(em_conv_same(a->t[0], a->t[1], bias, nd, stride, dilation, a->i[6]));
    if (strcmp(a->s[4], "valid")) {
        PyErr_Format(PyExc_RuntimeError, "Invalid padding string: '%s'", a->s[4]);
        return NULL;
    }
    return emp_wrap(em_conv(a->t[0], a->t[1], bias, nd, stride, NULL, dilation, a->i[6]));
}

static PyObject *conv_transpose_nd(emp_args *a, int nd)
{
    int64_t stride[3], padding[3], output_padding[3], dilation[3];
    if (geometry_arg(a, 3, nd, "stride", stride) || geometry_arg(a, 4, nd, "padding", padding) ||
        geometry_arg(a, 5, nd, "output_padding", output_padding) || geometry_arg(a, 7, nd, "dilation", dilation))
        return NULL;
    return emp_wrap(em_conv_transpose(a->t[0], a->t[1], a->has[2] ? a->t[2] : NULL, nd, stride, padding,
                                      output_padding, a->i[6], dilation));
}

#define CONV_SIGS(N)                                                                                               \
    "conv" #N "d(Tensor input, Tensor weight, Tensor? bias=None, int[" #N "] stride=1, int[" #N "] padding=0, "     \
    "int[" #N "] dilation=1, int groups=1)",                                                                         \
        "conv" #N "d(Tensor input, Tensor weight, Tensor? bias=None, int[" #N "] stride=1, str padding=\"valid\", " \
        "int[" #N "] dilation=1, int groups=1)"
#define CONV_TRANSPOSE_SIG(N)                                                                                 \
    "conv_transpose" #N "d(Tensor input, Tensor weight, Tensor? bias=None, int[" #N "] stride=1, int[" #N     \
    "] padding=0, int[" #N "] output_padding=0, int groups=1, int[" #N "] dilation=1)"

EMP_BIND(conv1d, CONV_SIGS(1)) { return conv_nd(a, 1); }
EMP_BIND(conv2d, CONV_SIGS(2)) { return conv_nd(a, 2); }
EMP_BIND(conv3d, CONV_SIGS(3)) { return conv_nd(a, 3); }
EMP_BIND(conv_transpose1d, CONV_TRANSPOSE_SIG(1)) { return conv_transpose_nd(a, 1); }
EMP_BIND(conv_transpose2d, CONV_TRANSPOSE_SIG(2)) { return conv_transpose_nd(a, 2); }
EMP_BIND(conv_transpose3d, CONV_TRANSPOSE_SIG(3)) { return conv_transpose_nd(a, 3); }

EMP_BIND(convolution, "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
                      "int[] dilation, bool transposed, int[] output_padding, int groups)")
{
    int64_t stride[3], padding[3], dilation[3], output_padding[3];
    const int nd = em_ndim(a->t[1]) - 2;
    if (nd < 1 || nd > 3) { /* let the C layer word it */
        const int64_t one[1] = {1};
        return emp_wrap(em_convolution(a->t[0], a->t[1], NULL, nd < 1 ? 1 : 3, one, one, one, false, NULL, 1));
    }
    if (geometry_arg(a, 3, nd, "stride", stride) || geometry_arg(a, 4, nd, "padding", padding) ||
        geometry_arg(a, 5, nd, "dilation", dilation) || geometry_arg(a, 7, nd, "output_padding", output_padding))
        return NULL;
    return emp_wrap(em_convolution(a->t[0], a->t[1], a->has[2] ? a->t[2] : NULL, nd, stride, padding, dilation,
                                   a->i[6] != 0, output_padding, a->i[8]));
}

/* The gradient functions (what the backward formulas run), in ember._C._nn:
 * nd is the kernel's / the input's dims - 2. */
EMP_BIND(convolution_weight_grad, "convolution_weight_grad(Tensor input, Tensor grad_output, int[] kernel_size, "
                                  "int[] stride, int[] padding, int[] dilation, bool transposed, int groups)")
{
    int64_t k[3], stride[3], padding[3], dilation[3];
    const int nd = a->nlist[2];
    if (nd < 1 || nd > 3) {
        PyErr_Format(PyExc_RuntimeError, "convolution_weight_grad: expected 1 to 3 kernel sizes, got %d", nd);
        return NULL;
    }
    if (geometry_arg(a, 2, nd, "kernel_size", k) || geometry_arg(a, 3, nd, "stride", stride) ||
        geometry_arg(a, 4, nd, "padding", padding) || geometry_arg(a, 5, nd, "dilation", dilation))
        return NULL;
    return emp_wrap(em_convolution_weight_grad(a->t[0], a->t[1], k, nd, stride, padding, dilation, a->i[6] != 0,
                                               a->i[7]));
}

EMP_BIND(convolution_input_grad, "convolution_input_grad(Tensor grad_output, Tensor weight, int[] input_size, "
                                 "int[] stride, int[] padding, int[] dilation, bool transposed, int groups)")
{
    int64_t stride[3], padding[3], dilation[3];
    const int nd = a->nlist[2] - 2;
    if (nd < 1 || nd > 3) {
        PyErr_Format(PyExc_RuntimeError, "convolution_input_grad: expected an input_size of 3 to 5 sizes, got %d",
                     a->nlist[2]);
        return NULL;
    }
    if (geometry_arg(a, 3, nd, "stride", stride) || geometry_arg(a, 4, nd, "padding", padding) ||
        geometry_arg(a, 5, nd, "dilation", dilation))
        return NULL;
    return emp_wrap(em_convolution_input_grad(a->t[0], a->t[1], nd + 2, a->list[2], nd, stride, padding, dilation,
                                              a->i[6] != 0, a->i[7]));
}

/* torch._C._nn.im2col / col2im: every geometry list has exactly 2 values. */
static int pair_arg(emp_args *a, int k, const char *name, int64_t *out)
{
    if (a->nlist[k] != 2) {
        PyErr_Format(PyExc_RuntimeError, "It is expected %s equals to 2, but got size %d", name, a->nlist[k]);
        return -1;
    }
    out[0] = a->list[k][0], out[1] = a->list[k][1];
    return 0;
}

EMP_BIND(im2col, "im2col(Tensor input, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride)")
{
    int64_t k[2], d[2], p[2], s[2];
    if (pair_arg(a, 1, "kernel_size", k) || pair_arg(a, 2, "dilation", d) || pair_arg(a, 3, "padding", p) ||
        pair_arg(a, 4, "stride", s))
        return NULL;
    return emp_wrap(em_im2col(a->t[0], k, d, p, s));
}

EMP_BIND(col2im, "col2im(Tensor input, int[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
                 "int[2] stride)")
{
    int64_t o[2], k[2], d[2], p[2], s[2];
    if (pair_arg(a, 1, "output_size", o) || pair_arg(a, 2, "kernel_size", k) || pair_arg(a, 3, "dilation", d) ||
        pair_arg(a, 4, "padding", p) || pair_arg(a, 5, "stride", s))
        return NULL;
    return emp_wrap(em_col2im(a->t[0], o, k, d, p, s));
}

PyMethodDef emp_conv_functions[] = {
    EMP_FUNCTION(conv1d),           EMP_FUNCTION(conv2d),           EMP_FUNCTION(conv3d),
    EMP_FUNCTION(conv_transpose1d), EMP_FUNCTION(conv_transpose2d), EMP_FUNCTION(conv_transpose3d),
    EMP_FUNCTION(convolution),      {NULL},
};

PyMethodDef emp_conv_nn[] = {
    EMP_FUNCTION(convolution_weight_grad),
    EMP_FUNCTION(convolution_input_grad),
    EMP_FUNCTION(im2col),
    EMP_FUNCTION(col2im),
    {NULL},
};
