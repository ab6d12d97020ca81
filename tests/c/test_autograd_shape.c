/* Autograd of the shape, index and sort families: float64 gradchecks of
 * every op with a formula (src/autograd/formulas_shape.c, formulas_index.c),
 * on non-contiguous inputs, negative dims and duplicate indices, a few
 * second derivatives, and the ops that still refuse to record. */
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
    COVER(EM_OP_flip, EM_OP_fliplr, EM_OP_flipud, EM_OP_roll, EM_OP_rot90, EM_OP_repeat, EM_OP_tile, EM_OP_tril,
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
        COVER(cases[k].op);
    }
    /* the legacy 1-d empty input of cat is skipped, and gets an empty gradient */
    em_tensor *e = leaf(SHAPE(0), 0, 1), *mixed[] = {in[0], e, in[2]};
    const join_case skip = {"cat with a skipped input", EM_OP_cat, 3, 1};
    CHECK(gradcheck(skip.name, f_join, 3, mixed, &skip));
    for (int k = 0; k < 8; k++) em_release(in[k]);
    em_release(e);
}
