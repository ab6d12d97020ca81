/* Autograd of the convolutions: float64 gradchecks of input, weight and bias
 * (strided, padded, dilated, grouped, transposed, 1-3 spatial dims,
 * non-contiguous, unbatched, 'same'), of convolution_weight_grad and of
 * im2col/col2im; second derivatives through create_graph. */
#include "test.h"

typedef struct conv_spec {
    int nd;
    int64_t stride[3], pad[3], dil[3], outpad[3], groups;
    bool transposed;
} conv_spec;

static em_tensor *f_conv(em_tensor *const *in, const void *ctx)
{
    const conv_spec *s = ctx;
    return em_convolution(in[0], in[1], in[2], s->nd, s->stride, s->pad, s->dil, s->transposed, s->outpad, s->groups);
}

/* the input as a transposed view of a leaf holding it with dims 2 and 3 swapped */
static em_tensor *f_conv_view(em_tensor *const *in, const void *ctx)
{
    const conv_spec *s = ctx;
    em_tensor *x = em_transpose(in[0], 2, 3);
    em_tensor *r = em_convolution(x, in[1], in[2], s->nd, s->stride, s->pad, s->dil, s->transposed, s->outpad,
                                  s->groups);
    em_release(x);
    return r;
}

static em_tensor *f_conv_unbatched(em_tensor *const *in, const void *ctx)
{
    const conv_spec *s = ctx;
    return s->transposed ? em_conv_transpose(in[0], in[1], in[2], s->nd, s->stride, s->pad, s->outpad, s->groups, s->dil)
                         : em_conv(in[0], in[1], in[2], s->nd, s->stride, s->pad, s->dil, s->groups);
}

static em_tensor *f_conv_same(em_tensor *const *in, const void *ctx)
{
    const conv_spec *s = ctx;
    return em_conv_same(in[0], in[1], in[2], s->nd, NULL, s->dil, s->groups);
}

typedef struct grad_case {
    const char *name;
    fn_t f;
    conv_spec spec;
    int ndim;
    int64_t x[5], w[5], b;
} grad_case;

TEST(gradcheck_convolution)
{
    static const grad_case cases[] = {
        {"conv2d", f_conv, {2, {1, 1}, {0, 0}, {1, 1}, {0}, 1, false}, 4, {2, 2, 4, 4}, {3, 2, 2, 2}, 3},
        {"conv2d strided padded dilated", f_conv, {2, {2, 1}, {1, 2}, {1, 2}, {0}, 1, false}, 4, {1, 2, 5, 4},
         {2, 2, 3, 2}, 2},
        {"conv2d groups", f_conv, {2, {1, 2}, {1, 0}, {1, 1}, {0}, 2, false}, 4, {2, 4, 3, 4}, {4, 2, 2, 2}, 4},
        {"conv2d depthwise", f_conv, {2, {1, 1}, {1, 1}, {1, 1}, {0}, 3, false}, 4, {1, 3, 3, 3}, {3, 1, 2, 2}, 0},
        {"conv2d 1x1", f_conv, {2, {1, 1}, {0, 0}, {1, 1}, {0}, 1, false}, 4, {2, 3, 2, 3}, {2, 3, 1, 1}, 2},
        {"conv2d of a view", f_conv_view, {2, {1, 1}, {1, 0}, {1, 1}, {0}, 1, false}, 4, {1, 2, 4, 3}, {2, 2, 2, 2}, 2},
        {"conv1d", f_conv, {1, {2}, {1}, {2}, {0}, 1, false}, 3, {2, 2, 7}, {3, 2, 3}, 3},
        {"conv3d", f_conv, {3, {1, 2, 1}, {1, 0, 0}, {1, 1, 1}, {0}, 1, false}, 5, {1, 2, 3, 4, 3}, {2, 2, 2, 2, 2}, 2},
        {"conv2d unbatched", f_conv_unbatched, {2, {1, 1}, {1, 1}, {1, 1}, {0}, 1, false}, 3, {2, 3, 3}, {2, 2, 2, 2}, 2},
        {"conv2d same, even kernel", f_conv_same, {2, {1, 1}, {0}, {1, 1}, {0}, 1, false}, 4, {1, 2, 4, 3},
         {2, 2, 2, 3}, 2},
        {"conv_transpose2d", f_conv, {2, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1, true}, 4, {2, 2, 3, 3}, {2, 3, 2, 2}, 3},
        {"conv_transpose2d strided", f_conv, {2, {2, 3}, {1, 0}, {1, 2}, {1, 2}, 1, true}, 4, {1, 2, 3, 2},
         {2, 2, 3, 2}, 2},
        {"conv_transpose2d groups", f_conv, {2, {2, 1}, {0, 1}, {1, 1}, {1, 0}, 2, true}, 4, {1, 4, 2, 3},
         {4, 1, 2, 3}, 2},
        /* output_padding >= stride (allowed below the dilation): the input gradient drops the extra rows */
        {"conv_transpose1d output_padding >= stride", f_conv, {1, {1}, {0}, {3}, {2}, 1, true}, 3, {2, 2, 3},
         {2, 2, 2}, 2},
        {"conv_transpose3d", f_conv, {3, {2, 1, 1}, {0, 1, 0}, {1, 1, 1}, {1, 0, 0}, 1, true}, 5, {1, 2, 2, 3, 2},
         {2, 2, 2, 2, 2}, 2},
        {"conv_transpose1d unbatched", f_conv_unbatched, {1, {2}, {1}, {1}, {1}, 1, true}, 2, {2, 4}, {2, 3, 3}, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const grad_case *c = &cases[k];
        const int wdim = c->spec.nd + 2;
        em_tensor *in[3] = {leaf(c->ndim, c->x, -1, 1), leaf(wdim, c->w, -1, 1),
                            c->b ? leaf(1, (int64_t[]){c->b}, -1, 1) : NULL};
        bool ok = gradcheck(c->name, c->f, c->b ? 3 : 2, in, &c->spec);
        RELEASE(in[0], in[1], in[2]);
        CHECK_MSG(ok, "%s", c->name);
    }
    GRAD_COVER(EM_OP_convolution);
}

/* ---- convolution_weight_grad as a function of (input, grad_output) ----------- */
static em_tensor *f_weight_grad(em_tensor *const *in, const void *ctx)
{
    const conv_spec *s = ctx;
    const int64_t k[2] = {2, 3};
    return em_convolution_weight_grad(in[0], in[1], k, s->nd, s->stride, s->pad, s->dil, s->transposed, s->groups);
}

TEST(gradcheck_convolution_weight_grad)
{
    static const conv_spec regular = {2, {2, 1}, {1, 0}, {1, 2}, {0}, 2, false};
    em_tensor *in[2] = {leaf(SHAPE(2, 4, 4, 6), -1, 1), leaf(SHAPE(2, 2, 3, 2), -1, 1)};
    CHECK(gradcheck("convolution_weight_grad", f_weight_grad, 2, in, &regular));
    RELEASE(in[0], in[1]);
    static const conv_spec transposed = {2, {1, 2}, {0, 1}, {1, 1}, {0}, 1, true};
    /* transposed: input (N, C_in, 3, 3), grad_output its result (N, 2, 4, 5) */
    em_tensor *tin[2] = {leaf(SHAPE(1, 2, 3, 3), -1, 1), leaf(SHAPE(1, 2, 4, 5), -1, 1)};
    CHECK(gradcheck("convolution_weight_grad, transposed", f_weight_grad, 2, tin, &transposed));
    RELEASE(tin[0], tin[1]);
    GRAD_COVER(EM_OP_convolution_weight_grad);
}

/* ---- second derivatives -------------------------------------------------------- */
TEST(gradgradcheck_convolution)
{
    static const conv_spec s1 = {2, {2, 1}, {1, 0}, {1, 1}, {0}, 1, false};
    em_tensor *in[3] = {leaf(SHAPE(1, 2, 4, 3), -1, 1), leaf(SHAPE(2, 2, 2, 2), -1, 1), leaf(SHAPE(2), -1, 1)};
    CHECK(gradgradcheck("conv2d", f_conv, 3, in, &s1));
    RELEASE(in[0], in[1], in[2]);
    static const conv_spec s2 = {1, {2}, {1}, {1}, {1}, 2, true};
    em_tensor *tin[3] = {leaf(SHAPE(1, 2, 3), -1, 1), leaf(SHAPE(2, 1, 3), -1, 1), leaf(SHAPE(2), -1, 1)};
    CHECK(gradgradcheck("conv_transpose1d groups", f_conv, 3, tin, &s2));
    RELEASE(tin[0], tin[1], tin[2]);
}

/* ---- im2col / col2im ------------------------------------------------------------- */
static em_tensor *f_unfold(em_tensor *const *in, const void *ctx)
{
    return em_im2col(in[0], (int64_t[]){2, 2}, (int64_t[]){1, 2}, (int64_t[]){1, 0}, (int64_t[]){2, 1});
}
static em_tensor *f_fold(em_tensor *const *in, const void *ctx)
{
    return em_col2im(in[0], (int64_t[]){4, 5}, (int64_t[]){2, 2}, (int64_t[]){1, 2}, (int64_t[]){1, 0},
                     (int64_t[]){2, 1});
}

TEST(gradcheck_im2col_col2im)
{
    em_tensor *x = leaf(SHAPE(2, 2, 4, 5), -1, 1);
    CHECK(gradcheck("im2col", f_unfold, 1, &x, NULL));
    CHECK(gradgradcheck("im2col", f_unfold, 1, &x, NULL));
    /* blocks: (4 + 2 - 2) / 2 + 1 = 3, (5 - 3) + 1 = 3 */
    em_tensor *c = leaf(SHAPE(2, 8, 9), -1, 1), *cu = leaf(SHAPE(8, 9), -1, 1);
    CHECK(gradcheck("col2im", f_fold, 1, &c, NULL));
    CHECK(gradcheck("col2im unbatched", f_fold, 1, &cu, NULL));
    RELEASE(x, c, cu);
    GRAD_COVER(EM_OP_im2col, EM_OP_col2im);
}
