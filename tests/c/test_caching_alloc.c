/* The caching allocator's policy (src/core/caching_alloc.c) on a CPU fake of
 * device memory (fake_raw_mem.h): rounding, pools, splitting and merging,
 * streams and record_stream, empty_cache, statistics, the out-of-memory path,
 * and reuse without raw allocations after a training loop's first iteration. */
#include "fake_raw_mem.h"
#include "test.h"
#include <pthread.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
/* Fake streams: only their identity matters. */
static char stream_tags[2];
#define S1 ((void *)&stream_tags[0])
#define S2 ((void *)&stream_tags[1])

typedef struct fixture {
    fake_mem f;
    em_raw_mem raw;
    em_caching_alloc *a;
} fixture;

static em_caching_alloc *setup(fixture *x, size_t limit)
{
    fake_init(&x->f, limit);
    x->raw = fake_raw(&x->f);
    return x->a = em_cache_new(&x->raw, 0);
}

/* Destroys the allocator: true when the fake device got everything back. */
static bool teardown(fixture *x)
{
    em_cache_destroy(x->a);
    return fake_clean(&x->f);
}

static void *take(em_caching_alloc *a, size_t n, void *stream)
{
    void *p = NULL;
    return em_cache_malloc(a, n, stream, &p) == EM_OK ? p : NULL;
}

static em_cache_stats stats(em_caching_alloc *a)
{
    em_cache_stats s;
    em_cache_get_stats(a, &s);
    return s;
}
#define STAT(s, kind, pool) ((s).stat[EM_CACHE_##kind][EM_CACHE_##pool])
#define CUR(a, kind, pool) STAT(stats(a), kind, pool).current

/* Reserved memory is the active blocks plus the free cached ones. */
static bool consistent(em_caching_alloc *a)
{
    em_cache_stats s = stats(a);
    return STAT(s, RESERVED_BYTES, ALL).current == STAT(s, ACTIVE_BYTES, ALL).current + s.cached_free_bytes &&
           STAT(s, INACTIVE_SPLIT_BYTES, ALL).current <= s.cached_free_bytes &&
           STAT(s, ALLOCATED_BYTES, ALL).current >= STAT(s, REQUESTED_BYTES, ALL).current;
}

TEST(cache_rounding_and_segment_sizes)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    CHECK(a);
    char *p1 = take(a, 1, S1), *p2 = take(a, 512, S1), *p3 = take(a, 513, S1), *p4 = take(a, MiB, S1);
    CHECK(p1 && p2 == p1 + 512 && p3 == p2 + 512 && p4 == p3 + 1024); /* carved from one 2 MiB segment */
    CHECK(CUR(a, ALLOCATED_BYTES, SMALL) == (int64_t)(2048 + MiB) && CUR(a, REQUESTED_BYTES, ALL) == (int64_t)(1026 + MiB));
    CHECK(CUR(a, RESERVED_BYTES, SMALL) == (int64_t)(2 * MiB) && CUR(a, SEGMENT, ALL) == 1);
    void *l1 = take(a, MiB + 1, S1); /* large: a 20 MiB segment */
    CHECK(l1 && CUR(a, ALLOCATED_BYTES, LARGE) == (int64_t)(MiB + 512) && CUR(a, RESERVED_BYTES, LARGE) == (int64_t)(20 * MiB));
    void *l2 = take(a, 12 * MiB + 1, S2); /* >= 10 MiB: its own segment, rounded to 2 MiB */
    CHECK(l2 && CUR(a, RESERVED_BYTES, LARGE) == (int64_t)(34 * MiB));
    void *l3 = take(a, 10 * MiB, S2);
    CHECK(l3 && CUR(a, RESERVED_BYTES, LARGE) == (int64_t)(44 * MiB) && stats(a).num_device_alloc == 4);
    void *z = (void *)1;
    CHECK(em_cache_malloc(a, 0, S1, &z) == EM_OK && z == NULL && CUR(a, ALLOCATION, ALL) == 7);
    CHECK_ERR(em_cache_malloc(a, SIZE_MAX, S1, &z), EM_ERR_MEMORY);
    CHECK(z == NULL && strstr(em_last_error(), "out of memory") && stats(a).num_ooms == 1);
    void *all[] = {p1, p2, p3, p4, l1, l2, l3};
    for (int i = 0; i < 7; i++) CHECK(em_cache_free(a, all[i]) == EM_OK);
    CHECK(CUR(a, ALLOCATED_BYTES, ALL) == 0 && CUR(a, REQUESTED_BYTES, ALL) == 0 && consistent(a));
    CHECK(teardown(&x));
}

TEST(cache_split_and_merge)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    char *p = take(a, 256 * KiB, S1), *q = take(a, 256 * KiB, S1), *r = take(a, 256 * KiB, S1);
    CHECK(p && q == p + 256 * KiB && r == q + 256 * KiB);
    CHECK(CUR(a, INACTIVE_SPLIT, ALL) == 1 && CUR(a, INACTIVE_SPLIT_BYTES, ALL) == (int64_t)(2 * MiB - 768 * KiB));
    CHECK(em_cache_free(a, q) == EM_OK && CUR(a, INACTIVE_SPLIT, ALL) == 2); /* between two allocated blocks */
    CHECK(em_cache_free(a, p) == EM_OK && CUR(a, INACTIVE_SPLIT, ALL) == 2); /* merged with q's block */
    CHECK(take(a, 512 * KiB, S1) == p && CUR(a, INACTIVE_SPLIT, ALL) == 1);  /* the merged block fits exactly */
    CHECK(em_cache_free(a, p) == EM_OK && em_cache_free(a, r) == EM_OK);
    em_cache_stats s = stats(a); /* the segment is one free block again */
    CHECK(STAT(s, INACTIVE_SPLIT, ALL).current == 0 && STAT(s, INACTIVE_SPLIT_BYTES, ALL).current == 0);
    CHECK(s.cached_free_bytes == (int64_t)(2 * MiB) && s.largest_free_block == (int64_t)(2 * MiB) && consistent(a));
    /* small pool: a rest of 512 bytes is kept */
    char *u = take(a, MiB, S1), *v = take(a, MiB - 512, S1), *w = take(a, 512, S1);
    CHECK(u == p && v == u + MiB && w == v + MiB - 512 && stats(a).num_device_alloc == 1);
    /* large pool: a rest of 1 MiB or less is not split off */
    void *big = take(a, 19 * MiB, S2);
    CHECK(big && CUR(a, ALLOCATED_BYTES, LARGE) == (int64_t)(20 * MiB));
    void *big2 = take(a, 18 * MiB + 1, S1);
    CHECK(big2 && CUR(a, ALLOCATED_BYTES, LARGE) == (int64_t)(38 * MiB + 512) && CUR(a, INACTIVE_SPLIT, LARGE) == 1);
    void *all[] = {u, v, w, big, big2};
    for (int i = 0; i < 5; i++) CHECK(em_cache_free(a, all[i]) == EM_OK);
    CHECK(CUR(a, INACTIVE_SPLIT, ALL) == 0 && CUR(a, SEGMENT, ALL) == 3 && consistent(a));
    CHECK(teardown(&x));
}

TEST(cache_best_fit)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    char *p[6];
    size_t sizes[6] = {256 * KiB, 512, 64 * KiB, 512, 128 * KiB, 512}; /* free blocks with separators */
    for (int i = 0; i < 6; i++) CHECK((p[i] = take(a, sizes[i], S1)));
    for (int i = 0; i < 6; i += 2) CHECK(em_cache_free(a, p[i]) == EM_OK);
    char *b1 = take(a, 100 * KiB, S1), *b2 = take(a, 60 * KiB, S1), *b3 = take(a, 20 * KiB, S1);
    CHECK(b1 == p[4] && b2 == p[2] && b3 == p[4] + 100 * KiB); /* the smallest block that fits, each time */
    void *all[] = {p[1], p[3], p[5], b1, b2, b3};
    for (int i = 0; i < 6; i++) CHECK(em_cache_free(a, all[i]) == EM_OK);
    CHECK(consistent(a) && teardown(&x));
}

/* Writes a byte pattern into a block, and checks it is intact. */
static void fill(void *p, size_t n, unsigned char v) { memset(p, v, n); }
static bool intact(const void *p, size_t n, unsigned char v)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i] != v) return false;
    return true;
}
/* The same on a block's first and last 64 bytes only (cheap for big blocks). */
#define ENDS 64
static void stamp(unsigned char *p, size_t n, unsigned char v)
{
    fill(p, n < ENDS ? n : ENDS, v);
    if (n > ENDS) fill(p + n - ENDS, ENDS, v);
}
static bool stamped(const unsigned char *p, size_t n, unsigned char v)
{
    return intact(p, n < ENDS ? n : ENDS, v) && (n <= ENDS || intact(p + n - ENDS, ENDS, v));
}

/* The paper's Figure 2 property: a training loop's later iterations make
 * no raw allocations (no cudaMalloc) at all. */
TEST(cache_training_loop_reuses_memory)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 256 * MiB);
    static const size_t psize[] = {4 * KiB, 3 * MiB, 64 * KiB, 12 * MiB, 40 * KiB};
    static const size_t asize[] = {256 * KiB, 3 * MiB + 100, 700 * KiB, 40 * KiB, 11 * MiB, 2 * KiB, 1536 * KiB};
    enum { NP = 5, NA = 7 };
    void *param[NP], *act[NA], *grad[NP];
    for (int i = 0; i < NP; i++) CHECK((param[i] = take(a, psize[i], NULL)));
    int64_t raw_after[5];
    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < NA; i++) { /* forward */
            CHECK((act[i] = take(a, asize[i], NULL)));
            fill(act[i], asize[i], (unsigned char)i);
        }
        void *g = NULL; /* backward: each activation's gradient, then the parameters' */
        for (int i = NA - 1; i >= 0; i--) {
            void *gi = take(a, asize[i], NULL);
            CHECK(gi && intact(act[i], asize[i], (unsigned char)i));
            CHECK(em_cache_free(a, act[i]) == EM_OK && em_cache_free(a, g) == EM_OK);
            g = gi;
        }
        for (int i = 0; i < NP; i++) CHECK((grad[i] = take(a, psize[i], NULL)));
        CHECK(em_cache_free(a, g) == EM_OK);
        void *tmp = take(a, 12 * MiB, NULL); /* the optimizer's temporary */
        CHECK(tmp && em_cache_free(a, tmp) == EM_OK);
        for (int i = 0; i < NP; i++) CHECK(em_cache_free(a, grad[i]) == EM_OK); /* zero_grad(set_to_none) */
        raw_after[it] = stats(a).num_device_alloc;
        CHECK(consistent(a));
    }
    CHECK_MSG(raw_after[0] > 0 && raw_after[4] == raw_after[0], "raw allocations after each iteration: %lld %lld %lld %lld %lld",
              (long long)raw_after[0], (long long)raw_after[1], (long long)raw_after[2], (long long)raw_after[3],
              (long long)raw_after[4]);
    CHECK(STAT(stats(a), ALLOCATION, ALL).allocated == NP + 5 * (2 * NA + NP + 1));
    for (int i = 0; i < NP; i++) CHECK(em_cache_free(a, param[i]) == EM_OK);
    CHECK(teardown(&x));
}

TEST(cache_small_and_large_pools)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    void *s = take(a, 4 * KiB, S1);
    CHECK(s && em_cache_free(a, s) == EM_OK);
    void *l = take(a, 1536 * KiB, S1); /* a cached free small segment does not serve a large request */
    CHECK(l && stats(a).num_device_alloc == 2 && em_cache_free(a, l) == EM_OK);
    CHECK(take(a, 8 * KiB, S1) == s && stats(a).num_device_alloc == 2); /* nor a large one a small request */
    CHECK(CUR(a, RESERVED_BYTES, SMALL) == (int64_t)(2 * MiB) && CUR(a, RESERVED_BYTES, LARGE) == (int64_t)(20 * MiB));
    CHECK(CUR(a, ALLOCATED_BYTES, SMALL) == (int64_t)(8 * KiB) && CUR(a, ALLOCATED_BYTES, LARGE) == 0);
    CHECK(em_cache_free(a, s) == EM_OK && teardown(&x));
}

TEST(cache_per_stream_pools)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    void *p = take(a, 4 * KiB, S1);
    CHECK(p && em_cache_free(a, p) == EM_OK);
    void *q = take(a, 4 * KiB, S2); /* S1's free blocks are not handed to S2 */
    CHECK(q && q != p && stats(a).num_device_alloc == 2);
    void *r = take(a, 4 * KiB, S1);
    void *l1 = take(a, 3 * MiB, S1);
    CHECK(r == p && l1 && em_cache_free(a, l1) == EM_OK);
    void *l2 = take(a, 3 * MiB, S2);
    CHECK(l2 && l2 != l1 && stats(a).num_device_alloc == 4);
    CHECK(take(a, 2 * MiB, S1) == l1 && stats(a).num_device_alloc == 4);
    void *l3 = take(a, 19 * MiB, S1); /* S1's free 18 MiB is too small, S2's 17 MiB is S2's */
    CHECK(l3 && stats(a).num_device_alloc == 5);
    void *all[] = {q, r, l1, l2, l3};
    for (int i = 0; i < 5; i++) CHECK(em_cache_free(a, all[i]) == EM_OK);
    CHECK(teardown(&x));
}

TEST(cache_record_stream)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    char *p = take(a, 64 * KiB, S1);
    CHECK(p && em_cache_record_stream(a, p, S2) == EM_OK && em_cache_record_stream(a, p, S2) == EM_OK);
    CHECK(em_cache_record_stream(a, p, S1) == EM_OK); /* its own stream: nothing to do */
    CHECK(em_cache_free(a, p) == EM_OK && fake_pending(&x.f) == 1);
    CHECK(CUR(a, ALLOCATED_BYTES, ALL) == 0 && CUR(a, ACTIVE_BYTES, ALL) == (int64_t)(64 * KiB) && consistent(a));
    char *q = take(a, 64 * KiB, S1); /* p is not handed out while S2 may still use it */
    CHECK(q && q != p && CUR(a, ACTIVE, ALL) == 2);
    char *q2 = take(a, 64 * KiB, S1);
    CHECK(q2 && q2 != p);
    fake_complete(&x.f, S2);
    char *r = take(a, 64 * KiB, S1); /* S2's work is done: p is free again */
    CHECK(r == p && CUR(a, ACTIVE, ALL) == 3 && x.f.live_events == 1);
    CHECK(em_cache_record_stream(a, r, S2) == EM_OK && em_cache_free(a, r) == EM_OK);
    CHECK(x.f.live_events == 1 && fake_pending(&x.f) == 1); /* the event was reused */
    fake_complete(&x.f, S2);
    CHECK(take(a, 64 * KiB, S1) == p);
    /* blocks that are not allocated */
    int local;
    CHECK_ERR(em_cache_record_stream(a, &local, S2), EM_ERR_VALUE);
    CHECK_ERR(em_cache_free(a, &local), EM_ERR_VALUE);
    CHECK(strstr(em_last_error(), "invalid device pointer"));
    CHECK(em_cache_free(a, q) == EM_OK);
    CHECK_ERR(em_cache_free(a, q), EM_ERR_VALUE); /* freed twice */
    CHECK(em_cache_free(a, NULL) == EM_OK);
    CHECK(em_cache_free(a, p) == EM_OK && em_cache_free(a, q2) == EM_OK && consistent(a));
    CHECK(teardown(&x));
}

/* Pinned host memory: the CPU may write a reused block at once, so even a
 * use on the block's own stream keeps it until that work is done. */
TEST(cache_host_memory)
{
    fixture x;
    fake_init(&x.f, 64 * MiB);
    x.raw = fake_raw(&x.f);
    x.raw.host = true;
    em_caching_alloc *a = x.a = em_cache_new(&x.raw, 0);
    void *p = take(a, 4 * KiB, NULL);
    CHECK(p && em_cache_record_stream(a, p, NULL) == EM_OK && em_cache_free(a, p) == EM_OK);
    void *q = take(a, 4 * KiB, NULL);
    CHECK(q && q != p && fake_pending(&x.f) == 1); /* a copy on the default stream may still read p */
    fake_complete(&x.f, NULL);
    CHECK(take(a, 4 * KiB, NULL) == p);
    CHECK(em_cache_free(a, p) == EM_OK && em_cache_free(a, q) == EM_OK && teardown(&x));
}

/* When no event can be made, freeing waits for the device instead. */
TEST(cache_record_stream_without_events)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    x.f.fail_events = true;
    void *p = take(a, 4 * KiB, S1);
    CHECK(p && em_cache_record_stream(a, p, S2) == EM_OK && em_cache_free(a, p) == EM_OK);
    CHECK(x.f.device_syncs == 1 && take(a, 4 * KiB, S1) == p);
    /* the second of two records fails: the first event is kept for reuse */
    static char s3;
    x.f.fail_events = false, x.f.records_left = 1;
    CHECK(em_cache_record_stream(a, p, S2) == EM_OK && em_cache_record_stream(a, p, &s3) == EM_OK);
    CHECK(em_cache_free(a, p) == EM_OK && x.f.device_syncs == 2 && take(a, 4 * KiB, S1) == p);
    x.f.records_left = -1;
    CHECK(em_cache_record_stream(a, p, S2) == EM_OK && em_cache_free(a, p) == EM_OK);
    CHECK(x.f.live_events == 1 && fake_pending(&x.f) == 1); /* made no new event */
    CHECK(teardown(&x));
}

TEST(cache_empty_cache)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    void *s = take(a, 4 * KiB, S1), *c = take(a, 12 * MiB, S1), *l = take(a, 1536 * KiB, S1);
    CHECK(s && l && c && em_cache_free(a, l) == EM_OK);
    CHECK(em_cache_record_stream(a, c, S2) == EM_OK && em_cache_free(a, c) == EM_OK);
    CHECK(CUR(a, RESERVED_BYTES, ALL) == (int64_t)(34 * MiB) && x.f.used == 34 * MiB);
    em_cache_empty(a); /* waits for c's event, keeps the segment s is in */
    em_cache_stats st = stats(a);
    CHECK(x.f.event_syncs == 1 && st.num_sync_all_streams == 1 && st.num_device_free == 2);
    CHECK(STAT(st, RESERVED_BYTES, ALL).current == (int64_t)(2 * MiB) && x.f.used == 2 * MiB && consistent(a));
    CHECK(em_cache_free(a, s) == EM_OK);
    em_cache_empty(a);
    CHECK(CUR(a, RESERVED_BYTES, ALL) == 0 && CUR(a, SEGMENT, ALL) == 0 && x.f.used == 0);
    CHECK(STAT(stats(a), SEGMENT, ALL).allocated == 3 && STAT(stats(a), SEGMENT, ALL).freed == 3);
    CHECK(teardown(&x));
}

TEST(cache_peak_and_reset_stats)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    void *p = take(a, MiB, S1), *q = take(a, 3 * MiB, S1);
    CHECK(p && q && em_cache_free(a, q) == EM_OK);
    em_cache_stats s = stats(a);
    em_cache_stat al = STAT(s, ALLOCATED_BYTES, ALL);
    CHECK(al.current == (int64_t)MiB && al.peak == (int64_t)(4 * MiB) && al.allocated == (int64_t)(4 * MiB) &&
          al.freed == (int64_t)(3 * MiB));
    CHECK(STAT(s, ALLOCATED_BYTES, LARGE).peak == (int64_t)(3 * MiB) && STAT(s, ALLOCATION, ALL).peak == 2);
    em_cache_reset_peak_stats(a);
    s = stats(a);
    CHECK(STAT(s, ALLOCATED_BYTES, ALL).peak == (int64_t)MiB && STAT(s, RESERVED_BYTES, ALL).peak == (int64_t)(22 * MiB));
    CHECK(STAT(s, ALLOCATED_BYTES, ALL).allocated == (int64_t)(4 * MiB)); /* totals are kept */
    em_cache_reset_accumulated_stats(a);
    void *r = take(a, 512 * KiB, S1);
    s = stats(a);
    al = STAT(s, ALLOCATED_BYTES, ALL);
    CHECK(r && al.allocated == (int64_t)(512 * KiB) && al.freed == 0 && al.peak == (int64_t)(1536 * KiB));
    CHECK(s.num_device_alloc == 0 && STAT(s, SEGMENT, ALL).current == 2);
    CHECK(!strcmp(em_cache_stat_keys[EM_CACHE_ALLOCATED_BYTES], "allocated_bytes") &&
          !strcmp(em_cache_stat_keys[EM_CACHE_INACTIVE_SPLIT], "inactive_split") &&
          !strcmp(em_cache_pool_keys[EM_CACHE_SMALL], "small_pool"));
    CHECK(em_cache_free(a, p) == EM_OK && em_cache_free(a, r) == EM_OK && teardown(&x));
}

/* Free pieces of a split segment: the cache's fragmentation figure. */
TEST(cache_fragmentation)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    void *p[4];
    for (int i = 0; i < 4; i++) CHECK((p[i] = take(a, 512 * KiB, S1)));
    CHECK(stats(a).num_device_alloc == 1 && CUR(a, INACTIVE_SPLIT, ALL) == 0); /* four blocks fill a segment */
    CHECK(em_cache_free(a, p[0]) == EM_OK && em_cache_free(a, p[2]) == EM_OK);
    em_cache_stats s = stats(a);
    CHECK(s.cached_free_bytes == (int64_t)MiB && s.largest_free_block == (int64_t)(512 * KiB));
    CHECK(STAT(s, INACTIVE_SPLIT, ALL).current == 2 && STAT(s, INACTIVE_SPLIT_BYTES, ALL).current == (int64_t)MiB);
    em_cache_empty(a); /* a split segment stays */
    CHECK(CUR(a, RESERVED_BYTES, ALL) == (int64_t)(2 * MiB));
    char text[8192];
    size_t n = em_cache_summary(a, text, sizeof text);
    CHECK(n == strlen(text) && strstr(text, "fragmentation: 50.0%") && strstr(text, "Non-releasable memory"));
    CHECK(em_cache_free(a, p[1]) == EM_OK && em_cache_free(a, p[3]) == EM_OK && teardown(&x));
}

TEST(cache_out_of_memory)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 20 * MiB);
    void *s = take(a, 4 * KiB, S1), *b = take(a, 10 * MiB, S1);
    CHECK(s && b && em_cache_free(a, b) == EM_OK);
    void *c = take(a, 12 * MiB, S1); /* only fits once b's cached segment is given back */
    em_cache_stats st = stats(a);
    CHECK(c && st.num_alloc_retries == 1 && st.num_device_free == 1 && st.num_ooms == 0 && x.f.failed_allocs == 1);
    void *d[3];
    for (int i = 0; i < 3; i++) CHECK((d[i] = take(a, 256 * KiB, S1)));
    CHECK(em_cache_free(a, d[1]) == EM_OK);
    void *e = (void *)1;
    CHECK_ERR(em_cache_malloc(a, 8 * MiB, S1, &e), EM_ERR_MEMORY); /* needs a 20 MiB segment */
    st = stats(a);
    CHECK(e == NULL && st.num_ooms == 1 && st.num_alloc_retries == 2 && consistent(a));
    char want[512], sz[4][32];
    double frag = 100.0 * (1.0 - (double)st.largest_free_block / (double)st.cached_free_bytes);
    snprintf(want, sizeof want,
             "CUDA out of memory. Tried to allocate 8.00 MiB (GPU 0; 20.00 MiB total capacity; %s already allocated; "
             "6.00 MiB free; 14.00 MiB reserved in total by Ember, of which %s is cached and free with %s the "
             "largest free block (%.1f%% fragmentation))",
             em_cache_format_size(STAT(st, ALLOCATED_BYTES, ALL).current, sz[0]),
             em_cache_format_size(st.cached_free_bytes, sz[1]), em_cache_format_size(st.largest_free_block, sz[2]), frag);
    CHECK_MSG(!strcmp(em_last_error(), want), "got  %s\nwant %s", em_last_error(), want);
    CHECK(frag > 0 && strstr(want, "12.50 MiB already allocated"));
    /* the memory fraction caps what is reserved */
    CHECK_ERR(em_cache_set_memory_fraction(a, 1.5), EM_ERR_VALUE);
    CHECK_ERR(em_cache_set_memory_fraction(a, NAN), EM_ERR_VALUE);
    CHECK(em_cache_set_memory_fraction(a, 0.5) == EM_OK);
    CHECK_ERR(em_cache_malloc(a, 4 * KiB, S2, &e), EM_ERR_MEMORY);
    CHECK(strstr(em_last_error(), "10.00 MiB allowed; 14.00 MiB reserved") && x.f.failed_allocs == 3);
    CHECK(em_cache_set_memory_fraction(a, 1) == EM_OK && (e = take(a, 4 * KiB, S2)));
    void *all[] = {s, c, d[0], d[2], e};
    for (int i = 0; i < 5; i++) CHECK(em_cache_free(a, all[i]) == EM_OK);
    CHECK(consistent(a) && teardown(&x));
}

TEST(cache_summary_text)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 64 * MiB);
    void *p = take(a, MiB, S1);
    char text[8192], small[10];
    size_t n = em_cache_summary(a, text, sizeof text);
    CHECK(p && n == strlen(text) && strstr(text, "CUDA device 0") && strstr(text, "Allocated memory"));
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) /* a table: every line as wide */
        CHECK_MSG(strchr(line, '\n') - line == 81, "line of %d characters: %.90s", (int)(strchr(line, '\n') - line), line);
    CHECK(strstr(text, "|       from small pool |    1.00 MiB |    1.00 MiB |    1.00 MiB |     0 bytes |\n"));
    CHECK(em_cache_summary(a, small, sizeof small) == n && strlen(small) == sizeof small - 1 &&
          !strncmp(small, text, sizeof small - 1));
    CHECK(em_cache_summary(a, NULL, 0) == n);
    char sz[32];
    CHECK(!strcmp(em_cache_format_size(1023, sz), "1023 bytes") &&
          !strcmp(em_cache_format_size(1024, sz), "1.00 KiB") && !strcmp(em_cache_format_size(1536, sz), "1.50 KiB"));
    CHECK(!strcmp(em_cache_format_size((int64_t)MiB, sz), "1.00 MiB") &&
          !strcmp(em_cache_format_size(3 * (int64_t)MiB, sz), "3.00 MiB") &&
          !strcmp(em_cache_format_size((int64_t)5 << 30, sz), "5.00 GiB"));
    CHECK(em_cache_free(a, p) == EM_OK && teardown(&x));
}

TEST(cache_bad_arguments)
{
    fake_mem f;
    fake_init(&f, MiB);
    em_raw_mem raw = fake_raw(&f);
    raw.event_query = NULL;
    CHECK_ERR(em_cache_new(&raw, 0), EM_ERR_VALUE);
    CHECK(strstr(em_last_error(), "event_query"));
    CHECK_ERR(em_cache_new(NULL, 0), EM_ERR_VALUE);
    raw = fake_raw(&f);
    raw.mem_info = NULL; /* optional */
    em_caching_alloc *a = em_cache_new(&raw, 3);
    CHECK(a);
    CHECK_ERR(em_cache_malloc(a, 1, S1, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_cache_set_memory_fraction(a, 0.5), EM_ERR_RUNTIME);
    void *p;
    CHECK_ERR(em_cache_malloc(a, 2 * MiB, S1, &p), EM_ERR_MEMORY); /* over the fake's limit */
    CHECK(strstr(em_last_error(), "(GPU 3; unknown total capacity; 0 bytes already allocated; unknown free;"));
    em_cache_destroy(a);
    em_cache_destroy(NULL);
    CHECK(fake_clean(&f));
}

/* Random allocations and frees on two streams, with record_stream and events
 * completing at random: no two live blocks overlap (their patterns stay
 * intact), the statistics add up, and everything goes back at the end. */
static void random_sequence(size_t max_split)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 512 * MiB);
    CHECK(max_split == SIZE_MAX || em_cache_set_max_split_size(a, max_split) == EM_OK);
    enum { N = 48 };
    struct { unsigned char *p; size_t n; } live[N] = {{0}};
    int64_t requested = 0;
    for (int step = 0; step < 4000; step++) {
        int i = (int)(trandu() * N);
        if (live[i].p) {
            CHECK_MSG(stamped(live[i].p, live[i].n, (unsigned char)i), "block %d overwritten at step %d", i, step);
            if (trandu() < 0.3) CHECK(em_cache_record_stream(a, live[i].p, trandu() < 0.5 ? S1 : S2) == EM_OK);
            CHECK(em_cache_free(a, live[i].p) == EM_OK);
            requested -= (int64_t)live[i].n;
            live[i].p = NULL;
        } else {
            double u = trandu();
            size_t n = u < 0.6 ? (size_t)(trandu() * 64 * KiB) + 1 : u < 0.9 ? (size_t)(trandu() * 2 * MiB) + 1
                                                                               : (size_t)(trandu() * 24 * MiB) + 1;
            unsigned char *p = take(a, n, i % 2 ? S1 : S2);
            CHECK(p);
            for (int k = 0; k < N; k++)
                CHECK_MSG(!live[k].p || p + n <= live[k].p || live[k].p + live[k].n <= p, "step %d: overlaps block %d", step, k);
            stamp(p, n, (unsigned char)i);
            live[i].p = p;
            live[i].n = n;
            requested += (int64_t)n;
        }
        if (trandu() < 0.05) fake_complete(&x.f, trandu() < 0.5 ? S1 : S2);
        if (trandu() < 0.01) em_cache_empty(a);
        CHECK(CUR(a, REQUESTED_BYTES, ALL) == requested && consistent(a));
    }
    for (int i = 0; i < N; i++) CHECK(em_cache_free(a, live[i].p) == EM_OK);
    em_cache_empty(a);
    em_cache_stats s = stats(a);
    CHECK(STAT(s, RESERVED_BYTES, ALL).current == 0 && STAT(s, ACTIVE, ALL).current == 0 &&
          STAT(s, INACTIVE_SPLIT, ALL).current == 0 && x.f.used == 0 && s.num_ooms == 0);
    CHECK(teardown(&x));
}
TEST(cache_random_sequence) { random_sequence(SIZE_MAX); }
TEST(cache_random_sequence_max_split) { random_sequence(22 * MiB); }

/* Threads allocating and freeing at once through one allocator. */
typedef struct worker {
    em_caching_alloc *a;
    void *stream;
    uint64_t seed;
    bool ok;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    enum { N = 16 };
    struct { unsigned char *p; size_t n; } live[N] = {{0}};
    unsigned char tag = (unsigned char)w->seed;
    w->ok = true;
    for (int step = 0; step < 3000 && w->ok; step++) {
        w->seed = w->seed * 6364136223846793005ULL + 1442695040888963407ULL;
        int i = (int)(w->seed >> 60);
        if (live[i].p) {
            w->ok = stamped(live[i].p, live[i].n, tag) && em_cache_free(w->a, live[i].p) == EM_OK;
            live[i].p = NULL;
        } else {
            live[i].n = (size_t)(w->seed >> 40) % (3 * MiB) + 1;
            live[i].p = take(w->a, live[i].n, w->stream);
            w->ok = live[i].p != NULL;
            if (w->ok) stamp(live[i].p, live[i].n, tag);
        }
    }
    for (int i = 0; i < N; i++) w->ok &= em_cache_free(w->a, live[i].p) == EM_OK;
    return NULL;
}

TEST(cache_threads)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 1024 * MiB);
    enum { T = 4 };
    static char streams[T];
    worker w[T];
    pthread_t th[T];
    for (int t = 0; t < T; t++) {
        w[t] = (worker){a, t % 2 ? &streams[t] : NULL, (uint64_t)t + 1, false};
        CHECK(pthread_create(&th[t], NULL, work, &w[t]) == 0);
    }
    for (int t = 0; t < T; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++) CHECK_MSG(w[t].ok, "thread %d failed: %s", t, em_last_error());
    CHECK(CUR(a, ALLOCATED_BYTES, ALL) == 0 && CUR(a, ACTIVE, ALL) == 0 && consistent(a));
    CHECK(teardown(&x));
}

/* max_split_size: oversize blocks are not split, serve only oversize
 * requests wasting at most 20 MiB, and are released first on a failure. */
TEST(cache_max_split_size)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 100 * MiB);
    CHECK_ERR(em_cache_set_max_split_size(a, 20 * MiB), EM_ERR_VALUE);
    CHECK(stats(a).max_split_size == -1 && em_cache_set_max_split_size(a, 32 * MiB) == EM_OK);
    void *p = take(a, 40 * MiB, S1);
    CHECK(p && em_cache_free(a, p) == EM_OK);
    CHECK(take(a, 36 * MiB, S1) == p && CUR(a, ALLOCATED_BYTES, ALL) == (int64_t)(40 * MiB)); /* not split */
    CHECK(CUR(a, OVERSIZE_ALLOCATIONS, ALL) == 1 && CUR(a, OVERSIZE_SEGMENTS, ALL) == 1);
    CHECK(em_cache_free(a, p) == EM_OK && CUR(a, OVERSIZE_ALLOCATIONS, ALL) == 0);
    void *q = take(a, 12 * MiB, S1); /* not from the oversize block */
    CHECK(q && q != p && stats(a).num_device_alloc == 2 && CUR(a, OVERSIZE_SEGMENTS, ALL) == 1);
    CHECK_ERR(em_cache_set_max_split_size(a, 64 * MiB), EM_ERR_RUNTIME);
    CHECK(em_cache_free(a, q) == EM_OK);
    em_cache_empty(a);
    CHECK(CUR(a, OVERSIZE_SEGMENTS, ALL) == 0 && CUR(a, RESERVED_BYTES, ALL) == 0);
    /* a 60 MiB cached block is too big for 35 MiB; when 35 MiB more does not
     * fit, it alone is released (the cached 12 MiB stays) */
    void *big = take(a, 60 * MiB, S1), *mid = take(a, 12 * MiB, S1);
    CHECK(big && mid && em_cache_free(a, big) == EM_OK && em_cache_free(a, mid) == EM_OK);
    void *r = take(a, 35 * MiB, S1); /* (raw memory may reuse big's address) */
    em_cache_stats s = stats(a);
    CHECK(r && s.num_alloc_retries == 0 && s.num_device_free == 3 && x.f.failed_allocs == 1);
    CHECK(STAT(s, RESERVED_BYTES, ALL).current == (int64_t)(48 * MiB) && s.max_split_size == (int64_t)(32 * MiB));
    char text[8192];
    CHECK(em_cache_summary(a, text, sizeof text) && strstr(text, "Max split size: 32.00 MiB"));
    /* no single oversize block suffices: the largest ones go until enough */
    CHECK(em_cache_free(a, r) == EM_OK && take(a, 34 * MiB, S1) == r); /* 36 MiB wastes < 20 MiB */
    void *o2 = take(a, 34 * MiB, S1);
    CHECK(o2 && CUR(a, RESERVED_BYTES, ALL) == (int64_t)(82 * MiB));
    CHECK(em_cache_free(a, r) == EM_OK && em_cache_free(a, o2) == EM_OK);
    void *o3 = take(a, 64 * MiB, S1); /* 82 + 64 > 100: the 36 and 34 MiB blocks go, the 12 MiB stays */
    s = stats(a);
    CHECK(o3 && s.num_alloc_retries == 0 && STAT(s, RESERVED_BYTES, ALL).current == (int64_t)(76 * MiB) && consistent(a));
    CHECK(STAT(s, OVERSIZE_SEGMENTS, ALL).current == 1 && STAT(s, OVERSIZE_ALLOCATIONS, ALL).current == 1);
    CHECK(em_cache_free(a, o3) == EM_OK && teardown(&x));
}

/* memory_snapshot: segments in address order, each covered by its blocks,
 * and the sums agree with the statistics. */
TEST(cache_snapshot)
{
    fixture x;
    em_caching_alloc *a = setup(&x, 128 * MiB);
    void *p = take(a, 100 * KiB, S1), *q = take(a, 200 * KiB, S1), *r = take(a, 300 * KiB, S1);
    void *l = take(a, 3 * MiB, S2), *m = take(a, 12 * MiB, S1);
    CHECK(p && q && r && l && m && em_cache_free(a, p) == EM_OK);
    CHECK(em_cache_record_stream(a, q, S2) == EM_OK && em_cache_free(a, q) == EM_OK); /* pending */
    em_cache_snapshot snap;
    CHECK(em_cache_get_snapshot(a, &snap) == EM_OK && snap.nsegments == 3);
    em_cache_stats st = stats(a);
    size_t total = 0, allocated = 0, active = 0, requested = 0;
    int states[3] = {0};
    for (int i = 0; i < snap.nsegments; i++) {
        const em_cache_segment_info *g = &snap.segments[i];
        CHECK(i == 0 || g->address > snap.segments[i - 1].address);
        uintptr_t at = g->address;
        for (int k = 0; k < g->nblocks; k++) {
            CHECK(g->blocks[k].address == at);
            at += g->blocks[k].size;
            states[g->blocks[k].state]++;
        }
        CHECK(at == g->address + g->total_size);
        total += g->total_size, allocated += g->allocated_size, active += g->active_size, requested += g->requested_size;
    }
    CHECK(total == (size_t)STAT(st, RESERVED_BYTES, ALL).current && allocated == (size_t)STAT(st, ALLOCATED_BYTES, ALL).current);
    CHECK(active == (size_t)STAT(st, ACTIVE_BYTES, ALL).current && requested == 3 * MiB + 12 * MiB + 300 * KiB);
    CHECK(states[EM_CACHE_BLOCK_ALLOCATED] == 3 && states[EM_CACHE_BLOCK_PENDING_FREE] == 1 &&
          states[EM_CACHE_BLOCK_INACTIVE] == 3); /* p's, after r, after l */
    const em_cache_segment_info *small = NULL;
    for (int i = 0; i < snap.nsegments; i++)
        if (snap.segments[i].small) small = &snap.segments[i];
    CHECK(small && small->stream == S1 && small->total_size == 2 * MiB && small->nblocks == 4);
    CHECK(small->blocks[0].address == (uintptr_t)p && small->blocks[0].state == EM_CACHE_BLOCK_INACTIVE);
    CHECK(small->blocks[1].state == EM_CACHE_BLOCK_PENDING_FREE && small->blocks[2].requested == 300 * KiB);
    em_cache_snapshot_free(&snap);
    em_cache_snapshot_free(NULL);
    CHECK(snap.nsegments == 0 && snap.segments == NULL);
    void *all[] = {r, l, m};
    for (int i = 0; i < 3; i++) CHECK(em_cache_free(a, all[i]) == EM_OK);
    CHECK(teardown(&x));
}
