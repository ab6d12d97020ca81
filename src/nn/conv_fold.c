/* The op layer of im2col / col2im (F.unfold / F.fold; kernels in
 * src/cpu/conv_cols.c): PyTorch's shape checks and messages, unbatched
 * forms as recorded views, half types computed in float32. */
#include "../ops/dispatch.h"
#include "conv_params.h"
#include "window.h"

typedef struct fold_args {
    const char *kernel_name; /* PyTorch's, for the dtype message */
    int64_t k[2], dil[2], pad[2], stride[2];
} fold_args;

static em_status fold_params(fold_args *f, const int64_t *kernel_size, const int64_t *dilation,
                             const int64_t *padding, const int64_t *stride)
{
    for (int d = 0; d < 2; d++) {
        f->k[d] = kernel_size[d];
        f->dil[d] = dilation ? dilation[d] : 1;
        f->pad[d] = padding ? padding[d] : 0;
        f->stride[d] = stride ? stride[d] : 1;
    }
    if (f->k[0] <= 0 || f->k[1] <= 0)
        return em_fail(EM_ERR_RUNTIME, "kernel size should be greater than zero, but got kernel_height: %lld "
                       "kernel_width: %lld", (long long)f->k[0], (long long)f->k[1]);
    if (f->stride[0] <= 0 || f->stride[1] <= 0)
        return em_fail(EM_ERR_RUNTIME, "stride should be greater than zero, but got stride_height: %lld "
                       "stride_width: %lld", (long long)f->stride[0], (long long)f->stride[1]);
    if (f->dil[0] <= 0 || f->dil[1] <= 0)
        return em_fail(EM_ERR_RUNTIME, "dilation should be greater than zero, but got dilation_height: %lld "
                       "dilation_width: %lld", (long long)f->dil[0], (long long)f->dil[1]);
    if (f->pad[0] < 0 || f->pad[1] < 0)
        return em_fail(EM_ERR_RUNTIME, "padding should be non-negative, but got pad_height: %lld pad_width: %lld",
                       (long long)f->pad[0], (long long)f->pad[1]);
    return EM_OK;
}

/* Sliding block positions in both dims over an image of size[2], and their
 * product; false (the error set) when the arithmetic overflows. */
static bool blocks(const fold_args *f, const int64_t *size, int64_t *b, int64_t *total, em_op op)
{
    for (int d = 0; d < 2; d++)
        if (!em_window_count(size[d], f->k[d], f->stride[d], f->pad[d], f->dil[d], false, &b[d]))
            return em_window_overflow(em_ops[op].name), false;
    if (b[0] > 0 && b[1] > 0 && __builtin_mul_overflow(b[0], b[1], total))
        return em_window_overflow(em_ops[op].name), false;
    return true;
}

static em_status check_dtype(const fold_args *f, em_dtype dt)
{
    if (em_dtype_is_float(dt)) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", f->kernel_name, em_dtype_scalar_name(dt));
}

/* Runs im2col or col2im on a batched input into out_shape (4-d image or 3-d
 * columns); the kernel size travels as the params' `extra`. */
static em_tensor *run_fold(em_op op, const fold_args *f, const em_tensor *x, int ndim, const int64_t *out_shape)
{
    em_conv_params p = {.nd = 2, .groups = 1};
    for (int d = 0; d < 2; d++) {
        p.stride[d] = f->stride[d], p.padding[d] = f->pad[d], p.dilation[d] = f->dil[d], p.extra[d] = f->k[d];
        const int64_t v[] = {f->k[d], f->stride[d], f->pad[d], f->dil[d]};
        for (size_t j = 0; j < sizeof v / sizeof *v; j++)
            if (v[j] > EM_CONV_FIELD_MAX)
                return em_error(EM_ERR_RUNTIME, "%s: a size of %lld is beyond Ember's limit of %lld", em_ops[op].name,
                                (long long)v[j], (long long)EM_CONV_FIELD_MAX);
    }
    const em_dtype dt = (em_dtype)x->dtype, ct = dt == EM_F64 ? EM_F64 : EM_F32;
    em_tensor *xc = em_to_dtype(x, ct), *xin = xc ? em_contiguous(xc) : NULL;
    em_release(xc);
    em_tensor *y = xin ? em_tensor_new(ndim, out_shape, ct, x->storage->device) : NULL;
    em_call c = {.op = op, .nin = 1, .nout = 1, .dtype = ct};
    c.in[0] = xin;
    c.out[0] = y;
    c.operand_dtypes[0] = c.operand_dtypes[1] = (int8_t)ct;
    em_conv_pack(&p, c.i);
    if (y && em_dispatch(&c)) {
        em_release(y);
        y = NULL;
    }
    em_release(xin);
    if (y && ct != dt) {
        em_tensor *h = em_to_dtype(y, dt);
        em_release(y);
        y = h;
    }
    return y;
}

typedef em_tensor *(*fold_fn)(const fold_args *f, const int64_t *output_size, const em_tensor *x);

/* fn on x, or for an unbatched x on x with a batch dim of 1 (recorded views). */
static em_tensor *with_batch(fold_fn fn, const fold_args *f, const int64_t *output_size, const em_tensor *x,
                             int batched_ndim)
{
    if (x->ndim == batched_ndim) return fn(f, output_size, x);
    em_tensor *xb = em_unsqueeze(x, 0), *yb = xb ? fn(f, output_size, xb) : NULL;
    em_tensor *r = yb ? em_squeeze_dim(yb, 0) : NULL;
    em_release(xb);
    em_release(yb);
    return r;
}

static em_tensor *im2col_batched(const fold_args *f, const int64_t *output_size, const em_tensor *x)
{
    const int64_t N = x->sizes[0], C = x->sizes[1], H = x->sizes[2], W = x->sizes[3];
    int64_t b[2], L = 0, CK;
    if (!blocks(f, x->sizes + 2, b, &L, EM_OP_im2col)) return NULL;
    const int64_t bh = b[0], bw = b[1];
    if (bh < 1 || bw < 1)
        return em_error(EM_ERR_SHAPE, "Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), "
                        "dilation=(%lld, %lld), padding=(%lld, %lld), calculated shape of the array of sliding blocks "
                        "as (%lld, %lld), but its components must be at least one.", (long long)H, (long long)W,
                        (long long)f->k[0], (long long)f->k[1], (long long)f->dil[0], (long long)f->dil[1],
                        (long long)f->pad[0], (long long)f->pad[1], (long long)bh, (long long)bw);
    if (__builtin_mul_overflow(C, f->k[0], &CK) || __builtin_mul_overflow(CK, f->k[1], &CK))
        return em_window_overflow("im2col"), NULL;
    const int64_t shape[3] = {N, CK, L};
    EM_UNUSED(output_size);
    return run_fold(EM_OP_im2col, f, x, 3, shape);
}

em_tensor *em_im2col(const em_tensor *input, const int64_t *kernel_size, const int64_t *dilation,
                     const int64_t *padding, const int64_t *stride)
{
    fold_args f = {.kernel_name = "im2col_out_cpu"};
    if (EM_NULL(input) || EM_NULL(kernel_size)) return NULL;
    if (fold_params(&f, kernel_size, dilation, padding, stride)) return NULL;
    const int b = input->ndim == 4;
    bool ok = input->ndim == 3 || input->ndim == 4;
    for (int d = b; d < input->ndim && ok; d++) ok = input->sizes[d] != 0;
    if (!ok)
        return em_error(EM_ERR_SHAPE, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                        "non-zero dimensions for input, but got: %s", em_shape_str(input->ndim, input->sizes));
    if (check_dtype(&f, (em_dtype)input->dtype)) return NULL;
    return with_batch(im2col_batched, &f, NULL, input, 4);
}

static em_tensor *col2im_batched(const fold_args *f, const int64_t *output_size, const em_tensor *x)
{
    const int64_t N = x->sizes[0], CK = x->sizes[1], L = x->sizes[2];
    int64_t kk, b[2], blocks_total = 0;
    if (__builtin_mul_overflow(f->k[0], f->k[1], &kk)) return em_window_overflow("col2im"), NULL;
    if (CK % kk)
        return em_error(EM_ERR_SHAPE, "Expected size of input's dimension 1 to be divisible by the product of "
                        "kernel_size, but got input.size(1)=%lld and kernel_size=(%lld, %lld).", (long long)CK,
                        (long long)f->k[0], (long long)f->k[1]);
    if (!blocks(f, output_size, b, &blocks_total, EM_OP_col2im)) return NULL;
    const int64_t bh = b[0], bw = b[1];
    if (bh < 1 || bw < 1 || blocks_total != L)
        return em_error(EM_ERR_SHAPE, "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, "
                        "%lld), padding=(%lld, %lld), stride=(%lld, %lld), expected size of input's dimension 2 to "
                        "match the calculated number of sliding blocks %lld * %lld = %lld, but got input.size(2)=%lld.",
                        (long long)output_size[0], (long long)output_size[1], (long long)f->k[0], (long long)f->k[1],
                        (long long)f->dil[0], (long long)f->dil[1], (long long)f->pad[0], (long long)f->pad[1],
                        (long long)f->stride[0], (long long)f->stride[1], (long long)bh, (long long)bw,
                        (long long)blocks_total, (long long)L);
    const int64_t shape[4] = {N, CK / kk, output_size[0], output_size[1]};
    return run_fold(EM_OP_col2im, f, x, 4, shape);
}

em_tensor *em_col2im(const em_tensor *input, const int64_t *output_size, const int64_t *kernel_size,
                     const int64_t *dilation, const int64_t *padding, const int64_t *stride)
{
    fold_args f = {.kernel_name = "col2im_out_cpu"};
    if (EM_NULL(input) || EM_NULL(output_size) || EM_NULL(kernel_size)) return NULL;
    if (fold_params(&f, kernel_size, dilation, padding, stride)) return NULL;
    const int b = input->ndim == 3;
    bool ok = input->ndim == 2 || input->ndim == 3;
    for (int d = b; d < input->ndim && ok; d++) ok = input->sizes[d] != 0;
    if (!ok)
        return em_error(EM_ERR_SHAPE, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size "
                        "and non-zero dimensions for input, but got: %s", em_shape_str(input->ndim, input->sizes));
    if (check_dtype(&f, (em_dtype)input->dtype)) return NULL;
    return with_batch(col2im_batched, &f, output_size, input, 3);
}
