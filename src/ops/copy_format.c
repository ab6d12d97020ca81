/* Copies that choose their layout (Note [Memory formats] in core.h):
 * clone/contiguous/to with memory_format=, and empty tensors in a format. */
#include "dispatch.h"

em_tensor *em_empty_format(int ndim, const int64_t *sizes, em_dtype dt, em_memory_format f)
{
    int64_t strides[EM_MAX_DIMS];
    if (em_check_sizes(ndim, sizes, dt, "empty") || em_format_strides(ndim, sizes, f, strides)) return NULL;
    return em_tensor_new_strided(ndim, sizes, strides, dt, EM_DEVICE_CPU);
}

em_tensor *em_empty_like_format(const em_tensor *t, em_dtype dt, em_memory_format f)
{
    if (EM_NULL(t)) return NULL;
    if (dt == EM_DTYPE_NONE) dt = (em_dtype)t->dtype;
    if (!em_dtype_valid(dt)) return em_error(EM_ERR_DTYPE, "empty_like: invalid dtype %d", (int)dt);
    int64_t strides[EM_MAX_DIMS];
    if (f != EM_PRESERVE_FORMAT) {
        if (em_format_strides(t->ndim, t->sizes, f, strides)) return NULL;
    } else if (em_tensor_is_dense(t)) {
        memcpy(strides, t->strides, t->ndim * sizeof *strides);
    } else {
        em_dense_strides_like(t->ndim, t->sizes, t->strides, strides);
    }
    return em_tensor_new_strided(t->ndim, t->sizes, strides, dt, t->storage->device);
}

/* A copy of t in dtype dt laid out in f; recorded by autograd as copy_. */
static em_tensor *copy_in(const em_tensor *t, em_dtype dt, em_memory_format f)
{
    em_tensor *r = em_empty_like_format(t, dt, f);
    if (r && em_copy_(r, t)) {
        em_release(r);
        return NULL;
    }
    return r;
}

em_tensor *em_clone_format(const em_tensor *t, em_memory_format f)
{
    return EM_NULL(t) ? NULL : copy_in(t, EM_DTYPE_NONE, f);
}

em_tensor *em_contiguous_format(const em_tensor *t, em_memory_format f)
{
    if (EM_NULL(t)) return NULL;
    if (em_is_contiguous_as(t, f)) return em_retain((em_tensor *)t); /* preserve: when contiguous, as PyTorch */
    if (f == EM_PRESERVE_FORMAT)
        return em_error(EM_ERR_RUNTIME, "preserve memory format is unsupported by the contiguous operator");
    return copy_in(t, EM_DTYPE_NONE, f);
}

em_tensor *em_to_format(const em_tensor *t, em_dtype dt, em_memory_format f, bool copy)
{
    if (EM_NULL(t)) return NULL;
    if (dt == EM_DTYPE_NONE) dt = (em_dtype)t->dtype;
    if (dt == t->dtype && !copy && (f == EM_PRESERVE_FORMAT || f == em_suggest_memory_format(t)))
        return em_retain((em_tensor *)t);
    return copy_in(t, dt, f);
}

em_tensor *em_in_format(em_tensor *r, em_memory_format f)
{
    if (!r || (f != EM_CHANNELS_LAST && f != EM_CHANNELS_LAST_3D) || r->ndim != (f == EM_CHANNELS_LAST ? 4 : 5))
        return r;
    em_tensor *c = em_contiguous_format(r, f);
    em_release(r);
    return c;
}
