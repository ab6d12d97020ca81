/* The op profiler (src/core/profiler.c): spans of dispatched ops and of
 * backward nodes, nesting under user ranges, shapes and memory, and nothing
 * recorded while it is off. */
#include "test.h"

static const em_profile_event *find(const em_profile_event *e, int64_t n, const char *name)
{
    for (int64_t i = 0; i < n; i++)
        if (!strcmp(e[i].name, name)) return &e[i];
    return NULL;
}

TEST(profiler_records_ops_ranges_and_backward)
{
    em_tensor *x = trand(EM_F32, SHAPE(4, 8), -1, 1), *w = trand(EM_F32, SHAPE(8, 2), -1, 1);
    CHECK(x && w && em_set_requires_grad(w, true) == EM_OK);
    CHECK(em_profiler_start(EM_PROFILE_SHAPES | EM_PROFILE_MEMORY) == EM_OK);
    CHECK_ERR(em_profiler_start(0), EM_ERR_RUNTIME); /* one session at a time */
    int64_t range = em_profiler_range_push("step");
    em_tensor *y = em_matmul(x, w), *loss = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    em_status st = loss ? em_backward(1, &loss, NULL, false, false, 0, NULL) : EM_ERR_RUNTIME;
    em_profiler_range_pop(range);
    CHECK(em_profiler_stop() == EM_OK && st == EM_OK);
    int64_t n;
    const em_profile_event *e = em_profiler_events(&n);
    const em_profile_event *step = find(e, n, "step"), *mm = find(e, n, "mm"), *node = find(e, n, "MmBackward0");
    bool ok = step && mm && node && step->kind == EM_PROFILE_RANGE && mm->kind == EM_PROFILE_OP &&
              node->kind == EM_PROFILE_BACKWARD && step->depth == 0 && mm->depth >= 1 &&
              mm->begin_ns >= step->begin_ns && mm->end_ns <= step->end_ns && mm->end_ns >= mm->begin_ns &&
              mm->shapes && !strcmp(mm->shapes, "[[4, 8], [8, 2]]") && mm->self_bytes == 4 * 2 * 4 &&
              mm->thread == step->thread;
    em_release(loss), em_release(y), em_release(w), em_release(x);
    CHECK_MSG(ok, "profiler events: %lld recorded, step %p mm %p node %p", (long long)n, (void *)step, (void *)mm,
              (void *)node);
    em_profiler_clear();
    CHECK(em_profiler_events(&n) == NULL && n == 0);
}

TEST(profiler_off_records_nothing)
{
    CHECK_ERR(em_profiler_stop(), EM_ERR_RUNTIME);
    CHECK(em_profiler_range_push("idle") == -1);
    em_tensor *a = em_ones(SHAPE(3), EM_F32), *b = a ? em_add(a, a, 1.0) : NULL;
    int64_t n;
    em_profiler_events(&n);
    em_release(b), em_release(a);
    CHECK(b && n == 0 && !em_profiler_enabled());
}
