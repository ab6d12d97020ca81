/* The intra-op thread pool (Note [Thread pool] in parallel.h).
 *
 * One job at a time: `ticket` packs a generation (high 32 bits) with the
 * next unclaimed chunk (low 32 bits). Posting a job first moves the ticket to
 * a new generation with no open chunk, then writes the job's fields, then
 * opens chunk 0; a worker claims with a compare-exchange on the ticket value
 * it read the fields under, so a claim with stale fields always fails. */
#define _GNU_SOURCE
#include "parallel.h"
#include "internal.h"
#include <linux/futex.h>
#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_WORKERS 255
#define SPIN_NS 50000 /* a worker's spin after a job before it sleeps */
#define STALL_NS 1000000 /* a wait for workers this long (and > 2 chunks) is a stall: a time
                           * slice lost to another process, not a worker waking (<= 0.1 ms) */
#define SERIAL_NS 200000000 /* after a stall, jobs run on the caller alone this long */
#define CLOSED UINT32_MAX /* the ticket's chunk while a job is being posted */

static struct {
    pthread_mutex_t grow;        /* serializes starting workers */
    _Atomic int nworkers;        /* workers started */
    _Atomic int want;            /* workers that take part: threads - 1 */
    atomic_flag busy;            /* a caller owns the pool */
    _Atomic uint64_t ticket;     /* generation << 32 | next chunk */
    _Atomic uint32_t wake;       /* bumped per job: workers sleep on it */
    _Atomic int sleepers;
    _Atomic uint32_t done;       /* chunks finished in the current job */
    _Atomic int caller_waits;    /* the caller sleeps on `done` */
    _Atomic(em_chunk_fn) fn;
    _Atomic(void *) ctx;
    _Atomic uint32_t nchunks;
    _Atomic uint64_t serial_until; /* Note [Stalls]: now_ns() before which jobs run serially */
    _Atomic int64_t stalls;        /* stalls seen since the process started */
} pool = {.grow = PTHREAD_MUTEX_INITIALIZER, .busy = ATOMIC_FLAG_INIT};

static _Thread_local bool in_job;

bool em_in_parallel(void) { return in_job; }

static void futex_wait(_Atomic uint32_t *addr, uint32_t expect)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expect, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr) { syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); }

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Claims and runs chunks of the current job until none is left. The job's
 * fields are read after a load of the ticket that shows an open chunk and
 * trusted only if the claim (a compare-exchange on that same ticket value)
 * succeeds: a newer job would have changed the ticket first. */
static int64_t work(void)
{
    for (int64_t ran = 0;; ran++) {
        uint64_t t;
        uint32_t n;
        em_chunk_fn fn;
        void *ctx;
        do {
            t = atomic_load(&pool.ticket);
            n = atomic_load_explicit(&pool.nchunks, memory_order_relaxed);
            fn = atomic_load_explicit(&pool.fn, memory_order_relaxed);
            ctx = atomic_load_explicit(&pool.ctx, memory_order_relaxed);
            if ((uint32_t)t >= n) return ran;
        } while (!atomic_compare_exchange_strong(&pool.ticket, &t, t + 1));
        fn(ctx, (int64_t)(uint32_t)t);
        if (atomic_fetch_add(&pool.done, 1) + 1 == n && atomic_load(&pool.caller_waits)) futex_wake(&pool.done);
    }
}

static void *worker_main(void *arg)
{
    const int id = (int)(intptr_t)arg;
    in_job = true;          /* anything a chunk calls runs serially on this thread */
    omp_set_num_threads(1); /* and OpenMP (OpenBLAS, oneDNN) too */
    uint32_t seen = atomic_load(&pool.wake);
    for (;;) {
        uint32_t w = atomic_load(&pool.wake);
        if (w == seen) {
            uint64_t until = now_ns() + SPIN_NS;
            for (int i = 0; (w = atomic_load(&pool.wake)) == seen; i++) {
                cpu_relax();
                if ((i & 255) == 255 && now_ns() > until) {
                    atomic_fetch_add(&pool.sleepers, 1);
                    futex_wait(&pool.wake, seen);
                    atomic_fetch_sub(&pool.sleepers, 1);
                }
            }
        }
        seen = w;
        if (id < atomic_load(&pool.want)) work();
    }
    return NULL;
}

/* Starts workers up to `want` (they are never stopped; extra ones sleep). */
static void grow(int want)
{
    pthread_mutex_lock(&pool.grow);
    for (int n = atomic_load(&pool.nworkers); n < want && n < MAX_WORKERS; n++) {
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        bool ok = pthread_create(&th, &attr, worker_main, (void *)(intptr_t)n) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break; /* fewer workers: the caller does the rest */
        atomic_store(&pool.nworkers, n + 1);
    }
    pthread_mutex_unlock(&pool.grow);
}

/* A forked child has none of the parent's workers: start afresh. */
static void after_fork_child(void)
{
    atomic_store(&pool.serial_until, 0);
    pthread_mutex_init(&pool.grow, NULL);
    atomic_store(&pool.nworkers, 0);
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.caller_waits, 0);
    atomic_flag_clear(&pool.busy);
}

static void once_init(void) { pthread_atfork(NULL, NULL, after_fork_child); }

/* Note [Stalls]
 * A worker that has claimed a chunk and then lost its core (another process,
 * a DataLoader worker) holds the caller for a scheduler time slice,
 * milliseconds, on every op that happens to hit it. So the caller times its
 * own chunks and its wait for the others: a wait over STALL_NS and over two
 * of its own chunks is a stall, and for SERIAL_NS after one every job runs
 * on the caller alone, then the pool tries its workers again. The chunks are
 * the same either way (em_parallel_chunks does not look at stalls), so
 * results stay bit for bit the same; on a quiet machine no wait gets near
 * STALL_NS and nothing changes. */
static bool serial_now(void)
{
    uint64_t until = atomic_load_explicit(&pool.serial_until, memory_order_relaxed);
    return until && now_ns() < until;
}

static void note_wait(uint64_t begin, uint64_t worked, uint64_t waited, int64_t ran)
{
    const uint64_t wait = waited - worked, per_chunk = (worked - begin) / (uint64_t)(ran > 0 ? ran : 1);
    if (ran > 0 && wait > STALL_NS && wait > 2 * per_chunk) {
        atomic_store_explicit(&pool.serial_until, waited + SERIAL_NS, memory_order_relaxed);
        atomic_fetch_add_explicit(&pool.stalls, 1, memory_order_relaxed);
    }
}

int64_t em_parallel_stalls(void) { return atomic_load(&pool.stalls); }

void em_parallel_run(int64_t nchunks, em_chunk_fn fn, void *ctx)
{
    const int threads = em_get_num_threads();
    if (nchunks < 2 || threads < 2 || in_job || nchunks >= CLOSED || serial_now() ||
        atomic_flag_test_and_set(&pool.busy)) {
        bool was = in_job;
        in_job = true;
        for (int64_t k = 0; k < nchunks; k++) fn(ctx, k);
        in_job = was;
        return;
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, once_init);
    int want = threads - 1 < MAX_WORKERS ? threads - 1 : MAX_WORKERS;
    if (want > nchunks - 1) want = (int)nchunks - 1;
    if (atomic_load(&pool.nworkers) < want) grow(want);
    atomic_store(&pool.want, want);

    /* close the ticket (a new generation, no open chunk) before the fields change */
    uint64_t gen = (atomic_load(&pool.ticket) >> 32) + 1;
    atomic_store(&pool.ticket, gen << 32 | CLOSED);
    atomic_store_explicit(&pool.fn, fn, memory_order_relaxed);
    atomic_store_explicit(&pool.ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&pool.nchunks, (uint32_t)nchunks, memory_order_relaxed);
    atomic_store(&pool.done, 0);
    atomic_store(&pool.ticket, gen << 32); /* opens the job: publishes the fields above */
    atomic_fetch_add(&pool.wake, 1);
    if (atomic_load(&pool.sleepers) > 0) futex_wake(&pool.wake);

    in_job = true;
    const uint64_t begin = now_ns();
    const int64_t ran = work();
    const uint64_t worked = now_ns();
    in_job = false;
    /* every chunk is claimed: wait for those still running elsewhere */
    uint64_t until = 0;
    for (int i = 0;; i++) {
        uint32_t d = atomic_load(&pool.done);
        if (d == (uint32_t)nchunks) break;
        cpu_relax();
        if ((i & 255) == 255) {
            if (!until) until = now_ns() + SPIN_NS;
            else if (now_ns() > until) {
                atomic_store(&pool.caller_waits, 1);
                if (atomic_load(&pool.done) != (uint32_t)nchunks) futex_wait(&pool.done, d);
            }
        }
    }
    atomic_store(&pool.caller_waits, 0);
    atomic_flag_clear(&pool.busy);
    note_wait(begin, worked, now_ns(), ran);
}

static _Atomic int64_t grain_divisor = 1;

void em_set_grain_divisor(int64_t divisor) { atomic_store(&grain_divisor, divisor < 1 ? 1 : divisor); }

int64_t em_parallel_chunks(int64_t n, int64_t grain)
{
    const int threads = em_get_num_threads();
    grain /= atomic_load_explicit(&grain_divisor, memory_order_relaxed);
    if (grain < 1) grain = 1;
    if (threads < 2 || in_job || n < 2 * grain || omp_in_parallel()) return 1; /* inside an OpenMP loop too */
    int64_t chunks = n / grain, most = 4 * (int64_t)threads;
    return chunks < most ? chunks : most;
}

void em_parallel_range(int64_t n, int64_t nchunks, int64_t align, int64_t k, int64_t *begin, int64_t *end)
{
    if (align < 1) align = 1;
    int64_t per = (n + nchunks - 1) / nchunks;
    per = (per + align - 1) / align * align;
    int64_t b = k * per, e = b + per;
    *begin = b < n ? b : n;
    *end = e < n ? e : n;
}

typedef struct range_job {
    int64_t n, nchunks;
    em_range_fn fn;
    void *ctx;
} range_job;

static void range_chunk(void *p, int64_t k)
{
    const range_job *j = p;
    int64_t b, e;
    em_parallel_range(j->n, j->nchunks, 1, k, &b, &e);
    if (b < e) j->fn(j->ctx, b, e);
}

void em_parallel_for(int64_t n, int64_t cost, int64_t grain, em_range_fn fn, void *ctx)
{
    if (n <= 0) return;
    if (cost < 1) cost = 1;
    int64_t chunks = n > INT64_MAX / cost ? em_parallel_chunks(INT64_MAX, grain) : em_parallel_chunks(n * cost, grain);
    range_job j = {.n = n, .nchunks = chunks < n ? chunks : n, .fn = fn, .ctx = ctx};
    if (j.nchunks < 2) {
        fn(ctx, 0, n);
        return;
    }
    em_parallel_run(j.nchunks, range_chunk, &j);
}
