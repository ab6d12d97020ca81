/* Optimizer steps from C: SGD with momentum and Adam against a reference
 * written out here in double, layouts (staging of non-contiguous tensors),
 * and refusals that leave every tensor as it was. (tests/python/test_optim.py
 * compares all algorithms with PyTorch over 100 steps.) */
#include "test.h"

static em_tensor *scalar0(void) { return tt(EM_F32, 0, NULL, (const double[]){0}); }

TEST(optim_sgd_momentum_matches_reference)
{
    COVER(EM_OP_optimizer_step);
    em_tensor *p = trand(EM_F64, SHAPE(4, 3), -1, 1), *g = trand(EM_F64, SHAPE(4, 3), -1, 1);
    em_tensor *buf = em_zeros(2, (const int64_t[]){4, 3}, EM_F64);
    double *ref = tvals(p), *gv = tvals(g), bref[12];
    em_optim_options o = {.lr = 0.1, .momentum = 0.9, .dampening = 0.2, .weight_decay = 0.01};
    em_optim_group grp = {1, &p, (const em_tensor *const *)&g, {&buf, NULL, NULL}, NULL, NULL};
    for (int step = 0; step < 3; step++) {
        o.first_step = step == 0;
        CHECK(em_optimizer_step(EM_SGD, &o, &grp) == EM_OK);
        for (int i = 0; i < 12; i++) {
            double d = gv[i] + 0.01 * ref[i];
            bref[i] = step == 0 ? d : 0.9 * bref[i] + 0.8 * d;
            ref[i] -= 0.1 * bref[i];
        }
    }
    CHECK(tclose(p, ref, 1e-12, 1e-12));
    CHECK(tclose(buf, bref, 1e-12, 1e-12));
    free(ref);
    free(gv);
    RELEASE(p, g, buf);
}

/* Adam on layout `layout` (0 contiguous, 1 strided, 2 transposed) of the
 * parameter and its state, against the reference. */
static void check_adam(int layout)
{
    em_tensor *p = tlayout(EM_F32, 2, (const int64_t[]){5, 7}, layout, -1, 1);
    em_tensor *g = tlayout(EM_F32, 2, (const int64_t[]){5, 7}, layout, -1, 1);
    em_tensor *m = em_zeros(2, (const int64_t[]){5, 7}, EM_F32), *v = em_zeros(2, (const int64_t[]){5, 7}, EM_F32);
    em_tensor *step = scalar0();
    double *ref = tvals(p), *gv = tvals(g), mr[35] = {0}, vr[35] = {0};
    em_optim_options o = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0.1};
    em_optim_group grp = {1, &p, (const em_tensor *const *)&g, {&m, &v, NULL}, &step, NULL};
    for (int t = 1; t <= 4; t++) {
        CHECK(em_optimizer_step(EM_ADAM, &o, &grp) == EM_OK);
        for (int i = 0; i < 35; i++) {
            double d = gv[i] + 0.1 * ref[i];
            mr[i] = 0.9 * mr[i] + 0.1 * d;
            vr[i] = 0.999 * vr[i] + 0.001 * d * d;
            double denom = sqrt(vr[i]) / sqrt(1 - pow(0.999, t)) + 1e-8;
            ref[i] -= 0.01 / (1 - pow(0.9, t)) * mr[i] / denom;
        }
    }
    CHECK(tval(step, 0) == 4);
    CHECK(tclose(p, ref, 1e-4, 1e-5));
    CHECK(tclose(m, mr, 1e-4, 1e-6));
    free(ref);
    free(gv);
    RELEASE(p, g, m, v, step);
}

TEST(optim_adam_matches_reference_on_every_layout)
{
    for (int layout = 0; layout < 3 && !test_failed(); layout++) check_adam(layout);
}

TEST(optim_many_tensors_one_call)
{
    /* more elements than one chunk, spread over tensors of odd sizes */
    enum { N = 5 };
    int64_t sizes[N] = {0, 1, 40000, 3, 17000};
    em_tensor *p[N], *g[N];
    for (int i = 0; i < N; i++) {
        p[i] = em_ones(1, &sizes[i], EM_F32);
        g[i] = em_ones(1, &sizes[i], EM_F32);
    }
    em_optim_options o = {.lr = 0.5};
    em_optim_group grp = {N, p, (const em_tensor *const *)g, {NULL, NULL, NULL}, NULL, NULL};
    CHECK(em_optimizer_step(EM_SGD, &o, &grp) == EM_OK);
    for (int i = 0; i < N; i++) {
        if (sizes[i]) CHECK(tval(p[i], 0) == 0.5 && tval(p[i], sizes[i] - 1) == 0.5);
        RELEASE(p[i], g[i]);
    }
}

TEST(optim_refusals_change_nothing)
{
    em_tensor *p = em_ones(1, (const int64_t[]){3}, EM_F32), *g = em_ones(1, (const int64_t[]){3}, EM_F32);
    em_tensor *bad = em_ones(1, (const int64_t[]){4}, EM_F32), *g64 = em_ones(1, (const int64_t[]){3}, EM_F64);
    em_tensor *m = em_zeros(1, (const int64_t[]){3}, EM_F32), *step = scalar0();
    em_optim_options o = {.lr = 0.1, .beta1 = 0.9, .beta2 = 0.99};
    em_optim_group grp = {1, &p, (const em_tensor *const *)&bad, {&m, &m, NULL}, &step, NULL};
    CHECK_ERR(em_optimizer_step(EM_ADAM, &o, &grp), EM_ERR_SHAPE);
    grp.grads = (const em_tensor *const *)&g64;
    CHECK_ERR(em_optimizer_step(EM_ADAM, &o, &grp), EM_ERR_TYPE);
    grp.grads = (const em_tensor *const *)&g;
    grp.steps = NULL;
    CHECK_ERR(em_optimizer_step(EM_ADAM, &o, &grp), EM_ERR_VALUE);
    o.beta1 = 1.0;
    grp.steps = &step;
    CHECK_ERR(em_optimizer_step(EM_ADAM, &o, &grp), EM_ERR_VALUE);
    CHECK_ERR(em_optimizer_step((em_optimizer)99, &o, &grp), EM_ERR_VALUE);
    /* a parameter that requires grad, with grad mode on: PyTorch's leaf error */
    o.beta1 = 0.9;
    CHECK(em_set_requires_grad(p, true) == EM_OK);
    CHECK_ERR(em_optimizer_step(EM_ADAM, &o, &grp), EM_ERR_RUNTIME);
    CHECK(tval(p, 0) == 1 && tval(m, 0) == 0 && tval(step, 0) == 0);
    em_set_grad_enabled(false);
    em_status st = em_optimizer_step(EM_ADAM, &o, &grp);
    em_set_grad_enabled(true);
    CHECK(st == EM_OK && tval(p, 0) < 1 && tval(step, 0) == 1);
    RELEASE(p, g, bad, g64, m, step);
}
