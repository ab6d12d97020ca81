/* Copies, fills and the creation and reshaping functions built on them,
 * plus whole-tensor comparison (equal, allclose). */
#include "dispatch.h"
#include <math.h>
#include <stdlib.h>

/* dst[...] = src with src on another device (Note [Host reads] in
 * src/core/device.h): src broadcast, converted and made contiguous on its
 * own device, its bytes read on the host, written into a contiguous
 * tensor on dst's device, which is then copied into dst's layout there. */
static em_status copy_across(em_tensor *dst, const em_tensor *src)
{
    em_tensor *e = em_expand(src, dst->ndim, dst->sizes);
    em_tensor *c = e ? em_to_format(e, (em_dtype)dst->dtype, EM_CONTIGUOUS_FORMAT, false) : NULL;
    em_tensor *h = c ? em_host_tensor(c) : NULL;
    em_tensor *d = h ? em_tensor_new(dst->ndim, dst->sizes, (em_dtype)dst->dtype, dst->storage->device) : NULL;
    em_device dev = dst->storage->device;
    em_status st = d ? em_device_get(dev)->copy_from_host(dev, em_tensor_data(d), em_tensor_data(h),
                                                            (size_t)em_numel(d) * em_dtypes[d->dtype].size)
                     : em_error_code();
    if (!st) st = em_copy_(dst, d);
    em_release(e);
    em_release(c);
    em_release(h);
    em_release(d);
    return st;
}

em_tensor *em_to_device(const em_tensor *t, em_device dev)
{
    if (EM_NULL(t) || !em_device_get(dev)) return NULL;
    if (em_same_device(t->storage->device, dev)) return em_retain((em_tensor *)t);
    int64_t strides[EM_MAX_DIMS];
    if (em_tensor_is_dense(t)) memcpy(strides, t->strides, t->ndim * sizeof *strides);
    else em_contiguous_strides(t->ndim, t->sizes, strides);
    em_tensor *r = em_tensor_new_strided(t->ndim, t->sizes, strides, (em_dtype)t->dtype, dev);
    if (r && em_copy_(r, t)) {
        em_release(r);
        return NULL;
    }
    return r;
}

em_status em_copy_(em_tensor *dst, const em_tensor *src)
{
    if (!dst || !src) return em_fail(EM_ERR_VALUE, "copy_: argument is NULL");
    int64_t shape[EM_MAX_DIMS];
    int n = em_broadcast_shapes(dst->ndim, dst->sizes, src->ndim, src->sizes, shape, "copy_");
    if (n < 0) return em_error_code();
    if (n != dst->ndim || memcmp(shape, dst->sizes, n * sizeof *shape))
        return em_fail(EM_ERR_SHAPE, "copy_: the source of shape %s cannot be broadcast to the destination of shape %s",
                       em_shape_str(src->ndim, src->sizes), em_shape_str(dst->ndim, dst->sizes));
    if (em_check_overlap(dst, src, "copy_")) return em_error_code();
    if (!em_same_device(dst->storage->device, src->storage->device)) return copy_across(dst, src);
    em_call c = {.op = EM_OP_copy, .nin = 1, .nout = 1, .dtype = (em_dtype)dst->dtype};
    c.out[0] = dst;
    c.in[0] = src;
    c.operand_dtypes[0] = c.operand_dtypes[1] = dst->dtype;
    em_status st = em_dispatch(&c);
    return st;
}

static em_status fill(em_tensor *t, double value, double imag, int64_t ivalue)
{
    if (!t) return em_fail(EM_ERR_VALUE, "fill_: tensor is NULL");
    if (em_check_overlap(t, NULL, "fill_")) return em_error_code();
    em_call c = {.op = EM_OP_fill, .nin = 1, .nout = 1, .dtype = (em_dtype)t->dtype};
    c.out[0] = t;
    c.in[0] = t;
    c.operand_dtypes[0] = c.operand_dtypes[1] = t->dtype;
    c.f[0] = value;
    c.f[1] = imag;
    c.i[0] = ivalue;
    em_status st = em_dispatch(&c);
    return st;
}

em_status em_fill_(em_tensor *t, double value) { return fill(t, value, 0, (int64_t)value); }
em_status em_fill_complex_(em_tensor *t, double real, double imag)
{
    if (t && !em_dtype_is_complex((em_dtype)t->dtype) && imag != 0)
        return em_fail(EM_ERR_RUNTIME, "value cannot be converted to type %s without overflow",
                       em_dtypes[t->dtype].name);
    return fill(t, real, imag, (int64_t)real);
}
em_status em_zero_(em_tensor *t) { return fill(t, 0, 0, 0); }

/* A new tensor made by `make`, filled; NULL (and nothing leaked) on error. */
static em_tensor *filled(em_tensor *t, double value)
{
    if (t && em_fill_(t, value)) {
        em_release(t);
        return NULL;
    }
    return t;
}

em_tensor *em_zeros(int ndim, const int64_t *sizes, em_dtype dt) { return filled(em_empty(ndim, sizes, dt), 0); }
em_tensor *em_ones(int ndim, const int64_t *sizes, em_dtype dt) { return filled(em_empty(ndim, sizes, dt), 1); }
em_tensor *em_full(int ndim, const int64_t *sizes, double v, em_dtype dt) { return filled(em_empty(ndim, sizes, dt), v); }

em_tensor *em_empty_like(const em_tensor *t, em_dtype dt)
{
    if (EM_NULL(t)) return NULL;
    if (dt == EM_DTYPE_NONE) dt = (em_dtype)t->dtype;
    if (!em_dtype_valid(dt)) return em_error(EM_ERR_DTYPE, "empty_like: invalid dtype %d", (int)dt);
    return em_tensor_new(t->ndim, t->sizes, dt, t->storage->device);
}
em_tensor *em_zeros_like(const em_tensor *t, em_dtype dt) { return filled(em_empty_like(t, dt), 0); }
em_tensor *em_ones_like(const em_tensor *t, em_dtype dt) { return filled(em_empty_like(t, dt), 1); }
em_tensor *em_full_like(const em_tensor *t, double v, em_dtype dt) { return filled(em_empty_like(t, dt), v); }

/* A contiguous copy of t in dtype dt. */
static em_tensor *copy_as(const em_tensor *t, em_dtype dt)
{
    em_tensor *r = em_tensor_new(t->ndim, t->sizes, dt, t->storage->device);
    if (r && em_copy_(r, t)) {
        em_release(r);
        return NULL;
    }
    return r;
}

em_tensor *em_contiguous(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    return em_is_contiguous(t) ? em_retain((em_tensor *)t) : copy_as(t, (em_dtype)t->dtype);
}

em_tensor *em_clone(const em_tensor *t) { return EM_NULL(t) ? NULL : copy_as(t, (em_dtype)t->dtype); }

em_tensor *em_to_dtype(const em_tensor *t, em_dtype dt)
{
    if (EM_NULL(t)) return NULL;
    if (!em_dtype_valid(dt)) return em_error(EM_ERR_DTYPE, "to: invalid dtype %d", (int)dt);
    return dt == t->dtype ? em_retain((em_tensor *)t) : copy_as(t, dt);
}

em_tensor *em_reshape(const em_tensor *t, int ndim, const int64_t *sizes)
{
    int64_t ns[EM_MAX_DIMS], st[EM_MAX_DIMS];
    if (EM_NULL(t) || EM_NULL_N(ndim, sizes)) return NULL;
    if (ndim < 0 || ndim > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "reshape: too many dims (%d)", ndim);
    if (em_infer_size(ndim, sizes, em_numel(t), ns, "reshape")) return NULL;
    if (em_view_possible(t, ndim, ns, st)) return em_tensor_view(t, ndim, ns, st, t->offset);
    em_tensor *c = em_clone(t);
    if (!c) return NULL;
    em_tensor *r = em_view(c, ndim, ns);
    em_release(c);
    return r;
}

em_tensor *em_flatten(const em_tensor *t, int start_dim, int end_dim)
{
    if (EM_NULL(t)) return NULL;
    int s = em_wrap_dim(start_dim, t->ndim, "flatten"), e = em_wrap_dim(end_dim, t->ndim, "flatten");
    if (s < 0 || e < 0) return NULL;
    if (s > e) return em_error(EM_ERR_VALUE, "flatten() has invalid args: start_dim cannot come after end_dim");
    if (t->ndim == 0) {
        int64_t one = 1;
        return em_reshape(t, 1, &one);
    }
    if (s == e) return em_tensor_view(t, t->ndim, t->sizes, t->strides, t->offset);
    int64_t shape[EM_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < s; i++) shape[n++] = t->sizes[i];
    shape[n] = 1;
    for (int i = s; i <= e; i++) shape[n] *= t->sizes[i];
    n++;
    for (int i = e + 1; i < t->ndim; i++) shape[n++] = t->sizes[i];
    return em_reshape(t, n, shape);
}

/* ---- whole-tensor comparison ----------------------------------------- */
/* Both tensors broadcast together and converted to contiguous float64. */
static em_status as_f64_pair(const em_tensor *a, const em_tensor *b, em_tensor **fa, em_tensor **fb,
                             const char *op)
{
    int64_t shape[EM_MAX_DIMS];
    int n = em_broadcast_shapes(a->ndim, a->sizes, b->ndim, b->sizes, shape, op);
    if (n < 0) return em_error_code();
    *fa = em_tensor_new(n, shape, EM_F64, EM_DEVICE_CPU);
    *fb = em_tensor_new(n, shape, EM_F64, EM_DEVICE_CPU);
    if (!*fa || !*fb || em_copy_(*fa, a) || em_copy_(*fb, b)) {
        em_release(*fa);
        em_release(*fb);
        return em_error_code();
    }
    return EM_OK;
}

bool em_equal(const em_tensor *a, const em_tensor *b)
{
    if (EM_NULL(a) || EM_NULL(b)) return false;
    if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, a->ndim * sizeof *a->sizes)) return false;
    em_tensor *fa, *fb;
    if (as_f64_pair(a, b, &fa, &fb, "equal")) return false;
    const double *x = (const double *)em_tensor_data(fa), *y = (const double *)em_tensor_data(fb);
    bool eq = true;
    for (int64_t i = 0, n = em_numel(fa); i < n && eq; i++) eq = x[i] == y[i];
    em_release(fa);
    em_release(fb);
    return eq;
}

em_status em_allclose(const em_tensor *a, const em_tensor *b, double rtol, double atol, bool equal_nan, bool *result)
{
    em_tensor *fa, *fb;
    if (EM_NULL(a) || EM_NULL(b) || EM_NULL(result)) return em_error_code();
    if (as_f64_pair(a, b, &fa, &fb, "allclose")) return em_error_code();
    const double *x = (const double *)em_tensor_data(fa), *y = (const double *)em_tensor_data(fb);
    bool ok = true;
    for (int64_t i = 0, n = em_numel(fa); i < n && ok; i++) {
        if (isnan(x[i]) || isnan(y[i]))
            ok = equal_nan && isnan(x[i]) && isnan(y[i]);
        else
            ok = x[i] == y[i] || fabs(x[i] - y[i]) <= atol + rtol * fabs(y[i]);
    }
    em_release(fa);
    em_release(fb);
    *result = ok;
    return EM_OK;
}
