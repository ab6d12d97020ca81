/* The meta device (PyTorch's): a storage has a byte size and no data, so a
 * tensor has sizes, strides and a dtype only. The op layer checks arguments
 * and allocates outputs before it dispatches (Note [Dispatch]), so every
 * op's result metadata is right by the time its kernel would run: the meta
 * kernel of every slot does nothing, except for the ops whose result's
 * shape depends on the data (the CPU kernel sizes it): those fail, as in
 * PyTorch. Copies into a meta tensor do nothing; copies out of one fail. */
#include "../ops/dispatch.h"

static em_status meta_alloc(em_device dev, size_t nbytes, void **out)
{
    *out = NULL;
    return EM_OK;
}

static void meta_free(em_device dev, void *p, size_t nbytes) {}

static em_status meta_nothing(em_device dev, void *dst, const void *src, size_t nbytes) { return EM_OK; }

static em_status meta_copy_out(em_device dev, void *host, const void *src, size_t nbytes)
{
    return em_fail(EM_ERR_NOT_IMPLEMENTED, "Cannot copy out of meta tensor; no data!");
}

static em_status meta_memset(em_device dev, void *p, int byte, size_t nbytes) { return EM_OK; }
static em_status meta_synchronize(em_device dev) { return EM_OK; }
em_status cpu_meshgrid(const em_call *c); /* src/cpu/shape.c */

static em_status meta_kernel(const em_call *c)
{
    switch (c->op) {
    case EM_OP_nonzero: case EM_OP_masked_select: case EM_OP_unique: case EM_OP_unique_consecutive:
    case EM_OP_bincount: case EM_OP_one_hot:
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "Could not run 'aten::%s' with arguments from the 'Meta' backend: "
                       "its result's shape depends on the data", em_ops[c->op].name);
    case EM_OP_repeat_interleave:
        return em_fail(EM_ERR_RUNTIME, "cannot repeat_interleave a meta tensor without output_size");
    case EM_OP_meshgrid: return cpu_meshgrid(c); /* makes its results as views: reads no data */
    default: return EM_OK;
    }
}

const em_device_impl em_meta_device = {
    .name = "meta",
    .alloc = meta_alloc,
    .free = meta_free,
    .copy_to_host = meta_copy_out,
    .copy_from_host = meta_nothing,
    .copy_device = meta_nothing,
    .memset = meta_memset,
    .synchronize = meta_synchronize,
    .kernels = {
#define EM_OP(name, flags) [EM_OP_##name] = meta_kernel,
#define EM_COMPOSITE(name, flags)
#include "ember/ops.def"
#undef EM_OP
#undef EM_COMPOSITE
    },
};
