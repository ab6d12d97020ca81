/* The op layer of nearest, linear (linear / bilinear / trilinear) and bicubic (2-d) upsampling
 * of (N, C, *spatial) tensors and of their adjoint backward ops (kernels: src/cpu/pool_map.c,
 * src/cpu/upsample.c, src/cpu/upsample_bicubic.c). A call keeps the user's scales in f[0..2]
 * (0: none) and align_corners in i[0] for the formulas; sizes come from the tensors. */
#include "pool_common.h"

enum up_kind { UP_NEAREST, UP_LINEAR, UP_BICUBIC };

static enum up_kind up_kind(em_op op)
{
    if (op == EM_OP_upsample_linear || op == EM_OP_upsample_linear_backward) return UP_LINEAR;
    if (op == EM_OP_upsample_bicubic || op == EM_OP_upsample_bicubic_backward) return UP_BICUBIC;
    return UP_NEAREST;
}

static const char *up_name(em_op op, int nd)
{
    static const char *names[][3] = {{"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"},
                                     {"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"},
                                     {NULL, "upsample_bicubic2d", NULL}};
    const char *name = nd >= 1 && nd <= 3 ? names[up_kind(op)][nd - 1] : NULL;
    return name ? name : em_ops[op].name;
}

/* Geometry of an upsample from input sizes `in` (ndim = nd + 2) to spatial `out`. */
static em_status up_setup(em_op op, int ndim, const int64_t *in, const int64_t *out, bool align_corners,
                          const double *scales, em_map_geom *g)
{
    int nd = ndim - 2;
    const char *name = up_name(op, nd);
    bool interpolating = up_kind(op) != UP_NEAREST; /* align_corners changes the scale */
    if (up_kind(op) == UP_BICUBIC && nd != 2)
        return em_fail(EM_ERR_SHAPE, "%s: It is expected input_size equals to 4, but got size %d", name, ndim);
    if (nd < 1 || nd > 3)
        return em_fail(EM_ERR_SHAPE, "%s: expected a 3D, 4D or 5D input (N, C, *spatial), got %d dims", name, ndim);
    bool ok = in[1] > 0;
    for (int k = 0; k < nd; k++) ok &= in[2 + k] > 0 && out[k] > 0;
    if (!ok)
        return em_fail(EM_ERR_SHAPE, "%s: Input and output sizes should be greater than 0, but got input %s output %s",
                       name, em_shape_str(ndim, in), em_shape_str(nd, out));
    *g = (em_map_geom){.planes = in[0] * in[1], .mode = -1, .align_corners = align_corners};
    for (int j = 0; j < 3; j++) {
        int k = j - (3 - nd); /* spatial dim k of the input, or < 0: a padding dim */
        g->in[j] = k >= 0 ? in[2 + k] : 1;
        g->out[j] = k >= 0 ? out[k] : 1;
        double s = k >= 0 && scales ? scales[k] : 0;
        if (interpolating && align_corners)
            g->scale[j] = g->out[j] > 1 ? (double)(g->in[j] - 1) / (double)(g->out[j] - 1) : 0;
        else
            g->scale[j] = s > 0 ? 1.0 / s : (double)g->in[j] / (double)g->out[j];
        if (k < 0) g->scale[j] = 0;
    }
    return EM_OK;
}

static em_tensor *up_run(em_op op, const em_tensor *t, const em_map_geom *g, int ndim, const int64_t *sizes,
                         bool align_corners, const double *scales)
{
    em_tensor *tc = em_pool_compute_input(t, up_name(op, ndim - 2));
    if (!tc) return NULL;
    em_call c = {.op = op, .nin = 1, .in = {tc}, .dtype = (em_dtype)tc->dtype, .arg = g, .i = {align_corners}};
    for (int k = 0; k < ndim - 2; k++) c.f[k] = scales && scales[k] > 0 ? scales[k] : 0;
    em_tensor *r = em_pool_run1(&c, ndim, sizes);
    em_release(tc);
    return em_pool_result_dtype(r, t, NULL);
}

static em_tensor *upsample(em_op op, const em_tensor *x, const int64_t *output_size, bool align_corners,
                           const double *scales)
{
    if (!x || !output_size) return em_error(EM_ERR_VALUE, "%s: argument is NULL", em_ops[op].name);
    em_map_geom g;
    if (up_setup(op, x->ndim, x->sizes, output_size, align_corners, scales, &g))
        return NULL;
    int64_t sizes[EM_MAX_DIMS] = {x->sizes[0], x->sizes[1]};
    memcpy(sizes + 2, output_size, (x->ndim - 2) * sizeof *sizes);
    em_tensor *r = up_run(op, x, &g, x->ndim, sizes, align_corners, scales);
    /* nearest and (bi/tri)linear keep a channels_last(_3d) input's layout, as PyTorch's CPU kernels */
    return op == EM_OP_upsample_bicubic ? r : em_in_format(r, em_suggest_memory_format(x));
}

static em_tensor *upsample_backward(em_op op, const em_tensor *grad, int ndim, const int64_t *input_sizes,
                                    bool align_corners, const double *scales)
{
    if (!grad || !input_sizes) return em_error(EM_ERR_VALUE, "%s: argument is NULL", em_ops[op].name);
    if (grad->ndim != ndim || ndim < 3 || grad->sizes[0] != input_sizes[0] || grad->sizes[1] != input_sizes[1])
        return em_error(EM_ERR_SHAPE, "%s: grad of shape %s does not fit the input %s", em_ops[op].name,
                        em_shape_str(grad->ndim, grad->sizes), em_shape_str(ndim, input_sizes));
    em_map_geom g;
    if (up_setup(op, ndim, input_sizes, grad->sizes + 2, align_corners, scales, &g)) return NULL;
    return up_run(op, grad, &g, ndim, input_sizes, align_corners, scales);
}

em_tensor *em_upsample_nearest(const em_tensor *x, const int64_t *output_size, const double *scales)
{
    return upsample(EM_OP_upsample_nearest, x, output_size, false, scales);
}
em_tensor *em_upsample_nearest_backward(const em_tensor *grad, int ndim, const int64_t *input_sizes,
                                        const double *scales)
{
    return upsample_backward(EM_OP_upsample_nearest_backward, grad, ndim, input_sizes, false, scales);
}
em_tensor *em_upsample_linear(const em_tensor *x, const int64_t *output_size, bool align_corners, const double *scales)
{
    return upsample(EM_OP_upsample_linear, x, output_size, align_corners, scales);
}
em_tensor *em_upsample_linear_backward(const em_tensor *grad, int ndim, const int64_t *input_sizes, bool align_corners,
                                       const double *scales)
{
    return upsample_backward(EM_OP_upsample_linear_backward, grad, ndim, input_sizes, align_corners, scales);
}
em_tensor *em_upsample_bicubic(const em_tensor *x, const int64_t *output_size, bool align_corners, const double *scales)
{
    return upsample(EM_OP_upsample_bicubic, x, output_size, align_corners, scales);
}
em_tensor *em_upsample_bicubic_backward(const em_tensor *grad, int ndim, const int64_t *input_sizes, bool align_corners,
                                        const double *scales)
{
    return upsample_backward(EM_OP_upsample_bicubic_backward, grad, ndim, input_sizes, align_corners, scales);
}
