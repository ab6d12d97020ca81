/* Ember's caching allocator for device memory: the policy described in
 * caching_alloc.h, over a raw-memory interface (em_raw_mem). Knows nothing of
 * CUDA; src/cuda/ plugs cudaMalloc in, the tests a CPU fake.
 *
 * Note [Caching allocator data structures]
 * A segment (one raw allocation) is a doubly linked list of blocks in address
 * order (prev/next). Free blocks live in one of two pools (small, large), each
 * a sorted array of block pointers ordered by (stream, size, address): the best
 * fit for (stream, size) is found by binary search in O(log n), and insertion
 * or removal moves the tail with memmove, O(n) but over a few thousand pointers
 * at most, which costs less than a tree's allocations and pointer chasing.
 * Allocated blocks are found from their address in an open-addressing hash
 * table (O(1)). Freed blocks that wait on other streams' events form a linked
 * list (pending), polled at each allocation.
 * Host memory for the bookkeeping is reserved before the policy runs (two
 * spare block structs, room in the pool array and the table), so that splitting,
 * freeing and merging cannot fail halfway. */
#include "caching_alloc.h"
#include "internal.h"
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MIN_BLOCK ((size_t)512)              /* rounding unit and smallest block */
#define SMALL_SIZE ((size_t)1 << 20)         /* largest small request */
#define SMALL_SEGMENT ((size_t)2 << 20)      /* segment size of the small pool */
#define LARGE_SEGMENT ((size_t)20 << 20)     /* segment size of large requests below MIN_LARGE_ALLOC */
#define MIN_LARGE_ALLOC ((size_t)10 << 20)
#define ROUND_LARGE ((size_t)2 << 20)        /* larger requests get their own segment, rounded to this */
#define MAX_REQUEST ((size_t)1 << 62)        /* keeps the rounding from overflowing */

typedef struct stream_use {
    void *stream;
    void *event; /* recorded on stream when the block was freed; NULL once complete */
} stream_use;

typedef struct block {
    char *ptr;
    size_t size;      /* a multiple of MIN_BLOCK */
    size_t requested; /* an allocated block: what the caller asked for */
    void *stream;     /* the stream it is allocated on and pooled for */
    bool small, allocated;
    struct block *prev, *next; /* neighbours in the segment, NULL at its ends */
    stream_use *uses;          /* other streams that use it (record_stream) */
    int nuses, uses_cap;
    int pending;               /* events of uses not yet complete */
    struct block *next_pending;
} block;

typedef struct pool {
    block **v;          /* the free blocks, sorted by (stream, size, address) */
    size_t n, cap;
    size_t nblocks;     /* blocks of this pool in any state: cap >= nblocks */
} pool;

typedef struct ptr_map {
    block **slot; /* linear probing; cap a power of two, n <= cap / 2 */
    size_t cap, n;
} ptr_map;

struct em_caching_alloc {
    pthread_mutex_t lock;
    em_raw_mem raw;
    int device;
    pool small, large;
    ptr_map live;          /* allocated blocks by address */
    block *pending;        /* freed blocks waiting on events */
    block *spare[2];       /* reserved block structs (Note above) */
    void **idle_events;    /* created events for reuse */
    size_t nidle, idle_cap;
    size_t limit;          /* cap on reserved bytes (memory fraction); SIZE_MAX: none */
    size_t max_split;      /* blocks this big are not split (oversize); SIZE_MAX: none */
    em_cache_stats st;
};


/* ---- statistics ------------------------------------------------------------ */
static void stat_add(em_caching_alloc *a, em_cache_stat_kind k, bool small, int64_t d)
{
    em_cache_stat *s[2] = {&a->st.stat[k][EM_CACHE_ALL], &a->st.stat[k][small ? EM_CACHE_SMALL : EM_CACHE_LARGE]};
    for (int i = 0; i < 2; i++) {
        s[i]->current += d;
        if (s[i]->current > s[i]->peak) s[i]->peak = s[i]->current;
        if (d > 0) s[i]->allocated += d;
        else s[i]->freed -= d;
    }
}

/* Counts one block more (n = 1) or less (n = -1) of kind `count`, and its
 * bytes in `bytes`. */
static void stat_block(em_caching_alloc *a, em_cache_stat_kind count, em_cache_stat_kind bytes, const block *b,
                       int n, size_t size)
{
    stat_add(a, count, b->small, n);
    stat_add(a, bytes, b->small, n * (int64_t)size);
}

/* ---- pools: sorted arrays of free blocks ------------------------------------ */
static pool *pool_of(em_caching_alloc *a, bool small) { return small ? &a->small : &a->large; }

static int block_cmp(const block *b, const void *stream, size_t size, const char *ptr)
{
    if (b->stream != stream) return (uintptr_t)b->stream < (uintptr_t)stream ? -1 : 1;
    if (b->size != size) return b->size < size ? -1 : 1;
    return (uintptr_t)b->ptr < (uintptr_t)ptr ? -1 : b->ptr != ptr;
}

/* The first position whose block is not ordered before (stream, size, ptr). */
static size_t lower_bound(const pool *p, const void *stream, size_t size, const char *ptr)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (block_cmp(p->v[mid], stream, size, ptr) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static void pool_insert(pool *p, block *b)
{
    assert(p->n < p->cap);
    size_t i = lower_bound(p, b->stream, b->size, b->ptr);
    memmove(p->v + i + 1, p->v + i, (p->n - i) * sizeof *p->v);
    p->v[i] = b;
    p->n++;
}

static void pool_remove_at(pool *p, size_t i)
{
    memmove(p->v + i, p->v + i + 1, (p->n - i - 1) * sizeof *p->v);
    p->n--;
}

static void pool_remove(pool *p, const block *b)
{
    size_t i = lower_bound(p, b->stream, b->size, b->ptr);
    assert(i < p->n && p->v[i] == b);
    pool_remove_at(p, i);
}

/* The smallest free block of `stream` with at least size bytes, taken out;
 * an oversize block only for an oversize request, and at most LARGE_SEGMENT
 * bytes bigger. */
static block *pool_take(pool *p, const void *stream, size_t size, size_t max_split)
{
    size_t i = lower_bound(p, stream, size, NULL);
    if (i == p->n || p->v[i]->stream != stream) return NULL;
    block *b = p->v[i];
    if (size < max_split ? b->size >= max_split : b->size >= size + LARGE_SEGMENT) return NULL;
    pool_remove_at(p, i);
    return b;
}

/* ---- the table of allocated blocks ------------------------------------------ */
static size_t map_home(const ptr_map *m, const void *ptr)
{
    uint64_t x = (uintptr_t)ptr; /* a 64-bit mix (murmur3's finalizer) */
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (m->cap - 1);
}

static void map_put(ptr_map *m, block *b)
{
    size_t i = map_home(m, b->ptr);
    while (m->slot[i]) i = (i + 1) & (m->cap - 1);
    m->slot[i] = b;
    m->n++;
}

/* Room for one more entry. */
static bool map_reserve(ptr_map *m)
{
    if (2 * (m->n + 1) <= m->cap) return true;
    ptr_map bigger = {calloc(m->cap ? 2 * m->cap : 64, sizeof(block *)), m->cap ? 2 * m->cap : 64, 0};
    if (!bigger.slot) return false;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i]) map_put(&bigger, m->slot[i]);
    free(m->slot);
    *m = bigger;
    return true;
}

static block *map_find(const ptr_map *m, const void *ptr, size_t *at)
{
    if (!m->cap) return NULL;
    for (size_t i = map_home(m, ptr); m->slot[i]; i = (i + 1) & (m->cap - 1))
        if (m->slot[i]->ptr == ptr) return *at = i, m->slot[i];
    return NULL;
}

/* Empties slot i, moving back the entries of its probe run that may not stay
 * behind the hole (no tombstones). */
static void map_remove_at(ptr_map *m, size_t i)
{
    size_t mask = m->cap - 1;
    for (size_t j = i;;) {
        m->slot[i] = NULL;
        for (;;) {
            j = (j + 1) & mask;
            if (!m->slot[j]) {
                m->n--;
                return;
            }
            size_t k = map_home(m, m->slot[j]->ptr);
            bool reachable = i <= j ? (i < k && k <= j) : (i < k || k <= j); /* j's entry is found from k past i's hole */
            if (!reachable) break;
        }
        m->slot[i] = m->slot[j];
        i = j;
    }
}

/* ---- blocks and segments ---------------------------------------------------- */
/* Reserves the host memory one allocation may need (Note above): two blocks
 * (a segment and a split-off rest), their places in pool p, a table slot. */
static bool reserve_host(em_caching_alloc *a, pool *p)
{
    for (int i = 0; i < 2; i++)
        if (!a->spare[i] && !(a->spare[i] = malloc(sizeof(block)))) return false;
    if (p->cap < p->nblocks + 2) {
        size_t cap = 2 * (p->nblocks + 2) > 32 ? 2 * (p->nblocks + 2) : 32;
        block **v = realloc(p->v, cap * sizeof *v);
        if (!v) return false;
        p->v = v, p->cap = cap;
    }
    return map_reserve(&a->live);
}

static block *new_block(em_caching_alloc *a, char *ptr, size_t size, void *stream, bool small)
{
    block **spare = a->spare[0] ? &a->spare[0] : &a->spare[1];
    block *b = *spare;
    assert(b);
    *spare = NULL;
    *b = (block){.ptr = ptr, .size = size, .stream = stream, .small = small};
    pool_of(a, small)->nblocks++;
    return b;
}

static void drop_block(em_caching_alloc *a, block *b)
{
    pool_of(a, b->small)->nblocks--;
    free(b->uses);
    free(b);
}

/* A new segment of `size` bytes for stream, or NULL when raw memory (or the
 * memory fraction) is out. */
static block *alloc_segment(em_caching_alloc *a, size_t size, void *stream, bool small, bool retry)
{
    if (retry) a->st.num_alloc_retries++;
    if ((size_t)a->st.stat[EM_CACHE_RESERVED_BYTES][EM_CACHE_ALL].current + size > a->limit) return NULL;
    char *mem = a->raw.alloc(a->raw.ctx, size);
    if (!mem) return NULL;
    block *b = new_block(a, mem, size, stream, small);
    a->st.num_device_alloc++;
    stat_block(a, EM_CACHE_SEGMENT, EM_CACHE_RESERVED_BYTES, b, 1, size);
    if (size >= a->max_split) stat_add(a, EM_CACHE_OVERSIZE_SEGMENTS, small, 1);
    return b;
}

static bool whole_segment(const block *b) { return !b->prev && !b->next; }

/* Gives a wholly free segment (one block, out of its pool) back to raw memory. */
static void release_segment(em_caching_alloc *a, block *b)
{
    a->raw.free(a->raw.ctx, b->ptr);
    a->st.num_device_free++;
    stat_block(a, EM_CACHE_SEGMENT, EM_CACHE_RESERVED_BYTES, b, -1, b->size);
    if (b->size >= a->max_split) stat_add(a, EM_CACHE_OVERSIZE_SEGMENTS, b->small, -1);
    drop_block(a, b);
}

/* Returns the segments of pool p that are wholly free to raw memory. */
static void release_free_segments(em_caching_alloc *a, pool *p)
{
    size_t kept = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (whole_segment(p->v[i])) release_segment(a, p->v[i]);
        else p->v[kept++] = p->v[i]; /* the order is kept */
    }
    p->n = kept;
}

/* Before the whole cache, frees cached oversize blocks of stream to make
 * room for size bytes: the smallest one as big, else the largest ones until
 * as many bytes are freed. False when they do not add up (those freed stay
 * freed). An oversize block is never split, so it is a whole segment; a
 * segment that is split is skipped all the same. */
static bool release_oversize(em_caching_alloc *a, const void *stream, size_t size)
{
    pool *p = &a->large;
    if (a->max_split == SIZE_MAX) return false;
    if (size < a->max_split) size = a->max_split;
    size_t i = lower_bound(p, stream, size, NULL), freed = 0;
    if (i < p->n && p->v[i]->stream == stream && whole_segment(p->v[i])) {
        block *b = p->v[i];
        pool_remove_at(p, i);
        release_segment(a, b);
        return true;
    }
    while (freed < size && i > 0 && p->v[i - 1]->stream == stream && p->v[i - 1]->size >= a->max_split &&
           whole_segment(p->v[i - 1])) {
        block *b = p->v[--i];
        freed += b->size;
        pool_remove_at(p, i);
        release_segment(a, b);
    }
    return freed >= size;
}

/* A block whose uses are all complete goes back to its pool, merged with its
 * free neighbours. */
static void free_block(em_caching_alloc *a, block *b)
{
    pool *p = pool_of(a, b->small);
    size_t size = b->size;
    int split_blocks = 0;
    int64_t split_bytes = 0; /* change of the inactive split counts */
    for (int side = 0; side < 2; side++) {
        block *n = side ? b->next : b->prev;
        if (!n || n->allocated || n->pending) continue;
        pool_remove(p, n); /* a free neighbour: an inactive split block */
        split_blocks--, split_bytes -= (int64_t)n->size;
        if (side) {
            b->next = n->next;
            if (b->next) b->next->prev = b;
        } else {
            b->ptr = n->ptr;
            b->prev = n->prev;
            if (b->prev) b->prev->next = b;
        }
        b->size += n->size;
        drop_block(a, n);
    }
    if (!whole_segment(b)) split_blocks++, split_bytes += (int64_t)b->size;
    pool_insert(p, b);
    stat_add(a, EM_CACHE_INACTIVE_SPLIT, b->small, split_blocks);
    stat_add(a, EM_CACHE_INACTIVE_SPLIT_BYTES, b->small, split_bytes);
    stat_block(a, EM_CACHE_ACTIVE, EM_CACHE_ACTIVE_BYTES, b, -1, size);
}

/* Hands out free block b for a request of `requested` bytes rounded to size,
 * splitting off the rest when it is worth keeping. */
static void *hand_out(em_caching_alloc *a, block *b, size_t size, size_t requested)
{
    bool was_split = !whole_segment(b); /* then b counted as an inactive split block */
    size_t rest = b->size - size;
    if (b->small ? rest >= MIN_BLOCK : size < a->max_split && rest > SMALL_SIZE) {
        block *r = new_block(a, b->ptr + size, rest, b->stream, b->small);
        r->prev = b, r->next = b->next;
        if (r->next) r->next->prev = r;
        b->next = r;
        b->size = size;
        pool_insert(pool_of(a, b->small), r);
        if (was_split) stat_add(a, EM_CACHE_INACTIVE_SPLIT_BYTES, b->small, -(int64_t)size);
        else stat_block(a, EM_CACHE_INACTIVE_SPLIT, EM_CACHE_INACTIVE_SPLIT_BYTES, r, 1, rest);
    } else if (was_split) {
        stat_block(a, EM_CACHE_INACTIVE_SPLIT, EM_CACHE_INACTIVE_SPLIT_BYTES, b, -1, b->size);
    }
    b->allocated = true;
    b->requested = requested;
    map_put(&a->live, b);
    stat_block(a, EM_CACHE_ALLOCATION, EM_CACHE_ALLOCATED_BYTES, b, 1, b->size);
    stat_block(a, EM_CACHE_ACTIVE, EM_CACHE_ACTIVE_BYTES, b, 1, b->size);
    stat_add(a, EM_CACHE_REQUESTED_BYTES, b->small, (int64_t)requested);
    if (b->size >= a->max_split) stat_add(a, EM_CACHE_OVERSIZE_ALLOCATIONS, b->small, 1);
    return b->ptr;
}

/* ---- events ------------------------------------------------------------------ */
static void *get_event(em_caching_alloc *a)
{
    return a->nidle ? a->idle_events[--a->nidle] : a->raw.event_create(a->raw.ctx);
}

static void put_event(em_caching_alloc *a, void *e)
{
    if (a->nidle == a->idle_cap) {
        size_t cap = a->idle_cap ? 2 * a->idle_cap : 16;
        void **v = realloc(a->idle_events, cap * sizeof *v);
        if (!v) {
            a->raw.event_destroy(a->raw.ctx, e);
            return;
        }
        a->idle_events = v, a->idle_cap = cap;
    }
    a->idle_events[a->nidle++] = e;
}

/* A freed block used on other streams: records an event on each and puts the
 * block on the pending list. If an event cannot be made, waits for the whole
 * device instead and frees the block at once. */
static void record_events(em_caching_alloc *a, block *b)
{
    for (int i = 0; i < b->nuses; i++) {
        void *e = get_event(a);
        if (e && a->raw.event_record(a->raw.ctx, e, b->uses[i].stream)) {
            b->uses[i].event = e;
            continue;
        }
        if (e) a->raw.event_destroy(a->raw.ctx, e);
        a->raw.synchronize(a->raw.ctx);
        for (int k = 0; k < i; k++) put_event(a, b->uses[k].event);
        b->nuses = 0;
        free_block(a, b);
        return;
    }
    b->pending = b->nuses;
    b->next_pending = a->pending;
    a->pending = b;
}

/* Frees the pending blocks whose events have all completed; with wait, waits
 * for every event first (num_sync_all_streams). */
static void process_events(em_caching_alloc *a, bool wait)
{
    if (wait && a->pending) a->st.num_sync_all_streams++;
    for (block **link = &a->pending; *link;) {
        block *b = *link;
        for (int i = 0; i < b->nuses; i++) {
            void *e = b->uses[i].event;
            if (!e) continue;
            if (wait) a->raw.event_synchronize(a->raw.ctx, e);
            else if (!a->raw.event_query(a->raw.ctx, e)) continue;
            put_event(a, e);
            b->uses[i].event = NULL;
            b->pending--;
        }
        if (b->pending) {
            link = &b->next_pending;
            continue;
        }
        *link = b->next_pending;
        b->nuses = 0;
        free_block(a, b);
    }
}

/* Waits for pending events and releases every wholly free segment. */
static void empty_cache(em_caching_alloc *a)
{
    process_events(a, true);
    release_free_segments(a, &a->small);
    release_free_segments(a, &a->large);
}

/* ---- the API ------------------------------------------------------------------ */
em_caching_alloc *em_cache_new(const em_raw_mem *raw, int device)
{
    if (!raw) return em_null_arg(__func__, "raw"), NULL;
    const char *missing = !raw->alloc ? "alloc" : !raw->free ? "free" : !raw->event_create ? "event_create"
                        : !raw->event_record ? "event_record" : !raw->event_query ? "event_query"
                        : !raw->event_synchronize ? "event_synchronize" : !raw->event_destroy ? "event_destroy"
                        : !raw->synchronize ? "synchronize" : NULL;
    if (missing) return em_error(EM_ERR_VALUE, "em_cache_new: the raw memory interface has no %s", missing);
    em_caching_alloc *a = calloc(1, sizeof *a);
    if (!a) return em_error(EM_ERR_MEMORY, "em_cache_new: out of host memory");
    pthread_mutex_init(&a->lock, NULL);
    a->raw = *raw;
    a->device = device;
    a->limit = a->max_split = SIZE_MAX;
    return a;
}

void em_cache_destroy(em_caching_alloc *a)
{
    if (!a) return;
    pthread_mutex_lock(&a->lock);
    process_events(a, true);
    if (a->live.n) a->raw.synchronize(a->raw.ctx); /* blocks still in use on some stream */
    for (size_t i = 0; i < a->live.cap; i++) {
        block *b = a->live.slot[i];
        if (!b) continue;
        b->allocated = false;
        b->nuses = 0;
        free_block(a, b); /* when all are back, each segment is one free block */
    }
    empty_cache(a);
    assert(!a->small.n && !a->large.n);
    for (size_t i = 0; i < a->nidle; i++) a->raw.event_destroy(a->raw.ctx, a->idle_events[i]);
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_destroy(&a->lock);
    free(a->small.v), free(a->large.v), free(a->live.slot), free(a->idle_events);
    free(a->spare[0]), free(a->spare[1]);
    free(a);
}

static const char *size_str(size_t n, char *buf) { return em_cache_format_size(n > INT64_MAX ? INT64_MAX : (int64_t)n, buf); }

/* Fills the cache's free memory figures of s. */
static void free_figures(const em_caching_alloc *a, em_cache_stats *s)
{
    s->cached_free_bytes = s->largest_free_block = 0;
    for (int k = 0; k < 2; k++) {
        const pool *p = k ? &a->small : &a->large;
        for (size_t i = 0; i < p->n; i++) {
            s->cached_free_bytes += (int64_t)p->v[i]->size;
            if ((int64_t)p->v[i]->size > s->largest_free_block) s->largest_free_block = (int64_t)p->v[i]->size;
        }
    }
}

/* The out-of-memory error for a request rounded to size. */
static em_status out_of_memory(em_caching_alloc *a, size_t size)
{
    a->st.num_ooms++;
    size_t dev_free = 0, dev_total = 0;
    bool info = a->raw.mem_info && a->raw.mem_info(a->raw.ctx, &dev_free, &dev_total);
    free_figures(a, &a->st);
    char req[32], total[32], alloc[32], dfree[32], lim[32], allowed[48] = "", res[32], cached[32], largest[32];
    if (a->limit != SIZE_MAX) snprintf(allowed, sizeof allowed, "%s allowed; ", size_str(a->limit, lim));
    if (info) size_str(dev_total, total), size_str(dev_free, dfree);
    else strcpy(total, "unknown"), strcpy(dfree, "unknown");
    return em_fail(EM_ERR_MEMORY,
                   "%s out of memory. Tried to allocate %s (GPU %d; %s total capacity; %s already allocated; "
                   "%s free; %s%s reserved in total by Ember, of which %s is cached and free with "
                   "%s the largest free block (%.1f%% fragmentation))",
                   a->raw.name ? a->raw.name : "Device", size_str(size, req), a->device, total,
                   size_str((size_t)a->st.stat[EM_CACHE_ALLOCATED_BYTES][EM_CACHE_ALL].current, alloc), dfree,
                   allowed, size_str((size_t)a->st.stat[EM_CACHE_RESERVED_BYTES][EM_CACHE_ALL].current, res),
                   size_str((size_t)a->st.cached_free_bytes, cached),
                   size_str((size_t)a->st.largest_free_block, largest), em_cache_fragmentation(&a->st));
}

em_status em_cache_malloc(em_caching_alloc *a, size_t nbytes, void *stream, void **ptr)
{
    if (!a || !ptr) return em_null_arg(__func__, !a ? "a" : "ptr"), EM_ERR_VALUE;
    *ptr = NULL;
    if (nbytes == 0) return EM_OK;
    pthread_mutex_lock(&a->lock);
    em_status st = EM_OK;
    bool small = nbytes <= SMALL_SIZE;
    size_t size = nbytes < MIN_BLOCK ? MIN_BLOCK : (nbytes + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
    if (nbytes > MAX_REQUEST) {
        st = out_of_memory(a, nbytes);
    } else if (!reserve_host(a, pool_of(a, small))) {
        st = em_fail(EM_ERR_MEMORY, "caching allocator: out of host memory");
    } else {
        process_events(a, false);
        block *b = pool_take(pool_of(a, small), stream, size, a->max_split);
        if (!b) {
            size_t seg = small ? SMALL_SEGMENT
                       : size < MIN_LARGE_ALLOC ? LARGE_SEGMENT
                       : (size + ROUND_LARGE - 1) / ROUND_LARGE * ROUND_LARGE;
            b = alloc_segment(a, seg, stream, small, false);
            if (!b && !small && release_oversize(a, stream, size)) b = alloc_segment(a, seg, stream, small, false);
            if (!b) { /* free the cached segments and retry once */
                empty_cache(a);
                b = alloc_segment(a, seg, stream, small, true);
            }
        }
        if (b) *ptr = hand_out(a, b, size, nbytes);
        else st = out_of_memory(a, size);
    }
    pthread_mutex_unlock(&a->lock);
    return st;
}

em_status em_cache_free(em_caching_alloc *a, void *ptr)
{
    if (!a) return em_null_arg(__func__, "a"), EM_ERR_VALUE;
    if (!ptr) return EM_OK;
    pthread_mutex_lock(&a->lock);
    size_t at;
    block *b = map_find(&a->live, ptr, &at);
    if (b) {
        map_remove_at(&a->live, at);
        b->allocated = false;
        stat_block(a, EM_CACHE_ALLOCATION, EM_CACHE_ALLOCATED_BYTES, b, -1, b->size);
        stat_add(a, EM_CACHE_REQUESTED_BYTES, b->small, -(int64_t)b->requested);
        if (b->size >= a->max_split) stat_add(a, EM_CACHE_OVERSIZE_ALLOCATIONS, b->small, -1);
        if (b->nuses) record_events(a, b);
        else free_block(a, b);
    }
    pthread_mutex_unlock(&a->lock);
    return b ? EM_OK : em_fail(EM_ERR_VALUE, "invalid device pointer: %p", ptr);
}

em_status em_cache_record_stream(em_caching_alloc *a, void *ptr, void *stream)
{
    if (!a || !ptr) return em_null_arg(__func__, !a ? "a" : "ptr"), EM_ERR_VALUE;
    pthread_mutex_lock(&a->lock);
    em_status st = EM_OK;
    size_t at;
    block *b = map_find(&a->live, ptr, &at);
    if (!b) {
        st = em_fail(EM_ERR_VALUE, "record_stream: %p is not an allocated block", ptr);
    } else if (stream != b->stream || a->raw.host) {
        int i = 0;
        while (i < b->nuses && b->uses[i].stream != stream) i++;
        if (i == b->nuses && b->nuses == b->uses_cap) {
            int cap = b->uses_cap ? 2 * b->uses_cap : 2;
            stream_use *u = realloc(b->uses, cap * sizeof *u);
            if (u) b->uses = u, b->uses_cap = cap;
            else st = em_fail(EM_ERR_MEMORY, "record_stream: out of host memory");
        }
        if (i == b->nuses && !st) b->uses[b->nuses++] = (stream_use){stream, NULL};
    }
    pthread_mutex_unlock(&a->lock);
    return st;
}

void em_cache_empty(em_caching_alloc *a)
{
    if (!a) return;
    pthread_mutex_lock(&a->lock);
    empty_cache(a);
    pthread_mutex_unlock(&a->lock);
}

em_status em_cache_set_memory_fraction(em_caching_alloc *a, double fraction)
{
    if (!a) return em_null_arg(__func__, "a"), EM_ERR_VALUE;
    if (!(fraction >= 0 && fraction <= 1))
        return em_fail(EM_ERR_VALUE, "Invalid fraction value: %g. Allowed range: 0~1", fraction);
    size_t dev_free, dev_total;
    pthread_mutex_lock(&a->lock);
    bool known = a->raw.mem_info && a->raw.mem_info(a->raw.ctx, &dev_free, &dev_total);
    if (known) a->limit = (size_t)(fraction * (double)dev_total);
    pthread_mutex_unlock(&a->lock);
    return known ? EM_OK : em_fail(EM_ERR_RUNTIME, "set_memory_fraction: the device's memory size is unknown");
}

static int head_cmp(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t)(*(block *const *)x)->ptr, b = (uintptr_t)(*(block *const *)y)->ptr;
    return a < b ? -1 : a > b;
}

/* The first blocks of every segment, sorted by address (malloc'ed), or NULL
 * when host memory is short; *n their count, *nblocks all blocks'. */
static block **segment_heads(em_caching_alloc *a, size_t *n, size_t *nblocks)
{
    *nblocks = a->small.nblocks + a->large.nblocks;
    block **heads = malloc((*nblocks ? *nblocks : 1) * sizeof *heads);
    if (!heads) return NULL;
    *n = 0;
    for (int k = 0; k < 2; k++) { /* free blocks */
        const pool *p = k ? &a->small : &a->large;
        for (size_t i = 0; i < p->n; i++)
            if (!p->v[i]->prev) heads[(*n)++] = p->v[i];
    }
    for (size_t i = 0; i < a->live.cap; i++) /* allocated blocks */
        if (a->live.slot[i] && !a->live.slot[i]->prev) heads[(*n)++] = a->live.slot[i];
    for (block *b = a->pending; b; b = b->next_pending) /* blocks waiting on events */
        if (!b->prev) heads[(*n)++] = b;
    qsort(heads, *n, sizeof *heads, head_cmp);
    return heads;
}

em_status em_cache_get_snapshot(em_caching_alloc *a, em_cache_snapshot *out)
{
    if (!a || !out) return em_null_arg(__func__, !a ? "a" : "out"), EM_ERR_VALUE;
    *out = (em_cache_snapshot){0};
    pthread_mutex_lock(&a->lock);
    size_t nseg = 0, nblocks = 0;
    block **heads = segment_heads(a, &nseg, &nblocks);
    out->segments = heads ? calloc(nseg ? nseg : 1, sizeof *out->segments) : NULL;
    out->blocks = heads ? calloc(nblocks ? nblocks : 1, sizeof *out->blocks) : NULL;
    em_cache_block_info *info = out->blocks;
    for (size_t i = 0; out->segments && out->blocks && i < nseg; i++) {
        em_cache_segment_info *seg = &out->segments[out->nsegments++];
        *seg = (em_cache_segment_info){.address = (uintptr_t)heads[i]->ptr, .stream = heads[i]->stream,
                                       .small = heads[i]->small, .blocks = info};
        for (const block *b = heads[i]; b; b = b->next, info++, seg->nblocks++) {
            em_cache_block_state state = b->allocated ? EM_CACHE_BLOCK_ALLOCATED
                                       : b->pending ? EM_CACHE_BLOCK_PENDING_FREE : EM_CACHE_BLOCK_INACTIVE;
            *info = (em_cache_block_info){(uintptr_t)b->ptr, b->size, b->allocated ? b->requested : 0, state};
            seg->total_size += b->size;
            if (state == EM_CACHE_BLOCK_ALLOCATED) seg->allocated_size += b->size, seg->requested_size += b->requested;
            if (state != EM_CACHE_BLOCK_INACTIVE) seg->active_size += b->size;
        }
    }
    pthread_mutex_unlock(&a->lock);
    bool ok = heads && out->segments && out->blocks;
    free(heads);
    if (ok) return EM_OK;
    em_cache_snapshot_free(out);
    return em_fail(EM_ERR_MEMORY, "memory_snapshot: out of host memory");
}

void em_cache_snapshot_free(em_cache_snapshot *s)
{
    if (!s) return;
    free(s->segments);
    free(s->blocks);
    *s = (em_cache_snapshot){0};
}

em_status em_cache_set_max_split_size(em_caching_alloc *a, size_t max_split)
{
    if (!a) return em_null_arg(__func__, "a"), EM_ERR_VALUE;
    if (max_split <= LARGE_SEGMENT)
        return em_fail(EM_ERR_VALUE, "max_split_size of %zu bytes is too small: it must be > 20 MiB", max_split);
    pthread_mutex_lock(&a->lock);
    bool idle = a->st.stat[EM_CACHE_RESERVED_BYTES][EM_CACHE_ALL].current == 0;
    if (idle) a->max_split = max_split;
    pthread_mutex_unlock(&a->lock);
    return idle ? EM_OK : em_fail(EM_ERR_RUNTIME, "max_split_size can only be set while nothing is reserved (empty_cache first)");
}

void em_cache_get_stats(em_caching_alloc *a, em_cache_stats *out)
{
    if (!a || !out) return;
    pthread_mutex_lock(&a->lock);
    free_figures(a, &a->st);
    a->st.max_split_size = a->max_split == SIZE_MAX ? -1 : (int64_t)a->max_split;
    *out = a->st;
    pthread_mutex_unlock(&a->lock);
}

void em_cache_reset_peak_stats(em_caching_alloc *a)
{
    if (!a) return;
    pthread_mutex_lock(&a->lock);
    for (int k = 0; k < EM_CACHE_STAT_COUNT; k++)
        for (int p = 0; p < EM_CACHE_POOL_COUNT; p++) a->st.stat[k][p].peak = a->st.stat[k][p].current;
    pthread_mutex_unlock(&a->lock);
}

void em_cache_reset_accumulated_stats(em_caching_alloc *a)
{
    if (!a) return;
    pthread_mutex_lock(&a->lock);
    for (int k = 0; k < EM_CACHE_STAT_COUNT; k++)
        for (int p = 0; p < EM_CACHE_POOL_COUNT; p++) a->st.stat[k][p].allocated = a->st.stat[k][p].freed = 0;
    a->st.num_alloc_retries = a->st.num_ooms = a->st.num_sync_all_streams = 0;
    a->st.num_device_alloc = a->st.num_device_free = 0;
    pthread_mutex_unlock(&a->lock);
}

size_t em_cache_summary(em_caching_alloc *a, char *buf, size_t n)
{
    if (n) buf[0] = 0;
    if (!a) return 0;
    em_cache_stats s;
    em_cache_get_stats(a, &s);
    return em_cache_summary_text(&s, a->raw.name, a->device, buf, n);
}
