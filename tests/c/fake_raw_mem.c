/* The fake device memory of fake_raw_mem.h. */
#include "fake_raw_mem.h"
#include <stdlib.h>
#include <string.h>

struct fake_event {
    void *stream;
    bool recorded, done;
    fake_event *next;
};

/* Each raw block carries its size in a 64-byte header, for `used`. */
#define HEADER 64

static void *fake_alloc(void *ctx, size_t n)
{
    fake_mem *f = ctx;
    char *p = n <= f->limit - f->used ? malloc(HEADER + n) : NULL;
    if (!p) return f->failed_allocs++, NULL;
    memcpy(p, &n, sizeof n);
    f->used += n, f->allocs++;
    return p + HEADER;
}

static void fake_free(void *ctx, void *ptr)
{
    fake_mem *f = ctx;
    char *p = (char *)ptr - HEADER;
    size_t n;
    memcpy(&n, p, sizeof n);
    f->used -= n, f->frees++;
    free(p);
}

static void *fake_event_create(void *ctx)
{
    fake_mem *f = ctx;
    fake_event *e = f->fail_events ? NULL : calloc(1, sizeof *e);
    if (!e) return NULL;
    e->next = f->events, f->events = e;
    f->live_events++;
    return e;
}

static bool fake_event_record(void *ctx, void *event, void *stream)
{
    fake_mem *f = ctx;
    if (f->records_left == 0) return false;
    if (f->records_left > 0) f->records_left--;
    fake_event *e = event;
    e->stream = stream, e->recorded = true, e->done = false;
    return true;
}

/* As cudaEventQuery: an event never recorded is complete. */
static bool fake_event_query(void *ctx, void *event)
{
    fake_event *e = event;
    return !e->recorded || e->done;
}

static void fake_event_synchronize(void *ctx, void *event)
{
    ((fake_mem *)ctx)->event_syncs++;
    ((fake_event *)event)->done = true;
}

static void fake_event_destroy(void *ctx, void *event)
{
    fake_mem *f = ctx;
    for (fake_event **link = &f->events; *link; link = &(*link)->next)
        if (*link == event) {
            *link = ((fake_event *)event)->next;
            break;
        }
    f->live_events--;
    free(event);
}

static void fake_synchronize(void *ctx)
{
    fake_mem *f = ctx;
    f->device_syncs++;
    for (fake_event *e = f->events; e; e = e->next) e->done = true;
}

static bool fake_mem_info(void *ctx, size_t *free_bytes, size_t *total)
{
    fake_mem *f = ctx;
    *free_bytes = f->limit - f->used, *total = f->limit;
    return true;
}

void fake_init(fake_mem *f, size_t limit) { *f = (fake_mem){.limit = limit, .records_left = -1}; }

em_raw_mem fake_raw(fake_mem *f)
{
    return (em_raw_mem){.name = "CUDA", .ctx = f, .alloc = fake_alloc, .free = fake_free,
                        .event_create = fake_event_create, .event_record = fake_event_record,
                        .event_query = fake_event_query, .event_synchronize = fake_event_synchronize,
                        .event_destroy = fake_event_destroy, .synchronize = fake_synchronize,
                        .mem_info = fake_mem_info};
}

void fake_complete(fake_mem *f, void *stream)
{
    for (fake_event *e = f->events; e; e = e->next)
        if (e->recorded && e->stream == stream) e->done = true;
}

int fake_pending(const fake_mem *f)
{
    int n = 0;
    for (const fake_event *e = f->events; e; e = e->next) n += e->recorded && !e->done;
    return n;
}

bool fake_clean(fake_mem *f)
{
    bool clean = !f->events && f->used == 0 && f->allocs == f->frees;
    while (f->events) fake_event_destroy(f, f->events);
    return clean;
}
