/* Ember's convolutions: N-d convolution (1, 2 or 3 spatial dims) and its
 * transpose, with stride, padding, dilation, groups and an optional bias;
 * their gradients as functions of their own; and im2col / col2im
 * (torch.nn.functional.unfold / fold). PyTorch 1.13's semantics.
 *
 * Conventions (as core.h): results are NEW references (NULL on error, with
 * em_last_error()); tensor arguments are borrowed; a failed call changes
 * nothing. Geometry arrays have one entry per spatial dim (`nd` of them);
 * NULL gives the default (stride 1, padding 0, dilation 1, output_padding 0).
 *
 * Shapes: input (N, C_in, *spatial); weight (C_out, C_in / groups, *kernel)
 * for a convolution and (C_in, C_out / groups, *kernel) for a transposed one;
 * bias (C_out) or NULL. Output spatial size per dim:
 *   convolution: (in + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1
 *   transposed:  (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
 * The em_conv* / em_conv_transpose* forms also take an unbatched input
 * (C_in, *spatial) and then return an unbatched result; em_convolution wants
 * the batch dim (as torch.convolution).
 *
 * Dtypes: float32 and float64 (computed with BLAS), bfloat16 (computed in
 * float32, as PyTorch); input, weight and bias must share a dtype. float16
 * and the integer dtypes are refused (EM_ERR_DTYPE, PyTorch's CPU message
 * for float16; PyTorch computes integer convolutions, Ember does not).
 * Errors use PyTorch's messages: wrong channel counts, kernel larger than the
 * padded input, groups not dividing the channels, negative padding,
 * non-positive stride/dilation/groups, wrong numbers of dims (EM_ERR_SHAPE or
 * EM_ERR_RUNTIME, both RuntimeError in Python; a NULL tensor is EM_ERR_VALUE).
 *
 * Autograd: every function here is differentiable in all its tensors, twice
 * and more: the input gradient of a convolution is a convolution, and the
 * weight gradient (em_convolution_weight_grad) is bilinear in input and
 * grad_output with convolutions as its own gradients. */
#ifndef EMBER_CONV_H
#define EMBER_CONV_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* torch.convolution: nd == weight's dims - 2; `transposed` picks the
 * transposed convolution, for which output_padding (< stride or < dilation
 * per dim) extends the output; output_padding must be 0 otherwise. */
em_tensor *em_convolution(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                          const int64_t *stride, const int64_t *padding, const int64_t *dilation, bool transposed,
                          const int64_t *output_padding, int64_t groups);

/* F.conv1d/2d/3d (nd 1, 2, 3): batched or unbatched input. */
em_tensor *em_conv(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                   const int64_t *stride, const int64_t *padding, const int64_t *dilation, int64_t groups);
/* padding='same': the output has the input's spatial size (stride must be 1,
 * EM_ERR_VALUE otherwise). When dilation * (kernel - 1) is odd the extra zero
 * goes after the input, as PyTorch pads. */
em_tensor *em_conv_same(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                        const int64_t *stride, const int64_t *dilation, int64_t groups);
/* F.conv_transpose1d/2d/3d (nd 1, 2, 3): batched or unbatched input
 * (PyTorch's argument order: output_padding and groups before dilation). */
em_tensor *em_conv_transpose(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                             const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                             int64_t groups, const int64_t *dilation);

/* ---- gradients (what the backward formulas run; usable by hand) ---------- */
/* The gradient w.r.t. the input of em_convolution(input, weight, ...) whose
 * input had `input_sizes` (input_ndim == nd + 2), given grad_output: a
 * convolution of grad_output with `weight` in the other direction. */
em_tensor *em_convolution_input_grad(const em_tensor *grad_output, const em_tensor *weight, int input_ndim,
                                     const int64_t *input_sizes, int nd, const int64_t *stride,
                                     const int64_t *padding, const int64_t *dilation, bool transposed,
                                     int64_t groups);
/* The gradient w.r.t. the weight (whose spatial sizes are kernel_size) of
 * em_convolution(input, weight, ...), given grad_output. */
em_tensor *em_convolution_weight_grad(const em_tensor *input, const em_tensor *grad_output,
                                      const int64_t *kernel_size, int nd, const int64_t *stride,
                                      const int64_t *padding, const int64_t *dilation, bool transposed,
                                      int64_t groups);

/* ---- im2col / col2im (2 spatial dims, as PyTorch) ------------------------- */
/* F.unfold: input (N, C, H, W) or (C, H, W) -> (N, C * kh * kw, L) or
 * (C * kh * kw, L), L the number of block positions. Arrays of 2; NULL
 * dilation/padding/stride give 1/0/1. float32, float64, float16, bfloat16. */
em_tensor *em_im2col(const em_tensor *input, const int64_t *kernel_size, const int64_t *dilation,
                     const int64_t *padding, const int64_t *stride);
/* F.fold, the adjoint of im2col: input (N, C * kh * kw, L) or (C * kh * kw, L)
 * -> (N, C, output_size[0], output_size[1]) (or unbatched), overlapping
 * blocks summed. */
em_tensor *em_col2im(const em_tensor *input, const int64_t *output_size, const int64_t *kernel_size,
                     const int64_t *dilation, const int64_t *padding, const int64_t *stride);

#ifdef __cplusplus
}
#endif
#endif
