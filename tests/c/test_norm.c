/* Normalization ops (batch_norm, layer_norm, group_norm, their backward ops,
 * instance_norm, local_response_norm) against a naive double reference, over
 * shapes, layouts and dtypes, plus running statistics, large offsets and
 * errors (checked against PyTorch 1.13). */
#include "test.h"

/* Every element i of x belongs to statistics group grp[i] and affine channel
 * ch[i]. The reference normalizes in double: ref->mean/rstd per group,
 * y = (x - mean) * rstd * w + b; and its backward for dy. */
typedef struct ref_norm {
    int64_t n, ngrp, nch, *grp, *ch;
    double *mean, *rstd, *y, *gx, *gw, *gb;
} ref_norm;

static void ref_forward(ref_norm *r, const double *x, const double *w, const double *b, double eps)
{
    double *cnt = calloc(r->ngrp, sizeof(double)), *q = calloc(r->ngrp, sizeof(double));
    r->mean = calloc(r->ngrp, sizeof(double)), r->rstd = calloc(r->ngrp, sizeof(double));
    r->y = calloc(r->n + 1, sizeof(double));
    for (int64_t i = 0; i < r->n; i++) r->mean[r->grp[i]] += x[i], cnt[r->grp[i]]++;
    for (int64_t g = 0; g < r->ngrp; g++) r->mean[g] /= cnt[g];
    for (int64_t i = 0; i < r->n; i++) q[r->grp[i]] += (x[i] - r->mean[r->grp[i]]) * (x[i] - r->mean[r->grp[i]]);
    for (int64_t g = 0; g < r->ngrp; g++) r->rstd[g] = 1 / sqrt(q[g] / cnt[g] + eps);
    for (int64_t i = 0; i < r->n; i++)
        r->y[i] = (x[i] - r->mean[r->grp[i]]) * r->rstd[r->grp[i]] * (w ? w[r->ch[i]] : 1) + (b ? b[r->ch[i]] : 0);
    free(cnt), free(q);
}

/* gradients of sum(y * dy); `stats_fixed`: mean and rstd are constants (eval) */
static void ref_backward(ref_norm *r, const double *x, const double *w, const double *dy, bool stats_fixed)
{
    double *cnt = calloc(r->ngrp, sizeof(double)), *m1 = calloc(r->ngrp, sizeof(double));
    double *m2 = calloc(r->ngrp, sizeof(double));
    r->gx = calloc(r->n + 1, sizeof(double)), r->gw = calloc(r->nch, sizeof(double));
    r->gb = calloc(r->nch, sizeof(double));
    for (int64_t i = 0; i < r->n; i++) {
        int64_t g = r->grp[i], c = r->ch[i];
        double xh = (x[i] - r->mean[g]) * r->rstd[g], gh = dy[i] * (w ? w[c] : 1);
        cnt[g]++, m1[g] += gh, m2[g] += gh * xh;
        r->gw[c] += dy[i] * xh, r->gb[c] += dy[i];
    }
    for (int64_t i = 0; i < r->n; i++) {
        int64_t g = r->grp[i];
        double xh = (x[i] - r->mean[g]) * r->rstd[g], gh = dy[i] * (w ? w[r->ch[i]] : 1);
        r->gx[i] = stats_fixed ? gh * r->rstd[g] : r->rstd[g] * (gh - m1[g] / cnt[g] - xh * m2[g] / cnt[g]);
    }
    free(cnt), free(m1), free(m2);
}

static void ref_free(ref_norm *r)
{
    free(r->grp), free(r->ch), free(r->mean), free(r->rstd), free(r->y), free(r->gx), free(r->gw), free(r->gb);
}

/* (N, C, S) layouts: batch norm groups by channel, group norm by (sample, group) */
static ref_norm ref_channels(int ndim, const int64_t *sizes, int64_t groups, bool batch)
{
    int64_t n = 1, N = sizes[0], C = sizes[1], S = 1;
    for (int d = 0; d < ndim; d++) n *= sizes[d];
    for (int d = 2; d < ndim; d++) S *= sizes[d];
    ref_norm r = {.n = n, .ngrp = batch ? C : N * groups, .nch = C};
    r.grp = malloc((n + 1) * sizeof(int64_t)), r.ch = malloc((n + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        int64_t c = i / S % C;
        r.ch[i] = c;
        r.grp[i] = batch ? c : i / (C * S) * groups + c / (C / groups);
    }
    return r;
}
static ref_norm ref_rows(int64_t n, int64_t L)
{
    ref_norm r = {.n = n, .ngrp = L ? n / L : 0, .nch = L};
    r.grp = malloc((n + 1) * sizeof(int64_t)), r.ch = malloc((n + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) r.grp[i] = i / L, r.ch[i] = i % L;
    return r;
}

static const em_dtype float_dtypes[] = {EM_F32, EM_F64};

/* ---- batch norm ------------------------------------------------------------- */
static const struct shape_case {
    int ndim;
    int64_t sizes[5];
} bn_shapes[] = {
    {2, {6, 3}}, {3, {4, 3, 5}}, {4, {3, 2, 4, 5}}, {5, {2, 3, 2, 2, 3}}, {3, {2, 3, 700}}, {4, {3, 4, 1, 1}},
};

TEST(batch_norm_training_values_and_running_stats)
{
    COVER(EM_OP_batch_norm, EM_OP_batch_norm_backward);
    for (size_t s = 0; s < sizeof bn_shapes / sizeof *bn_shapes; s++)
        for (int d = 0; d < 2; d++)
            for (int layout = 0; layout < 2; layout++) {
                em_dtype dt = float_dtypes[d];
                const struct shape_case *sc = &bn_shapes[s];
                int64_t C = sc->sizes[1];
                em_tensor *x = tlayout(dt, sc->ndim, sc->sizes, layout, -2, 3), *w = trand(dt, 1, &C, 0.5, 1.5);
                em_tensor *b = trand(dt, 1, &C, -1, 1), *rm = trand(dt, 1, &C, -1, 1), *rv = trand(dt, 1, &C, 0.5, 2);
                double *xv = tvals(x), *wv = tvals(w), *bv = tvals(b), *rmv = tvals(rm), *rvv = tvals(rv);
                ref_norm r = ref_channels(sc->ndim, sc->sizes, 0, true);
                ref_forward(&r, xv, wv, bv, 1e-5);
                em_tensor *out[3];
                CHECK(em_native_batch_norm(out, x, w, b, rm, rv, true, 0.1, 1e-5) == EM_OK);
                CHECK(em_dtype_of(out[0]) == dt && tshape_is(out[0], sc->ndim, sc->sizes));
                CHECK(tclose(out[0], r.y, trtol(dt), trtol(dt)));
                CHECK(tclose(out[1], r.mean, trtol(dt), trtol(dt)));
                CHECK(tclose(out[2], r.rstd, trtol(dt), trtol(dt)));
                int64_t M = r.n / C;
                double want_m[8], want_v[8];
                for (int64_t c = 0; c < C; c++) {
                    double var = 1 / (r.rstd[c] * r.rstd[c]) - 1e-5;
                    want_m[c] = 0.9 * rmv[c] + 0.1 * r.mean[c];
                    want_v[c] = 0.9 * rvv[c] + 0.1 * var * M / (M - 1);
                }
                CHECK(tclose(rm, want_m, trtol(dt), trtol(dt)));
                CHECK(tclose(rv, want_v, 1e-3, 1e-3));
                /* backward: training statistics */
                em_tensor *dy = tlayout(dt, sc->ndim, sc->sizes, 1 - layout, -1, 1), *g[3];
                double *dyv = tvals(dy);
                ref_backward(&r, xv, wv, dyv, false);
                CHECK(em_batch_norm_backward(g, (const bool[]){true, true, true}, dy, x, w, out[1], out[2], true) == EM_OK);
                CHECK(tclose(g[0], r.gx, 10 * trtol(dt), 10 * trtol(dt)));
                CHECK(tclose(g[1], r.gw, 10 * trtol(dt), 10 * trtol(dt)));
                CHECK(tclose(g[2], r.gb, 10 * trtol(dt), 10 * trtol(dt)));
                RELEASE(g[0], g[1], g[2]);
                /* only the weight gradient */
                CHECK(em_batch_norm_backward(g, (const bool[]){false, true, false}, dy, x, w, out[1], out[2], true) == EM_OK);
                CHECK(!g[0] && !g[2] && tclose(g[1], r.gw, 10 * trtol(dt), 10 * trtol(dt)));
                em_release(g[1]);
                free(xv), free(wv), free(bv), free(rmv), free(rvv), free(dyv);
                ref_free(&r);
                RELEASE(x, w, b, rm, rv, out[0], out[1], out[2], dy);
            }
}

TEST(batch_norm_eval_and_optional_args)
{
    int64_t sizes[3] = {4, 3, 6}, C = 3;
    em_tensor *x = trand(EM_F64, 3, sizes, -2, 2), *rm = trand(EM_F64, 1, &C, -1, 1), *rv = trand(EM_F64, 1, &C, 0.5, 2);
    double *xv = tvals(x), *rmv = tvals(rm), *rvv = tvals(rv), want[72];
    for (int64_t i = 0; i < 72; i++) {
        int64_t c = i / 6 % 3;
        want[i] = (xv[i] - rmv[c]) / sqrt(rvv[c] + 1e-3);
    }
    em_tensor *y = em_batch_norm(x, NULL, NULL, rm, rv, false, 0.1, 1e-3);
    CHECK(y && tclose(y, want, 1e-12, 1e-12));
    CHECK(tclose(rm, rmv, 0, 0) && tclose(rv, rvv, 0, 0)); /* eval leaves them */
    /* eval backward: statistics are constants */
    em_tensor *out[3], *g[3], *dy = trand(EM_F64, 3, sizes, -1, 1);
    CHECK(em_native_batch_norm(out, x, NULL, NULL, rm, rv, false, 0.1, 1e-3) == EM_OK);
    double *dyv = tvals(dy), gx[72];
    for (int64_t i = 0; i < 72; i++) gx[i] = dyv[i] / sqrt(rvv[i / 6 % 3] + 1e-3);
    CHECK(em_batch_norm_backward(g, (const bool[]){true, false, false}, dy, x, NULL, out[1], out[2], false) == EM_OK);
    CHECK(tclose(g[0], gx, 1e-12, 1e-12) && !g[1] && !g[2]);
    /* training without running stats */
    em_tensor *y2 = em_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5);
    CHECK(y2 != NULL);
    /* empty batch: empty result, running stats untouched */
    em_tensor *e = em_zeros(3, (const int64_t[]){0, 3, 6}, EM_F64), *ye = em_batch_norm(e, NULL, NULL, rm, rv, true, 0.1, 1e-5);
    CHECK(ye && em_numel(ye) == 0 && tclose(rm, rmv, 0, 0));
    /* bfloat16 computes in float32 and returns bfloat16 */
    em_tensor *xb = em_to_dtype(x, EM_BF16), *yb = em_batch_norm(xb, NULL, NULL, NULL, NULL, true, 0.1, 1e-5);
    CHECK(yb && em_dtype_of(yb) == EM_BF16);
    free(xv), free(rmv), free(rvv), free(dyv);
    RELEASE(x, rm, rv, y, out[0], out[1], out[2], g[0], dy, y2, e, ye, xb, yb);
}

/* 1e4 + U(-1, 1): the variance is 1/3, which E[x^2] - E[x]^2 in float32 loses */
TEST(norm_large_offset_keeps_variance)
{
    int64_t sizes[3] = {8, 2, 300};
    em_tensor *u = trand(EM_F32, 3, sizes, -1, 1), *off = em_scalar_float(1e4), *x = em_add(u, off, 1);
    em_tensor *out[3];
    CHECK(em_native_batch_norm(out, x, NULL, NULL, NULL, NULL, true, 0.1, 0) == EM_OK);
    double *uv = tvals(u);
    ref_norm r = ref_channels(3, sizes, 0, true);
    ref_forward(&r, uv, NULL, NULL, 0);
    CHECK(tclose(out[2], r.rstd, 2e-3, 0)); /* float32 cannot hold 1e4 + u exactly: ~1e-3 of the spread */
    CHECK(tclose(out[0], r.y, 0, 5e-3));
    em_tensor *ln[3], *gn[3];
    CHECK(em_native_layer_norm(ln, x, 1, sizes + 2, NULL, NULL, 0) == EM_OK);
    CHECK(em_native_group_norm(gn, x, 1, NULL, NULL, 0) == EM_OK);
    /* against the sample's own rstd (about sqrt(3), but 300 draws vary by a few %) */
    double rl = tval(ln[2], 0), rg = tval(gn[2], 0), want[2];
    for (int k = 0; k < 2; k++) {
        const int64_t cnt = k ? 600 : 300;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < cnt; i++) mean += uv[i] / (double)cnt;
        for (int64_t i = 0; i < cnt; i++) var += (uv[i] - mean) * (uv[i] - mean) / (double)cnt;
        want[k] = 1 / sqrt(var);
    }
    CHECK(fabs(rl - want[0]) < 2e-3 * want[0] && fabs(rg - want[1]) < 2e-3 * want[1]);
    free(uv);
    ref_free(&r);
    RELEASE(u, off, x, out[0], out[1], out[2], ln[0], ln[1], ln[2], gn[0], gn[1], gn[2]);

}

TEST(batch_norm_errors)
{
    em_tensor *x = trand(EM_F32, 2, (const int64_t[]){2, 3}, 0, 1), *v4 = em_ones(1, (const int64_t[]){4}, EM_F32);
    em_tensor *v3d = em_ones(1, (const int64_t[]){3}, EM_F64), *x1 = trand(EM_F32, 1, (const int64_t[]){3}, 0, 1);
    em_tensor *xi = em_zeros(2, (const int64_t[]){2, 3}, EM_I32), *xh = em_to_dtype(x, EM_F16);
    CHECK_ERR(em_batch_norm(x, NULL, NULL, v4, NULL, true, 0.1, 1e-5), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "running_mean should contain 3 elements not 4"));
    CHECK_ERR(em_batch_norm(x, v4, NULL, NULL, NULL, true, 0.1, 1e-5), EM_ERR_RUNTIME);
    CHECK_ERR(em_batch_norm(x, v3d, NULL, NULL, NULL, true, 0.1, 1e-5), EM_ERR_DTYPE);
    CHECK(strstr(em_last_error(), "mixed dtype"));
    CHECK_ERR(em_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "running_mean must be defined in evaluation mode"));
    CHECK_ERR(em_batch_norm(x1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5), EM_ERR_INDEX);
    CHECK_ERR(em_batch_norm(xi, NULL, NULL, NULL, NULL, true, 0.1, 1e-5), EM_ERR_DTYPE);
    CHECK(strstr(em_last_error(), "\"batch_norm\" not implemented for 'Int'"));
    CHECK_ERR(em_batch_norm(xh, NULL, NULL, NULL, NULL, true, 0.1, 1e-5), EM_ERR_DTYPE);
    em_tensor *g[3], *dy = trand(EM_F32, 2, (const int64_t[]){3, 2}, 0, 1);
    CHECK_ERR(em_batch_norm_backward(g, (const bool[]){true, true, true}, dy, x, NULL, v3d, v3d, true), EM_ERR_DTYPE);
    RELEASE(x, v4, v3d, x1, xi, xh, dy);
}

/* ---- layer norm and group norm ------------------------------------------------ */
TEST(layer_norm_values_and_backward)
{
    COVER(EM_OP_layer_norm, EM_OP_layer_norm_backward);
    static const struct {
        int ndim, nnorm;
        int64_t sizes[4];
    } cases[] = {{2, 1, {5, 7}}, {3, 2, {2, 3, 4}}, {1, 1, {9}}, {2, 1, {3, 1200}}, {3, 1, {0, 2, 3}}};
    for (size_t s = 0; s < sizeof cases / sizeof *cases; s++)
        for (int d = 0; d < 2; d++)
            for (int affine = 0; affine < 2; affine++) {
                em_dtype dt = float_dtypes[d];
                int nd = cases[s].ndim, nn = cases[s].nnorm;
                const int64_t *sizes = cases[s].sizes, *ns = sizes + nd - nn;
                em_tensor *x = tlayout(dt, nd, sizes, affine, -3, 2), *w = affine ? trand(dt, nn, ns, 0.5, 1.5) : NULL;
                em_tensor *b = affine ? trand(dt, nn, ns, -1, 1) : NULL, *dy = trand(dt, nd, sizes, -1, 1);
                double *xv = tvals(x), *wv = w ? tvals(w) : NULL, *bv = b ? tvals(b) : NULL, *dyv = tvals(dy);
                int64_t L = 1;
                for (int k = 0; k < nn; k++) L *= ns[k];
                ref_norm r = ref_rows(em_numel(x), L);
                ref_forward(&r, xv, wv, bv, 1e-5);
                ref_backward(&r, xv, wv, dyv, false);
                em_tensor *out[3], *g[3];
                CHECK(em_native_layer_norm(out, x, nn, ns, w, b, 1e-5) == EM_OK);
                CHECK(tclose(out[0], r.y, trtol(dt), trtol(dt)) && tclose(out[1], r.mean, trtol(dt), trtol(dt)));
                CHECK(tclose(out[2], r.rstd, trtol(dt), trtol(dt)) && em_ndim(out[1]) == nd);
                CHECK(em_layer_norm_backward(g, (const bool[]){true, true, true}, dy, x, nn, ns, out[1], out[2], w) == EM_OK);
                CHECK(tclose(g[0], r.gx, 10 * trtol(dt), 10 * trtol(dt)));
                CHECK(tclose(g[1], r.gw, 10 * trtol(dt), 10 * trtol(dt)) && tclose(g[2], r.gb, 10 * trtol(dt), 10 * trtol(dt)));
                free(xv), free(wv), free(bv), free(dyv);
                ref_free(&r);
                RELEASE(x, w, b, dy, out[0], out[1], out[2], g[0], g[1], g[2]);
            }
}

TEST(group_norm_values_and_backward)
{
    COVER(EM_OP_group_norm, EM_OP_group_norm_backward);
    static const struct {
        int ndim;
        int64_t sizes[4], groups;
    } cases[] = {{3, {2, 6, 5}, 3}, {2, {3, 4}, 2}, {4, {2, 4, 3, 3}, 4}, {3, {2, 4, 600}, 2}, {3, {1, 6, 2}, 1}};
    for (size_t s = 0; s < sizeof cases / sizeof *cases; s++)
        for (int d = 0; d < 2; d++) {
            em_dtype dt = float_dtypes[d];
            int nd = cases[s].ndim;
            const int64_t *sizes = cases[s].sizes, C = sizes[1], G = cases[s].groups;
            em_tensor *x = tlayout(dt, nd, sizes, 1 - d, -3, 2), *w = trand(dt, 1, &C, 0.5, 1.5);
            em_tensor *b = trand(dt, 1, &C, -1, 1), *dy = trand(dt, nd, sizes, -1, 1);
            double *xv = tvals(x), *wv = tvals(w), *bv = tvals(b), *dyv = tvals(dy);
            ref_norm r = ref_channels(nd, sizes, G, false);
            ref_forward(&r, xv, wv, bv, 1e-5);
            ref_backward(&r, xv, wv, dyv, false);
            em_tensor *out[3], *g[3];
            CHECK(em_native_group_norm(out, x, G, w, b, 1e-5) == EM_OK);
            CHECK(tclose(out[0], r.y, trtol(dt), trtol(dt)) && tshape_is(out[1], 2, (const int64_t[]){sizes[0], G}));
            CHECK(tclose(out[1], r.mean, trtol(dt), trtol(dt)) && tclose(out[2], r.rstd, trtol(dt), trtol(dt)));
            CHECK(em_group_norm_backward(g, (const bool[]){true, true, true}, dy, x, out[1], out[2], w, G) == EM_OK);
            /* tiny groups (2 elements) cancel to small input gradients: float32 keeps 1e-4 of them */
            double gtol = dt == EM_F32 ? 1e-4 : 1e-10;
            CHECK(tclose(g[0], r.gx, gtol, gtol));
            CHECK(tclose(g[1], r.gw, gtol, gtol) && tclose(g[2], r.gb, gtol, gtol));
            em_tensor *y2 = em_group_norm(x, G, NULL, NULL, 1e-5);
            CHECK(y2 != NULL);
            free(xv), free(wv), free(bv), free(dyv);
            ref_free(&r);
            RELEASE(x, w, b, dy, out[0], out[1], out[2], g[0], g[1], g[2], y2);
        }
}

TEST(layer_and_group_norm_errors)
{
    em_tensor *x = trand(EM_F32, 2, (const int64_t[]){2, 3}, 0, 1), *w4 = em_ones(1, (const int64_t[]){4}, EM_F32);
    em_tensor *w3d = em_ones(1, (const int64_t[]){3}, EM_F64), *xh = em_to_dtype(x, EM_F16);
    em_tensor *x3 = trand(EM_F32, 3, (const int64_t[]){2, 6, 4}, 0, 1);
    CHECK_ERR(em_layer_norm(x, 1, (const int64_t[]){4}, NULL, NULL, 1e-5), EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]"));
    CHECK_ERR(em_layer_norm(x, 1, (const int64_t[]){3}, w4, NULL, 1e-5), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "Expected weight to be of same shape as normalized_shape"));
    CHECK_ERR(em_layer_norm(x, 0, NULL, NULL, NULL, 1e-5), EM_ERR_RUNTIME);
    CHECK_ERR(em_layer_norm(x, 1, (const int64_t[]){3}, w3d, NULL, 1e-5), EM_ERR_DTYPE);
    CHECK_ERR(em_layer_norm(xh, 1, (const int64_t[]){3}, NULL, NULL, 1e-5), EM_ERR_DTYPE);
    CHECK(strstr(em_last_error(), "\"LayerNormKernelImpl\" not implemented for 'Half'"));
    CHECK_ERR(em_group_norm(x3, 4, NULL, NULL, 1e-5), EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "Expected number of channels in input to be divisible by num_groups, but got input "
                                   "of shape [2, 6, 4] and num_groups=4"));
    CHECK_ERR(em_group_norm(x3, 0, NULL, NULL, 1e-5), EM_ERR_RUNTIME);
    CHECK_ERR(em_group_norm(x3, 3, w4, NULL, 1e-5), EM_ERR_RUNTIME);
    CHECK_ERR(em_group_norm(w4, 2, NULL, NULL, 1e-5), EM_ERR_INDEX);
    RELEASE(x, w4, w3d, xh, x3);
}

/* ---- composites ------------------------------------------------------------------ */
TEST(instance_norm_values_and_running_stats)
{
    COVER(EM_OP_instance_norm);
    int64_t sizes[3] = {3, 2, 5}, C = 2;
    em_tensor *x = tlayout(EM_F64, 3, sizes, 1, -2, 2), *w = trand(EM_F64, 1, &C, 0.5, 1.5);
    em_tensor *b = trand(EM_F64, 1, &C, -1, 1), *rm = em_zeros(1, &C, EM_F64), *rv = em_ones(1, &C, EM_F64);
    double *xv = tvals(x), *wv = tvals(w), *bv = tvals(b);
    ref_norm r = ref_channels(3, sizes, C, false); /* one group per (sample, channel) */
    ref_forward(&r, xv, wv, bv, 1e-5);
    em_tensor *y = em_instance_norm(x, w, b, rm, rv, true, 0.1, 1e-5);
    CHECK(y && tclose(y, r.y, 1e-12, 1e-12));
    double want_m[2] = {0}, want_v[2] = {0};
    for (int64_t g = 0; g < 6; g++) {
        double var = 1 / (r.rstd[g] * r.rstd[g]) - 1e-5;
        want_m[g % 2] += 0.1 * r.mean[g] / 3;
        want_v[g % 2] += (0.9 + 0.1 * var * 5 / 4) / 3;
    }
    CHECK(tclose(rm, want_m, 1e-12, 1e-12) && tclose(rv, want_v, 1e-12, 1e-12));
    em_tensor *ye = em_instance_norm(x, NULL, NULL, rm, rv, false, 0.1, 1e-5);
    CHECK(ye != NULL);
    free(xv), free(wv), free(bv);
    ref_free(&r);
    RELEASE(x, w, b, rm, rv, y, ye);
}

TEST(local_response_norm_values)
{
    COVER(EM_OP_local_response_norm);
    int64_t sizes[4] = {2, 5, 3, 2};
    for (int size = 1; size <= 4; size++) {
        em_tensor *x = tlayout(EM_F64, 4, sizes, size % 2, -2, 2), *y = em_local_response_norm(x, size, 1e-2, 0.75, 1);
        double *xv = tvals(x), want[60];
        for (int64_t i = 0; i < 60; i++) {
            int64_t c = i / 6 % 5, base = i - c * 6;
            double s = 0;
            for (int64_t j = c - size / 2; j <= c + (size - 1) / 2; j++)
                if (j >= 0 && j < 5) s += xv[base + j * 6] * xv[base + j * 6];
            want[i] = xv[i] / pow(1 + 1e-2 * s / size, 0.75);
        }
        CHECK(y && tclose(y, want, 1e-12, 1e-12));
        free(xv);
        RELEASE(x, y);
    }
    em_tensor *x2 = em_ones(2, (const int64_t[]){2, 3}, EM_F32);
    CHECK_ERR(em_local_response_norm(x2, 2, 1e-4, 0.75, 1), EM_ERR_VALUE);
    CHECK(!strcmp(em_last_error(), "Expected 3D or higher dimensionality input (got 2 dimensions)"));
    em_release(x2);
}
