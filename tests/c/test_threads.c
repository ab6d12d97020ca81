/* The thread pool (src/core/parallel.c) and the thread settings: every
 * chunk runs exactly once, nested calls run serially on the calling thread,
 * concurrent callers do not mix their jobs, and results of the parallel
 * kernels match the one-thread results bit for bit. */
#include "test.h"
#include "../../src/core/parallel.h"
#include <pthread.h>
#include <stdatomic.h>

typedef struct count_job {
    _Atomic int *hits;
    _Atomic int nested_parallel; /* a nested call that did not run serially */
    bool nest;
} count_job;

static void nested_chunk(void *p, int64_t k)
{
    count_job *j = p;
    if (!em_in_parallel()) atomic_store(&j->nested_parallel, 1);
    atomic_fetch_add(&j->hits[k], 1);
}

static void count_chunk(void *p, int64_t k)
{
    count_job *j = p;
    atomic_fetch_add(&j->hits[k], 1);
    if (j->nest) {
        _Atomic int inner[8] = {0};
        count_job sub = {.hits = inner};
        if (em_parallel_chunks(1 << 30, 1) != 1) atomic_store(&j->nested_parallel, 1);
        em_parallel_run(8, nested_chunk, &sub);
        for (int i = 0; i < 8; i++)
            if (inner[i] != 1 || sub.nested_parallel) atomic_store(&j->nested_parallel, 1);
    }
}

/* n chunks under `threads` threads, many times: each chunk exactly once. */
static bool runs_once(int threads, int64_t n, bool nest)
{
    em_set_num_threads(threads);
    _Atomic int *hits = calloc((size_t)n, sizeof *hits);
    bool ok = hits != NULL;
    for (int rep = 0; ok && rep < 200; rep++) {
        for (int64_t k = 0; k < n; k++) hits[k] = 0;
        count_job j = {.hits = hits, .nest = nest};
        em_parallel_run(n, count_chunk, &j);
        for (int64_t k = 0; k < n; k++) ok &= hits[k] == 1;
        ok &= !j.nested_parallel;
    }
    free(hits);
    return ok;
}

TEST(pool_runs_every_chunk_once)
{
    int saved = em_get_num_threads();
    for (int threads = 1; threads <= 4; threads++)
        for (int64_t n = 0; n <= 9; n++) CHECK_MSG(runs_once(threads, n, false), "threads %d, %d chunks", threads, (int)n);
    CHECK(runs_once(3, 1000, false));
    CHECK(runs_once(2, 7, true)); /* nested calls: serial, still every chunk once */
    em_set_num_threads(saved);
}

static void sum_range(void *p, int64_t b, int64_t e)
{
    _Atomic int64_t *sum = p;
    int64_t s = 0;
    for (int64_t i = b; i < e; i++) s += i;
    atomic_fetch_add(sum, s);
}

TEST(pool_for_covers_range)
{
    int saved = em_get_num_threads();
    em_set_num_threads(3);
    const int64_t sizes[] = {0, 1, 5, 100, 4097, 1000003};
    for (int i = 0; i < 6; i++) {
        _Atomic int64_t sum = 0;
        int64_t n = sizes[i];
        em_parallel_for(n, 1, 64, sum_range, &sum);
        CHECK_MSG(sum == n * (n - 1) / 2, "n = %lld", (long long)n);
    }
    /* the split: below two grains one chunk; never more than 4 per thread */
    CHECK(em_parallel_chunks(127, 64) == 1);
    CHECK(em_parallel_chunks(128, 64) == 2);
    CHECK(em_parallel_chunks(1 << 30, 64) == 12);
    em_set_num_threads(1);
    CHECK(em_parallel_chunks(1 << 30, 64) == 1);
    em_set_num_threads(saved);
}

/* Several threads call the pool at once: each job still runs once per chunk. */
static void *caller(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)runs_once(2, 33, false);
}

TEST(pool_concurrent_callers)
{
    int saved = em_get_num_threads();
    pthread_t th[3];
    for (int i = 0; i < 3; i++) CHECK(pthread_create(&th[i], NULL, caller, NULL) == 0);
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        void *r;
        pthread_join(th[i], &r);
        ok &= r != NULL;
    }
    CHECK(ok);
    em_set_num_threads(saved);
}

TEST(thread_settings)
{
    int saved = em_get_num_threads();
    em_set_num_threads(3);
    CHECK(em_get_num_threads() == 3);
    em_set_num_threads(0); /* the C API clamps; Python raises */
    CHECK(em_get_num_threads() == 1);
    CHECK(em_get_num_interop_threads() >= 1);
    CHECK_ERR(em_set_num_interop_threads(0), EM_ERR_RUNTIME);
    em_set_num_threads(saved);
}

/* Parallel kernels against the one-thread result, bit for bit: pointwise,
 * a reduction, softmax, a large GEMM split over the pool. */
static em_tensor *ramp(int64_t n, int64_t m)
{
    em_tensor *t = em_empty(2, (int64_t[]){n, m}, EM_F64);
    double *p = em_data_ptr(t);
    for (int64_t i = 0; i < n * m; i++) p[i] = sin(0.37 * (double)i) + 1e-3 * (double)(i % 97);
    return t;
}

static em_tensor *kernels(const em_tensor *a, const em_tensor *b)
{
    em_tensor *e = em_exp(a), *s = em_sum(e, 1, (int[]){1}, false, EM_DTYPE_NONE);
    em_tensor *sm = em_softmax(a, 1, EM_DTYPE_NONE), *mm = em_matmul(a, b);
    em_tensor *parts[] = {e, s, sm, mm};
    em_tensor *flat[4];
    for (int i = 0; i < 4; i++) flat[i] = em_reshape(parts[i], 1, (int64_t[]){-1});
    em_tensor *all = em_cat(4, (const em_tensor *const *)flat, 0);
    for (int i = 0; i < 4; i++) em_release(parts[i]), em_release(flat[i]);
    return all;
}

TEST(parallel_results_match_one_thread)
{
    int saved = em_get_num_threads();
    em_tensor *a = ramp(600, 300), *b = ramp(300, 400);
    em_set_num_threads(1);
    em_tensor *one = kernels(a, b);
    em_set_num_threads(3);
    em_tensor *three = kernels(a, b);
    em_set_num_threads(saved);
    CHECK(one && three && em_numel(one) == em_numel(three));
    CHECK(memcmp(em_data_ptr(one), em_data_ptr(three), (size_t)em_numel(one) * sizeof(double)) == 0);
    em_release(a), em_release(b), em_release(one), em_release(three);
}

/* A job whose chunks on pool workers sleep: the caller's wait for them is a
 * stall, and the next jobs run on the caller alone (Note [Stalls]). */
typedef struct where_job {
    pthread_t caller;
    int sleep_us;                 /* a worker's chunk sleeps this long */
    _Atomic int on_workers;       /* chunks a worker ran */
} where_job;

static void where_chunk(void *p, int64_t k)
{
    (void)k;
    where_job *j = p;
    if (pthread_equal(pthread_self(), j->caller)) {
        struct timespec t = {0, 200000}; /* the caller's chunks take a while, so a worker claims one */
        nanosleep(&t, NULL);
    } else {
        atomic_fetch_add(&j->on_workers, 1);
        struct timespec t = {0, (long)j->sleep_us * 1000};
        nanosleep(&t, NULL);
    }
}

static int run_where(int sleep_us)
{
    where_job j = {.caller = pthread_self(), .sleep_us = sleep_us};
    em_parallel_run(8, where_chunk, &j);
    return j.on_workers;
}

TEST(pool_runs_serially_after_a_stall)
{
    int saved = em_get_num_threads();
    em_set_num_threads(2);
    const int64_t before = em_parallel_stalls();
    /* a worker must get a chunk for a stall; on a loaded machine it may not at once */
    for (int tries = 0; tries < 50 && em_parallel_stalls() == before; tries++) run_where(5000);
    CHECK(em_parallel_stalls() > before);
    CHECK(run_where(0) == 0); /* right after: the caller alone */
    struct timespec t = {0, 300000000};
    nanosleep(&t, NULL); /* past the serial period: the workers take part again */
    int on_workers = 0;
    for (int tries = 0; tries < 50 && !on_workers; tries++) on_workers = run_where(0);
    CHECK(on_workers > 0);
    em_set_num_threads(saved);
}
