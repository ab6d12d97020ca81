/* Trains a two-layer MLP on a synthetic 3-class problem (points labelled by
 * the angle around the origin) with Ember's C API: ops, autograd and a plain
 * SGD step. Shows the ownership pattern of a training loop: every tensor a
 * step makes is released, so memory stays flat.
 * Build: make; run: build/examples/train_mlp */
#include "ember/ember.h"
#include <math.h>
#include <stdio.h>

enum { N = 512, IN = 2, HIDDEN = 64, CLASSES = 3, STEPS = 400 };

#define TRY(x)                                                          \
    do {                                                                \
        if (!(x)) {                                                     \
            fprintf(stderr, "error: %s\n", em_last_error());            \
            return 1;                                                   \
        }                                                               \
    } while (0)

/* x (N, 2) uniform in [-1, 1]^2, y (N, 1) = which third of the circle */
static void make_data(em_tensor **x, em_tensor **y)
{
    *x = em_rand(2, (const int64_t[]){N, IN}, EM_F32, NULL);
    em_tensor *two = em_scalar_float(2), *one = em_scalar_float(1);
    em_mul_(*x, two);
    em_sub_(*x, one, 1); /* 2x - 1 */
    const float *p = em_data_ptr(*x);
    int64_t labels[N];
    for (int i = 0; i < N; i++) {
        double a = atan2(p[2 * i + 1], p[2 * i]) + M_PI; /* [0, 2 pi] */
        labels[i] = (int64_t)(a / (2 * M_PI / CLASSES)) % CLASSES;
    }
    *y = em_from_data(labels, 2, (const int64_t[]){N, 1}, EM_I64);
    em_release(two);
    em_release(one);
}

/* W (fan_in, fan_out) ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as nn.Linear */
static em_tensor *param(int64_t fan_in, int64_t fan_out)
{
    double bound = 1 / sqrt((double)fan_in);
    em_tensor *w = em_rand(2, (const int64_t[]){fan_in, fan_out}, EM_F32, NULL);
    em_tensor *scale = em_scalar_float(2 * bound), *shift = em_scalar_float(bound);
    em_mul_(w, scale);
    em_sub_(w, shift, 1);
    em_set_requires_grad(w, true);
    em_release(scale);
    em_release(shift);
    return w;
}

int main(void)
{
    em_manual_seed(0);
    em_tensor *x, *y;
    make_data(&x, &y);
    em_tensor *w1 = param(IN, HIDDEN), *w2 = param(HIDDEN, CLASSES), *params[] = {w1, w2};
    const double lr = 0.5;
    for (int step = 0; step <= STEPS; step++) {
        /* forward: logits = tanh(x W1) W2; loss = mean(-log_softmax(logits)[y]) */
        em_tensor *h = em_matmul(x, w1), *a = em_tanh(h), *logits = em_matmul(a, w2);
        em_tensor *lp = em_log_softmax(logits, 1, EM_DTYPE_NONE), *picked = em_gather(lp, 1, y);
        em_tensor *nll = em_mean(picked, 0, NULL, false, EM_DTYPE_NONE), *loss = em_neg(nll);
        TRY(loss);
        TRY(em_backward(1, &loss, NULL, false, false, 0, NULL) == EM_OK);
        /* SGD, outside the graph */
        em_set_grad_enabled(false);
        for (int k = 0; k < 2; k++) {
            em_tensor *g = em_get_grad(params[k]);
            TRY(em_add_(params[k], g, -lr) == EM_OK);
            em_release(g);
            em_set_grad(params[k], NULL);
        }
        em_set_grad_enabled(true);
        if (step % 100 == 0) {
            em_tensor *pred = em_argmax(logits, (const int[]){1}, true), *hit = em_eq(pred, y);
            em_tensor *acc = em_mean(hit, 0, NULL, false, EM_F32);
            double l, ac;
            em_item(loss, &l);
            em_item(acc, &ac);
            printf("step %3d  loss %.4f  train accuracy %.3f\n", step, l, ac);
            em_release(pred), em_release(hit), em_release(acc);
        }
        em_tensor *all[] = {h, a, logits, lp, picked, nll, loss};
        for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    }
    em_release(w1), em_release(w2), em_release(x), em_release(y);
    return 0;
}
