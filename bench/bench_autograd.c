/* Times Ember's autograd through the C API on 1-element tensors (the
 * per-op cost of recording and running the graph); prints one line per case:
 *   <case> <threads> <microseconds per iteration>
 * bench_autograd.py runs it beside PyTorch. */
#include "ember/ember.h"
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* (x * w).sum().backward() */
static int mul_sum_backward(em_tensor *x, em_tensor *w)
{
    em_tensor *p = em_mul(x, w), *s = p ? em_sum(p, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    int rc = s ? em_backward(1, &s, NULL, false, false, 0, NULL) : 1;
    em_release(p);
    em_release(s);
    return rc;
}

/* 100 elementwise ops, then backward */
static int chain_backward(em_tensor *x, em_tensor *w)
{
    em_tensor *y = em_retain(x);
    for (int i = 0; i < 100 && y; i++) {
        em_tensor *z = i % 2 ? em_mul(y, w) : em_add(y, w, 1);
        em_release(y);
        y = z;
    }
    em_tensor *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    int rc = s ? em_backward(1, &s, NULL, false, false, 0, NULL) : 1;
    em_release(y);
    em_release(s);
    return rc;
}

static double best_us(int (*fn)(em_tensor *, em_tensor *), em_tensor *x, em_tensor *w, double budget)
{
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        int64_t iters = 0;
        double t0 = now(), t;
        do {
            if (fn(x, w)) {
                fprintf(stderr, "bench_autograd: %s\n", em_last_error());
                return -1;
            }
            em_set_grad(x, NULL);
            em_set_grad(w, NULL);
            iters++;
        } while ((t = now() - t0) < budget);
        if (t / iters < best) best = t / iters;
    }
    return best * 1e6;
}

int main(void)
{
    const int64_t one = 1;
    em_tensor *x = em_full(1, &one, 0.5, EM_F32), *w = em_full(1, &one, 1.0001, EM_F32);
    em_set_requires_grad(x, true);
    em_set_requires_grad(w, true);
    printf("mul_sum_backward 1 %.4f\n", best_us(mul_sum_backward, x, w, 0.2));
    printf("chain100_backward 1 %.4f\n", best_us(chain_backward, x, w, 0.3));
    em_release(x);
    em_release(w);
    return 0;
}
