/* The op profiler's recorder: one array of spans for the whole process,
 * appended under a lock while recording, and a per-thread stack of the
 * spans still open (for nesting depth and for charging allocations to the
 * innermost one). The op layer and the autograd engine call em_profile_begin
 * / em_profile_end only when em_profiling is set (Note [Profiler cost]).
 *
 * Note [Profiler cost]
 * With the profiler off, an op pays one relaxed load of em_profiling and a
 * not-taken branch in em_dispatch (and the allocator one more): nothing is
 * timed, locked or formatted. Ids carry the session's generation, so a span
 * that was open when a session ended or restarted is ignored when it ends. */
#include "internal.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

bool em_profiling;

#define MAX_OPEN 128 /* nesting deeper than this is recorded without depth or memory */
#define GEN_SHIFT 40 /* id = generation << GEN_SHIFT | index */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static em_profile_event *events;
static int64_t nevents, capacity, nthreads;
static int64_t generation;
static unsigned flags;
static char *(*stack_provider)(void);

static _Thread_local struct {
    int64_t thread, generation;
    int nopen;
    int64_t open[MAX_OPEN];
} self;

int64_t em_profiler_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool em_profiler_enabled(void) { return __atomic_load_n(&em_profiling, __ATOMIC_RELAXED); }

static void free_events(void)
{
    for (int64_t i = 0; i < nevents; i++) {
        if (events[i].kind == EM_PROFILE_RANGE) free((char *)events[i].name);
        free((char *)events[i].shapes);
        free((char *)events[i].stack);
    }
    free(events);
    events = NULL;
    nevents = capacity = nthreads = 0;
}

em_status em_profiler_start(unsigned fl)
{
    pthread_mutex_lock(&lock);
    if (em_profiling) {
        pthread_mutex_unlock(&lock);
        return em_fail(EM_ERR_RUNTIME, "em_profiler_start: the profiler is already running");
    }
    free_events();
    generation++;
    flags = fl;
    __atomic_store_n(&em_profiling, true, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return EM_OK;
}

em_status em_profiler_stop(void)
{
    pthread_mutex_lock(&lock);
    bool was = em_profiling;
    __atomic_store_n(&em_profiling, false, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return was ? EM_OK : em_fail(EM_ERR_RUNTIME, "em_profiler_stop: the profiler is not running");
}

const em_profile_event *em_profiler_events(int64_t *count)
{
    if (count) *count = nevents;
    return events;
}

void em_profiler_clear(void)
{
    pthread_mutex_lock(&lock);
    if (!em_profiling) {
        free_events();
        generation++;
    }
    pthread_mutex_unlock(&lock);
}

void em_profiler_set_stack_provider(char *(*fn)(void)) { stack_provider = fn; }

/* "[[2, 3], [], []]": an input's sizes, [] for a missing or 0-d one (PyTorch's Input Shapes). */
static char *format_shapes(int nin, const em_tensor *const *in)
{
    size_t cap = 3 + (size_t)nin * (EM_MAX_DIMS * 22 + 4), n = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    n += (size_t)snprintf(s + n, cap - n, "[");
    for (int i = 0; i < nin; i++) {
        n += (size_t)snprintf(s + n, cap - n, "%s[", i ? ", " : "");
        for (int d = 0; in && in[i] && d < in[i]->ndim; d++)
            n += (size_t)snprintf(s + n, cap - n, "%s%lld", d ? ", " : "", (long long)in[i]->sizes[d]);
        n += (size_t)snprintf(s + n, cap - n, "]");
    }
    snprintf(s + n, cap - n, "]");
    return s;
}

int64_t em_profile_begin(const char *name, int kind, int nin, const em_tensor *const *in)
{
    unsigned fl = flags;
    char *shapes = fl & EM_PROFILE_SHAPES ? format_shapes(nin, in) : NULL;
    char *stack = fl & EM_PROFILE_STACK && stack_provider ? stack_provider() : NULL;
    int64_t begin = em_profiler_now_ns();
    pthread_mutex_lock(&lock);
    if (!em_profiling || (nevents == capacity && !(capacity = capacity ? 2 * capacity : 4096,
                                                   events = realloc(events, capacity * sizeof *events)))) {
        if (em_profiling) free_events(); /* out of memory: the session's record is lost, not corrupted */
        pthread_mutex_unlock(&lock);
        free(shapes), free(stack);
        return -1;
    }
    if (self.generation != generation) self.generation = generation, self.thread = ++nthreads, self.nopen = 0;
    int64_t index = nevents++;
    events[index] = (em_profile_event){.name = name, .kind = kind, .depth = self.nopen, .thread = self.thread,
                                       .begin_ns = begin, .end_ns = -1, .shapes = shapes, .stack = stack};
    pthread_mutex_unlock(&lock);
    if (self.nopen < MAX_OPEN) self.open[self.nopen] = index;
    self.nopen++;
    return generation << GEN_SHIFT | index;
}

void em_profile_end(int64_t id)
{
    if (id < 0) return;
    int64_t end = em_profiler_now_ns(), index = id & (((int64_t)1 << GEN_SHIFT) - 1);
    pthread_mutex_lock(&lock);
    if (id >> GEN_SHIFT == generation && index < nevents) {
        events[index].end_ns = end;
        if (self.generation == generation && self.nopen > 0) self.nopen--;
    }
    pthread_mutex_unlock(&lock);
}

void em_profile_memory(int64_t delta)
{
    if (!(flags & EM_PROFILE_MEMORY)) return;
    pthread_mutex_lock(&lock);
    if (em_profiling && self.generation == generation && self.nopen > 0 && self.nopen <= MAX_OPEN)
        events[self.open[self.nopen - 1]].self_bytes += delta;
    pthread_mutex_unlock(&lock);
}

void em_profile_claim_output(int64_t id, const em_tensor *out)
{
    em_storage *st = out ? out->storage : NULL;
    if (id < 0 || !(flags & EM_PROFILE_MEMORY) || !st || st->version != 0 || st->external) return;
    pthread_mutex_lock(&lock);
    int64_t index = id & (((int64_t)1 << GEN_SHIFT) - 1);
    if (id >> GEN_SHIFT == generation && self.generation == generation && self.nopen <= MAX_OPEN &&
        self.nopen > 0 && self.open[self.nopen - 1] == index) {
        events[index].self_bytes += (int64_t)st->nbytes;
        if (self.nopen > 1) events[self.open[self.nopen - 2]].self_bytes -= (int64_t)st->nbytes;
    }
    pthread_mutex_unlock(&lock);
}

int64_t em_profiler_range_push(const char *name)
{
    if (!name) return em_fail(EM_ERR_VALUE, "em_profiler_range_push: name is NULL"), -1;
    if (!em_profiler_enabled()) return -1;
    char *copy = strdup(name);
    if (!copy) return -1;
    int64_t id = em_profile_begin(copy, EM_PROFILE_RANGE, 0, NULL);
    if (id < 0) free(copy);
    return id;
}

void em_profiler_range_pop(int64_t id) { em_profile_end(id); }
