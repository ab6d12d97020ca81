/* Times Ember's C API on the op benchmark set; prints one line per case:
 *   <op> <numel> <threads> <microseconds per call>
 * bench_ops.py runs this beside PyTorch and prints the ratios. */
#include "ember/ember.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct bench_case {
    const char *name;
    int nargs;   /* tensor arguments */
    bool matrix; /* arguments are (n, n) matrices, else vectors of n elements */
    em_tensor *(*run)(em_tensor **args);
} bench_case;

static em_tensor *run_add(em_tensor **a) { return em_add(a[0], a[1], 1.0); }
static em_tensor *run_mul(em_tensor **a) { return em_mul(a[0], a[1]); }
static em_tensor *run_exp(em_tensor **a) { return em_exp(a[0]); }
static em_tensor *run_matmul(em_tensor **a) { return em_matmul(a[0], a[1]); }
static em_tensor *run_sum(em_tensor **a) { return em_sum(a[0], 0, NULL, false, EM_DTYPE_NONE); }
/* softmax over rows of 1000: the vector viewed as (n / 1000, 1000) */
static em_tensor *run_softmax(em_tensor **a)
{
    const int64_t rows[2] = {em_numel(a[0]) / 1000, 1000};
    em_tensor *v = em_view(a[0], 2, rows), *r = em_softmax(v, -1, EM_DTYPE_NONE);
    em_release(v);
    return r;
}

static const bench_case cases[] = {
    {"add", 2, false, run_add},
    {"mul", 2, false, run_mul},
    {"exp", 1, false, run_exp},
    {"sum", 1, false, run_sum},
    {"softmax", 1, false, run_softmax},
    {"matmul", 2, true, run_matmul},
};

/* Best time per call over a few rounds of at least `budget` seconds each. */
static double time_case(const bench_case *bc, em_tensor **args, double budget)
{
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        int64_t iters = 0;
        double t0 = now(), t;
        do {
            em_release(bc->run(args));
            iters++;
        } while ((t = now() - t0) < budget);
        if (t / iters < best) best = t / iters;
    }
    return best * 1e6;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    em_set_num_threads(threads);
    const int64_t sizes[] = {1, 1000, 100000, 16000000}, matrix_sizes[] = {256, 1024, 2048};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        size_t nsizes = cases[c].matrix ? 3 : 4;
        for (size_t s = 0; s < nsizes; s++) {
            int64_t n = cases[c].matrix ? matrix_sizes[s] : sizes[s];
            if (n == 1 && strcmp(cases[c].name, "add")) continue; /* per-op cost: add only */
            if (n < 1000 && !strcmp(cases[c].name, "softmax")) continue;
            em_tensor *args[4];
            for (int k = 0; k < cases[c].nargs; k++) {
                const int64_t shape[2] = {n, n};
                args[k] = cases[c].matrix ? em_rand(2, shape, EM_F32, NULL) : em_full(1, &n, 0.5 + k, EM_F32);
                if (!args[k]) {
                    fprintf(stderr, "bench: %s\n", em_last_error());
                    return 1;
                }
            }
            double us = time_case(&cases[c], args, n > 1000000 || cases[c].matrix ? 0.3 : 0.1);
            printf("%s %lld %d %.4f\n", cases[c].name, (long long)n, threads, us);
            fflush(stdout);
            for (int k = 0; k < cases[c].nargs; k++) em_release(args[k]);
        }
    }
    return 0;
}
