/* A CPU stand-in for device memory behind the caching allocator's raw-memory
 * interface (src/core/caching_alloc.h), for its tests: host memory with an
 * artificial limit, and events that complete only when the test says their
 * stream has finished (or when the allocator waits on them). */
#ifndef EMBER_FAKE_RAW_MEM_H
#define EMBER_FAKE_RAW_MEM_H

#include "../../src/core/caching_alloc.h"

typedef struct fake_event fake_event;

typedef struct fake_mem {
    size_t limit, used;       /* raw bytes allowed and handed out */
    int64_t allocs, frees;    /* successful raw calls */
    int64_t failed_allocs;    /* raw allocations refused by the limit */
    int64_t event_syncs, device_syncs;
    int64_t live_events;      /* created and not destroyed */
    bool fail_events;         /* event_create fails (tests the fallback) */
    int64_t records_left;     /* event_record fails when 0 (counts down; -1: never fails) */
    fake_event *events;       /* every live event */
} fake_mem;

/* A fake device of `limit` bytes and its raw-memory interface. */
void fake_init(fake_mem *f, size_t limit);
em_raw_mem fake_raw(fake_mem *f);
/* Completes every event recorded on `stream` so far: its work has finished. */
void fake_complete(fake_mem *f, void *stream);
/* Events recorded and not complete. */
int fake_pending(const fake_mem *f);
/* Frees the events left (the allocator destroys its own): true when nothing
 * was left, neither events nor raw memory. */
bool fake_clean(fake_mem *f);

#endif
