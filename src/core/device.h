/* A device, in the manner of ggml-backend: a struct of function pointers for
 * its memory (allocate, free, copies to and from the host and within the
 * device, memset, synchronize; streams and events) and its kernels, one per
 * op of the table. Core allocates every storage through its device, and
 * code outside the kernels reads tensor memory only through
 * em_host_tensor() (core.h, Note [Host reads]), which copies through it.
 *
 * Devices: cpu (src/cpu/device.c), meta (src/meta/device.c: sizes and no
 * data), cuda (src/cuda/, when built). */
#ifndef EMBER_DEVICE_H
#define EMBER_DEVICE_H

#include "internal.h"

typedef struct em_call em_call; /* src/ops/dispatch.h: one op's checked arguments */
typedef em_status (*em_kernel)(const em_call *c);

typedef struct em_device_impl {
    const char *name;
    /* Memory. alloc sets *out (NULL allowed where the device keeps no data:
     * meta) and fails with EM_ERR_MEMORY; free takes alloc's nbytes. */
    em_status (*alloc)(em_device dev, size_t nbytes, void **out);
    void (*free)(em_device dev, void *p, size_t nbytes);
    em_status (*copy_to_host)(em_device dev, void *host, const void *src, size_t nbytes);
    em_status (*copy_from_host)(em_device dev, void *dst, const void *host, size_t nbytes);
    em_status (*copy_device)(em_device dev, void *dst, const void *src, size_t nbytes);
    em_status (*memset)(em_device dev, void *p, int byte, size_t nbytes);
    em_status (*synchronize)(em_device dev); /* waits for the device's queued work */
    /* Streams and events: NULL on devices that run work in order on the
     * calling thread (cpu, meta); a queueing device (cuda) fills them. */
    void *(*stream_new)(em_device dev);
    void (*stream_free)(void *stream);
    void *(*event_record)(void *stream);
    em_status (*event_wait)(void *event);
    void (*event_free)(void *event);
    /* true where the host reads the device's memory at its own addresses
     * (cpu): host reads then take the pointer, with no copy */
    bool host_addressable;
    em_kernel kernels[EM_OP_COUNT];
} em_device_impl;

extern const em_device_impl em_cpu_device;  /* src/cpu/device.c */
extern const em_device_impl em_meta_device; /* src/meta/device.c */
#ifdef EM_WITH_CUDA
extern const em_device_impl em_cuda_device; /* src/cuda/device.cu */
#endif

/* The device's struct; NULL (with EM_ERR_DEVICE) when this build lacks it.
 * The CPU's is found inline: every CPU op asks. */
const em_device_impl *em_device_lookup(em_device d);
static inline const em_device_impl *em_device_get(em_device d)
{
    return d.type == EM_CPU ? &em_cpu_device : em_device_lookup(d);
}
/* "cpu", "meta", "cuda:0": PyTorch's spelling in messages. Thread-local
 * scratch, two in rotation. */
const char *em_device_str(em_device d);
static inline bool em_same_device(em_device a, em_device b) { return a.type == b.type && a.index == b.index; }

#endif
