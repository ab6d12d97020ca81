/* Autograd through in-place writes into views (Note [In-place on views]):
 * the root's history rebased onto CopySlices, views' histories regenerated
 * after their root was written, and the writes PyTorch refuses. Expected
 * node names and gradients are PyTorch 1.13's. */
#include "test.h"

static em_tensor *sum_all(const em_tensor *t) { return em_sum(t, 0, NULL, false, EM_DTYPE_NONE); }
/* y, or NULL (releasing y) when the in-place step before failed */
static em_tensor *unless_failed(em_status st, em_tensor *y)
{
    if (st == EM_OK) return y;
    em_release(y);
    return NULL;
}
static bool equals(const em_tensor *t, const double *want, int n)
{
    if (!t || em_numel(t) != n) return false;
    for (int i = 0; i < n; i++)
        if (fabs(tval(t, i) - want[i]) > 1e-12) return false;
    return true;
}

/* ---- gradchecks: each builds a root from in[0] and writes a view of it ---- */
/* x = clone(a); x[0:2] *= w; -> x */
static em_tensor *f_slice_mul(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *v = em_slice(x, 0, 0, 2, 1);
    em_status st = em_mul_(v, in[1]);
    em_release(v);
    return unless_failed(st, x);
}

/* x = clone(a) (3, 4); x[1] += w; -> x * x (the root used after the write) */
static em_tensor *f_select_add(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *v = em_select(x, 0, 1);
    em_status st = em_add_(v, in[1], 2);
    em_tensor *y = em_mul(x, x);
    RELEASE(x, v);
    return unless_failed(st, y);
}

/* x = zeros(4, 3) (no history); x.t().copy_(a); -> x * b: the view write
 * gives the root its history */
static em_tensor *f_transpose_copy(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_zeros(SHAPE(4, 3), EM_F64), *v = em_transpose(x, 0, 1);
    em_status st = em_copy_(v, in[0]);
    em_tensor *y = em_mul(x, in[1]);
    RELEASE(x, v);
    return unless_failed(st, y);
}

/* x = clone(a) (3, 3); x.diagonal().zero_(); -> exp(x): no gradient reaches
 * the diagonal */
static em_tensor *f_diagonal_zero(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *d = em_diagonal(x, 0, 0, 1);
    em_status st = em_zero_(d);
    em_tensor *y = em_exp(x);
    RELEASE(x, d);
    return unless_failed(st, y);
}

/* x = clone(a) (3, 4); x[:, 1:3].masked_fill_(mask, 0.5); -> x * x */
static em_tensor *f_masked_fill(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *v = em_slice(x, 1, 1, 3, 1);
    em_tensor *mask = tt(EM_BOOL, SHAPE(3, 2), (const double[]){1, 0, 0, 1, 1, 1});
    em_status st = em_masked_fill_(v, mask, 0.5);
    em_tensor *y = em_mul(x, x);
    RELEASE(x, v, mask);
    return unless_failed(st, y);
}

/* a view of a view: x = clone(a) (4, 4); x[1:3][:, 2] *= w (2) */
static em_tensor *f_chained(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *v = em_slice(x, 0, 1, 3, 1), *u = em_select(v, 1, 2);
    em_status st = em_mul_(u, in[1]);
    em_tensor *s = em_sin(v), *uc = em_unsqueeze(u, 1), *y = em_add(s, uc, 1); /* the written views used after */
    RELEASE(x, v, u, s, uc);
    return unless_failed(st, y);
}

/* x = clone(a) (4); v = x[0:2]; x *= w (4) (the root written); -> exp(v)
 * through v's regenerated history */
static em_tensor *f_root_written(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *v = em_slice(x, 0, 0, 2, 1);
    em_status st = em_mul_(x, in[1]);
    em_tensor *y = em_exp(v);
    RELEASE(x, v);
    return unless_failed(st, y);
}

/* overlapping views of one root: x[0:3] *= w (3); -> x[2:4] ** 2, and the
 * write reads another view of its root: x[0:2] += x[2:4] * 3 */
static em_tensor *f_sibling(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *a = em_slice(x, 0, 0, 3, 1), *b = em_slice(x, 0, 2, 4, 1);
    em_tensor *lo = em_slice(x, 0, 0, 2, 1), *hi = em_slice(x, 0, 2, 4, 1);
    em_status st = em_mul_(a, in[1]);
    if (st == EM_OK) st = em_add_(lo, hi, 3);
    em_tensor *y = em_mul(b, b);
    RELEASE(x, a, b, lo, hi);
    return unless_failed(st, y);
}

/* a view written in place with itself and through out=: x[0:2].mul_(x[0:2]);
 * torch.mul(w, 2, out=x[2:4]) */
static em_tensor *f_self_and_out(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *v = em_slice(x, 0, 0, 2, 1), *o = em_slice(x, 0, 2, 4, 1);
    em_tensor *two = em_scalar_float(2);
    em_status st = em_mul_(v, v);
    if (st == EM_OK) st = em_mul_out(o, in[1], two);
    em_tensor *y = em_mul(x, x);
    RELEASE(v, o, two, x);
    return unless_failed(st, y);
}

TEST(gradcheck_inplace_on_views)
{
    em_tensor *a4 = leaf(SHAPE(4), -1, 1), *w2 = leaf(SHAPE(2), -1, 1), *w4 = leaf(SHAPE(4), 0.5, 1.5);
    em_tensor *a34 = leaf(SHAPE(3, 4), -1, 1), *b43 = leaf(SHAPE(4, 3), -1, 1), *a33 = leaf(SHAPE(3, 3), -1, 1);
    em_tensor *a44 = leaf(SHAPE(4, 4), -1, 1), *w3 = leaf(SHAPE(3), -1, 1);
    CHECK(gradcheck("slice mul_", f_slice_mul, 2, (em_tensor *[]){a4, w2}, NULL));
    CHECK(gradcheck("select add_", f_select_add, 2, (em_tensor *[]){a34, w4}, NULL));
    CHECK(gradcheck("transpose copy_", f_transpose_copy, 2, (em_tensor *[]){a34, b43}, NULL));
    CHECK(gradcheck("diagonal zero_", f_diagonal_zero, 1, &a33, NULL));
    CHECK(gradcheck("masked_fill_", f_masked_fill, 1, &a34, NULL));
    CHECK(gradcheck("view of a view", f_chained, 2, (em_tensor *[]){a44, w2}, NULL));
    CHECK(gradcheck("root written", f_root_written, 2, (em_tensor *[]){a4, w4}, NULL));
    CHECK(gradcheck("sibling views", f_sibling, 2, (em_tensor *[]){a4, w3}, NULL));
    CHECK(gradcheck("self and out=", f_self_and_out, 2, (em_tensor *[]){a4, w2}, NULL));
    CHECK(gradgradcheck("slice mul_", f_slice_mul, 2, (em_tensor *[]){a4, w2}, NULL));
    CHECK(gradgradcheck("select add_", f_select_add, 2, (em_tensor *[]){a34, w4}, NULL));
    CHECK(gradgradcheck("root written", f_root_written, 2, (em_tensor *[]){a4, w4}, NULL));
    RELEASE(a4, w2, w4, a34, b43, a33, a44, w3);
}

static const char *fn_name(const em_tensor *t) { return em_grad_fn(t) ? em_node_name(em_grad_fn(t)) : ""; }

/* x = leaf.clone(); x[0:2].mul_(w); x.sum().backward(): PyTorch gives
 * leaf.grad = [w0, w1, 1, 1], w.grad = leaf[0:2], x.grad_fn CopySlices,
 * the view's AsStridedBackward0 */
TEST(inplace_view_graph_and_values)
{
    em_tensor *l = tt(EM_F64, SHAPE(4), (const double[]){1, 2, 3, 4}), *w = tt(EM_F64, SHAPE(2), (const double[]){5, 6});
    CHECK(em_set_requires_grad(l, true) == EM_OK && em_set_requires_grad(w, true) == EM_OK);
    em_tensor *x = em_clone(l), *v = em_slice(x, 0, 0, 2, 1);
    CHECK(!strcmp(fn_name(v), "ViewBackward0"));
    CHECK(em_mul_(v, w) == EM_OK);
    CHECK(!strcmp(fn_name(x), "CopySlices") && !strcmp(fn_name(v), "AsStridedBackward0"));
    em_tensor *s = sum_all(x);
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    em_tensor *gl = em_get_grad(l), *gw = em_get_grad(w);
    CHECK(equals(gl, (const double[]){5, 6, 1, 1}, 4) && equals(gw, (const double[]){1, 2}, 2));
    RELEASE(l, w, x, v, s, gl, gw);

    /* x = zeros(3); x[1:].copy_(w): x requires grad now, through CopySlices;
     * another view made before the write follows */
    w = leaf(SHAPE(2), -1, 1);
    x = em_zeros(SHAPE(3), EM_F64);
    v = em_slice(x, 0, 1, 3, 1);
    em_tensor *early = em_slice(x, 0, 0, 2, 1);
    CHECK(!em_requires_grad(early));
    CHECK(em_copy_(v, w) == EM_OK);
    CHECK(em_requires_grad(x) && !strcmp(fn_name(x), "CopySlices") && !strcmp(fn_name(v), "AsStridedBackward0"));
    CHECK(em_requires_grad(early) && !strcmp(fn_name(early), "AsStridedBackward0"));
    s = sum_all(early); /* d/dw sum(x[0:2]) = [1, 0] */
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    gw = em_get_grad(w);
    CHECK(equals(gw, (const double[]){1, 0}, 2));
    RELEASE(w, x, v, early, s, gw);
}

/* Note [In-place on views]: the root written while recorded views of it
 * live; the views' histories are regenerated, not silently stale */
TEST(inplace_on_root_regenerates_views)
{
    em_tensor *l = tt(EM_F64, SHAPE(3), (const double[]){1, 2, 3});
    CHECK(em_set_requires_grad(l, true) == EM_OK);
    em_tensor *x = em_clone(l), *v = em_slice(x, 0, 1, 3, 1), *three = em_scalar_float(3);
    em_node *before = em_grad_fn(v);
    CHECK(em_mul_(x, three) == EM_OK);
    CHECK(em_grad_fn(v) != before && !strcmp(fn_name(v), "AsStridedBackward0"));
    em_tensor *s = sum_all(v); /* d/dl sum(3 l[1:]) = [0, 3, 3] */
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    em_tensor *g = em_get_grad(l);
    CHECK(equals(g, (const double[]){0, 3, 3}, 3));
    RELEASE(s, g);
    /* fill_ is recorded, as PyTorch's: the root and its views keep a history
     * that hands the overwritten values a zero gradient */
    em_set_grad(l, NULL);
    CHECK(em_fill_(x, 1) == EM_OK && em_requires_grad(v) && em_requires_grad(x));
    em_tensor *y = em_clone(l), *w = em_slice(y, 0, 1, 3, 1);
    CHECK(em_fill_(y, 1) == EM_OK && !strcmp(fn_name(w), "AsStridedBackward0"));
    s = sum_all(w);
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    g = em_get_grad(l);
    CHECK(equals(g, (const double[]){0, 0, 0}, 3));
    GRAD_COVER(EM_OP_fill);
    RELEASE(s, g, y, w, l, x, v, three);
}

TEST(inplace_on_views_refused_or_checked)
{
    /* a view of a leaf that requires grad (PyTorch's RuntimeError) */
    em_tensor *l = leaf(SHAPE(4), -1, 1), *v = em_slice(l, 0, 0, 2, 1), *two = em_scalar_float(2);
    CHECK_ERR(em_mul_(v, two), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "a view of a leaf Variable that requires grad is being used in an in-place"));
    CHECK_ERR(em_zero_(v), EM_ERR_RUNTIME);
    RELEASE(v);
    /* a saved view whose root is written: the version check fires */
    em_tensor *x = em_clone(l);
    v = em_slice(x, 0, 0, 2, 1);
    em_tensor *y = em_mul(v, v), *s = sum_all(y);
    CHECK(em_mul_(x, two) == EM_OK);
    CHECK_ERR(em_backward(1, &s, NULL, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "modified by an inplace operation"));
    RELEASE(x, v, y, s);
    /* a write through a view after its node saved the root */
    x = em_clone(l);
    y = em_mul(x, x);
    s = sum_all(y);
    v = em_select(x, 0, 3);
    CHECK(em_add_(v, two, 1) == EM_OK);
    CHECK_ERR(em_backward(1, &s, NULL, false, false, 0, NULL), EM_ERR_RUNTIME);
    RELEASE(x, v, y, s);
    /* the root's new history reaches a node that saved a view of it (no
     * reference cycle: ASan's leak check), and the version check fires */
    x = em_clone(l);
    v = em_slice(x, 0, 0, 2, 1);
    y = em_mul(v, v);
    em_tensor *hi = em_slice(x, 0, 2, 4, 1);
    CHECK(em_copy_(hi, y) == EM_OK && !strcmp(fn_name(x), "CopySlices"));
    s = sum_all(x);
    CHECK_ERR(em_backward(1, &s, NULL, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "modified by an inplace operation"));
    RELEASE(x, v, y, hi, s, l, two);
}

/* Note [In-place into shared memory]: a detached alias is no view: a write
 * that would give the memory history without it is still refused */
TEST(inplace_history_into_detached_memory)
{
    em_tensor *w = leaf(SHAPE(2), 0.5, 1), *x = em_zeros(SHAPE(2), EM_F64), *d = em_detach(x);
    em_tensor *v = em_slice(x, 0, 0, 2, 1);
    CHECK_ERR(em_mul_(v, w), EM_ERR_NOT_IMPLEMENTED); /* d would miss w's gradient */
    CHECK_ERR(em_add_(x, w, 1), EM_ERR_NOT_IMPLEMENTED);
    CHECK_ERR(em_add_(d, w, 1), EM_ERR_NOT_IMPLEMENTED);
    CHECK(tval(x, 0) == 0 && !em_requires_grad(x));
    em_release(d);
    CHECK(em_mul_(v, w) == EM_OK && em_requires_grad(x)); /* only the view family: recorded */
    RELEASE(w, x, v);
}

/* outputs of split/chunk/unbind (and views of them) may not be written in
 * place when grad is involved (PyTorch's RuntimeError); without grad they may */
TEST(inplace_on_multi_output_views)
{
    em_tensor *l = leaf(SHAPE(4), -1, 1), *x = em_clone(l), *w = leaf(SHAPE(2), -1, 1), *parts[4];
    int n = 4;
    CHECK(em_split(x, 2, 0, parts, &n) == EM_OK && n == 2);
    CHECK_ERR(em_mul_(parts[0], w), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "returns multiple views"));
    em_tensor *sub = em_slice(parts[1], 0, 0, 1, 1);
    CHECK_ERR(em_zero_(sub), EM_ERR_RUNTIME);
    RELEASE(parts[0], parts[1], sub);
    n = 4;
    CHECK(em_unbind(x, 0, parts, &n) == EM_OK && n == 4);
    CHECK_ERR(em_neg_(parts[2]), EM_ERR_RUNTIME);
    for (int i = 0; i < 4; i++) em_release(parts[i]);
    em_tensor *plain = em_zeros(SHAPE(4), EM_F64);
    n = 4;
    CHECK(em_chunk(plain, 2, 0, parts, &n) == EM_OK && n == 2);
    CHECK_ERR(em_mul_(parts[0], w), EM_ERR_RUNTIME); /* w requires grad */
    CHECK(em_fill_(parts[1], 3) == EM_OK && tval(plain, 3) == 3); /* nothing requires grad */
    RELEASE(parts[0], parts[1], plain, l, x, w);
}
