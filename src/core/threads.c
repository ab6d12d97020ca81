/* The thread settings: one count sizes Ember's pool (src/core/parallel.c)
 * and OpenMP's (oneDNN's convolutions and the loops not yet on the pool run
 * on it). BLAS runs on one thread (src/cpu/gemm.h: OpenBLAS's OpenMP build
 * follows the caller's OpenMP setting, so each call sets it to 1); Ember
 * splits large GEMMs over its own pool.
 *
 * The default, as PyTorch documents it: EMBER_NUM_THREADS, else
 * OMP_NUM_THREADS, else the physical cores this process may run on (its
 * affinity mask, one per core however many hardware threads each has),
 * capped by a cgroup CPU quota. PyTorch 1.13 takes half the logical CPUs on
 * x86 (assuming two hardware threads per core), which is 1 on a 2-core VM
 * without SMT; Ember counts the cores. */
#define _GNU_SOURCE
#include "internal.h"
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void openblas_set_num_threads(int);

static _Atomic int num_threads; /* 0: not yet decided */
static _Atomic int interop_threads;
static _Atomic bool interop_fixed;

/* A positive integer from the start of an environment variable (OpenMP's
 * lists such as "4,2" give their first value), else 0. */
static int env_threads(const char *name)
{
    const char *s = getenv(name);
    if (!s) return 0;
    char *end;
    long v = strtol(s, &end, 10);
    return end != s && v > 0 && v < 1 << 16 ? (int)v : 0;
}

/* Hardware threads of `cpu` that share its core, as the bitmask in sysfs's
 * thread_siblings_list ("0-1", "0,4"); 0 if unknown. */
static int first_sibling(int cpu)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
    FILE *f = fopen(path, "r");
    if (!f) return cpu;
    int first = cpu;
    if (fscanf(f, "%d", &first) != 1) first = cpu;
    fclose(f);
    return first;
}

/* The cgroup v2 quota (cpu.max "quota period"), rounded up, or 0 if none. */
static int cgroup_cpus(void)
{
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (!f) return 0;
    long quota = 0, period = 0;
    char q[32] = "";
    int ok = fscanf(f, "%31s %ld", q, &period);
    fclose(f);
    if (ok != 2 || period <= 0 || (quota = strtol(q, NULL, 10)) <= 0) return 0; /* "max": no quota */
    return (int)((quota + period - 1) / period);
}

/* Physical cores in the affinity mask: CPUs that are the first hardware
 * thread of their core. */
static int physical_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int cores = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            int first = first_sibling(c);
            /* a core counts once: at its first sibling that we may run on */
            cores += first == c || first < 0 || first >= CPU_SETSIZE || !CPU_ISSET(first, &set);
        }
    int quota = cgroup_cpus();
    if (quota > 0 && quota < cores) cores = quota;
    return cores > 0 ? cores : 1;
}

static int default_num_threads(void)
{
    int n = env_threads("EMBER_NUM_THREADS");
    if (!n) n = env_threads("OMP_NUM_THREADS");
    return n ? n : physical_cores();
}

static void apply(int n)
{
    atomic_store(&num_threads, n);
    omp_set_num_threads(n);
    openblas_set_num_threads(1);
}

void em_set_num_threads(int n)
{
    if (n < 1) n = 1;
    apply(n);
}

int em_get_num_threads(void)
{
    int n = atomic_load_explicit(&num_threads, memory_order_relaxed);
    if (n) return n;
    apply(default_num_threads());
    return atomic_load(&num_threads);
}

/* Ember has no inter-op pool (ops run on the calling thread); the setting is
 * kept for PyTorch's API: it may be set once (PyTorch also refuses it after
 * inter-op work started, which Ember never does). Defaults to the cores. */
em_status em_set_num_interop_threads(int n)
{
    if (n < 1) return em_fail(EM_ERR_RUNTIME, "Expected positive number of threads");
    bool was = false;
    if (!atomic_compare_exchange_strong(&interop_fixed, &was, true))
        return em_fail(EM_ERR_RUNTIME,
                       "Error: cannot set number of interop threads after parallel work has started or "
                       "set_num_interop_threads called");
    atomic_store(&interop_threads, n);
    return EM_OK;
}

int em_get_num_interop_threads(void)
{
    int n = atomic_load(&interop_threads);
    return n ? n : physical_cores();
}

/* Decided at load, so that BLAS is set to one thread before its first call. */
__attribute__((constructor)) static void threads_init(void) { em_get_num_threads(); }
