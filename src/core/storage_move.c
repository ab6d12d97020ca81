/* Moving a storage's bytes to memory the caller provides (shared memory for
 * Tensor.share_memory_), and recognising such storages afterwards. */
#include "internal.h"

size_t em_storage_nbytes(const em_tensor *t) { return EM_NULL(t) ? 0 : t->storage->nbytes; }

void *em_storage_data(const em_tensor *t) { return EM_NULL(t) ? NULL : t->storage->data; }

void *em_storage_context(const em_tensor *t, void (*deleter)(void *ctx))
{
    if (EM_NULL(t)) return NULL;
    return deleter && t->storage->deleter == deleter ? t->storage->deleter_ctx : NULL;
}

em_status em_storage_move_(em_tensor *t, void *data, size_t nbytes, void (*deleter)(void *ctx), void *ctx)
{
    if (EM_NULL(t) || EM_NULL(data)) return em_error_code();
    em_storage *s = t->storage;
    if (s->device.type != EM_CPU) return em_fail(EM_ERR_DEVICE, "share_memory_: only CPU storages can be moved");
    if (nbytes < s->nbytes)
        return em_fail(EM_ERR_VALUE, "share_memory_: the new memory holds %zu bytes, the storage %zu", nbytes,
                       s->nbytes);
    if (s->nbytes) memcpy(data, s->data, s->nbytes);
    if (s->deleter)
        s->deleter(s->deleter_ctx);
    else if (!s->external)
        em_cpu_free(s->data, s->nbytes);
    s->data = data;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    s->external = true;
    return EM_OK;
}
