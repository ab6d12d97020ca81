/* Tests of the nn activation family's ops (include/ember/nnact.h): values
 * against naive double references on contiguous and strided inputs of each
 * floating dtype, dropout's statistics and reproducibility, embedding's
 * lookup, gradient sums and renorm, and the argument errors. */
#include "test.h"

static const em_dtype floats[] = {EM_F32, EM_F64};

TEST(nnact_threshold_and_shrinks)
{
    COVER(EM_OP_threshold, EM_OP_hardshrink, EM_OP_softshrink);
    for (int d = 0; d < 2; d++)
        for (int layout = 0; layout < 3; layout++) {
            em_tensor *x = tlayout(floats[d], SHAPE(3, 5), layout, -2, 2);
            em_tensor *th = em_threshold(x, 0.5, -7), *hs = em_hardshrink(x, 0.5), *ss = em_softshrink(x, 0.5);
            CHECK(th && hs && ss && em_dtype_of(th) == floats[d]);
            double *v = tvals(x), want[3][15];
            for (int i = 0; i < 15; i++) {
                want[0][i] = v[i] > 0.5 ? v[i] : -7;
                want[1][i] = fabs(v[i]) > 0.5 ? v[i] : 0;
                want[2][i] = v[i] > 0.5 ? v[i] - 0.5 : v[i] < -0.5 ? v[i] + 0.5 : 0;
            }
            free(v);
            double r = trtol(floats[d]);
            CHECK(tclose(th, want[0], r, r) && tclose(hs, want[1], r, r) && tclose(ss, want[2], r, r));
            CHECK(em_threshold_(x, 0.5, -7) == EM_OK && tclose(x, want[0], r, r));
            RELEASE(x, th, hs, ss);
        }
    /* integers go through threshold; the shrinks are floating only; softshrink's lambd >= 0 */
    em_tensor *xi = tt(EM_I64, SHAPE(3), (double[]){-2, 1, 3}), *ti = em_threshold(xi, 1, 5);
    CHECK(ti && em_dtype_of(ti) == EM_I64 && tclose(ti, (double[]){5, 5, 3}, 0, 0));
    CHECK_ERR(em_hardshrink(xi, 0.5), EM_ERR_DTYPE);
    em_tensor *xb = em_zeros(SHAPE(2), EM_BOOL);
    CHECK_ERR(em_threshold(xb, 0, 1), EM_ERR_DTYPE);
    em_tensor *xf = trand(EM_F32, SHAPE(4), -1, 1);
    CHECK_ERR(em_softshrink(xf, -1), EM_ERR_RUNTIME);
    RELEASE(xi, ti, xb, xf);
}

TEST(nnact_threshold_backward)
{
    COVER(EM_OP_threshold_backward);
    /* g where x > threshold, else 0; nan in x passes g (as PyTorch); g broadcast; integers */
    em_tensor *x = tt(EM_F32, SHAPE(5), (double[]){-1, 0.5, 0.75, NAN, 2});
    em_tensor *g = tt(EM_F32, SHAPE(5), (double[]){1, 2, 3, 4, 5}), *g1 = tt(EM_F64, SHAPE(1), (double[]){7});
    em_tensor *r = em_threshold_backward(g, x, 0.5), *rb = em_threshold_backward(g1, x, 0.5);
    CHECK(r && em_dtype_of(r) == EM_F32 && tclose(r, (double[]){0, 0, 3, 4, 5}, 0, 0));
    CHECK(rb && em_dtype_of(rb) == EM_F64 && tclose(rb, (double[]){0, 0, 7, 7, 7}, 0, 0));
    em_tensor *xi = tt(EM_I64, SHAPE(3), (double[]){-2, 1, 3}), *ri = em_threshold_backward(xi, xi, 1);
    CHECK(ri && tclose(ri, (double[]){0, 0, 3}, 0, 0));
    em_tensor *xn = tnoncontig(x), *rn = em_threshold_backward(xn, xn, 0);
    double *v = tvals(xn), want[5];
    for (int i = 0; i < 5; i++) want[i] = v[i] <= 0 ? 0 : v[i];
    CHECK(rn && tclose(rn, want, 0, 0));
    free(v);
    em_tensor *bad = tt(EM_F32, SHAPE(2), (double[]){1, 2});
    CHECK_ERR(em_threshold_backward(bad, x, 0), EM_ERR_SHAPE);
    RELEASE(x, g, g1, r, rb, xi, ri, xn, rn, bad);
}

/* gelu'(x) in double: exact Phi + x phi, or the tanh form's derivative */
static double gelu_grad_ref(double x, bool tanh_form)
{
    if (!tanh_form) return 0.5 * erfc(-x / sqrt(2)) + x * exp(-x * x / 2) / sqrt(2 * M_PI);
    double c = sqrt(2 / M_PI), t = tanh(c * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
}

TEST(nnact_gelu_backward)
{
    COVER(EM_OP_gelu_backward);
    for (int d = 0; d < 2; d++)
        for (int form = 0; form < 2; form++) {
            em_tensor *x = tlayout(floats[d], SHAPE(4, 9), 1, -12, 12), *g = trand(floats[d], SHAPE(4, 9), -2, 2);
            em_tensor *gb = em_gelu_backward(g, x, form);
            double *vx = tvals(x), *vg = tvals(g), want[36];
            for (int i = 0; i < 36; i++) want[i] = vg[i] * gelu_grad_ref(vx[i], form);
            double tol = d == 0 ? 2e-6 : 1e-14;
            CHECK_MSG(gb && em_dtype_of(gb) == floats[d] && tclose(gb, want, tol, tol), "dtype %d form %d", d, form);
            /* it is gelu's gradient: autograd through gelu gives the same */
            em_tensor *xl = em_detach(x);
            em_set_requires_grad(xl, true);
            em_tensor *y = em_gelu(xl, form), *gx = NULL;
            CHECK(y && em_autograd_grad(1, &y, &g, 1, &xl, false, false, false, &gx) == EM_OK && em_equal(gx, gb));
            free(vx), free(vg);
            RELEASE(x, g, gb, xl, y, gx);
        }
    em_tensor *xi = em_zeros(SHAPE(3), EM_I64);
    CHECK_ERR(em_gelu_backward(xi, xi, 0), EM_ERR_DTYPE);
    em_release(xi);
}

TEST(nnact_prelu)
{
    COVER(EM_OP_prelu);
    for (int d = 0; d < 2; d++)
        for (int layout = 0; layout < 3; layout++) {
            em_tensor *x = tlayout(floats[d], SHAPE(2, 3, 4), layout, -1, 1);
            em_tensor *w = tt(floats[d], SHAPE(3), (double[]){0.25, -0.5, 2}), *w1 = tt(floats[d], SHAPE(1), (double[]){0.1});
            em_tensor *y = em_prelu(x, w), *y1 = em_prelu(x, w1);
            CHECK(y && y1 && tshape_is(y, SHAPE(2, 3, 4)));
            double *v = tvals(x), want[24], want1[24];
            for (int i = 0; i < 24; i++) {
                double s = (double[]){0.25, -0.5, 2}[(i / 4) % 3];
                want[i] = v[i] > 0 ? v[i] : s * v[i];
                want1[i] = v[i] > 0 ? v[i] : tcast(floats[d], 0.1) * v[i];
            }
            free(v);
            CHECK(tclose(y, want, trtol(floats[d]), 1e-7) && tclose(y1, want1, trtol(floats[d]), 1e-7));
            RELEASE(x, w, w1, y, y1);
        }
    em_tensor *x = trand(EM_F32, SHAPE(2, 3), -1, 1), *w2 = em_ones(SHAPE(2), EM_F32), *wm = em_ones(SHAPE(3, 1), EM_F32);
    em_tensor *xs = trand(EM_F32, SHAPE(0), -1, 1), *w1 = em_ones(SHAPE(1), EM_F32), *x0 = em_tensor_scalar(-2, EM_F32);
    em_tensor *xi = em_ones(SHAPE(2, 3), EM_I64), *wi = em_ones(SHAPE(3), EM_I64), *w64 = em_ones(SHAPE(3), EM_F64);
    CHECK_ERR(em_prelu(x, w2), EM_ERR_SHAPE);
    CHECK_ERR(em_prelu(x, wm), EM_ERR_SHAPE);
    CHECK_ERR(em_prelu(xi, wi), EM_ERR_DTYPE);
    CHECK_ERR(em_prelu(x, w64), EM_ERR_DTYPE);
    em_tensor *ye = em_prelu(xs, w1), *y0 = em_prelu(x0, w1);
    CHECK(ye && em_numel(ye) == 0 && y0 && em_ndim(y0) == 0 && fabs(tval(y0, 0) + 2) < 1e-6);
    RELEASE(x, w2, wm, xs, w1, x0, xi, wi, w64, ye, y0);
}

TEST(nnact_glu)
{
    COVER(EM_OP_glu);
    for (int d = 0; d < 2; d++)
        for (int layout = 0; layout < 3; layout++) {
            em_tensor *x = tlayout(floats[d], SHAPE(4, 6), layout, -2, 2);
            for (int dim = -2; dim < 2; dim++) {
                em_tensor *y = em_glu(x, dim);
                int dd = (dim + 2) % 2;
                CHECK(y && em_size(y, dd) == em_size(x, dd) / 2);
                double want[12];
                int64_t rows = em_size(y, 0), cols = em_size(y, 1);
                for (int64_t r = 0; r < rows; r++)
                    for (int64_t c = 0; c < cols; c++) {
                        double av = tval(x, r * 6 + c), bv = dd == 0 ? tval(x, (r + 2) * 6 + c) : tval(x, r * 6 + c + 3);
                        want[r * cols + c] = av / (1 + exp(-bv));
                    }
                CHECK(tclose(y, want, trtol(floats[d]), 1e-7));
                em_release(y);
            }
            em_release(x);
        }
    em_tensor *odd = trand(EM_F32, SHAPE(3), -1, 1), *s = em_scalar_float(1), *xi = em_ones(SHAPE(2), EM_I64);
    CHECK_ERR(em_glu(odd, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_glu(s, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_glu(odd, 1), EM_ERR_INDEX);
    CHECK_ERR(em_glu(xi, 0), EM_ERR_DTYPE);
    RELEASE(odd, s, xi);
}

TEST(nnact_rrelu)
{
    COVER(EM_OP_rrelu_noise);
    for (int d = 0; d < 2; d++) {
        em_tensor *x = tlayout(floats[d], SHAPE(50, 40), 2, -1, 1);
        em_manual_seed(3);
        em_tensor *y = em_rrelu(x, 0.1, 0.3, true, NULL);
        em_manual_seed(3);
        em_tensor *noise = em_rrelu_noise(x, 0.1, 0.3, NULL);
        CHECK(y && noise);
        double lo = 1, hi = 0;
        for (int64_t i = 0; i < 2000; i++) {
            double xv = tval(x, i), nv = tval(noise, i);
            CHECK(xv > 0 ? nv == 1 : nv >= 0.1 && nv <= 0.3);
            CHECK(fabs(tval(y, i) - xv * nv) <= 1e-6);
            if (xv <= 0) lo = fmin(lo, nv), hi = fmax(hi, nv);
        }
        CHECK(lo < 0.11 && hi > 0.29);
        em_tensor *ev = em_rrelu(x, 0.1, 0.3, false, NULL);
        for (int64_t i = 0; i < 2000; i++) {
            double xv = tval(x, i);
            CHECK(fabs(tval(ev, i) - (xv > 0 ? xv : 0.2 * xv)) < 1e-6);
        }
        em_manual_seed(3);
        CHECK(em_rrelu_(x, 0.1, 0.3, true, NULL) == EM_OK && em_equal(x, y));
        RELEASE(x, y, noise, ev);
    }
    em_tensor *x = trand(EM_F32, SHAPE(3), -1, 1);
    CHECK_ERR(em_rrelu(x, 0.5, 0.1, true, NULL), EM_ERR_RUNTIME);
    em_release(x);
}

TEST(nnact_composites)
{
    em_tensor *x = tlayout(EM_F64, SHAPE(3, 4), 1, -3, 3), *ss = em_softsign(x), *ts = em_tanhshrink(x);
    CHECK(ss && ts);
    for (int64_t i = 0; i < 12; i++) {
        double v = tval(x, i);
        CHECK(fabs(tval(ss, i) - v / (1 + fabs(v))) < 1e-12 && fabs(tval(ts, i) - (v - tanh(v))) < 1e-12);
    }
    RELEASE(x, ss, ts);
}

TEST(nnact_dropout)
{
    COVER(EM_OP_dropout);
    const em_dtype dts[] = {EM_F32, EM_F64, EM_BF16};
    for (int d = 0; d < 3; d++) {
        em_tensor *x = tlayout(dts[d], SHAPE(100, 200), 2, 1, 2), *y = NULL, *mask = NULL;
        em_manual_seed(7);
        CHECK(em_native_dropout(x, 0.3, NULL, &y, &mask) == EM_OK);
        CHECK(em_dtype_of(y) == dts[d] && em_dtype_of(mask) == EM_BOOL && tshape_is(mask, SHAPE(100, 200)));
        int64_t zeros = 0;
        for (int64_t i = 0; i < 20000; i++) {
            double xv = tval(x, i), yv = tval(y, i);
            bool keep = tval(mask, i) != 0;
            zeros += !keep;
            CHECK(keep ? fabs(yv - xv / 0.7) <= 2e-2 * fabs(xv) : yv == 0);
        }
        CHECK(fabs(zeros / 20000.0 - 0.3) < 0.02); /* 6 sigma */
        em_manual_seed(7);
        em_tensor *y2 = em_dropout(x, 0.3, true, NULL);
        CHECK(y2 && em_equal(y, y2));
        RELEASE(x, y, mask, y2);
    }
    em_tensor *x = trand(EM_F32, SHAPE(4, 5), 1, 2), *y = NULL;
    em_tensor *same = em_dropout(x, 0.5, false, NULL), *p0 = em_dropout(x, 0, true, NULL);
    CHECK(same == x && p0 == x);
    em_tensor *ones = em_dropout(x, 1, true, NULL);
    CHECK(ones && tclose(ones, (double[20]){0}, 0, 0));
    CHECK_ERR(em_dropout(x, 1.5, true, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_native_dropout(x, -0.1, NULL, &y, NULL), EM_ERR_VALUE);
    em_tensor *xi = em_ones(SHAPE(3), EM_I64);
    CHECK_ERR(em_dropout(xi, 0.5, true, NULL), EM_ERR_DTYPE);
    em_tensor *xc = em_clone(x);
    em_manual_seed(1);
    em_tensor *yr = em_dropout(x, 0.5, true, NULL);
    em_manual_seed(1);
    CHECK(em_dropout_(xc, 0.5, true, NULL) == EM_OK && em_equal(xc, yr));
    RELEASE(x, same, p0, ones, xi, xc, yr);
}

TEST(nnact_feature_and_alpha_dropout)
{
    em_tensor *x = trand(EM_F64, SHAPE(8, 50, 3, 2), 1, 2);
    em_manual_seed(5);
    em_tensor *y = em_feature_dropout(x, 0.4, true, NULL);
    CHECK(y);
    int64_t dropped = 0;
    for (int64_t ch = 0; ch < 400; ch++) {
        bool zero = tval(y, ch * 6) == 0;
        dropped += zero;
        for (int k = 0; k < 6; k++) {
            double xv = tval(x, ch * 6 + k), yv = tval(y, ch * 6 + k);
            CHECK(zero ? yv == 0 : fabs(yv - xv / 0.6) < 1e-12);
        }
    }
    CHECK(dropped > 120 && dropped < 200);
    /* alpha dropout keeps a standard normal's mean and variance */
    em_tensor *z = em_randn(SHAPE(200000), EM_F64, NULL), *az = em_alpha_dropout(z, 0.2, true, NULL);
    em_tensor *m = em_mean(az, 0, NULL, false, EM_DTYPE_NONE), *s = em_std(az, 0, NULL, 1, false);
    CHECK(az && fabs(tval(m, 0)) < 0.02 && fabs(tval(s, 0) - 1) < 0.02);
    em_tensor *fa = em_feature_alpha_dropout(x, 0.5, true, NULL), *one = trand(EM_F32, SHAPE(3), 0, 1);
    CHECK(fa && tshape_is(fa, SHAPE(8, 50, 3, 2)));
    CHECK_ERR(em_feature_dropout(one, 0.5, true, NULL), EM_ERR_SHAPE);
    em_tensor *same = em_alpha_dropout(x, 0.5, false, NULL);
    CHECK(same == x);
    RELEASE(x, y, z, az, m, s, fa, one, same);
}

TEST(nnact_embedding)
{
    COVER(EM_OP_embedding, EM_OP_embedding_dense_backward, EM_OP_embedding_renorm);
    const em_dtype idt[] = {EM_I64, EM_I32};
    for (int d = 0; d < 2; d++)
        for (int layout = 0; layout < 3; layout++) {
            em_tensor *w = tlayout(floats[d], SHAPE(7, 5), layout, -1, 1);
            em_tensor *idx = tints(idt[layout % 2], SHAPE(2, 3), 0, 7), *y = em_embedding(w, idx, -1, false);
            CHECK(y && tshape_is(y, SHAPE(2, 3, 5)) && em_dtype_of(y) == floats[d]);
            double want[30];
            for (int i = 0; i < 6; i++)
                for (int j = 0; j < 5; j++) want[i * 5 + j] = tval(w, (int64_t)tval(idx, i) * 5 + j);
            CHECK(tclose(y, want, 0, 0));
            /* the gradient: rows summed by index, padding row 2 left zero, optionally / counts */
            em_tensor *g = tlayout(floats[d], SHAPE(2, 3, 5), layout, -1, 1);
            for (int freq = 0; freq < 2; freq++) {
                em_tensor *gw = em_embedding_dense_backward(g, idx, 7, 2, freq);
                double acc[35] = {0}, counts[7] = {0};
                for (int i = 0; i < 6; i++) counts[(int)tval(idx, i)]++;
                for (int i = 0; i < 6; i++) {
                    int v = (int)tval(idx, i);
                    for (int j = 0; j < 5 && v != 2; j++) acc[v * 5 + j] += tval(g, i * 5 + j) / (freq ? counts[v] : 1);
                }
                CHECK(gw && tshape_is(gw, SHAPE(7, 5)) && tclose(gw, acc, trtol(floats[d]), 1e-6));
                em_release(gw);
            }
            RELEASE(w, idx, y, g);
        }
    /* large enough for the threaded gradient: the same as the sum in order */
    em_tensor *idx = tints(EM_I64, SHAPE(4000), 0, 50), *g = trand(EM_F64, SHAPE(4000, 16), -1, 1);
    em_tensor *gw = em_embedding_dense_backward(g, idx, 50, -1, false);
    double acc[800] = {0};
    for (int i = 0; i < 4000; i++)
        for (int j = 0; j < 16; j++) acc[(int)tval(idx, i) * 16 + j] += tval(g, i * 16 + j);
    CHECK(gw && tclose(gw, acc, 1e-12, 1e-12));
    RELEASE(idx, g, gw);

    em_tensor *w = trand(EM_F32, SHAPE(5, 3), -1, 1), *bad = tt(EM_I64, SHAPE(2), (double[]){1, 5});
    em_tensor *neg = tt(EM_I64, SHAPE(1), (double[]){-1}), *fi = tt(EM_F32, SHAPE(1), (double[]){1});
    em_tensor *w1 = em_ones(SHAPE(5), EM_F32), *ok = tt(EM_I64, SHAPE(1), (double[]){1});
    CHECK_ERR(em_embedding(w, bad, -1, false), EM_ERR_INDEX);
    CHECK_ERR(em_embedding(w, neg, -1, false), EM_ERR_INDEX);
    CHECK_ERR(em_embedding(w, fi, -1, false), EM_ERR_DTYPE);
    CHECK_ERR(em_embedding(w1, ok, -1, false), EM_ERR_SHAPE);
    CHECK_ERR(em_embedding(w, ok, 5, false), EM_ERR_INDEX);
    em_tensor *g2 = em_ones(SHAPE(2, 3), EM_F32);
    CHECK_ERR(em_embedding_dense_backward(g2, bad, 5, -1, false), EM_ERR_INDEX);
    CHECK_ERR(em_embedding_dense_backward(g2, ok, 5, -1, false), EM_ERR_SHAPE);
    CHECK_ERR(em_embedding_renorm_(w, bad, 1, 2), EM_ERR_INDEX);
    em_tensor *s = em_scalar_int(3), *y0 = em_embedding(w, s, -1, false);
    CHECK(y0 && tshape_is(y0, SHAPE(3)));
    RELEASE(w, bad, neg, fi, w1, ok, g2, s, y0);
}

TEST(nnact_embedding_renorm)
{
    em_tensor *w = tt(EM_F64, SHAPE(3, 2), (double[]){3, 4, 0.3, 0.4, 6, 8});
    em_tensor *idx = tt(EM_I64, SHAPE(3), (double[]){0, 1, 0});
    CHECK(em_embedding_renorm_(w, idx, 1, 2) == EM_OK);
    double s = 1 / (5 + 1e-7);
    CHECK(tclose(w, (double[]){3 * s, 4 * s, 0.3, 0.4, 6, 8}, 1e-12, 0));
    em_tensor *idx2 = tt(EM_I32, SHAPE(1), (double[]){2});
    CHECK(em_embedding_renorm_(w, idx2, 2, 1) == EM_OK);
    double s1 = 2 / (14 + 1e-7);
    CHECK(fabs(tval(w, 4) - 6 * s1) < 1e-12 && fabs(tval(w, 5) - 8 * s1) < 1e-12);
    /* a leaf that requires grad may not be renormalised in grad mode */
    em_tensor *lw = trand(EM_F32, SHAPE(3, 2), 1, 2);
    em_set_requires_grad(lw, true);
    CHECK_ERR(em_embedding_renorm_(lw, idx, 1, 2), EM_ERR_RUNTIME);
    RELEASE(w, idx, idx2, lw);
}

TEST(nnact_distances)
{
    em_tensor *a = tlayout(EM_F64, SHAPE(4, 3), 1, -1, 1), *b = trand(EM_F64, SHAPE(3), -1, 1);
    em_tensor *cs = em_cosine_similarity(a, b, 1, 1e-8), *pd = em_pairwise_distance(a, b, 2, 1e-6, false);
    em_tensor *pk = em_pairwise_distance(a, b, 1, 1e-6, true);
    CHECK(cs && pd && pk && tshape_is(cs, SHAPE(4)) && tshape_is(pd, SHAPE(4)) && tshape_is(pk, SHAPE(4, 1)));
    for (int i = 0; i < 4; i++) {
        double dot = 0, na = 0, nb = 0, d2 = 0, d1 = 0;
        for (int j = 0; j < 3; j++) {
            double x = tval(a, i * 3 + j), y = tval(b, j);
            dot += x * y, na += x * x, nb += y * y;
            d2 += (x - y + 1e-6) * (x - y + 1e-6), d1 += fabs(x - y + 1e-6);
        }
        CHECK(fabs(tval(cs, i) - dot / sqrt(na * nb)) < 1e-12);
        CHECK(fabs(tval(pd, i) - sqrt(d2)) < 1e-12 && fabs(tval(pk, i) - d1) < 1e-12);
    }
    em_tensor *ia = em_ones(SHAPE(3), EM_I64);
    CHECK_ERR(em_cosine_similarity(ia, ia, 0, 1e-8), EM_ERR_DTYPE);
    CHECK_ERR(em_cosine_similarity(a, b, 2, 1e-8), EM_ERR_INDEX);
    RELEASE(a, b, cs, pd, pk, ia);
}

/* embedding_bag against a naive reference over the bags {1, 2}, {}, {4, 5, 4}, {3, 2, 9, 0}:
 * every mode, padding 2 or none, weights, a transposed weight, int32 indices */
static void bag_reference(const em_tensor *w, const int64_t *idx, const int64_t *off, int nb, int n, int mode,
                          const double *psw, int64_t pad, double *out, int64_t *size)
{
    for (int b = 0; b < nb; b++) {
        int lo = (int)off[b], hi = b + 1 < nb ? (int)off[b + 1] : n, count = 0;
        for (int j = 0; j < 3; j++) out[b * 3 + j] = 0;
        for (int i = lo; i < hi; i++) {
            if (idx[i] == pad) continue;
            for (int j = 0; j < 3; j++) {
                double v = tval(w, idx[i] * 3 + j);
                if (mode == EM_BAG_MAX) out[b * 3 + j] = count == 0 || v > out[b * 3 + j] ? v : out[b * 3 + j];
                else out[b * 3 + j] += v * (psw ? psw[i] : 1);
            }
            count++;
        }
        for (int j = 0; j < 3 && mode == EM_BAG_MEAN && count; j++) out[b * 3 + j] /= count;
        size[b] = mode == EM_BAG_SUM ? 0 : count;
    }
}

TEST(nnact_embedding_bag)
{
    COVER(EM_OP_embedding_bag, EM_OP_embedding_bag_backward);
    const int64_t iv[9] = {1, 2, 4, 5, 4, 3, 2, 9, 0}, ov[4] = {0, 2, 2, 5};
    const double pv[9] = {0.5, -1, 2, 1, 0.25, 3, -2, 1, 1.5};
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 8; k++) {
            const int mode = k % 3, layout = k % 2 ? 1 : 0;
            const int64_t pad = k & 4 ? 2 : -1;
            em_tensor *w = tlayout(floats[d], SHAPE(10, 3), layout, -1, 1);
            em_tensor *idx = tt(k & 2 ? EM_I32 : EM_I64, SHAPE(9), (double[]){1, 2, 4, 5, 4, 3, 2, 9, 0});
            em_tensor *off = tt(EM_I64, SHAPE(4), (double[]){0, 2, 2, 5});
            em_tensor *psw = mode == EM_BAG_SUM && k != 0 ? tt(floats[d], SHAPE(9), pv) : NULL;
            em_tensor *y, *o2b, *size, *maxi;
            CHECK(em_embedding_bag(w, idx, off, mode, psw, false, pad, false, &y, &o2b, &size, &maxi) == EM_OK);
            double want[12];
            int64_t wsize[4];
            bag_reference(w, iv, ov, 4, 9, mode, psw ? pv : NULL, pad, want, wsize);
            CHECK(tshape_is(y, SHAPE(4, 3)) && em_dtype_of(y) == floats[d] && tclose(y, want, trtol(floats[d]), 1e-6));
            CHECK(tclose(o2b, (double[]){0, 0, 2, 2, 2, 3, 3, 3, 3}, 0, 0));
            for (int b = 0; b < 4; b++) CHECK(tval(size, b) == wsize[b]);
            if (mode == EM_BAG_MAX) { /* argmax rows give the maxima; an empty bag's are 0 */
                CHECK(tshape_is(maxi, SHAPE(4, 3)));
                for (int b = 0; b < 4; b++)
                    for (int j = 0; j < 3; j++)
                        CHECK(wsize[b] ? tval(w, (int64_t)tval(maxi, b * 3 + j) * 3 + j) == want[b * 3 + j]
                                       : tval(maxi, b * 3 + j) == 0);
            }
            /* the weight gradient against a reference */
            em_tensor *g = tlayout(floats[d], SHAPE(4, 3), layout, -1, 1);
            for (int freq = 0; freq < (mode == EM_BAG_MAX ? 1 : 2); freq++) {
                em_tensor *gw = em_embedding_bag_backward(g, idx, o2b, size, psw, mode == EM_BAG_MAX ? maxi : NULL,
                                                          10, mode, pad, freq);
                double acc[30] = {0}, counts[10] = {0};
                for (int i = 0; i < 9; i++) counts[iv[i]]++;
                if (mode == EM_BAG_MAX) {
                    for (int b = 0; b < 4; b++)
                        for (int j = 0; j < 3 && wsize[b]; j++) acc[(int64_t)tval(maxi, b * 3 + j) * 3 + j] += tval(g, b * 3 + j);
                } else {
                    for (int i = 0; i < 9; i++) {
                        int b = (int)tval(o2b, i);
                        if (iv[i] == pad) continue;
                        double s = (psw ? pv[i] : 1) / (mode == EM_BAG_MEAN ? wsize[b] : 1) / (freq ? counts[iv[i]] : 1);
                        for (int j = 0; j < 3; j++) acc[iv[i] * 3 + j] += tval(g, b * 3 + j) * s;
                    }
                }
                CHECK(gw && tshape_is(gw, SHAPE(10, 3)) && tclose(gw, acc, trtol(floats[d]), 1e-6));
                em_release(gw);
            }
            RELEASE(w, idx, off, psw, y, o2b, size, maxi, g);
        }
    /* include_last_offset: offsets end with N; float16 through float32 */
    em_tensor *w = trand(EM_F16, SHAPE(10, 3), -1, 1), *idx = tt(EM_I64, SHAPE(4), (double[]){1, 2, 3, 4});
    em_tensor *off = tt(EM_I64, SHAPE(3), (double[]){0, 1, 4}), *y, *o2b;
    CHECK(em_embedding_bag(w, idx, off, EM_BAG_SUM, NULL, true, -1, false, &y, &o2b, NULL, NULL) == EM_OK);
    CHECK(tshape_is(y, SHAPE(2, 3)) && em_dtype_of(y) == EM_F16 && tclose(o2b, (double[]){0, 1, 1, 1}, 0, 0));
    CHECK(fabs(tval(y, 3) - (tval(w, 6) + tval(w, 9) + tval(w, 12))) < 1e-2);
    em_tensor *out, *bad[4] = {tt(EM_I64, SHAPE(2), (double[]){1, 2}), tt(EM_I64, SHAPE(3), (double[]){0, 3, 2}),
                               tt(EM_I64, SHAPE(2), (double[]){0, 5}), tt(EM_I64, SHAPE(4), (double[]){1, 2, 3, 10})};
    for (int k = 0; k < 3; k++) CHECK_ERR(em_embedding_bag(w, idx, bad[k], 0, NULL, false, -1, false, &out, NULL, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_embedding_bag(w, bad[3], off, 0, NULL, false, -1, false, &out, NULL, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_embedding_bag(w, idx, bad[1], 0, NULL, true, -1, false, &out, NULL, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_embedding_bag(w, idx, off, 3, NULL, false, -1, false, &out, NULL, NULL, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_embedding_bag(w, idx, off, EM_BAG_MAX, idx, false, -1, false, &out, NULL, NULL, NULL), EM_ERR_NOT_IMPLEMENTED);
    em_tensor *wi = em_zeros(SHAPE(10, 3), EM_I64), *ps = em_zeros(SHAPE(3), EM_F16);
    CHECK_ERR(em_embedding_bag(wi, idx, off, 0, NULL, false, -1, false, &out, NULL, NULL, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_embedding_bag(w, idx, off, 0, ps, false, -1, false, &out, NULL, NULL, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_embedding_bag(w, idx, off, 0, NULL, false, 10, false, &out, NULL, NULL, NULL), EM_ERR_INDEX);
    RELEASE(w, idx, off, y, o2b, bad[0], bad[1], bad[2], bad[3], wi, ps);
}

TEST(nnact_pdist)
{
    for (int d = 0; d < 2; d++) {
        em_tensor *x = tlayout(floats[d], SHAPE(4, 3), 1, -1, 1);
        const double ps[] = {0, 1, 2, 3.5, INFINITY};
        for (int k = 0; k < 5; k++) {
            em_tensor *y = em_pdist(x, ps[k]);
            double want[6];
            int m = 0;
            for (int i = 0; i < 4; i++)
                for (int j = i + 1; j < 4; j++, m++) {
                    double acc = 0;
                    for (int c = 0; c < 3; c++) {
                        double v = fabs(tval(x, i * 3 + c) - tval(x, j * 3 + c));
                        acc = ps[k] == 0 ? acc + (v != 0) : isinf(ps[k]) ? fmax(acc, v) : acc + pow(v, ps[k]);
                    }
                    want[m] = ps[k] == 0 || isinf(ps[k]) ? acc : pow(acc, 1 / ps[k]);
                }
            CHECK(y && tshape_is(y, SHAPE(6)) && tclose(y, want, trtol(floats[d]), 1e-6));
            em_release(y);
        }
        em_release(x);
    }
    em_tensor *one = em_zeros(SHAPE(1, 3), EM_F32), *y = em_pdist(one, 2), *x3 = em_zeros(SHAPE(2, 2, 2), EM_F32);
    em_tensor *xi = em_zeros(SHAPE(2, 2), EM_I64);
    CHECK(y && tshape_is(y, SHAPE(0)));
    CHECK_ERR(em_pdist(x3, 2), EM_ERR_SHAPE);
    CHECK_ERR(em_pdist(one, -1), EM_ERR_SHAPE);
    CHECK_ERR(em_pdist(xi, 2), EM_ERR_DTYPE);
    RELEASE(one, y, x3, xi);
}
