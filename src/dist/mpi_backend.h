/* The MPI backend of ember.distributed: collectives and point-to-point
 * transfers on contiguous host buffers, run in order by one communication
 * thread per process, so that the caller's thread computes while a transfer
 * runs.
 * It knows nothing of tensors: callers pass addresses, element counts and a
 * dtype name; ember.distributed (Python) makes tensors contiguous and keeps
 * them alive until the work is done. A blocking collective may run on the
 * caller's thread instead (dm_try_inline). Built into its own extension module
 * (ember._mpi), so that libember and `import ember` never load libmpi. */
#ifndef EMBER_DIST_MPI_BACKEND_H
#define EMBER_DIST_MPI_BACKEND_H
#include <stdint.h>

typedef enum {
    DM_ALLREDUCE, DM_BROADCAST, DM_REDUCE, DM_ALLGATHER, DM_GATHER, DM_SCATTER,
    DM_REDUCE_SCATTER, DM_ALLTOALL, DM_ALLTOALLV, DM_SEND, DM_RECV, DM_BARRIER,
    DM_COMM_CREATE, DM_COMM_FREE, DM_FINALIZE,
} dm_kind;

/* ReduceOp codes, as ember.distributed.ReduceOp numbers them (AVG is SUM
 * followed by a division, done by the caller). */
typedef enum { DM_SUM, DM_PRODUCT, DM_MIN, DM_MAX, DM_BAND, DM_BOR, DM_BXOR, DM_NUM_OPS } dm_op;

typedef enum { DM_QUEUED, DM_DONE, DM_FAILED } dm_state;

/* One queued operation. Counts are in elements; `count` is the per-rank
 * block for the gather/scatter family. Owned by its submitter and the queue
 * (refs); dm_work_release frees it when both have let go. */
typedef struct dm_work {
    dm_kind kind;
    int comm;               /* index in the communicator table (0: world) */
    void *send, *recv;      /* in-place kinds use recv only */
    int64_t count;
    int dtype;              /* index from dm_dtype_index */
    dm_op op;
    int peer;               /* root, or send/recv peer (-1: any source) */
    int tag;
    int *ints;              /* DM_ALLTOALLV: 4 * size counts/displacements; DM_COMM_CREATE: ranks */
    int nints;
    int result;             /* DM_RECV: the source; DM_COMM_CREATE: new comm index or -1 */
    dm_state state;         /* written by the thread under its lock */
    char error[256];
    int refs;
    struct dm_work *next;
} dm_work;

/* Index of a dtype name ("float32", "bfloat16", ...), or -1. */
int dm_dtype_index(const char *name);
/* Starts the communication thread and MPI once per process; 0 or -1 with
 * `err` filled. Then dm_rank / dm_size give MPI_COMM_WORLD's. */
int dm_init(char *err, int errlen);
int dm_rank(void);
int dm_size(void);
/* A zeroed work with one reference (the submitter's), or NULL. */
dm_work *dm_work_new(dm_kind kind);
/* Queues it (taking a second reference) for the communication thread. */
int dm_submit(dm_work *w, char *err, int errlen);
/* Runs a collective on the calling thread when the communication thread is
 * idle (Note [inline calls] in mpi_thread.c): 1 when it ran (w->state set),
 * 0 when the caller must dm_submit it. Past `seconds` (< 0: never) the job
 * is aborted. */
int dm_try_inline(dm_work *w, double seconds);
/* Waits up to `seconds` (< 0: forever); returns its state (DM_QUEUED on timeout). */
dm_state dm_wait(dm_work *w, double seconds);
void dm_work_release(dm_work *w);
/* Runs one work on the calling (communication) thread: DM_DONE, or
 * DM_FAILED with w->error set, or DM_QUEUED for a send or receive now in
 * flight: dm_p2p_poll then reports it (up to dm_p2p_pending() at a time,
 * in `done` and `states`). */
dm_state dm_execute(dm_work *w);
#define DM_MAX_P2P 4096
int dm_p2p_pending(void);
int dm_p2p_poll(dm_work **done, dm_state *states);
/* Finalizes MPI after the queued work (at exit); dm_abort ends the whole job. */
void dm_finalize(void);
void dm_abort(int code);
#endif
