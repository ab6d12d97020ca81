/* Autograd of the shape, index and mask families: float64 gradchecks of
 * every op with a formula in src/autograd/formulas_shape.c, on
 * non-contiguous inputs, negative dims and duplicate indices, and a few
 * second derivatives (sort and advanced indexing: test_autograd_sort.c). */
#include "test.h"

/* ---- shape ops of one input ------------------------------------------------- */
/* in[0] transposed first: every op reads a non-contiguous input */
static em_tensor *transposed(const em_tensor *x) { return em_transpose(x, 0, -1); }
#define ON_T(name, expr)                                                 \
    static em_tensor *name(em_tensor *const *in, const void *ctx)        \
    {                                                                    \
        em_tensor *x = transposed(in[0]), *r = x ? (expr) : NULL;       \
        em_release(x);                                                   \
        return r;                                                        \
    }
ON_T(f_flip, em_flip(x, 2, (const int[]){-1, 0}))
ON_T(f_fliplr, em_fliplr(x))
ON_T(f_flipud, em_flipud(x))
ON_T(f_roll, em_roll(x, 2, (const int64_t[]){1, -5}, 2, (const int[]){0, -1}))
ON_T(f_roll_flat, em_roll(x, 1, (const int64_t[]){7}, 0, NULL))
ON_T(f_rot90, em_rot90(x, 1, 2, (const int[]){-1, 0}))
ON_T(f_rot90_2, em_rot90(x, -2, 2, (const int[]){1, 2}))
ON_T(f_repeat, em_repeat(x, 4, (const int64_t[]){2, 1, 3, 2}))
ON_T(f_tile, em_tile(x, 2, (const int64_t[]){2, 3}))
ON_T(f_tril, em_tril(x, -1))
ON_T(f_triu, em_triu(x, 1))
ON_T(f_diag_embed, em_diag_embed(x, -1, 0, -1))
ON_T(f_diagflat, em_diagflat(x, 2))
ON_T(f_diff2, em_diff(x, 2, -1, NULL, NULL))
ON_T(f_diff_big, em_diff(x, 9, 0, NULL, NULL)) /* order past the length: an empty result */

static em_tensor *f_diag_vec(em_tensor *const *in, const void *c) { return em_diag(in[0], -1); }
static em_tensor *f_diag_mat(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_t(in[1]), *r = em_diag(x, 1);
    em_release(x);
    return r;
}
/* a roll of more dims than one node records (6): two nodes */
static em_tensor *f_roll_many(em_tensor *const *in, const void *c)
{
    int dims[7] = {0, 1, 2, 3, 4, 5, -1};
    int64_t shifts[7] = {1, 1, 1, 1, 1, 1, -1};
    return em_roll(in[0], 7, shifts, 7, dims);
}
/* in-place tril_ on a non-leaf */
static em_tensor *f_tril_(em_tensor *const *in, const void *c)
{
    em_tensor *y = em_mul(in[0], in[0]);
    if (y && em_tril_(y, 0)) em_release(y), y = NULL;
    return y;
}

TEST(gradcheck_shape_ops_one_input)
{
    em_tensor *x = leaf(SHAPE(4, 3, 2), -1, 1), *v = leaf(SHAPE(4), -1, 1), *m = leaf(SHAPE(5, 3), -1, 1);
    struct { const char *name; fn_t f; } cases[] = {
        {"flip", f_flip}, {"fliplr", f_fliplr}, {"flipud", f_flipud}, {"roll", f_roll},
        {"roll flattened", f_roll_flat}, {"rot90", f_rot90}, {"rot90 twice", f_rot90_2}, {"repeat", f_repeat},
        {"tile", f_tile}, {"tril", f_tril}, {"triu", f_triu}, {"diag_embed", f_diag_embed},
        {"diagflat", f_diagflat}, {"diff order 2", f_diff2}, {"diff order 9", f_diff_big},
        {"tril_", f_tril_},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        CHECK_MSG(gradcheck(cases[k].name, cases[k].f, 1, &x, NULL), "%s", cases[k].name);
    em_tensor *x7 = leaf(SHAPE(2, 2, 2, 2, 2, 2, 2), -1, 1), *vm[] = {v, m};
    CHECK(gradcheck("roll of 7 dims", f_roll_many, 1, &x7, NULL));
    CHECK(gradcheck("diag of a vector", f_diag_vec, 1, &v, NULL));
    CHECK(gradcheck("diag of a matrix", f_diag_mat, 2, vm, NULL));
    GRAD_COVER(EM_OP_flip, EM_OP_fliplr, EM_OP_flipud, EM_OP_roll, EM_OP_rot90, EM_OP_repeat, EM_OP_tile, EM_OP_tril,
          EM_OP_triu, EM_OP_diag, EM_OP_diag_embed, EM_OP_diagflat, EM_OP_diff);
    RELEASE(x, v, m, x7);
}

/* diff with prepend and append (of another dtype: promoted) */
static em_tensor *f_diff_ends(em_tensor *const *in, const void *c)
{
    return em_diff(in[0], 3, 0, in[1], in[2]);
}
static em_tensor *f_diff_prepend(em_tensor *const *in, const void *c) { return em_diff(in[0], 1, -1, in[1], NULL); }

TEST(gradcheck_diff_prepend_append)
{
    em_tensor *in[] = {leaf(SHAPE(4, 3), -1, 1), leaf(SHAPE(2, 3), -1, 1), leaf(SHAPE(1, 3), -1, 1)};
    CHECK(gradcheck("diff prepend and append", f_diff_ends, 3, in, NULL));
    em_tensor *p = leaf(SHAPE(4, 2), -1, 1), *xp[] = {in[0], p};
    CHECK(gradcheck("diff prepend", f_diff_prepend, 2, xp, NULL));
    RELEASE(in[0], in[1], in[2], p);
}

/* ---- joins ------------------------------------------------------------------------ */
typedef struct join_case {
    const char *name;
    em_op op;
    int n, dim;
} join_case;

/* the join of in[0..n) with in[1] transposed (non-contiguous) */
static em_tensor *f_join(em_tensor *const *in, const void *ctx)
{
    const join_case *j = ctx;
    const em_tensor *ts[8];
    em_tensor *t1 = em_t(in[1]);
    for (int k = 0; k < j->n; k++) ts[k] = k == 1 ? t1 : in[k];
    em_tensor *r = NULL;
    switch ((int)j->op) {
    case EM_OP_cat: r = em_cat(j->n, ts, j->dim); break;
    case EM_OP_stack: r = em_stack(j->n, ts, j->dim); break;
    case EM_OP_hstack: r = em_hstack(j->n, ts); break;
    case EM_OP_vstack: r = em_vstack(j->n, ts); break;
    default: r = em_dstack(j->n, ts); break;
    }
    em_release(t1);
    return r;
}

TEST(gradcheck_joins)
{
    /* 3 x 3 inputs (square: in[1] transposed fits), lists of 3 and of 8
     * (past the recorder's 6 inputs: a composite of joins; gradcheck takes 8) */
    em_tensor *in[8];
    for (int k = 0; k < 8; k++) in[k] = leaf(SHAPE(3, 3), -1, 1);
    const join_case cases[] = {
        {"cat", EM_OP_cat, 3, -1},     {"cat of 8", EM_OP_cat, 8, 0},   {"stack", EM_OP_stack, 3, -2},
        {"stack of 8", EM_OP_stack, 8, 2}, {"hstack", EM_OP_hstack, 3, 0}, {"vstack", EM_OP_vstack, 3, 0},
        {"dstack", EM_OP_dstack, 3, 0}, {"dstack of 7", EM_OP_dstack, 7, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        CHECK_MSG(gradcheck(cases[k].name, f_join, cases[k].n, in, &cases[k]), "%s", cases[k].name);
        GRAD_COVER(cases[k].op);
    }
    /* the legacy 1-d empty input of cat is skipped, and gets an empty gradient */
    em_tensor *e = leaf(SHAPE(0), 0, 1), *mixed[] = {in[0], e, in[2]};
    const join_case skip = {"cat with a skipped input", EM_OP_cat, 3, 1};
    CHECK(gradcheck(skip.name, f_join, 3, mixed, &skip));
    for (int k = 0; k < 8; k++) em_release(in[k]);
    em_release(e);
}

/* ---- index ops ---------------------------------------------------------------------- */
/* int64 indices, with duplicates */
static em_tensor *ids(int ndim, const int64_t *sizes, const double *v)
{
    em_tensor *t = tt(EM_F64, ndim, sizes, v), *r = em_to_dtype(t, EM_I64);
    em_release(t);
    return r;
}
typedef struct index_ctx {
    em_tensor *i2;   /* (2, 3) along dim 0 of a (3, 4) self, duplicates */
    em_tensor *vec;  /* (4,) vector with a duplicate */
    em_tensor *flat; /* (2, 2) flat positions, duplicates, a negative */
    em_tensor *mask; /* (3, 4) bool */
    em_tensor *i2u;  /* as i2, no duplicates within a column (scatter's assignment) */
} index_ctx;
#define CTX ((const index_ctx *)ctx)
/* self = in[0] (4, 3) transposed: (3, 4), non-contiguous */
#define ON_SELF(name, expr)                                              \
    static em_tensor *name(em_tensor *const *in, const void *ctx)        \
    {                                                                    \
        em_tensor *self = em_t(in[0]), *r = self ? (expr) : NULL;        \
        em_release(self);                                                \
        return r;                                                        \
    }
ON_SELF(f_gather, em_gather(self, -2, CTX->i2))
ON_SELF(f_index_select, em_index_select(self, -1, CTX->vec))
ON_SELF(f_take, em_take(self, CTX->flat))
ON_SELF(f_put_acc, em_put(self, CTX->flat, in[1], true))
ON_SELF(f_scatter, em_scatter(self, 0, CTX->i2u, in[2], NULL))
ON_SELF(f_scatter_add, em_scatter_add(self, 0, CTX->i2, in[2]))
ON_SELF(f_scatter_sum, em_scatter_reduce(self, 0, CTX->i2, in[2], "sum", false))
ON_SELF(f_index_add, em_index_add(self, 1, CTX->vec, in[3], 0.5))
ON_SELF(f_masked_fill, em_masked_fill(self, CTX->mask, 2.5))
ON_SELF(f_masked_select, em_masked_select(self, CTX->mask))
ON_SELF(f_masked_scatter, em_masked_scatter(self, CTX->mask, in[2]))
/* put without accumulate: distinct positions (duplicates are undefined) */
static em_tensor *f_put(em_tensor *const *in, const void *ctx)
{
    em_tensor *self = em_t(in[0]), *pos = ids(SHAPE(2), (const double[]){5, -1});
    em_tensor *src = em_narrow(in[1], 0, 1, 2), *r = self && pos && src ? em_put(self, pos, src, false) : NULL;
    RELEASE(self, pos, src);
    return r;
}
/* index_copy and index_fill: distinct rows */
static em_tensor *f_index_copy(em_tensor *const *in, const void *ctx)
{
    em_tensor *self = em_t(in[0]), *pos = ids(SHAPE(2), (const double[]){2, 0});
    em_tensor *src = em_narrow(in[3], 1, 0, 2), *r = self && pos && src ? em_index_copy(self, 1, pos, src) : NULL;
    RELEASE(self, pos, src);
    return r;
}
static em_tensor *f_index_fill(em_tensor *const *in, const void *ctx)
{
    em_tensor *self = em_t(in[0]), *r = self ? em_index_fill(self, 0, CTX->vec, 1.5) : NULL;
    em_release(self);
    return r;
}
/* masked_fill with a 0-d tensor value that requires grad, in place on a non-leaf */
static em_tensor *f_masked_fill_value_(em_tensor *const *in, const void *ctx)
{
    em_tensor *y = em_mul(in[0], in[0]), *v = em_select(in[1], 0, 0);
    em_tensor *yt = em_t(y), *c = yt ? em_clone(yt) : NULL;
    em_status st = c && v ? em_masked_fill_tensor_(c, CTX->mask, v) : EM_ERR_RUNTIME;
    RELEASE(y, v, yt);
    if (st) em_release(c), c = NULL;
    return c;
}

TEST(gradcheck_index_ops)
{
    index_ctx ctx = {
        ids(SHAPE(2, 3), (const double[]){2, 0, 2, 2, 1, 0}),
        ids(SHAPE(4), (const double[]){1, 2, 2, 0}),
        ids(SHAPE(2, 2), (const double[]){0, 11, 0, -2}),
        NULL,
        ids(SHAPE(2, 3), (const double[]){2, 0, 1, 0, 1, 2}),
    };
    em_tensor *mf = tt(EM_F64, SHAPE(3, 4), (const double[]){1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1});
    ctx.mask = em_to_dtype(mf, EM_BOOL);
    /* in[0]: self (its transpose), in[1]: 4 values, in[2]: src (3, 4), in[3]: source rows (3, 4) */
    em_tensor *in[] = {leaf(SHAPE(4, 3), -1, 1), leaf(SHAPE(4), -1, 1), leaf(SHAPE(3, 4), -1, 1), leaf(SHAPE(3, 4), -1, 1)};
    struct { const char *name; fn_t f; em_op op; } cases[] = {
        {"gather", f_gather, EM_OP_gather},                 {"index_select", f_index_select, EM_OP_index_select},
        {"take", f_take, EM_OP_take},                       {"put accumulate", f_put_acc, EM_OP_put},
        {"put", f_put, EM_OP_put},                          {"scatter", f_scatter, EM_OP_scatter},
        {"scatter_add", f_scatter_add, EM_OP_scatter_add},  {"scatter_reduce sum", f_scatter_sum, EM_OP_scatter_reduce},
        {"index_add", f_index_add, EM_OP_index_add},        {"index_copy", f_index_copy, EM_OP_index_copy},
        {"index_fill", f_index_fill, EM_OP_index_fill},     {"masked_fill", f_masked_fill, EM_OP_masked_fill},
        {"masked_fill_ value", f_masked_fill_value_, EM_OP_masked_fill},
        {"masked_select", f_masked_select, EM_OP_masked_select},
        {"masked_scatter", f_masked_scatter, EM_OP_masked_scatter},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        CHECK_MSG(gradcheck(cases[k].name, cases[k].f, 4, in, &ctx), "%s", cases[k].name);
        GRAD_COVER(cases[k].op);
    }
    RELEASE(in[0], in[1], in[2], in[3], ctx.i2, ctx.vec, ctx.flat, ctx.mask, ctx.i2u, mf);
}

/* ---- second derivatives ---------------------------------------------------------------- */
/* The first gradient of sum(op(x)^2), made with create_graph: a function of
 * x that gradcheck differentiates again (its formulas recorded). */
typedef struct second_case {
    const char *name;
    fn_t op;
    const void *ctx;
} second_case;

static em_tensor *first_gradient(em_tensor *const *in, const void *ctx)
{
    const second_case *c = ctx;
    bool grad = em_is_grad_enabled();
    em_set_grad_enabled(true); /* gradcheck evaluates with grad off */
    em_tensor *y = c->op(in, c->ctx), *y2 = y ? em_mul(y, y) : NULL;
    em_tensor *s = y2 ? em_sum(y2, 0, NULL, false, EM_DTYPE_NONE) : NULL, *g = NULL;
    if (s && em_autograd_grad(1, &s, NULL, 1, in, true, true, false, &g)) g = NULL;
    em_set_grad_enabled(grad);
    RELEASE(y, y2, s);
    return g;
}

static em_tensor *f_roll_leaf(em_tensor *const *in, const void *c)
{
    return em_roll(in[0], 2, (const int64_t[]){1, -2}, 2, (const int[]){0, -1});
}
static em_tensor *f_flip_leaf(em_tensor *const *in, const void *c) { return em_flip(in[0], 1, (const int[]){-1}); }
static em_tensor *f_gather_leaf(em_tensor *const *in, const void *ctx) { return em_gather(in[0], 0, CTX->i2); }
static em_tensor *f_select_leaf(em_tensor *const *in, const void *ctx) { return em_index_select(in[0], 1, CTX->vec); }
static em_tensor *f_take_leaf(em_tensor *const *in, const void *ctx) { return em_take(in[0], CTX->flat); }
static em_tensor *f_mfill_leaf(em_tensor *const *in, const void *ctx) { return em_masked_fill(in[0], CTX->mask, 1); }
static em_tensor *f_tril_leaf(em_tensor *const *in, const void *ctx) { return em_tril(in[0], 0); }

TEST(create_graph_second_derivatives)
{
    index_ctx ctx = {
        ids(SHAPE(2, 4), (const double[]){2, 0, 2, 2, 1, 0, 1, 1}),
        ids(SHAPE(3), (const double[]){1, 3, 1}),
        ids(SHAPE(3), (const double[]){0, 11, 0}),
        NULL,
        NULL,
    };
    em_tensor *mf = tt(EM_F64, SHAPE(3, 4), (const double[]){1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1});
    ctx.mask = em_to_dtype(mf, EM_BOOL);
    em_tensor *x = leaf(SHAPE(3, 4), -1, 1);
    const second_case cases[] = {
        {"roll", f_roll_leaf, NULL},          {"flip", f_flip_leaf, NULL},     {"gather", f_gather_leaf, &ctx},
        {"index_select", f_select_leaf, &ctx}, {"take", f_take_leaf, &ctx},    {"masked_fill", f_mfill_leaf, &ctx},
        {"tril", f_tril_leaf, NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        CHECK_MSG(gradcheck(cases[k].name, first_gradient, 1, &x, &cases[k]), "second derivative of %s", cases[k].name);
    RELEASE(x, ctx.i2, ctx.vec, ctx.flat, ctx.mask, mf);
}
