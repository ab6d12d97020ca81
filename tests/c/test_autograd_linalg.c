/* Autograd of the linear algebra ops: float64 gradchecks of every product
 * (mm, bmm, mv, dot, addmm, addmv, baddbmm, addbmm), trace, and the
 * composites differentiated through them (matmul in each broadcasting case,
 * outer, kron, vdot, tensordot, einsum); the recorded node is the one on the
 * returned tensor; in-place and out= forms; second derivatives. */
#include "test.h"

/* ---- the products and trace ------------------------------------------------- */
static em_tensor *f_mm(em_tensor *const *in, const void *c) { return em_mm(in[0], in[1]); }
static em_tensor *f_bmm(em_tensor *const *in, const void *c) { return em_bmm(in[0], in[1]); }
static em_tensor *f_mv(em_tensor *const *in, const void *c) { return em_mv(in[0], in[1]); }
static em_tensor *f_dot(em_tensor *const *in, const void *c) { return em_dot(in[0], in[1]); }
static em_tensor *f_vdot(em_tensor *const *in, const void *c) { return em_vdot(in[0], in[1]); }
static em_tensor *f_addmm(em_tensor *const *in, const void *c) { return em_addmm(in[0], in[1], in[2], 0.5, -1.5); }
static em_tensor *f_addmv(em_tensor *const *in, const void *c) { return em_addmv(in[0], in[1], in[2], 2, 0.5); }
static em_tensor *f_baddbmm(em_tensor *const *in, const void *c) { return em_baddbmm(in[0], in[1], in[2], -1, 2); }
static em_tensor *f_addbmm(em_tensor *const *in, const void *c) { return em_addbmm(in[0], in[1], in[2], 1, 1); }
static em_tensor *f_addmm_beta0(em_tensor *const *in, const void *c) { return em_addmm(in[0], in[1], in[2], 0, 1); }
static em_tensor *f_trace(em_tensor *const *in, const void *c) { return em_trace(in[0]); }

/* f on transposed views of its two last inputs: non-contiguous operands */
static em_tensor *f_mm_views(em_tensor *const *in, const void *c)
{
    em_tensor *a = em_t(in[0]), *b = em_slice(in[1], 1, 0, 4, 2), *r = em_mm(a, b);
    RELEASE(a, b);
    return r;
}
static em_tensor *f_bmm_views(em_tensor *const *in, const void *c)
{
    em_tensor *a = em_transpose(in[0], 1, 2), *r = em_bmm(a, in[1]);
    em_release(a);
    return r;
}
static em_tensor *f_mv_views(em_tensor *const *in, const void *c)
{
    em_tensor *a = em_t(in[0]), *v = em_slice(in[1], 0, 0, 6, 2), *r = em_mv(a, v);
    RELEASE(a, v);
    return r;
}

typedef struct op_case {
    const char *name;
    fn_t f;
    int nin;
    int ndim[3];
    int64_t sizes[3][4];
} op_case;

TEST(gradcheck_linalg_products)
{
    static const op_case cases[] = {
        {"mm", f_mm, 2, {2, 2}, {{3, 4}, {4, 5}}},
        {"mm of views", f_mm_views, 2, {2, 2}, {{4, 3}, {4, 4}}},
        {"mm (0, k) x (k, m)", f_mm, 2, {2, 2}, {{0, 3}, {3, 2}}},
        {"bmm", f_bmm, 2, {3, 3}, {{2, 3, 4}, {2, 4, 2}}},
        {"bmm of a transposed view", f_bmm_views, 2, {3, 3}, {{2, 4, 3}, {2, 4, 2}}},
        {"mv", f_mv, 2, {2, 1}, {{3, 4}, {4}}},
        {"mv of views", f_mv_views, 2, {2, 1}, {{3, 4}, {6}}},
        {"dot", f_dot, 2, {1, 1}, {{5}, {5}}},
        {"vdot", f_vdot, 2, {1, 1}, {{4}, {4}}},
        {"addmm, input broadcast", f_addmm, 3, {1, 2, 2}, {{5}, {3, 4}, {4, 5}}},
        {"addmm, beta 0", f_addmm_beta0, 3, {2, 2, 2}, {{3, 2}, {3, 4}, {4, 2}}},
        {"addmv, 0-d input", f_addmv, 3, {0, 2, 1}, {{0}, {3, 4}, {4}}},
        {"addmv", f_addmv, 3, {1, 2, 1}, {{3}, {3, 4}, {4}}},
        {"baddbmm, input broadcast", f_baddbmm, 3, {2, 3, 3}, {{1, 2}, {2, 3, 4}, {2, 4, 2}}},
        {"addbmm, input broadcast", f_addbmm, 3, {2, 3, 3}, {{3, 1}, {2, 3, 4}, {2, 4, 2}}},
        {"trace", f_trace, 1, {2}, {{3, 4}}},
        {"trace, tall", f_trace, 1, {2}, {{4, 2}}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const op_case *c = &cases[k];
        em_tensor *in[3] = {NULL, NULL, NULL};
        for (int i = 0; i < c->nin; i++) in[i] = leaf(c->ndim[i], c->sizes[i], -1, 1);
        bool ok = gradcheck(c->name, c->f, c->nin, in, NULL);
        RELEASE(in[0], in[1], in[2]);
        CHECK_MSG(ok, "%s", c->name);
    }
    GRAD_COVER(EM_OP_mm, EM_OP_bmm, EM_OP_mv, EM_OP_dot, EM_OP_vdot, EM_OP_addmm, EM_OP_addmv, EM_OP_baddbmm,
          EM_OP_addbmm, EM_OP_trace);
}

/* ---- matmul: every case by dimension, broadcast batch dims ----------------- */
static em_tensor *f_matmul(em_tensor *const *in, const void *c) { return em_matmul(in[0], in[1]); }
/* matmul with a transposed second operand (a non-contiguous batched view) */
static em_tensor *f_matmul_bt(em_tensor *const *in, const void *c)
{
    em_tensor *b = em_transpose(in[1], -1, -2), *r = em_matmul(in[0], b);
    em_release(b);
    return r;
}

TEST(gradcheck_matmul_broadcasting)
{
    static const op_case cases[] = {
        {"(k) x (k)", f_matmul, 2, {1, 1}, {{4}, {4}}},
        {"(n, k) x (k)", f_matmul, 2, {2, 1}, {{3, 4}, {4}}},
        {"(k) x (k, m)", f_matmul, 2, {1, 2}, {{4}, {4, 3}}},
        {"(n, k) x (k, m)", f_matmul, 2, {2, 2}, {{2, 4}, {4, 3}}},
        {"(b, n, k) x (k, m)", f_matmul, 2, {3, 2}, {{2, 3, 4}, {4, 2}}},
        {"(n, k) x (b, k, m)", f_matmul, 2, {2, 3}, {{3, 4}, {2, 4, 2}}},
        {"(k) x (b, k, m)", f_matmul, 2, {1, 3}, {{4}, {2, 4, 3}}},
        {"(b, n, k) x (k)", f_matmul, 2, {3, 1}, {{2, 3, 4}, {4}}},
        {"(b, n, k) x (b, k, m)", f_matmul, 2, {3, 3}, {{2, 3, 4}, {2, 4, 2}}},
        {"(2, 1, n, k) x (3, k, m)", f_matmul, 2, {4, 3}, {{2, 1, 3, 4}, {3, 4, 2}}},
        {"(1, n, k) x (2, 1, k, m)", f_matmul, 2, {3, 4}, {{1, 2, 3}, {2, 1, 3, 2}}},
        {"(k) x (2, 3, k, m)", f_matmul, 2, {1, 4}, {{3}, {2, 3, 3, 2}}},
        {"(2, 1, n, k) x (k)", f_matmul, 2, {4, 1}, {{2, 1, 2, 3}, {3}}},
        {"(b, n, k) x (m, k)^T", f_matmul_bt, 2, {3, 2}, {{2, 3, 4}, {2, 4}}},
        {"(2, 1, n, k) x (3, m, k)^T", f_matmul_bt, 2, {4, 3}, {{2, 1, 3, 4}, {3, 2, 4}}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const op_case *c = &cases[k];
        em_tensor *in[2] = {leaf(c->ndim[0], c->sizes[0], -1, 1), leaf(c->ndim[1], c->sizes[1], -1, 1)};
        bool ok = gradcheck(c->name, c->f, 2, in, NULL);
        RELEASE(in[0], in[1]);
        CHECK_MSG(ok, "matmul %s", c->name);
    }
    GRAD_COVER(EM_OP_matmul);
}

/* The returned tensor carries the product's node (not an internal view of it). */
TEST(linalg_results_carry_their_nodes)
{
    em_tensor *m = leaf(SHAPE(3, 4), -1, 1), *v = leaf(SHAPE(4), -1, 1), *b = leaf(SHAPE(2, 3, 4), -1, 1);
    em_tensor *w = leaf(SHAPE(4, 2), -1, 1), *x = leaf(SHAPE(3), -1, 1);
    struct { em_tensor *r; const char *node; } cases[] = {
        {em_dot(v, v), "DotBackward0"},           {em_mv(m, v), "MvBackward0"},
        {em_matmul(m, v), "MvBackward0"},         {em_matmul(v, w), "MmBackward0"},
        {em_matmul(b, w), "BmmBackward0"},        {em_matmul(x, b), "BmmBackward0"},
        {em_addmv(x, m, v, 1, 1), "AddmvBackward0"}, {em_trace(m), "TraceBackward0"},
    };
    bool ok = true;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        em_node *n = cases[k].r ? em_grad_fn(cases[k].r) : NULL;
        if (!n || strcmp(em_node_name(n), cases[k].node)) {
            fprintf(stderr, "  case %zu: %s, expected %s\n", k, n ? em_node_name(n) : "no node", cases[k].node);
            ok = false;
        }
        em_release(cases[k].r);
    }
    RELEASE(m, v, b, w, x);
    CHECK(ok);
}

/* ---- in-place and out= forms ------------------------------------------------ */
/* s = 2 * in[0] (a non-leaf), then s.addmm_(in[1], in[2]) */
static em_tensor *f_addmm_inplace(em_tensor *const *in, const void *c)
{
    em_tensor *two = em_scalar_float(2), *s = em_mul(in[0], two);
    em_release(two);
    if (s && em_addmm_(s, in[1], in[2], 0.5, 2)) em_release(s), s = NULL;
    return s;
}
static em_tensor *f_matmul_out(em_tensor *const *in, const void *c)
{
    em_tensor *out = em_empty(SHAPE(0), EM_F64);
    if (em_matmul_out(out, in[0], in[1])) em_release(out), out = NULL;
    return out;
}

TEST(gradcheck_linalg_inplace_and_out)
{
    em_tensor *in[3] = {leaf(SHAPE(3, 2), -1, 1), leaf(SHAPE(3, 4), -1, 1), leaf(SHAPE(4, 2), -1, 1)};
    CHECK(gradcheck("addmm_", f_addmm_inplace, 3, in, NULL));
    /* s.baddbmm_(s, s): the operands saved for backward are overwritten (as PyTorch) */
    em_tensor *sq = leaf(SHAPE(2, 3, 3), -1, 1), *s = em_mul(sq, sq), *ss = NULL;
    CHECK(s && em_baddbmm_(s, s, s, 1, 1) == EM_OK && !strcmp(em_node_name(em_grad_fn(s)), "CopyBackward0"));
    CHECK((ss = em_sum(s, 0, NULL, false, EM_DTYPE_NONE)) != NULL);
    CHECK_ERR(em_backward(1, &ss, NULL, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "modified by an inplace operation"));
    RELEASE(s, ss);
    em_tensor *bv[2] = {leaf(SHAPE(2, 3, 4), -1, 1), leaf(SHAPE(4), -1, 1)};
    CHECK(gradcheck("matmul out=", f_matmul_out, 2, bv, NULL));
    /* out= whose input term is a transposed view of out itself: read before written */
    em_tensor *x = trand(EM_F64, SHAPE(3, 3), -1, 1), *x0 = em_clone(x), *xt = em_t(x), *x0t = em_t(x0);
    em_tensor *w = trand(EM_F64, SHAPE(3, 3), -1, 1), *want = em_addmm(x0t, w, w, 0.5, 2);
    bool same = false;
    CHECK(em_addmm_out(x, xt, w, w, 0.5, 2) == EM_OK && em_allclose(x, want, 1e-12, 1e-12, false, &same) == EM_OK && same);
    RELEASE(x, x0, xt, x0t, w, want);
    /* in place on a leaf that requires grad is refused */
    em_tensor *m = em_ones(SHAPE(3, 3), EM_F64), *l = leaf(SHAPE(3, 3), -1, 1);
    CHECK_ERR(em_addmm_(l, m, m, 1, 1), EM_ERR_RUNTIME);
    RELEASE(in[0], in[1], in[2], sq, bv[0], bv[1], m, l);
}

/* ---- composites: outer, kron, tensordot, einsum ------------------------------ */
static em_tensor *f_outer(em_tensor *const *in, const void *c) { return em_outer(in[0], in[1]); }
static em_tensor *f_kron(em_tensor *const *in, const void *c) { return em_kron(in[0], in[1]); }
static em_tensor *f_tensordot2(em_tensor *const *in, const void *c) { return em_tensordot(in[0], in[1], 2); }
static em_tensor *f_tensordot_dims(em_tensor *const *in, const void *c)
{
    return em_tensordot_dims(in[0], in[1], 2, (const int[]){0, 2}, (const int[]){1, 0});
}
static em_tensor *f_einsum(em_tensor *const *in, const void *c)
{
    const char *eq = c;
    int n = 1;
    for (const char *p = eq; *p && *p != '-'; p++) n += *p == ',';
    return em_einsum(eq, n, (const em_tensor *const *)in);
}

TEST(gradcheck_linalg_composites)
{
    static const op_case cases[] = {
        {"outer", f_outer, 2, {1, 1}, {{3}, {4}}},
        {"kron", f_kron, 2, {2, 1}, {{2, 3}, {2}}},
        {"tensordot dims=2", f_tensordot2, 2, {3, 3}, {{2, 3, 4}, {3, 4, 2}}},
        {"tensordot explicit dims", f_tensordot_dims, 2, {3, 2}, {{3, 2, 4}, {4, 3}}},
        {"tensordot, a size-1 pair", f_tensordot_dims, 2, {3, 2}, {{3, 2, 1}, {4, 3}}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const op_case *c = &cases[k];
        em_tensor *in[2] = {leaf(c->ndim[0], c->sizes[0], -1, 1), leaf(c->ndim[1], c->sizes[1], -1, 1)};
        bool ok = gradcheck(c->name, c->f, 2, in, NULL);
        RELEASE(in[0], in[1]);
        CHECK_MSG(ok, "%s", c->name);
    }
    static const struct { const char *eq; int nin; int ndim[3]; int64_t sizes[3][3]; } eins[] = {
        {"ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 2}}},
        {"bij,bjk->bik", 2, {3, 3}, {{2, 3, 4}, {2, 4, 2}}},
        {"ii->i", 1, {2}, {{3, 3}}},
        {"ij->", 1, {2}, {{3, 4}}},
        {"i,i->", 2, {1, 1}, {{5}, {5}}},
        {"ij->ji", 1, {2}, {{2, 3}}},
        {"i,j->ij", 2, {1, 1}, {{3}, {2}}},
        {"bij,bkj->bik", 2, {3, 3}, {{2, 3, 4}, {2, 2, 4}}},
        {"...ij,...jk->...ik", 2, {3, 2}, {{2, 3, 4}, {4, 2}}},
        {"ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 2}}},
        {"iij->j", 1, {3}, {{2, 2, 3}}},
    };
    for (size_t k = 0; k < sizeof eins / sizeof *eins; k++) {
        em_tensor *in[3] = {NULL, NULL, NULL};
        for (int i = 0; i < eins[k].nin; i++) in[i] = leaf(eins[k].ndim[i], eins[k].sizes[i], -1, 1);
        bool ok = gradcheck(eins[k].eq, f_einsum, eins[k].nin, in, eins[k].eq);
        RELEASE(in[0], in[1], in[2]);
        CHECK_MSG(ok, "einsum %s", eins[k].eq);
    }
    GRAD_COVER(EM_OP_outer, EM_OP_kron, EM_OP_tensordot, EM_OP_einsum);
}

/* ---- second derivatives (create_graph) -------------------------------------- */
/* d/d in[0] of sum(f(in)^2), computed with create_graph so that gradcheck
 * differentiates it again (grad mode on inside: gradcheck's numeric passes
 * run with it off). */
typedef struct grad_of {
    fn_t f;
} grad_of;

static em_tensor *f_grad_of_square(em_tensor *const *in, const void *ctx)
{
    bool mode = em_is_grad_enabled();
    em_set_grad_enabled(true);
    em_tensor *y = ((const grad_of *)ctx)->f(in, NULL), *y2 = y ? em_mul(y, y) : NULL;
    em_tensor *s = y2 ? em_sum(y2, 0, NULL, false, EM_DTYPE_NONE) : NULL, *g = NULL;
    if (s && em_autograd_grad(1, &s, NULL, 1, in, true, true, false, &g)) g = NULL;
    RELEASE(y, y2, s);
    em_set_grad_enabled(mode);
    return g;
}

TEST(linalg_second_derivatives)
{
    const grad_of mm = {f_mm}, dot = {f_dot}, matmul = {f_matmul}, addmm = {f_addmm};
    em_tensor *ab[2] = {leaf(SHAPE(3, 4), -1, 1), leaf(SHAPE(4, 2), -1, 1)};
    CHECK(gradcheck("mm, second derivative", f_grad_of_square, 2, ab, &mm));
    em_tensor *uv[2] = {leaf(SHAPE(5), -1, 1), leaf(SHAPE(5), -1, 1)};
    CHECK(gradcheck("dot, second derivative", f_grad_of_square, 2, uv, &dot));
    em_tensor *pq[2] = {leaf(SHAPE(2, 1, 3, 4), -1, 1), leaf(SHAPE(4, 3), -1, 1)};
    CHECK(gradcheck("matmul broadcast, second derivative", f_grad_of_square, 2, pq, &matmul));
    em_tensor *xmn[3] = {leaf(SHAPE(2), -1, 1), leaf(SHAPE(3, 4), -1, 1), leaf(SHAPE(4, 2), -1, 1)};
    CHECK(gradcheck("addmm, second derivative", f_grad_of_square, 3, xmn, &addmm));
    /* the gradient of mm itself, by hand: d/dA sum((AB)^2) = 2 (AB) B^T */
    em_tensor *g = f_grad_of_square(ab, &mm), *p = em_mm(ab[0], ab[1]), *bt = em_t(ab[1]), *want = em_mm(p, bt);
    CHECK(g && want && em_requires_grad(g));
    for (int64_t i = 0; i < 12; i++) CHECK(fabs(tval(g, i) - 2 * tval(want, i)) < 1e-12);
    RELEASE(ab[0], ab[1], uv[0], uv[1], pq[0], pq[1], xmn[0], xmn[1], xmn[2], g, p, bt, want);
}

/* float32 products get float32 gradients; integer products record nothing */
TEST(linalg_grad_dtypes)
{
    em_tensor *a = trand(EM_F32, SHAPE(2, 3, 4), -1, 1), *b = trand(EM_F32, SHAPE(4), -1, 1);
    em_set_requires_grad(a, true);
    em_set_requires_grad(b, true);
    em_tensor *y = em_matmul(a, b), *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE), *g[2] = {NULL, NULL};
    CHECK(s && em_autograd_grad(1, &s, NULL, 2, (em_tensor *[]){a, b}, false, false, false, g) == EM_OK);
    CHECK(em_dtype_of(g[0]) == EM_F32 && tshape_is(g[0], SHAPE(2, 3, 4)) && tshape_is(g[1], SHAPE(4)));
    /* d/db sum(a @ b) = the sum of a over its batch and row dims */
    for (int k = 0; k < 4; k++) {
        double want = 0;
        for (int i = 0; i < 6; i++) want += tval(a, i * 4 + k);
        CHECK(fabs(tval(g[1], k) - want) < 1e-5);
    }
    em_tensor *i = tints(EM_I64, SHAPE(3, 3), -3, 3), *t = em_trace(i);
    CHECK(t && !em_requires_grad(t));
    RELEASE(a, b, y, s, g[0], g[1], i, t);
}
