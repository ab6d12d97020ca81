/* The op layer of max and average pooling (fixed windows) and max_unpool: argument checks with
 * PyTorch's messages, output shapes, and the calls to the kernels (src/cpu/pool.c). Adaptive
 * pools are in pool_adaptive.c; shared checks in pool_common.c. */
#include "pool_common.h"
#include "window.h"

/* Fills the defaults (stride = kernel, dilation 1), checks the window against PyTorch's rules
 * and the input, and computes the geometry. allow_empty: max_pool1d's zero-sized output. */
static em_status pool_setup(const em_tensor *x, const em_pool_params *p0, const char *name, bool allow_empty,
                            em_pool_params *p, em_pool_geom *g, int64_t *out_sizes)
{
    if (!x || !p0) return em_fail(EM_ERR_VALUE, "%s: argument is NULL", name);
    *p = *p0;
    int nd = p->nd;
    if (nd < 1 || nd > 3) return em_fail(EM_ERR_VALUE, "%s: nd must be 1, 2 or 3, got %d", name, nd);
    for (int k = 0; k < nd; k++) /* PyTorch's pooling takes C ints */
        if (p->kernel[k] > INT32_MAX || p->stride[k] > INT32_MAX || p->padding[k] > INT32_MAX ||
            p->dilation[k] > INT32_MAX)
            return em_fail(EM_ERR_RUNTIME, "%s: integer out of range (a kernel size, stride, padding or dilation "
                           "above 2**31 - 1)", name);
    for (int k = 0; k < nd; k++) {
        if (p->stride[k] == 0) p->stride[k] = p->kernel[k];
        if (p->dilation[k] == 0) p->dilation[k] = 1;
        if (p->kernel[k] <= 0)
            return em_fail(EM_ERR_SHAPE, "%s: kernel size should be greater than zero, but got kernel_size=%lld",
                           name, (long long)p->kernel[k]);
        if (p->stride[k] <= 0) return em_fail(EM_ERR_SHAPE, "%s: stride should not be zero", name);
        if (p->dilation[k] <= 0)
            return em_fail(EM_ERR_SHAPE, "%s: dilation should be greater than zero, but got dilation=%lld", name,
                           (long long)p->dilation[k]);
        if (p->padding[k] < 0 || p->padding[k] > p->kernel[k] / 2)
            return em_fail(EM_ERR_SHAPE, "pad should be at most half of kernel size, but got pad=%lld and "
                           "kernel_size=%lld", (long long)p->padding[k], (long long)p->kernel[k]);
    }
    if (em_pool_check_input(x, nd, name, true)) return em_error_code();
    em_pool_geom_init(g, x, nd);
    bool small = false;
    for (int k = 0; k < nd; k++) {
        int j = 3 - nd + k;
        g->k[j] = p->kernel[k], g->s[j] = p->stride[k], g->p[j] = p->padding[k], g->d[j] = p->dilation[k];
        if (!em_window_count(g->in[j], g->k[j], g->s[j], g->p[j], g->d[j], p->ceil_mode, &g->out[j]))
            return em_window_overflow(name);
        small |= allow_empty ? g->out[j] < 0 : g->out[j] < 1;
    }
    if (small) {
        int lead = x->ndim - nd - 1; /* sizes named from the channel dim, as PyTorch does */
        int64_t outs[4] = {x->sizes[lead]};
        for (int k = 0; k < nd; k++) outs[1 + k] = g->out[3 - nd + k];
        return em_fail(EM_ERR_SHAPE, "Given input size: (%s). Calculated output size: (%s). Output size is too small",
                       em_pool_dims_str(nd + 1, x->sizes + lead), em_pool_dims_str(nd + 1, outs));
    }
    g->count_include_pad = p->count_include_pad;
    g->divisor = p->divisor_override;
    em_pool_out_sizes(x, nd, g->out, out_sizes);
    return EM_OK;
}

/* values = x's flattened planes gathered at indices (recorded ops): max_pool_backward's
 * gradient. */
em_tensor *em_pool_gather_values(const em_tensor *x, const em_tensor *indices, int nd)
{
    em_tensor *xf = em_flatten(x, x->ndim - nd, -1), *idf = em_flatten(indices, indices->ndim - nd, -1);
    em_tensor *v = xf && idf ? em_gather(xf, -1, idf) : NULL;
    em_tensor *r = v ? em_view(v, indices->ndim, indices->sizes) : NULL;
    em_release(xf), em_release(idf), em_release(v);
    return r;
}

/* Runs a max-pool kind of call: values and indices. */
em_tensor *em_pool_run_max(em_op op, const em_tensor *x, const em_tensor *xc, const em_pool_geom *g, int nd,
                           const int64_t *out_sizes, em_tensor **indices)
{
    em_tensor *values = em_empty(x->ndim, out_sizes, (em_dtype)xc->dtype);
    em_tensor *idx = values ? em_empty(x->ndim, out_sizes, EM_I64) : NULL;
    if (!idx) {
        em_release(values);
        return NULL;
    }
    em_call c = {.op = op, .nin = 1, .nout = 2, .in = {xc}, .out = {values, idx}, .dtype = (em_dtype)xc->dtype,
                 .arg = g, .i = {nd}};
    if (em_dispatch(&c)) {
        em_release(values), em_release(idx);
        return NULL;
    }
    if (indices) *indices = idx;
    else em_release(idx);
    return values;
}

em_tensor *em_max_pool(const em_tensor *x, const em_pool_params *p0, em_tensor **indices)
{
    static const char *names[] = {"max_pool1d", "max_pool2d", "max_pool3d"};
    const char *name = p0 && p0->nd >= 1 && p0->nd <= 3 ? names[p0->nd - 1] : "max_pool";
    em_pool_params p;
    em_pool_geom g;
    int64_t out_sizes[EM_MAX_DIMS];
    if (pool_setup(x, p0, name, p0 && p0->nd == 1, &p, &g, out_sizes)) return NULL;
    em_tensor *xc = em_pool_compute_input(x, name);
    if (!xc) return NULL;
    em_tensor *r = em_pool_run_max(EM_OP_max_pool, x, xc, &g, p.nd, out_sizes, indices);
    em_release(xc);
    return em_pool_layout(em_pool_result_dtype(r, x, indices), x, p.nd, indices);
}

em_tensor *em_fractional_max_pool(const em_tensor *x, int nd, const int64_t *kernel, const int64_t *output_size,
                                  const em_tensor *samples, em_tensor **indices)
{
    const char *name = nd == 3 ? "fractional_max_pool3d_out()" : "fractional_max_pool2d()";
    if (!x || !kernel || !output_size || !samples) return em_error(EM_ERR_VALUE, "%s: argument is NULL", name);
    if (nd != 2 && nd != 3) return em_error(EM_ERR_VALUE, "fractional_max_pool: nd must be 2 or 3, got %d", nd);
    if (em_pool_check_input(x, nd, name, true)) return NULL;
    em_pool_geom g;
    em_pool_geom_init(&g, x, nd);
    static const char *dim_names[] = {"time", "height", "width"};
    for (int k = 0; k < nd; k++) {
        int j = 3 - nd + k;
        if (kernel[k] <= 0 || output_size[k] <= 0)
            return em_error(EM_ERR_RUNTIME, "%s: kernel_size and output_size must be greater than zero, but got "
                            "kernel %lld and output %lld", name, (long long)kernel[k], (long long)output_size[k]);
        /* PyTorch's 3-d check is strict, its 2-d one is not */
        if (output_size[k] + kernel[k] - 1 > g.in[j] - (nd == 3))
            return em_error(EM_ERR_RUNTIME, "%s: pool %s %lld too large relative to input %s %lld", name,
                            dim_names[j], (long long)kernel[k], dim_names[j], (long long)g.in[j]);
        g.k[j] = kernel[k], g.out[j] = output_size[k];
    }
    int lead = x->ndim - nd - 1; /* the channel dim */
    int64_t batch = lead ? x->sizes[0] : 1;
    if (samples->dtype != x->dtype || samples->ndim != 3 || samples->sizes[0] != batch ||
        samples->sizes[1] != x->sizes[lead] || samples->sizes[2] != nd)
        return em_error(EM_ERR_RUNTIME, "%s: expected _random_samples of shape (%lld, %lld, %d) and the input's "
                        "dtype, got %s", name, (long long)batch, (long long)x->sizes[lead], nd,
                        em_shape_str(samples->ndim, samples->sizes));
    int64_t out_sizes[EM_MAX_DIMS];
    em_pool_out_sizes(x, nd, g.out, out_sizes);
    em_tensor *xc = em_pool_compute_input(x, name), *sc = xc ? em_contiguous(samples) : NULL;
    em_tensor *values = sc ? em_empty(x->ndim, out_sizes, (em_dtype)xc->dtype) : NULL;
    em_tensor *idx = values ? em_empty(x->ndim, out_sizes, EM_I64) : NULL;
    em_status st = EM_ERR_MEMORY;
    if (idx) {
        em_call c = {.op = EM_OP_fractional_max_pool, .nin = 2, .nout = 2, .in = {xc, sc}, .out = {values, idx},
                     .dtype = (em_dtype)xc->dtype, .arg = &g, .i = {nd},
                     .operand_dtypes = {xc->dtype, EM_I64, xc->dtype, sc->dtype}};
        st = em_dispatch(&c);
    }
    em_release(xc), em_release(sc);
    if (st) {
        em_release(values), em_release(idx);
        return NULL;
    }
    if (indices) *indices = idx;
    else em_release(idx);
    return values;
}

em_tensor *em_max_pool_backward(const em_tensor *grad, const em_tensor *indices, int nd, int ndim,
                                const int64_t *input_sizes)
{
    const char *name = "max_pool_backward";
    if (!grad || !indices || !input_sizes) return em_error(EM_ERR_VALUE, "%s: argument is NULL", name);
    if (nd < 1 || nd > 3 || ndim < nd + 1 || ndim > nd + 2 || grad->ndim != ndim)
        return em_error(EM_ERR_SHAPE, "%s: grad of shape %s does not fit an input of %d dims pooled over %d",
                        name, em_shape_str(grad->ndim, grad->sizes), ndim, nd);
    if (indices->dtype != EM_I64 || indices->ndim != ndim ||
        memcmp(indices->sizes, grad->sizes, (size_t)ndim * sizeof *grad->sizes) != 0)
        return em_error(EM_ERR_SHAPE, "%s: indices must be int64 of grad's shape %s", name,
                        em_shape_str(grad->ndim, grad->sizes));
    for (int k = 0; k < ndim; k++)
        if (input_sizes[k] < 0 || (k < ndim - nd && input_sizes[k] != grad->sizes[k]))
            return em_error(EM_ERR_SHAPE, "%s: grad has shape %s, input %s", name,
                            em_shape_str(grad->ndim, grad->sizes), em_shape_str(ndim, input_sizes));
    em_tensor *gc = em_pool_compute_input(grad, name), *ic = gc ? em_contiguous(indices) : NULL;
    em_tensor *r = NULL;
    if (ic) {
        em_dtype dt = (em_dtype)gc->dtype;
        em_call c = {.op = EM_OP_max_pool_backward, .nin = 2, .in = {gc, ic}, .dtype = dt,
                     .operand_dtypes = {dt, dt, EM_I64}, .i = {nd}};
        r = em_pool_run1(&c, ndim, input_sizes);
    }
    em_release(gc), em_release(ic);
    return em_pool_result_dtype(r, grad, NULL);
}

em_tensor *em_avg_pool(const em_tensor *x, const em_pool_params *p0)
{
    static const char *names[] = {"avg_pool1d", "avg_pool2d", "avg_pool3d"};
    const char *name = p0 && p0->nd >= 1 && p0->nd <= 3 ? names[p0->nd - 1] : "avg_pool";
    em_pool_params p;
    em_pool_geom g;
    int64_t out_sizes[EM_MAX_DIMS];
    if (pool_setup(x, p0, name, false, &p, &g, out_sizes)) return NULL;
    for (int k = 0; k < p.nd; k++)
        if (p.dilation[k] != 1) return em_error(EM_ERR_VALUE, "%s: dilation must be 1", name);
    em_tensor *xc = em_pool_compute_input(x, name);
    if (!xc) return NULL;
    em_call c = {.op = EM_OP_avg_pool, .nin = 1, .in = {xc}, .dtype = (em_dtype)xc->dtype, .arg = &g};
    em_pool_params_to_call(&c, &p);
    em_tensor *r = em_pool_run1(&c, x->ndim, out_sizes);
    em_release(xc);
    return em_pool_layout(em_pool_result_dtype(r, x, NULL), x, p.nd, NULL);
}

em_tensor *em_avg_pool_backward(const em_tensor *grad, const em_pool_params *p0, int ndim, const int64_t *input_sizes)
{
    const char *name = "avg_pool_backward";
    if (!grad || !input_sizes) return em_error(EM_ERR_VALUE, "%s: argument is NULL", name);
    if (ndim < 1 || ndim > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "%s: bad input ndim %d", name, ndim);
    em_tensor *shape = em_empty_strided(ndim, input_sizes, (int64_t[EM_MAX_DIMS]){0}, (em_dtype)grad->dtype);
    em_pool_params p;
    em_pool_geom g;
    int64_t out_sizes[EM_MAX_DIMS];
    em_status st = shape ? pool_setup(shape, p0, name, false, &p, &g, out_sizes) : em_error_code();
    em_release(shape);
    if (st) return NULL;
    if (grad->ndim != ndim || memcmp(grad->sizes, out_sizes, ndim * sizeof *out_sizes))
        return em_error(EM_ERR_SHAPE, "%s: grad has shape %s, expected %s", name, em_shape_str(grad->ndim, grad->sizes),
                        em_shape_str(ndim, out_sizes));
    em_tensor *gc = em_pool_compute_input(grad, name);
    if (!gc) return NULL;
    em_call c = {.op = EM_OP_avg_pool_backward, .nin = 1, .in = {gc}, .dtype = (em_dtype)gc->dtype, .arg = &g};
    em_pool_params_to_call(&c, &p);
    em_tensor *r = em_pool_run1(&c, ndim, input_sizes);
    em_release(gc);
    return em_pool_result_dtype(r, grad, NULL);
}

em_tensor *em_max_unpool(const em_tensor *x, const em_tensor *indices, const em_pool_params *p,
                         const int64_t *output_size)
{
    const char *name = "max_unpool";
    if (!x || !indices || !p) return em_error(EM_ERR_VALUE, "%s: argument is NULL", name);
    int nd = p->nd;
    if (nd < 1 || nd > 3) return em_error(EM_ERR_VALUE, "%s: nd must be 1, 2 or 3, got %d", name, nd);
    if (indices->dtype != EM_I64) return em_error(EM_ERR_DTYPE, "elements in indices should be type int64");
    if (x->ndim != indices->ndim || memcmp(x->sizes, indices->sizes, x->ndim * sizeof *x->sizes))
        return em_error(EM_ERR_SHAPE, "Expected shape of indices to be same as that of the input tensor (%s) but got "
                        "indices tensor with shape: %s", em_shape_str(x->ndim, x->sizes),
                        em_shape_str(indices->ndim, indices->sizes));
    if (em_pool_check_input(x, nd, name, true)) return NULL;
    int64_t osz[3], sizes[EM_MAX_DIMS], volume = 1;
    for (int k = 0; k < nd; k++) {
        int64_t in = x->sizes[x->ndim - nd + k], s = p->stride[k] ? p->stride[k] : p->kernel[k];
        if (output_size) osz[k] = output_size[k];
        else if (!em_window_transposed(in, p->kernel[k], s, p->padding[k], 1, 0, &osz[k]))
            return em_window_overflow(name), NULL;
        if (osz[k] <= 0) return em_error(EM_ERR_SHAPE, "%s: output size must be positive, got %lld", name,
                                         (long long)osz[k]);
        if (em_mul_overflow(volume, osz[k], &volume))
            return em_error(EM_ERR_MEMORY, "%s: output size %s overflows", name, em_pool_dims_str(k + 1, osz));
    }
    int lead = x->ndim - nd;
    memcpy(sizes, x->sizes, lead * sizeof *sizes);
    /* every index must land in the output plane (PyTorch's check, before any write) */
    if (em_numel(indices) > 0) {
        em_tensor *lo = em_amin(indices, 0, NULL, false), *hi = em_amax(indices, 0, NULL, false);
        double vlo = 0, vhi = 0;
        em_status st = lo && hi ? em_item(lo, &vlo) || em_item(hi, &vhi) : EM_ERR_RUNTIME;
        em_release(lo), em_release(hi);
        if (st) return NULL;
        if (vlo < 0 || vhi >= (double)volume)
            return em_error(EM_ERR_SHAPE, "Found an invalid max index: %lld (output volumes are of size %s)",
                            (long long)(vlo < 0 ? vlo : vhi), em_pool_dims_str(nd, osz));
    }
    sizes[lead] = volume;
    em_tensor *z = em_zeros(lead + 1, sizes, (em_dtype)x->dtype);
    em_tensor *xf = em_flatten(x, lead, -1), *idf = em_flatten(indices, lead, -1);
    em_tensor *flat = z && xf && idf ? em_scatter(z, -1, idf, xf, NULL) : NULL;
    memcpy(sizes + lead, osz, nd * sizeof *osz);
    em_tensor *r = flat ? em_view(flat, lead + nd, sizes) : NULL;
    em_release(z), em_release(xf), em_release(idf), em_release(flat);
    return r;
}
