/* The op layer of dropout: the fused op (mask drawn and applied in one
 * kernel, src/cpu/nnact.c) and PyTorch's CPU composites around it:
 * feature (whole-channel) dropout and alpha dropout, each as recorded ops
 * over a Bernoulli noise tensor. */
#include "../core/rng.h"
#include "../ops/dispatch.h"
#include <math.h>

static em_status check_p(double p)
{
    if (!(p >= 0 && p <= 1))
        return em_fail(EM_ERR_VALUE, "dropout probability has to be between 0 and 1, but got %g", p);
    return EM_OK;
}

em_status em_native_dropout(const em_tensor *x, double p, em_generator *g, em_tensor **out, em_tensor **mask)
{
    if (!x || !out) return em_fail(EM_ERR_VALUE, "dropout: argument is NULL");
    if (check_p(p)) return em_error_code();
    if (!em_dtype_is_float((em_dtype)x->dtype))
        return em_fail(EM_ERR_DTYPE, "\"dropout_cpu\" not implemented for '%s'", em_dtypes[x->dtype].scalar_name);
    em_device dev = x->storage->device;
    em_tensor *y = em_tensor_new(x->ndim, x->sizes, (em_dtype)x->dtype, dev);
    em_tensor *m = y ? em_tensor_new(x->ndim, x->sizes, EM_BOOL, dev) : NULL;
    if (!m) {
        em_release(y);
        return em_error_code();
    }
    int wpe = x->dtype == EM_F64 ? 2 : 1; /* words per element: 53 or 24 random bits */
    uint64_t key, offset;
    em_generator *locked = em_rng_begin(g, &key, &offset);
    em_call c = {.op = EM_OP_dropout, .nin = 1, .nout = 2, .in = {x}, .out = {y, m}, .dtype = (em_dtype)x->dtype,
                 .f = {p, p < 1 ? 1 / (1 - p) : 0}, .i = {(int64_t)key, (int64_t)offset, wpe},
                 .operand_dtypes = {x->dtype, EM_BOOL, x->dtype}};
    em_status st = em_dispatch(&c);
    em_rng_end(locked, st == EM_OK ? em_rng_counters(em_numel(x), wpe) : 0);
    if (st) {
        em_release(y), em_release(m);
        return st;
    }
    *out = y;
    if (mask) *mask = m;
    else em_release(m);
    return EM_OK;
}

/* PyTorch's CPU rule: the input itself when nothing is dropped. */
static bool passes_through(const em_tensor *x, double p, bool train) { return !train || p == 0 || em_numel(x) == 0; }

em_tensor *em_dropout(const em_tensor *x, double p, bool train, em_generator *g)
{
    if (!x) return em_error(EM_ERR_VALUE, "dropout: input is NULL");
    if (check_p(p)) return NULL;
    if (passes_through(x, p, train)) return em_retain((em_tensor *)x);
    em_tensor *y = NULL; /* PyTorch's result keeps a channels_last x's layout */
    return em_native_dropout(x, p, g, &y, NULL) ? NULL : em_in_format(y, em_suggest_memory_format(x));
}

em_status em_dropout_(em_tensor *x, double p, bool train, em_generator *g)
{
    em_tensor *y = em_dropout(x, p, train, g);
    em_status st = !y ? em_error_code() : y == x ? EM_OK : em_copy_(x, y);
    em_release(y);
    return st;
}

/* Bernoulli(1 - p) noise for x: x's shape, or (N, C, 1, ...) for features. */
static em_tensor *keep_noise(const em_tensor *x, double p, bool feature, em_generator *g)
{
    int64_t sizes[EM_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) sizes[d] = feature && d >= 2 ? 1 : x->sizes[d];
    em_tensor *noise = em_empty(x->ndim, sizes, (em_dtype)x->dtype);
    if (noise && em_bernoulli_(noise, 1 - p, g)) {
        em_release(noise);
        return NULL;
    }
    return noise;
}

/* x * noise / (1 - p), or for alpha dropout x * a noise + alpha a (noise - 1 + p)
 * (SELU's alpha': dropped values go to the SELU's negative saturation). */
static em_tensor *dropout_composite(const em_tensor *x, double p, bool train, bool feature, bool alpha,
                                    em_generator *g)
{
    if (!x) return em_error(EM_ERR_VALUE, "dropout: input is NULL");
    if (check_p(p)) return NULL;
    if (passes_through(x, p, train)) return em_retain((em_tensor *)x); /* before the rank check, as PyTorch */
    if (feature && x->ndim < 2)
        return em_error(EM_ERR_SHAPE, "Feature dropout requires at least 2 dimensions in the input");
    if (!em_dtype_is_float((em_dtype)x->dtype))
        return em_error(EM_ERR_DTYPE, "\"bernoulli_scalar_cpu_\" not implemented for '%s'", em_dtypes[x->dtype].scalar_name);
    if (p == 1) { /* zeros, with a zero gradient */
        em_tensor *zero = em_scalar_float(0);
        em_tensor *y = zero ? em_mul(x, zero) : NULL;
        em_release(zero);
        return y;
    }
    em_tensor *noise = keep_noise(x, p, feature, g), *y = NULL;
    if (!noise) return NULL;
    if (!alpha) {
        em_tensor *s = em_scalar_float(1 / (1 - p));
        em_tensor *scaled = s ? em_mul(noise, s) : NULL;
        y = scaled ? em_mul(x, scaled) : NULL;
        em_release(s), em_release(scaled);
    } else {
        const double alpha_ = 1.7580993408473766, a = 1 / sqrt((alpha_ * alpha_ * p + 1) * (1 - p));
        em_tensor *sa = em_scalar_float(a), *sb = em_scalar_float(alpha_ * a), *sc = em_scalar_float(p - 1);
        em_tensor *shifted = sc ? em_add(noise, sc, 1) : NULL;               /* noise - 1 + p */
        em_tensor *b = shifted && sb ? em_mul(shifted, sb) : NULL;           /* alpha a (noise - 1 + p) */
        em_tensor *na = sa ? em_mul(noise, sa) : NULL;
        em_tensor *xa = na ? em_mul(x, na) : NULL;
        y = xa && b ? em_add(xa, b, 1) : NULL;
        em_release(sa), em_release(sb), em_release(sc), em_release(shifted), em_release(b), em_release(na);
        em_release(xa);
    }
    em_release(noise);
    return y;
}

em_tensor *em_feature_dropout(const em_tensor *x, double p, bool train, em_generator *g)
{
    return dropout_composite(x, p, train, true, false, g);
}
em_tensor *em_alpha_dropout(const em_tensor *x, double p, bool train, em_generator *g)
{
    return dropout_composite(x, p, train, false, true, g);
}
em_tensor *em_feature_alpha_dropout(const em_tensor *x, double p, bool train, em_generator *g)
{
    return dropout_composite(x, p, train, true, true, g);
}
