/* Ember's caching allocator for device memory (paper §5.3): the policy only,
 * in plain C over a raw-memory interface (em_raw_mem), so that it runs on CUDA
 * (cudaMalloc/cudaFree/cudaEvent*) and, in the tests, on a CPU fake with an
 * artificial memory limit and events the test completes. Not a public header:
 * the device glue (src/cuda/) owns one allocator per device and exposes the
 * statistics to Python (ember.cuda.memory_allocated, memory_stats, ...).
 *
 * Policy (PyTorch's CUDA caching allocator is the specification):
 * - requests are rounded up to a multiple of 512 bytes (at least 512);
 * - small requests (<= 1 MiB) are carved from 2 MiB segments, large ones
 *   from 20 MiB segments below 10 MiB and from segments of the request
 *   rounded up to 2 MiB above;
 * - one pool of free blocks for small and one for large requests, each kept
 *   per stream: a block is handed out only on the stream it was allocated on;
 *   the best fit (smallest free block of that stream that is big enough) is
 *   taken and split when the rest is worth keeping (>= 512 B in the small
 *   pool, > 1 MiB in the large one); a freed block merges with its free
 *   neighbours in the segment;
 * - a block used on other streams (em_cache_record_stream) gets an event
 *   recorded on each of them when it is freed, and goes back to its pool only
 *   once they have all completed;
 * - when a raw allocation fails, every wholly free cached segment is released
 *   (after waiting for the pending events; with a max split size, the
 *   stream's cached oversize blocks first) and the allocation retried once;
 *   then it fails with EM_ERR_MEMORY and a message naming the request, the
 *   device's free and total memory, the bytes allocated and reserved, and the
 *   fragmentation of the cache.
 * Every function is thread-safe (one mutex per allocator). Over pinned host
 * memory (em_raw_mem.host) the same policy is the caching host allocator
 * that pin_memory() and non_blocking copies need.
 *
 * A cudaMalloc-backed em_raw_mem (device already set by the caller) is:
 *
 *   static void *cu_alloc(void *c, size_t n)  { void *p; return cudaMalloc(&p, n) == cudaSuccess ? p : (cudaGetLastError(), NULL); }
 *   static void cu_free(void *c, void *p)     { cudaFree(p); }
 *   static void *cu_ev_new(void *c)           { cudaEvent_t e; return cudaEventCreateWithFlags(&e, cudaEventDisableTiming) ? NULL : (void *)e; }
 *   static bool cu_ev_record(void *c, void *e, void *s) { return cudaEventRecord(e, s) == cudaSuccess; }
 *   static bool cu_ev_query(void *c, void *e) { return cudaEventQuery(e) != cudaErrorNotReady; }
 *   static void cu_ev_sync(void *c, void *e)  { cudaEventSynchronize(e); }
 *   static void cu_ev_free(void *c, void *e)  { cudaEventDestroy(e); }
 *   static void cu_sync(void *c)              { cudaDeviceSynchronize(); }
 *   static bool cu_info(void *c, size_t *f, size_t *t) { return cudaMemGetInfo(f, t) == cudaSuccess; }
 *   static const em_raw_mem cuda_raw = { .name = "CUDA", .alloc = cu_alloc, .free = cu_free,
 *       .event_create = cu_ev_new, .event_record = cu_ev_record, .event_query = cu_ev_query,
 *       .event_synchronize = cu_ev_sync, .event_destroy = cu_ev_free, .synchronize = cu_sync,
 *       .mem_info = cu_info };
 *
 * (the context `c` would carry the device index for cudaSetDevice). */
#ifndef EMBER_CACHING_ALLOC_H
#define EMBER_CACHING_ALLOC_H

#include "ember/core.h"

/* Raw device memory, streams and events. Streams and events are opaque
 * pointers (cudaStream_t / cudaEvent_t; NULL is the default stream). The
 * functions are required but mem_info; ctx is passed to each. The allocator
 * calls them with its mutex held. */
typedef struct em_raw_mem {
    const char *name;                                       /* "CUDA": starts the out-of-memory message (NULL: "Device") */
    void *ctx;
    void *(*alloc)(void *ctx, size_t nbytes);               /* NULL when out of memory (no error set) */
    void (*free)(void *ctx, void *ptr);
    void *(*event_create)(void *ctx);                       /* NULL on failure */
    bool (*event_record)(void *ctx, void *event, void *stream); /* false on failure */
    bool (*event_query)(void *ctx, void *event);            /* true once the work before it is done */
    void (*event_synchronize)(void *ctx, void *event);      /* waits for it */
    void (*event_destroy)(void *ctx, void *event);
    void (*synchronize)(void *ctx);                         /* waits for every stream (when an event fails) */
    bool (*mem_info)(void *ctx, size_t *free, size_t *total); /* optional: for messages and the memory fraction */
    /* Pinned host memory (cudaHostAlloc), for a caching host allocator: the
     * CPU may write a reused block at once, unordered with any stream, so
     * record_stream guards the block's own stream too. */
    bool host;
} em_raw_mem;

/* ---- statistics (PyTorch's memory_stats keys: "<stat>.<pool>.<field>") ---
 * X(ENUM, key, summary title, counts bytes) */
#define EM_CACHE_STAT_LIST(X)                                                   \
    X(ALLOCATED_BYTES, allocated_bytes, "Allocated memory", 1)                  \
    X(ACTIVE_BYTES, active_bytes, "Active memory", 1)                           \
    X(REQUESTED_BYTES, requested_bytes, "Requested memory", 1)                  \
    X(RESERVED_BYTES, reserved_bytes, "GPU reserved memory", 1)                 \
    X(INACTIVE_SPLIT_BYTES, inactive_split_bytes, "Non-releasable memory", 1)   \
    X(ALLOCATION, allocation, "Allocations", 0)                                 \
    X(ACTIVE, active, "Active allocs", 0)                                       \
    X(SEGMENT, segment, "GPU reserved segments", 0)                             \
    X(INACTIVE_SPLIT, inactive_split, "Non-releasable allocs", 0)                \
    X(OVERSIZE_ALLOCATIONS, oversize_allocations, "Oversize allocations", 0)    \
    X(OVERSIZE_SEGMENTS, oversize_segments, "Oversize GPU segments", 0)

typedef enum em_cache_stat_kind {
#define EM_X(e, key, title, bytes) EM_CACHE_##e,
    EM_CACHE_STAT_LIST(EM_X)
#undef EM_X
    EM_CACHE_STAT_COUNT
} em_cache_stat_kind;

typedef enum em_cache_pool { EM_CACHE_ALL, EM_CACHE_SMALL, EM_CACHE_LARGE, EM_CACHE_POOL_COUNT } em_cache_pool;

/* One statistic: its value now, its peak since the last reset, and the sums
 * of its increases and decreases since the last reset. "Active" blocks are the
 * allocated ones plus the freed ones still waiting on other streams' events;
 * "inactive split" blocks are free pieces of partly used segments (memory that
 * empty_cache cannot give back). "Oversize" blocks and segments are those of
 * at least the max split size (em_cache_set_max_split_size). */
typedef struct em_cache_stat {
    int64_t current, peak, allocated, freed;
} em_cache_stat;

typedef struct em_cache_stats {
    em_cache_stat stat[EM_CACHE_STAT_COUNT][EM_CACHE_POOL_COUNT];
    int64_t num_alloc_retries;    /* raw allocations retried after emptying the cache */
    int64_t num_ooms;             /* allocations that failed */
    int64_t num_sync_all_streams; /* waits for every pending event (empty_cache, OOM retry) */
    int64_t num_device_alloc;     /* raw allocations ("cudaMalloc" calls that succeeded) */
    int64_t num_device_free;      /* raw frees */
    /* The cache's free memory now: its total, and the largest block of it
     * (fragmentation = 1 - largest_free_block / cached_free_bytes). */
    int64_t cached_free_bytes, largest_free_block;
    int64_t max_split_size; /* em_cache_set_max_split_size's; -1: none */
} em_cache_stats;

extern const char *const em_cache_stat_keys[EM_CACHE_STAT_COUNT];  /* "allocated_bytes", ... */
extern const char *const em_cache_pool_keys[EM_CACHE_POOL_COUNT];  /* "all", "small_pool", "large_pool" */

/* ---- the allocator --------------------------------------------------------- */
typedef struct em_caching_alloc em_caching_alloc;

/* A new allocator over raw (copied; raw->ctx must outlive the allocator) for
 * device number `device` (named in messages); NULL with an error when raw
 * lacks a required member or host memory is short. */
em_caching_alloc *em_cache_new(const em_raw_mem *raw, int device);
/* Waits for pending events and gives every segment back to raw, including
 * segments of blocks still allocated (their pointers die). NULL-safe. */
void em_cache_destroy(em_caching_alloc *a);

/* *ptr = a block of at least nbytes for use on `stream` (NULL for nbytes 0).
 * EM_ERR_MEMORY when the device is out of memory (after emptying the cache
 * and retrying) or host memory for the bookkeeping is short. */
em_status em_cache_malloc(em_caching_alloc *a, size_t nbytes, void *stream, void **ptr);
/* Gives back a block em_cache_malloc returned (NULL: nothing). Safe to call
 * while kernels on the block's stream still use it (they run in order before
 * any later user of the block on that stream); uses on other streams must be
 * declared first with em_cache_record_stream. EM_ERR_VALUE for a pointer
 * that is not an allocated block of this allocator. */
em_status em_cache_free(em_caching_alloc *a, void *ptr);
/* Declares that work on `stream` uses the allocated block `ptr`: when freed,
 * the block is not reused before that work completes (a use on the block's
 * own stream needs no declaring, but for host memory). EM_ERR_VALUE for a
 * pointer that is not an allocated block. */
em_status em_cache_record_stream(em_caching_alloc *a, void *ptr, void *stream);
/* Releases every wholly free cached segment (after waiting for pending
 * events); split segments stay. */
void em_cache_empty(em_caching_alloc *a);

/* Caps the memory this allocator reserves at fraction * the device's total
 * (PyTorch's set_per_process_memory_fraction): an allocation that would pass
 * it fails as out of memory. EM_ERR_VALUE for a fraction outside [0, 1],
 * EM_ERR_RUNTIME when raw has no mem_info. */
em_status em_cache_set_memory_fraction(em_caching_alloc *a, double fraction);

/* Blocks of at least max_split bytes ("oversize", PyTorch's max_split_size_mb)
 * are never split, serve only requests of at least max_split bytes and waste
 * at most 20 MiB on them; when a raw allocation fails, cached oversize blocks
 * are released first (the smallest that suffices, else the largest ones),
 * before the whole cache. Limits fragmentation by large blocks. max_split must
 * exceed 20 MiB (SIZE_MAX: no limit, the default) and be set while nothing is
 * reserved (EM_ERR_VALUE / EM_ERR_RUNTIME otherwise). */
em_status em_cache_set_max_split_size(em_caching_alloc *a, size_t max_split);

void em_cache_get_stats(em_caching_alloc *a, em_cache_stats *out);
/* peak = current for every statistic. */
void em_cache_reset_peak_stats(em_caching_alloc *a);
/* allocated = freed = 0 for every statistic, and the event counters (retries,
 * OOMs, syncs, device allocs and frees) to 0. */
void em_cache_reset_accumulated_stats(em_caching_alloc *a);
/* A table of the statistics (memory_summary) written like snprintf: at most n
 * bytes with the terminating NUL; returns the length of the whole text. */
size_t em_cache_summary(em_caching_alloc *a, char *buf, size_t n);

/* ---- memory_snapshot: every segment and its blocks ------------------------- */
typedef enum em_cache_block_state {
    EM_CACHE_BLOCK_ALLOCATED,    /* "active_allocated" */
    EM_CACHE_BLOCK_PENDING_FREE, /* "active_pending_free": freed, waiting on other streams */
    EM_CACHE_BLOCK_INACTIVE      /* "inactive": free in the cache */
} em_cache_block_state;

typedef struct em_cache_block_info {
    uintptr_t address;
    size_t size, requested; /* requested: 0 unless allocated */
    em_cache_block_state state;
} em_cache_block_info;

typedef struct em_cache_segment_info {
    uintptr_t address;
    size_t total_size, allocated_size, active_size, requested_size;
    void *stream;
    bool small;
    int nblocks;
    em_cache_block_info *blocks; /* in address order; points into the snapshot's array */
} em_cache_segment_info;

typedef struct em_cache_snapshot {
    int nsegments;
    em_cache_segment_info *segments; /* in address order */
    em_cache_block_info *blocks;     /* every block, segment after segment */
} em_cache_snapshot;

/* Fills *out with the segments and blocks (PyTorch's memory_snapshot); free
 * it with em_cache_snapshot_free. EM_ERR_MEMORY when host memory is short. */
em_status em_cache_get_snapshot(em_caching_alloc *a, em_cache_snapshot *out);
void em_cache_snapshot_free(em_cache_snapshot *s); /* NULL-safe; *s becomes empty */

/* ---- the statistics as text (src/core/caching_alloc_summary.c) ------------- */
/* The table of em_cache_summary for stats s of device `device` named `name`. */
size_t em_cache_summary_text(const em_cache_stats *s, const char *name, int device, char *buf, size_t n);
/* 1 - largest_free_block / cached_free_bytes, in percent (0 with nothing cached). */
double em_cache_fragmentation(const em_cache_stats *s);
/* "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB" into buf (>= 32 bytes). */
const char *em_cache_format_size(int64_t nbytes, char *buf);

#endif
