/* The rnn family: fused gates against a naive double reference (float32 and
 * float64, row-strided and non-contiguous operands), their backward ops
 * against the chain rule written out, the cells against products + gates,
 * the sequence layer against a loop of cells (padded, packed with unequal
 * lengths, reverse, LSTM projection), and argument errors. */
#include "test.h"

static double sig(double x) { return 1 / (1 + exp(-x)); }

/* Reference gates of one element: LSTM (i, f, g, o), GRU (r, z, n), RNN. */
static void lstm_ref(const double *ig, const double *hg, const double *cx, int64_t B, int64_t H, double *hy,
                     double *cy)
{
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            const double *p = ig + b * 4 * H, *q = hg + b * 4 * H;
            double i = sig(p[j] + q[j]), f = sig(p[H + j] + q[H + j]);
            double g = tanh(p[2 * H + j] + q[2 * H + j]), o = sig(p[3 * H + j] + q[3 * H + j]);
            double c = f * cx[b * H + j] + i * g;
            cy[b * H + j] = c, hy[b * H + j] = o * tanh(c);
        }
}
static void gru_ref(const double *ig, const double *hg, const double *hx, int64_t B, int64_t H, double *hy)
{
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            const double *p = ig + b * 3 * H, *q = hg + b * 3 * H;
            double r = sig(p[j] + q[j]), z = sig(p[H + j] + q[H + j]);
            double n = tanh(p[2 * H + j] + r * q[2 * H + j]);
            hy[b * H + j] = (1 - z) * n + z * hx[b * H + j];
        }
}

/* A (rows, cols) tensor in one of three layouts: contiguous, every other
 * element (non-contiguous), or rows of a wider buffer (row stride > cols). */
static em_tensor *operand(em_dtype dt, int64_t rows, int64_t cols, int layout)
{
    if (layout < 2) return tlayout(dt, SHAPE(rows, cols), layout, -2, 2);
    em_tensor *wide = trand(dt, SHAPE(rows, cols + 3), -2, 2), *r = em_narrow(wide, 1, 1, cols);
    em_release(wide);
    return r;
}

TEST(rnn_lstm_gates_values)
{
    const int64_t B = 3, H = 5;
    for (int dti = 0; dti < 2; dti++)
        for (int layout = 0; layout < 3; layout++) {
            em_dtype dt = dti ? EM_F64 : EM_F32;
            em_tensor *ig = operand(dt, B, 4 * H, layout), *hg = operand(dt, B, 4 * H, (layout + 1) % 3);
            em_tensor *cx = operand(dt, B, H, layout), *hy = NULL, *cy = NULL;
            CHECK(em_lstm_gates(ig, hg, cx, &hy, &cy) == EM_OK);
            double *vi = tvals(ig), *vh = tvals(hg), *vc = tvals(cx), rh[15], rc[15];
            lstm_ref(vi, vh, vc, B, H, rh, rc);
            bool ok = tclose(hy, rh, trtol(dt), 1e-6) && tclose(cy, rc, trtol(dt), 1e-6) &&
                      em_dtype_of(hy) == dt && tshape_is(cy, SHAPE(B, H));
            free(vi), free(vh), free(vc);
            RELEASE(ig, hg, cx, hy, cy);
            CHECK(ok);
        }
    COVER(EM_OP_lstm_gates);
}

TEST(rnn_gru_and_elman_gates_values)
{
    const int64_t B = 4, H = 3;
    for (int dti = 0; dti < 2; dti++)
        for (int layout = 0; layout < 3; layout++) {
            em_dtype dt = dti ? EM_F64 : EM_F32;
            em_tensor *ig = operand(dt, B, 3 * H, layout), *hg = operand(dt, B, 3 * H, 2 - layout);
            em_tensor *hx = operand(dt, B, H, layout), *hy = em_gru_gates(ig, hg, hx);
            em_tensor *i1 = em_narrow(ig, 1, 0, H), *h1 = em_narrow(hg, 1, H, H);
            em_tensor *th = em_rnn_gates(i1, h1, false), *re = em_rnn_gates(i1, h1, true);
            CHECK(hy && th && re);
            double *vi = tvals(ig), *vh = tvals(hg), *vx = tvals(hx), *a = tvals(i1), *b = tvals(h1);
            double r[12], rt[12], rr[12];
            gru_ref(vi, vh, vx, B, H, r);
            for (int k = 0; k < B * H; k++) rt[k] = tanh(a[k] + b[k]), rr[k] = fmax(a[k] + b[k], 0);
            bool ok = tclose(hy, r, trtol(dt), 1e-6) && tclose(th, rt, trtol(dt), 1e-6) &&
                      tclose(re, rr, trtol(dt), 1e-6);
            free(vi), free(vh), free(vx), free(a), free(b);
            RELEASE(ig, hg, hx, hy, i1, h1, th, re);
            CHECK(ok);
        }
    COVER(EM_OP_gru_gates, EM_OP_rnn_gates);
}

/* The backward ops against central differences of the reference gates, in
 * float64 (their formulas are also gradchecked in test_autograd_rnn.c). */
TEST(rnn_gates_backward_ops)
{
    const int64_t B = 2, H = 3;
    em_tensor *ig = trand(EM_F64, SHAPE(B, 4 * H), -2, 2), *hg = trand(EM_F64, SHAPE(B, 4 * H), -2, 2);
    em_tensor *cx = trand(EM_F64, SHAPE(B, H), -2, 2), *ghy = trand(EM_F64, SHAPE(B, H), -1, 1);
    em_tensor *gcy = trand(EM_F64, SHAPE(B, H), -1, 1), *dg = NULL, *dcx = NULL;
    CHECK(em_lstm_gates_backward(ghy, gcy, ig, hg, cx, &dg, &dcx) == EM_OK);
    double *vi = tvals(ig), *vh = tvals(hg), *vc = tvals(cx), *wh = tvals(ghy), *wc = tvals(gcy);
    double want_g[24], want_c[6], hy[6], cy[6], eps = 1e-6;
    /* L = sum(ghy * hy + gcy * cy); d/d igates == d/d gates */
    for (int k = 0; k < B * 4 * H + B * H; k++) {
        double *v = k < B * 4 * H ? &vi[k] : &vc[k - B * 4 * H], keep = *v, l[2];
        for (int s = 0; s < 2; s++) {
            *v = keep + (s ? -eps : eps);
            lstm_ref(vi, vh, vc, B, H, hy, cy);
            l[s] = 0;
            for (int j = 0; j < B * H; j++) l[s] += wh[j] * hy[j] + wc[j] * cy[j];
        }
        *v = keep;
        *(k < B * 4 * H ? &want_g[k] : &want_c[k - B * 4 * H]) = (l[0] - l[1]) / (2 * eps);
    }
    bool ok = tclose(dg, want_g, 1e-6, 1e-8) && tclose(dcx, want_c, 1e-6, 1e-8);
    free(vi), free(vh), free(vc), free(wh), free(wc);
    RELEASE(ig, hg, cx, ghy, gcy, dg, dcx);
    CHECK(ok);

    /* gru: grad_igates, grad_hgates, grad_hx */
    em_tensor *gi = trand(EM_F64, SHAPE(B, 3 * H), -2, 2), *gh = trand(EM_F64, SHAPE(B, 3 * H), -2, 2);
    em_tensor *hx = trand(EM_F64, SHAPE(B, H), -2, 2), *g = trand(EM_F64, SHAPE(B, H), -1, 1);
    em_tensor *di = NULL, *dh = NULL, *dx = NULL;
    CHECK(em_gru_gates_backward(g, gi, gh, hx, &di, &dh, &dx) == EM_OK);
    double *a = tvals(gi), *b = tvals(gh), *x = tvals(hx), *w = tvals(g), want[3][18], out[6];
    for (int which = 0; which < 3; which++)
        for (int k = 0; k < (which < 2 ? B * 3 * H : B * H); k++) {
            double *v = which == 0 ? &a[k] : which == 1 ? &b[k] : &x[k], keep = *v, l[2];
            for (int s = 0; s < 2; s++) {
                *v = keep + (s ? -eps : eps);
                gru_ref(a, b, x, B, H, out);
                l[s] = 0;
                for (int j = 0; j < B * H; j++) l[s] += w[j] * out[j];
            }
            *v = keep;
            want[which][k] = (l[0] - l[1]) / (2 * eps);
        }
    ok = tclose(di, want[0], 1e-6, 1e-8) && tclose(dh, want[1], 1e-6, 1e-8) && tclose(dx, want[2], 1e-6, 1e-8);
    free(a), free(b), free(x), free(w);
    RELEASE(gi, gh, hx, g, di, dh, dx);
    CHECK(ok);

    /* rnn: from the output y: g (1 - y^2), g [y > 0] */
    em_tensor *y = tt(EM_F32, SHAPE(1, 3), (const double[]){-0.5, 0, 0.25});
    em_tensor *gy = tt(EM_F32, SHAPE(1, 3), (const double[]){2, 3, 4});
    em_tensor *dt = em_rnn_gates_backward(gy, y, false), *dr = em_rnn_gates_backward(gy, y, true);
    ok = dt && dr && tclose(dt, (const double[]){1.5, 3, 3.75}, 1e-6, 0) && tclose(dr, (const double[]){0, 0, 4}, 0, 0);
    RELEASE(y, gy, dt, dr);
    CHECK(ok);
    COVER(EM_OP_lstm_gates_backward, EM_OP_gru_gates_backward, EM_OP_rnn_gates_backward);
}

/* The cells: x W_ih^T + b_ih and h W_hh^T + b_hh, then the gates. */
TEST(rnn_cells_match_products_and_gates)
{
    const int64_t B = 3, I = 4, H = 5;
    for (int bias = 0; bias < 2; bias++) {
        em_tensor *x = trand(EM_F64, SHAPE(B, I), -1, 1), *h = trand(EM_F64, SHAPE(B, H), -1, 1);
        em_tensor *c = trand(EM_F64, SHAPE(B, H), -1, 1);
        for (int G = 1; G <= 4; G++) {
            if (G == 2) continue;
            em_tensor *wi = trand(EM_F64, SHAPE(G * H, I), -1, 1), *wh = trand(EM_F64, SHAPE(G * H, H), -1, 1);
            em_tensor *bi = bias ? trand(EM_F64, SHAPE(G * H), -1, 1) : NULL;
            em_tensor *bh = bias ? trand(EM_F64, SHAPE(G * H), -1, 1) : NULL;
            em_tensor *wit = em_t(wi), *wht = em_t(wh), *ig = em_mm(x, wit), *hg = em_mm(h, wht);
            if (bias) CHECK(em_add_(ig, bi, 1) == EM_OK && em_add_(hg, bh, 1) == EM_OK);
            em_tensor *got[2] = {0}, *want[2] = {0};
            if (G == 4) {
                CHECK(em_lstm_cell(x, h, c, wi, wh, bi, bh, &got[0], &got[1]) == EM_OK);
                CHECK(em_lstm_gates(ig, hg, c, &want[0], &want[1]) == EM_OK);
            } else if (G == 3) {
                got[0] = em_gru_cell(x, h, wi, wh, bi, bh), want[0] = em_gru_gates(ig, hg, h);
            } else {
                got[0] = em_rnn_tanh_cell(x, h, wi, wh, bi, bh), want[0] = em_rnn_gates(ig, hg, false);
                got[1] = em_rnn_relu_cell(x, h, wi, wh, bi, bh), want[1] = em_rnn_gates(ig, hg, true);
            }
            bool ok = true;
            for (int k = 0; k < 2 && want[k]; k++) {
                double *v = tvals(want[k]);
                ok &= got[k] && tclose(got[k], v, 1e-12, 1e-12);
                free(v);
            }
            RELEASE(wi, wh, bi, bh, wit, wht, ig, hg, got[0], got[1], want[0], want[1]);
            CHECK(ok);
        }
        RELEASE(x, h, c);
    }
    COVER(EM_OP_lstm_cell, EM_OP_gru_cell, EM_OP_rnn_tanh_cell, EM_OP_rnn_relu_cell);
}

TEST(rnn_cell_errors)
{
    const int64_t B = 3, I = 4, H = 5;
    em_tensor *x = trand(EM_F32, SHAPE(B, I), -1, 1), *h = trand(EM_F32, SHAPE(B, H), -1, 1);
    em_tensor *wi = trand(EM_F32, SHAPE(4 * H, I), -1, 1), *wh = trand(EM_F32, SHAPE(4 * H, H), -1, 1);
    em_tensor *x7 = trand(EM_F32, SHAPE(B, 7), -1, 1), *h2 = trand(EM_F32, SHAPE(2, H), -1, 1);
    em_tensor *h6 = trand(EM_F32, SHAPE(B, 6), -1, 1), *x1 = trand(EM_F32, SHAPE(I), -1, 1);
    em_tensor *xd = trand(EM_F64, SHAPE(B, I), -1, 1), *xi = tints(EM_I32, SHAPE(B, I), 0, 3);
    em_tensor *b7 = trand(EM_F32, SHAPE(7), -1, 1), *hy = NULL, *cy = NULL;
    CHECK_ERR(em_lstm_cell(x7, h, h, wi, wh, NULL, NULL, &hy, &cy), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "input has inconsistent input_size: got 7 expected 4"));
    CHECK_ERR(em_lstm_cell(x, h2, h, wi, wh, NULL, NULL, &hy, &cy), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "Input batch size 3 doesn't match hidden0 batch size 2"));
    CHECK_ERR(em_lstm_cell(x, h, h6, wi, wh, NULL, NULL, &hy, &cy), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "hidden0 has inconsistent hidden_size: got 6, expected 5"));
    CHECK_ERR(em_lstm_cell(x1, h, h, wi, wh, NULL, NULL, &hy, &cy), EM_ERR_INDEX);
    CHECK_ERR(em_lstm_cell(xd, h, h, wi, wh, NULL, NULL, &hy, &cy), EM_ERR_DTYPE);
    CHECK_ERR(em_lstm_cell(x, h, h, wi, wh, b7, NULL, &hy, &cy), EM_ERR_SHAPE);
    CHECK_ERR(em_lstm_cell(x, h, NULL, wi, wh, NULL, NULL, &hy, &cy), EM_ERR_VALUE);
    CHECK_ERR(em_gru_cell(x, h, wi, wh, NULL, NULL), EM_ERR_SHAPE); /* 4H rows for a GRU */
    CHECK_ERR(em_rnn_tanh_cell(x, NULL, wi, wh, NULL, NULL), EM_ERR_VALUE);
    CHECK(hy == NULL && cy == NULL);
    /* the gate ops */
    em_tensor *ig = trand(EM_F32, SHAPE(B, 4 * H), -1, 1), *igi = tints(EM_I32, SHAPE(B, 4 * H), 0, 2);
    CHECK_ERR(em_lstm_gates(ig, ig, h6, &hy, &cy), EM_ERR_SHAPE);
    CHECK_ERR(em_lstm_gates(igi, igi, xi, &hy, &cy), EM_ERR_DTYPE);
    CHECK(strstr(em_last_error(), "not implemented for 'Int'"));
    CHECK_ERR(em_gru_gates(ig, ig, h), EM_ERR_SHAPE);
    CHECK_ERR(em_rnn_gates(x1, x1, false), EM_ERR_SHAPE);
    CHECK_ERR(em_rnn_gates(x, xd, false), EM_ERR_DTYPE);
    RELEASE(x, h, wi, wh, x7, h2, h6, x1, xd, xi, b7, ig, igi);
}

/* ---- the sequence layer -------------------------------------------------- */
typedef struct seq_case {
    em_rnn_mode mode;
    bool packed, reverse, proj, bias;
} seq_case;

/* The layer's reference: a loop of cells, one sequence (batch row) at a
 * time over its own length, in float64. */
static bool layer_matches_cells(const seq_case *sc)
{
    const int64_t T = 4, B = 3, I = 3, H = 4, P = sc->proj ? 2 : H, Ho = P;
    const int G = sc->mode == EM_RNN_LSTM ? 4 : sc->mode == EM_RNN_GRU ? 3 : 1;
    const int64_t len[3] = {4, sc->packed ? 2 : 4, sc->packed ? 1 : 4}, bs[4] = {3, sc->packed ? 2 : 3, 1 + !sc->packed * 2, 1 + !sc->packed * 2};
    em_tensor *xp = trand(EM_F64, SHAPE(T, B, I), -1, 1); /* padded (T, B, I) */
    em_tensor *hx = trand(EM_F64, SHAPE(B, Ho), -1, 1), *cx = trand(EM_F64, SHAPE(B, H), -1, 1);
    em_rnn_weights w = {trand(EM_F64, SHAPE(G * H, I), -1, 1), trand(EM_F64, SHAPE(G * H, P), -1, 1),
                        sc->bias ? trand(EM_F64, SHAPE(G * H), -1, 1) : NULL,
                        sc->bias ? trand(EM_F64, SHAPE(G * H), -1, 1) : NULL,
                        sc->proj ? trand(EM_F64, SHAPE(P, H), -1, 1) : NULL};
    /* packed data: step t's rows are the sequences longer than t */
    em_tensor *rows[12];
    int64_t n = 0;
    for (int64_t t = 0; t < T; t++)
        for (int64_t b = 0; b < bs[t]; b++) {
            em_tensor *xt = em_select(xp, 0, t);
            rows[n++] = em_narrow(xt, 0, b, 1);
            em_release(xt);
        }
    em_tensor *x = sc->packed ? em_cat((int)n, (const em_tensor *const *)rows, 0) : em_retain(xp);
    em_tensor *out = NULL, *hy = NULL, *cy = NULL;
    bool lstm = sc->mode == EM_RNN_LSTM, ok = em_rnn_layer(sc->mode, x, T, sc->packed ? bs : NULL, hx,
                                                          lstm ? cx : NULL, &w, sc->reverse, &out, &hy, &cy) == EM_OK;
    for (int64_t b = 0; b < B && ok; b++) {
        em_tensor *h = em_narrow(hx, 0, b, 1), *c = em_narrow(cx, 0, b, 1);
        for (int64_t s = 0; s < len[b] && ok; s++) {
            int64_t t = sc->reverse ? len[b] - 1 - s : s, r = 0;
            em_tensor *xt = em_select(xp, 0, t), *xb = em_narrow(xt, 0, b, 1), *hn = NULL, *cn = NULL;
            if (lstm && !w.w_hr) {
                ok &= em_lstm_cell(xb, h, c, w.w_ih, w.w_hh, w.b_ih, w.b_hh, &hn, &cn) == EM_OK;
            } else if (lstm) { /* the cell has no projection: its parts */
                em_tensor *wi = em_t(w.w_ih), *wh = em_t(w.w_hh), *wr = em_t(w.w_hr);
                em_tensor *ig = em_mm(xb, wi), *hg = em_mm(h, wh), *hp = NULL;
                if (w.b_ih) ok &= em_add_(ig, w.b_ih, 1) == EM_OK && em_add_(hg, w.b_hh, 1) == EM_OK;
                ok &= em_lstm_gates(ig, hg, c, &hp, &cn) == EM_OK;
                hn = ok ? em_mm(hp, wr) : NULL;
                RELEASE(wi, wh, wr, ig, hg, hp);
            } else {
                hn = sc->mode == EM_RNN_GRU ? em_gru_cell(xb, h, w.w_ih, w.w_hh, w.b_ih, w.b_hh)
                   : sc->mode == EM_RNN_TANH ? em_rnn_tanh_cell(xb, h, w.w_ih, w.w_hh, w.b_ih, w.b_hh)
                                             : em_rnn_relu_cell(xb, h, w.w_ih, w.w_hh, w.b_ih, w.b_hh);
            }
            ok &= hn != NULL;
            /* the layer's output row of (t, b) */
            for (int64_t u = 0; u < t; u++) r += bs[u];
            em_tensor *o = !ok ? NULL : sc->packed ? em_narrow(out, 0, r + b, 1) : em_select(out, 0, t);
            em_tensor *ob = o && !sc->packed ? em_narrow(o, 0, b, 1) : em_retain(o);
            double *v = ok ? tvals(hn) : NULL;
            ok &= ob && tclose(ob, v, 1e-12, 1e-12);
            free(v);
            RELEASE(xt, xb, o, ob, h, c);
            h = hn, c = cn;
        }
        if (!ok) {
            RELEASE(h, c);
            break;
        }
        em_tensor *hb = em_narrow(hy, 0, b, 1);
        double *v = tvals(h);
        ok &= hb && tclose(hb, v, 1e-12, 1e-12);
        free(v);
        if (lstm) {
            em_tensor *cb = em_narrow(cy, 0, b, 1);
            double *vc = tvals(c);
            ok &= cb && tclose(cb, vc, 1e-12, 1e-12);
            free(vc);
            em_release(cb);
        }
        RELEASE(hb, h, c);
    }
    for (int64_t k = 0; k < n; k++) em_release(rows[k]);
    RELEASE(xp, hx, cx, x, out, hy, cy, (em_tensor *)w.w_ih, (em_tensor *)w.w_hh, (em_tensor *)w.b_ih,
            (em_tensor *)w.b_hh, (em_tensor *)w.w_hr);
    return ok;
}

TEST(rnn_layer_matches_a_loop_of_cells)
{
    static const seq_case cases[] = {
        {EM_RNN_LSTM, false, false, false, true}, {EM_RNN_LSTM, true, false, false, true},
        {EM_RNN_LSTM, true, true, false, true},   {EM_RNN_LSTM, true, true, true, false},
        {EM_RNN_LSTM, false, true, true, true},   {EM_RNN_GRU, false, false, false, true},
        {EM_RNN_GRU, true, true, false, false},   {EM_RNN_GRU, true, false, false, true},
        {EM_RNN_TANH, true, false, false, true},  {EM_RNN_TANH, false, true, false, false},
        {EM_RNN_RELU, true, true, false, true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        CHECK_MSG(layer_matches_cells(&cases[k]), "case %zu: mode %d packed %d reverse %d proj %d bias %d [%s]", k,
                  cases[k].mode, cases[k].packed, cases[k].reverse, cases[k].proj, cases[k].bias, em_last_error());
    COVER(EM_OP_rnn_layer);
}

TEST(rnn_layer_errors)
{
    const int64_t H = 2;
    em_tensor *x = trand(EM_F32, SHAPE(3, 2, 4), -1, 1), *h = trand(EM_F32, SHAPE(2, H), -1, 1);
    em_tensor *h3 = trand(EM_F32, SHAPE(3, H), -1, 1), *x2 = trand(EM_F32, SHAPE(5, 4), -1, 1);
    em_rnn_weights w = {trand(EM_F32, SHAPE(H, 4), -1, 1), trand(EM_F32, SHAPE(H, H), -1, 1), NULL, NULL, NULL};
    em_tensor *out = NULL, *hy = NULL;
    CHECK_ERR(em_rnn_layer(EM_RNN_TANH, x, 0, NULL, h3, NULL, &w, false, &out, &hy, NULL), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "Input batch size 2 doesn't match hidden0 batch size 3"));
    CHECK_ERR(em_rnn_layer(EM_RNN_TANH, x2, 2, (const int64_t[]){2, 2}, h, NULL, &w, false, &out, &hy, NULL),
              EM_ERR_SHAPE); /* 5 rows, batch sizes sum to 4 */
    CHECK_ERR(em_rnn_layer(EM_RNN_TANH, x2, 2, (const int64_t[]){2, 3}, h, NULL, &w, false, &out, &hy, NULL),
              EM_ERR_VALUE); /* increasing */
    CHECK_ERR(em_rnn_layer(EM_RNN_LSTM, x, 0, NULL, h, NULL, &w, false, &out, &hy, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_rnn_layer(EM_RNN_TANH, x2, 0, NULL, h, NULL, &w, false, &out, &hy, NULL), EM_ERR_SHAPE);
    CHECK(out == NULL && hy == NULL);
    RELEASE(x, h, h3, x2, (em_tensor *)w.w_ih, (em_tensor *)w.w_hh);
}
