/* Autograd: float64 finite-difference gradchecks of the formulas (the
 * pointwise ones: test_autograd_pointwise.c), views, composites, and the
 * engine's graph handling: diamonds, reuse, retain_graph, hooks, grad(),
 * version checks, in-place rules, no_grad. */
#include "test.h"
#include "../../src/autograd/autograd.h"

/* ---- reductions, softmax, products, views ----------------------------------- */
static em_tensor *f_sum(em_tensor *const *in, const void *c) { return em_sum(in[0], 1, (const int[]){1}, false, EM_DTYPE_NONE); }
static em_tensor *f_mean(em_tensor *const *in, const void *c) { return em_mean(in[0], 2, (const int[]){0, 2}, true, EM_DTYPE_NONE); }
static em_tensor *f_softmax(em_tensor *const *in, const void *c) { return em_softmax(in[0], 1, EM_DTYPE_NONE); }
static em_tensor *f_log_softmax(em_tensor *const *in, const void *c) { return em_log_softmax(in[0], -1, EM_DTYPE_NONE); }
static em_tensor *f_matmul(em_tensor *const *in, const void *c) { return em_matmul(in[0], in[1]); }
static em_tensor *f_mm_t(em_tensor *const *in, const void *c)
{
    em_tensor *bt = em_t(in[1]), *r = em_mm(in[0], bt);
    em_release(bt);
    return r;
}
static em_tensor *f_outer(em_tensor *const *in, const void *c) { return em_outer(in[0], in[1]); }
static em_tensor *f_kron(em_tensor *const *in, const void *c) { return em_kron(in[0], in[1]); }
static em_tensor *f_mv(em_tensor *const *in, const void *c) { return em_mv(in[0], in[1]); }
static em_tensor *f_dot(em_tensor *const *in, const void *c) { return em_dot(in[0], in[1]); }

TEST(gradcheck_reductions_and_products)
{
    em_tensor *x = leaf(SHAPE(2, 3, 4), -1, 1);
    CHECK(gradcheck("sum", f_sum, 1, &x, NULL));
    CHECK(gradcheck("mean", f_mean, 1, &x, NULL));
    CHECK(gradcheck("softmax", f_softmax, 1, &x, NULL));
    CHECK(gradcheck("log_softmax", f_log_softmax, 1, &x, NULL));
    CHECK(gradgradcheck("softmax", f_softmax, 1, &x, NULL));
    CHECK(gradgradcheck("log_softmax", f_log_softmax, 1, &x, NULL));
    em_tensor *a = leaf(SHAPE(3, 4), -1, 1), *b = leaf(SHAPE(5, 4), -1, 1), *v = leaf(SHAPE(4), -1, 1);
    em_tensor *ab[] = {a, b}, *av[] = {a, v};
    CHECK(gradcheck("mm of a transposed view", f_mm_t, 2, ab, NULL));
    em_tensor *bt = em_t(b), *vbt[] = {v, bt};
    CHECK(gradcheck("matmul (k) x (k, m)", f_matmul, 2, vbt, NULL));
    CHECK(gradcheck("outer", f_outer, 2, (em_tensor *[]){v, v}, NULL));
    CHECK(gradcheck("kron", f_kron, 2, ab, NULL));
    /* the other products: tests/c/test_autograd_linalg.c */
    CHECK(gradcheck("mv", f_mv, 2, av, NULL));
    CHECK(gradcheck("dot", f_dot, 2, (em_tensor *[]){v, v}, NULL));
    GRAD_COVER(EM_OP_sum, EM_OP_mean, EM_OP_softmax, EM_OP_log_softmax, EM_OP_mm, EM_OP_matmul, EM_OP_outer, EM_OP_kron);
    RELEASE(x, a, b, v, bt);
}

static em_tensor *f_views(em_tensor *const *in, const void *c)
{
    /* select, slice with step, transpose, unsqueeze + expand, reshape of a copy */
    em_tensor *s = em_select(in[0], 0, 1), *sl = em_slice(s, 1, 0, 4, 2), *t = em_t(sl);
    em_tensor *u = em_unsqueeze(t, 0), *e = em_expand(u, 3, (const int64_t[]){3, 2, 3});
    em_tensor *r = em_reshape(e, 1, (const int64_t[]){-1}), *y = em_mul(r, r);
    RELEASE(s, sl, t, u, e, r);
    return y;
}
static em_tensor *f_unfold(em_tensor *const *in, const void *c)
{
    em_tensor *u = em_unfold(in[0], 1, 3, 1), *y = em_mul(u, u); /* overlapping windows */
    em_release(u);
    return y;
}
static em_tensor *f_diag_copy(em_tensor *const *in, const void *c)
{
    em_tensor *d = em_diagonal(in[0], 1, 1, 2), *y = em_clone(d);
    em_release(d);
    return y;
}

TEST(gradcheck_views_and_copies)
{
    em_tensor *x = leaf(SHAPE(2, 3, 4), -1, 1);
    CHECK(gradcheck("views", f_views, 1, &x, NULL));
    CHECK(gradcheck("unfold", f_unfold, 1, &x, NULL));
    CHECK(gradcheck("diagonal, copied", f_diag_copy, 1, &x, NULL));
    /* a dtype conversion: the gradient comes back in the input's dtype */
    em_tensor *y = em_to_dtype(x, EM_F32), *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE), *g = NULL;
    CHECK(y && em_requires_grad(y) && !strcmp(em_node_name(em_grad_fn(y)), "CopyBackward0"));
    CHECK(em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g) == EM_OK);
    CHECK(em_dtype_of(g) == EM_F64 && tval(g, 5) == 1);
    RELEASE(y, s, g);
    GRAD_COVER(EM_OP_copy);
    em_release(x);
}

/* ---- the engine ------------------------------------------------------------ */
static double grad_at(const em_tensor *t, int64_t i)
{
    em_tensor *g = em_get_grad(t);
    double v = g ? tval(g, i) : NAN;
    em_release(g);
    return v;
}

TEST(backward_diamond_and_reuse)
{
    /* y = sum(x*x + 3x), x used three times through two paths: dy/dx = 2x + 3 */
    em_tensor *x = leaf(SHAPE(4), -1, 1), *three = em_scalar_float(3);
    em_tensor *a = em_mul(x, x), *b = em_mul(x, three), *c = em_add(a, b, 1);
    em_tensor *y = em_sum(c, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(y && em_backward(1, &y, NULL, false, false, 0, NULL) == EM_OK);
    for (int i = 0; i < 4; i++) CHECK(fabs(grad_at(x, i) - (2 * tval(x, i) + 3)) < 1e-12);
    CHECK(em_is_leaf(x) && !em_is_leaf(y) && !strcmp(em_node_name(em_grad_fn(a)), "MulBackward0"));
    /* a second backward through the freed graph fails; .grad is unchanged */
    CHECK_ERR(em_backward(1, &y, NULL, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "backward through the graph a second time"));
    RELEASE(x, three, a, b, c, y);
}

TEST(backward_accumulates_and_retains)
{
    em_tensor *x = leaf(SHAPE(3), 0, 1), *y = em_exp(x), *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_backward(1, &s, NULL, true, false, 0, NULL) == EM_OK);
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK); /* retained: runs again, grads add */
    for (int i = 0; i < 3; i++) CHECK(fabs(grad_at(x, i) - 2 * exp(tval(x, i))) < 1e-12);
    CHECK(em_set_grad(x, NULL) == EM_OK && !em_get_grad(x));
    RELEASE(x, y, s);
}

TEST(backward_non_scalar_and_errors)
{
    em_tensor *x = leaf(SHAPE(2, 2), -1, 1), *y = em_mul(x, x), *w = em_ones(SHAPE(2, 2), EM_F64);
    CHECK_ERR(em_backward(1, &y, NULL, true, false, 0, NULL), EM_ERR_RUNTIME); /* implicit grad: scalars only */
    CHECK(em_backward(1, &y, &w, false, false, 0, NULL) == EM_OK);
    CHECK(fabs(grad_at(x, 3) - 2 * tval(x, 3)) < 1e-12);
    em_tensor *z = em_ones(SHAPE(1), EM_F64);
    CHECK_ERR(em_backward(1, &z, NULL, false, false, 0, NULL), EM_ERR_RUNTIME); /* does not require grad */
    em_tensor *i = em_zeros(SHAPE(2), EM_I64);
    CHECK_ERR(em_set_requires_grad(i, true), EM_ERR_RUNTIME);
    CHECK_ERR(em_set_requires_grad(y, false), EM_ERR_RUNTIME); /* not a leaf */
    RELEASE(x, y, w, z, i);
}

TEST(autograd_grad_inputs_and_unused)
{
    em_tensor *x = leaf(SHAPE(3), -1, 1), *u = leaf(SHAPE(3), -1, 1), *h = em_sin(x);
    em_tensor *y = em_sum(h, 0, NULL, false, EM_DTYPE_NONE), *ins[] = {x, h, u}, *g[3];
    CHECK_ERR(em_autograd_grad(1, &y, NULL, 3, ins, true, false, false, g), EM_ERR_RUNTIME); /* u unused */
    CHECK(em_autograd_grad(1, &y, NULL, 3, ins, false, false, true, g) == EM_OK);
    CHECK(g[0] && g[1] && !g[2]);
    for (int i = 0; i < 3; i++) CHECK(fabs(tval(g[0], i) - cos(tval(x, i))) < 1e-12 && tval(g[1], i) == 1);
    CHECK(!em_get_grad(x)); /* grad() accumulates nothing */
    RELEASE(x, u, h, y, g[0], g[1]);
}

static em_tensor *double_it(const em_tensor *g, void *ctx)
{
    ++*(int *)ctx;
    em_tensor *two = em_scalar_float(2), *r = em_mul(g, two);
    em_release(two);
    return r;
}

TEST(hooks_and_retain_grad)
{
    int calls = 0;
    em_tensor *x = leaf(SHAPE(2), -1, 1), *y = em_mul(x, x), *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_register_hook(y, double_it, &calls, NULL) > 0);
    int h = em_register_hook(x, double_it, &calls, NULL);
    CHECK(h > 0 && em_retain_grad(y) == EM_OK);
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    CHECK(calls == 2);
    for (int i = 0; i < 2; i++) CHECK(fabs(grad_at(x, i) - 8 * tval(x, i)) < 1e-12); /* 2x, doubled twice */
    CHECK(fabs(grad_at(y, 0) - 2) < 1e-12); /* retained, after y's hook */
    CHECK(em_remove_hook(x, h) == EM_OK);
    CHECK_ERR(em_remove_hook(x, h), EM_ERR_VALUE);
    RELEASE(x, y, s);
}

TEST(version_counter_and_inplace_rules)
{
    em_tensor *x = leaf(SHAPE(3), 0.5, 1), *y = em_exp(x), *z = em_mul(y, y);
    em_tensor *s = em_sum(z, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_add_(y, y, 1) == EM_OK); /* y is saved by mul: its version moves on */
    CHECK_ERR(em_backward(1, &s, NULL, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "modified by an inplace operation") && strstr(em_last_error(), "MulBackward0"));
    CHECK_ERR(em_exp_(x), EM_ERR_RUNTIME); /* a leaf that requires grad */
    CHECK(strstr(em_last_error(), "leaf Variable"));
    RELEASE(y, z, s);
    /* in place on a non-leaf is recorded: d/dx sum(exp(2x)) = 2 exp(2x) */
    em_tensor *two = em_scalar_float(2), *w = em_mul(x, two);
    CHECK(em_exp_(w) == EM_OK && !strcmp(em_node_name(em_grad_fn(w)), "ExpBackward0"));
    em_tensor *t = em_sum(w, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_backward(1, &t, NULL, false, false, 0, NULL) == EM_OK);
    for (int i = 0; i < 3; i++) CHECK(fabs(grad_at(x, i) - 2 * exp(2 * tval(x, i))) < 1e-12);
    /* writing into a view of a tensor that requires grad is recorded
     * (test_autograd_inplace_view.c) */
    RELEASE(x, two, w, t);
}

TEST(no_grad_detach_and_node_edges)
{
    em_tensor *x = leaf(SHAPE(2), -1, 1);
    em_set_grad_enabled(false);
    em_tensor *y = em_exp(x);
    em_set_grad_enabled(true);
    CHECK(!em_requires_grad(y) && em_is_leaf(y));
    em_tensor *d = em_detach(x), *z = em_mul(x, d);
    CHECK(!em_requires_grad(d) && em_is_same_storage(d, x));
    em_node *n = em_grad_fn(z);
    int nr = -1;
    CHECK(n && em_node_num_next(n) == 2 && em_node_next(n, 1, &nr) == NULL);
    em_node *acc = em_node_next(n, 0, &nr);
    CHECK(acc && !strcmp(em_node_name(acc), "AccumulateGrad") && nr == 0);
    em_tensor *i = em_gt(x, d); /* not differentiable: no history */
    CHECK(!em_requires_grad(i));
    RELEASE(x, y, d, z, i);
}

TEST(create_graph_second_derivative)
{
    /* d/dx of (d/dx sum(x^3)) . 1 = 6x */
    em_tensor *x = leaf(SHAPE(3), -1, 1), *x2 = em_mul(x, x), *x3 = em_mul(x2, x);
    em_tensor *s = em_sum(x3, 0, NULL, false, EM_DTYPE_NONE), *g;
    CHECK(em_autograd_grad(1, &s, NULL, 1, &x, true, true, false, &g) == EM_OK);
    CHECK(em_requires_grad(g));
    em_tensor *gs = em_sum(g, 0, NULL, false, EM_DTYPE_NONE), *gg;
    CHECK(em_autograd_grad(1, &gs, NULL, 1, &x, false, false, false, &gg) == EM_OK);
    for (int i = 0; i < 3; i++) CHECK(fabs(tval(gg, i) - 6 * tval(x, i)) < 1e-12);
    RELEASE(x, x2, x3, s, g, gs, gg);
}

/* Every differentiable op that autograd records as one node has a formula,
 * so a new differentiable op without one fails here (recording it would be a
 * NotImplemented error). Composites (EM_F_COMPOSITE) are recorded as the ops
 * they are made of. The ops PyTorch refuses to differentiate (nextafter,
 * heaviside, ...) have formulas too: ones that refuse, with PyTorch's error. */
TEST(every_differentiable_op_has_a_formula)
{
    /* EM_F_GRAD_PARTS ops run as recorded ops when autograd may record
     * (src/ops/shape.c, src/ops/shape_index.c), composites are their parts */
    for (int op = 0; op < EM_OP_COUNT; op++) {
        unsigned flags = em_ops[op].flags;
        if (!(flags & EM_F_DIFF) || (flags & EM_F_COMPOSITE)) continue;
        bool parts = flags & EM_F_GRAD_PARTS;
        CHECK_MSG(parts || em_formulas[op].fn, "differentiable op '%s' has no backward formula", em_ops[op].name);
        CHECK_MSG(!parts || !em_formulas[op].fn, "'%s' has a formula now: drop EM_F_GRAD_PARTS", em_ops[op].name);
    }
}

TEST(training_loop_memory_is_flat)
{
    /* 2000 steps of a tiny regression: graphs are freed as they go (ASan's
     * leak check covers the rest) and the loss falls */
    em_tensor *w = leaf(SHAPE(3, 1), -0.1, 0.1), *x = trand(EM_F64, SHAPE(16, 3), -1, 1);
    em_tensor *true_w = tt(EM_F64, SHAPE(3, 1), (const double[]){1, -2, 0.5}), *t = em_matmul(x, true_w);
    double first = 0, last = 0;
    for (int step = 0; step < 2000; step++) {
        em_tensor *p = em_matmul(x, w), *d = em_sub(p, t, 1), *sq = em_mul(d, d);
        em_tensor *loss = em_mean(sq, 0, NULL, false, EM_DTYPE_NONE);
        CHECK(loss && em_backward(1, &loss, NULL, false, false, 0, NULL) == EM_OK);
        if (step == 0) first = tval(loss, 0);
        last = tval(loss, 0);
        em_tensor *g = em_get_grad(w);
        em_set_grad_enabled(false);
        CHECK(em_add_(w, g, -0.1) == EM_OK);
        em_set_grad_enabled(true);
        em_set_grad(w, NULL);
        RELEASE(p, d, sq, loss, g);
    }
    CHECK(last < 1e-6 * first);
    RELEASE(w, x, true_w, t);
}

/* second derivatives through views: select, transpose, unsqueeze, expand; unfold */
static em_tensor *cube(em_tensor *v)
{
    em_tensor *sq = em_mul(v, v), *y = em_mul(sq, v);
    RELEASE(sq, v);
    return y;
}
static em_tensor *f_views_cubed(em_tensor *const *in, const void *c)
{
    em_tensor *s = em_select(in[0], 0, 1), *t = em_t(s), *w = em_unsqueeze(t, 0);
    em_tensor *e = em_expand(w, 3, (const int64_t[]){2, 4, 3});
    RELEASE(s, t, w);
    return cube(e);
}
static em_tensor *f_unfold_cubed(em_tensor *const *in, const void *c) { return cube(em_unfold(in[0], 2, 2, 1)); }

TEST(gradgradcheck_through_views)
{
    em_tensor *x = leaf(SHAPE(2, 3, 4), -1, 1);
    CHECK(gradgradcheck("views", f_views_cubed, 1, &x, NULL));
    CHECK(gradgradcheck("unfold", f_unfold_cubed, 1, &x, NULL));
    em_release(x);
}

static em_tensor *f_take_along(em_tensor *const *in, const void *c)
{
    em_tensor *idx = tt(EM_I64, SHAPE(2, 2), (const double[]){2, 0, 1, 1});
    em_tensor *y = em_take_along_dim(in[0], idx, 1);
    em_release(idx);
    return y;
}

TEST(gradcheck_take_along_dim)
{
    em_tensor *x = leaf(SHAPE(2, 3), -1, 1);
    CHECK(gradcheck("take_along_dim", f_take_along, 1, &x, NULL));
    GRAD_COVER(EM_OP_take_along_dim);
    em_release(x);
}
