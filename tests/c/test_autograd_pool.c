/* Autograd of the pool family: float64 gradchecks of every op, non-contiguous inputs, and
 * second derivatives (the backward ops' formulas are the forward ops; max_pool_backward's
 * is a gather at the indices). */
#include "test.h"

typedef struct pool_case {
    int kind;
    em_pool_params p;
    em_pad_mode mode;
} pool_case;

static em_tensor *apply(const em_tensor *x, const pool_case *c)
{
    static const int64_t pads[4] = {2, 1, 1, 2};
    em_tensor *idx = NULL, *r = NULL;
    switch (c->kind) {
    case 0: r = em_max_pool(x, &c->p, &idx); break;
    case 1: r = em_avg_pool(x, &c->p); break;
    case 2: r = em_adaptive_avg_pool(x, 2, (int64_t[]){2, 3}); break;
    case 3: r = em_adaptive_max_pool(x, 2, (int64_t[]){3, 2}, &idx); break;
    case 4: r = em_pad(x, 4, pads, c->mode, c->mode == EM_PAD_CONSTANT ? 0.5 : 0); break;
    case 5: r = em_upsample_nearest(x, (int64_t[]){7, 5}, NULL); break;
    case 6: r = em_upsample_linear(x, (int64_t[]){6, 7}, c->p.ceil_mode, NULL); break;
    case 8: {
        em_tensor *u = em_full(3, (int64_t[]){2, 2, 2}, 0.37, EM_F64);
        r = em_fractional_max_pool(x, 2, (int64_t[]){2, 2}, (int64_t[]){3, 4}, u, &idx);
        em_release(u);
        break;
    }
    case 9: r = em_upsample_bicubic(x, (int64_t[]){7, 4}, c->p.ceil_mode, NULL); break;
    case 10: r = em_upsample_bicubic(x, (int64_t[]){8, 13}, false, (double[]){1.7, 2.25}); break;
    default: r = em_max_unpool(x, NULL, &c->p, NULL); break;
    }
    em_release(idx);
    return r;
}
static em_tensor *f_leaf(em_tensor *const *in, const void *ctx) { return apply(in[0], ctx); }
static em_tensor *f_transposed(em_tensor *const *in, const void *ctx)
{
    em_tensor *t = em_transpose(in[0], 2, 3), *r = t ? apply(t, ctx) : NULL;
    em_release(t);
    return r;
}

TEST(gradcheck_pool_family)
{
    const pool_case cases[] = {
        {0, {.nd = 2, .kernel = {2, 2}}},
        {0, {.nd = 2, .kernel = {3, 2}, .stride = {2, 1}, .padding = {1, 1}, .dilation = {1, 2}, .ceil_mode = true}},
        {1, {.nd = 2, .kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true}},
        {1, {.nd = 2, .kernel = {2, 3}, .padding = {1, 1}, .divisor_override = 3}},
        {2}, {3},
        {4, .mode = EM_PAD_CONSTANT}, {4, .mode = EM_PAD_REFLECT}, {4, .mode = EM_PAD_REPLICATE},
        {4, .mode = EM_PAD_CIRCULAR},
        {5}, {6}, {6, {.ceil_mode = true}}, /* linear, bicubic: ceil_mode stands for align_corners */
        {8}, {9}, {9, {.ceil_mode = true}}, {10},
    };
    em_tensor *x = leaf(SHAPE(2, 2, 5, 6), -1, 1);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        CHECK_MSG(gradcheck("pool", f_leaf, 1, &x, &cases[k]), "case %zu", k);
        CHECK_MSG(gradcheck("pool (transposed)", f_transposed, 1, &x, &cases[k]), "transposed case %zu", k);
        CHECK_MSG(gradgradcheck("pool", f_leaf, 1, &x, &cases[k]), "second, case %zu", k);
    }
    em_release(x);
    GRAD_COVER(EM_OP_max_pool, EM_OP_avg_pool, EM_OP_adaptive_avg_pool, EM_OP_adaptive_max_pool, EM_OP_pad,
               EM_OP_upsample_nearest, EM_OP_upsample_linear, EM_OP_upsample_bicubic, EM_OP_fractional_max_pool);
}

/* the backward ops' own gradients (in grad and, through their formulas, twice) */
static em_tensor *f_backward(em_tensor *const *in, const void *ctx)
{
    const int *kind = ctx;
    static const int64_t isz[4] = {2, 2, 5, 6}, pads[4] = {2, 1, 1, 2};
    em_pool_params p = {.nd = 2, .kernel = {3, 2}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true};
    if (*kind == 5) { /* indices of a max pool of fixed values (ties impossible) */
        em_tensor *x = em_arange(0, 120, 1, EM_F64), *xs = x ? em_reshape(x, 4, isz) : NULL;
        em_tensor *idx = NULL, *y = xs ? em_max_pool(xs, &p, &idx) : NULL;
        em_tensor *r = y ? em_max_pool_backward(in[0], idx, 2, 4, isz) : NULL;
        RELEASE(x, xs, idx, y);
        return r;
    }
    switch (*kind) {
    case 0: return em_avg_pool_backward(in[0], &p, 4, isz);
    case 1: return em_adaptive_avg_pool_backward(in[0], 2, 4, isz);
    case 2: return em_pad_backward(in[0], 4, pads, EM_PAD_REFLECT, 4, isz);
    case 3: return em_upsample_nearest_backward(in[0], 4, isz, NULL);
    case 6: return em_upsample_bicubic_backward(in[0], 4, isz, true, NULL);
    default: return em_upsample_linear_backward(in[0], 4, isz, false, NULL);
    }
}

TEST(gradcheck_pool_backward_ops)
{
    const int64_t gsz[][4] = {{2, 2, 3, 4}, {2, 2, 3, 4}, {2, 2, 8, 9}, {2, 2, 7, 9}, {2, 2, 7, 9}, {2, 2, 3, 4},
                              {2, 2, 4, 9}};
    for (int k = 0; k < 7; k++) {
        em_tensor *g = leaf(4, gsz[k], -1, 1);
        CHECK_MSG(gradcheck("pool backward", f_backward, 1, &g, &k), "case %d", k);
        CHECK_MSG(gradgradcheck("pool backward", f_backward, 1, &g, &k), "second, case %d", k);
        em_release(g);
    }
    GRAD_COVER(EM_OP_avg_pool_backward, EM_OP_adaptive_avg_pool_backward, EM_OP_pad_backward,
               EM_OP_upsample_nearest_backward, EM_OP_upsample_linear_backward, EM_OP_upsample_bicubic_backward,
               EM_OP_max_pool_backward);
}
