/* The communication thread: it initializes MPI, then runs queued work in
 * submission order (every rank submits collectives in the same order, so
 * one FIFO keeps them matched), and finalizes MPI at exit. Callers wait on
 * a work with a timeout, so a dead or stuck peer gives an error, not a hang.
 *
 * Note [inline calls]: handing a blocking collective to the thread costs two
 * thread wake-ups, more than a small all-reduce itself. So when the thread
 * is idle (nothing queued, running or in flight), dm_try_inline runs the
 * call on the caller's thread instead (MPI_THREAD_SERIALIZED: one MPI call
 * at a time, `busy` says which thread has it). The caller cannot time out
 * from inside MPI, so the idle thread watches its deadline and ends the job
 * (MPI_Abort, with a message) when it passes, as NCCL's watchdog does. */
#include <mpi.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mpi_backend.h"

void dm_types_init(void);
int dm_comms_init(void);
void dm_comms_free(void);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queued = PTHREAD_COND_INITIALIZER;  /* the queue got work */
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER; /* a work finished, or the thread started */
static dm_work *head, *tail;
static pthread_t thread;
static enum { OFF, STARTING, RUNNING, FAILED, FINALIZED } phase;
static int world_rank, world_size, serialized;
static char init_error[256];
static int busy;                   /* an MPI call is running, on the thread or inline */
static dm_work *inline_work;       /* the inline call, and when it must be done by */
static struct timespec inline_deadline;
static double inline_seconds;

static struct timespec after(double seconds)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    double s = t.tv_sec + t.tv_nsec * 1e-9 + seconds;
    t.tv_sec = (time_t)s;
    t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
    return t;
}

static int passed(struct timespec t)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec > t.tv_sec || (now.tv_sec == t.tv_sec && now.tv_nsec >= t.tv_nsec);
}

/* Lock held, thread idle: ends the job when an inline call is past its deadline. */
static void watchdog(void)
{
    if (inline_work && inline_seconds >= 0 && passed(inline_deadline)) {
        fprintf(stderr, "ember.distributed: a collective timed out after %g s on rank %d (world size %d): another "
                "rank died, is stuck, or did not call the same collective; ending the job\n", inline_seconds,
                world_rank, world_size);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Records a finished work and drops the queue's reference (lock held). */
static void finish(dm_work *w, dm_state state)
{
    w->state = state;
    if (--w->refs == 0) {
        free(w->ints);
        free(w);
    }
}

static dm_work *p2p_done[DM_MAX_P2P];
static dm_state p2p_states[DM_MAX_P2P];

static void *run(void *arg)
{
    int provided, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    pthread_mutex_lock(&lock);
    if (rc == MPI_SUCCESS) {
        serialized = provided >= MPI_THREAD_SERIALIZED;  /* else every call goes through this thread */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &world_size);
        dm_types_init();
        rc = dm_comms_init();
    }
    if (rc != MPI_SUCCESS)
        snprintf(init_error, sizeof init_error, "MPI_Init_thread failed (error %d)", rc);
    phase = rc == MPI_SUCCESS ? RUNNING : FAILED;
    pthread_cond_broadcast(&changed);
    while (phase == RUNNING) {
        if (busy || (!head && !dm_p2p_pending())) {  /* idle, or a caller runs MPI inline */
            struct timespec t = after(0.1);
            pthread_cond_timedwait(&queued, &lock, &t);
            watchdog();
            continue;
        }
        dm_work *w = head;
        if (w) {
            head = w->next;
            if (!head)
                tail = NULL;
        }
        busy = 1;
        pthread_mutex_unlock(&lock);
        dm_state done = DM_DONE;
        int finalizing = w && w->kind == DM_FINALIZE, n = 0;
        if (finalizing) {
            dm_comms_free();
            MPI_Finalize();
        } else if (w) {
            done = dm_execute(w);
        }
        if (!finalizing && dm_p2p_pending())
            n = dm_p2p_poll(p2p_done, p2p_states);
        pthread_mutex_lock(&lock);
        busy = 0;
        if (w && done != DM_QUEUED)
            finish(w, done);
        for (int i = 0; i < n; i++)
            finish(p2p_done[i], p2p_states[i]);
        if (finalizing)
            phase = FINALIZED;
        pthread_cond_broadcast(&changed);
        if (!head && dm_p2p_pending()) {          /* sends and receives in flight: poll again soon */
            struct timespec t = after(100e-6);
            pthread_cond_timedwait(&queued, &lock, &t);
        }
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int dm_try_inline(dm_work *w, double seconds)
{
    if (w->kind == DM_SEND || w->kind == DM_RECV || w->kind == DM_FINALIZE)
        return 0;
    pthread_mutex_lock(&lock);
    if (phase != RUNNING || !serialized || busy || head || dm_p2p_pending()) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    busy = 1;
    inline_work = w, inline_seconds = seconds, inline_deadline = after(seconds < 0 ? 0 : seconds);
    pthread_mutex_unlock(&lock);
    dm_state s = dm_execute(w);
    pthread_mutex_lock(&lock);
    busy = 0;
    inline_work = NULL;
    w->state = s;
    if (head)
        pthread_cond_signal(&queued);
    pthread_mutex_unlock(&lock);
    return 1;
}

int dm_init(char *err, int errlen)
{
    pthread_mutex_lock(&lock);
    if (phase == OFF) {
        phase = STARTING;
        if (pthread_create(&thread, NULL, run, NULL)) {
            phase = FAILED;
            snprintf(init_error, sizeof init_error, "could not start the MPI thread");
        }
    }
    while (phase == STARTING)
        pthread_cond_wait(&changed, &lock);
    int ok = phase == RUNNING;
    if (phase == FINALIZED)
        snprintf(err, errlen, "MPI was finalized in this process; it cannot be initialized again");
    else if (!ok)
        snprintf(err, errlen, "%s", init_error);
    pthread_mutex_unlock(&lock);
    return ok ? 0 : -1;
}

int dm_rank(void) { return world_rank; }
int dm_size(void) { return world_size; }

dm_work *dm_work_new(dm_kind kind)
{
    dm_work *w = calloc(1, sizeof *w);
    if (w) {
        w->kind = kind;
        w->dtype = -1;
        w->refs = 1;
    }
    return w;
}

int dm_submit(dm_work *w, char *err, int errlen)
{
    pthread_mutex_lock(&lock);
    if (phase != RUNNING) {
        pthread_mutex_unlock(&lock);
        snprintf(err, errlen, "the MPI backend is not running (not initialized, or finalized)");
        return -1;
    }
    w->refs++;
    w->next = NULL;
    if (tail)
        tail->next = w;
    else
        head = w;
    tail = w;
    pthread_cond_signal(&queued);
    pthread_mutex_unlock(&lock);
    return 0;
}

dm_state dm_wait(dm_work *w, double seconds)
{
    struct timespec until = after(seconds < 0 ? 0 : seconds);
    pthread_mutex_lock(&lock);
    while (w->state == DM_QUEUED) {
        if (seconds < 0)
            pthread_cond_wait(&changed, &lock);
        else if (pthread_cond_timedwait(&changed, &lock, &until) == ETIMEDOUT)
            break;
    }
    dm_state s = w->state;
    pthread_mutex_unlock(&lock);
    return s;
}

void dm_work_release(dm_work *w)
{
    pthread_mutex_lock(&lock);
    int last = --w->refs == 0;
    pthread_mutex_unlock(&lock);
    if (last) {
        free(w->ints);
        free(w);
    }
}

void dm_finalize(void)
{
    dm_work *w = dm_work_new(DM_FINALIZE);
    char err[64];
    if (!w || dm_submit(w, err, sizeof err)) {
        if (w)
            dm_work_release(w);
        return;
    }
    dm_wait(w, -1);
    dm_work_release(w);
    pthread_join(thread, NULL);
}

void dm_abort(int code)
{
    /* From any thread: the communication thread may be stuck in a transfer
     * with a dead peer, which is why we are here. */
    MPI_Abort(MPI_COMM_WORLD, code);
}
