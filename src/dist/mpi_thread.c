/* The communication thread: it initializes MPI, then runs queued work in
 * submission order (every rank submits collectives in the same order, so
 * one FIFO keeps them matched), and finalizes MPI at exit. Callers wait on
 * a work with a timeout, so a dead or stuck peer gives an error, not a hang. */
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
static int world_rank, world_size;
static char init_error[256];

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
    int provided, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    pthread_mutex_lock(&lock);
    if (rc == MPI_SUCCESS) {
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
        if (!head && dm_p2p_pending()) {            /* poll sends and receives in flight */
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_nsec += 100000;
            if (t.tv_nsec >= 1000000000)
                t.tv_sec++, t.tv_nsec -= 1000000000;
            pthread_cond_timedwait(&queued, &lock, &t);
        }
        while (!head && !dm_p2p_pending())
            pthread_cond_wait(&queued, &lock);
        dm_work *w = head;
        if (w) {
            head = w->next;
            if (!head)
                tail = NULL;
        }
        pthread_mutex_unlock(&lock);
        dm_state done = DM_DONE;
        int finalizing = w && w->kind == DM_FINALIZE;
        if (finalizing) {
            dm_comms_free();
            MPI_Finalize();
        } else if (w) {
            done = dm_execute(w);
        }
        int n = 0;
        if (!finalizing && dm_p2p_pending())
            n = dm_p2p_poll(p2p_done, p2p_states);
        pthread_mutex_lock(&lock);
        if (w && done != DM_QUEUED)
            finish(w, done);
        for (int i = 0; i < n; i++)
            finish(p2p_done[i], p2p_states[i]);
        if (finalizing)
            phase = FINALIZED;
        pthread_cond_broadcast(&changed);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
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
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    if (seconds >= 0) {
        double s = until.tv_sec + until.tv_nsec * 1e-9 + seconds;
        until.tv_sec = (time_t)s;
        until.tv_nsec = (long)((s - (double)until.tv_sec) * 1e9);
    }
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
