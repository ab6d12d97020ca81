/* The functional forms of the convolutions (F.conv1d/2d/3d,
 * F.conv_transpose1d/2d/3d, padding='same'): unbatched inputs and 'same'
 * padding as recorded views around em_convolution (conv.c). */
#include "../ops/dispatch.h"
#include "window.h"

typedef struct conv_call {
    const int64_t *stride, *padding, *dilation, *output_padding;
    int64_t groups;
    bool transposed;
} conv_call;

/* em_convolution in PyTorch 1.13's CPU layout: conv2d (not transposed) gives
 * channels_last when its input or weight is (Note [Memory formats]). */
static em_tensor *convolution(const em_tensor *x, const em_tensor *weight, const em_tensor *bias, int nd,
                              const conv_call *a)
{
    em_tensor *r = em_convolution(x, weight, bias, nd, a->stride, a->padding, a->dilation, a->transposed,
                                  a->output_padding, a->groups);
    bool cl = nd == 2 && !a->transposed && (em_suggest_memory_format(x) == EM_CHANNELS_LAST ||
                                            em_suggest_memory_format(weight) == EM_CHANNELS_LAST);
    return cl ? em_in_format(r, EM_CHANNELS_LAST) : r;
}

/* em_convolution on a batched or unbatched input (unsqueezed, and the
 * result squeezed back, as recorded views). */
static em_tensor *batched(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                          const conv_call *a, const char *name)
{
    if (!input || !weight) return em_error(EM_ERR_VALUE, "%s: input and weight must not be NULL", name);
    if (input->ndim != nd + 1 && input->ndim != nd + 2)
        return em_error(EM_ERR_SHAPE, "Expected %dD (unbatched) or %dD (batched) input to %s%dd, but got input of "
                        "size: %s", nd + 1, nd + 2, name, nd, em_shape_str(input->ndim, input->sizes));
    if (input->ndim == nd + 2) return convolution(input, weight, bias, nd, a);
    em_tensor *x = em_unsqueeze(input, 0);
    em_tensor *y = x ? convolution(x, weight, bias, nd, a) : NULL;
    em_tensor *r = y ? em_squeeze_dim(y, 0) : NULL;
    em_release(x);
    em_release(y);
    return r;
}

em_tensor *em_conv(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                   const int64_t *stride, const int64_t *padding, const int64_t *dilation, int64_t groups)
{
    const conv_call a = {stride, padding, dilation, NULL, groups, false};
    return batched(input, weight, bias, nd, &a, "conv");
}

em_tensor *em_conv_transpose(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                             const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                             int64_t groups, const int64_t *dilation)
{
    const conv_call a = {stride, padding, dilation, output_padding, groups, true};
    return batched(input, weight, bias, nd, &a, "conv_transpose");
}

/* 'same': total padding dilation * (kernel - 1) per dim, half before the
 * input and the rest after (PyTorch pads the odd one after). Ember pads the
 * larger half on both sides, which gives one extra output at the start of
 * such a dim, and drops it (a recorded narrow): the same values without a
 * padded copy of the input. */
em_tensor *em_conv_same(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                        const int64_t *stride, const int64_t *dilation, int64_t groups)
{
    if (nd < 1 || nd > 3) return em_error(EM_ERR_VALUE, "conv: expected 1 to 3 spatial dims, got %d", nd);
    for (int d = 0; d < nd && stride; d++)
        if (stride[d] != 1) return em_error(EM_ERR_RUNTIME, "padding='same' is not supported for strided convolutions");
    if (!input || !weight || weight->ndim != nd + 2) /* let em_conv report it */
        return em_conv(input, weight, bias, nd, stride, NULL, dilation, groups);
    int64_t pad[3];
    bool odd[3];
    for (int d = 0; d < nd; d++) {
        const int64_t dil = dilation ? dilation[d] : 1;
        int64_t total;
        if (dil <= 0) return em_conv(input, weight, bias, nd, stride, NULL, dilation, groups); /* it reports */
        if (!em_window_span(weight->sizes[2 + d], dil, &total)) return em_window_overflow("conv"), NULL;
        total -= 1;
        pad[d] = total - total / 2;
        odd[d] = total % 2 != 0;
    }
    em_tensor *y = em_conv(input, weight, bias, nd, stride, pad, dilation, groups);
    for (int d = 0; d < nd && y; d++) {
        if (!odd[d]) continue;
        const int dim = y->ndim - nd + d;
        em_tensor *v = em_narrow(y, dim, 1, y->sizes[dim] - 1);
        em_release(y);
        y = v;
    }
    return y;
}
