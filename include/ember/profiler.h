/* The op profiler (PyTorch's torch.profiler, CPU activity): a span for every
 * dispatched op and every autograd node run by backward, plus user ranges.
 * Off by default; while off, an op pays one predictable branch. */
#ifndef EMBER_PROFILER_H
#define EMBER_PROFILER_H
#include "core.h"

enum em_profile_kind { EM_PROFILE_OP, EM_PROFILE_BACKWARD, EM_PROFILE_RANGE };

/* What em_profiler_start records besides names and times. */
enum { EM_PROFILE_SHAPES = 1, EM_PROFILE_MEMORY = 2, EM_PROFILE_STACK = 4 };

typedef struct em_profile_event {
    const char *name;          /* an op or node name, or a range's (owned by the profiler) */
    int kind;                  /* enum em_profile_kind */
    int depth;                 /* how many spans of the same thread were open when it began */
    int64_t thread;            /* 1, 2, ... in the order threads first recorded a span */
    int64_t begin_ns, end_ns;  /* CLOCK_MONOTONIC; end_ns is -1 while the span is open */
    int64_t self_bytes;        /* EM_PROFILE_MEMORY: bytes allocated minus freed by this span
                                * itself, not by spans nested in it */
    const char *shapes;        /* EM_PROFILE_SHAPES: the tensor inputs' sizes, "[[2, 3], []]"; else NULL */
    const char *stack;         /* EM_PROFILE_STACK: the stack provider's text; else NULL */
} em_profile_event;

/* Starts recording (flags: EM_PROFILE_*), dropping the events of an earlier
 * session. Fails if the profiler is already on. */
em_status em_profiler_start(unsigned flags);
/* Stops recording; the events stay readable until the next start or clear. */
em_status em_profiler_stop(void);
bool em_profiler_enabled(void);
/* The recorded events in the order they began, their number in *count
 * (count may be NULL); the pointer is valid until the next
 * em_profiler_start / em_profiler_clear (not while recording). */
const em_profile_event *em_profiler_events(int64_t *count);
void em_profiler_clear(void);

/* A user range (record_function): push returns its id (-1 when the profiler
 * is off, which pop ignores); ranges nest like the ops inside them. name is copied. */
int64_t em_profiler_range_push(const char *name);
void em_profiler_range_pop(int64_t id);

/* With EM_PROFILE_STACK, fn is called at the start of each span and returns
 * a malloc'ed description of the caller's stack (or NULL), which the
 * profiler owns. A language binding sets it; NULL removes it. */
void em_profiler_set_stack_provider(char *(*fn)(void));

/* The profiler's clock, in nanoseconds (CLOCK_MONOTONIC). */
int64_t em_profiler_now_ns(void);

#endif
