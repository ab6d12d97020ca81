/* Index ops along a dim and flat (include/ember/index.h): index_select,
 * gather, take_along_dim, the scatter family, index_add/copy/fill, take,
 * put. Each against a naive reference computed here in double on random
 * inputs of every dtype, non-contiguous self/index/src, empty and 0-d
 * tensors; errors must leave every tensor unchanged. Advanced indexing,
 * masks and nonzero: test_index_adv.c. */
#include "test.h"

static const em_dtype DTYPES[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64, EM_F16, EM_F32, EM_F64, EM_BOOL, EM_BF16};
#define NDTYPES (int)(sizeof DTYPES / sizeof *DTYPES)





/* Does t hold exactly `vals` (row-major)? */
static bool unchanged(const em_tensor *t, const double *vals) { return tclose(t, vals, 0, 0); }

/* The same values as t, transposed in memory (t 2-d): a non-contiguous view. */
static em_tensor *ttransposed(const em_tensor *t)
{
    em_tensor *tt_ = em_t(t), *c = em_contiguous(tt_), *r = em_t(c);
    RELEASE(tt_, c);
    return r;
}

/* ---- index_select ----------------------------------------------------- */
TEST(index_select_matches_reference)
{
    const int64_t xs[] = {4, 5, 3};
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = trand(dt, 3, xs, -20, 20), *xn = tnoncontig(x);
        double *xv = tvals(x);
        for (int dim = 0; dim < 3; dim++) {
            em_tensor *idx = tints(EM_I64, SHAPE(7), 0, xs[dim]), *in = tnoncontig(idx), *i32 = em_to_dtype(idx, EM_I32);
            em_tensor *r = em_index_select(xn, dim == 2 ? -1 : dim, in), *r32 = em_index_select(x, dim, i32);
            int64_t rs[3] = {4, 5, 3}, c[3];
            rs[dim] = 7;
            CHECK(r && r32 && tshape_is(r, 3, rs) && em_dtype_of(r) == dt && tshape_is(r32, 3, rs));
            for (int64_t i = 0; i < em_numel(r); i++) {
                tunravel(i, 3, rs, c);
                c[dim] = (int64_t)tval(idx, c[dim]);
                CHECK(tval(r, i) == xv[travel(3, xs, c)] && tval(r32, i) == xv[travel(3, xs, c)]);
            }
            RELEASE(idx, in, i32, r, r32);
        }
        free(xv);
        RELEASE(x, xn);
    }
    COVER(EM_OP_index_select);
}

TEST(index_select_edges_and_errors)
{
    em_tensor *x = trand(EM_F32, SHAPE(3, 4), -1, 1), *none = em_empty(SHAPE(0), EM_I64);
    em_tensor *i0 = em_tensor_scalar(2, EM_I64), *s0 = em_tensor_scalar(7, EM_F64), *z = em_tensor_scalar(0, EM_I64);
    em_tensor *e = em_index_select(x, 1, none), *r0 = em_index_select(x, 0, i0), *rs = em_index_select(s0, 0, z);
    CHECK(e && tshape_is(e, SHAPE(3, 0)) && r0 && tshape_is(r0, SHAPE(1, 4)) && tval(r0, 3) == tval(x, 11));
    CHECK(rs && em_ndim(rs) == 0 && tval(rs, 0) == 7);
    em_tensor *zz = em_zeros(SHAPE(3), EM_I64), *r3 = em_index_select(s0, 0, zz); /* 0-d stays 0-d */
    CHECK(r3 && em_ndim(r3) == 0 && tval(r3, 0) == 7);
    CHECK_ERR(em_index_select(s0, 0, i0), EM_ERR_INDEX);
    CHECK_ERR(em_index_select(s0, 0, none), EM_ERR_INDEX);
    RELEASE(zz, r3);
    em_tensor *empty = em_zeros(SHAPE(0, 3), EM_F32), *ee = em_index_select(empty, 0, none);
    CHECK(ee && tshape_is(ee, SHAPE(0, 3)));
    double bad[] = {1, 3}, neg[] = {-1};
    em_tensor *ib = tt(EM_I64, SHAPE(2), bad), *in = tt(EM_I64, SHAPE(1), neg), *i16 = em_to_dtype(ib, EM_I16);
    em_tensor *i2 = em_zeros(SHAPE(1, 1), EM_I64), *fi = em_zeros(SHAPE(1), EM_F32);
    CHECK_ERR(em_index_select(x, 0, ib), EM_ERR_INDEX); /* IndexError: index out of range in self */
    CHECK_ERR(em_index_select(x, 0, in), EM_ERR_INDEX); /* no wrap of negatives */
    CHECK_ERR(em_index_select(x, 0, i16), EM_ERR_DTYPE);
    CHECK_ERR(em_index_select(x, 0, fi), EM_ERR_DTYPE);
    CHECK_ERR(em_index_select(x, 0, i2), EM_ERR_INDEX);
    CHECK_ERR(em_index_select(x, 2, z), EM_ERR_INDEX);
    CHECK_ERR(em_index_select(empty, 0, z), EM_ERR_RUNTIME);
    em_tensor *e30 = em_zeros(SHAPE(3, 0), EM_F32);
    CHECK_ERR(em_index_select(e30, 0, ib), EM_ERR_INDEX); /* checked though nothing is read, as PyTorch */
    em_release(e30);
    /* out=: resized when its shape differs; dtype must match; unchanged on error */
    em_tensor *out = em_zeros(SHAPE(5), EM_F32), *outd = em_zeros(SHAPE(2), EM_F64);
    CHECK(em_index_select_out(out, x, 0, i0) == EM_OK && tshape_is(out, SHAPE(1, 4)) && tval(out, 0) == tval(x, 8));
    CHECK_ERR(em_index_select_out(outd, x, 0, i0), EM_ERR_DTYPE);
    CHECK_ERR(em_index_select_out(out, x, 0, ib), EM_ERR_INDEX);
    CHECK(tshape_is(out, SHAPE(1, 4)) && tval(out, 0) == tval(x, 8) && tval(outd, 0) == 0);
    em_tensor *row = em_select(x, 0, 0);
    CHECK_ERR(em_index_select_out(row, x, 0, i0), EM_ERR_RUNTIME); /* out overlaps self */
    RELEASE(x, none, i0, s0, z, e, r0, rs, empty, ee, ib, in, i16, i2, fi, out, outd, row);
}

/* ---- gather / take_along_dim ------------------------------------------ */
TEST(gather_matches_reference)
{
    const int64_t xs[] = {4, 5, 3};
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = trand(dt, 3, xs, -20, 20), *xn = tnoncontig(x);
        double *xv = tvals(x);
        for (int dim = 0; dim < 3; dim++) {
            int64_t is[3] = {3, 4, 2}, c[3];
            is[dim] = 6; /* may exceed self along dim, not elsewhere */
            em_tensor *idx = tints(EM_I64, 3, is, 0, xs[dim]), *in = tnoncontig(idx);
            em_tensor *r = em_gather(xn, dim, in);
            CHECK(r && tshape_is(r, 3, is) && em_dtype_of(r) == dt);
            for (int64_t i = 0; i < em_numel(r); i++) {
                tunravel(i, 3, is, c);
                c[dim] = (int64_t)tval(idx, i);
                CHECK(tval(r, i) == xv[travel(3, xs, c)]);
            }
            RELEASE(idx, in, r);
        }
        free(xv);
        RELEASE(x, xn);
    }
    /* 0-d, empty, errors (RuntimeError for out-of-range values, as PyTorch) */
    em_tensor *x = trand(EM_F64, SHAPE(3, 4), -1, 1), *s = em_tensor_scalar(5, EM_F32), *z = em_tensor_scalar(0, EM_I64);
    em_tensor *g0 = em_gather(s, 0, z), *ge = em_empty(SHAPE(0, 9), EM_I64), *gr = em_gather(x, 1, ge);
    CHECK(g0 && em_ndim(g0) == 0 && tval(g0, 0) == 5 && gr && tshape_is(gr, SHAPE(0, 9)));
    /* an empty index of any dtype and rank: nothing checked, as PyTorch */
    em_tensor *eu = em_empty(SHAPE(0), EM_U8), *e3 = em_empty(SHAPE(2, 0, 7), EM_I64);
    em_tensor *gu = em_gather(x, 1, eu), *g3 = em_gather(x, 0, e3);
    CHECK(gu && tshape_is(gu, SHAPE(0)) && g3 && tshape_is(g3, SHAPE(2, 0, 7)));
    RELEASE(eu, e3, gu, g3);
    double bad[] = {0, 3}, negv[] = {-1, 0};
    em_tensor *ib = tt(EM_I64, SHAPE(2, 1), bad), *ineg = tt(EM_I64, SHAPE(2, 1), negv), *i32 = em_to_dtype(ib, EM_I32);
    em_tensor *big = em_zeros(SHAPE(2, 5), EM_I64), *flat = em_zeros(SHAPE(2), EM_I64);
    CHECK_ERR(em_gather(x, 0, ib), EM_ERR_RUNTIME);
    CHECK_ERR(em_gather(x, 0, ineg), EM_ERR_RUNTIME);
    CHECK_ERR(em_gather(x, 0, i32), EM_ERR_DTYPE);
    CHECK_ERR(em_gather(x, 0, big), EM_ERR_RUNTIME);
    CHECK_ERR(em_gather(x, 0, flat), EM_ERR_RUNTIME);
    CHECK_ERR(em_gather(x, -3, flat), EM_ERR_INDEX);
    em_tensor *out = em_full(SHAPE(2, 1), 9, EM_F64), *o32 = em_zeros(SHAPE(2, 1), EM_F32);
    CHECK_ERR(em_gather_out(out, x, 0, ib), EM_ERR_RUNTIME);
    CHECK(tval(out, 0) == 9 && tval(out, 1) == 9);
    CHECK_ERR(em_gather_out(o32, x, 0, ineg), EM_ERR_RUNTIME);
    CHECK_ERR(em_gather_out(o32, x, 0, ib), EM_ERR_RUNTIME);
    CHECK_ERR(em_gather_out(o32, x, 1, big), EM_ERR_DTYPE);
    CHECK(em_gather_out(out, x, 1, big) == EM_OK && tshape_is(out, SHAPE(2, 5)) && tval(out, 6) == tval(x, 4));
    RELEASE(x, s, z, g0, ge, gr, ib, ineg, i32, big, flat, out, o32);
    COVER(EM_OP_gather);
}

TEST(take_along_dim_broadcasts)
{
    COVER(EM_OP_take_along_dim);
    em_tensor *x = trand(EM_F32, SHAPE(4, 5, 3), -1, 1), *ind = tints(EM_I64, SHAPE(1, 6, 3), -0, 5);
    em_tensor *r = em_take_along_dim(x, ind, 1);
    CHECK(r && tshape_is(r, SHAPE(4, 6, 3)));
    for (int64_t i = 0; i < 72; i++) {
        int64_t c[3];
        tunravel(i, 3, (const int64_t[]){4, 6, 3}, c);
        c[1] = (int64_t)tval(ind, c[1] * 3 + c[2]);
        CHECK(tval(r, i) == tval(x, travel(3, (const int64_t[]){4, 5, 3}, c)));
    }
    em_tensor *fi = tints(EM_I64, SHAPE(2, 3), 0, 60), *rf = em_take_along_dim_flat(x, fi), *out = em_empty(SHAPE(0), EM_F32);
    CHECK(rf && tshape_is(rf, SHAPE(6)) && em_take_along_dim_flat_out(out, x, fi) == EM_OK && em_equal(out, rf));
    for (int i = 0; i < 6; i++) CHECK(tval(rf, i) == tval(x, (int64_t)tval(fi, i)));
    CHECK(em_take_along_dim_out(out, x, ind, -2) == EM_OK && em_equal(out, r));
    em_tensor *bad = em_full(SHAPE(1, 1, 1), 5, EM_I64), *i32 = em_to_dtype(ind, EM_I32), *i2 = em_zeros(SHAPE(2, 2), EM_I64);
    em_tensor *mis = em_zeros(SHAPE(2, 1, 1), EM_I64);
    CHECK_ERR(em_take_along_dim(x, bad, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_take_along_dim(x, i32, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_take_along_dim(x, i2, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_take_along_dim(x, mis, 1), EM_ERR_SHAPE); /* 2 vs 4 does not broadcast */
    em_tensor *s0 = em_tensor_scalar(1, EM_F32), *z0 = em_tensor_scalar(0, EM_I64), *f0 = em_take_along_dim_flat(s0, z0);
    CHECK_ERR(em_take_along_dim(s0, z0, 0), EM_ERR_INDEX);
    CHECK(f0 && tshape_is(f0, SHAPE(1)) && tval(f0, 0) == 1);
    RELEASE(s0, z0, f0);
    em_tensor *past = em_full(SHAPE(1), 60, EM_I64);
    CHECK_ERR(em_take_along_dim_flat(x, past), EM_ERR_RUNTIME);
    em_release(past);
    RELEASE(x, ind, r, fi, rf, out, bad, i32, i2, mis);
}

/* ---- the scatter family ----------------------------------------------- */
enum { R_ASSIGN, R_SUM, R_PROD, R_MEAN, R_AMAX, R_AMIN };

static double identity_of(int mode)
{
    return mode == R_PROD ? 1 : mode == R_AMAX ? -INFINITY : mode == R_AMIN ? INFINITY : 0;
}

static void combine(double *x, double v, int mode, double alpha)
{
    switch (mode) {
    case R_ASSIGN: *x = v; break;
    case R_PROD: *x *= v; break;
    case R_AMAX: *x = isnan(v) || v > *x ? v : *x; break;
    case R_AMIN: *x = isnan(v) || v < *x ? v : *x; break;
    default: *x += alpha * v; break;
    }
}

/* base (sizes bs, row-major) after scattering the values of src (sizes ss)
 * at index's positions along dim, in index's row-major order. */
static void ref_scatter(double *base, const int64_t *bs, const em_tensor *index, const double *src, const int64_t *ss,
                        int dim, int mode, bool include_self, bool integral)
{
    int nd = em_ndim(index);
    int64_t n = em_numel(index), total = 1, c[8];
    for (int d = 0; d < nd; d++) total *= bs[d];
    int64_t *count = calloc(total, sizeof *count), *target = malloc((n ? n : 1) * sizeof *target);
    for (int64_t i = 0; i < n; i++) {
        tunravel(i, nd, em_sizes(index), c);
        c[dim] = (int64_t)tval(index, i);
        target[i] = travel(nd, bs, c);
        if (!include_self) base[target[i]] = identity_of(mode);
    }
    for (int64_t i = 0; i < n; i++) {
        tunravel(i, nd, em_sizes(index), c);
        combine(&base[target[i]], src[travel(nd, ss, c)], mode, 1);
        count[target[i]]++;
    }
    for (int64_t t = 0; t < total && mode == R_MEAN; t++) {
        int64_t div = count[t] + include_self;
        if (div > 1) base[t] = integral ? floor(base[t] / div) : base[t] / div;
    }
    free(count);
    free(target);
}

typedef struct scatter_case {
    int mode;
    bool include_self;
    int api; /* 0: scatter, 1: scatter reduce=, 2: scatter_value, 3: scatter_add, 4: scatter_reduce */
    const char *reduce;
} scatter_case;

static em_status run_scatter(em_tensor *self, int dim, const em_tensor *idx, const em_tensor *src, const scatter_case *s)
{
    switch (s->api) {
    case 0: return em_scatter_(self, dim, idx, src, NULL);
    case 1: return em_scatter_(self, dim, idx, src, s->reduce);
    case 2: return em_scatter_value_(self, dim, idx, 2, s->reduce);
    case 3: return em_scatter_add_(self, dim, idx, src);
    default: return em_scatter_reduce_(self, dim, idx, src, s->reduce, s->include_self);
    }
}

TEST(scatter_family_matches_reference)
{
    const scatter_case cases[] = {
        {R_ASSIGN, true, 0, NULL},     {R_SUM, true, 1, "add"},        {R_PROD, true, 1, "multiply"},
        {R_ASSIGN, true, 2, NULL},     {R_SUM, true, 2, "add"},        {R_SUM, true, 3, NULL},
        {R_SUM, true, 4, "sum"},       {R_SUM, false, 4, "sum"},       {R_PROD, true, 4, "prod"},
        {R_PROD, false, 4, "prod"},    {R_MEAN, true, 4, "mean"},      {R_MEAN, false, 4, "mean"},
        {R_AMAX, true, 4, "amax"},     {R_AMAX, false, 4, "amax"},     {R_AMIN, true, 4, "amin"},
        {R_AMIN, false, 4, "amin"},
    };
    const int64_t xs[] = {5, 4};
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        bool integral = !em_dtype_is_float(dt);
        int64_t lo = dt == EM_U8 ? 0 : -3; /* sums stay in range: no wraparound to model */
        em_tensor *x = tints(dt, 2, xs, lo, 4), *s0 = tints(dt, SHAPE(6, 7), lo, 4), *src = em_t(s0);
        double *xv = tvals(x), *sv = tvals(src);
        for (int dim = 0; dim < 2; dim++) {
            int64_t is[2] = {6, 3};
            if (dim == 1) is[0] = 3, is[1] = 6;
            em_tensor *idx = tints(EM_I64, 2, is, 0, xs[dim]), *in = tnoncontig(idx);
            for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
                const scatter_case *sc = &cases[c];
                em_tensor *self = tnoncontig(x);
                uint64_t v0 = em_version(self);
                if (sc->mode == R_MEAN && dt == EM_BOOL) {
                    CHECK_ERR(run_scatter(self, dim, in, src, sc), EM_ERR_DTYPE);
                    CHECK(unchanged(self, xv));
                    em_release(self);
                    continue;
                }
                CHECK_MSG(run_scatter(self, dim, in, src, sc) == EM_OK, "%s dim %d case %zu: %s", em_dtype_name(dt),
                          dim, c, em_last_error());
                double *want = tvals(x), two = tcast(dt, 2);
                double *vals = sc->api == 2 ? malloc(7 * 6 * sizeof *vals) : sv;
                for (int i = 0; sc->api == 2 && i < 42; i++) vals[i] = two;
                ref_scatter(want, xs, idx, vals, (const int64_t[]){7, 6}, dim, sc->mode, sc->include_self, integral);
                for (int i = 0; i < 20; i++) want[i] = tcast(dt, want[i]);
                CHECK_MSG(tclose(self, want, 0, 0), "%s dim %d case %zu", em_dtype_name(dt), dim, c);
                CHECK(em_version(self) > v0);
                if (vals != sv) free(vals);
                free(want);
                em_release(self);
            }
            RELEASE(idx, in);
        }
        /* out of place and out= give the in-place result; self stays as it was */
        em_tensor *idx = tints(EM_I64, SHAPE(6, 3), 0, 5), *a = em_scatter_add(x, 0, idx, src);
        em_tensor *b = em_clone(x), *out = em_empty(SHAPE(1), dt);
        CHECK(a && em_scatter_add_(b, 0, idx, src) == EM_OK && em_equal(a, b) && unchanged(x, xv));
        CHECK(em_scatter_add_out(out, x, 0, idx, src) == EM_OK && em_equal(out, a));
        em_tensor *r = em_scatter_reduce(x, 0, idx, src, "amax", false);
        CHECK(r && em_scatter_reduce_out(out, x, 0, idx, src, "amax", false) == EM_OK && em_equal(out, r));
        em_tensor *sc = em_scatter(x, 0, idx, src, NULL), *sv2 = em_scatter_value(x, 0, idx, 3, "multiply");
        CHECK(sc && em_scatter_out(out, x, 0, idx, src, NULL) == EM_OK && em_equal(out, sc));
        CHECK(sv2 && em_scatter_value_out(out, x, 0, idx, 3, "multiply") == EM_OK && em_equal(out, sv2));
        CHECK(unchanged(x, xv));
        free(xv);
        free(sv);
        RELEASE(x, s0, src, idx, a, b, out, r, sc, sv2);
    }
    COVER(EM_OP_scatter, EM_OP_scatter_add, EM_OP_scatter_reduce);
}

TEST(scatter_reduce_nan_and_integer_mean)
{
    double sv[] = {1, 2}, srcv[] = {NAN, 5, 5, NAN};
    double idxv[] = {0, 0, 1, 1};
    em_tensor *self = tt(EM_F32, SHAPE(2), sv), *src = tt(EM_F32, SHAPE(4), srcv), *idx = tt(EM_I64, SHAPE(4), idxv);
    em_tensor *mx = em_scatter_reduce(self, 0, idx, src, "amax", true), *mn = em_scatter_reduce(self, 0, idx, src, "amin", false);
    CHECK(mx && isnan(tval(mx, 0)) && isnan(tval(mx, 1)) && mn && isnan(tval(mn, 0)) && isnan(tval(mn, 1)));
    /* integer mean rounds down: (-5 + -6) / 2 -> -6 */
    double iv[] = {1, 2}, isv[] = {-5, -6}, i1[] = {1, 1};
    em_tensor *is = tt(EM_I64, SHAPE(2), iv), *isrc = tt(EM_I64, SHAPE(2), isv), *ii = tt(EM_I64, SHAPE(2), i1);
    em_tensor *m = em_scatter_reduce(is, 0, ii, isrc, "mean", false), *mi = em_scatter_reduce(is, 0, ii, isrc, "mean", true);
    CHECK(m && tval(m, 0) == 1 && tval(m, 1) == -6 && mi && tval(mi, 1) == -3);
    RELEASE(self, src, idx, mx, mn, is, isrc, ii, m, mi);
}

TEST(scatter_errors_leave_self_unchanged)
{
    em_tensor *x = trand(EM_F32, SHAPE(3, 4), -1, 1), *src = trand(EM_F32, SHAPE(3, 4), -1, 1);
    double *xv = tvals(x);
    double badv[] = {0, 1, 2, 3, 1, 1, 1, 1}; /* the bad value comes after good ones */
    em_tensor *bad = tt(EM_I64, SHAPE(2, 4), badv), *good = em_zeros(SHAPE(2, 4), EM_I64), *neg = em_full(SHAPE(1, 1), -1, EM_I64);
    em_tensor *src64 = em_to_dtype(src, EM_F64), *g32 = em_to_dtype(good, EM_I32), *wide = em_zeros(SHAPE(2, 5), EM_I64);
    em_tensor *small = trand(EM_F32, SHAPE(1, 4), -1, 1), *flat = em_zeros(SHAPE(4), EM_I64);
    CHECK_ERR(em_scatter_(x, 0, bad, src, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_scatter_add_(x, 0, bad, src), EM_ERR_RUNTIME);
    CHECK_ERR(em_scatter_reduce_(x, 0, bad, src, "prod", false), EM_ERR_RUNTIME);
    CHECK_ERR(em_scatter_reduce_(x, 0, bad, src, "mean", false), EM_ERR_RUNTIME);
    CHECK_ERR(em_scatter_value_(x, 0, neg, 1, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_scatter_(x, 0, good, src64, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_scatter_(x, 0, g32, src, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_scatter_(x, 0, wide, src, NULL), EM_ERR_RUNTIME);  /* index wider than self */
    CHECK_ERR(em_scatter_(x, 0, good, small, NULL), EM_ERR_RUNTIME); /* index bigger than src */
    CHECK_ERR(em_scatter_(x, 0, flat, src, NULL), EM_ERR_RUNTIME);  /* dims differ */
    CHECK_ERR(em_scatter_(x, 0, good, src, "mean"), EM_ERR_RUNTIME);
    CHECK_ERR(em_scatter_reduce_(x, 0, good, src, "add", true), EM_ERR_RUNTIME);
    CHECK_ERR(em_scatter_(x, 2, good, src, NULL), EM_ERR_INDEX);
    em_tensor *x2 = em_slice(x, 0, 1, 3, 1);
    CHECK_ERR(em_scatter_(x, 0, good, x2, NULL), EM_ERR_RUNTIME); /* src overlaps self */
    CHECK(unchanged(x, xv));
    em_tensor *row = em_zeros(SHAPE(4), EM_F32), *ex = em_expand(row, SHAPE(3, 4));
    CHECK_ERR(em_scatter_(ex, 0, good, src, NULL), EM_ERR_RUNTIME); /* self's elements overlap */
    em_tensor *out = em_zeros(SHAPE(3, 4), EM_F32);
    CHECK_ERR(em_scatter_out(out, x, 0, bad, src, NULL), EM_ERR_RUNTIME);
    CHECK(tval(out, 0) == 0 && tval(out, 11) == 0);
    em_tensor *empty = em_zeros(SHAPE(0), EM_I64);
    CHECK(em_scatter_(x, 0, empty, src, NULL) == EM_OK && unchanged(x, xv));
    free(xv);
    RELEASE(x, src, bad, good, neg, src64, g32, wide, small, flat, x2, row, ex, out, empty);
}

/* ---- index_add / index_copy / index_fill ------------------------------ */
TEST(index_add_copy_fill_match_reference)
{
    const int64_t xs[] = {4, 5, 3};
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = tints(dt, 3, xs, -3, 4);
        double *xv = tvals(x);
        for (int dim = 0; dim < 3; dim++) {
            int64_t ss[3] = {4, 5, 3}, c[3];
            ss[dim] = 6;
            em_tensor *idx = tints(EM_I64, SHAPE(6), 0, xs[dim]), *in = tnoncontig(idx), *i32 = em_to_dtype(in, EM_I32);
            em_tensor *src = tints(dt, 3, ss, -3, 4), *sn = tnoncontig(src);
            double *sv = tvals(src), *wa = tvals(x), *wc = tvals(x), *wf = tvals(x);
            double alpha = dt == EM_BOOL ? 1 : 2, fill = tcast(dt, -2);
            for (int64_t i = 0; i < em_numel(src); i++) {
                tunravel(i, 3, ss, c);
                c[dim] = (int64_t)tval(idx, c[dim]);
                int64_t t = travel(3, xs, c);
                wa[t] += alpha * sv[i], wc[t] = sv[i], wf[t] = fill;
            }
            for (int i = 0; i < 60; i++) wa[i] = tcast(dt, wa[i]);
            em_tensor *a = tnoncontig(x), *b = tnoncontig(x), *f = tnoncontig(x), *a32 = em_clone(x);
            CHECK(em_index_add_(a, dim, in, sn, alpha) == EM_OK && tclose(a, wa, 0, 0));
            CHECK(em_index_add_(a32, dim, i32, src, alpha) == EM_OK && tclose(a32, wa, 0, 0));
            CHECK(em_index_copy_(b, dim, in, sn) == EM_OK && tclose(b, wc, 0, 0));
            CHECK(em_index_fill_(f, dim, in, -2) == EM_OK && tclose(f, wf, 0, 0));
            em_tensor *ao = em_index_add(x, dim, idx, src, alpha), *co = em_index_copy(x, dim, idx, src);
            em_tensor *fo = em_index_fill(x, dim, idx, -2), *out = em_empty(SHAPE(0), dt);
            CHECK(ao && tclose(ao, wa, 0, 0) && co && tclose(co, wc, 0, 0) && fo && tclose(fo, wf, 0, 0));
            CHECK(em_index_add_out(out, x, dim, idx, src, alpha) == EM_OK && tclose(out, wa, 0, 0));
            CHECK(em_index_copy_out(out, x, dim, idx, src) == EM_OK && tclose(out, wc, 0, 0));
            CHECK(unchanged(x, xv));
            free(sv), free(wa), free(wc), free(wf);
            RELEASE(idx, in, i32, src, sn, a, b, f, a32, ao, co, fo, out);
        }
        free(xv);
        em_release(x);
    }
    COVER(EM_OP_index_add, EM_OP_index_copy, EM_OP_index_fill);
}

TEST(index_add_copy_fill_edges_and_errors)
{
    /* index_add: source's other dims broadcast; integer alpha truncates */
    em_tensor *x = em_zeros(SHAPE(3, 4), EM_F32), *row = trand(EM_F32, SHAPE(2), -1, 1);
    double iv[] = {0, 2}, negv[] = {-1}, fv[] = {0, 4};
    em_tensor *idx = tt(EM_I64, SHAPE(2), iv), *neg = tt(EM_I64, SHAPE(1), negv), *oob = tt(EM_I64, SHAPE(2), fv);
    CHECK(em_index_add_(x, 0, idx, row, 1) == EM_OK && tval(x, 3) == tval(row, 0) && tval(x, 9) == tval(row, 1) &&
          tval(x, 4) == 0);
    em_tensor *xi = em_ones(SHAPE(2), EM_I64), *oi = em_ones(SHAPE(1), EM_I64), *z0 = em_tensor_scalar(0, EM_I64);
    CHECK(em_index_add_(xi, 0, z0, oi, 0.5) == EM_OK && tval(xi, 0) == 1);
    /* index_fill wraps negatives; a 0-d tensor value is exact for int64 */
    em_tensor *big = em_scalar_int(((int64_t)1 << 62) + 1), *xl = em_zeros(SHAPE(2), EM_I64);
    CHECK(em_index_fill_tensor_(xl, 0, neg, big) == EM_OK && ((int64_t *)em_data_ptr(xl))[1] == ((int64_t)1 << 62) + 1);
    /* 0-d self */
    em_tensor *s0 = em_tensor_scalar(1, EM_F64), *v0 = em_tensor_scalar(5, EM_F64);
    CHECK(em_index_copy_(s0, 0, z0, v0) == EM_OK && tval(s0, 0) == 5);
    CHECK(em_index_add_(s0, 0, z0, v0, 1) == EM_OK && tval(s0, 0) == 10);
    CHECK(em_index_fill_(s0, 0, z0, 3) == EM_OK && tval(s0, 0) == 3);
    /* errors leave self unchanged: a good index before the bad one */
    em_tensor *y = trand(EM_F32, SHAPE(3, 4), -1, 1), *src = trand(EM_F32, SHAPE(2, 4), -1, 1);
    double *yv = tvals(y);
    em_tensor *src64 = em_to_dtype(src, EM_F64), *i16 = em_to_dtype(idx, EM_I16), *i32 = em_to_dtype(idx, EM_I32);
    em_tensor *i2d = em_zeros(SHAPE(1, 2), EM_I64), *src3 = trand(EM_F32, SHAPE(3, 4), -1, 1), *srcw = trand(EM_F32, SHAPE(2, 3), -1, 1);
    em_tensor *srcd = trand(EM_F32, SHAPE(2, 4, 1), -1, 1), *vec = trand(EM_F32, SHAPE(1), 0, 1);
    double oob3[] = {0, 3};
    em_tensor *o3 = tt(EM_I64, SHAPE(2), oob3);
    CHECK_ERR(em_index_add_(y, 0, o3, src, 1), EM_ERR_INDEX);
    CHECK_ERR(em_index_add_(y, 0, neg, vec, 1), EM_ERR_INDEX);
    CHECK_ERR(em_index_add_(y, 0, i16, src, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_index_add_(y, 0, i2d, src, 1), EM_ERR_INDEX);
    CHECK_ERR(em_index_add_(y, 0, idx, src64, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_index_add_(y, 0, idx, src3, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_index_add_(y, 0, idx, srcw, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_index_add_(y, 0, idx, srcd, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_index_copy_(y, 0, o3, src), EM_ERR_INDEX);
    CHECK_ERR(em_index_copy_(y, 0, neg, vec), EM_ERR_INDEX);
    CHECK_ERR(em_index_copy_(y, 0, i32, src), EM_ERR_DTYPE);
    CHECK_ERR(em_index_copy_(y, 0, idx, src3), EM_ERR_INDEX);
    CHECK_ERR(em_index_copy_(y, 0, idx, srcw), EM_ERR_RUNTIME);
    CHECK_ERR(em_index_copy_(y, 0, idx, src64), EM_ERR_DTYPE);
    CHECK_ERR(em_index_copy_(y, 0, idx, vec), EM_ERR_INDEX);
    CHECK_ERR(em_index_fill_(y, 1, oob, 1), EM_ERR_INDEX);
    CHECK_ERR(em_index_fill_(y, 1, i32, 1), EM_ERR_INDEX);
    CHECK_ERR(em_index_fill_(y, 1, i2d, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_index_fill_tensor_(y, 1, idx, vec), EM_ERR_RUNTIME);
    em_tensor *y2 = em_slice(y, 0, 0, 2, 1);
    CHECK_ERR(em_index_copy_(y, 0, idx, y2), EM_ERR_RUNTIME); /* source overlaps self */
    CHECK(unchanged(y, yv));
    free(yv);
    RELEASE(x, row, idx, neg, oob, xi, oi, z0, big, xl, s0, v0, y, src, src64, i16, i32, i2d, src3, srcw, srcd, vec, o3, y2);
}

/* ---- take / put ------------------------------------------------------- */
TEST(take_and_put_match_reference)
{
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = tints(dt, SHAPE(3, 4), -3, 4), *xt = ttransposed(x); /* same values, column-major */
        double *xv = tvals(x);
        em_tensor *idx = tints(EM_I64, SHAPE(2, 5), -12, 12), *in = tnoncontig(idx);
        em_tensor *r = em_take(xt, in);
        CHECK(r && tshape_is(r, SHAPE(2, 5)) && em_dtype_of(r) == dt);
        for (int i = 0; i < 10; i++) {
            int64_t j = (int64_t)tval(idx, i);
            CHECK(tval(r, i) == xv[j < 0 ? j + 12 : j]);
        }
        /* put_, accumulate or not, into a non-contiguous self; source of another shape */
        em_tensor *src = tints(dt, SHAPE(10), -3, 4), *st = em_view(src, SHAPE(5, 2));
        double *wp = tvals(x), *wa = tvals(x);
        for (int i = 0; i < 10; i++) {
            int64_t j = (int64_t)tval(idx, i);
            j = j < 0 ? j + 12 : j;
            wp[j] = tval(src, i);
            wa[j] += tval(src, i);
        }
        for (int i = 0; i < 12; i++) wa[i] = tcast(dt, wa[i]);
        em_tensor *p = ttransposed(x), *a = ttransposed(x);
        CHECK(em_put_(p, in, st, false) == EM_OK && tclose(p, wp, 0, 0));
        CHECK(em_put_(a, idx, src, true) == EM_OK && tclose(a, wa, 0, 0));
        em_tensor *po = em_put(x, idx, src, true), *out = em_empty(SHAPE(0), dt);
        CHECK(po && tclose(po, wa, 0, 0) && unchanged(x, xv));
        CHECK(em_take_out(out, x, idx) == EM_OK && em_equal(out, r));
        free(xv), free(wp), free(wa);
        RELEASE(x, xt, idx, in, r, src, st, p, a, po, out);
    }
    /* errors: IndexError for out-of-range (also on an empty self); self unchanged */
    em_tensor *x = trand(EM_F32, SHAPE(3, 4), -1, 1), *src = trand(EM_F32, SHAPE(2), -1, 1);
    double *xv = tvals(x), bv[] = {0, 12}, nv[] = {-13, 0};
    em_tensor *bad = tt(EM_I64, SHAPE(2), bv), *nb = tt(EM_I64, SHAPE(2), nv), *i32 = em_to_dtype(bad, EM_I32);
    em_tensor *src1 = trand(EM_F32, SHAPE(1), -1, 1), *src64 = em_to_dtype(src, EM_F64), *e = em_zeros(SHAPE(0), EM_F32);
    em_tensor *ok = em_zeros(SHAPE(2), EM_I64), *none = em_zeros(SHAPE(0), EM_I64), *te = em_take(e, none);
    CHECK(te && tshape_is(te, SHAPE(0)));
    CHECK_ERR(em_take(x, bad), EM_ERR_INDEX);
    CHECK_ERR(em_take(x, nb), EM_ERR_INDEX);
    CHECK_ERR(em_take(x, i32), EM_ERR_DTYPE);
    CHECK_ERR(em_take(e, ok), EM_ERR_INDEX);
    CHECK_ERR(em_put_(x, bad, src, false), EM_ERR_INDEX);
    CHECK_ERR(em_put_(x, nb, src, true), EM_ERR_INDEX);
    CHECK_ERR(em_put_(x, ok, src1, false), EM_ERR_INDEX); /* numel mismatch */
    CHECK_ERR(em_put_(x, ok, src64, false), EM_ERR_DTYPE);
    CHECK_ERR(em_put_(x, i32, src, false), EM_ERR_DTYPE);
    em_tensor *xt = em_t(x), *xs = em_as_strided(x, SHAPE(2), (const int64_t[]){1}, 0);
    CHECK_ERR(em_put_(xt, bad, src, false), EM_ERR_INDEX); /* the non-contiguous path too */
    CHECK_ERR(em_put_(x, ok, xs, false), EM_ERR_RUNTIME);   /* source overlaps self */
    CHECK(unchanged(x, xv));
    free(xv);
    RELEASE(x, src, bad, nb, i32, src1, src64, e, ok, none, te, xt, xs);
    COVER(EM_OP_take, EM_OP_put);
}

/* ---- row and per-element fast paths ----------------------------------- */
/* Rows of a (V, D) table: index_select / x[idx] (whole rows), index_add
 * (a vectorized row sum, duplicates accumulated), gather and scatter_add
 * (one index moving along the row), each on contiguous and transposed
 * (strided rows) tables, int64 and int32 indices, against references. */
TEST(index_row_fast_paths_match_reference)
{
    const em_dtype dts[] = {EM_F32, EM_F64, EM_F16, EM_I32, EM_I64};
    const int64_t V = 9, D = 33, N = 20;
    for (int k = 0; k < (int)(sizeof dts / sizeof *dts); k++) {
        em_dtype dt = dts[k];
        em_tensor *w = tints(dt, SHAPE(V, D), -8, 8), *wt = ttransposed(w);
        em_tensor *idx = tints(EM_I64, SHAPE(N), 0, V), *i32 = em_to_dtype(idx, EM_I32);
        em_tensor *src = tints(dt, SHAPE(N, D), -8, 8), *srct = ttransposed(src);
        double *wv = tvals(w), *sv = tvals(src), *want = malloc(V * D * sizeof *want);
        for (int layout = 0; layout < 2; layout++) {
            em_tensor *table = layout ? wt : w, *rows = layout ? srct : src;
            em_tensor *sel = em_index_select(table, 0, layout ? i32 : idx);
            em_tensor *adv = em_index(table, 1, (const em_tensor *const[]){idx});
            CHECK(sel && adv && tshape_is(sel, SHAPE(N, D)) && tshape_is(adv, SHAPE(N, D)));
            for (int64_t i = 0; i < N * D; i++) {
                double ref = wv[(int64_t)tval(idx, i / D) * D + i % D];
                CHECK(tval(sel, i) == ref && tval(adv, i) == ref);
            }
            /* index_add_ (alpha 2) and scatter_add_ along dim 0, duplicates summed */
            em_tensor *acc = em_clone(table), *sc = em_clone(table);
            em_tensor *col = em_view(idx, SHAPE(N, 1)), *idx2 = em_expand(col, SHAPE(N, D)), *idx2c = em_contiguous(idx2);
            CHECK(em_index_add_(acc, 0, layout ? i32 : idx, rows, 2) == EM_OK);
            CHECK(em_scatter_add_(sc, 0, layout ? idx2 : idx2c, rows) == EM_OK);
            for (int64_t i = 0; i < V * D; i++) want[i] = wv[i];
            for (int64_t i = 0; i < N * D; i++) want[(int64_t)tval(idx, i / D) * D + i % D] += 2 * sv[i];
            CHECK(tclose(acc, want, 0, 0));
            for (int64_t i = 0; i < N * D; i++) want[(int64_t)tval(idx, i / D) * D + i % D] -= sv[i];
            CHECK(tclose(sc, want, 0, 0));
            /* gather along the last dim and along dim 0 (an index per element) */
            em_tensor *gl = tints(EM_I64, SHAPE(V, D), 0, D), *g0 = tints(EM_I64, SHAPE(V, D), 0, V);
            em_tensor *gln = tnoncontig(gl), *rl = em_gather(table, 1, layout ? gln : gl), *r0 = em_gather(table, 0, g0);
            CHECK(rl && r0);
            for (int64_t i = 0; i < V * D; i++)
                CHECK(tval(rl, i) == wv[i / D * D + (int64_t)tval(gl, i)] && tval(r0, i) == wv[(int64_t)tval(g0, i) * D + i % D]);
            RELEASE(sel, adv, acc, sc, col, idx2, idx2c, gl, g0, gln, rl, r0);
        }
        free(wv), free(sv), free(want);
        RELEASE(w, wt, idx, i32, src, srct);
    }
}

/* Large indices are validated on several threads: the first bad value (in
 * row-major order) is the one reported, and nothing is written. */
TEST(index_validation_threads_reports_first_bad)
{
    em_set_num_threads(2);
    int64_t n = 1 << 18;
    em_tensor *self = em_zeros(SHAPE(4), EM_F32), *idx = em_zeros(SHAPE(n), EM_I64), *src = em_ones(SHAPE(n), EM_F32);
    int64_t *ip = em_data_ptr(idx);
    ip[n / 3] = 7;
    ip[n - 5] = -3;
    CHECK_ERR(em_scatter_add_(self, 0, idx, src), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "index 7 is out of bounds") != NULL);
    for (int i = 0; i < 4; i++) CHECK(tval(self, i) == 0);
    ip[n / 3] = 0;
    CHECK_ERR(em_index_add_(self, 0, idx, src, 1), EM_ERR_INDEX);
    for (int i = 0; i < 4; i++) CHECK(tval(self, i) == 0);
    RELEASE(self, idx, src);
}

/* ---- threads ---------------------------------------------------------- */
TEST(index_large_threads_and_duplicates)
{
    em_set_num_threads(2);
    int64_t n = 1 << 17;
    em_tensor *x = trand(EM_F32, SHAPE(n, 2), -1, 1), *idx = tints(EM_I64, SHAPE(n), 0, n);
    em_tensor *r = em_index_select(x, 0, idx);
    CHECK(r);
    const float *xp = em_data_ptr(x), *rp = em_data_ptr(r);
    const int64_t *ip = em_data_ptr(idx);
    for (int64_t i = 0; i < n; i++) CHECK(rp[2 * i] == xp[2 * ip[i]] && rp[2 * i + 1] == xp[2 * ip[i] + 1]);
    /* an index per element (one index tensor; then two: the general path) */
    em_tensor *cols = tints(EM_I64, SHAPE(n, 2), 0, 2), *g = em_gather(x, 1, cols);
    em_tensor *rows = em_view(idx, SHAPE(n, 1)), *adv = em_index(x, 2, (const em_tensor *const[]){rows, cols});
    CHECK(g && adv && tshape_is(adv, SHAPE(n, 2)));
    const float *gp = em_data_ptr(g), *ap2 = em_data_ptr(adv);
    const int64_t *cp = em_data_ptr(cols);
    for (int64_t i = 0; i < 2 * n; i++) CHECK(gp[i] == xp[2 * (i / 2) + cp[i]] && ap2[i] == xp[2 * ip[i / 2] + cp[i]]);
    RELEASE(cols, g, rows, adv);
    /* many duplicates, all summed: every one of 16 bins gets n/16 ones */
    em_tensor *bins = em_zeros(SHAPE(16), EM_I64), *ones = em_ones(SHAPE(n), EM_I64), *ar = em_empty(SHAPE(n), EM_I64);
    int64_t *ap = em_data_ptr(ar);
    for (int64_t i = 0; i < n; i++) ap[i] = i % 16;
    CHECK(em_scatter_add_(bins, 0, ar, ones) == EM_OK && em_index_add_(bins, 0, ar, ones, 1) == EM_OK);
    em_tensor *list[] = {ar};
    CHECK(em_index_put_(bins, 1, (const em_tensor *const *)list, ones, true) == EM_OK);
    for (int b = 0; b < 16; b++) CHECK(tval(bins, b) == 3 * n / 16);
    RELEASE(x, idx, r, bins, ones, ar);
}
