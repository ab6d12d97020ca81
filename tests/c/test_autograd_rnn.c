/* Autograd of the rnn family: float64 gradchecks of the fused gate ops (on
 * row-strided views too), the cells (every input and weight, with and
 * without biases) and the sequence layer (packed, reverse, projection); the
 * second derivative of the Elman gates; create_graph through the LSTM and
 * GRU gates and any use of the backward ops refuse (NotImplemented). */
#include "test.h"

/* hy and cy side by side: one output checks both gradients */
static em_tensor *f_lstm_gates(em_tensor *const *in, const void *ctx)
{
    em_tensor *hy = NULL, *cy = NULL;
    if (em_lstm_gates(in[0], in[1], in[2], &hy, &cy)) return NULL;
    em_tensor *r = em_cat(2, (const em_tensor *const[]){hy, cy}, 1);
    RELEASE(hy, cy);
    return r;
}
/* igates as a row-strided view (every other column block) */
static em_tensor *f_lstm_gates_view(em_tensor *const *in, const void *ctx)
{
    em_tensor *ig = em_narrow(in[0], 1, 2, 8), *r = NULL;
    if (ig) {
        em_tensor *args[3] = {ig, in[1], in[2]};
        r = f_lstm_gates(args, ctx);
    }
    em_release(ig);
    return r;
}
static em_tensor *f_gru_gates(em_tensor *const *in, const void *ctx) { return em_gru_gates(in[0], in[1], in[2]); }
static em_tensor *f_rnn_gates(em_tensor *const *in, const void *ctx)
{
    return em_rnn_gates(in[0], in[1], ctx != NULL);
}

TEST(gradcheck_rnn_gates)
{
    em_tensor *ig = leaf(SHAPE(3, 8), -2, 2), *hg = leaf(SHAPE(3, 8), -2, 2), *cx = leaf(SHAPE(3, 2), -2, 2);
    CHECK(gradcheck("lstm_gates", f_lstm_gates, 3, (em_tensor *[]){ig, hg, cx}, NULL));
    em_tensor *wide = leaf(SHAPE(3, 11), -2, 2);
    CHECK(gradcheck("lstm_gates of a view", f_lstm_gates_view, 3, (em_tensor *[]){wide, hg, cx}, NULL));
    em_tensor *gi = leaf(SHAPE(2, 9), -2, 2), *gh = leaf(SHAPE(2, 9), -2, 2), *hx = leaf(SHAPE(2, 3), -2, 2);
    CHECK(gradcheck("gru_gates", f_gru_gates, 3, (em_tensor *[]){gi, gh, hx}, NULL));
    /* relu away from its kink: the values are at least 0.1 from zero */
    em_tensor *a = leaf(SHAPE(2, 3), 0.1, 1), *b = leaf(SHAPE(2, 3), -2, 2);
    CHECK(gradcheck("rnn_gates tanh", f_rnn_gates, 2, (em_tensor *[]){a, b}, NULL));
    em_tensor *a2 = leaf(SHAPE(2, 3), 0.1, 1), *neg = leaf(SHAPE(2, 3), -1, -0.1);
    CHECK(gradcheck("rnn_gates relu", f_rnn_gates, 2, (em_tensor *[]){a, a2}, (void *)1));
    CHECK(gradcheck("rnn_gates relu (off)", f_rnn_gates, 2, (em_tensor *[]){neg, neg}, (void *)1));
    CHECK(gradgradcheck("rnn_gates tanh", f_rnn_gates, 2, (em_tensor *[]){a, b}, NULL));
    RELEASE(ig, hg, cx, wide, gi, gh, hx, a, b, a2, neg);
    GRAD_COVER(EM_OP_lstm_gates, EM_OP_gru_gates, EM_OP_rnn_gates);
}

/* cells: in = input, hx, (cx), w_ih, w_hh, b_ih, b_hh (biases may be left out) */
typedef struct cell_ctx {
    int mode; /* em_rnn_mode */
    bool bias;
} cell_ctx;
static em_tensor *f_cell(em_tensor *const *in, const void *p)
{
    const cell_ctx *cc = p;
    if (cc->mode == EM_RNN_LSTM) {
        em_tensor *hy = NULL, *cy = NULL;
        if (em_lstm_cell(in[0], in[1], in[2], in[3], in[4], cc->bias ? in[5] : NULL, cc->bias ? in[6] : NULL, &hy,
                         &cy))
            return NULL;
        em_tensor *r = em_cat(2, (const em_tensor *const[]){hy, cy}, 1);
        RELEASE(hy, cy);
        return r;
    }
    const em_tensor *bi = cc->bias ? in[4] : NULL, *bh = cc->bias ? in[5] : NULL;
    return cc->mode == EM_RNN_GRU ? em_gru_cell(in[0], in[1], in[2], in[3], bi, bh)
         : cc->mode == EM_RNN_TANH ? em_rnn_tanh_cell(in[0], in[1], in[2], in[3], bi, bh)
                                   : em_rnn_relu_cell(in[0], in[1], in[2], in[3], bi, bh);
}

TEST(gradcheck_rnn_cells)
{
    const int64_t B = 2, I = 3, H = 2;
    for (int mode = EM_RNN_TANH; mode <= EM_RNN_GRU; mode++)
        for (int bias = 0; bias < 2; bias++) {
            const int G = mode == EM_RNN_LSTM ? 4 : mode == EM_RNN_GRU ? 3 : 1;
            em_tensor *in[7] = {0};
            int k = 0;
            in[k++] = leaf(SHAPE(B, I), -1, 1);
            in[k++] = leaf(SHAPE(B, H), -1, 1);
            if (mode == EM_RNN_LSTM) in[k++] = leaf(SHAPE(B, H), -1, 1);
            in[k++] = leaf(SHAPE(G * H, I), -1, 1);
            in[k++] = leaf(SHAPE(G * H, H), -1, 1);
            if (bias) in[k++] = leaf(SHAPE(G * H), -1, 1), in[k++] = leaf(SHAPE(G * H), -1, 1);
            cell_ctx cc = {mode, bias};
            bool ok = gradcheck("cell", f_cell, k, in, &cc);
            for (int i = 0; i < k; i++) em_release(in[i]);
            CHECK_MSG(ok, "cell mode %d bias %d", mode, bias);
        }
    GRAD_COVER(EM_OP_lstm_cell, EM_OP_gru_cell, EM_OP_rnn_tanh_cell, EM_OP_rnn_relu_cell);
}

/* the layer over a packed sequence of lengths 3, 2, 1 (batch sizes 3, 2, 1):
 * in = x (6, I), hx, cx, w_ih, w_hh, b_ih, b_hh (+ w_hr); output and final
 * states flattened side by side */
typedef struct layer_ctx {
    int mode;
    bool reverse, proj;
} layer_ctx;
static em_tensor *f_layer(em_tensor *const *in, const void *p)
{
    const layer_ctx *lc = p;
    bool lstm = lc->mode == EM_RNN_LSTM;
    em_rnn_weights w = {in[3], in[4], in[5], in[6], lc->proj ? in[7] : NULL};
    em_tensor *out = NULL, *hy = NULL, *cy = NULL;
    if (em_rnn_layer(lc->mode, in[0], 3, (const int64_t[]){3, 2, 1}, in[1], lstm ? in[2] : NULL, &w, lc->reverse,
                     &out, &hy, &cy))
        return NULL;
    em_tensor *fo = em_flatten(out, 0, -1), *fh = em_flatten(hy, 0, -1), *fc = cy ? em_flatten(cy, 0, -1) : NULL;
    em_tensor *r = em_cat(fc ? 3 : 2, (const em_tensor *const[]){fo, fh, fc}, 0);
    RELEASE(out, hy, cy, fo, fh, fc);
    return r;
}

TEST(gradcheck_rnn_layer)
{
    static const layer_ctx cases[] = {
        {EM_RNN_LSTM, false, false}, {EM_RNN_LSTM, true, true}, {EM_RNN_GRU, true, false}, {EM_RNN_TANH, false, false},
    };
    const int64_t I = 2, H = 3, P = 2;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const layer_ctx *lc = &cases[c];
        const int G = lc->mode == EM_RNN_LSTM ? 4 : lc->mode == EM_RNN_GRU ? 3 : 1;
        const int64_t Ho = lc->proj ? P : H;
        em_tensor *in[8] = {leaf(SHAPE(6, I), -1, 1), leaf(SHAPE(3, Ho), -1, 1), leaf(SHAPE(3, H), -1, 1),
                            leaf(SHAPE(G * H, I), -1, 1), leaf(SHAPE(G * H, Ho), -1, 1), leaf(SHAPE(G * H), -1, 1),
                            leaf(SHAPE(G * H), -1, 1), lc->proj ? leaf(SHAPE(P, H), -1, 1) : NULL};
        bool ok = gradcheck("rnn_layer", f_layer, lc->proj ? 8 : 7, in, lc);
        for (int i = 0; i < 8; i++) em_release(in[i]);
        CHECK_MSG(ok, "layer case %zu", c);
    }
    GRAD_COVER(EM_OP_rnn_layer);
}

/* The backward ops refuse to be differentiated: create_graph through the
 * LSTM/GRU gates records them, and the second backward fails loudly. */
TEST(rnn_double_backward_refused)
{
    em_tensor *ig = leaf(SHAPE(2, 4), -1, 1), *hg = leaf(SHAPE(2, 4), -1, 1), *cx = leaf(SHAPE(2, 1), -1, 1);
    em_tensor *hy = NULL, *cy = NULL, *g = NULL;
    CHECK(em_lstm_gates(ig, hg, cx, &hy, &cy) == EM_OK);
    em_tensor *s = em_sum(hy, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_autograd_grad(1, &s, NULL, 1, &ig, true, true, false, &g) == EM_OK);
    em_tensor *gs = em_sum(g, 0, NULL, false, EM_DTYPE_NONE), *gg = NULL;
    CHECK_ERR(em_autograd_grad(1, &gs, NULL, 1, &hg, false, false, false, &gg), EM_ERR_NOT_IMPLEMENTED);
    CHECK(strstr(em_last_error(), "lstm_gates_backward"));
    RELEASE(hy, cy, s, g, gs);

    em_tensor *hx = leaf(SHAPE(2, 1), -1, 1), *gi = leaf(SHAPE(2, 3), -1, 1), *y = em_gru_gates(gi, gi, hx);
    em_tensor *ys = em_sum(y, 0, NULL, false, EM_DTYPE_NONE), *d = NULL;
    CHECK(em_autograd_grad(1, &ys, NULL, 1, &hx, true, true, false, &d) == EM_OK);
    em_tensor *ds = em_sum(d, 0, NULL, false, EM_DTYPE_NONE), *dd = NULL;
    CHECK_ERR(em_autograd_grad(1, &ds, NULL, 1, &gi, false, false, false, &dd), EM_ERR_NOT_IMPLEMENTED);
    RELEASE(hx, gi, y, ys, d, ds);

    /* the rnn backward op called on tensors that require grad */
    em_tensor *gy = leaf(SHAPE(2, 2), -1, 1), *yy = leaf(SHAPE(2, 2), -1, 1), *r = em_rnn_gates_backward(gy, yy, false);
    em_tensor *rs = em_sum(r, 0, NULL, false, EM_DTYPE_NONE);
    CHECK_ERR(em_backward(1, &rs, NULL, false, false, 0, NULL), EM_ERR_NOT_IMPLEMENTED);
    RELEASE(ig, hg, cx, gy, yy, r, rs);
    GRAD_COVER(EM_OP_lstm_gates_backward, EM_OP_gru_gates_backward, EM_OP_rnn_gates_backward);
}

/* ---- the fused recurrence ------------------------------------------------- */
/* em_rnn_recurrence on its own: in = igates (N, G*H), hx, then cx (LSTM),
 * w_hh, then b_hh (GRU) and w_hr (projection); packed over batch sizes 3, 2,
 * 2, 1 or padded over 3 steps of 3; output and final states side by side. */
typedef struct rec_ctx {
    int mode;
    bool packed, reverse, proj, bias;
} rec_ctx;
static const int64_t rec_bs[4] = {3, 2, 2, 1};
static em_tensor *f_recurrence(em_tensor *const *in, const void *p)
{
    const rec_ctx *rc = p;
    const bool lstm = rc->mode == EM_RNN_LSTM, gru = rc->mode == EM_RNN_GRU;
    int k = 2;
    const em_tensor *cx = lstm ? in[k++] : NULL, *w_hh = in[k++];
    const em_tensor *b_hh = gru && rc->bias ? in[k++] : NULL, *w_hr = rc->proj ? in[k++] : NULL;
    em_tensor *out = NULL, *hy = NULL, *cy = NULL;
    if (em_rnn_recurrence(rc->mode, in[0], rc->packed ? 4 : 3, rc->packed ? rec_bs : NULL, in[1], cx, w_hh, b_hh,
                          w_hr, rc->reverse, &out, &hy, &cy, NULL))
        return NULL;
    em_tensor *fo = em_flatten(out, 0, -1), *fh = em_flatten(hy, 0, -1), *fc = cy ? em_flatten(cy, 0, -1) : NULL;
    em_tensor *r = em_cat(fc ? 3 : 2, (const em_tensor *const[]){fo, fh, fc}, 0);
    RELEASE(out, hy, cy, fo, fh, fc);
    return r;
}

TEST(gradcheck_rnn_recurrence)
{
    static const rec_ctx cases[] = {
        {EM_RNN_LSTM, false, false, false, false}, {EM_RNN_LSTM, true, false, false, false},
        {EM_RNN_LSTM, true, true, false, false},   {EM_RNN_LSTM, true, false, true, false},
        {EM_RNN_LSTM, false, true, true, false},   {EM_RNN_GRU, false, false, false, true},
        {EM_RNN_GRU, true, true, false, true},     {EM_RNN_GRU, true, false, false, false},
        {EM_RNN_TANH, false, true, false, false},  {EM_RNN_TANH, true, false, false, false},
        {EM_RNN_RELU, true, true, false, false},   {EM_RNN_RELU, false, false, false, false},
    };
    const int64_t H = 3, P = 2, B = 3;
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const rec_ctx *rc = &cases[ci];
        const int G = rc->mode == EM_RNN_LSTM ? 4 : rc->mode == EM_RNN_GRU ? 3 : 1;
        const int64_t N = rc->packed ? 8 : 9, Ho = rc->proj ? P : H;
        em_tensor *in[6] = {0};
        int k = 0;
        /* relu: pre-activations away from the kink for the finite differences */
        in[k++] = rc->mode == EM_RNN_RELU ? leaf(SHAPE(N, G * H), 0.5, 1.5) : leaf(SHAPE(N, G * H), -1, 1);
        in[k++] = leaf(SHAPE(B, Ho), -1, 1);
        if (rc->mode == EM_RNN_LSTM) in[k++] = leaf(SHAPE(B, H), -1, 1);
        in[k++] = rc->mode == EM_RNN_RELU ? leaf(SHAPE(G * H, Ho), 0, 0.2) : leaf(SHAPE(G * H, Ho), -1, 1);
        if (rc->mode == EM_RNN_GRU && rc->bias) in[k++] = leaf(SHAPE(G * H), -1, 1);
        if (rc->proj) in[k++] = leaf(SHAPE(P, H), -1, 1);
        if (rc->mode == EM_RNN_RELU) { /* a positive hx keeps every pre-activation positive */
            em_release(in[1]);
            in[1] = leaf(SHAPE(B, Ho), 0, 1);
        }
        bool ok = gradcheck("rnn_recurrence", f_recurrence, k, in, rc);
        for (int i = 0; i < k; i++) em_release(in[i]);
        CHECK_MSG(ok, "recurrence case %zu: mode %d packed %d reverse %d proj %d", ci, rc->mode, rc->packed,
                  rc->reverse, rc->proj);
    }
    GRAD_COVER(EM_OP_rnn_recurrence);
}

/* The reference the fused layer replaced: a loop of recorded cells (the
 * gate ops and the products) over a padded (T, B, I) sequence. */
static em_status cells_layer(em_rnn_mode mode, const em_tensor *x, const em_tensor *hx, const em_tensor *cx,
                             const em_rnn_weights *w, bool reverse, em_tensor **out, em_tensor **hy, em_tensor **cy)
{
    const int64_t T = em_size(x, 0);
    em_tensor *h = em_retain((em_tensor *)hx), *c = cx ? em_retain((em_tensor *)cx) : NULL, *outs[8] = {0};
    bool ok = T <= 8;
    for (int64_t s = 0; s < T && ok; s++) {
        const int64_t t = reverse ? T - 1 - s : s;
        em_tensor *xt = em_select(x, 0, t), *hn = NULL, *cn = NULL;
        if (mode == EM_RNN_LSTM) {
            em_tensor *wi = em_t(w->w_ih), *wh = em_t(w->w_hh), *ig = em_mm(xt, wi), *hg = em_mm(h, wh), *hp = NULL;
            if (w->b_ih) ok &= em_add_(ig, w->b_ih, 1) == EM_OK && em_add_(hg, w->b_hh, 1) == EM_OK;
            ok &= em_lstm_gates(ig, hg, c, &hp, &cn) == EM_OK;
            em_tensor *wr = ok && w->w_hr ? em_t(w->w_hr) : NULL;
            hn = !ok ? NULL : wr ? em_mm(hp, wr) : em_retain(hp);
            RELEASE(wi, wh, wr, ig, hg, hp);
        } else {
            hn = mode == EM_RNN_GRU ? em_gru_cell(xt, h, w->w_ih, w->w_hh, w->b_ih, w->b_hh)
               : mode == EM_RNN_TANH ? em_rnn_tanh_cell(xt, h, w->w_ih, w->w_hh, w->b_ih, w->b_hh)
                                     : em_rnn_relu_cell(xt, h, w->w_ih, w->w_hh, w->b_ih, w->b_hh);
        }
        ok &= hn != NULL;
        em_release(xt), em_release(h), em_release(c);
        h = hn, c = cn;
        outs[t] = em_retain(hn);
    }
    *out = ok ? em_stack((int)T, (const em_tensor *const *)outs, 0) : NULL;
    for (int64_t t = 0; t < T && t < 8; t++) em_release(outs[t]);
    *hy = h, *cy = c;
    return *out ? EM_OK : em_error_code();
}

/* sum(out r0) + sum(hy r1) + sum(cy r2) with only the terms in `use`
 * (bits 0, 1, 2): the other outputs get no gradient. */
static em_tensor *weighted_loss(em_tensor *const *ys, em_tensor *const *rs, int use)
{
    em_tensor *loss = NULL;
    for (int k = 0; k < 3; k++) {
        if (!(use >> k & 1) || !ys[k]) continue;
        em_tensor *p = em_mul(ys[k], rs[k]), *s = em_sum(p, 0, NULL, false, EM_DTYPE_NONE);
        em_tensor *l = loss ? em_add(loss, s, 1) : em_retain(s);
        RELEASE(p, s, loss);
        loss = l;
    }
    return loss;
}

/* The fused layer's gradients equal the loop of cells', for every input
 * and weight, also when only some outputs are used (the formula then
 * takes the others' gradients as absent). */
TEST(rnn_layer_gradients_match_the_cells)
{
    typedef struct {
        em_rnn_mode mode;
        bool reverse, proj;
        int use;
    } gcase;
    static const gcase cases[] = {
        {EM_RNN_LSTM, false, false, 7}, {EM_RNN_LSTM, true, true, 7}, {EM_RNN_LSTM, false, false, 2},
        {EM_RNN_LSTM, true, false, 4},  {EM_RNN_LSTM, false, true, 1}, {EM_RNN_GRU, false, false, 7},
        {EM_RNN_GRU, true, false, 2},   {EM_RNN_TANH, true, false, 3}, {EM_RNN_RELU, false, false, 1},
    };
    const int64_t T = 5, B = 3, I = 4, H = 3, P = 2;
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const gcase *gc = &cases[ci];
        const bool lstm = gc->mode == EM_RNN_LSTM;
        const int G = lstm ? 4 : gc->mode == EM_RNN_GRU ? 3 : 1;
        const int64_t Ho = gc->proj ? P : H;
        em_tensor *in[8] = {leaf(SHAPE(T, B, I), -1, 1), leaf(SHAPE(B, Ho), -1, 1), leaf(SHAPE(B, H), -1, 1),
                            leaf(SHAPE(G * H, I), -0.5, 0.5), leaf(SHAPE(G * H, Ho), -0.5, 0.5),
                            leaf(SHAPE(G * H), -1, 1), leaf(SHAPE(G * H), -1, 1),
                            gc->proj ? leaf(SHAPE(P, H), -1, 1) : NULL};
        em_tensor *rs[3] = {trand(EM_F64, SHAPE(T, B, Ho), -1, 1), trand(EM_F64, SHAPE(B, Ho), -1, 1),
                            trand(EM_F64, SHAPE(B, H), -1, 1)};
        em_rnn_weights w = {in[3], in[4], in[5], in[6], in[7]};
        em_tensor *ys[2][3] = {{0}}, *grads[2][8] = {{0}};
        /* x, hx, w_ih, w_hh, b_ih, b_hh, then cx and w_hr where used */
        em_tensor *wrt[8] = {in[0], in[1], in[3], in[4], in[5], in[6]};
        int nw = 6;
        if (lstm) wrt[nw++] = in[2];
        if (gc->proj) wrt[nw++] = in[7];
        bool ok = true;
        for (int v = 0; v < 2 && ok; v++) {
            em_status st = v ? cells_layer(gc->mode, in[0], in[1], lstm ? in[2] : NULL, &w, gc->reverse, &ys[v][0],
                                           &ys[v][1], &ys[v][2])
                             : em_rnn_layer(gc->mode, in[0], 0, NULL, in[1], lstm ? in[2] : NULL, &w, gc->reverse,
                                            &ys[v][0], &ys[v][1], &ys[v][2]);
            em_tensor *loss = st == EM_OK ? weighted_loss(ys[v], rs, gc->use) : NULL;
            ok = loss && em_autograd_grad(1, &loss, NULL, nw, wrt, false, false, true, grads[v]) == EM_OK;
            em_release(loss);
        }
        for (int i = 0; i < nw && ok; i++) {
            if (!grads[0][i] || !grads[1][i]) {
                ok = grads[0][i] == grads[1][i];
                continue;
            }
            double *want = tvals(grads[1][i]);
            ok = tclose(grads[0][i], want, 1e-10, 1e-10);
            free(want);
            if (!ok) fprintf(stderr, "  case %zu: gradient %d differs\n", ci, i);
        }
        CHECK_MSG(ok, "case %zu: mode %d reverse %d proj %d use %d [%s]", ci, gc->mode, gc->reverse, gc->proj, gc->use,
                  em_last_error());
        for (int v = 0; v < 2; v++)
            for (int k = 0; k < 8; k++) em_release(grads[v][k]), em_release(k < 3 ? ys[v][k] : NULL);
        for (int k = 0; k < 8; k++) em_release(in[k]);
        RELEASE(rs[0], rs[1], rs[2]);
    }
}

/* create_graph through the fused layer fails at once, loudly; so does the
 * backward op called on tensors that require grad. */
TEST(rnn_recurrence_double_backward_refused)
{
    em_tensor *x = leaf(SHAPE(2, 2, 3), -1, 1), *hx = leaf(SHAPE(2, 2), -1, 1);
    em_rnn_weights w = {leaf(SHAPE(2, 3), -1, 1), leaf(SHAPE(2, 2), -1, 1), NULL, NULL, NULL};
    em_tensor *out = NULL, *hy = NULL, *g = NULL;
    CHECK(em_rnn_layer(EM_RNN_TANH, x, 0, NULL, hx, NULL, &w, false, &out, &hy, NULL) == EM_OK);
    em_tensor *s = em_sum(out, 0, NULL, false, EM_DTYPE_NONE);
    CHECK_ERR(em_autograd_grad(1, &s, NULL, 1, &x, true, true, false, &g), EM_ERR_NOT_IMPLEMENTED);
    CHECK(strstr(em_last_error(), "rnn_recurrence_backward"));
    CHECK(g == NULL);
    CHECK(em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g) == EM_OK && g);
    em_rnn_grads gr = {0};
    em_tensor *o2 = em_flatten(out, 0, 1);
    CHECK_ERR(em_rnn_recurrence_backward(EM_RNN_TANH, o2, NULL, NULL, o2, NULL, 2, NULL, hx, NULL, w.w_hh, false,
                                         NULL, false, &gr), EM_ERR_NOT_IMPLEMENTED);
    RELEASE(x, hx, (em_tensor *)w.w_ih, (em_tensor *)w.w_hh, out, hy, g, s, o2);
}

TEST(rnn_recurrence_backward_values)
{
    /* the op on its own (no autograd), against the recorded recurrence's
     * gradients: an LSTM with projection over a packed reverse sequence */
    const int64_t H = 3, P = 2, N = 8;
    em_tensor *ig = trand(EM_F64, SHAPE(N, 4 * H), -1, 1), *hx = trand(EM_F64, SHAPE(3, P), -1, 1);
    em_tensor *cx = trand(EM_F64, SHAPE(3, H), -1, 1), *whh = trand(EM_F64, SHAPE(4 * H, P), -1, 1);
    em_tensor *whr = trand(EM_F64, SHAPE(P, H), -1, 1), *go = trand(EM_F64, SHAPE(N, P), -1, 1);
    em_tensor *out = NULL, *hy = NULL, *cy = NULL, *ws = NULL;
    CHECK(em_rnn_recurrence(EM_RNN_LSTM, ig, 4, rec_bs, hx, cx, whh, NULL, whr, true, &out, &hy, &cy, &ws) == EM_OK);
    CHECK(ws && em_size(ws, 0) == N && em_size(ws, 1) == 5 * H);
    em_rnn_grads g = {0};
    CHECK(em_rnn_recurrence_backward(EM_RNN_LSTM, go, NULL, NULL, out, ws, 4, rec_bs, hx, cx, whh, false, whr, true,
                                     &g) == EM_OK);
    CHECK(g.igates && g.hx && g.cx && g.w_hh && g.w_hr && !g.b_hh);
    /* the same through autograd */
    em_tensor *leaves[5] = {em_detach(ig), em_detach(hx), em_detach(cx), em_detach(whh), em_detach(whr)}, *ag[5] = {0};
    for (int k = 0; k < 5; k++) em_set_requires_grad(leaves[k], true);
    em_tensor *o2 = NULL, *h2 = NULL, *c2 = NULL;
    CHECK(em_rnn_recurrence(EM_RNN_LSTM, leaves[0], 4, rec_bs, leaves[1], leaves[2], leaves[3], NULL, leaves[4], true,
                            &o2, &h2, &c2, NULL) == EM_OK);
    CHECK(em_autograd_grad(1, &o2, &go, 5, leaves, false, false, false, ag) == EM_OK);
    em_tensor *mine[5] = {g.igates, g.hx, g.cx, g.w_hh, g.w_hr};
    for (int k = 0; k < 5; k++) {
        double *v = tvals(ag[k]);
        CHECK_MSG(tclose(mine[k], v, 1e-12, 1e-12), "gradient %d", k);
        free(v);
    }
    for (int k = 0; k < 5; k++) em_release(leaves[k]), em_release(ag[k]);
    RELEASE(ig, hx, cx, whh, whr, go, out, hy, cy, ws, o2, h2, c2, g.igates, g.hx, g.cx, g.w_hh, g.w_hr);
    COVER(EM_OP_rnn_recurrence_backward);
}

TEST(rnn_recurrence_errors)
{
    const int64_t H = 2;
    em_tensor *ig = trand(EM_F32, SHAPE(6, 4 * H), -1, 1), *h = trand(EM_F32, SHAPE(3, H), -1, 1);
    em_tensor *whh = trand(EM_F32, SHAPE(4 * H, H), -1, 1), *b = trand(EM_F32, SHAPE(4 * H), -1, 1);
    em_tensor *hd = trand(EM_F64, SHAPE(3, H), -1, 1), *ig5 = trand(EM_F32, SHAPE(5, 4 * H), -1, 1);
    em_tensor *out = NULL, *hy = NULL, *cy = NULL;
    CHECK(em_rnn_recurrence(EM_RNN_LSTM, ig, 2, NULL, h, h, whh, NULL, NULL, false, &out, &hy, &cy, NULL) == EM_OK);
    RELEASE(out, hy, cy);
    out = hy = cy = NULL;
    CHECK_ERR(em_rnn_recurrence(EM_RNN_LSTM, ig, 2, NULL, h, h, whh, b, NULL, false, &out, &hy, &cy, NULL),
              EM_ERR_VALUE); /* b_hh is the GRU's only */
    CHECK_ERR(em_rnn_recurrence(EM_RNN_LSTM, ig, 2, NULL, h, NULL, whh, NULL, NULL, false, &out, &hy, &cy, NULL),
              EM_ERR_VALUE); /* no cx */
    CHECK_ERR(em_rnn_recurrence(EM_RNN_LSTM, ig, 3, NULL, h, h, whh, NULL, NULL, false, &out, &hy, &cy, NULL),
              EM_ERR_SHAPE); /* 6 rows are not 3 steps of 3 */
    CHECK_ERR(em_rnn_recurrence(EM_RNN_LSTM, ig5, 2, (const int64_t[]){3, 3}, h, h, whh, NULL, NULL, false, &out, &hy,
                                &cy, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_rnn_recurrence(EM_RNN_LSTM, ig, 2, (const int64_t[]){2, 4}, h, h, whh, NULL, NULL, false, &out, &hy,
                                &cy, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_rnn_recurrence(EM_RNN_GRU, ig, 2, NULL, h, NULL, whh, NULL, NULL, false, &out, &hy, &cy, NULL),
              EM_ERR_SHAPE); /* 8 rows of w_hh are not 3 * hidden_size */
    CHECK_ERR(em_rnn_recurrence(EM_RNN_LSTM, ig, 2, NULL, hd, hd, whh, NULL, NULL, false, &out, &hy, &cy, NULL),
              EM_ERR_DTYPE);
    CHECK_ERR(em_rnn_recurrence((em_rnn_mode)9, ig, 2, NULL, h, h, whh, NULL, NULL, false, &out, &hy, &cy, NULL),
              EM_ERR_VALUE);
    CHECK(out == NULL && hy == NULL && cy == NULL);
    em_rnn_grads g = {0};
    CHECK_ERR(em_rnn_recurrence_backward(EM_RNN_LSTM, NULL, NULL, NULL, ig, NULL, 2, NULL, h, h, whh, false, NULL,
                                         false, &g), EM_ERR_SHAPE); /* output of G*H columns */
    CHECK(g.igates == NULL);
    RELEASE(ig, h, whh, b, hd, ig5);
}
