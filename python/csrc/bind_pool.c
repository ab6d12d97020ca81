/* Bindings of the pool family (include/ember/pool.h): ember.* functions where
 * torch has them at the top level (max_pool2d, pixel_shuffle, ...), the rest in ember._C._nn
 * (the generic nd forms the Python functionals call, and the backward ops). */
#include "emp.h"

/* pool params from int lists (a single int repeats; empty stride: the kernel), nd dims */
static int pool_params(emp_args *a, int nd, int kk, int ks, int kp, int kd, em_pool_params *p)
{
    *p = (em_pool_params){.nd = nd};
    const int ks_[4] = {kk, ks, kp, kd};
    int64_t *dst[4] = {p->kernel, p->stride, p->padding, p->dilation};
    for (int j = 0; j < 4; j++) {
        int k = ks_[j];
        if (k < 0) continue;
        int len = a->has[k] ? a->nlist[k] : 0;
        if (len == 0 && j == 1) continue; /* stride=None or []: the kernel */
        if (len != 1 && len != nd) {
            PyErr_Format(PyExc_RuntimeError, "expected %d or 1 values for a pooling argument, got %d", nd, len);
            return -1;
        }
        for (int d = 0; d < nd; d++) {
            dst[j][d] = a->list[k][len == 1 ? 0 : d];
            if (dst[j][d] != (int32_t)dst[j][d]) { /* PyTorch's pools take C ints */
                PyErr_SetString(PyExc_RuntimeError, "integer out of range");
                return -1;
            }
        }
        for (int d = 0; d < nd; d++)
            if ((j == 1 || j == 3) && dst[j][d] == 0) { /* C's 0 means a default; Python's is an error */
                PyErr_SetString(PyExc_RuntimeError, j == 1 ? "stride should not be zero"
                                                           : "dilation should be greater than zero, but got 0");
                return -1;
            }
    }
    return 0;
}

static PyObject *values_indices(em_tensor *v, em_tensor *i)
{
    em_tensor *ts[2] = {v, i};
    if (!v) return emp_wrap(NULL);
    return emp_wrap_tuple(2, ts);
}

/* ---- ember._C._nn: nd-generic forms ----------------------------------------------------- */
EMP_BIND(max_pool, "max_pool(Tensor input, int nd, int[] kernel_size, int[] stride, int[] padding, int[] dilation, "
                   "bool ceil_mode)")
{
    em_pool_params p;
    if (pool_params(a, emp_dim(a, 1), 2, 3, 4, 5, &p)) return NULL;
    p.ceil_mode = a->i[6];
    em_tensor *idx = NULL, *v = em_max_pool(a->t[0], &p, &idx);
    return values_indices(v, idx);
}

EMP_BIND(avg_pool, "avg_pool(Tensor input, int nd, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, "
                   "bool count_include_pad, int? divisor_override)")
{
    em_pool_params p;
    if (pool_params(a, emp_dim(a, 1), 2, 3, 4, -1, &p)) return NULL;
    p.ceil_mode = a->i[5], p.count_include_pad = a->i[6];
    p.divisor_override = a->has[7] ? a->i[7] : 0;
    return emp_wrap(em_avg_pool(a->t[0], &p));
}

/* Adaptive output sizes: C ints, as PyTorch's pools take (a huge one would loop over its rows). */
static int output_sizes(const emp_args *a, int k)
{
    for (int j = 0; j < a->nlist[k]; j++)
        if (a->list[k][j] != (int32_t)a->list[k][j]) {
            PyErr_SetString(PyExc_RuntimeError, "integer out of range");
            return -1;
        }
    return 0;
}

EMP_BIND(adaptive_avg_pool, "adaptive_avg_pool(Tensor input, int nd, int[] output_size)")
{
    if (output_sizes(a, 2)) return NULL;
    return emp_wrap(em_adaptive_avg_pool(a->t[0], emp_dim(a, 1), a->list[2]));
}

EMP_BIND(adaptive_max_pool, "adaptive_max_pool(Tensor input, int nd, int[] output_size)")
{
    if (output_sizes(a, 2)) return NULL;
    em_tensor *idx = NULL, *v = em_adaptive_max_pool(a->t[0], emp_dim(a, 1), a->list[2], &idx);
    return values_indices(v, idx);
}

EMP_BIND(max_unpool, "max_unpool(Tensor input, Tensor indices, int nd, int[] output_size)")
{
    em_pool_params p = {.nd = emp_dim(a, 2)};
    if (a->nlist[3] != p.nd) return PyErr_Format(PyExc_ValueError, "max_unpool: output_size must have %d values", p.nd);
    return emp_wrap(em_max_unpool(a->t[0], a->t[1], &p, a->list[3]));
}

static int pad_mode(const char *s, em_pad_mode *m)
{
    static const char *names[] = {"constant", "reflect", "replicate", "circular"};
    for (int k = 0; k < 4; k++)
        if (!strcmp(s, names[k])) return *m = (em_pad_mode)k, 0;
    PyErr_Format(PyExc_NotImplementedError, "Unrecognised padding mode %s", s);
    return -1;
}

EMP_BIND(pad, "pad(Tensor input, int[] pad, str mode=\"constant\", float? value=None)")
{
    em_pad_mode m;
    if (pad_mode(a->s[2], &m)) return NULL;
    if (m != EM_PAD_CONSTANT && a->has[3])
        return PyErr_Format(PyExc_RuntimeError, "Padding mode \"%s\" doesn't take in value argument", a->s[2]);
    return emp_wrap(em_pad(a->t[0], a->nlist[1], a->list[1], m, a->has[3] ? a->d[3] : 0));
}

/* scales: three floats, 0 for none */
EMP_BIND(upsample_nearest, "upsample_nearest(Tensor input, int[] output_size, float s0=0, float s1=0, float s2=0)")
{
    const double scales[3] = {a->d[2], a->d[3], a->d[4]};
    if (a->nlist[1] != em_ndim(a->t[0]) - 2)
        return PyErr_Format(PyExc_RuntimeError, "It is expected output_size equals to %d, but got size %d",
                            em_ndim(a->t[0]) - 2, a->nlist[1]);
    return emp_wrap(em_upsample_nearest(a->t[0], a->list[1], scales));
}

EMP_BIND(upsample_linear, "upsample_linear(Tensor input, int[] output_size, bool align_corners, float s0=0, "
                          "float s1=0, float s2=0)")
{
    const double scales[3] = {a->d[3], a->d[4], a->d[5]};
    if (a->nlist[1] != em_ndim(a->t[0]) - 2)
        return PyErr_Format(PyExc_RuntimeError, "It is expected output_size equals to %d, but got size %d",
                            em_ndim(a->t[0]) - 2, a->nlist[1]);
    return emp_wrap(em_upsample_linear(a->t[0], a->list[1], a->i[2], scales));
}

/* scales: two floats (h, w), 0 for none */
EMP_BIND(upsample_bicubic, "upsample_bicubic(Tensor input, int[] output_size, bool align_corners, float s0=0, "
                           "float s1=0)")
{
    const double scales[2] = {a->d[3], a->d[4]};
    if (a->nlist[1] != 2)
        return PyErr_Format(PyExc_RuntimeError, "It is expected output_size equals to 2, but got size %d", a->nlist[1]);
    return emp_wrap(em_upsample_bicubic(a->t[0], a->list[1], a->i[2], scales));
}

/* torch._C._nn's spelling */
EMP_BIND(upsample_bicubic2d, "upsample_bicubic2d(Tensor input, int[2] output_size, bool align_corners, "
                             "float? scales_h=None, float? scales_w=None)")
{
    const double scales[2] = {a->has[3] ? a->d[3] : 0, a->has[4] ? a->d[4] : 0};
    return emp_wrap(em_upsample_bicubic(a->t[0], a->list[1], a->i[2], scales));
}

/* ---- ember._C._nn: the backward ops (as torch._C._nn's *_backward) ---------------------- */
EMP_BIND(avg_pool_backward, "avg_pool_backward(Tensor grad_output, Tensor input, int nd, int[] kernel_size, "
                            "int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, "
                            "int? divisor_override)")
{
    em_pool_params p;
    if (pool_params(a, emp_dim(a, 2), 3, 4, 5, -1, &p)) return NULL;
    p.ceil_mode = a->i[6], p.count_include_pad = a->i[7];
    p.divisor_override = a->has[8] ? a->i[8] : 0;
    return emp_wrap(em_avg_pool_backward(a->t[0], &p, em_ndim(a->t[1]), em_sizes(a->t[1])));
}
EMP_BIND(max_pool_backward, "max_pool_backward(Tensor grad_output, Tensor indices, Tensor input, int nd)")
{
    return emp_wrap(em_max_pool_backward(a->t[0], a->t[1], emp_dim(a, 3), em_ndim(a->t[2]), em_sizes(a->t[2])));
}
/* torch._C._nn.fractional_max_pool2d/3d(input, kernel_size, output_size, random_samples) -> (out, indices) */
#define NN_FRACTIONAL(N)                                                                                     \
    EMP_BIND(fractional_max_pool##N##d, "fractional_max_pool" #N "d(Tensor input, int[" #N "] kernel_size, "  \
                                        "int[" #N "] output_size, Tensor random_samples)")                    \
    {                                                                                                        \
        em_tensor *idx = NULL;                                                                               \
        em_tensor *v = em_fractional_max_pool(a->t[0], N, a->list[1], a->list[2], a->t[3], &idx);           \
        return values_indices(v, idx);                                                                       \
    }
NN_FRACTIONAL(2)
NN_FRACTIONAL(3)
EMP_BIND(adaptive_avg_pool_backward, "adaptive_avg_pool_backward(Tensor grad_output, Tensor input, int nd)")
{
    return emp_wrap(em_adaptive_avg_pool_backward(a->t[0], emp_dim(a, 2), em_ndim(a->t[1]), em_sizes(a->t[1])));
}
EMP_BIND(pad_backward, "pad_backward(Tensor grad_output, Tensor input, int[] pad, str mode)")
{
    em_pad_mode m;
    if (pad_mode(a->s[3], &m)) return NULL;
    return emp_wrap(em_pad_backward(a->t[0], a->nlist[2], a->list[2], m, em_ndim(a->t[1]), em_sizes(a->t[1])));
}
EMP_BIND(upsample_nearest_backward, "upsample_nearest_backward(Tensor grad_output, int[] input_size, float s0=0, "
                                    "float s1=0, float s2=0)")
{
    const double scales[3] = {a->d[2], a->d[3], a->d[4]};
    return emp_wrap(em_upsample_nearest_backward(a->t[0], a->nlist[1], a->list[1], scales));
}
EMP_BIND(upsample_linear_backward, "upsample_linear_backward(Tensor grad_output, int[] input_size, "
                                   "bool align_corners, float s0=0, float s1=0, float s2=0)")
{
    const double scales[3] = {a->d[3], a->d[4], a->d[5]};
    return emp_wrap(em_upsample_linear_backward(a->t[0], a->nlist[1], a->list[1], a->i[2], scales));
}

EMP_BIND(upsample_bicubic_backward, "upsample_bicubic_backward(Tensor grad_output, int[] input_size, "
                                    "bool align_corners, float s0=0, float s1=0)")
{
    const double scales[2] = {a->d[3], a->d[4]};
    return emp_wrap(em_upsample_bicubic_backward(a->t[0], a->nlist[1], a->list[1], a->i[2], scales));
}

/* grid sampling: modes and padding modes as PyTorch's ints (see em_grid_mode, em_grid_padding) */
EMP_BIND(grid_sample, "grid_sample(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
                      "bool align_corners)")
{
    return emp_wrap(em_grid_sample(a->t[0], a->t[1], (em_grid_mode)a->i[2], (em_grid_padding)a->i[3], a->i[4]));
}

EMP_BIND(grid_sample_backward, "grid_sample_backward(Tensor grad_output, Tensor input, Tensor grid, "
                               "int interpolation_mode, int padding_mode, bool align_corners)")
{
    em_tensor *gi = NULL, *gg = NULL;
    if (em_grid_sample_backward(a->t[0], a->t[1], a->t[2], (em_grid_mode)a->i[3], (em_grid_padding)a->i[4], a->i[5],
                                &gi, &gg))
        return emp_wrap(NULL);
    return values_indices(gi, gg);
}

/* ---- ember.*: PyTorch's top-level names ------------------------------------------------- */
#define TOP_MAX_POOL(N)                                                                              \
    EMP_BIND(max_pool##N##d, "max_pool" #N "d(Tensor input, int[" #N "] kernel_size, int[" #N "]? stride=None, " \
                             "int[" #N "] padding=0, int[" #N "] dilation=1, bool ceil_mode=False)")  \
    {                                                                                                \
        em_pool_params p;                                                                            \
        if (pool_params(a, N, 1, 2, 3, 4, &p)) return NULL;                                          \
        p.ceil_mode = a->i[5];                                                                       \
        return emp_wrap(em_max_pool(a->t[0], &p, NULL));                                             \
    }
TOP_MAX_POOL(1)
TOP_MAX_POOL(2)
TOP_MAX_POOL(3)

EMP_BIND(avg_pool1d, "avg_pool1d(Tensor input, int[1] kernel_size, int[1]? stride=None, int[1] padding=0, "
                     "bool ceil_mode=False, bool count_include_pad=True)")
{
    em_pool_params p;
    if (pool_params(a, 1, 1, 2, 3, -1, &p)) return NULL;
    p.ceil_mode = a->i[4], p.count_include_pad = a->i[5];
    return emp_wrap(em_avg_pool(a->t[0], &p));
}

EMP_BIND(adaptive_avg_pool1d, "adaptive_avg_pool1d(Tensor input, int[1] output_size)")
{
    if (output_sizes(a, 1)) return NULL;
    return emp_wrap(em_adaptive_avg_pool(a->t[0], 1, a->list[1]));
}

EMP_BIND(adaptive_max_pool1d, "adaptive_max_pool1d(Tensor input, int[1] output_size)")
{
    if (output_sizes(a, 1)) return NULL;
    em_tensor *idx = NULL, *v = em_adaptive_max_pool(a->t[0], 1, a->list[1], &idx);
    return values_indices(v, idx);
}

EMP_BIND(constant_pad_nd, "constant_pad_nd(Tensor input, int[] pad, float value=0)")
{
    return emp_wrap(em_pad(a->t[0], a->nlist[1], a->list[1], EM_PAD_CONSTANT, a->d[2]));
}

EMP_BIND(pixel_shuffle, "pixel_shuffle(Tensor input, int upscale_factor)")
{
    return emp_wrap(em_pixel_shuffle(a->t[0], a->i[1]));
}
EMP_BIND(pixel_unshuffle, "pixel_unshuffle(Tensor input, int downscale_factor)")
{
    return emp_wrap(em_pixel_unshuffle(a->t[0], a->i[1]));
}
EMP_BIND(channel_shuffle, "channel_shuffle(Tensor input, int groups)")
{
    return emp_wrap(em_channel_shuffle(a->t[0], a->i[1]));
}

/* grid_sampler_2d / _3d: grid_sampler for one input rank (PyTorch's message for another) */
static const char *sizes_str(char *buf, size_t cap, const em_tensor *t)
{
    int len = snprintf(buf, cap, "[");
    for (int k = 0; k < em_ndim(t) && len < (int)cap; k++)
        len += snprintf(buf + len, cap - len, "%s%lld", k ? ", " : "", (long long)em_sizes(t)[k]);
    if (len < (int)cap) snprintf(buf + len, cap - len, "]");
    return buf;
}
static PyObject *grid_sampler_nd(emp_args *a, int ndim)
{
    const em_tensor *x = a->t[0], *g = a->t[1];
    if (ndim && (em_ndim(x) != ndim || em_ndim(g) != ndim)) {
        char xs[200], gs[200];
        sizes_str(xs, sizeof xs, x);
        sizes_str(gs, sizeof gs, g);
        return PyErr_Format(PyExc_RuntimeError, "grid_sampler(): expected %dD input and grid with same number of "
                            "dimensions, but got input with sizes %s and grid with sizes %s", ndim, xs, gs);
    }
    return emp_wrap(em_grid_sample(x, g, (em_grid_mode)a->i[2], (em_grid_padding)a->i[3], a->i[4]));
}
#define GRID_SAMPLER(name, ndim)                                                                      \
    EMP_BIND(name, #name "(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "    \
                   "bool align_corners)")                                                            \
    {                                                                                                \
        return grid_sampler_nd(a, ndim);                                                             \
    }
GRID_SAMPLER(grid_sampler, 0)
GRID_SAMPLER(grid_sampler_2d, 4)
GRID_SAMPLER(grid_sampler_3d, 5)

EMP_BIND(affine_grid_generator, "affine_grid_generator(Tensor theta, int[] size, bool align_corners)")
{
    return emp_wrap(em_affine_grid(a->t[0], a->nlist[1], a->list[1], a->i[2]));
}

PyMethodDef emp_pool_functions[] = {
    EMP_FUNCTION(max_pool1d),          EMP_FUNCTION(max_pool2d),      EMP_FUNCTION(max_pool3d),
    EMP_FUNCTION(avg_pool1d),          EMP_FUNCTION(adaptive_avg_pool1d), EMP_FUNCTION(adaptive_max_pool1d),
    EMP_FUNCTION(constant_pad_nd),     EMP_FUNCTION(pixel_shuffle),   EMP_FUNCTION(pixel_unshuffle),
    EMP_FUNCTION(channel_shuffle),     EMP_FUNCTION(grid_sampler),    EMP_FUNCTION(grid_sampler_2d),
    EMP_FUNCTION(grid_sampler_3d),     EMP_FUNCTION(affine_grid_generator), {NULL},
};

PyMethodDef emp_pool_nn[] = {
    EMP_FUNCTION(max_pool),         EMP_FUNCTION(avg_pool),        EMP_FUNCTION(adaptive_avg_pool),
    EMP_FUNCTION(adaptive_max_pool), EMP_FUNCTION(max_unpool),     EMP_FUNCTION(pad),
    EMP_FUNCTION(upsample_nearest), EMP_FUNCTION(upsample_linear), EMP_FUNCTION(avg_pool_backward),
    EMP_FUNCTION(max_pool_backward), EMP_FUNCTION(fractional_max_pool2d), EMP_FUNCTION(fractional_max_pool3d),
    EMP_FUNCTION(adaptive_avg_pool_backward), EMP_FUNCTION(pad_backward), EMP_FUNCTION(upsample_nearest_backward),
    EMP_FUNCTION(upsample_linear_backward), EMP_FUNCTION(upsample_bicubic), EMP_FUNCTION(upsample_bicubic2d),
    EMP_FUNCTION(upsample_bicubic_backward), EMP_FUNCTION(grid_sample), EMP_FUNCTION(grid_sample_backward), {NULL},
};
