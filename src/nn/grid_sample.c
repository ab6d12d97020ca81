/* The op layer of grid_sample (PyTorch's grid_sampler), its backward op, and affine_grid, a
 * composite of recorded ops (kernels: src/cpu/grid_sample.c). A call keeps mode, padding mode
 * and align_corners in i[0..2] for the formula. */
#include "pool_common.h"
#include "ember/ember.h"

/* PyTorch's checks of grid_sampler, in its order, and the dtypes. */
static em_status grid_check(const em_tensor *x, const em_tensor *grid, em_grid_mode mode, em_grid_padding pad)
{
    if ((unsigned)mode > EM_GRID_BICUBIC || (unsigned)pad > EM_GRID_REFLECTION)
        return em_fail(EM_ERR_RUNTIME, "grid_sampler(): unknown interpolation mode %d or padding mode %d", (int)mode,
                       (int)pad);
    if (x->ndim != 4 && x->ndim != 5)
        return em_fail(EM_ERR_SHAPE, "grid_sampler(): expected 4D or 5D input and grid with same number of "
                       "dimensions, but got input with sizes %s and grid with sizes %s",
                       em_shape_str(x->ndim, x->sizes), em_shape_str(grid->ndim, grid->sizes));
    if (grid->ndim == 0 || x->sizes[0] != grid->sizes[0])
        return em_fail(EM_ERR_SHAPE, "grid_sampler(): expected grid and input to have same batch size, but got "
                       "input with sizes %s and grid with sizes %s", em_shape_str(x->ndim, x->sizes),
                       em_shape_str(grid->ndim, grid->sizes));
    if (grid->sizes[grid->ndim - 1] != x->ndim - 2)
        return em_fail(EM_ERR_SHAPE, "grid_sampler(): expected grid to have size %d in last dimension, but got grid "
                       "with sizes %s", x->ndim - 2, em_shape_str(grid->ndim, grid->sizes));
    for (int k = 2; k < x->ndim; k++)
        if (x->sizes[k] == 0)
            return em_fail(EM_ERR_SHAPE, "grid_sampler(): expected input to have non-empty spatial dimensions, but "
                           "input has sizes %s with dimension %d being empty", em_shape_str(x->ndim, x->sizes), k);
    if (grid->ndim != x->ndim)
        return em_fail(EM_ERR_SHAPE, "grid_sampler(): expected %dD input and grid with same number of dimensions, "
                       "but got input with sizes %s and grid with sizes %s", x->ndim,
                       em_shape_str(x->ndim, x->sizes), em_shape_str(grid->ndim, grid->sizes));
    if (x->ndim == 5 && mode == EM_GRID_BICUBIC)
        return em_fail(EM_ERR_SHAPE, "grid_sampler(): bicubic interpolation only supports 4D input");
    if (x->dtype != EM_F32 && x->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "grid_sampler_%dd_cpu not implemented for %s", x->ndim - 2,
                       em_dtype_scalar_name((em_dtype)x->dtype));
    if (grid->dtype != x->dtype)
        return em_fail(EM_ERR_DTYPE, "expected scalar type %s but found %s", em_dtype_scalar_name((em_dtype)x->dtype),
                       em_dtype_scalar_name((em_dtype)grid->dtype));
    return EM_OK;
}

em_tensor *em_grid_sample(const em_tensor *input, const em_tensor *grid, em_grid_mode mode, em_grid_padding padding,
                          bool align_corners)
{
    if (!input || !grid) return em_error(EM_ERR_VALUE, "grid_sampler: argument is NULL");
    if (grid_check(input, grid, mode, padding)) return NULL;
    em_tensor *xc = em_contiguous(input), *gc = xc ? em_contiguous(grid) : NULL, *r = NULL;
    if (gc) {
        int64_t sizes[5] = {input->sizes[0], input->sizes[1]};
        memcpy(sizes + 2, grid->sizes + 1, (input->ndim - 2) * sizeof *sizes);
        em_call c = {.op = EM_OP_grid_sample, .nin = 2, .in = {xc, gc}, .dtype = (em_dtype)input->dtype,
                     .i = {mode, padding, align_corners}};
        r = em_pool_run1(&c, input->ndim, sizes);
    }
    em_release(xc);
    em_release(gc);
    return r;
}

em_status em_grid_sample_backward(const em_tensor *grad, const em_tensor *input, const em_tensor *grid,
                                  em_grid_mode mode, em_grid_padding padding, bool align_corners,
                                  em_tensor **grad_input, em_tensor **grad_grid)
{
    if (!grad || !input || !grid || !grad_input || !grad_grid)
        return em_fail(EM_ERR_VALUE, "grid_sampler_backward: argument is NULL");
    *grad_input = *grad_grid = NULL;
    if (grid_check(input, grid, mode, padding)) return em_error_code();
    bool fits = grad->ndim == input->ndim && grad->sizes[0] == input->sizes[0] && grad->sizes[1] == input->sizes[1];
    for (int k = 2; fits && k < grad->ndim; k++) fits = grad->sizes[k] == grid->sizes[k - 1];
    if (!fits)
        return em_fail(EM_ERR_SHAPE, "grid_sampler_backward: grad of shape %s does not fit input %s and grid %s",
                       em_shape_str(grad->ndim, grad->sizes), em_shape_str(input->ndim, input->sizes),
                       em_shape_str(grid->ndim, grid->sizes));
    if (grad->dtype != input->dtype)
        return em_fail(EM_ERR_DTYPE, "expected scalar type %s but found %s",
                       em_dtype_scalar_name((em_dtype)input->dtype), em_dtype_scalar_name((em_dtype)grad->dtype));
    em_dtype dt = (em_dtype)input->dtype;
    em_tensor *go = em_contiguous(grad), *xc = go ? em_contiguous(input) : NULL, *gc = xc ? em_contiguous(grid) : NULL;
    em_tensor *gi = gc ? em_empty(input->ndim, input->sizes, dt) : NULL;
    em_tensor *gg = gi ? em_empty(grid->ndim, grid->sizes, dt) : NULL;
    em_status st = em_error_code();
    if (gg) {
        em_call c = {.op = EM_OP_grid_sample_backward, .nin = 3, .in = {go, xc, gc}, .nout = 2, .out = {gi, gg},
                     .dtype = dt, .i = {mode, padding, align_corners}};
        st = em_dispatch(&c);
    }
    em_release(go);
    em_release(xc);
    em_release(gc);
    if (st || !gg) {
        em_release(gi);
        em_release(gg);
        return st ? st : em_error_code();
    }
    *grad_input = gi;
    *grad_grid = gg;
    return EM_OK;
}

/* affine_grid's normalized coordinates along a dim of n points: PyTorch's linspace from -1 to
 * 1 (0 for a single point), shrunk by (n - 1) / n to the pixel centres without align_corners. */
static em_tensor *grid_axis(int64_t n, bool align_corners, em_dtype dt)
{
    if (n <= 1) return em_zeros(1, (int64_t[]){n}, dt);
    double s = align_corners ? 1.0 : (double)(n - 1) / (double)n;
    return em_linspace(-s, s, n, dt);
}

em_tensor *em_affine_grid(const em_tensor *theta, int nsize, const int64_t *size, bool align_corners)
{
    if (!theta || !size) return em_error(EM_ERR_VALUE, "affine_grid_generator: argument is NULL");
    if (nsize != 4 && nsize != 5)
        return em_error(EM_ERR_RUNTIME, "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.");
    int nd = nsize - 2;
    if (!em_dtype_is_float((em_dtype)theta->dtype))
        return em_error(EM_ERR_DTYPE, "affine_grid_generator: expected a floating point theta, but got %s",
                        em_dtype_scalar_name((em_dtype)theta->dtype));
    bool ok = theta->ndim == 3 && theta->sizes[0] == size[0] && theta->sizes[1] == nd && theta->sizes[2] == nd + 1;
    for (int k = 0; k < nsize; k++) ok &= size[k] >= 0;
    if (!ok)
        return em_error(EM_ERR_SHAPE, "affine_grid_generator: expected theta of shape [%lld, %d, %d] for size %s, but "
                        "got %s", (long long)size[0], nd, nd + 1, em_shape_str(nsize, size),
                        em_shape_str(theta->ndim, theta->sizes));
    em_dtype dt = (em_dtype)theta->dtype;
    const int64_t *sp = size + 2; /* (D,) H, W */
    int64_t P = 1;
    for (int k = 0; k < nd; k++) P *= sp[k];
    /* base (*spatial, nd + 1): coordinate j (x, y, z) varies along spatial dim nd - 1 - j; then 1 */
    em_tensor *parts[4] = {NULL}, *base = NULL, *flat = NULL, *tt = NULL, *r = NULL;
    bool good = true;
    for (int j = 0; j < nd && good; j++) {
        int64_t shape[3] = {1, 1, 1};
        int dim = nd - 1 - j;
        shape[dim] = sp[dim];
        em_tensor *axis = grid_axis(sp[dim], align_corners, dt);
        em_tensor *col = axis ? em_reshape(axis, nd, shape) : NULL;
        parts[j] = col ? em_expand(col, nd, sp) : NULL;
        em_release(axis);
        em_release(col);
        good = parts[j] != NULL;
    }
    parts[nd] = good ? em_ones(nd, sp, dt) : NULL;
    base = parts[nd] ? em_stack(nd + 1, (const em_tensor *const *)parts, nd) : NULL;
    flat = base ? em_reshape(base, 2, (int64_t[]){P, nd + 1}) : NULL;
    tt = flat ? em_transpose(theta, 1, 2) : NULL;
    em_tensor *m = tt ? em_matmul(flat, tt) : NULL; /* (N, P, nd) */
    if (m) {
        int64_t out[5] = {size[0]};
        memcpy(out + 1, sp, nd * sizeof *out);
        out[nd + 1] = nd;
        r = em_reshape(m, nd + 2, out);
        em_release(m);
    }
    for (int j = 0; j <= nd; j++) em_release(parts[j]);
    em_release(base);
    em_release(flat);
    em_release(tt);
    return r;
}
