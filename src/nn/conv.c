/* The op layer of the convolutions (include/ember/conv.h): PyTorch's
 * argument checks and messages, output shapes, and the dispatch of the two
 * ops, convolution and convolution_weight_grad (kernels in src/cpu/conv.c).
 * The batched/unbatched and padding='same' forms are in conv_forms.c. */
#include "../ops/autocast.h"
#include "../ops/dispatch.h"
#include "conv_params.h"
#include "window.h"
#include <limits.h>
#include <stdio.h>

/* ---- messages ---------------------------------------------------------------- */
/* PyTorch's legacy tensor type names (quoted by its dtype-mismatch message). */
static const char *tensor_type_name(em_dtype dt)
{
    static const char *const names[EM_DTYPE_COUNT] = {
        [EM_U8] = "torch.ByteTensor",   [EM_I8] = "torch.CharTensor",   [EM_I16] = "torch.ShortTensor",
        [EM_I32] = "torch.IntTensor",   [EM_I64] = "torch.LongTensor",  [EM_F16] = "torch.HalfTensor",
        [EM_F32] = "torch.FloatTensor", [EM_F64] = "torch.DoubleTensor", [EM_BOOL] = "torch.BoolTensor",
        [EM_BF16] = "CPUBFloat16Type", [EM_C32] = "CPUComplexHalfType", [EM_C64] = "CPUComplexFloatType",
        [EM_C128] = "CPUComplexDoubleType",
    };
    return names[dt];
}

static const char *c_type_name(em_dtype dt)
{
    static const char *const names[EM_DTYPE_COUNT] = {
        [EM_U8] = "unsigned char", [EM_I8] = "signed char", [EM_I16] = "short int", [EM_I32] = "int",
        [EM_I64] = "long int",     [EM_F16] = "c10::Half",  [EM_F32] = "float",     [EM_F64] = "double",
        [EM_BOOL] = "bool",        [EM_BF16] = "c10::BFloat16", [EM_C32] = "c10::complex<c10::Half>",
        [EM_C64] = "c10::complex<float>", [EM_C128] = "c10::complex<double>",
    };
    return names[dt];
}

/* "2 x 3" into buf (PyTorch's per-channel size format). */
static const char *x_list(int nd, const int64_t *v, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int d = 0; d < nd && len < cap; d++)
        len += (size_t)snprintf(buf + len, cap - len, d ? " x %lld" : "%lld", (long long)v[d]);
    return buf;
}

/* "[1, 2]" into buf */
static const char *bracket_list(int nd, const int64_t *v, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < nd && len < cap; d++) len += (size_t)snprintf(buf + len, cap - len, d ? ", %lld" : "%lld", (long long)v[d]);
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

/* ---- params ------------------------------------------------------------------ */
/* Fills p from the caller's arrays (NULL: defaults) after checking them. */
static em_status make_params(em_conv_params *p, int nd, const int64_t *stride, const int64_t *padding,
                             const int64_t *dilation, bool transposed, const int64_t *output_padding, int64_t groups)
{
    *p = (em_conv_params){.nd = nd, .transposed = transposed, .groups = groups};
    for (int d = 0; d < nd; d++) {
        p->stride[d] = stride ? stride[d] : 1;
        p->padding[d] = padding ? padding[d] : 0;
        p->dilation[d] = dilation ? dilation[d] : 1;
        p->extra[d] = output_padding ? output_padding[d] : 0;
    }
    for (int d = 0; d < nd; d++) {
        if (p->padding[d] < 0) return em_fail(EM_ERR_RUNTIME, "negative padding is not supported");
        if (p->extra[d] < 0) return em_fail(EM_ERR_RUNTIME, "negative output_padding is not supported");
        if (p->stride[d] <= 0) return em_fail(EM_ERR_RUNTIME, "non-positive stride is not supported");
        if (p->dilation[d] <= 0) return em_fail(EM_ERR_RUNTIME, "non-positive dilation is not supported");
    }
    if (groups <= 0) return em_fail(EM_ERR_RUNTIME, "non-positive groups is not supported");
    return EM_OK;
}

/* Ember packs the geometry into 21-bit fields (conv_params.h). */
static em_status check_fields(const em_conv_params *p, const int64_t *kernel)
{
    for (int d = 0; d < p->nd; d++) {
        const int64_t v[] = {p->stride[d], p->padding[d], p->dilation[d], p->extra[d], kernel ? kernel[d] : 0};
        for (size_t j = 0; j < sizeof v / sizeof *v; j++)
            if (v[j] > EM_CONV_FIELD_MAX)
                return em_fail(EM_ERR_RUNTIME, "convolution: a stride, padding, dilation or kernel size of %lld is "
                               "beyond Ember's limit of %lld", (long long)v[j], (long long)EM_CONV_FIELD_MAX);
    }
    return EM_OK;
}

/* ---- checks ---------------------------------------------------------------------- */
/* PyTorch's kernel name in its "not implemented for 'Half'" message. */
static const char *cpu_kernel_name(const em_conv_params *p)
{
    if (p->transposed) return p->nd == 3 ? "slow_conv_transpose3d_out_cpu" : "slow_conv_transpose2d_out_cpu";
    return p->nd == 3 ? "compute_columns3d" : "slow_conv2d_cpu";
}

static em_status check_dtypes(const em_tensor *input, const em_tensor *weight, const em_tensor *bias,
                              const em_conv_params *p)
{
    const em_dtype dt = (em_dtype)input->dtype;
    if (weight->dtype != dt)
        return em_fail(EM_ERR_DTYPE, "Input type (%s) and weight type (%s) should be the same or input should be a "
                       "MKLDNN tensor and weight is a dense tensor", tensor_type_name(dt),
                       tensor_type_name((em_dtype)weight->dtype));
    if (bias && bias->dtype != dt)
        return em_fail(EM_ERR_DTYPE, "Input type (%s) and bias type (%s) should be the same", c_type_name(dt),
                       c_type_name((em_dtype)bias->dtype));
    if (dt != EM_F32 && dt != EM_F64 && dt != EM_BF16)
        return em_fail(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", cpu_kernel_name(p), em_dtype_scalar_name(dt));
    return EM_OK;
}

/* Weight's dim 0 against groups (both directions). */
static em_status check_weight_groups(const em_tensor *weight, int64_t groups)
{
    char ws[128];
    if (weight->sizes[0] < groups)
        return em_fail(EM_ERR_SHAPE, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but got "
                       "weight of size %s instead", (long long)groups, (long long)groups,
                       bracket_list(weight->ndim, weight->sizes, ws, sizeof ws));
    if (weight->sizes[0] % groups)
        return em_fail(EM_ERR_SHAPE, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but "
                       "got weight of size [%s] instead", (long long)groups, (long long)groups,
                       bracket_list(weight->ndim, weight->sizes, ws, sizeof ws));
    return EM_OK;
}

/* The output-padding rule of a transposed convolution, in PyTorch's words
 * (its 1-d form runs as 2-d: a leading height of 0 / 1 / 1). */
static em_status check_output_padding(const em_conv_params *p)
{
    bool ok = true;
    for (int d = 0; d < p->nd; d++)
        if (p->extra[d] >= p->stride[d] && p->extra[d] >= p->dilation[d]) ok = false;
    if (ok) return EM_OK;
    static const char *const names3[] = {"depth", "height", "width"};
    const int shown = p->nd == 1 ? 2 : p->nd, lead = shown - p->nd;
    const char *const *names = names3 + (3 - shown);
    char msg[512];
    size_t len = (size_t)snprintf(msg, sizeof msg, "output padding must be smaller than either stride or dilation, but got");
    const char *what[] = {"output_padding", "stride", "dilation"};
    const int64_t *vals[] = {p->extra, p->stride, p->dilation};
    const int64_t lead_val[] = {0, 1, 1};
    for (int w = 0; w < 3; w++)
        for (int d = 0; d < shown && len < sizeof msg; d++)
            len += (size_t)snprintf(msg + len, sizeof msg - len, " %s_%s: %lld", what[w], names[d],
                                    (long long)(d < lead ? lead_val[w] : vals[w][d - lead]));
    return em_fail(EM_ERR_RUNTIME, "%s", msg);
}

/* Every check of a convolution call; fills the output's shape. `check_op`:
 * enforce PyTorch's output_padding rule (the input-gradient path computes
 * its own, which may exceed it). */
static em_status check_convolution(const em_tensor *input, const em_tensor *weight, const em_tensor *bias,
                                   const em_conv_params *p, bool check_op, int64_t *out_shape)
{
    char ws[128], is[128], a[96], b[96];
    const int nd = p->nd;
    if (!input || !weight) return em_fail(EM_ERR_VALUE, "convolution: input and weight must not be NULL");
    if (weight->ndim != nd + 2 || nd < 1 || nd > 3)
        return em_fail(EM_ERR_SHAPE, "expected stride to be a single integer value or a list of %d values to match "
                       "the convolution dimensions, but got stride=%s", weight->ndim - 2,
                       bracket_list(nd, p->stride, is, sizeof is));
    if (input->ndim != weight->ndim)
        return em_fail(EM_ERR_SHAPE, "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                       "%d-dimensional input of size %s instead", weight->ndim, weight->ndim,
                       bracket_list(weight->ndim, weight->sizes, ws, sizeof ws), input->ndim,
                       bracket_list(input->ndim, input->sizes, is, sizeof is));
    if (check_weight_groups(weight, p->groups)) return em_error_code();
    bracket_list(weight->ndim, weight->sizes, ws, sizeof ws);
    bracket_list(input->ndim, input->sizes, is, sizeof is);
    const int64_t G = p->groups;
    const int64_t in_channels = p->transposed ? weight->sizes[0] : weight->sizes[1] * G;
    const int64_t out_channels = p->transposed ? weight->sizes[1] * G : weight->sizes[0];
    if (input->sizes[1] != in_channels) {
        if (p->transposed)
            return em_fail(EM_ERR_SHAPE, "Given transposed=1, weight of size %s, expected input%s to have %lld "
                           "channels, but got %lld channels instead", ws, is, (long long)in_channels,
                           (long long)input->sizes[1]);
        return em_fail(EM_ERR_SHAPE, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, "
                       "but got %lld channels instead", (long long)G, ws, is, (long long)in_channels,
                       (long long)input->sizes[1]);
    }
    if (bias && (bias->ndim != 1 || bias->sizes[0] != out_channels))
        return em_fail(EM_ERR_SHAPE, "Given %sweight of size %s, expected bias to be 1-dimensional with %lld elements, "
                       "but got bias of size %s instead", p->transposed ? "transposed=1, " : "", ws,
                       (long long)out_channels, bracket_list(bias->ndim, bias->sizes, is, sizeof is));
    if (p->transposed && check_op && check_output_padding(p)) return em_error_code();
    out_shape[0] = input->sizes[0];
    out_shape[1] = out_channels;
    int64_t padded[3], kernel[3], outs[3];
    bool small = false, too_small = false;
    for (int d = 0; d < nd; d++) {
        const int64_t in = input->sizes[2 + d], k = weight->sizes[2 + d];
        if (!em_window_span(k, p->dilation[d], &kernel[d]) || !em_window_padded(in, p->padding[d], &padded[d]) ||
            (p->transposed &&
             !em_window_transposed(in, k, p->stride[d], p->padding[d], p->dilation[d], p->extra[d], &outs[d])))
            return em_window_overflow("convolution");
        if (p->transposed) {
            too_small |= outs[d] <= 0;
        } else {
            small |= padded[d] < kernel[d];
            outs[d] = padded[d] < kernel[d] ? 0 : (padded[d] - kernel[d]) / p->stride[d] + 1;
        }
        out_shape[2 + d] = outs[d];
    }
    if (small)
        return em_fail(EM_ERR_SHAPE, "Calculated padded input size per channel: (%s). Kernel size: (%s). Kernel size "
                       "can't be greater than actual input size", x_list(nd, padded, a, sizeof a),
                       x_list(nd, kernel, b, sizeof b));
    if (too_small) {
        /* PyTorch runs 1-d transposed convolutions as 2-d: a leading 1 */
        int64_t ins[4] = {1}, os[4] = {1};
        for (int d = 0; d < nd; d++) ins[d + 1] = input->sizes[2 + d], os[d + 1] = outs[d];
        const int off = nd == 1 ? 0 : 1;
        return em_fail(EM_ERR_SHAPE, "Given input size per channel: (%s). Calculated output size per channel: (%s). "
                       "Output size is too small", x_list(nd + 1 - off, ins + off, a, sizeof a),
                       x_list(nd + 1 - off, os + off, b, sizeof b));
    }
    if (check_dtypes(input, weight, bias, p) || check_fields(p, weight->sizes + 2)) return em_error_code();
    /* the GEMMs' sizes are BLAS ints */
    int64_t K = weight->sizes[1], L = 1;
    for (int d = 0; d < nd; d++) K *= weight->sizes[2 + d], L *= p->transposed ? input->sizes[2 + d] : outs[d];
    if (K > INT_MAX || L > INT_MAX || weight->sizes[0] > INT_MAX)
        return em_fail(EM_ERR_RUNTIME, "convolution: sizes too large (a GEMM dimension exceeds %d)", INT_MAX);
    return EM_OK;
}

/* ---- dispatch ------------------------------------------------------------------ */
/* Runs op (convolution or convolution_weight_grad) on contiguous operands
 * into a new tensor of out_shape; bfloat16 computes in float32 (recorded
 * conversions, so autograd sees them). */
static em_tensor *run_op(em_op op, const em_conv_params *p, int nin, const em_tensor *const *ins, int ndim,
                         const int64_t *out_shape)
{
    em_tensor *owned[3] = {NULL, NULL, NULL}, *y = NULL;
    const em_dtype dt = (em_dtype)ins[0]->dtype;
    const bool half = dt == EM_BF16;
    em_call c = {.op = op, .nin = nin, .nout = 1, .dtype = half ? EM_F32 : dt};
    bool ok = true;
    for (int k = 0; k < nin && ok; k++) {
        if (!ins[k]) continue;
        em_tensor *t = half ? em_to_dtype(ins[k], EM_F32) : em_retain((em_tensor *)ins[k]);
        owned[k] = t ? em_contiguous(t) : NULL;
        em_release(t);
        ok = owned[k] != NULL;
        c.in[k] = owned[k];
    }
    for (int k = 0; k < EM_CALL_MAX_OUT + EM_CALL_MAX_IN; k++) c.operand_dtypes[k] = (int8_t)c.dtype;
    em_conv_pack(p, c.i);
    if (ok) y = em_tensor_new(ndim, out_shape, c.dtype, ins[0]->storage->device);
    c.out[0] = y;
    if (y && em_dispatch(&c)) {
        em_release(y);
        y = NULL;
    }
    for (int k = 0; k < 3; k++) em_release(owned[k]);
    if (y && half) {
        em_tensor *h = em_to_dtype(y, EM_BF16);
        em_release(y);
        y = h;
    }
    return y;
}

static em_tensor *convolution_impl(const em_tensor *input, const em_tensor *weight, const em_tensor *bias,
                                   const em_conv_params *p, bool check_op)
{
    int64_t out_shape[5];
    if (check_convolution(input, weight, bias, p, check_op, out_shape)) return NULL;
    const em_tensor *ins[3] = {input, weight, bias};
    return run_op(EM_OP_convolution, p, bias ? 3 : 2, ins, p->nd + 2, out_shape);
}

em_tensor *em_convolution(const em_tensor *input, const em_tensor *weight, const em_tensor *bias, int nd,
                          const int64_t *stride, const int64_t *padding, const int64_t *dilation, bool transposed,
                          const int64_t *output_padding, int64_t groups)
{
    em_conv_params p;
    if (nd < 1 || nd > 3) return em_error(EM_ERR_VALUE, "convolution: expected 1 to 3 spatial dims, got %d", nd);
    /* PyTorch 1.13's CPU autocast lowers convolutions and runs transposed ones in float32 */
    EM_AUTOCAST(transposed ? EM_AUTOCAST_FP32 : EM_AUTOCAST_LOWER,
                em_convolution(input, weight, bias, nd, stride, padding, dilation, transposed, output_padding, groups),
                &input, &weight, &bias);
    if (make_params(&p, nd, stride, padding, dilation, transposed, transposed ? output_padding : NULL, groups))
        return NULL;
    /* a regular convolution ignores output_padding (as PyTorch) */
    return convolution_impl(input, weight, bias, &p, true);
}

/* ---- gradients -------------------------------------------------------------------- */
/* t narrowed (a recorded view) to sizes[2..] in its spatial dims; a new
 * reference. Sizes beyond t's are an error. */
static em_tensor *narrow_spatial(em_tensor *t, int nd, const int64_t *sizes)
{
    em_tensor *r = em_retain(t);
    for (int d = 0; d < nd && r; d++) {
        if (r->sizes[2 + d] == sizes[2 + d]) continue;
        em_tensor *v = r->sizes[2 + d] > sizes[2 + d] ? em_narrow(r, 2 + d, 0, sizes[2 + d])
                                                      : em_error(EM_ERR_SHAPE, "convolution gradient: the input's "
                                                                 "size %lld in dim %d does not fit the gradient's",
                                                                 (long long)sizes[2 + d], 2 + d);
        em_release(r);
        r = v;
    }
    em_release(t);
    return r;
}

em_tensor *em_convolution_input_grad(const em_tensor *grad_output, const em_tensor *weight, int input_ndim,
                                     const int64_t *input_sizes, int nd, const int64_t *stride,
                                     const int64_t *padding, const int64_t *dilation, bool transposed,
                                     int64_t groups)
{
    em_conv_params p;
    if (!grad_output || !weight || !input_sizes)
        return em_error(EM_ERR_VALUE, "convolution_input_grad: NULL argument");
    if (nd < 1 || nd > 3 || input_ndim != nd + 2 || grad_output->ndim != nd + 2 || weight->ndim != nd + 2)
        return em_error(EM_ERR_SHAPE, "convolution_input_grad: expected grad_output, weight and input of %d dims",
                        nd + 2);
    if (make_params(&p, nd, stride, padding, dilation, !transposed, NULL, groups)) return NULL;
    if (transposed) /* the gradient is a regular convolution, maybe longer than the input */
        return narrow_spatial(convolution_impl(grad_output, weight, NULL, &p, false), nd, input_sizes);
    /* a transposed convolution whose output_padding restores the input's size */
    for (int d = 0; d < nd; d++) {
        int64_t reach; /* the transposed output's size without output_padding */
        if (!em_window_transposed(grad_output->sizes[2 + d], weight->sizes[2 + d], p.stride[d], p.padding[d],
                                  p.dilation[d], 0, &reach) ||
            __builtin_sub_overflow(input_sizes[2 + d], reach, &p.extra[d]))
            return em_window_overflow("convolution_input_grad"), NULL;
        if (p.extra[d] < 0)
            return em_error(EM_ERR_SHAPE, "convolution_input_grad: grad_output of size %lld in dim %d does not fit "
                            "an input of size %lld", (long long)grad_output->sizes[2 + d], d + 2,
                            (long long)input_sizes[2 + d]);
    }
    return convolution_impl(grad_output, weight, NULL, &p, false);
}

em_tensor *em_convolution_weight_grad(const em_tensor *input, const em_tensor *grad_output,
                                      const int64_t *kernel_size, int nd, const int64_t *stride,
                                      const int64_t *padding, const int64_t *dilation, bool transposed,
                                      int64_t groups)
{
    em_conv_params p;
    char xs[128], gs[128];
    if (!input || !grad_output || !kernel_size) return em_error(EM_ERR_VALUE, "convolution_weight_grad: NULL argument");
    if (nd < 1 || nd > 3 || input->ndim != nd + 2 || grad_output->ndim != nd + 2)
        return em_error(EM_ERR_SHAPE, "convolution_weight_grad: expected input and grad_output of %d dims", nd + 2);
    if (make_params(&p, nd, stride, padding, dilation, false, kernel_size, groups)) return NULL;
    /* the regular geometry: a transposed convolution's grad_output is its input side */
    const em_tensor *X = transposed ? grad_output : input, *Gr = transposed ? input : grad_output;
    bracket_list(X->ndim, X->sizes, xs, sizeof xs);
    bracket_list(Gr->ndim, Gr->sizes, gs, sizeof gs);
    bool fits = X->sizes[0] == Gr->sizes[0] && X->sizes[1] % groups == 0 && Gr->sizes[1] % groups == 0 &&
                Gr->sizes[1] > 0;
    for (int d = 0; d < nd && fits; d++) {
        int64_t count;
        if (kernel_size[d] > 0 && !em_window_count(X->sizes[2 + d], kernel_size[d], p.stride[d], p.padding[d],
                                                   p.dilation[d], false, &count))
            return em_window_overflow("convolution_weight_grad"), NULL;
        fits = kernel_size[d] > 0 && count >= 1 && Gr->sizes[2 + d] <= count;
    }
    if (!fits)
        return em_error(EM_ERR_SHAPE, "convolution_weight_grad: input %s and grad_output %s do not fit the "
                        "convolution's geometry", transposed ? gs : xs, transposed ? xs : gs);
    const em_tensor *ins[2] = {X, Gr};
    em_conv_params check = p;
    check.transposed = transposed;
    if (check_dtypes(X, Gr, NULL, &check) || check_fields(&p, kernel_size)) return NULL;
    int64_t shape[5] = {Gr->sizes[1], X->sizes[1] / groups};
    for (int d = 0; d < nd; d++) shape[2 + d] = kernel_size[d];
    return run_op(EM_OP_convolution_weight_grad, &p, 2, ins, nd + 2, shape);
}
