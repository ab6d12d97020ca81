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
