/* Ember's pooling, padding, upsampling, pixel/channel shuffle: the hand-declared C API of the
 * EM_OP entries in ops/pool.def (op layer in src/nn/pool*.c, pad.c, upsample.c).
 *
 * Shapes: an op over `nd` spatial dims (1, 2 or 3) takes (N, C, *spatial) or, without the
 * batch dim, (C, *spatial), as PyTorch does; results keep the input's form. float32 and
 * float64 (bfloat16 computes through float32); other dtypes fail with EM_ERR_DTYPE.
 * Every function returns a NEW reference (NULL on error: em_last_error() says why; shapes and
 * arguments are checked with PyTorch's messages); tensor arguments are borrowed. */
#ifndef EMBER_POOL_H
#define EMBER_POOL_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pooling window over `nd` spatial dims. Zero-initialise it and set what you need:
 * a stride of 0 means "the kernel size" (PyTorch's stride=None); dilation 0 means 1. */
typedef struct em_pool_params {
    int nd;                      /* 1, 2 or 3 */
    int64_t kernel[3], stride[3], padding[3], dilation[3];
    bool ceil_mode;
    bool count_include_pad;      /* avg_pool: pad cells count in the divisor */
    int64_t divisor_override;    /* avg_pool: 0: none */
} em_pool_params;

/* Max pooling. *indices (when not NULL) receives int64 indices of each maximum in its
 * plane's flattened spatial input (PyTorch's return_indices). Differentiable in x. */
em_tensor *em_max_pool(const em_tensor *x, const em_pool_params *p, em_tensor **indices);
/* Gradient of the max pools (fixed and adaptive): grad (shaped like their output, float) added
 * into zeros of `input_sizes` (ndim dims) at `indices` (int64, grad's shape; flat in each plane
 * of the nd trailing dims). An index outside its plane is an IndexError. Differentiable in grad
 * (its gradient gathers at the indices). */
em_tensor *em_max_pool_backward(const em_tensor *grad, const em_tensor *indices, int nd, int ndim,
                                const int64_t *input_sizes);
/* Average pooling (count_include_pad, divisor_override, ceil_mode as in PyTorch). */
em_tensor *em_avg_pool(const em_tensor *x, const em_pool_params *p);
/* Gradient of avg_pool: grad (shaped like its output) spread over an input of `input_sizes`
 * (ndim dims). Differentiable (its own gradient is avg_pool). */
em_tensor *em_avg_pool_backward(const em_tensor *grad, const em_pool_params *p, int ndim,
                                const int64_t *input_sizes);

/* Adaptive pools: the output has spatial sizes output_size[0..nd); window i of a dim of input
 * size n spans [floor(i*n/o), ceil((i+1)*n/o)). */
em_tensor *em_adaptive_avg_pool(const em_tensor *x, int nd, const int64_t *output_size);
/* Gradient of adaptive_avg_pool over nd spatial dims onto an input of `input_sizes` (ndim dims). */
em_tensor *em_adaptive_avg_pool_backward(const em_tensor *grad, int nd, int ndim, const int64_t *input_sizes);
em_tensor *em_adaptive_max_pool(const em_tensor *x, int nd, const int64_t *output_size, em_tensor **indices);
/* Fractional max pooling (Graham 2014; PyTorch's fractional_max_pool2d/3d): windows of
 * `kernel` (nd = 2 or 3) at pseudo-random steps giving output_size[0..nd), the steps drawn
 * from `samples` (N, C, nd) in [0, 1) of x's dtype (x: (N, C, *) or (C, *) with samples
 * (1, C, nd)). Values and, when indices is not NULL, int64 flat indices as em_max_pool's.
 * RuntimeError when a window would leave the input or samples do not fit. */
em_tensor *em_fractional_max_pool(const em_tensor *x, int nd, const int64_t *kernel, const int64_t *output_size,
                                  const em_tensor *samples, em_tensor **indices);

/* Inverse of max_pool: x's values put at `indices` (int64, x's shape) in zeros of spatial size
 * output_size[0..nd) (NULL: the default (in - 1) * stride - 2 * padding + kernel of p, with p
 * giving kernel/stride/padding). Indices out of range are an error. */
em_tensor *em_max_unpool(const em_tensor *x, const em_tensor *indices, const em_pool_params *p,
                         const int64_t *output_size);

/* ---- padding --------------------------------------------------------------------------- */
typedef enum em_pad_mode { EM_PAD_CONSTANT, EM_PAD_REFLECT, EM_PAD_REPLICATE, EM_PAD_CIRCULAR } em_pad_mode;
/* PyTorch's F.pad: pads[2k], pads[2k+1] pad the last-but-k dim before and after; npad is even
 * and at most 2 * ndim. Constant mode fills `value` and takes negative pads (cropping); the
 * other modes pad the last 1 to 3 dims of a (batched or not) input, as PyTorch allows. */
em_tensor *em_pad(const em_tensor *x, int npad, const int64_t *pads, em_pad_mode mode, double value);
/* Gradient of a reflect/replicate/circular em_pad: grad summed back onto `input_sizes`. */
em_tensor *em_pad_backward(const em_tensor *grad, int npad, const int64_t *pads, em_pad_mode mode, int ndim,
                           const int64_t *input_sizes);

/* ---- upsampling -------------------------------------------------------------------------
 * x is (N, C, *spatial) with nd = ndim - 2 spatial dims (PyTorch's upsample_* need the batch
 * dim). scales (may be NULL; an entry <= 0 means none) are the user's scale factors: when
 * given, the source coordinate uses 1/scale as PyTorch does; else in/out. */
em_tensor *em_upsample_nearest(const em_tensor *x, const int64_t *output_size, const double *scales);
em_tensor *em_upsample_nearest_backward(const em_tensor *grad, int ndim, const int64_t *input_sizes,
                                        const double *scales);
em_tensor *em_upsample_linear(const em_tensor *x, const int64_t *output_size, bool align_corners,
                              const double *scales);
em_tensor *em_upsample_linear_backward(const em_tensor *grad, int ndim, const int64_t *input_sizes,
                                       bool align_corners, const double *scales);
/* Bicubic (cubic convolution with A = -0.75, the 4 taps per dim clamped to the border), as
 * PyTorch's upsample_bicubic2d: x must be 4-D (N, C, H, W), output_size and scales hold 2
 * entries (H, W); any other ndim is EM_ERR_SHAPE. The backward takes ndim = 4 and input_sizes
 * of the forward's input; the two are adjoints and each is the other's gradient. */
em_tensor *em_upsample_bicubic(const em_tensor *x, const int64_t *output_size, bool align_corners,
                               const double *scales);
em_tensor *em_upsample_bicubic_backward(const em_tensor *grad, int ndim, const int64_t *input_sizes,
                                        bool align_corners, const double *scales);

/* ---- grid sampling (spatial transformers) -----------------------------------------------
 * PyTorch's grid_sampler: input (N, C, H, W) with grid (N, Ho, Wo, 2) gives (N, C, Ho, Wo);
 * input (N, C, D, H, W) with grid (N, Do, Ho, Wo, 3) gives (N, C, Do, Ho, Wo). grid[..., 0] is
 * x (the W dim), [1] y (H), [2] z (D), in [-1, 1] across the input (align_corners: -1 and 1
 * are the corner pixels' centres; else their outer edges). float32 / float64, input and grid
 * of one dtype; bicubic is 2-D only. Errors are RuntimeErrors with PyTorch's messages. */
typedef enum em_grid_mode { EM_GRID_BILINEAR, EM_GRID_NEAREST, EM_GRID_BICUBIC } em_grid_mode;
typedef enum em_grid_padding { EM_GRID_ZEROS, EM_GRID_BORDER, EM_GRID_REFLECTION } em_grid_padding;
/* Samples input at grid's points. New reference; differentiable in input and grid (its
 * formula is em_grid_sample_backward). */
em_tensor *em_grid_sample(const em_tensor *input, const em_tensor *grid, em_grid_mode mode,
                          em_grid_padding padding, bool align_corners);
/* Gradients of em_grid_sample: grad (shaped like its output) gives *grad_input (input's shape)
 * and *grad_grid (grid's shape), both new references, computed in one pass (grad_grid is zero
 * in nearest mode). On error both are left NULL. Not differentiable itself: a gradient through
 * it (create_graph) is a NotImplemented error at the second backward, as in PyTorch. */
em_status em_grid_sample_backward(const em_tensor *grad, const em_tensor *input, const em_tensor *grid,
                                  em_grid_mode mode, em_grid_padding padding, bool align_corners,
                                  em_tensor **grad_input, em_tensor **grad_grid);
/* PyTorch's affine_grid_generator: theta (N, 2, 3) and size (N, C, H, W) (nsize 4) give the
 * (N, H, W, 2) grid of theta applied to each output pixel's normalized coordinates; theta
 * (N, 3, 4) and size (N, C, D, H, W) (nsize 5) give (N, D, H, W, 3). A composite of recorded
 * ops (base grid @ theta^T), so it is differentiable in theta. Floating theta only. */
em_tensor *em_affine_grid(const em_tensor *theta, int nsize, const int64_t *size, bool align_corners);

/* ---- shuffles (views and reshapes: differentiable through their parts) ------------------ */
em_tensor *em_pixel_shuffle(const em_tensor *x, int64_t upscale_factor);
em_tensor *em_pixel_unshuffle(const em_tensor *x, int64_t downscale_factor);
em_tensor *em_channel_shuffle(const em_tensor *x, int64_t groups);

#ifdef __cplusplus
}
#endif
#endif
