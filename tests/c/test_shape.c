/* Shape ops, part 1: joining (cat, stack, h/v/dstack, meshgrid,
 * cartesian_prod), reordering (flip, roll, rot90) and repeating (repeat,
 * tile, repeat_interleave), each against a naive reference computed from
 * coordinates, on non-contiguous, mixed-dtype, empty and 0-d inputs, plus
 * PyTorch 1.13's errors. Part 2 (test_shape_tri.c) has the rest. */
#include "test_shape.h"

/* ---- shared helpers (test_shape.h) ------------------------------------- */
void shape_unravel(int64_t i, int nd, const int64_t *sizes, int64_t *idx)
{
    for (int d = nd - 1; d >= 0; d--) idx[d] = i % sizes[d], i /= sizes[d];
}

double shape_at(const em_tensor *t, const int64_t *idx)
{
    double v = NAN;
    em_get(t, idx, &v);
    return v;
}

double shape_cast(double v, em_dtype dt)
{
    em_tensor *s = em_tensor_scalar(v, dt);
    double r = NAN;
    em_item(s, &r);
    em_release(s);
    return r;
}

bool shape_check(const em_tensor *got, shape_ref_fn want, const void *ctx)
{
    int64_t idx[EM_MAX_DIMS];
    for (int64_t i = 0, n = em_numel(got); i < n; i++) {
        shape_unravel(i, em_ndim(got), em_sizes(got), idx);
        double w = shape_cast(want(idx, ctx), em_dtype_of(got)), g = shape_at(got, idx);
        if (!(g == w || (isnan(g) && isnan(w)))) {
            fprintf(stderr, "  element %lld: got %.17g, want %.17g\n", (long long)i, g, w);
            return false;
        }
    }
    return true;
}

em_tensor *shape_transposed(em_dtype dt, int64_t rows, int64_t cols)
{
    em_tensor *base = trand(dt, SHAPE(cols, rows), -50, 50), *t = em_t(base);
    em_release(base);
    return t;
}

bool shape_error_says(const char *text)
{
    if (strstr(em_last_error(), text)) return true;
    fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", em_last_error(), text);
    return false;
}

void shape_release_all(em_tensor **ts, int n)
{
    for (int i = 0; i < n; i++) em_release(ts[i]);
}

/* ---- cat, stack, hstack, vstack, dstack --------------------------------- */
/* Reference of a cat along dim: the input whose range along dim holds idx. */
typedef struct {
    int n, dim;
    const em_tensor *const *ts;
} cat_ref;
static double cat_value(const int64_t *idx, const void *ctx)
{
    const cat_ref *r = ctx;
    int64_t i[EM_MAX_DIMS], at = idx[r->dim];
    for (int k = 0; k < r->n; k++) {
        const em_tensor *t = r->ts[k];
        if (em_ndim(t) == 1 && em_size(t, 0) == 0 && r->dim > 0) continue; /* legacy skip */
        if (at < em_size(t, r->dim)) {
            memcpy(i, idx, em_ndim(t) * sizeof *i);
            i[r->dim] = at;
            return shape_at(t, i);
        }
        at -= em_size(t, r->dim);
    }
    return NAN;
}

TEST(shape_cat_values_dtypes_layouts)
{
    for (int dim = -3; dim < 3; dim++) {
        int d = dim < 0 ? dim + 3 : dim;
        int64_t sa[] = {2, 3, 4}, sb[] = {2, 3, 4}, sc[] = {2, 3, 4};
        sa[d] = 1, sb[d] = 3, sc[d] = 2;
        em_tensor *a = trand(EM_F32, 3, sa, -5, 5), *b0 = trand(EM_I32, 3, sb, -50, 50), *b = tnoncontig(b0);
        em_tensor *c0 = trand(EM_F64, 3, (int64_t[]){sc[2], sc[1], sc[0]}, -1, 1), *c = em_permute(c0, (int[]){2, 1, 0});
        const em_tensor *ts[] = {a, b, c};
        em_tensor *r = em_cat(3, ts, dim);
        int64_t want[] = {2, 3, 4};
        want[d] = 6;
        CHECK(r && tshape_is(r, 3, want) && em_dtype_of(r) == EM_F64 && em_is_contiguous(r));
        CHECK(shape_check(r, cat_value, &(cat_ref){3, d, ts}));
        em_tensor *all[] = {a, b0, b, c0, c, r};
        shape_release_all(all, 6);
    }
    /* every dtype, and promotion pairs as PyTorch */
    for (int dt = 0; dt < EM_DTYPE_COUNT; dt++) {
        em_tensor *a = trand((em_dtype)dt, SHAPE(3, 2), -20, 20), *b = shape_transposed((em_dtype)dt, 3, 5);
        const em_tensor *ts[] = {a, b};
        em_tensor *r = em_cat(2, ts, -1);
        CHECK(r && em_dtype_of(r) == dt && tshape_is(r, SHAPE(3, 7)));
        CHECK(shape_check(r, cat_value, &(cat_ref){2, 1, ts}));
        em_release(a), em_release(b), em_release(r);
    }
    struct { em_dtype a, b, want; } promo[] = {{EM_BOOL, EM_F16, EM_F16}, {EM_BF16, EM_F16, EM_F32},
                                               {EM_U8, EM_I8, EM_I16}, {EM_I64, EM_BF16, EM_BF16}};
    for (size_t k = 0; k < sizeof promo / sizeof *promo; k++) {
        em_tensor *a = trand(promo[k].a, SHAPE(2), 0, 9), *b = trand(promo[k].b, SHAPE(3), 0, 9);
        const em_tensor *ts[] = {a, b};
        em_tensor *r = em_cat(2, ts, 0);
        CHECK(r && em_dtype_of(r) == promo[k].want && shape_check(r, cat_value, &(cat_ref){2, 0, ts}));
        em_release(a), em_release(b), em_release(r);
    }
    COVER(EM_OP_cat);
}

TEST(shape_cat_empty_and_legacy)
{
    em_tensor *x = trand(EM_F32, SHAPE(2, 3), -1, 1), *legacy = em_zeros(SHAPE(0), EM_F64);
    em_tensor *rows0 = em_zeros(SHAPE(0, 3), EM_F32), *cols0 = em_zeros(SHAPE(2, 0), EM_F32);
    /* [0] tensors are skipped, but still promote the dtype */
    const em_tensor *l1[] = {legacy, x, legacy};
    em_tensor *r1 = em_cat(3, l1, 1);
    CHECK(r1 && tshape_is(r1, SHAPE(2, 3)) && em_dtype_of(r1) == EM_F64);
    CHECK(shape_check(r1, cat_value, &(cat_ref){1, 1, (const em_tensor *[]){x}}));
    const em_tensor *l2[] = {legacy, legacy};
    em_tensor *r2 = em_cat(2, l2, 7); /* all skipped: dim is not even checked */
    CHECK(r2 && tshape_is(r2, SHAPE(0)) && em_dtype_of(r2) == EM_F64);
    const em_tensor *l3[] = {rows0, x, rows0}, *l4[] = {cols0, x};
    em_tensor *r3 = em_cat(3, l3, 0), *r4 = em_cat(2, l4, 1);
    CHECK(r3 && tshape_is(r3, SHAPE(2, 3)) && em_equal(r3, x));
    CHECK(r4 && tshape_is(r4, SHAPE(2, 3)) && em_equal(r4, x));
    const em_tensor *l5[] = {cols0, cols0};
    em_tensor *r5 = em_cat(2, l5, 0);
    CHECK(r5 && tshape_is(r5, SHAPE(4, 0)));
    const em_tensor *bad[] = {x, legacy};
    CHECK_ERR(em_cat(2, bad, 2), EM_ERR_INDEX); /* dim checked against the first kept tensor */
    em_tensor *all[] = {x, legacy, rows0, cols0, r1, r2, r3, r4, r5};
    shape_release_all(all, 9);
}

TEST(shape_cat_errors_and_out)
{
    em_tensor *a = trand(EM_F32, SHAPE(2, 3), -1, 1), *b = trand(EM_F32, SHAPE(3, 3), -1, 1);
    em_tensor *c = trand(EM_F32, SHAPE(2, 3, 1), -1, 1), *s = em_tensor_scalar(1, EM_F32);
    const em_tensor *ab[] = {a, b}, *ac[] = {a, c}, *as[] = {a, s}, *aa[] = {a, a};
    CHECK_ERR(em_cat(2, ab, 1), EM_ERR_SHAPE);
    CHECK(shape_error_says("Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 "
                           "for tensor number 1 in the list."));
    CHECK_ERR(em_cat(0, ab, 0), EM_ERR_RUNTIME);
    CHECK(shape_error_says("torch.cat(): expected a non-empty list of Tensors"));
    CHECK_ERR(em_cat(2, ac, 0), EM_ERR_SHAPE);
    CHECK(shape_error_says("Tensors must have same number of dimensions: got 2 and 3"));
    CHECK_ERR(em_cat(2, as, 0), EM_ERR_SHAPE);
    CHECK(shape_error_says("zero-dimensional tensor (at position 1) cannot be concatenated"));
    CHECK_ERR(em_cat(2, aa, -3), EM_ERR_INDEX);
    /* out=: resized, converted, version bumped; a transposed out keeps its layout */
    em_tensor *out = em_empty(SHAPE(1), EM_F64), *big = em_empty(SHAPE(3, 4), EM_F32), *tout = em_t(big);
    uint64_t v = em_version(out);
    CHECK(em_cat_out(out, 2, ab, 0) == EM_OK && tshape_is(out, SHAPE(5, 3)) && em_version(out) > v);
    CHECK(shape_check(out, cat_value, &(cat_ref){2, 0, ab}));
    CHECK(em_cat_out(tout, 2, aa, 0) == EM_OK && em_strides(tout)[0] == 1);
    CHECK(shape_check(tout, cat_value, &(cat_ref){2, 0, aa}));
    em_tensor *iout = em_empty(SHAPE(0), EM_I64), *bout = em_empty(SHAPE(0), EM_BOOL);
    CHECK_ERR(em_cat_out(iout, 2, ab, 0), EM_ERR_DTYPE);
    CHECK_ERR(em_cat_out(bout, 2, ab, 0), EM_ERR_DTYPE);
    CHECK_ERR(em_cat_out(a, 2, aa, 0), EM_ERR_RUNTIME); /* out is an input */
    em_tensor *half = em_narrow(big, 0, 0, 2);
    const em_tensor *overlapping[] = {half, half};
    CHECK_ERR(em_cat_out(big, 2, overlapping, 0), EM_ERR_RUNTIME);
    CHECK(tshape_is(big, SHAPE(3, 4))); /* untouched by the failed calls */
    CHECK_ERR(em_cat_out(NULL, 2, ab, 0), EM_ERR_VALUE);
    em_tensor *all[] = {a, b, c, s, out, big, tout, iout, bout, half};
    shape_release_all(all, 10);
}

/* stack: out[..., k (at dim), ...] = input k. */
typedef struct {
    int dim;
    const em_tensor *const *ts;
} stack_ref;
static double stack_value(const int64_t *idx, const void *ctx)
{
    const stack_ref *r = ctx;
    const em_tensor *t = r->ts[idx[r->dim]];
    int64_t i[EM_MAX_DIMS];
    for (int d = 0, j = 0; d <= em_ndim(t); d++)
        if (d != r->dim) i[j++] = idx[d];
    return shape_at(t, i);
}

TEST(shape_stack)
{
    em_tensor *a = trand(EM_I16, SHAPE(2, 3), -9, 9), *b = shape_transposed(EM_F32, 2, 3);
    const em_tensor *ts[] = {a, b, a};
    for (int dim = -3; dim <= 2; dim++) {
        int d = dim < 0 ? dim + 3 : dim;
        em_tensor *r = em_stack(3, ts, dim);
        int64_t want[3], k = 0;
        for (int i = 0; i < 3; i++) want[i] = i == d ? 3 : (k++ ? 3 : 2);
        CHECK(r && tshape_is(r, 3, want) && em_dtype_of(r) == EM_F32);
        CHECK(shape_check(r, stack_value, &(stack_ref){d, ts}));
        em_release(r);
    }
    em_tensor *s0 = em_tensor_scalar(3, EM_I64), *s1 = em_tensor_scalar(2.5, EM_F32), *e = em_zeros(SHAPE(0), EM_F32);
    const em_tensor *scalars[] = {s0, s1}, *empties[] = {e, e};
    em_tensor *rs = em_stack(2, scalars, 0), *re = em_stack(2, empties, 1);
    CHECK(rs && tshape_is(rs, SHAPE(2)) && em_dtype_of(rs) == EM_F32 && tval(rs, 0) == 3 && tval(rs, 1) == 2.5);
    CHECK(re && tshape_is(re, SHAPE(0, 2)));
    em_tensor *c = trand(EM_F32, SHAPE(2, 4), -1, 1), *out = em_empty(SHAPE(0), EM_F64);
    const em_tensor *ac[] = {a, a, c};
    CHECK_ERR(em_stack(3, ac, 0), EM_ERR_SHAPE);
    CHECK(shape_error_says("stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 2"));
    CHECK_ERR(em_stack(0, ac, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_stack(2, ts, 3), EM_ERR_INDEX);
    CHECK_ERR(em_stack(2, ts, -4), EM_ERR_INDEX);
    CHECK(em_stack_out(out, 2, ts, 1) == EM_OK && tshape_is(out, SHAPE(2, 2, 3)));
    CHECK(shape_check(out, stack_value, &(stack_ref){1, ts}));
    CHECK_ERR(em_stack_out(a, 2, ts, 0), EM_ERR_DTYPE); /* float into int16 */
    em_tensor *all[] = {a, b, s0, s1, e, rs, re, c, out};
    shape_release_all(all, 9);
    COVER(EM_OP_stack);
}

TEST(shape_hstack_vstack_dstack)
{
    em_tensor *s = em_tensor_scalar(7, EM_I64), *v3 = trand(EM_F64, SHAPE(3), -1, 1), *v2 = trand(EM_F32, SHAPE(2), -1, 1);
    em_tensor *m = shape_transposed(EM_F32, 2, 3), *m4 = trand(EM_F32, SHAPE(2, 4), -1, 1);
    em_tensor *t3 = trand(EM_F32, SHAPE(2, 3, 4), -1, 1), *e = em_zeros(SHAPE(0), EM_F32);
    struct {
        em_op op;
        int n;
        const em_tensor *in[3];
        int nd;
        int64_t shape[3];
        double first, last;
    } cases[] = {
        {EM_OP_hstack, 2, {s, s}, 1, {2}, 7, 7},
        {EM_OP_hstack, 3, {v3, v2, e}, 1, {5}, tval(v3, 0), tval(v2, 1)},
        {EM_OP_hstack, 2, {m, m4}, 2, {2, 7}, tval(m, 0), tval(m4, 7)},
        {EM_OP_vstack, 2, {s, s}, 2, {2, 1}, 7, 7},
        {EM_OP_vstack, 2, {v3, v3}, 2, {2, 3}, tval(v3, 0), tval(v3, 2)},
        {EM_OP_vstack, 2, {v3, m}, 2, {3, 3}, tval(v3, 0), tval(m, 5)},
        {EM_OP_dstack, 2, {s, s}, 3, {1, 1, 2}, 7, 7},
        {EM_OP_dstack, 2, {v3, v3}, 3, {1, 3, 2}, tval(v3, 0), tval(v3, 2)},
        {EM_OP_dstack, 2, {m, t3}, 3, {2, 3, 5}, tval(m, 0), tval(t3, 23)},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        em_op op = cases[k].op;
        em_tensor *r = op == EM_OP_hstack ? em_hstack(cases[k].n, cases[k].in)
                       : op == EM_OP_vstack ? em_vstack(cases[k].n, cases[k].in) : em_dstack(cases[k].n, cases[k].in);
        CHECK_MSG(r && tshape_is(r, cases[k].nd, cases[k].shape), "case %zu: %s", k, em_last_error());
        CHECK(tval(r, 0) == cases[k].first && tval(r, em_numel(r) - 1) == cases[k].last);
        em_release(r);
    }
    /* dstack of two 2-d: out[i, j, k] = input k [i, j] */
    const em_tensor *mm[] = {m, m};
    em_tensor *d = em_dstack(2, mm);
    for (int64_t i = 0; i < 12; i++) CHECK(tval(d, i) == tval(m, i / 2));
    const em_tensor *bad[] = {v3, v2};
    CHECK_ERR(em_vstack(2, bad), EM_ERR_SHAPE);
    CHECK(shape_error_says("Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2"));
    CHECK_ERR(em_hstack(0, bad), EM_ERR_RUNTIME);
    CHECK(shape_error_says("hstack expects a non-empty TensorList"));
    CHECK_ERR(em_dstack(0, bad), EM_ERR_RUNTIME);
    em_tensor *out = em_empty(SHAPE(0), EM_F64);
    const em_tensor *vv[] = {v3, v3};
    CHECK(em_hstack_out(out, 2, vv) == EM_OK && tshape_is(out, SHAPE(6)) && tval(out, 4) == tval(v3, 1));
    CHECK(em_vstack_out(out, 2, vv) == EM_OK && tshape_is(out, SHAPE(2, 3)) && tval(out, 4) == tval(v3, 1));
    CHECK(em_dstack_out(out, 2, vv) == EM_OK && tshape_is(out, SHAPE(1, 3, 2)) && tval(out, 4) == tval(v3, 2));
    CHECK_ERR(em_vstack_out(v3, 2, vv), EM_ERR_RUNTIME); /* overlaps an input */
    em_tensor *all[] = {s, v3, v2, m, m4, t3, e, d, out};
    shape_release_all(all, 9);
    COVER(EM_OP_hstack, EM_OP_vstack, EM_OP_dstack);
}

/* ---- meshgrid, cartesian_prod ---------------------------------------------- */
TEST(shape_meshgrid)
{
    em_tensor *a = trand(EM_F32, SHAPE(2), -1, 1), *b0 = trand(EM_F32, SHAPE(3), -1, 1), *b = tnoncontig(b0);
    em_tensor *c = em_tensor_scalar(4, EM_F32);
    const em_tensor *ts[] = {a, b, c};
    em_tensor *g[3];
    for (int xy = 0; xy < 2; xy++) {
        CHECK(em_meshgrid(3, ts, xy ? "xy" : NULL, g) == EM_OK);
        for (int k = 0; k < 3; k++) {
            CHECK(tshape_is(g[k], 3, xy ? (int64_t[]){3, 2, 1} : (int64_t[]){2, 3, 1}));
            CHECK(em_is_same_storage(g[k], ts[k])); /* views, as PyTorch */
        }
        for (int64_t i = 0; i < 2; i++)
            for (int64_t j = 0; j < 3; j++) {
                int64_t idx[] = {xy ? j : i, xy ? i : j, 0};
                CHECK(shape_at(g[0], idx) == tval(a, i) && shape_at(g[1], idx) == tval(b, j) && shape_at(g[2], idx) == 4);
            }
        shape_release_all(g, 3);
    }
    CHECK(em_meshgrid(1, ts, "xy", g) == EM_OK && tshape_is(g[0], SHAPE(2)));
    em_release(g[0]);
    em_tensor *i = trand(EM_I64, SHAPE(2), 0, 5), *m = trand(EM_F32, SHAPE(2, 2), 0, 1);
    const em_tensor *mixed[] = {a, i}, *two_d[] = {a, m};
    CHECK_ERR(em_meshgrid(2, mixed, "ij", g), EM_ERR_DTYPE);
    CHECK(shape_error_says("meshgrid expects all tensors to have the same dtype"));
    CHECK_ERR(em_meshgrid(2, two_d, "ij", g), EM_ERR_SHAPE);
    CHECK_ERR(em_meshgrid(2, ts, "ab", g), EM_ERR_RUNTIME);
    CHECK(shape_error_says("indexing must be one of \"xy\" or \"ij\", but received: ab"));
    CHECK_ERR(em_meshgrid(0, ts, "ij", g), EM_ERR_RUNTIME);
    em_tensor *all[] = {a, b0, b, c, i, m};
    shape_release_all(all, 6);
    COVER(EM_OP_meshgrid);
}

TEST(shape_cartesian_prod)
{
    em_tensor *a = trand(EM_I32, SHAPE(2), -9, 9), *b0 = trand(EM_I32, SHAPE(3), -9, 9), *b = tnoncontig(b0);
    em_tensor *c = trand(EM_I32, SHAPE(4), -9, 9), *e = em_zeros(SHAPE(0), EM_I32);
    const em_tensor *ts[] = {a, b, c};
    em_tensor *r = em_cartesian_prod(3, ts);
    CHECK(r && tshape_is(r, SHAPE(24, 3)) && em_dtype_of(r) == EM_I32);
    for (int64_t row = 0; row < 24; row++) /* lexicographic: the last input varies fastest */
        CHECK(tval(r, row * 3) == tval(a, row / 12) && tval(r, row * 3 + 1) == tval(b, row / 4 % 3) &&
              tval(r, row * 3 + 2) == tval(c, row % 4));
    const em_tensor *one[] = {a}, *with_empty[] = {a, e}, *two_d[] = {a, r}, *mixed[] = {a, r};
    em_tensor *same = em_cartesian_prod(1, one), *re = em_cartesian_prod(2, with_empty);
    CHECK(same == a); /* PyTorch returns the input itself */
    CHECK(re && tshape_is(re, SHAPE(0, 2)));
    CHECK_ERR(em_cartesian_prod(2, two_d), EM_ERR_SHAPE);
    CHECK(shape_error_says("Expect a 1D vector, but got shape [24, 3]"));
    em_tensor *f = trand(EM_F32, SHAPE(2), 0, 1);
    mixed[1] = f;
    CHECK_ERR(em_cartesian_prod(2, mixed), EM_ERR_DTYPE);
    CHECK_ERR(em_cartesian_prod(0, mixed), EM_ERR_RUNTIME);
    em_tensor *all[] = {a, b0, b, c, e, r, same, re, f};
    shape_release_all(all, 9);
    COVER(EM_OP_cartesian_prod);
}

/* ---- flip, roll, rot90 --------------------------------------------------------- */
/* flip and rot90: the source index of out's idx, from a map of dims. */
typedef struct {
    const em_tensor *x;
    int src_dim[EM_MAX_DIMS]; /* out dim d reads x dim src_dim[d] ... */
    bool reversed[EM_MAX_DIMS]; /* ... backwards */
} reorient_ref;
static double reorient_value(const int64_t *idx, const void *ctx)
{
    const reorient_ref *r = ctx;
    int64_t i[EM_MAX_DIMS];
    for (int d = 0; d < em_ndim(r->x); d++) {
        int s = r->src_dim[d];
        i[s] = r->reversed[d] ? em_size(r->x, s) - 1 - idx[d] : idx[d];
    }
    return shape_at(r->x, i);
}

TEST(shape_flip)
{
    em_tensor *x0 = trand(EM_F64, SHAPE(3, 4, 5), -1, 1), *x = tnoncontig(x0);
    int dimsets[][3] = {{0}, {-1}, {0, 2}, {1, -3, 2}};
    int counts[] = {1, 1, 2, 3};
    for (int k = 0; k < 4; k++) {
        reorient_ref ref = {.x = x, .src_dim = {0, 1, 2}};
        for (int i = 0; i < counts[k]; i++) ref.reversed[(dimsets[k][i] + 3) % 3] = true;
        em_tensor *r = em_flip(x, counts[k], dimsets[k]);
        CHECK(r && tshape_is(r, SHAPE(3, 4, 5)) && shape_check(r, reorient_value, &ref));
        em_release(r);
    }
    for (int dt = 0; dt < EM_DTYPE_COUNT; dt++) {
        em_tensor *t = shape_transposed((em_dtype)dt, 3, 4), *lr = em_fliplr(t), *ud = em_flipud(t);
        CHECK(lr && ud && em_dtype_of(lr) == dt);
        CHECK(shape_check(lr, reorient_value, &(reorient_ref){.x = t, .src_dim = {0, 1}, .reversed = {0, 1}}));
        CHECK(shape_check(ud, reorient_value, &(reorient_ref){.x = t, .src_dim = {0, 1}, .reversed = {1, 0}}));
        em_release(t), em_release(lr), em_release(ud);
    }
    em_tensor *s = em_tensor_scalar(5, EM_F32), *e = em_zeros(SHAPE(0, 3), EM_F32), *v = trand(EM_I64, SHAPE(4), 0, 9);
    em_tensor *fs = em_flip(s, 1, (int[]){-1}), *fe = em_flip(e, 2, (int[]){0, 1}), *none = em_flip(x, 0, NULL);
    em_tensor *ud = em_flipud(v);
    CHECK(fs && em_ndim(fs) == 0 && tval(fs, 0) == 5 && fe && tshape_is(fe, SHAPE(0, 3)) && em_equal(none, x));
    CHECK(ud && tval(ud, 0) == tval(v, 3) && tval(ud, 3) == tval(v, 0));
    CHECK_ERR(em_flip(x, 2, (int[]){0, -3}), EM_ERR_SHAPE);
    CHECK(shape_error_says("dim 0 appears multiple times in the list of dims"));
    CHECK_ERR(em_flip(s, 2, (int[]){0, -1}), EM_ERR_SHAPE);
    CHECK_ERR(em_flip(x, 1, (int[]){3}), EM_ERR_INDEX);
    CHECK_ERR(em_fliplr(v), EM_ERR_SHAPE);
    CHECK(shape_error_says("Input must be >= 2-d."));
    CHECK_ERR(em_flipud(s), EM_ERR_SHAPE);
    em_tensor *all[] = {x0, x, s, e, v, fs, fe, none, ud};
    shape_release_all(all, 9);
    COVER(EM_OP_flip, EM_OP_fliplr, EM_OP_flipud);
}

/* roll: out[idx] = x[(idx - shift) mod size] per dim (shift[] already summed
 * per dim); flat: the same on the row-major order. */
typedef struct {
    const em_tensor *x;
    int64_t shift[EM_MAX_DIMS];
    bool flat;
} roll_ref;
static int64_t wrap_index(int64_t i, int64_t s, int64_t n) { return ((i - s) % n + n) % n; }
static double roll_value(const int64_t *idx, const void *ctx)
{
    const roll_ref *r = ctx;
    int nd = em_ndim(r->x);
    int64_t i[EM_MAX_DIMS];
    if (r->flat) {
        int64_t lin = 0;
        for (int d = 0; d < nd; d++) lin = lin * em_size(r->x, d) + idx[d];
        shape_unravel(wrap_index(lin, r->shift[0] % em_numel(r->x), em_numel(r->x)), nd, em_sizes(r->x), i);
    } else {
        for (int d = 0; d < nd; d++) i[d] = wrap_index(idx[d], r->shift[d] % em_size(r->x, d), em_size(r->x, d));
    }
    return shape_at(r->x, i);
}

TEST(shape_roll)
{
    em_tensor *x0 = trand(EM_I32, SHAPE(3, 4, 5), -99, 99), *x = tnoncontig(x0), *t = shape_transposed(EM_BF16, 4, 3);
    struct {
        int n;
        int64_t shifts[3];
        int dims[3];
    } cases[] = {{1, {1}, {0}}, {2, {-2, 7}, {-1, 1}}, {3, {1, 2, 3}, {0, 1, 2}}, {2, {1, 2}, {2, 2}},
                 {1, {INT64_MAX}, {1}}, {1, {INT64_MIN}, {2}}, {1, {6}, {0}}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        roll_ref ref = {.x = x};
        for (int i = 0; i < cases[k].n; i++) {
            int d = (cases[k].dims[i] + 3) % 3;
            int64_t n = em_size(x, d);
            ref.shift[d] = (ref.shift[d] + (cases[k].shifts[i] % n + n)) % n;
        }
        em_tensor *r = em_roll(x, cases[k].n, cases[k].shifts, cases[k].n, cases[k].dims);
        CHECK_MSG(r && shape_check(r, roll_value, &ref), "case %zu", k);
        em_release(r);
    }
    int64_t flat_shifts[] = {-1, 5, 61, INT64_MIN};
    for (int k = 0; k < 4; k++) {
        int64_t n = 60, s = (flat_shifts[k] % n + n) % n;
        em_tensor *r = em_roll(x, 1, &flat_shifts[k], 0, NULL);
        CHECK(r && tshape_is(r, SHAPE(3, 4, 5)) && shape_check(r, roll_value, &(roll_ref){.x = x, .shift = {s}, .flat = true}));
        em_release(r);
    }
    em_tensor *rt = em_roll(t, 1, (int64_t[]){5}, 0, NULL);
    CHECK(rt && em_dtype_of(rt) == EM_BF16 && shape_check(rt, roll_value, &(roll_ref){.x = t, .shift = {5}, .flat = true}));
    em_tensor *s = em_tensor_scalar(3, EM_F32), *e = em_zeros(SHAPE(0, 3), EM_F32);
    em_tensor *rs = em_roll(s, 1, (int64_t[]){4}, 0, NULL), *re = em_roll(e, 1, (int64_t[]){1}, 1, (int[]){1});
    em_tensor *re2 = em_roll(e, 1, (int64_t[]){1}, 0, NULL);
    CHECK(rs && tval(rs, 0) == 3 && re && tshape_is(re, SHAPE(0, 3)) && re2 && tshape_is(re2, SHAPE(0, 3)));
    CHECK_ERR(em_roll(x, 2, (int64_t[]){1, 2}, 1, (int[]){0}), EM_ERR_SHAPE);
    CHECK(shape_error_says("shifts and dimensions must align. shifts: 2, dims:1"));
    CHECK_ERR(em_roll(x, 2, (int64_t[]){1, 2}, 0, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_roll(x, 0, NULL, 0, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_roll(x, 1, (int64_t[]){1}, 1, (int[]){3}), EM_ERR_INDEX);
    CHECK_ERR(em_roll(s, 1, (int64_t[]){1}, 1, (int[]){0}), EM_ERR_INDEX);
    CHECK(shape_error_says("Dimension specified as 0 but tensor has no dimensions"));
    em_tensor *all[] = {x0, x, t, rt, s, e, rs, re, re2};
    shape_release_all(all, 9);
    COVER(EM_OP_roll);
}

TEST(shape_rot90)
{
    double v[6] = {0, 1, 2, 3, 4, 5};
    em_tensor *m = tt(EM_F32, SHAPE(2, 3), v), *r1 = em_rot90(m, 1, 2, (int[]){0, 1});
    double want1[] = {2, 5, 1, 4, 0, 3}; /* PyTorch's torch.rot90(arange(6).view(2, 3)) */
    CHECK(r1 && tshape_is(r1, SHAPE(3, 2)) && tclose(r1, want1, 0, 0));
    em_tensor *x0 = trand(EM_F64, SHAPE(2, 3, 4), -1, 1), *x = tnoncontig(x0);
    int pairs[][2] = {{0, 1}, {1, 0}, {2, 0}, {-1, -2}, {0, -1}};
    for (int p = 0; p < 5; p++)
        for (int64_t k = -5; k <= 5; k++) {
            int d0 = (pairs[p][0] + 3) % 3, d1 = (pairs[p][1] + 3) % 3, q = (int)((k % 4 + 4) % 4);
            reorient_ref ref = {.x = x, .src_dim = {0, 1, 2}};
            /* k = 1: out[d0] walks x[d1] backwards, out[d1] walks x[d0]; k = 3: the mirror image */
            if (q % 2) ref.src_dim[d0] = d1, ref.src_dim[d1] = d0;
            ref.reversed[d0] = q == 1 || q == 2;
            ref.reversed[d1] = q == 2 || q == 3;
            em_tensor *r = em_rot90(x, k, 2, pairs[p]);
            CHECK_MSG(r && em_size(r, d0) == em_size(x, q % 2 ? d1 : d0), "k %lld dims %d %d", (long long)k, d0, d1);
            CHECK(shape_check(r, reorient_value, &ref));
            em_release(r);
        }
    em_tensor *v1 = trand(EM_F32, SHAPE(3), 0, 1);
    CHECK_ERR(em_rot90(m, 1, 1, (int[]){0}), EM_ERR_SHAPE);
    CHECK(shape_error_says("expected total rotation dims == 2, but got dims = 1"));
    CHECK_ERR(em_rot90(v1, 1, 2, (int[]){0, 1}), EM_ERR_SHAPE);
    CHECK_ERR(em_rot90(m, 1, 2, (int[]){0, -2}), EM_ERR_SHAPE);
    CHECK(shape_error_says("expected rotation dims to be different, but got dim0 = 0 and dim1 = -2"));
    CHECK_ERR(em_rot90(m, 1, 2, (int[]){0, 3}), EM_ERR_SHAPE);
    CHECK(shape_error_says("Rotation dim1 out of range, dim1 = 3"));
    em_tensor *all[] = {m, r1, x0, x, v1};
    shape_release_all(all, 5);
    COVER(EM_OP_rot90);
}

/* ---- repeat, tile ----------------------------------------------------------------- */
/* out[idx] = x[idx mod x's size], x aligned to out's trailing dims. */
typedef struct {
    const em_tensor *x;
    int out_ndim;
} repeat_ref;
static double repeat_value(const int64_t *idx, const void *ctx)
{
    const repeat_ref *r = ctx;
    int nd = em_ndim(r->x), lead = r->out_ndim - nd;
    int64_t i[EM_MAX_DIMS];
    for (int d = 0; d < nd; d++) i[d] = idx[lead + d] % em_size(r->x, d);
    return shape_at(r->x, i);
}

TEST(shape_repeat_and_tile)
{
    em_tensor *x0 = trand(EM_F32, SHAPE(2, 3), -1, 1), *x = tnoncontig(x0), *t = shape_transposed(EM_BOOL, 2, 3);
    struct {
        int n;
        int64_t reps[4];
        int nd;
        int64_t shape[4];
    } cases[] = {{2, {2, 3}, 2, {4, 9}}, {2, {1, 1}, 2, {2, 3}}, {3, {2, 1, 2}, 3, {2, 2, 6}},
                 {4, {1, 2, 3, 1}, 4, {1, 2, 6, 3}}, {2, {0, 2}, 2, {0, 6}}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        em_tensor *r = em_repeat(x, cases[k].n, cases[k].reps), *rt = em_tile(t, cases[k].n, cases[k].reps);
        CHECK_MSG(r && tshape_is(r, cases[k].nd, cases[k].shape), "case %zu: %s", k, em_last_error());
        CHECK(shape_check(r, repeat_value, &(repeat_ref){x, cases[k].nd}));
        CHECK(rt && em_dtype_of(rt) == EM_BOOL && shape_check(rt, repeat_value, &(repeat_ref){t, cases[k].nd}));
        em_release(r), em_release(rt);
    }
    /* tile pads missing leading repeats with 1 */
    em_tensor *t1 = em_tile(x, 1, (int64_t[]){2}), *t0 = em_tile(x, 0, NULL);
    CHECK(t1 && tshape_is(t1, SHAPE(2, 6)) && shape_check(t1, repeat_value, &(repeat_ref){x, 2}));
    CHECK(t0 && em_equal(t0, x) && !em_is_same_storage(t0, x));
    /* 0-d inputs */
    em_tensor *s = em_tensor_scalar(5, EM_I8), *s0 = em_repeat(s, 0, NULL), *s3 = em_repeat(s, 1, (int64_t[]){3});
    CHECK(s0 && em_ndim(s0) == 0 && tval(s0, 0) == 5 && s3 && tshape_is(s3, SHAPE(3)) && tval(s3, 2) == 5);
    /* 16 dims, each repeated: 16 doublings after the corner copy */
    int64_t many[16];
    for (int i = 0; i < 16; i++) many[i] = 2;
    em_tensor *v = trand(EM_I16, SHAPE(2), -9, 9), *big = em_repeat(v, 16, many);
    CHECK(big && em_numel(big) == 131072 && shape_check(big, repeat_value, &(repeat_ref){v, 16}));
    CHECK_ERR(em_repeat(x, 1, (int64_t[]){2}), EM_ERR_SHAPE);
    CHECK(shape_error_says("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"));
    CHECK_ERR(em_repeat(x, 2, (int64_t[]){2, -1}), EM_ERR_SHAPE);
    CHECK(shape_error_says("Trying to create tensor with negative dimension -3: [4, -3]"));
    CHECK_ERR(em_tile(x, 1, (int64_t[]){-1}), EM_ERR_SHAPE);
    CHECK_ERR(em_repeat(v, 2, (int64_t[]){INT64_MAX / 2, 4}), EM_ERR_MEMORY);
    em_tensor *all[] = {x0, x, t, t1, t0, s, s0, s3, v, big};
    shape_release_all(all, 10);
    COVER(EM_OP_repeat, EM_OP_tile);
}

/* ---- repeat_interleave ------------------------------------------------------------- */
/* Slice i of x (along dim, or of the flattened x when dim < 0) repeated counts[i] times. */
typedef struct {
    const em_tensor *x;
    int dim;
    const int64_t *counts;
} interleave_ref;
static double interleave_value(const int64_t *idx, const void *ctx)
{
    const interleave_ref *r = ctx;
    int nd = em_ndim(r->x);
    int64_t i[EM_MAX_DIMS], at = r->dim < 0 ? idx[0] : idx[r->dim], src = 0;
    while (at >= r->counts[src]) at -= r->counts[src++];
    if (r->dim < 0) {
        shape_unravel(src, nd, em_sizes(r->x), i);
    } else {
        memcpy(i, idx, nd * sizeof *i);
        i[r->dim] = src;
    }
    return shape_at(r->x, i);
}

TEST(shape_repeat_interleave)
{
    em_tensor *x0 = trand(EM_F64, SHAPE(3, 4), -1, 1), *x = tnoncontig(x0);
    int64_t twos[12] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, counts[] = {1, 0, 3};
    em_tensor *r0 = em_repeat_interleave(x, 2, -1, -1), *rf = em_repeat_interleave(x, 2, EM_DIM_NONE, 24);
    CHECK(r0 && tshape_is(r0, SHAPE(3, 8)) && shape_check(r0, interleave_value, &(interleave_ref){x, 1, twos}));
    CHECK(rf && tshape_is(rf, SHAPE(24)) && shape_check(rf, interleave_value, &(interleave_ref){x, -1, twos}));
    em_dtype count_dtypes[] = {EM_I32, EM_I64};
    for (int k = 0; k < 2; k++) {
        em_dtype dt = count_dtypes[k];
        em_tensor *c64 = em_from_data(counts, SHAPE(3), EM_I64), *c = em_to_dtype(c64, dt);
        em_tensor *r = em_repeat_interleave_tensor(x, c, 0, -1), *idx = em_repeat_interleave_indices(c, 4);
        CHECK(r && tshape_is(r, SHAPE(4, 4)) && shape_check(r, interleave_value, &(interleave_ref){x, 0, counts}));
        double want_idx[] = {0, 2, 2, 2};
        CHECK(idx && em_dtype_of(idx) == dt && tshape_is(idx, SHAPE(4)) && tclose(idx, want_idx, 0, 0));
        em_tensor *all[] = {c64, c, r, idx};
        shape_release_all(all, 4);
    }
    /* one count broadcast (0-d or [1]); every dtype of x */
    em_tensor *one = em_from_data((int64_t[]){3}, SHAPE(1), EM_I64), *zero_d = em_from_data((int64_t[]){2}, 0, NULL, EM_I64);
    for (int dt = 0; dt < TEST_REAL_DTYPES; dt++) {
        em_tensor *t = shape_transposed((em_dtype)dt, 2, 3);
        em_tensor *r1 = em_repeat_interleave_tensor(t, one, 1, -1), *r2 = em_repeat_interleave_tensor(t, zero_d, EM_DIM_NONE, -1);
        int64_t threes[] = {3, 3, 3}, twos6[] = {2, 2, 2, 2, 2, 2};
        CHECK(r1 && em_dtype_of(r1) == dt && shape_check(r1, interleave_value, &(interleave_ref){t, 1, threes}));
        CHECK(r2 && tshape_is(r2, SHAPE(12)) && shape_check(r2, interleave_value, &(interleave_ref){t, -1, twos6}));
        em_release(t), em_release(r1), em_release(r2);
    }
    em_tensor *s = em_tensor_scalar(5, EM_F32), *e = em_zeros(SHAPE(0, 3), EM_F32), *noc = em_zeros(SHAPE(0), EM_I64);
    em_tensor *rs = em_repeat_interleave(s, 3, EM_DIM_NONE, -1), *re = em_repeat_interleave_tensor(e, noc, 0, -1);
    em_tensor *ri = em_repeat_interleave_indices(noc, -1);
    CHECK(rs && tshape_is(rs, SHAPE(3)) && tval(rs, 2) == 5 && re && tshape_is(re, SHAPE(0, 3)) && ri && em_numel(ri) == 0);
    em_tensor *neg = em_from_data((int64_t[]){1, -2, 1}, SHAPE(3), EM_I64), *fl = em_zeros(SHAPE(3), EM_F32);
    em_tensor *two = em_from_data((int64_t[]){1, 2}, SHAPE(2), EM_I64), *m = em_zeros(SHAPE(1, 3), EM_I64);
    CHECK_ERR(em_repeat_interleave(x, -1, 0, -1), EM_ERR_RUNTIME);
    CHECK(shape_error_says("repeats can not be negative"));
    CHECK_ERR(em_repeat_interleave_tensor(x, neg, 0, -1), EM_ERR_RUNTIME);
    CHECK_ERR(em_repeat_interleave_indices(neg, -1), EM_ERR_RUNTIME);
    CHECK_ERR(em_repeat_interleave_tensor(x, fl, 0, -1), EM_ERR_DTYPE);
    CHECK(shape_error_says("\"repeat_interleave_cpu\" not implemented for 'float32'"));
    CHECK_ERR(em_repeat_interleave_tensor(x, two, 1, -1), EM_ERR_SHAPE);
    CHECK(shape_error_says("repeats must have the same size as input along dim"));
    CHECK_ERR(em_repeat_interleave_tensor(x, m, 1, -1), EM_ERR_SHAPE);
    CHECK_ERR(em_repeat_interleave_indices(zero_d, -1), EM_ERR_SHAPE);
    CHECK(shape_error_says("repeat_interleave only accept 1D vector as repeat"));
    CHECK_ERR(em_repeat_interleave(x, 2, 0, 5), EM_ERR_RUNTIME);
    CHECK(shape_error_says("allocated size does not match required size"));
    CHECK_ERR(em_repeat_interleave(s, 2, 0, -1), EM_ERR_INDEX);
    CHECK_ERR(em_repeat_interleave(x, 2, 2, -1), EM_ERR_INDEX);
    em_tensor *all[] = {x0, x, r0, rf, one, zero_d, s, e, noc, rs, re, ri, neg, fl, two, m};
    shape_release_all(all, 16);
    COVER(EM_OP_repeat_interleave);
}
