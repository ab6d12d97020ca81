/* Storage and tensor lifetime, accessors, and the creation functions that
 * need no kernel (empty, from a buffer, scalars). */
#include "device.h"
#include <complex.h>
#include <stdlib.h>

/* ---- storage ---------------------------------------------------------- */
em_storage *em_storage_new(size_t nbytes, em_device dev)
{
    const em_device_impl *impl = em_device_get(dev);
    if (!impl) return NULL;
    em_storage *s = malloc(sizeof *s);
    if (!s) return em_error(EM_ERR_MEMORY, "out of memory allocating a storage");
    if (impl->alloc(dev, nbytes, &s->data)) {
        free(s);
        return NULL;
    }
    if (em_profiler_on()) em_profile_memory((int64_t)nbytes);
    s->refcount = 1;
    s->nbytes = nbytes;
    s->device = dev;
    s->version = 0;
    s->deleter = NULL;
    s->deleter_ctx = NULL;
    s->external = false;
    return s;
}

void em_storage_release(em_storage *s)
{
    if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (em_profiler_on() && !s->external) em_profile_memory(-(int64_t)s->nbytes);
    if (s->deleter)
        s->deleter(s->deleter_ctx);
    else if (!s->external)
        em_device_get(s->device)->free(s->device, s->data, s->nbytes);
    free(s);
}

/* ---- tensor ----------------------------------------------------------- */
em_tensor *em_retain(em_tensor *t)
{
    if (t) __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
    return t;
}

const em_autograd_hooks *em_autograd;

void em_release(em_tensor *t)
{
    if (!t || __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    if (t->autograd) em_autograd->free_meta(t->autograd);
    em_storage_release(t->storage);
    em_tensor *base = t->base;
    free(t);
    if (base) {
        __atomic_sub_fetch(&base->nviews, 1, __ATOMIC_RELAXED);
        em_release(base); /* not recursive beyond one step: a base is no view */
    }
}

void *em_binding(const em_tensor *t) { return EM_NULL(t) ? NULL : t->binding; }
void em_set_binding(em_tensor *t, void *obj)
{
    if (!EM_NULL(t)) t->binding = obj;
}

/* inference: whether the new tensor is an inference tensor (EM_FLAG_INFERENCE) */
static em_tensor *tensor_alloc(em_storage *s, int ndim, const int64_t *sizes, const int64_t *strides,
                               int64_t offset, em_dtype dt, bool inference)
{
    em_tensor *t = malloc(sizeof *t);
    if (!t) return em_error(EM_ERR_MEMORY, "out of memory allocating a tensor");
    t->refcount = 1;
    t->storage = s;
    t->offset = offset;
    t->ndim = ndim;
    t->dtype = (int8_t)dt;
    t->flags = inference ? EM_FLAG_INFERENCE : 0;
    t->autograd = NULL;
    t->binding = NULL;
    t->base = NULL;
    t->nviews = 0;
    t->view_version = 0;
    if (ndim) {
        memcpy(t->sizes, sizes, ndim * sizeof *sizes);
        memcpy(t->strides, strides, ndim * sizeof *strides);
    }
    return t;
}

em_tensor *em_tensor_new(int ndim, const int64_t *sizes, em_dtype dt, em_device dev)
{
    /* shapes computed from huge arguments end here: refuse a wrapped size */
    int64_t strides[EM_MAX_DIMS], bytes = (int64_t)em_dtypes[dt].size;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return em_error(EM_ERR_SHAPE, "Trying to create tensor with negative dimension %lld: %s",
                            (long long)sizes[i], em_shape_str(ndim, sizes));
        if (em_mul_overflow(bytes, sizes[i], &bytes))
            return em_error(EM_ERR_MEMORY, "Storage size calculation overflowed with sizes=%s",
                            em_shape_str(ndim, sizes));
    }
    em_contiguous_strides(ndim, sizes, strides);
    em_storage *s = em_storage_new(em_shape_numel(ndim, sizes) * em_dtypes[dt].size, dev);
    if (!s) return NULL;
    em_tensor *t = tensor_alloc(s, ndim, sizes, strides, 0, dt, em_inference_mode());
    if (!t) em_storage_release(s);
    return t;
}

em_tensor *em_tensor_view(const em_tensor *base, int ndim, const int64_t *sizes, const int64_t *strides,
                          int64_t offset)
{
    return em_tensor_view_as(base, ndim, sizes, strides, offset, (em_dtype)base->dtype);
}

/* A view; its lazy bits are base's with `toggle` flipped (Note [Conjugate bit]). */
static em_tensor *make_view(const em_tensor *base, int ndim, const int64_t *sizes, const int64_t *strides,
                            int64_t offset, em_dtype dt, uint8_t toggle)
{
    em_tensor *t = tensor_alloc(base->storage, ndim, sizes, strides, offset, dt, (base->flags & EM_FLAG_INFERENCE) != 0);
    if (!t) return NULL;
    __atomic_add_fetch(&base->storage->refcount, 1, __ATOMIC_RELAXED);
    t->flags |= (base->flags & (EM_FLAG_MULTI_VIEW | EM_LAZY_BITS)) ^ toggle;
    em_tensor *root = em_view_root(base);
    t->base = em_retain(root);
    __atomic_add_fetch(&root->nviews, 1, __ATOMIC_RELAXED);
    t->view_version = em_version(t);
    if ((base->autograd || root->autograd) && em_grad_mode() && em_autograd->record_view(base, t)) {
        em_release(t);
        return NULL;
    }
    return t;
}

em_tensor *em_tensor_view_as(const em_tensor *base, int ndim, const int64_t *sizes, const int64_t *strides,
                             int64_t offset, em_dtype dt)
{
    return make_view(base, ndim, sizes, strides, offset, dt, 0);
}

em_tensor *em_tensor_toggle_view(const em_tensor *t, uint8_t bits)
{
    return make_view(t, t->ndim, t->sizes, t->strides, t->offset, (em_dtype)t->dtype, bits & EM_LAZY_BITS);
}

em_tensor *em_tensor_alias(const em_tensor *t)
{
    em_tensor *r = tensor_alloc(t->storage, t->ndim, t->sizes, t->strides, t->offset, (em_dtype)t->dtype,
                                (t->flags & EM_FLAG_INFERENCE) != 0);
    if (r) {
        __atomic_add_fetch(&t->storage->refcount, 1, __ATOMIC_RELAXED);
        r->flags |= t->flags & EM_LAZY_BITS;
    }
    return r;
}

em_tensor *em_tensor_new_like(const em_tensor *t, em_dtype dt)
{
    if (em_is_contiguous(t) || !em_tensor_is_dense(t) || em_numel(t) == 0) /* empty: no layout to keep */
        return em_tensor_new(t->ndim, t->sizes, dt, t->storage->device);
    /* dense but permuted: allocate the same layout over a fresh storage */
    int64_t bytes; /* (0 for an empty t, whose sizes - 1 are negative) */
    if (em_storage_extent(t->ndim, t->sizes, t->strides, 0, dt, &bytes, "empty_like")) return NULL;
    em_storage *s = em_storage_new((size_t)bytes, t->storage->device);
    if (!s) return NULL;
    em_tensor *r = tensor_alloc(s, t->ndim, t->sizes, t->strides, 0, dt, em_inference_mode());
    if (!r) em_storage_release(s);
    return r;
}

/* ---- accessors -------------------------------------------------------- */
/* Each returns its header's error value for a NULL t (Note [NULL arguments]). */
int em_ndim(const em_tensor *t) { return EM_NULL(t) ? -1 : t->ndim; }
const int64_t *em_sizes(const em_tensor *t) { return EM_NULL(t) ? NULL : t->sizes; }
const int64_t *em_strides(const em_tensor *t) { return EM_NULL(t) ? NULL : t->strides; }
int64_t em_numel(const em_tensor *t) { return EM_NULL(t) ? -1 : em_shape_numel(t->ndim, t->sizes); }
int64_t em_storage_offset(const em_tensor *t) { return EM_NULL(t) ? -1 : t->offset; }
em_dtype em_dtype_of(const em_tensor *t) { return EM_NULL(t) ? EM_DTYPE_NONE : (em_dtype)t->dtype; }
em_device em_device_of(const em_tensor *t)
{
    return EM_NULL(t) ? (em_device){-1, -1} : t->storage->device;
}
void *em_data_ptr(const em_tensor *t) { return EM_NULL(t) || !t->storage->data ? NULL : em_tensor_data(t); } /* meta: NULL */
uint64_t em_version(const em_tensor *t)
{
    return EM_NULL(t) ? 0 : __atomic_load_n(&t->storage->version, __ATOMIC_RELAXED);
}
bool em_is_same_storage(const em_tensor *a, const em_tensor *b)
{
    return !EM_NULL(a) && !EM_NULL(b) && a->storage == b->storage;
}
bool em_is_wrapped_number(const em_tensor *t) { return !EM_NULL(t) && (t->flags & EM_FLAG_WRAPPED_NUMBER); }

int64_t em_size(const em_tensor *t, int dim)
{
    if (EM_NULL(t)) return -1;
    int d = em_wrap_dim(dim, t->ndim, "size");
    if (d < 0) return -1;
    return t->ndim ? t->sizes[d] : 1;
}

/* Byte offset of element `index` from element 0; -1 with an IndexError. */
static int64_t element_offset(const em_tensor *t, const int64_t *index, const char *op)
{
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (index[i] < 0 || index[i] >= t->sizes[i])
            return em_fail(EM_ERR_INDEX, "%s: index %lld is out of bounds for dimension %d with size %lld", op,
                           (long long)index[i], i, (long long)t->sizes[i]), -1;
        off += index[i] * t->strides[i];
    }
    return off * (int64_t)em_dtypes[t->dtype].size;
}

int em_item(const em_tensor *t, double *out)
{
    if (EM_NULL(t) || EM_NULL(out)) return em_error_code();
    if (em_numel(t) != 1)
        return em_fail(EM_ERR_VALUE, "item: a Tensor with %lld elements cannot be converted to Scalar",
                       (long long)em_numel(t));
    em_tensor *hold;
    const char *p = em_host_data(t, &hold);
    if (!p) return em_error_code();
    *out = em_load_f64(p, (em_dtype)t->dtype); /* every stride is irrelevant */
    em_release(hold);
    if (t->flags & EM_FLAG_NEG) *out = -*out; /* (a conjugate keeps the real part) */
    return EM_OK;
}

int em_item_complex(const em_tensor *t, double *re, double *im)
{
    if (EM_NULL(t) || EM_NULL(re) || EM_NULL(im)) return em_error_code();
    double v;
    int st = em_item(t, &v);
    if (st) return st;
    em_tensor *hold;
    const char *p = em_host_data(t, &hold);
    if (!p) return em_error_code();
    double _Complex z = em_load_c128(p, (em_dtype)t->dtype);
    em_release(hold);
    *re = v, *im = t->flags & EM_FLAG_CONJ ? -cimag(z) : cimag(z); /* (v: the real part, bits applied) */
    if (t->flags & EM_FLAG_NEG) *im = -*im;
    return EM_OK;
}

int em_get(const em_tensor *t, const int64_t *index, double *out)
{
    if (EM_NULL(t) || EM_NULL_N(t->ndim, index) || EM_NULL(out)) return em_error_code();
    int64_t off = element_offset(t, index, "get");
    em_tensor *hold;
    const char *p = off < 0 ? NULL : em_host_data(t, &hold);
    if (!p) return em_error_code();
    *out = t->flags & EM_FLAG_NEG ? -em_load_f64(p + off, (em_dtype)t->dtype) : em_load_f64(p + off, (em_dtype)t->dtype);
    em_release(hold);
    return EM_OK;
}

int em_set(em_tensor *t, const int64_t *index, double value)
{
    if (EM_NULL(t) || EM_NULL_N(t->ndim, index)) return em_error_code();
    int64_t off = element_offset(t, index, "set");
    if (off < 0) return em_error_code();
    char v[16]; /* the element, written through the device */
    em_store_f64(v, (em_dtype)t->dtype, t->flags & EM_FLAG_NEG ? -value : value); /* (imag 0: its own conjugate) */
    em_device dev = t->storage->device;
    if (em_device_get(dev)->copy_from_host(dev, em_tensor_data(t) + off, v, em_dtypes[t->dtype].size))
        return em_error_code();
    em_bump_version(t);
    return EM_OK;
}

/* ---- creation without kernels ----------------------------------------- */
em_tensor *em_empty(int ndim, const int64_t *sizes, em_dtype dt)
{
    if (em_check_sizes(ndim, sizes, dt, "empty")) return NULL;
    return em_tensor_new(ndim, sizes, dt, em_factory_device());
}

em_tensor *em_empty_strided(int ndim, const int64_t *sizes, const int64_t *strides, em_dtype dt)
{
    if (em_check_sizes(ndim, sizes, dt, "empty_strided") || EM_NULL_N(ndim, strides)) return NULL;
    return em_tensor_new_strided(ndim, sizes, strides, dt, em_factory_device());
}

em_tensor *em_tensor_new_strided(int ndim, const int64_t *sizes, const int64_t *strides, em_dtype dt, em_device dev)
{
    int64_t bytes;
    if (em_storage_extent(ndim, sizes, strides, 0, dt, &bytes, "empty_strided")) return NULL;
    em_storage *s = em_storage_new((size_t)bytes, dev);
    if (!s) return NULL;
    em_tensor *t = tensor_alloc(s, ndim, sizes, strides, 0, dt, em_inference_mode());
    if (!t) em_storage_release(s);
    return t;
}

em_tensor *em_tensor_scalar(double value, em_dtype dt)
{
    if (!em_dtype_valid(dt)) return em_error(EM_ERR_DTYPE, "scalar_tensor: invalid dtype %d", (int)dt);
    em_tensor *t = em_tensor_new(0, NULL, dt, EM_DEVICE_CPU);
    if (t) em_store_f64(em_tensor_data(t), dt, value);
    return t;
}

static em_tensor *wrapped(em_tensor *t)
{
    if (t) t->flags |= EM_FLAG_WRAPPED_NUMBER;
    return t;
}
em_tensor *em_scalar_float(double value) { return wrapped(em_tensor_scalar(value, EM_F64)); }
em_tensor *em_scalar_bool(bool value) { return wrapped(em_tensor_scalar(value, EM_BOOL)); }
em_tensor *em_scalar_complex(double real, double imag)
{
    em_tensor *t = em_tensor_new(0, NULL, EM_C128, EM_DEVICE_CPU);
    if (t) em_store_c128(em_tensor_data(t), EM_C128, CMPLX(real, imag));
    return wrapped(t);
}
em_tensor *em_scalar_int(int64_t value)
{
    em_tensor *t = em_tensor_new(0, NULL, EM_I64, EM_DEVICE_CPU); /* not via double: exact */
    if (t) *(int64_t *)em_tensor_data(t) = value;
    return wrapped(t);
}

em_tensor *em_from_data(const void *data, int ndim, const int64_t *sizes, em_dtype dt)
{
    if (em_check_sizes(ndim, sizes, dt, "from_data")) return NULL;
    if (em_shape_numel(ndim, sizes) && EM_NULL(data)) return NULL;
    em_device dev = em_factory_device();
    em_tensor *t = em_tensor_new(ndim, sizes, dt, dev);
    if (t && data && em_device_get(dev)->copy_from_host(dev, em_tensor_data(t), data,
                                                         em_shape_numel(ndim, sizes) * em_dtypes[dt].size)) {
        em_release(t);
        return NULL;
    }
    return t;
}

em_tensor *em_from_blob(void *data, int ndim, const int64_t *sizes, const int64_t *strides, em_dtype dt,
                        void (*deleter)(void *ctx), void *ctx)
{
    if (em_check_sizes(ndim, sizes, dt, "from_blob")) return NULL;
    int64_t st[EM_MAX_DIMS], bytes;
    if (!strides) {
        em_contiguous_strides(ndim, sizes, st);
        strides = st;
    }
    if (em_storage_extent(ndim, sizes, strides, 0, dt, &bytes, "from_blob")) return NULL;
    if (bytes && EM_NULL(data)) return NULL;
    em_storage *s = malloc(sizeof *s);
    if (!s) return em_error(EM_ERR_MEMORY, "out of memory allocating a storage");
    s->refcount = 1;
    s->data = data;
    s->nbytes = (size_t)bytes;
    s->device = EM_DEVICE_CPU;
    s->version = 0;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    s->external = true;
    em_tensor *t = tensor_alloc(s, ndim, sizes, strides, 0, dt, em_inference_mode());
    if (!t) {
        free(s);
        return NULL;
    }
    return t;
}
