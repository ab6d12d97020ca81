/* Autograd of the selecting sort ops (sort, topk, kthvalue, msort),
 * advanced indexing (index, index_put) and the grid and repeat ops that
 * autograd records as compositions (meshgrid, cartesian_prod,
 * repeat_interleave): float64 gradchecks on non-contiguous inputs, ties and
 * duplicate indices, second derivatives, and the cases still refused. */
#include "test.h"

static em_tensor *ids(int ndim, const int64_t *sizes, const double *v)
{
    em_tensor *t = tt(EM_F64, ndim, sizes, v), *r = em_to_dtype(t, EM_I64);
    em_release(t);
    return r;
}

/* ---- sort, topk, kthvalue, msort ------------------------------------------------ */
/* the values of an op on in[0] (f_select_leaf) or on its transpose
 * (f_select: non-contiguous); double backward through views is not there
 * yet, so second derivatives read the leaf itself */
typedef struct select_case {
    em_op op;
    int dim;
    int64_t k;
    bool flag; /* sort: descending; topk: largest; kthvalue: keepdim */
} select_case;

static em_tensor *select_values(const em_tensor *x, const select_case *c)
{
    em_tensor *v = NULL, *i = NULL;
    switch (c->op) {
    case EM_OP_sort: em_sort(x, c->dim, c->flag, true, &v, &i); break;
    case EM_OP_topk: em_topk(x, c->k, c->dim, c->flag, true, &v, &i); break;
    case EM_OP_kthvalue: em_kthvalue(x, c->k, c->dim, c->flag, &v, &i); break;
    default: v = em_msort(x); break;
    }
    em_release(i);
    return v;
}
static em_tensor *f_select_leaf(em_tensor *const *in, const void *ctx) { return select_values(in[0], ctx); }
static em_tensor *f_select(em_tensor *const *in, const void *ctx)
{
    em_tensor *x = em_ndim(in[0]) >= 2 ? em_transpose(in[0], 0, 1) : em_retain(in[0]);
    em_tensor *v = x ? select_values(x, ctx) : NULL;
    em_release(x);
    return v;
}

TEST(gradcheck_sort_topk_kthvalue)
{
    GRAD_COVER(EM_OP_sort, EM_OP_topk, EM_OP_kthvalue, EM_OP_msort);
    em_tensor *x = leaf(SHAPE(4, 5), -1, 1), *s = leaf(SHAPE(0), -1, 1), *e = leaf(SHAPE(3, 0), -1, 1);
    const select_case cases[] = {
        {EM_OP_sort, -1, 0, false}, {EM_OP_sort, 0, 0, true},     {EM_OP_topk, 1, 2, true},
        {EM_OP_topk, 0, 3, false},  {EM_OP_topk, -1, 0, true},    {EM_OP_kthvalue, 0, 3, false},
        {EM_OP_kthvalue, 1, 4, true}, {EM_OP_msort, 0, 0, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        CHECK_MSG(gradcheck(em_ops[cases[k].op].name, f_select, 1, &x, &cases[k]), "case %zu", k);
        /* kthvalue without keepdim reshapes its result: a view, not twice differentiable yet */
        if (cases[k].op != EM_OP_kthvalue || cases[k].flag)
            CHECK_MSG(gradgradcheck(em_ops[cases[k].op].name, f_select_leaf, 1, &x, &cases[k]), "second, case %zu", k);
    }
    /* 0-d inputs (a one-element row inside) and empty ones */
    em_tensor *z = leaf(0, NULL, -1, 1);
    const select_case zcases[] = {{EM_OP_sort, 0, 0, false}, {EM_OP_topk, 0, 1, true}, {EM_OP_kthvalue, 0, 1, false},
                                  {EM_OP_kthvalue, -1, 1, true}, {EM_OP_msort, 0, 0, false}};
    for (size_t k = 0; k < sizeof zcases / sizeof *zcases; k++)
        CHECK_MSG(gradcheck("0-d", f_select, 1, &z, &zcases[k]), "0-d case %zu", k);
    CHECK(gradcheck("empty sort", f_select, 1, &s, &cases[0]));
    const select_case empty_topk = {EM_OP_topk, 0, 0, true};
    CHECK(gradcheck("empty topk", f_select, 1, &e, &empty_topk));
    RELEASE(x, s, e, z);
}

/* Ties: the gradient follows the (stable) indices, as PyTorch's. */
TEST(sort_grad_at_ties_follows_the_indices)
{
    em_tensor *x = tt(EM_F64, SHAPE(4), (const double[]){1, 1, 0, 1}), *v = NULL, *i = NULL, *g = NULL;
    CHECK(em_set_requires_grad(x, true) == EM_OK);
    em_tensor *w = tt(EM_F64, SHAPE(4), (const double[]){10, 20, 30, 40});
    CHECK(em_sort(x, 0, false, true, &v, &i) == EM_OK);
    CHECK(em_autograd_grad(1, &v, &w, 1, &x, false, false, false, &g) == EM_OK);
    CHECK(tclose(g, (const double[]){20, 30, 10, 40}, 4, 0));
    RELEASE(v, i, g);
    /* topk's largest two of the three tied ones: the first two */
    CHECK(em_topk(x, 2, 0, true, true, &v, &i) == EM_OK);
    em_tensor *w2 = tt(EM_F64, SHAPE(2), (const double[]){1, 2});
    CHECK(em_autograd_grad(1, &v, &w2, 1, &x, false, false, false, &g) == EM_OK);
    CHECK(tclose(g, (const double[]){1, 2, 0, 0}, 4, 0));
    RELEASE(x, w, w2, v, i, g);
}

/* out= forms record into the given tensors */
TEST(sort_out_records_into_out)
{
    em_tensor *x = leaf(SHAPE(3, 2), -1, 1), *v = em_empty(SHAPE(1), EM_F64), *i = em_empty(SHAPE(1), EM_I64);
    CHECK(em_kthvalue_out(v, i, x, 2, 0, false) == EM_OK);
    CHECK(em_requires_grad(v) && !em_requires_grad(i));
    em_tensor *g = NULL, *ones = em_ones(SHAPE(2), EM_F64);
    CHECK(em_autograd_grad(1, &v, &ones, 1, &x, false, false, false, &g) == EM_OK);
    double sum = 0;
    for (int k = 0; k < 6; k++) sum += tval(g, k);
    CHECK(sum == 2);
    RELEASE(x, v, i, g, ones);
    /* kthvalue's values may not alias the input, as PyTorch (resizing them
     * reshaped the input under the kernel) */
    x = trand(EM_F64, SHAPE(10), -1, 1);
    i = em_empty(SHAPE(0), EM_I64);
    CHECK_ERR(em_kthvalue_out(x, i, x, 5, 0, false), EM_ERR_RUNTIME);
    CHECK(tshape_is(x, SHAPE(10)));
    RELEASE(x, i);
}

/* ---- index, index_put --------------------------------------------------------- */
typedef struct adv_ctx {
    int n;
    const em_tensor *idx[4];
    bool accumulate;
} adv_ctx;

/* self[idx] of in[0] with dims (1, 0, 2) */
static em_tensor *f_index(em_tensor *const *in, const void *ctx)
{
    const adv_ctx *c = ctx;
    em_tensor *x = em_transpose(in[0], 0, 1), *r = x ? em_index(x, c->n, c->idx) : NULL;
    em_release(x);
    return r;
}
static em_tensor *f_index_leaf(em_tensor *const *in, const void *ctx)
{
    const adv_ctx *c = ctx;
    return em_index(in[0], c->n, c->idx);
}
/* index_put(self, idx, values) with self = in[0]^T (non-contiguous), values in[1] */
static em_tensor *f_index_put(em_tensor *const *in, const void *ctx)
{
    const adv_ctx *c = ctx;
    em_tensor *x = em_transpose(in[0], 0, 1), *r = x ? em_index_put(x, c->n, c->idx, in[1], c->accumulate) : NULL;
    em_release(x);
    return r;
}

static em_tensor *f_index_put_leaf(em_tensor *const *in, const void *ctx)
{
    const adv_ctx *c = ctx;
    return em_index_put(in[0], c->n, c->idx, in[1], c->accumulate);
}

TEST(gradcheck_index_and_index_put)
{
    GRAD_COVER(EM_OP_index, EM_OP_index_put);
    /* after the transpose x is (3, 4, 2) */
    em_tensor *x = leaf(SHAPE(4, 3, 2), -1, 1), *xl = leaf(SHAPE(3, 4, 2), -1, 1);
    em_tensor *i = ids(SHAPE(5), (const double[]){2, 0, 2, -1, 1}), *j = ids(SHAPE(2, 1), (const double[]){1, 0});
    em_tensor *mf = tt(EM_F64, SHAPE(3, 4), (const double[]){1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1});
    em_tensor *mask = em_to_dtype(mf, EM_BOOL);
    adv_ctx rows = {1, {i}}, apart = {3, {i, NULL, j}}, both = {2, {NULL, i}}, masked = {1, {mask}};
    const adv_ctx *reads[] = {&rows, &apart, &both, &masked};
    for (size_t k = 0; k < 4; k++) {
        CHECK_MSG(gradcheck("index", f_index, 1, &x, reads[k]), "index case %zu", k);
        CHECK_MSG(gradgradcheck("index", f_index_leaf, 1, &xl, reads[k]), "index second, case %zu", k);
    }
    /* index_put: values broadcast from (4, 1), (1, 4) and (2,); duplicate
     * indices only when accumulating (an overwrite's winner is not
     * differentiable: PyTorch's gradient gives each duplicate the slot's) */
    em_tensor *u = ids(SHAPE(2), (const double[]){2, 0});
    em_tensor *v1 = leaf(SHAPE(4, 1), -1, 1), *v2 = leaf(SHAPE(1, 4), -1, 1), *vm = leaf(SHAPE(2), -1, 1);
    for (int acc = 0; acc < 2; acc++) {
        const em_tensor *rows_idx = acc ? i : u;
        adv_ctx put_rows = {1, {rows_idx}, acc}, put_apart = {3, {rows_idx, NULL, j}, acc}, put_masked = {1, {mask}, acc};
        em_tensor *in1[] = {x, v1}, *in2[] = {x, v2}, *in3[] = {x, vm};
        CHECK_MSG(gradcheck("index_put rows", f_index_put, 2, in1, &put_rows), "accumulate %d", acc);
        CHECK_MSG(gradcheck("index_put apart", f_index_put, 2, in2, &put_apart), "accumulate %d", acc);
        CHECK_MSG(gradcheck("index_put mask", f_index_put, 2, in3, &put_masked), "accumulate %d", acc);
        em_tensor *leaf_in[] = {xl, v1};
        CHECK_MSG(gradgradcheck("index_put rows", f_index_put_leaf, 2, leaf_in, &put_rows), "accumulate %d", acc);
    }
    RELEASE(x, xl, i, j, u, mf, mask, v1, v2, vm);
}

/* index_put_ in place on a non-leaf: self's history continues through it */
TEST(index_put_in_place_records)
{
    em_tensor *x = leaf(SHAPE(3, 2), -1, 1), *v = leaf(SHAPE(2), -1, 1), *i = ids(SHAPE(1), (const double[]){1});
    em_tensor *y = em_mul(x, x), *g[2] = {0};
    const em_tensor *idx[] = {i};
    CHECK(em_index_put_(y, 1, idx, v, false) == EM_OK);
    em_tensor *ins[] = {x, v}, *ones = em_ones(SHAPE(3, 2), EM_F64);
    CHECK(em_autograd_grad(1, &y, &ones, 2, ins, false, false, false, g) == EM_OK);
    /* row 1 of x was overwritten */
    CHECK(tval(g[0], 2) == 0 && tval(g[0], 3) == 0 && tval(g[0], 0) == 2 * tval(x, 0));
    CHECK(tval(g[1], 0) == 1 && tval(g[1], 1) == 1);
    /* a leaf that requires grad cannot be written */
    CHECK_ERR(em_index_put_(x, 1, idx, v, false), EM_ERR_RUNTIME);
    RELEASE(x, v, i, y, g[0], g[1], ones);
}

/* ---- meshgrid, cartesian_prod, repeat_interleave ------------------------------------ */
static em_tensor *noncontig_vec(const em_tensor *v)
{
    int64_t n = em_numel(v) / 2;
    return em_as_strided(v, 1, &n, (const int64_t[]){2}, 1);
}
/* the grids of a (6,) step view, a 0-d and a (3,) tensor, combined */
static em_tensor *f_meshgrid(em_tensor *const *in, const void *ctx)
{
    em_tensor *a = noncontig_vec(in[0]), *g[3] = {0}, *r = NULL;
    const em_tensor *ts[] = {a, in[1], in[2]};
    if (a && em_meshgrid(3, ts, ctx, g) == EM_OK) {
        em_tensor *p = em_mul(g[0], g[1]);
        r = p ? em_add(p, g[2], 2) : NULL;
        em_release(p);
    }
    RELEASE(a, g[0], g[1], g[2]);
    return r;
}
static em_tensor *f_cartesian(em_tensor *const *in, const void *ctx)
{
    em_tensor *a = noncontig_vec(in[0]), *r = NULL;
    const em_tensor *ts[] = {a, in[2], in[3]};
    if (a) r = em_cartesian_prod(3, ts);
    em_release(a);
    return r;
}
typedef struct rep_ctx {
    const em_tensor *repeats;
    int dim;
} rep_ctx;
static em_tensor *f_repeat_interleave(em_tensor *const *in, const void *ctx)
{
    const rep_ctx *c = ctx;
    em_tensor *x = em_transpose(in[0], 0, 1), *r = x ? em_repeat_interleave_tensor(x, c->repeats, c->dim, -1) : NULL;
    em_release(x);
    return r;
}
static em_tensor *f_repeat_interleave_leaf(em_tensor *const *in, const void *ctx)
{
    const rep_ctx *c = ctx;
    return em_repeat_interleave_tensor(in[0], c->repeats, c->dim, -1);
}

TEST(gradcheck_grids_and_repeat_interleave)
{
    GRAD_COVER(EM_OP_meshgrid, EM_OP_cartesian_prod, EM_OP_repeat_interleave);
    em_tensor *a = leaf(SHAPE(6), -1, 1), *s = leaf(0, NULL, -1, 1), *b = leaf(SHAPE(3), -1, 1), *c = leaf(SHAPE(2), -1, 1);
    em_tensor *grid_in[] = {a, s, b}, *cart_in[] = {a, s, b, c};
    CHECK(gradcheck("meshgrid ij", f_meshgrid, 3, grid_in, "ij"));
    CHECK(gradcheck("meshgrid xy", f_meshgrid, 3, grid_in, "xy"));
    CHECK(gradcheck("cartesian_prod", f_cartesian, 4, cart_in, NULL));
    /* the results are recorded views of the inputs */
    em_tensor *g[2] = {0};
    const em_tensor *ts[] = {b, c};
    CHECK(em_meshgrid(2, ts, "ij", g) == EM_OK && em_requires_grad(g[0]) && em_requires_grad(g[1]));
    RELEASE(g[0], g[1]);

    em_tensor *x = leaf(SHAPE(4, 3), -1, 1), *r3 = ids(SHAPE(3), (const double[]){2, 0, 3});
    em_tensor *r1 = ids(0, NULL, (const double[]){2}), *r12 = ids(SHAPE(12), (const double[]){1, 0, 2, 1, 1, 0, 3, 1, 0, 0, 2, 1});
    const rep_ctx reps[] = {{r3, 0}, {r1, -1}, {r12, EM_DIM_NONE}, {r1, EM_DIM_NONE}};
    for (size_t k = 0; k < 4; k++)
        CHECK_MSG(gradcheck("repeat_interleave", f_repeat_interleave, 1, &x, &reps[k]), "case %zu", k);
    const rep_ctx leaf_reps[] = {{r3, 1}, {r1, 0}}; /* along a dim of the leaf: no view in the way */
    for (size_t k = 0; k < 2; k++)
        CHECK_MSG(gradgradcheck("repeat_interleave", f_repeat_interleave_leaf, 1, &x, &leaf_reps[k]), "second, case %zu", k);
    RELEASE(a, s, b, c, x, r3, r1, r12);
}

/* ---- what is still refused: an error, never a silently cut graph ----------------- */
TEST(index_ops_refuse_what_a_node_cannot_hold)
{
    em_tensor *x = leaf(SHAPE(2, 2, 2, 2, 2), -1, 1), *v = leaf(SHAPE(1), -1, 1), *i = ids(SHAPE(1), (const double[]){1});
    const em_tensor *five[] = {i, i, i, i, i}, *four[] = {i, i, i, i};
    CHECK_ERR(em_index(x, 5, five), EM_ERR_NOT_IMPLEMENTED);
    CHECK_ERR(em_index_put(x, 4, four, v, true), EM_ERR_NOT_IMPLEMENTED);
    /* the same calls without autograd run */
    em_set_grad_enabled(false);
    em_tensor *r = em_index(x, 5, five), *p = em_index_put(x, 4, four, v, true);
    em_set_grad_enabled(true);
    CHECK(r && p);
    /* a 0-d mask in index_put */
    em_tensor *t = em_ones(0, NULL, EM_BOOL), *y = em_mul(x, x);
    const em_tensor *m[] = {t};
    CHECK_ERR(em_index_put_(y, 1, m, v, false), EM_ERR_NOT_IMPLEMENTED);
    RELEASE(x, v, i, r, p, t, y);
}
