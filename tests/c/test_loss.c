/* Tests of the loss family's forward ops against naive references in double
 * (include/ember/loss.h): every reduction, dtypes, broadcasting,
 * non-contiguous inputs, K-dimensional class losses, ignore_index, errors. */
#include "test.h"

/* The reduction of n per-element losses l[] (weighted mean: divided by wsum). */
static double reduce_ref(const double *l, int64_t n, em_reduction r, double wsum)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += l[i];
    return r == EM_REDUCTION_SUM ? s : s / wsum;
}

/* checks `got` against per-element losses l (n of them) under reduction r */
static bool close_reduced(em_tensor *got, const double *l, int64_t n, em_reduction r, double wsum, double tol)
{
    if (!got) return false;
    if (r == EM_REDUCTION_NONE) return tclose(got, l, tol, tol);
    double v = reduce_ref(l, n, r, wsum);
    return em_ndim(got) == 0 && tclose(got, &v, tol, tol);
}

typedef em_tensor *(*regress_fn)(const em_tensor *, const em_tensor *, em_reduction, double);
static em_tensor *mse(const em_tensor *x, const em_tensor *y, em_reduction r, double p) { return em_mse_loss(x, y, r); }
static em_tensor *l1(const em_tensor *x, const em_tensor *y, em_reduction r, double p) { return em_l1_loss(x, y, r); }
static double ref_regress(int k, double d, double p)
{
    double a = fabs(d);
    switch (k) {
    case 0: return d * d;
    case 1: return a;
    case 2: return a < p ? 0.5 * d * d / p : a - 0.5 * p;
    default: return a <= p ? 0.5 * d * d : p * (a - 0.5 * p);
    }
}

TEST(loss_regression)
{
    regress_fn fns[] = {mse, l1, em_smooth_l1_loss, em_huber_loss};
    const double params[] = {0, 0, 0.5, 0.7};
    for (int k = 0; k < 4; k++)
        for (int dti = 0; dti < 2; dti++)
            for (int r = 0; r < 3; r++) {
                em_dtype dt = dti ? EM_F64 : EM_F32;
                em_tensor *x0 = trand(dt, SHAPE(3, 4), -2, 2), *x = tnoncontig(x0);
                em_tensor *y = trand(dt, SHAPE(4), -2, 2); /* broadcasts over the rows */
                em_tensor *got = fns[k](x, y, (em_reduction)r, params[k]);
                double l[12];
                for (int i = 0; i < 12; i++) l[i] = ref_regress(k, tval(x, i) - tval(y, i % 4), params[k]);
                bool ok = close_reduced(got, l, 12, (em_reduction)r, 12, dti ? 1e-12 : 1e-5) &&
                          em_dtype_of(got) == dt;
                RELEASE(x0, x, y, got);
                CHECK_MSG(ok, "regression loss %d dtype %d reduction %d", k, dti, r);
            }
    /* float16 computes in float32 and gives float16; integers and bad params are refused */
    em_tensor *h = trand(EM_F16, SHAPE(5), -1, 1), *i = tints(EM_I32, SHAPE(5), 0, 3);
    em_tensor *m = em_mse_loss(h, h, EM_REDUCTION_MEAN), *e = em_mse_loss(i, i, EM_REDUCTION_NONE);
    bool ok = m && em_dtype_of(m) == EM_F16 && tval(m, 0) == 0 && !e && em_error_code() == EM_ERR_DTYPE;
    CHECK_ERR(em_smooth_l1_loss(h, h, EM_REDUCTION_MEAN, -1), EM_ERR_RUNTIME);
    CHECK_ERR(em_huber_loss(h, h, EM_REDUCTION_MEAN, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_mse_loss(h, h, (em_reduction)7), EM_ERR_VALUE);
    em_tensor *z = em_empty(1, (int64_t[]){0}, EM_F32), *zm = em_l1_loss(z, z, EM_REDUCTION_MEAN);
    ok = ok && zm && isnan(tval(zm, 0));
    em_tensor *b = trand(EM_F32, SHAPE(3), 0, 1);
    CHECK_ERR(em_mse_loss(b, i, EM_REDUCTION_SUM), EM_ERR_SHAPE);
    RELEASE(h, i, m, z, zm, b);
    CHECK(ok);
    COVER(EM_OP_mse_loss, EM_OP_l1_loss, EM_OP_smooth_l1_loss, EM_OP_huber_loss);
}

/* a large input: threads and chunked sums agree with a double reference */
TEST(loss_regression_large)
{
    em_tensor *x = trand(EM_F32, SHAPE(300, 301), -1, 1), *y = trand(EM_F32, SHAPE(300, 301), -1, 1);
    em_tensor *s = em_mse_loss(x, y, EM_REDUCTION_SUM);
    double ref = 0;
    for (int64_t i = 0; i < 300 * 301; i++) ref += (tval(x, i) - tval(y, i)) * (tval(x, i) - tval(y, i));
    bool ok = s && tclose(s, &ref, 1e-5, 0);
    RELEASE(x, y, s);
    CHECK(ok);
}

TEST(loss_bce)
{
    for (int dti = 0; dti < 2; dti++)
        for (int r = 0; r < 3; r++) {
            em_dtype dt = dti ? EM_F64 : EM_F32;
            double tol = dti ? 1e-12 : 1e-5;
            em_tensor *x = trand(dt, SHAPE(2, 3), 0.01, 0.99), *y = trand(dt, SHAPE(2, 3), 0, 1);
            em_tensor *w = trand(dt, SHAPE(3), 0.5, 2), *q = trand(dt, SHAPE(3), 0.5, 2);
            em_tensor *b = em_binary_cross_entropy(x, y, w, (em_reduction)r);
            em_tensor *bl = em_binary_cross_entropy_with_logits(x, y, w, q, (em_reduction)r);
            double lb[6], ll[6];
            for (int i = 0; i < 6; i++) {
                double xv = tval(x, i), yv = tval(y, i), wv = tval(w, i % 3), qv = tval(q, i % 3);
                lb[i] = -wv * (yv * log(xv) + (1 - yv) * log(1 - xv));
                double s = 1 / (1 + exp(-xv));
                ll[i] = -wv * (qv * yv * log(s) + (1 - yv) * log(1 - s));
            }
            bool ok = close_reduced(b, lb, 6, (em_reduction)r, 6, tol) && close_reduced(bl, ll, 6, (em_reduction)r, 6, tol);
            RELEASE(x, y, w, q, b, bl);
            CHECK_MSG(ok, "bce dtype %d reduction %d", dti, r);
        }
    /* log clamped at -100; values outside [0, 1], sizes and dtypes refused */
    em_tensor *x = tt(EM_F32, SHAPE(2), (double[]){0, 1}), *y = tt(EM_F32, SHAPE(2), (double[]){1, 0});
    em_tensor *b = em_binary_cross_entropy(x, y, NULL, EM_REDUCTION_NONE);
    bool ok = b && tval(b, 0) == 100 && tval(b, 1) == 100;
    em_tensor *bad = tt(EM_F32, SHAPE(2), (double[]){0.5, 1.5}), *y3 = trand(EM_F32, SHAPE(3), 0, 1);
    em_tensor *yd = trand(EM_F64, SHAPE(2), 0, 1), *big = tt(EM_F32, SHAPE(2), (double[]){1000, -1000});
    CHECK_ERR(em_binary_cross_entropy(bad, y, NULL, EM_REDUCTION_MEAN), EM_ERR_RUNTIME);
    CHECK_ERR(em_binary_cross_entropy(x, y3, NULL, EM_REDUCTION_MEAN), EM_ERR_VALUE);
    CHECK_ERR(em_binary_cross_entropy_with_logits(x, y3, NULL, NULL, EM_REDUCTION_MEAN), EM_ERR_VALUE);
    CHECK_ERR(em_binary_cross_entropy(x, yd, NULL, EM_REDUCTION_MEAN), EM_ERR_DTYPE);
    CHECK_ERR(em_binary_cross_entropy(x, y, y3, EM_REDUCTION_MEAN), EM_ERR_SHAPE);
    /* the stable form: huge logits give finite losses */
    em_tensor *s = em_binary_cross_entropy_with_logits(big, y, NULL, NULL, EM_REDUCTION_NONE);
    ok = ok && s && tval(s, 0) == 0 && tval(s, 1) == 0;
    RELEASE(x, y, b, bad, y3, yd, big, s);
    CHECK(ok);
    COVER(EM_OP_binary_cross_entropy, EM_OP_binary_cross_entropy_with_logits);
}

/* reference of nll (fused: cross entropy) over input [N][C][S] as doubles */
static void class_ref(const em_tensor *x, const em_tensor *t, const em_tensor *w, int64_t N, int64_t C, int64_t S,
                      int64_t ignore, bool fused, double *l, double *wsum)
{
    *wsum = 0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t s = 0; s < S; s++) {
            int64_t tv = (int64_t)tval(t, n * S + s);
            double lse = 0, mx = -INFINITY;
            for (int64_t c = 0; c < C; c++) mx = fmax(mx, tval(x, (n * C + c) * S + s));
            for (int64_t c = 0; c < C; c++) lse += exp(tval(x, (n * C + c) * S + s) - mx);
            lse = mx + log(lse);
            if (tv == ignore) {
                l[n * S + s] = 0;
                continue;
            }
            double wt = w ? tval(w, tv) : 1;
            l[n * S + s] = wt * ((fused ? lse : 0) - tval(x, (n * C + tv) * S + s));
            *wsum += wt;
        }
}

TEST(loss_class)
{
    struct { int nd; int64_t sizes[4]; } shapes[] = {{2, {5, 4}}, {3, {2, 3, 4}}, {4, {2, 3, 2, 3}}, {1, {6}}};
    for (int si = 0; si < 4; si++)
        for (int fused = 0; fused < 2; fused++)
            for (int r = 0; r < 3; r++)
                for (int weighted = 0; weighted < 2; weighted++) {
                    int nd = shapes[si].nd;
                    const int64_t *sz = shapes[si].sizes;
                    int64_t N = nd == 1 ? 1 : sz[0], C = sz[nd == 1 ? 0 : 1], S = 1, tsz[3];
                    for (int d = 2; d < nd; d++) S *= sz[d];
                    tsz[0] = N;
                    for (int d = 2; d < nd; d++) tsz[d - 1] = sz[d];
                    em_dtype dt = weighted ? EM_F64 : EM_F32;
                    em_tensor *x = trand(dt, nd, sz, -3, 3), *t = tints(EM_I64, nd == 1 ? 0 : nd - 1, tsz, 0, C);
                    em_tensor *w = weighted ? trand(dt, 1, &C, 0.5, 2) : NULL;
                    em_set(t, (int64_t[]){0, 0, 0}, 1 - 1); /* some ignored with ignore_index 0 */
                    em_tensor *got = fused ? em_cross_entropy(x, t, w, (em_reduction)r, 0)
                                           : em_nll_loss(x, t, w, (em_reduction)r, 0);
                    double l[64], wsum;
                    class_ref(x, t, w, N, C, S, 0, fused, l, &wsum);
                    bool ok = close_reduced(got, l, N * S, (em_reduction)r, wsum, weighted ? 1e-12 : 1e-5);
                    ok = ok && (r || (em_ndim(got) == em_ndim(t) && !memcmp(em_sizes(got), em_sizes(t), em_ndim(t) * 8)));
                    RELEASE(x, t, w, got);
                    CHECK_MSG(ok, "class loss shape %d fused %d reduction %d weighted %d", si, fused, r, weighted);
                }
    COVER(EM_OP_nll_loss, EM_OP_cross_entropy);
}

TEST(loss_class_edge_cases)
{
    em_tensor *x = trand(EM_F32, SHAPE(3, 5), -1, 1), *t = tt(EM_I64, SHAPE(3), (double[]){-100, -100, -100});
    em_tensor *mean = em_cross_entropy(x, t, NULL, EM_REDUCTION_MEAN, -100);
    em_tensor *sum = em_nll_loss(x, t, NULL, EM_REDUCTION_SUM, -100);
    bool ok = mean && isnan(tval(mean, 0)) && sum && tval(sum, 0) == 0;
    /* a large row: the fused kernel's lse against the reference, through threads */
    em_tensor *xb = trand(EM_F32, SHAPE(40, 1000), -5, 5), *tb = tints(EM_I64, SHAPE(40), 0, 1000);
    em_tensor *cb = em_cross_entropy(xb, tb, NULL, EM_REDUCTION_NONE, -100);
    double l[40], wsum;
    class_ref(xb, tb, NULL, 40, 1000, 1, -100, true, l, &wsum);
    ok = ok && cb && tclose(cb, l, 1e-5, 1e-5);
    /* errors, as PyTorch */
    em_tensor *t4 = tints(EM_I64, SHAPE(4), 0, 5), *tbad = tt(EM_I64, SHAPE(3), (double[]){1, 5, 0});
    em_tensor *tf = trand(EM_F32, SHAPE(3), 0, 4), *w4 = trand(EM_F32, SHAPE(4), 0, 1);
    em_tensor *wd = trand(EM_F64, SHAPE(5), 0, 1), *t2 = tints(EM_I64, SHAPE(3, 1), 0, 5);
    em_tensor *x0 = trand(EM_F32, SHAPE(), 0, 1), *xi = tints(EM_I32, SHAPE(3, 5), 0, 3);
    em_tensor *x3 = trand(EM_F32, SHAPE(2, 3, 4), 0, 1), *t3 = tints(EM_I64, SHAPE(2, 5), 0, 3);
    CHECK_ERR(em_cross_entropy(x, t4, NULL, EM_REDUCTION_MEAN, -100), EM_ERR_VALUE);
    CHECK_ERR(em_cross_entropy(x, tbad, NULL, EM_REDUCTION_MEAN, -100), EM_ERR_INDEX);
    CHECK(strstr(em_last_error(), "Target 5 is out of bounds."));
    CHECK_ERR(em_nll_loss(x, tf, NULL, EM_REDUCTION_MEAN, -100), EM_ERR_DTYPE);
    CHECK(strstr(em_last_error(), "expected scalar type Long but found Float"));
    CHECK_ERR(em_nll_loss(x, t, w4, EM_REDUCTION_MEAN, -100), EM_ERR_SHAPE);
    CHECK_ERR(em_nll_loss(x, t, wd, EM_REDUCTION_MEAN, -100), EM_ERR_DTYPE);
    CHECK_ERR(em_nll_loss(x, t2, NULL, EM_REDUCTION_MEAN, -100), EM_ERR_SHAPE);
    CHECK_ERR(em_nll_loss(x0, t, NULL, EM_REDUCTION_MEAN, -100), EM_ERR_VALUE);
    CHECK_ERR(em_nll_loss(xi, t, NULL, EM_REDUCTION_MEAN, -100), EM_ERR_DTYPE);
    CHECK_ERR(em_cross_entropy(x3, t3, NULL, EM_REDUCTION_MEAN, -100), EM_ERR_SHAPE);
    CHECK_ERR(em_cross_entropy(x, t, NULL, (em_reduction)3, -100), EM_ERR_VALUE);
    RELEASE(x, t, mean, sum, xb, tb, cb, t4, tbad, tf, w4, wd, t2, x0, xi, x3, t3);
    CHECK(ok);
}

/* the backward ops against the reference gradient (softmax - onehot) w / total */
TEST(loss_class_backward_ops)
{
    em_tensor *x = trand(EM_F64, SHAPE(4, 3), -2, 2), *t = tt(EM_I64, SHAPE(4), (double[]){0, 2, -100, 1});
    em_tensor *w = trand(EM_F64, SHAPE(3), 0.5, 2), *g = tt(EM_F64, SHAPE(), (double[]){1.5});
    em_tensor *tw = tt(EM_F64, SHAPE(), (double[]){2.0}), *lse = trand(EM_F64, SHAPE(4), 0, 1);
    for (int k = 0; k < 4; k++) { /* the rows' true log-sum-exp */
        double s = 0;
        for (int c = 0; c < 3; c++) s += exp(tval(x, k * 3 + c));
        em_set(lse, (int64_t[]){k}, log(s));
    }
    em_tensor *gn = em_nll_loss_backward(g, x, t, w, EM_REDUCTION_MEAN, -100, tw);
    em_tensor *gc = em_cross_entropy_backward(g, x, t, w, EM_REDUCTION_MEAN, -100, lse, tw);
    double wn[12], wc[12];
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 3; c++) {
            int tv = (int)tval(t, k);
            double sc = tv < 0 ? 0 : tval(w, tv) * 1.5 / 2.0;
            wn[k * 3 + c] = c == tv ? -sc : 0;
            wc[k * 3 + c] = exp(tval(x, k * 3 + c) - tval(lse, k)) * sc - (c == tv ? sc : 0);
        }
    bool ok = gn && gc && tclose(gn, wn, 1e-12, 1e-12) && tclose(gc, wc, 1e-12, 1e-12);
    CHECK_ERR(em_nll_loss_backward(x, x, t, w, EM_REDUCTION_MEAN, -100, tw), EM_ERR_SHAPE);
    RELEASE(x, t, w, g, tw, lse, gn, gc);
    CHECK(ok);
    COVER(EM_OP_nll_loss_backward, EM_OP_cross_entropy_backward);
}

/* CTC by brute force: the probability of the target summed over every path
 * of length T that collapses to it (C = 3, T = 4: 81 paths). */
static double ctc_brute(const em_tensor *lp, int64_t b, int64_t N, int64_t Tb, const int64_t *tgt, int64_t L)
{
    const int C = 3;
    double total = 0;
    int64_t npaths = 1;
    for (int64_t t = 0; t < Tb; t++) npaths *= C;
    for (int64_t p = 0; p < npaths; p++) {
        int64_t path[8], q = p, out[8], no = 0;
        double lpsum = 0;
        for (int64_t t = 0; t < Tb; t++) path[t] = q % C, q /= C, lpsum += tval(lp, (t * N + b) * C + path[t]);
        for (int64_t t = 0; t < Tb; t++)
            if (path[t] != 0 && (t == 0 || path[t] != path[t - 1])) out[no++] = path[t];
        bool match = no == L;
        for (int64_t i = 0; i < no && match; i++) match = out[i] == tgt[i];
        if (match) total += exp(lpsum);
    }
    return -log(total);
}

TEST(loss_ctc)
{
    for (int dti = 0; dti < 2; dti++) {
        em_dtype dt = dti ? EM_F64 : EM_F32;
        em_tensor *x = trand(dt, SHAPE(4, 3, 3), -1, 1), *lp = em_log_softmax(x, 2, EM_DTYPE_NONE);
        em_tensor *tg = tt(EM_I64, SHAPE(3, 2), (double[]){1, 2, 1, 1, 2, 0});
        em_tensor *il = tt(EM_I64, SHAPE(3), (double[]){4, 3, 4}), *tl = tt(EM_I64, SHAPE(3), (double[]){2, 2, 1});
        em_tensor *tgc = tt(EM_I32, SHAPE(5), (double[]){1, 2, 1, 1, 2});
        em_tensor *none = em_ctc_loss(lp, tg, il, tl, 0, EM_REDUCTION_NONE, false);
        em_tensor *cat = em_ctc_loss(lp, tgc, il, tl, 0, EM_REDUCTION_NONE, false);
        em_tensor *mean = em_ctc_loss(lp, tg, il, tl, 0, EM_REDUCTION_MEAN, false);
        const int64_t tgts[3][2] = {{1, 2}, {1, 1}, {2, 0}}, Tb[3] = {4, 3, 4}, L[3] = {2, 2, 1};
        double want[3], wmean = 0;
        for (int b = 0; b < 3; b++) want[b] = ctc_brute(lp, b, 3, Tb[b], tgts[b], L[b]), wmean += want[b] / L[b] / 3;
        double tol = dti ? 1e-10 : 1e-4;
        bool ok = none && cat && mean && tclose(none, want, tol, tol) && tclose(cat, want, tol, tol) &&
                  tclose(mean, &wmean, tol, tol);
        RELEASE(x, lp, tg, il, tl, tgc, none, cat, mean);
        CHECK_MSG(ok, "ctc dtype %d", dti);
    }
    /* an impossible alignment is inf, or 0 with zero_infinity; lengths are checked */
    em_tensor *lp = trand(EM_F64, SHAPE(2, 1, 3), -2, -1), *tg = tt(EM_I64, SHAPE(1, 2), (double[]){1, 1});
    em_tensor *il = tt(EM_I64, SHAPE(1), (double[]){2}), *tl = tt(EM_I64, SHAPE(1), (double[]){2});
    em_tensor *inf = em_ctc_loss(lp, tg, il, tl, 0, EM_REDUCTION_SUM, false);
    em_tensor *zero = em_ctc_loss(lp, tg, il, tl, 0, EM_REDUCTION_SUM, true);
    bool ok = inf && isinf(tval(inf, 0)) && zero && tval(zero, 0) == 0;
    em_tensor *il9 = tt(EM_I64, SHAPE(1), (double[]){9}), *tl9 = tt(EM_I64, SHAPE(1), (double[]){9});
    CHECK_ERR(em_ctc_loss(lp, tg, il9, tl, 0, EM_REDUCTION_SUM, false), EM_ERR_RUNTIME);
    CHECK_ERR(em_ctc_loss(lp, tg, il, tl9, 0, EM_REDUCTION_SUM, false), EM_ERR_RUNTIME);
    CHECK_ERR(em_ctc_loss(lp, tg, il, tl, 5, EM_REDUCTION_SUM, false), EM_ERR_RUNTIME);
    RELEASE(lp, tg, il, tl, inf, zero, il9, tl9);
    CHECK(ok);
    COVER(EM_OP_ctc_loss, EM_OP_ctc_loss_backward);
}
