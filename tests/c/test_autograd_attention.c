/* Autograd of scaled dot-product attention: float64 gradchecks of the fused
 * op's output and log-sum-exp (through the fused backward op) with masks of
 * each kind, causal, broadcast batch dims, views and several tiles; of the
 * composite attention_weights; second derivatives (the composite path); the
 * backward op's refusal to be recorded. */
#include "test.h"

typedef struct attn_ctx {
    const em_tensor *mask; /* a bool mask (not differentiated) */
    bool causal, lse, view;
    double scale;
    bool float_mask; /* the last input is a float mask */
} attn_ctx;

static em_tensor *f_sdpa(em_tensor *const *in, const void *ctx)
{
    const attn_ctx *c = ctx;
    em_tensor *q = c->view ? em_transpose(in[0], -1, -2) : em_retain(in[0]);
    const em_tensor *mask = c->float_mask ? in[3] : c->mask;
    em_tensor *o = NULL, *lse = NULL;
    if (em_scaled_dot_product_attention_lse(q, in[1], in[2], mask, c->causal, c->scale, &o, &lse)) o = lse = NULL;
    em_release(q);
    em_release(c->lse ? o : lse);
    return c->lse ? lse : o;
}

static em_tensor *f_weights(em_tensor *const *in, const void *ctx)
{
    const attn_ctx *c = ctx;
    return em_attention_weights(in[0], in[1], c->float_mask ? in[2] : c->mask, c->causal, c->scale);
}

typedef struct grad_case {
    const char *name;
    int nin, nd;
    int64_t sizes[4][4];
    attn_ctx ctx;
} grad_case;

TEST(gradcheck_attention)
{
    em_tensor *bm = trand(EM_BOOL, SHAPE(5, 7), 0, 1), *row = em_select(bm, 0, 2);
    em_fill_(row, 0); /* a fully masked row: zero gradients */
    em_tensor *bm_live = em_clone(bm), *col = em_select(bm_live, 1, 0); /* every row attends (finite lse) */
    em_fill_(col, 1);
    em_tensor *bm_tiles = trand(EM_BOOL, SHAPE(2, 1, 70, 140), 0, 1);
    const grad_case cases[] = {
        {"3-d, L != S, E != Ev", 3, 3, {{2, 5, 4}, {2, 7, 4}, {2, 7, 3}}, {NULL, false, false, false, NAN, false}},
        {"log-sum-exp", 3, 3, {{2, 5, 4}, {2, 7, 4}, {2, 7, 3}}, {NULL, false, true, false, NAN, false}},
        {"4-d, broadcast batch", 3, 4, {{2, 3, 4, 3}, {1, 3, 5, 3}, {2, 1, 5, 2}}, {NULL, false, false, false, NAN, false}},
        {"transposed query", 3, 3, {{2, 4, 5}, {2, 7, 4}, {2, 7, 3}}, {NULL, false, false, true, NAN, false}},
        {"bool mask, a masked row", 3, 3, {{2, 5, 4}, {2, 7, 4}, {2, 7, 3}}, {bm, false, false, false, NAN, false}},
        {"bool mask, lse", 3, 3, {{2, 5, 4}, {2, 7, 4}, {2, 7, 3}}, {bm_live, false, true, false, NAN, false}},
        {"float mask (grad too)", 4, 3, {{2, 5, 4}, {2, 7, 4}, {2, 7, 3}, {1, 5, 7}},
         {NULL, false, false, false, NAN, true}},
        {"causal, L > S", 3, 3, {{2, 7, 4}, {2, 5, 4}, {2, 5, 3}}, {NULL, true, false, false, NAN, false}},
        {"causal, L < S, scale", 3, 3, {{2, 4, 3}, {2, 6, 3}, {2, 6, 2}}, {NULL, true, false, false, 0.7, false}},
        {"several tiles, bool mask", 3, 4, {{2, 1, 70, 3}, {2, 1, 140, 3}, {2, 1, 140, 2}},
         {bm_tiles, false, false, false, NAN, false}},
        {"several tiles, causal", 3, 3, {{1, 140, 3}, {1, 140, 3}, {1, 140, 2}}, {NULL, true, false, false, NAN, false}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const grad_case *c = &cases[k];
        em_tensor *in[4] = {0};
        for (int i = 0; i < c->nin; i++) in[i] = leaf(c->nd, c->sizes[i], -1, 1);
        bool ok = gradcheck(c->name, f_sdpa, c->nin, in, &c->ctx);
        RELEASE(in[0], in[1], in[2], in[3]);
        CHECK_MSG(ok, "sdpa %s", c->name);
    }
    const attn_ctx fmask = {NULL, false, false, false, NAN, true}, masked = {bm, false, false, false, NAN, false};
    const attn_ctx causal = {NULL, true, false, false, NAN, false};
    em_tensor *qk[3] = {leaf(SHAPE(2, 5, 4), -1, 1), leaf(SHAPE(2, 7, 4), -1, 1), leaf(SHAPE(5, 7), -1, 1)};
    CHECK(gradcheck("weights, float mask", f_weights, 3, qk, &fmask));
    CHECK(gradcheck("weights, bool mask", f_weights, 2, qk, &masked));
    CHECK(gradcheck("weights, causal", f_weights, 2, qk, &causal));
    GRAD_COVER(EM_OP_scaled_dot_product_attention, EM_OP_attention_weights);
    RELEASE(bm, row, bm_live, col, bm_tiles, qk[0], qk[1], qk[2]);
}

/* d/d in of sum(f(in)^2) with create_graph: the composite path, differentiated again */
static em_tensor *f_grad_of_square(em_tensor *const *in, const void *ctx)
{
    bool mode = em_is_grad_enabled();
    em_set_grad_enabled(true);
    em_tensor *y = f_sdpa(in, ctx), *y2 = y ? em_mul(y, y) : NULL;
    em_tensor *s = y2 ? em_sum(y2, 0, NULL, false, EM_DTYPE_NONE) : NULL, *g = NULL;
    if (s && em_autograd_grad(1, &s, NULL, 1, in, true, true, false, &g)) g = NULL;
    RELEASE(y, y2, s);
    em_set_grad_enabled(mode);
    return g;
}

TEST(attention_second_derivatives)
{
    em_tensor *bm = trand(EM_BOOL, SHAPE(4, 5), 0, 1), *row = em_select(bm, 0, 1);
    em_fill_(row, 0);
    const attn_ctx masked = {bm, false, false, false, NAN, false}, causal = {NULL, true, false, false, NAN, false};
    em_tensor *in[3] = {leaf(SHAPE(2, 4, 3), -1, 1), leaf(SHAPE(2, 5, 3), -1, 1), leaf(SHAPE(2, 5, 2), -1, 1)};
    CHECK(gradcheck("sdpa, bool mask, second derivative", f_grad_of_square, 3, in, &masked));
    CHECK(gradcheck("sdpa, causal, second derivative", f_grad_of_square, 3, in, &causal));
    /* the first derivative under create_graph equals the fused one */
    em_tensor *g1 = f_grad_of_square(in, &causal), *y = f_sdpa(in, &causal), *y2 = em_mul(y, y);
    em_tensor *s = em_sum(y2, 0, NULL, false, EM_DTYPE_NONE), *g2 = NULL;
    CHECK(g1 && em_requires_grad(g1) && !em_autograd_grad(1, &s, NULL, 1, in, false, false, false, &g2));
    double *want = tvals(g2);
    bool same = tclose(g1, want, 1e-12, 1e-12);
    free(want);
    CHECK(same);
    RELEASE(bm, row, in[0], in[1], in[2], g1, y, y2, s, g2);
}

TEST(attention_backward_op_not_differentiable)
{
    em_tensor *q = leaf(SHAPE(2, 3, 4), -1, 1), *k = leaf(SHAPE(2, 5, 4), -1, 1), *v = leaf(SHAPE(2, 5, 2), -1, 1);
    em_tensor *o = NULL, *lse = NULL, *d[3] = {0};
    CHECK(!em_scaled_dot_product_attention_lse(q, k, v, NULL, false, NAN, &o, &lse));
    CHECK_ERR(em_scaled_dot_product_attention_backward(o, NULL, q, k, v, o, lse, NULL, false, NAN, &d[0], &d[1], &d[2]),
              EM_ERR_NOT_IMPLEMENTED);
    /* with grad mode off it computes */
    em_set_grad_enabled(false);
    em_status st = em_scaled_dot_product_attention_backward(o, NULL, q, k, v, o, lse, NULL, false, NAN, &d[0], &d[1],
                                                            &d[2]);
    em_set_grad_enabled(true);
    CHECK(st == EM_OK && !em_requires_grad(d[0]));
    RELEASE(q, k, v, o, lse, d[0], d[1], d[2]);
}
