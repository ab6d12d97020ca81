/* Gradient checks of the loss family (float64 finite differences): every
 * formula, every reduction, weights, K-dimensional class losses; second
 * derivatives where the formula records; CTC through log_softmax. */
#include "test.h"

typedef struct loss_ctx {
    int kind;           /* which loss */
    em_reduction r;
    const em_tensor *t; /* class targets / CTC targets */
    const em_tensor *w, *q;
} loss_ctx;

static em_tensor *f_loss(em_tensor *const *in, const void *p)
{
    const loss_ctx *c = p;
    switch (c->kind) {
    case 0: return em_mse_loss(in[0], in[1], c->r);
    case 1: return em_l1_loss(in[0], in[1], c->r);
    case 2: return em_smooth_l1_loss(in[0], in[1], c->r, 0.6);
    case 3: return em_huber_loss(in[0], in[1], c->r, 0.6);
    case 4: return em_binary_cross_entropy(in[0], in[1], c->w, c->r);
    case 5: return em_binary_cross_entropy_with_logits(in[0], in[1], c->w, c->q, c->r);
    case 6: return em_nll_loss(in[0], c->t, c->w, c->r, 1);
    default: return em_cross_entropy(in[0], c->t, c->w, c->r, 1);
    }
}

TEST(autograd_loss_pointwise)
{
    for (int kind = 0; kind < 6; kind++)
        for (int r = 0; r < 3; r++) {
            /* y broadcasts for the regression losses; inputs away from the kinks */
            em_tensor *x = leaf(SHAPE(4, 3), 0.05, 0.45);
            em_tensor *y = kind < 4 ? leaf(SHAPE(4, 1), 0.5, 0.9) : leaf(SHAPE(4, 3), 0.1, 0.9);
            em_tensor *w = trand(EM_F64, SHAPE(3), 0.5, 2), *q = trand(EM_F64, SHAPE(4, 1), 0.5, 2);
            loss_ctx c = {.kind = kind, .r = (em_reduction)r, .w = kind >= 4 ? w : NULL, .q = kind == 5 ? q : NULL};
            bool ok = gradcheck("pointwise loss", f_loss, 2, (em_tensor *[]){x, y}, &c);
            if (ok && r == 1 && kind != 1) ok = gradgradcheck("pointwise loss", f_loss, 2, (em_tensor *[]){x, y}, &c);
            RELEASE(x, y, w, q);
            CHECK_MSG(ok, "loss %d reduction %d", kind, r);
        }
    GRAD_COVER(EM_OP_mse_loss, EM_OP_l1_loss, EM_OP_smooth_l1_loss, EM_OP_huber_loss, EM_OP_binary_cross_entropy,
               EM_OP_binary_cross_entropy_with_logits);
}

/* Targets 0, 1, ..., C-1, 0, ...: the first is never the ignored class (1),
 * so a mean over non-ignored targets is never 0/0, whatever the draws. */
static em_tensor *cycling_targets(int ndim, const int64_t *sizes, int64_t C)
{
    double vals[64];
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= sizes[d];
    for (int64_t i = 0; i < n && i < 64; i++) vals[i] = (double)(i % C);
    return tt(EM_I64, ndim, sizes, vals);
}

TEST(autograd_loss_class)
{
    struct { int nd; int64_t sizes[4]; } shapes[] = {{2, {4, 3}}, {4, {2, 3, 2, 2}}, {1, {5}}};
    for (int si = 0; si < 3; si++)
        for (int kind = 6; kind < 8; kind++)
            for (int r = 0; r < 3; r++) {
                int nd = shapes[si].nd;
                const int64_t *sz = shapes[si].sizes;
                int64_t C = sz[nd == 1 ? 0 : 1], tsz[3] = {sz[0], sz[2], sz[3]};
                em_tensor *x = leaf(nd, sz, -2, 2), *t = cycling_targets(nd == 1 ? 0 : nd - 1, tsz, C);
                em_tensor *w = r == 1 ? trand(EM_F64, 1, &C, 0.5, 2) : NULL;
                loss_ctx c = {.kind = kind, .r = (em_reduction)r, .t = t, .w = w};
                bool ok = gradcheck("class loss", f_loss, 1, &x, &c) && gradgradcheck("class loss", f_loss, 1, &x, &c);
                RELEASE(x, t, w);
                CHECK_MSG(ok, "class loss shape %d kind %d reduction %d", si, kind, r);
            }
    GRAD_COVER(EM_OP_nll_loss, EM_OP_cross_entropy, EM_OP_nll_loss_backward);
}

/* a weight that requires grad is refused, as PyTorch */
TEST(autograd_loss_weight_refused)
{
    em_tensor *x = leaf(SHAPE(2, 3), 0.1, 0.9), *w = leaf(SHAPE(3), 0.1, 0.9), *t = tints(EM_I64, SHAPE(2), 0, 3);
    CHECK_ERR(em_nll_loss(x, t, w, EM_REDUCTION_MEAN, -100), EM_ERR_RUNTIME);
    CHECK_ERR(em_binary_cross_entropy(x, x, w, EM_REDUCTION_MEAN), EM_ERR_RUNTIME);
    RELEASE(x, w, t);
}

static em_tensor *f_ctc(em_tensor *const *in, const void *p)
{
    const loss_ctx *c = p;
    em_tensor *lp = em_log_softmax(in[0], 2, EM_DTYPE_NONE);
    em_tensor *il = tt(EM_I64, SHAPE(2), (double[]){5, 4}), *tl = tt(EM_I64, SHAPE(2), (double[]){2, 1});
    em_tensor *r = em_ctc_loss(lp, c->t, il, tl, 0, c->r, false);
    RELEASE(lp, il, tl);
    return r;
}

TEST(autograd_loss_ctc)
{
    em_tensor *tg = tt(EM_I64, SHAPE(2, 2), (double[]){1, 2, 3, 0});
    for (int r = 0; r < 3; r++) {
        em_tensor *x = leaf(SHAPE(5, 2, 4), -1, 1);
        loss_ctx c = {.r = (em_reduction)r, .t = tg};
        bool ok = gradcheck("ctc", f_ctc, 1, &x, &c);
        em_release(x);
        CHECK_MSG(ok, "ctc reduction %d", r);
    }
    /* no double backward (as PyTorch): create_graph through the backward op is refused */
    em_tensor *x = leaf(SHAPE(5, 2, 4), -1, 1), *g = NULL;
    loss_ctx c = {.r = EM_REDUCTION_SUM, .t = tg};
    em_tensor *y = f_ctc(&x, &c);
    CHECK(y);
    CHECK_ERR(em_autograd_grad(1, &y, NULL, 1, &x, true, true, false, &g), EM_ERR_NOT_IMPLEMENTED);
    RELEASE(x, y, g, tg);
    GRAD_COVER(EM_OP_ctc_loss);
}

/* The backward ops PyTorch does not differentiate refuse in a second backward. */
static em_status second_backward(em_tensor *out, em_tensor *in)
{
    em_tensor *s = em_sum(out, 0, NULL, false, EM_DTYPE_NONE), *g = NULL;
    em_status st = s ? em_autograd_grad(1, &s, NULL, 1, &in, false, false, true, &g) : em_error_code();
    RELEASE(s, g);
    return st;
}

TEST(autograd_loss_backward_ops_not_differentiable)
{
    em_tensor *x = leaf(SHAPE(2, 3), -1, 1), *g = leaf(SHAPE(), 1, 2), *t = tints(EM_I64, SHAPE(2), 0, 3);
    em_tensor *lse = trand(EM_F64, SHAPE(2), 0, 1), *tw = tt(EM_F64, SHAPE(), (double[]){2});
    em_tensor *gx = em_cross_entropy_backward(g, x, t, NULL, EM_REDUCTION_MEAN, -100, lse, tw);
    CHECK(gx);
    CHECK_ERR(second_backward(gx, x), EM_ERR_NOT_IMPLEMENTED);
    em_tensor *lp = leaf(SHAPE(3, 1, 3), -2, -1), *tg = tt(EM_I64, SHAPE(1, 1), (double[]){1});
    em_tensor *len = tt(EM_I64, SHAPE(2, 1), (double[]){3, 1}), *nll = NULL, *alpha = NULL;
    CHECK(em_ctc_loss_raw(lp, tg, len, 0, false, &nll, &alpha) == EM_OK);
    em_tensor *gn = leaf(SHAPE(1), 1, 2), *glp = em_ctc_loss_backward(gn, lp, tg, len, nll, alpha, 0, false);
    CHECK(glp);
    CHECK_ERR(second_backward(glp, gn), EM_ERR_NOT_IMPLEMENTED);
    RELEASE(x, g, t, lse, tw, gx, lp, tg, len, nll, alpha, gn, glp);
    GRAD_COVER(EM_OP_cross_entropy_backward, EM_OP_ctc_loss_backward);
}
