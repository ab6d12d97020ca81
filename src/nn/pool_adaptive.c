/* The op layer of adaptive average and max pooling: output sizes given, windows derived
 * (kernels in src/cpu/pool_adaptive.c). The call keeps nd in i[0] for the formulas. */
#include "pool_common.h"

static const char *adaptive_name(em_op op, int nd)
{
    static const char *names[][3] = {
        {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"},
        {"adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"},
    };
    if (nd < 1 || nd > 3) return em_ops[op].name;
    return names[op == EM_OP_adaptive_max_pool][nd - 1];
}

/* Checks x and output_size; fills g and the result's sizes. */
static em_status adaptive_setup(em_op op, const em_tensor *x, int nd, const int64_t *output_size, em_pool_geom *g,
                                int64_t *out_sizes)
{
    const char *name = adaptive_name(op, nd);
    if (!x || !output_size) return em_fail(EM_ERR_VALUE, "%s: argument is NULL", name);
    if (nd < 1 || nd > 3) return em_fail(EM_ERR_VALUE, "%s: nd must be 1, 2 or 3, got %d", name, nd);
    for (int k = 0; k < nd; k++)
        if (output_size[k] < 0)
            return em_fail(EM_ERR_SHAPE, "%s: elements of output_size must be greater than or equal to 0 but "
                           "received %s", name, em_shape_str(nd, output_size));
    if (em_pool_check_input(x, nd, name, true)) return em_error_code();
    em_pool_geom_init(g, x, nd);
    for (int k = 0; k < nd; k++) g->out[3 - nd + k] = output_size[k];
    em_pool_out_sizes(x, nd, g->out, out_sizes);
    return EM_OK;
}

em_tensor *em_adaptive_avg_pool(const em_tensor *x, int nd, const int64_t *output_size)
{
    em_pool_geom g;
    int64_t out_sizes[EM_MAX_DIMS];
    if (adaptive_setup(EM_OP_adaptive_avg_pool, x, nd, output_size, &g, out_sizes)) return NULL;
    em_tensor *xc = em_pool_compute_input(x, adaptive_name(EM_OP_adaptive_avg_pool, nd));
    if (!xc) return NULL;
    em_call c = {.op = EM_OP_adaptive_avg_pool, .nin = 1, .in = {xc}, .dtype = (em_dtype)xc->dtype, .arg = &g,
                 .i = {nd}};
    em_tensor *r = em_pool_run1(&c, x->ndim, out_sizes);
    em_release(xc);
    return em_pool_layout(em_pool_result_dtype(r, x, NULL), x, nd, NULL);
}

em_tensor *em_adaptive_avg_pool_backward(const em_tensor *grad, int nd, int ndim, const int64_t *input_sizes)
{
    const char *name = "adaptive_avg_pool_backward";
    if (!grad || !input_sizes) return em_error(EM_ERR_VALUE, "%s: argument is NULL", name);
    if (nd < 1 || nd > 3 || ndim < nd + 1 || ndim > nd + 2 || grad->ndim != ndim)
        return em_error(EM_ERR_SHAPE, "%s: grad of shape %s does not fit an input of %d dims pooled over %d",
                        name, em_shape_str(grad->ndim, grad->sizes), ndim, nd);
    for (int k = 0; k < ndim - nd; k++)
        if (grad->sizes[k] != input_sizes[k])
            return em_error(EM_ERR_SHAPE, "%s: grad has shape %s, input %s", name,
                            em_shape_str(grad->ndim, grad->sizes), em_shape_str(ndim, input_sizes));
    for (int k = 0; k < ndim; k++)
        if (input_sizes[k] < 0 || (k >= ndim - nd && input_sizes[k] == 0))
            return em_error(EM_ERR_SHAPE, "%s: bad input sizes %s", name, em_shape_str(ndim, input_sizes));
    em_tensor *gc = em_pool_compute_input(grad, name);
    if (!gc) return NULL;
    em_pool_geom g;
    em_pool_geom_init(&g, gc, nd);
    for (int j = 0; j < 3; j++) {
        g.out[j] = g.in[j];
        g.in[j] = j >= 3 - nd ? input_sizes[ndim - 3 + j] : 1;
    }
    em_call c = {.op = EM_OP_adaptive_avg_pool_backward, .nin = 1, .in = {gc}, .dtype = (em_dtype)gc->dtype,
                 .arg = &g, .i = {nd}};
    em_tensor *r = em_pool_run1(&c, ndim, input_sizes);
    em_release(gc);
    return em_pool_result_dtype(r, grad, NULL);
}

em_tensor *em_adaptive_max_pool(const em_tensor *x, int nd, const int64_t *output_size, em_tensor **indices)
{
    em_pool_geom g;
    int64_t out_sizes[EM_MAX_DIMS];
    if (adaptive_setup(EM_OP_adaptive_max_pool, x, nd, output_size, &g, out_sizes)) return NULL;
    em_tensor *xc = em_pool_compute_input(x, adaptive_name(EM_OP_adaptive_max_pool, nd));
    if (!xc) return NULL;
    em_tensor *r = em_pool_run_max(EM_OP_adaptive_max_pool, x, xc, &g, nd, out_sizes, indices);
    em_release(xc);
    return em_pool_layout(em_pool_result_dtype(r, x, indices), x, nd, indices);
}
