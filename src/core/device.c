/* The device registry, host reads through a device (Note [Host reads] in
 * device.h), and the thread-local device that factories create on. */
#include "device.h"
#include <stdio.h>

const em_device_impl *em_device_lookup(em_device d)
{
    switch (d.type) {
    case EM_CPU: return &em_cpu_device;
    case EM_META: return &em_meta_device;
#ifdef EM_WITH_CUDA
    case EM_CUDA: return &em_cuda_device;
#endif
    default: break;
    }
    return em_error(EM_ERR_DEVICE, "device %s is not available in this build", em_device_str(d));
}

const char *em_device_str(em_device d)
{
    static _Thread_local char buf[2][24];
    static _Thread_local int next;
    char *s = buf[next++ & 1];
    static const char *names[EM_DEVICE_TYPE_COUNT] = {[EM_CPU] = "cpu", [EM_CUDA] = "cuda", [EM_META] = "meta"};
    const char *name = d.type >= 0 && d.type < EM_DEVICE_TYPE_COUNT ? names[d.type] : "unknown";
    if (d.type == EM_CUDA && d.index >= 0) snprintf(s, sizeof buf[0], "%s:%d", name, d.index);
    else snprintf(s, sizeof buf[0], "%s", name);
    return s;
}

em_tensor *em_host_tensor(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    const em_device_impl *dev = em_device_get(t->storage->device);
    if (!dev) return NULL;
    if (dev->host_addressable) return em_retain((em_tensor *)t);
    /* copy the bytes t reaches, [offset, last element], into a CPU storage */
    int64_t size = (int64_t)em_dtypes[t->dtype].size, last = 0, n = em_numel(t);
    for (int i = 0; i < t->ndim; i++) last += n ? (t->sizes[i] - 1) * t->strides[i] : 0;
    size_t nbytes = n ? (size_t)((last + 1) * size) : 0;
    em_tensor *h = em_tensor_new(1, (int64_t[]){(int64_t)nbytes}, EM_U8, EM_DEVICE_CPU);
    if (!h) return NULL;
    em_status st = nbytes ? dev->copy_to_host(t->storage->device, h->storage->data,
                                              (char *)t->storage->data + t->offset * size, nbytes)
                          : EM_OK;
    em_tensor *r = st ? NULL : em_tensor_view_as(h, t->ndim, t->sizes, t->strides, 0, (em_dtype)t->dtype);
    if (r) r->flags |= t->flags & EM_LAZY_BITS; /* the same values: conj/neg bits too (Note [Conjugate bit]) */
    em_release(h);
    return r;
}

static _Thread_local em_device factory_device = {EM_CPU, 0};

em_device em_set_factory_device(em_device d)
{
    em_device old = factory_device;
    factory_device = d;
    return old;
}

em_device em_factory_device(void) { return factory_device; }
