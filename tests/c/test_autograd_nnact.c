/* Gradient checks of the nn activation family's formulas (float64 central
 * differences, first and second order) on contiguous and strided inputs. */
#include "test.h"

/* ctx: which op and its params */
typedef struct {
    int op;
    double p0, p1;
    int64_t i0;
} act_case;

enum { THRESHOLD, THRESHOLD_BACKWARD, GELU_BACKWARD, HARDSHRINK, SOFTSHRINK, PRELU, GLU, EMBEDDING, EMBED_BACKWARD, SOFTSIGN, TANHSHRINK, COSINE, PAIRWISE };

static em_tensor *f_act(em_tensor *const *in, const void *ctx)
{
    const act_case *c = ctx;
    switch (c->op) {
    case THRESHOLD: return em_threshold(in[0], c->p0, c->p1);
    case THRESHOLD_BACKWARD: return em_threshold_backward(in[0], in[1], c->p0);
    case GELU_BACKWARD: return em_gelu_backward(in[0], in[1], c->p0);
    case HARDSHRINK: return em_hardshrink(in[0], c->p0);
    case SOFTSHRINK: return em_softshrink(in[0], c->p0);
    case PRELU: return em_prelu(in[0], in[1]);
    case GLU: return em_glu(in[0], (int)c->i0);
    case SOFTSIGN: return em_softsign(in[0]);
    case TANHSHRINK: return em_tanhshrink(in[0]);
    case COSINE: return em_cosine_similarity(in[0], in[1], (int)c->i0, 1e-8);
    case PAIRWISE: return em_pairwise_distance(in[0], in[1], c->p0, 1e-6, c->i0 != 0);
    default: return NULL;
    }
}

/* Values kept away from the kinks (0.5 apart from +-0.5 and 0). */
static em_tensor *away_from_kinks(int ndim, const int64_t *sizes)
{
    em_tensor *x = leaf(ndim, sizes, -1, 1);
    for (int64_t i = 0; i < em_numel(x); i++) {
        int64_t idx[EM_MAX_DIMS];
        tunravel(i, ndim, sizes, idx);
        double v = tval(x, i), a = fabs(v);
        double moved = a < 0.25 ? 0.1 + a : a < 0.75 ? (a < 0.5 ? 0.3 : 0.7) : a;
        em_set(x, idx, v < 0 ? -moved - 0.05 : moved + 0.05);
    }
    return x;
}

TEST(gradcheck_nnact_pointwise)
{
    GRAD_COVER(EM_OP_threshold, EM_OP_hardshrink, EM_OP_softshrink);
    const act_case cases[] = {{THRESHOLD, 0.5, -2, 0}, {HARDSHRINK, 0.5, 0, 0}, {SOFTSHRINK, 0.5, 0, 0},
                              {SOFTSIGN, 0, 0, 0}, {TANHSHRINK, 0, 0, 0}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        em_tensor *x = away_from_kinks(SHAPE(3, 4));
        em_tensor *in[1] = {x};
        CHECK(gradcheck("nnact pointwise", f_act, 1, in, &cases[k]));
        CHECK(gradgradcheck("nnact pointwise", f_act, 1, in, &cases[k]));
        em_release(x);
    }
    /* threshold_backward: linear in g, nothing to x (kept away from the threshold) */
    const act_case tb = {THRESHOLD_BACKWARD, 0.5, 0, 0};
    em_tensor *in2[2] = {leaf(SHAPE(3, 4), -1, 1), away_from_kinks(SHAPE(3, 4))};
    CHECK(gradcheck("threshold_backward", f_act, 2, in2, &tb));
    CHECK(gradgradcheck("threshold_backward", f_act, 2, in2, &tb));
    /* gelu_backward, both forms: its x-gradient is gelu'' (and thrice differentiable) */
    for (int form = 0; form < 2; form++) {
        const act_case gb = {GELU_BACKWARD, form, 0, 0};
        CHECK_MSG(gradcheck("gelu_backward", f_act, 2, in2, &gb), "form %d", form);
        CHECK_MSG(gradgradcheck("gelu_backward", f_act, 2, in2, &gb), "form %d", form);
    }
    RELEASE(in2[0], in2[1]);
    GRAD_COVER(EM_OP_threshold_backward, EM_OP_gelu_backward);
}

TEST(gradcheck_prelu)
{
    GRAD_COVER(EM_OP_prelu);
    act_case c = {PRELU};
    em_tensor *x = away_from_kinks(SHAPE(2, 3, 4)), *w = leaf(SHAPE(3), -1, 1), *w1 = leaf(SHAPE(1), 0, 1);
    em_tensor *in[2] = {x, w};
    CHECK(gradcheck("prelu", f_act, 2, in, &c) && gradgradcheck("prelu", f_act, 2, in, &c));
    in[1] = w1;
    CHECK(gradcheck("prelu single", f_act, 2, in, &c) && gradgradcheck("prelu single", f_act, 2, in, &c));
    em_tensor *x1 = away_from_kinks(SHAPE(5));
    in[0] = x1;
    CHECK(gradcheck("prelu 1-d", f_act, 2, in, &c));
    RELEASE(x, w, w1, x1);
}

TEST(gradcheck_glu)
{
    GRAD_COVER(EM_OP_glu);
    em_tensor *x = leaf(SHAPE(4, 6), -2, 2);
    em_tensor *in[1] = {x};
    for (int d = -2; d < 2; d++) {
        act_case c = {GLU, 0, 0, d};
        CHECK(gradcheck("glu", f_act, 1, in, &c) && gradgradcheck("glu", f_act, 1, in, &c));
    }
    em_release(x);
}

static em_tensor *f_dropout(em_tensor *const *in, const void *ctx)
{
    em_manual_seed(11); /* the same mask at every evaluation */
    return em_dropout(in[0], *(const double *)ctx, true, NULL);
}
static em_tensor *f_feature_alpha(em_tensor *const *in, const void *ctx)
{
    em_manual_seed(12);
    return *(const int *)ctx ? em_feature_alpha_dropout(in[0], 0.3, true, NULL) : em_feature_dropout(in[0], 0.3, true, NULL);
}
static em_tensor *f_rrelu(em_tensor *const *in, const void *ctx)
{
    em_manual_seed(13);
    return em_rrelu(in[0], 0.1, 0.4, true, NULL);
}

TEST(gradcheck_dropout)
{
    GRAD_COVER(EM_OP_dropout);
    em_tensor *x = leaf(SHAPE(5, 6), -1, 1), *in[1] = {x};
    const double ps[] = {0.3, 1.0};
    for (int k = 0; k < 2; k++) {
        CHECK(gradcheck("dropout", f_dropout, 1, in, &ps[k]));
        CHECK(gradgradcheck("dropout", f_dropout, 1, in, &ps[k]));
    }
    /* the gradient is mask / (1 - p) */
    em_manual_seed(11);
    em_tensor *y = NULL, *mask = NULL, *g = NULL;
    CHECK(em_native_dropout(x, 0.3, NULL, &y, &mask) == EM_OK);
    em_tensor *ones = em_ones_like(y, EM_DTYPE_NONE);
    CHECK(em_autograd_grad(1, &y, &ones, 1, &x, false, false, false, &g) == EM_OK);
    for (int64_t i = 0; i < 30; i++) CHECK(fabs(tval(g, i) - tval(mask, i) / 0.7) < 1e-12);
    const int alpha[] = {0, 1};
    em_tensor *x4 = leaf(SHAPE(3, 4, 2), -1, 1), *in4[1] = {x4};
    for (int k = 0; k < 2; k++) CHECK(gradcheck("feature dropout", f_feature_alpha, 1, in4, &alpha[k]));
    em_tensor *xr = away_from_kinks(SHAPE(4, 5)), *inr[1] = {xr};
    CHECK(gradcheck("rrelu", f_rrelu, 1, inr, NULL) && gradgradcheck("rrelu", f_rrelu, 1, inr, NULL));
    RELEASE(x, y, mask, g, ones, x4, xr);
}

typedef struct {
    const em_tensor *idx;
    int64_t pad, nw;
    bool freq;
} embed_case;
static em_tensor *f_embedding(em_tensor *const *in, const void *ctx)
{
    const embed_case *c = ctx;
    return em_embedding(in[0], c->idx, c->pad, c->freq);
}
static em_tensor *f_embed_backward(em_tensor *const *in, const void *ctx)
{
    const embed_case *c = ctx;
    return em_embedding_dense_backward(in[0], c->idx, c->nw, c->pad, c->freq);
}

TEST(gradcheck_embedding)
{
    GRAD_COVER(EM_OP_embedding, EM_OP_embedding_dense_backward);
    em_tensor *idx = tt(EM_I64, SHAPE(2, 3), (double[]){1, 3, 1, 0, 2, 3});
    em_tensor *w = leaf(SHAPE(5, 4), -1, 1), *wt = leaf(SHAPE(4, 5), -1, 1), *wv = em_transpose(wt, 0, 1);
    em_tensor *g = leaf(SHAPE(2, 3, 4), -1, 1);
    for (int k = 0; k < 4; k++) {
        embed_case c = {idx, k & 1 ? 4 : -1, 5, (k & 2) != 0}; /* (padding rows get no gradient: none in idx) */
        em_tensor *in[1] = {w};
        /* (scale_grad_by_freq is no true derivative: the backward op's values are checked in test_nnact.c) */
        if (!c.freq) CHECK(gradcheck("embedding", f_embedding, 1, in, &c) && gradgradcheck("embedding", f_embedding, 1, in, &c));
        in[0] = g;
        CHECK(gradcheck("embedding_dense_backward", f_embed_backward, 1, in, &c));
        CHECK(gradgradcheck("embedding_dense_backward", f_embed_backward, 1, in, &c));
    }
    /* a strided weight: the gradient reaches the leaf through the view */
    em_tensor *y = em_embedding(wv, idx, -1, false), *ones = em_ones_like(y, EM_DTYPE_NONE), *gw = NULL;
    CHECK(y && em_autograd_grad(1, &y, &ones, 1, &wt, false, false, false, &gw) == EM_OK);
    const double counts[5] = {1, 2, 1, 2, 0};
    for (int64_t r = 0; r < 4; r++)
        for (int64_t v = 0; v < 5; v++) CHECK(tval(gw, r * 5 + v) == counts[v]);
    RELEASE(idx, w, wt, wv, g, y, ones, gw);
}

TEST(gradcheck_distances)
{
    em_tensor *a = leaf(SHAPE(3, 4), -1, 1), *b = leaf(SHAPE(4), -1, 1), *in[2] = {a, b};
    act_case cs = {COSINE, 0, 0, 1}, cs0 = {COSINE, 0, 0, 0};
    CHECK(gradcheck("cosine_similarity", f_act, 2, in, &cs));
    CHECK(gradcheck("cosine_similarity dim 0", f_act, 2, in, &cs0));
    const double ps[] = {1, 2, 3};
    for (int k = 0; k < 3; k++) {
        act_case pd = {PAIRWISE, ps[k], 0, k == 1};
        CHECK(gradcheck("pairwise_distance", f_act, 2, in, &pd));
    }
    RELEASE(a, b);
}

typedef struct {
    const em_tensor *idx, *off;
    int mode;
    int64_t pad;
    bool freq, weighted;
} bag_case;
/* in: weight (and per_sample_weights when weighted) */
static em_tensor *f_bag(em_tensor *const *in, const void *ctx)
{
    const bag_case *c = ctx;
    em_tensor *y = NULL;
    em_embedding_bag(in[0], c->idx, c->off, c->mode, c->weighted ? in[1] : NULL, false, c->pad, c->freq, &y, NULL,
                     NULL, NULL);
    return y;
}
/* in: grad (B, D) (and per_sample_weights): the backward op through a forward's bag tensors */
static em_tensor *f_bag_backward(em_tensor *const *in, const void *ctx)
{
    const bag_case *c = ctx;
    em_tensor *w = em_ones(SHAPE(6, 4), EM_F64), *y, *o2b, *size, *maxi;
    em_tensor *gw = NULL;
    em_set_grad_enabled(false);
    em_status st = em_embedding_bag(w, c->idx, c->off, c->mode, NULL, false, c->pad, c->freq, &y, &o2b, &size, &maxi);
    em_set_grad_enabled(true);
    if (!st)
        gw = em_embedding_bag_backward(in[0], c->idx, o2b, size, c->weighted ? in[1] : NULL,
                                       c->mode == EM_BAG_MAX ? maxi : NULL, 6, c->mode, c->pad, c->freq);
    if (!st) RELEASE(y, o2b, size, maxi);
    em_release(w);
    return gw;
}

TEST(gradcheck_embedding_bag)
{
    GRAD_COVER(EM_OP_embedding_bag, EM_OP_embedding_bag_backward);
    em_tensor *idx = tt(EM_I64, SHAPE(7), (double[]){1, 3, 1, 0, 2, 3, 5}), *off = tt(EM_I64, SHAPE(4), (double[]){0, 2, 2, 5});
    /* (gradgradcheck wants leaves: a view's history is released by its non-retaining backward passes) */
    em_tensor *wt = leaf(SHAPE(4, 6), -1, 1), *wv = em_transpose(wt, 0, 1), *w = leaf(SHAPE(6, 4), -1, 1);
    em_tensor *psw = leaf(SHAPE(7), -1, 1);
    em_tensor *g = leaf(SHAPE(4, 4), -1, 1);
    for (int k = 0; k < 8; k++) {
        bag_case c = {idx, off, k % 3, k & 4 ? 3 : -1, false, k == 3 || k == 6};
        em_tensor *in[2] = {wv, psw};
        CHECK(gradcheck("embedding_bag", f_bag, 1 + c.weighted, in, &c));
        in[0] = w;
        CHECK(gradgradcheck("embedding_bag", f_bag, 1 + c.weighted, in, &c));
        in[0] = g;
        c.freq = c.mode != EM_BAG_MAX && (k & 1);
        CHECK(gradcheck("embedding_bag_backward", f_bag_backward, 1 + c.weighted, in, &c));
        CHECK(gradgradcheck("embedding_bag_backward", f_bag_backward, 1 + c.weighted, in, &c));
    }
    RELEASE(idx, off, wt, wv, w, psw, g);
}

static em_tensor *f_pdist(em_tensor *const *in, const void *ctx) { return em_pdist(in[0], *(const double *)ctx); }

TEST(gradcheck_pdist)
{
    em_tensor *x = leaf(SHAPE(4, 3), -1, 1);
    const double ps[] = {0.5, 1, 2, 3, INFINITY};
    for (int k = 0; k < 5; k++) CHECK(gradcheck("pdist", f_pdist, 1, &x, &ps[k]));
    /* rows 0 and 1 equal: the gradient at the zero distance is 0, as PyTorch's */
    em_tensor *z = tt(EM_F64, SHAPE(3, 2), (double[]){1, 2, 1, 2, 0, 3});
    em_set_requires_grad(z, true);
    for (int k = 0; k < 5; k++) {
        em_tensor *y = em_pdist(z, ps[k]), *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL, *gz = NULL;
        CHECK(s && em_autograd_grad(1, &s, NULL, 1, &z, false, false, false, &gz) == EM_OK);
        for (int i = 0; gz && i < 6; i++) CHECK(isfinite(tval(gz, i)));
        /* d/dz0: only the (0, 2) pair, (1, -1) / 2^(1 - 1/p); inf: both tied entries in full */
        const double want = ps[k] == 0.5 ? 2 : isinf(ps[k]) ? 1 : pow(2, 1 / ps[k] - 1);
        if (gz) CHECK(fabs(tval(gz, 0) - want) < 1e-12 && fabs(tval(gz, 1) + want) < 1e-12);
        RELEASE(y, s, gz);
    }
    RELEASE(x, z);
}
