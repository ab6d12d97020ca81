/* The CPU device: host memory from the core's allocator (src/core/alloc.c),
 * memcpy copies, and one kernel per op of the table. A missing cpu_<op> is a
 * link error, so no op can be declared without a CPU kernel. */
#include "cpu.h"

static em_status host_alloc(em_device dev, size_t nbytes, void **out)
{
    *out = em_cpu_alloc(nbytes);
    return *out ? EM_OK : em_fail(EM_ERR_MEMORY, "out of memory: failed to allocate %zu bytes", nbytes);
}

static void host_free(em_device dev, void *p, size_t nbytes) { em_cpu_free(p, nbytes); }

static em_status host_copy(em_device dev, void *dst, const void *src, size_t nbytes)
{
    memcpy(dst, src, nbytes);
    return EM_OK;
}

static em_status host_memset(em_device dev, void *p, int byte, size_t nbytes)
{
    memset(p, byte, nbytes);
    return EM_OK;
}

static em_status host_synchronize(em_device dev) { return EM_OK; } /* kernels return when done */

#define EM_COMPOSITE(name, flags)
const em_device_impl em_cpu_device = {
    .name = "cpu",
    .alloc = host_alloc,
    .free = host_free,
    .copy_to_host = host_copy,
    .copy_from_host = host_copy,
    .copy_device = host_copy,
    .memset = host_memset,
    .synchronize = host_synchronize,
    .host_addressable = true,
    .kernels = {
#define EM_OP(name, flags) [EM_OP_##name] = cpu_##name,
#include "ember/ops.def"
#undef EM_OP
#undef EM_COMPOSITE
    },
};
