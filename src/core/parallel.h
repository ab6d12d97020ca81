/* Ember's intra-op thread pool (src/core/parallel.c) and its one grain
 * policy: every parallel loop in the CPU kernels goes through here.
 *
 * Note [Thread pool]
 * The calling thread posts a job of n chunks; it and the pool's workers
 * claim chunks with an atomic counter, and the call returns as soon as every
 * chunk is done, not when every thread has arrived. A worker that wakes late
 * finds nothing left to claim, so a descheduled thread (a core taken by
 * another process) costs at most the chunk it holds, where an OpenMP region
 * waits at its barrier for every thread on every op. Workers spin briefly
 * after a job, then sleep on a futex. BLAS runs with one thread; large GEMMs
 * are split over this pool by the caller (src/cpu/linalg.c). A caller that
 * waits long for a worker holding a chunk runs the following jobs alone for
 * a while (Note [Stalls] in parallel.c). */
#ifndef EMBER_PARALLEL_H
#define EMBER_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/* Work below a family's grain (in elements, or in the unit the site says)
 * runs on the calling thread: posting a job costs about 1-5 us, waking a
 * sleeping worker 20-50 us (measured by bench/bench_threads.py). */
enum {
    EM_GRAIN = 32768,             /* elementwise, copies, casts, optimizer steps */
    EM_GRAIN_STORE = 16 * 32768,  /* contiguous fills: one store per element */
    EM_GRAIN_REDUCE = 32768,      /* reductions and scans: elements read */
    EM_GRAIN_ROWS = 32768,        /* softmax, norms, losses: rows x row length */
    EM_GRAIN_GATHER = 32768,      /* index/gather/scatter/embedding: elements moved */
    EM_GRAIN_WINDOW = 32768,      /* pooling, upsampling, im2col: output x window */
    EM_GRAIN_GEMM = 4 << 20,      /* M * N * K multiply-adds of one GEMM */
    EM_GRAIN_LAPACK = 1 << 20,    /* a batch of factorizations: about flops / 2 (src/cpu/lapack.c) */
};

/* fn(ctx, k) for every k in [0, nchunks), each exactly once, over the pool's
 * threads and the caller. Serial (in order, on the caller) when nchunks < 2,
 * when one thread is set, inside another parallel job (nested calls) or when
 * another thread is using the pool. */
typedef void (*em_chunk_fn)(void *ctx, int64_t k);
void em_parallel_run(int64_t nchunks, em_chunk_fn fn, void *ctx);

/* How many chunks a loop of n items splits into at this grain: 1 below
 * 2 * grain, with one thread or inside a parallel job; else at most
 * 4 per thread (several, so that a thread that stalls holds little), each
 * at least `grain` items. Depends only on n, grain and the thread count. */
int64_t em_parallel_chunks(int64_t n, int64_t grain);

/* fn(ctx, begin, end) over n items of `cost` work each (in the grain's
 * unit), split as em_parallel_chunks(n * cost, grain) says but into at most
 * n chunks; fn(ctx, 0, n) on the caller when that is 1 chunk. */
typedef void (*em_range_fn)(void *ctx, int64_t begin, int64_t end);
void em_parallel_for(int64_t n, int64_t cost, int64_t grain, em_range_fn fn, void *ctx);

/* Chunk k's range when [0, n) is split into nchunks on `align` boundaries. */
void em_parallel_range(int64_t n, int64_t nchunks, int64_t align, int64_t k, int64_t *begin, int64_t *end);

/* Is this thread running a chunk of a parallel job? */
bool em_in_parallel(void);

#endif
