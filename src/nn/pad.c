/* The op layer of F.pad: constant padding (any dims, negative pads crop) as recorded ops (a
 * filled tensor and a copy into its inner window), and reflect / replicate / circular
 * padding of the last 1-3 dims as the `pad` op (kernel src/cpu/pool_map.c) with its adjoint
 * pad_backward. A call keeps i[0] = mode, i[1..6] = pads, i[7] = npad for the formulas. */
#include "pool_common.h"

static const char *mode_name(em_pad_mode m)
{
    static const char *names[] = {"constant", "reflect", "replicate", "circular"};
    return m >= EM_PAD_CONSTANT && m <= EM_PAD_CIRCULAR ? names[m] : "unknown";
}

/* n + before + after, with the error for an overflow (huge pads). */
static bool padded_size(int64_t n, int64_t before, int64_t after, int d, int64_t *out)
{
    if (!__builtin_add_overflow(n, before, out) && !__builtin_add_overflow(*out, after, out)) return true;
    em_error(EM_ERR_SHAPE, "pad: padding (%lld, %lld) of dimension %d overflows its size", (long long)before,
             (long long)after, d);
    return false;
}

/* x narrowed by the negative pads (a view), with PyTorch's error for a negative size. */
static em_tensor *crop_negative(const em_tensor *x, int npad, const int64_t *pads)
{
    em_tensor *inner = em_retain((em_tensor *)x);
    for (int k = 0; k < npad / 2 && inner; k++) {
        int d = x->ndim - 1 - k;
        int64_t before = pads[2 * k], after = pads[2 * k + 1], n = x->sizes[d], total;
        if (!padded_size(n, before, after, d, &total)) {
            em_release(inner);
            return NULL;
        }
        if (total < 0) {
            em_release(inner);
            return em_error(EM_ERR_SHAPE, "The input size %lld, plus negative padding %lld and %lld resulted in a "
                            "negative output size, which is invalid. Check dimension %d of your input.",
                            (long long)n, (long long)before, (long long)after, d);
        }
        int64_t lo = before < 0 ? -before : 0, hi = after < 0 ? n + after : n; /* total >= 0: no overflow */
        em_tensor *t = em_narrow(inner, d, lo, hi > lo ? hi - lo : 0);
        em_release(inner);
        inner = t;
    }
    return inner;
}

/* PyTorch's constant_pad_nd: crop by the negative pads, then copy into the inner window of a
 * tensor filled with value. */
static em_tensor *pad_constant(const em_tensor *x, int npad, const int64_t *pads, double value)
{
    em_tensor *inner = crop_negative(x, npad, pads);
    if (!inner) return NULL;
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, x->sizes, x->ndim * sizeof *sizes);
    for (int k = 0; k < npad / 2; k++) {
        int d = x->ndim - 1 - k;
        if (!padded_size(sizes[d], pads[2 * k], pads[2 * k + 1], d, &sizes[d])) {
            em_release(inner);
            return NULL;
        }
    }
    em_tensor *out = em_full(x->ndim, sizes, value, (em_dtype)x->dtype);
    em_tensor *window = out ? em_retain(out) : NULL;
    for (int k = 0; k < npad / 2 && window; k++) {
        int d = x->ndim - 1 - k;
        em_tensor *t = em_narrow(window, d, pads[2 * k] > 0 ? pads[2 * k] : 0, inner->sizes[d]);
        em_release(window);
        window = t;
    }
    em_status st = window ? em_copy_(window, inner) : em_error_code();
    em_release(window), em_release(inner);
    if (st) {
        em_release(out);
        return NULL;
    }
    return out;
}

/* Checks a reflect/replicate/circular pad of x (or of an input of x's dims when `back`) and
 * fills g; in[]/out[] are the unpadded and padded spatial sizes. */
static em_status pad_setup(int ndim, const int64_t *sizes, int npad, const int64_t *pads, em_pad_mode mode,
                           em_map_geom *g)
{
    int nd = npad / 2;
    if ((npad != 2 && npad != 4 && npad != 6) || (ndim != nd + 1 && ndim != nd + 2))
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "Only 2D, 3D, 4D, 5D padding with non-constant padding are "
                       "supported for now");
    if (mode == EM_PAD_CIRCULAR && npad != 2 * (ndim - 2))
        return em_fail(EM_ERR_SHAPE, "Invalid padding size, expected %d but got %d", 2 * (ndim - 2), npad);
    *g = (em_map_geom){.planes = 1, .mode = mode};
    for (int k = 0; k < ndim - nd; k++) g->planes *= sizes[k];
    for (int k = ndim - nd; k < ndim; k++)
        if (sizes[k] == 0 && mode != EM_PAD_CIRCULAR)
            return em_fail(EM_ERR_SHAPE, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and "
                           "other non-zero dimensions for input, but got: %s", nd + 1, nd + 2,
                           em_shape_str(ndim, sizes));
    for (int j = 0; j < 3; j++) {
        int k = 2 - j; /* pads[2k], pads[2k+1] pad the k-th dim from the end */
        if (k >= nd) {
            g->in[j] = g->out[j] = 1;
            continue;
        }
        int64_t n = sizes[ndim - 1 - k], before = pads[2 * k], after = pads[2 * k + 1];
        if (mode == EM_PAD_REFLECT && (before >= n || after >= n))
            return em_fail(EM_ERR_SHAPE, "Argument #%d: Padding size should be less than the corresponding input "
                           "dimension, but got: padding (%lld, %lld) at dimension %d of input %s", 4 + 2 * k,
                           (long long)before, (long long)after, ndim - 1 - k, em_shape_str(ndim, sizes));
        if (mode == EM_PAD_CIRCULAR && (before > n || after > n))
            return em_fail(EM_ERR_SHAPE, "Padding value causes wrapping around more than once.");
        if (!padded_size(n, before, after, ndim - 1 - k, &g->out[j])) return em_error_code();
        g->in[j] = n, g->before[j] = before;
        if (g->out[j] < 1 && g->planes > 0)
            return em_fail(EM_ERR_SHAPE, "input (%c: %lld) is too small. Calculated output %c: %lld", "DHW"[j],
                           (long long)n, "DHW"[j], (long long)g->out[j]);
    }
    return EM_OK;
}

static const char *kernel_name(em_pad_mode mode, int nd)
{
    static const char *names[][3] = {{"reflection_pad1d", "reflection_pad2d", "reflection_pad3d"},
                                     {"replication_pad1d_cpu", "replication_pad2d_cpu", "replication_pad3d_cpu"},
                                     {"circular_pad1d", "circular_pad2d", "circular_pad3d"}};
    return names[mode - 1][nd - 1];
}

static em_tensor *run_pad(em_op op, const em_tensor *t, int npad, const int64_t *pads, em_pad_mode mode,
                          const em_map_geom *g, int ndim, const int64_t *out_sizes)
{
    em_tensor *tc = em_pool_compute_input(t, kernel_name(mode, npad / 2));
    if (!tc) return NULL;
    em_call c = {.op = op, .nin = 1, .in = {tc}, .dtype = (em_dtype)tc->dtype, .arg = g, .i = {mode}};
    for (int k = 0; k < npad; k++) c.i[1 + k] = pads[k];
    c.i[7] = npad;
    em_tensor *r = em_pool_run1(&c, ndim, out_sizes);
    em_release(tc);
    return em_pool_result_dtype(r, t, NULL);
}

em_tensor *em_pad(const em_tensor *x, int npad, const int64_t *pads, em_pad_mode mode, double value)
{
    if (!x || (npad && !pads)) return em_error(EM_ERR_VALUE, "pad: argument is NULL");
    if (mode < EM_PAD_CONSTANT || mode > EM_PAD_CIRCULAR)
        return em_error(EM_ERR_NOT_IMPLEMENTED, "Unrecognised padding mode %d", (int)mode);
    if (npad % 2) return em_error(EM_ERR_SHAPE, "Padding length must be divisible by 2");
    if (npad / 2 > x->ndim || npad < 0) return em_error(EM_ERR_SHAPE, "Padding length too large");
    if (mode == EM_PAD_CONSTANT) /* in the layout x suggests, as PyTorch (channels_last stays) */
        return em_in_format(pad_constant(x, npad, pads, value), em_suggest_memory_format(x));
    if (value != 0)
        return em_error(EM_ERR_SHAPE, "Padding mode \"%s\" doesn't take in value argument", mode_name(mode));
    bool crop = false;
    for (int k = 0; k < npad; k++) crop |= pads[k] < 0;
    if (mode == EM_PAD_CIRCULAR && crop && x->ndim == npad / 2 + 2) {
        /* PyTorch crops first, then wraps around what is left */
        int64_t kept[6];
        for (int k = 0; k < npad; k++) kept[k] = pads[k] > 0 ? pads[k] : 0;
        em_tensor *inner = crop_negative(x, npad, pads);
        em_tensor *r = inner ? em_pad(inner, npad, kept, mode, 0) : NULL;
        em_release(inner);
        return r;
    }
    em_map_geom g;
    if (pad_setup(x->ndim, x->sizes, npad, pads, mode, &g)) return NULL;
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, x->sizes, x->ndim * sizeof *sizes);
    for (int j = 3 - npad / 2; j < 3; j++) sizes[x->ndim - 3 + j] = g.out[j];
    return run_pad(EM_OP_pad, x, npad, pads, mode, &g, x->ndim, sizes);
}

em_tensor *em_pad_backward(const em_tensor *grad, int npad, const int64_t *pads, em_pad_mode mode, int ndim,
                           const int64_t *input_sizes)
{
    if (!grad || !pads || !input_sizes) return em_error(EM_ERR_VALUE, "pad_backward: argument is NULL");
    if (mode <= EM_PAD_CONSTANT || mode > EM_PAD_CIRCULAR)
        return em_error(EM_ERR_VALUE, "pad_backward: mode must be reflect, replicate or circular");
    if (ndim < 1 || ndim > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "pad_backward: bad input ndim %d", ndim);
    em_map_geom g;
    if (pad_setup(ndim, input_sizes, npad, pads, mode, &g)) return NULL;
    bool fits = grad->ndim == ndim;
    for (int k = 0; fits && k < ndim; k++) {
        int j = k - ndim + 3;
        fits = grad->sizes[k] == (k >= ndim - npad / 2 ? g.out[j] : input_sizes[k]);
    }
    if (!fits)
        return em_error(EM_ERR_SHAPE, "pad_backward: grad of shape %s does not fit the padded input %s",
                        em_shape_str(grad->ndim, grad->sizes), em_shape_str(ndim, input_sizes));
    return run_pad(EM_OP_pad_backward, grad, npad, pads, mode, &g, ndim, input_sizes);
}
