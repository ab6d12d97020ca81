/* Advanced indexing (em_index, em_index_put_: the placement rule, masks,
 * broadcasting, accumulation of duplicates), the mask ops and nonzero,
 * against naive references computed here. */
#include "test.h"

static const em_dtype DTYPES[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64, EM_F16, EM_F32, EM_F64, EM_BOOL, EM_BF16};
#define NDTYPES (int)(sizeof DTYPES / sizeof *DTYPES)

#define LIST(...) ((const em_tensor *const[]){__VA_ARGS__})

/* An index value, wrapped into [0, size). */
static int64_t at(const em_tensor *idx, int64_t i, int64_t size)
{
    int64_t v = (int64_t)tval(idx, i);
    return v < 0 ? v + size : v;
}

/* ---- em_index: the placement rule ------------------------------------ */
TEST(index_placement_rule)
{
    const int64_t xs[] = {2, 3, 4, 5};
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = trand(dt, 4, xs, -9, 9), *xn = tnoncontig(x);
        double *xv = tvals(x);
        int64_t c[5], s[4];
        /* adjacent: x[:, i, j] -> (2, 6, 5); negative indices count from the end */
        em_tensor *i = tints(EM_I64, SHAPE(6), -3, 3), *j = tints(EM_I64, SHAPE(6), -4, 4), *jn = tnoncontig(j);
        em_tensor *r = em_index(xn, 3, LIST(NULL, i, jn));
        CHECK(r && tshape_is(r, SHAPE(2, 6, 5)) && em_dtype_of(r) == dt);
        for (int64_t e = 0; e < 60; e++) {
            tunravel(e, 3, (const int64_t[]){2, 6, 5}, c);
            s[0] = c[0], s[1] = at(i, c[1], 3), s[2] = at(j, c[1], 4), s[3] = c[2];
            CHECK(tval(r, e) == xv[travel(4, xs, s)]);
        }
        /* not adjacent: x[i, :, j] with i (2,1), j (3,) -> B = (2, 3) first: (2, 3, 3, 5) */
        em_tensor *i2 = tints(EM_I64, SHAPE(2, 1), -2, 2), *j3 = tints(EM_I64, SHAPE(3), 0, 4);
        em_tensor *rb = em_index(xn, 3, LIST(i2, NULL, j3));
        CHECK(rb && tshape_is(rb, SHAPE(2, 3, 3, 5)));
        for (int64_t e = 0; e < 90; e++) {
            tunravel(e, 4, (const int64_t[]){2, 3, 3, 5}, c);
            s[0] = at(i2, c[0], 2), s[1] = c[2], s[2] = at(j3, c[1], 4), s[3] = c[3];
            CHECK(tval(rb, e) == xv[travel(4, xs, s)]);
        }
        /* adjacent and broadcast: x[:, i, j] with i (2,1), j (3,) -> (2, 2, 3, 5) */
        em_tensor *i2b = tints(EM_I64, SHAPE(2, 1), 0, 3), *rc = em_index(x, 3, LIST(NULL, i2b, j3));
        CHECK(rc && tshape_is(rc, SHAPE(2, 2, 3, 5)));
        for (int64_t e = 0; e < 60; e++) {
            tunravel(e, 4, (const int64_t[]){2, 2, 3, 5}, c);
            s[0] = c[0], s[1] = at(i2b, c[1], 3), s[2] = at(j3, c[2], 4), s[3] = c[3];
            CHECK(tval(rc, e) == xv[travel(4, xs, s)]);
        }
        /* one index tensor, the dims after it full slices: x[i2] -> (2, 1, 3, 4, 5); last dim only */
        em_tensor *rd = em_index(x, 1, LIST(i2)), *l = tints(EM_I64, SHAPE(7), -5, 5);
        em_tensor *re = em_index(xn, 4, LIST(NULL, NULL, NULL, l));
        CHECK(rd && tshape_is(rd, SHAPE(2, 1, 3, 4, 5)) && re && tshape_is(re, SHAPE(2, 3, 4, 7)));
        for (int64_t e = 0; e < 120; e++) CHECK(tval(rd, e) == xv[at(i2, e / 60, 2) * 60 + e % 60]);
        for (int64_t e = 0; e < 168; e++) CHECK(tval(re, e) == xv[(e / 7) * 5 + at(l, e % 7, 5)]);
        free(xv);
        RELEASE(x, xn, i, j, jn, r, i2, j3, rb, i2b, rc, rd, l, re);
    }
    COVER(EM_OP_index);
}

TEST(index_masks_and_empty)
{
    em_tensor *x = trand(EM_F32, SHAPE(2, 3, 4), -1, 1), *m = tints(EM_BOOL, SHAPE(3, 4), 0, 2), *mu = em_to_dtype(m, EM_U8);
    double *xv = tvals(x);
    int64_t pos[12], n = 0;
    for (int64_t e = 0; e < 12; e++)
        if (tval(m, e)) pos[n++] = e;
    /* x[:, m] -> (2, n): the mask stands for its nonzero coordinates */
    em_tensor *r = em_index(x, 2, LIST(NULL, m)), *ru = em_index(x, 2, LIST(NULL, mu));
    CHECK(r && tshape_is(r, SHAPE(2, n)) && ru && em_equal(r, ru));
    for (int64_t e = 0; e < 2 * n; e++) CHECK(tval(r, e) == xv[(e / n) * 12 + pos[e % n]]);
    /* a 1-d mask and an int index, not adjacent: x[m0, :, j] */
    double m0v[] = {1, 1}, jv[] = {3, 0};
    em_tensor *m0 = tt(EM_BOOL, SHAPE(2), m0v), *j = tt(EM_I64, SHAPE(2), jv), *rj = em_index(x, 3, LIST(m0, NULL, j));
    CHECK(rj && tshape_is(rj, SHAPE(2, 3)) && tval(rj, 0) == xv[3] && tval(rj, 4) == xv[12 + 4]);
    /* 0-d masks add a dim of size 1 (true) or 0 (false), as NumPy */
    em_tensor *t = em_scalar_bool(true), *f = em_scalar_bool(false), *y = trand(EM_F64, SHAPE(3, 4), -1, 1);
    em_tensor *rt = em_index(y, 1, LIST(t)), *rf = em_index(y, 1, LIST(f)), *rtj = em_index(y, 2, LIST(j, t));
    em_tensor *rmid = em_index(y, 3, LIST(NULL, t, j));
    CHECK(rt && tshape_is(rt, SHAPE(1, 3, 4)) && rf && tshape_is(rf, SHAPE(0, 3, 4)));
    CHECK(rtj == NULL); /* j = [3, 0] is out of range for dim 0 of size 3 */
    double j2v[] = {2, 0};
    em_tensor *j2 = tt(EM_I64, SHAPE(2), j2v), *rtj2 = em_index(y, 2, LIST(j2, t));
    CHECK(rtj2 && tshape_is(rtj2, SHAPE(2, 4)) && tval(rtj2, 0) == tval(y, 8));
    CHECK(rmid && tshape_is(rmid, SHAPE(3, 2)) && tval(rmid, 0) == tval(y, 3) && tval(rmid, 3) == tval(y, 4));
    /* empty index tensors and empty self */
    em_tensor *none = em_zeros(SHAPE(0), EM_I64), *re = em_index(x, 2, LIST(NULL, none));
    em_tensor *ez = em_zeros(SHAPE(0, 3), EM_F32), *rz = em_index(ez, 1, LIST(none));
    CHECK(re && tshape_is(re, SHAPE(2, 0, 4)) && rz && tshape_is(rz, SHAPE(0, 3)));
    /* nothing read, nothing checked (as PyTorch and NumPy): an empty result ignores bad values */
    em_tensor *e3 = em_zeros(SHAPE(2, 2, 0), EM_F32), *far = em_full(SHAPE(1), -3, EM_I64), *ef = em_index(e3, 1, LIST(far));
    CHECK(ef && tshape_is(ef, SHAPE(1, 2, 0)) && em_index_put_(e3, 1, LIST(far), ef, true) == EM_OK);
    RELEASE(e3, far, ef);
    /* errors (IndexError, as PyTorch's indexing) */
    em_tensor *i32 = em_to_dtype(j, EM_I32), *fl = em_to_dtype(j, EM_F32), *bad = em_full(SHAPE(1), 2, EM_I64);
    em_tensor *mbad = em_zeros(SHAPE(3, 3), EM_BOOL), *jb = em_zeros(SHAPE(3), EM_I64), *zero = em_zeros(SHAPE(1), EM_I64);
    em_tensor *negbad = em_full(SHAPE(1), -3, EM_I64);
    CHECK_ERR(em_index(x, 1, LIST(bad)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 1, LIST(negbad)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 4, LIST(NULL, NULL, NULL, zero)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 3, LIST(NULL, NULL, m)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 1, LIST(i32)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 1, LIST(fl)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 2, LIST(NULL, mbad)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 2, LIST(j, jb)), EM_ERR_INDEX);
    CHECK_ERR(em_index(x, 1, LIST(NULL)), EM_ERR_RUNTIME);
    CHECK_ERR(em_index(x, 0, NULL), EM_ERR_RUNTIME);
    free(xv);
    RELEASE(x, m, mu, r, ru, m0, j, rj, t, f, y, rt, rf, rmid, j2, rtj2, none, re, ez, rz, i32, fl, bad, mbad, jb, zero,
            negbad);
}

/* ---- em_index_put_ ---------------------------------------------------- */
TEST(index_put_matches_reference)
{
    const int64_t xs[] = {4, 5, 3};
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        int64_t lo = dt == EM_U8 ? 0 : -3;
        em_tensor *x = tints(dt, 3, xs, lo, 4);
        double *xv = tvals(x);
        /* x[i, :, j] = v (v (5,) broadcast to the result (6, 5)); duplicates in (i, j) */
        em_tensor *i = tints(EM_I64, SHAPE(6), -4, 4), *j = tints(EM_I64, SHAPE(6), 0, 2), *in = tnoncontig(i);
        em_tensor *v = tints(dt, SHAPE(5), lo, 4), *vn = tnoncontig(v);
        double *wa = tvals(x), *wp = tvals(x);
        for (int64_t e = 0; e < 30; e++) {
            int64_t t = travel(3, xs, (const int64_t[]){at(i, e / 5, 4), e % 5, at(j, e / 5, 3)});
            wa[t] = tval(v, e % 5);
            wp[t] += tval(v, e % 5);
        }
        for (int e = 0; e < 60; e++) wp[e] = tcast(dt, wp[e]);
        em_tensor *a = tnoncontig(x), *p = tnoncontig(x);
        uint64_t v0 = em_version(a);
        CHECK(em_index_put_(a, 3, LIST(in, NULL, j), vn, false) == EM_OK && tclose(a, wa, 0, 0) && em_version(a) > v0);
        CHECK_MSG(em_index_put_(p, 3, LIST(i, NULL, j), v, true) == EM_OK && tclose(p, wp, 0, 0), "%s", em_dtype_name(dt));
        em_tensor *po = em_index_put(x, 3, LIST(i, NULL, j), v, true);
        CHECK(po && tclose(po, wp, 0, 0) && tclose(x, xv, 0, 0));
        /* a mask: x[m] = w, w (n, 1) broadcast to the result (n, 3) */
        em_tensor *m = tints(EM_BOOL, SHAPE(4, 5), 0, 2), *mc = em_nonzero(m);
        int64_t n = em_size(mc, 0), q = -1;
        em_tensor *w = tints(dt, SHAPE(n, 1), lo, 4), *b = em_clone(x);
        CHECK(em_index_put_(b, 1, LIST(m), w, false) == EM_OK);
        for (int64_t e = 0; e < 60; e++) {
            bool on = tval(m, e / 3);
            q += on && e % 3 == 0;
            CHECK(tval(b, e) == (on ? tval(w, q) : xv[e]));
        }
        free(xv), free(wa), free(wp);
        RELEASE(x, i, j, in, v, vn, a, p, po, m, mc, w, b);
    }
    COVER(EM_OP_index_put);
}

TEST(index_put_errors_leave_self_unchanged)
{
    em_tensor *x = trand(EM_F32, SHAPE(3, 4), -1, 1), *v = trand(EM_F32, SHAPE(4), -1, 1);
    double *xv = tvals(x), badv[] = {0, 1, 3};
    em_tensor *bad = tt(EM_I64, SHAPE(3), badv), *ok = em_zeros(SHAPE(1), EM_I64), *v64 = em_to_dtype(v, EM_F64);
    em_tensor *v24 = trand(EM_F32, SHAPE(2, 4), -1, 1), *v3 = trand(EM_F32, SHAPE(3), -1, 1), *row = em_select(x, 0, 1);
    CHECK_ERR(em_index_put_(x, 1, LIST(bad), v, false), EM_ERR_INDEX);
    CHECK_ERR(em_index_put_(x, 1, LIST(bad), v, true), EM_ERR_INDEX);
    CHECK_ERR(em_index_put_(x, 1, LIST(ok), v64, false), EM_ERR_DTYPE);
    em_tensor *m33 = em_zeros(SHAPE(3, 3), EM_BOOL); /* the indices' shapes are checked before dtypes, as PyTorch */
    CHECK_ERR(em_index_put_(x, 1, LIST(m33), v64, false), EM_ERR_INDEX);
    CHECK_ERR(em_index_put_(x, 1, LIST(ok), v24, false), EM_ERR_SHAPE); /* more values than the result (1, 4) holds */
    CHECK_ERR(em_index_put_(x, 1, LIST(ok), v3, false), EM_ERR_SHAPE);
    CHECK_ERR(em_index_put_(x, 1, LIST(ok), row, false), EM_ERR_RUNTIME); /* values overlap self */
    CHECK_ERR(em_index_put_(x, 1, LIST(NULL), v, false), EM_ERR_RUNTIME);
    CHECK(tclose(x, xv, 0, 0));
    em_tensor *z = em_zeros(SHAPE(4), EM_F32), *ex = em_expand(z, SHAPE(3, 4));
    CHECK_ERR(em_index_put_(ex, 1, LIST(ok), v, true), EM_ERR_RUNTIME); /* self's elements overlap */
    /* 0-d self and a 0-d mask; a 0-d value broadcast everywhere */
    em_tensor *s = em_tensor_scalar(1, EM_F64), *t = em_scalar_bool(true), *five = em_tensor_scalar(5, EM_F64);
    CHECK(em_index_put_(s, 1, LIST(t), five, false) == EM_OK && tval(s, 0) == 5);
    em_tensor *vx = em_tensor_scalar(7, EM_F32), *none = em_zeros(SHAPE(0), EM_I64);
    CHECK(em_index_put_(x, 1, LIST(ok), vx, true) == EM_OK && tval(x, 0) == (float)(xv[0] + 7) && tval(x, 4) == xv[4]);
    CHECK(em_index_put_(x, 2, LIST(NULL, none), vx, false) == EM_OK);
    /* no index fits a dim of size 0, even where the result is empty (PyTorch's AdvancedIndex check) */
    em_tensor *e0 = em_zeros(SHAPE(0, 0), EM_F32), *r0 = em_index(e0, 2, LIST(NULL, ok));
    CHECK(r0 == NULL && em_error_code() == EM_ERR_INDEX);
    CHECK_ERR(em_index_put_(e0, 2, LIST(NULL, ok), vx, false), EM_ERR_INDEX);
    free(xv);
    RELEASE(x, v, bad, ok, v64, v24, v3, row, z, ex, s, t, five, vx, none, e0, m33);
}

/* ---- masks ------------------------------------------------------------ */
TEST(masked_fill_matches_reference)
{
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = trand(dt, SHAPE(3, 4), -9, 9), *xn = tnoncontig(x), *m = tints(EM_BOOL, SHAPE(4), 0, 2);
        em_tensor *mu = em_to_dtype(m, EM_U8), *m3 = tints(EM_BOOL, SHAPE(2, 1, 4), 0, 2);
        double *xv = tvals(x), fill = tcast(dt, -2.5);
        CHECK(em_masked_fill_(xn, m, -2.5) == EM_OK);
        for (int e = 0; e < 12; e++) CHECK(tval(xn, e) == (tval(m, e % 4) ? fill : xv[e]));
        em_tensor *r = em_masked_fill(x, m3, -2.5), *ru = em_masked_fill(x, mu, -2.5); /* broadcast up: (2, 3, 4) */
        CHECK(r && tshape_is(r, SHAPE(2, 3, 4)) && em_dtype_of(r) == dt && ru && em_equal(ru, xn));
        for (int e = 0; e < 24; e++) CHECK(tval(r, e) == (tval(m3, (e / 12) * 4 + e % 4) ? fill : xv[e % 12]));
        CHECK(tclose(x, xv, 0, 0));
        free(xv);
        RELEASE(x, xn, m, mu, m3, r, ru);
    }
    em_tensor *x = trand(EM_F32, SHAPE(3, 4), -1, 1), *m = tints(EM_BOOL, SHAPE(3, 4), 0, 2), *mi = em_to_dtype(m, EM_I32);
    double *xv = tvals(x);
    em_tensor *big = em_scalar_int(((int64_t)1 << 62) + 1), *l = em_zeros(SHAPE(2), EM_I64), *one = em_ones(SHAPE(2), EM_BOOL);
    CHECK(em_masked_fill_tensor_(l, one, big) == EM_OK && ((int64_t *)em_data_ptr(l))[1] == ((int64_t)1 << 62) + 1);
    em_tensor *m23 = em_zeros(SHAPE(2, 3, 4), EM_BOOL), *vec = em_zeros(SHAPE(1), EM_F32), *row = em_zeros(SHAPE(4), EM_F32);
    em_tensor *ex = em_expand(row, SHAPE(3, 4)), *m5 = em_zeros(SHAPE(5), EM_BOOL);
    CHECK_ERR(em_masked_fill_(x, mi, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_masked_fill_(x, m23, 1), EM_ERR_SHAPE); /* in place, self cannot grow */
    CHECK_ERR(em_masked_fill_(x, m5, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_masked_fill_tensor_(x, m, vec), EM_ERR_RUNTIME);
    CHECK_ERR(em_masked_fill_(ex, m, 1), EM_ERR_RUNTIME);
    CHECK(tclose(x, xv, 0, 0));
    free(xv);
    RELEASE(x, m, mi, big, l, one, m23, vec, row, ex, m5);
    COVER(EM_OP_masked_fill);
}

TEST(masked_scatter_and_select_match_reference)
{
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = trand(dt, SHAPE(3, 4), -9, 9), *m = tints(EM_BOOL, SHAPE(3, 4), 0, 2), *mu = em_to_dtype(m, EM_U8);
        /* non-contiguous (6, 4), read row-major: enough for any mask below (24 elements) */
        em_tensor *s0 = trand(dt, SHAPE(4, 6), -9, 9), *src = em_t(s0);
        double *xv = tvals(x), *sv = tvals(src);
        em_tensor *a = tnoncontig(x);
        CHECK(em_masked_scatter_(a, mu, src) == EM_OK);
        for (int e = 0, q = 0; e < 12; e++) CHECK(tval(a, e) == (tval(m, e) ? sv[q++] : xv[e]));
        em_tensor *sel = em_masked_select(x, m), *out = em_empty(SHAPE(0), dt);
        CHECK(sel && em_ndim(sel) == 1 && em_dtype_of(sel) == dt && em_masked_select_out(out, x, mu) == EM_OK);
        CHECK(em_equal(out, sel));
        for (int e = 0, q = 0; e < 12; e++) CHECK(!tval(m, e) || tval(sel, q++) == xv[e]);
        /* broadcasting: a (4,) mask selects from every row; (2,1,4) grows the result */
        em_tensor *m4 = tints(EM_BOOL, SHAPE(2, 1, 4), 0, 2), *b = em_masked_scatter(x, m4, src), *bs = em_masked_select(x, m4);
        CHECK(b && tshape_is(b, SHAPE(2, 3, 4)) && bs);
        for (int e = 0, q = 0; e < 24; e++) {
            bool on = tval(m4, (e / 12) * 4 + e % 4);
            CHECK(tval(b, e) == (on ? sv[q] : xv[e % 12]));
            if (on) CHECK(tval(bs, q++) == xv[e % 12]);
        }
        CHECK(tclose(x, xv, 0, 0));
        free(xv), free(sv);
        RELEASE(x, m, mu, s0, src, a, sel, out, m4, b, bs);
    }
    /* source reading self; too small a source; wrong dtypes */
    double xv[] = {1, 2, 3, 4}, mv[] = {0, 1, 1, 1};
    em_tensor *x = tt(EM_F32, SHAPE(4), xv), *m = tt(EM_BOOL, SHAPE(4), mv), *mi = em_to_dtype(m, EM_I32);
    CHECK(em_masked_scatter_(x, m, x) == EM_OK && tval(x, 1) == 1 && tval(x, 2) == 2 && tval(x, 3) == 3);
    em_tensor *y = tt(EM_F32, SHAPE(4), xv), *s2 = em_zeros(SHAPE(2), EM_F32), *sd = em_zeros(SHAPE(4), EM_F64);
    CHECK_ERR(em_masked_scatter_(y, m, s2), EM_ERR_RUNTIME);
    CHECK_ERR(em_masked_scatter_(y, m, sd), EM_ERR_DTYPE);
    CHECK_ERR(em_masked_scatter_(y, mi, s2), EM_ERR_DTYPE);
    CHECK_ERR(em_masked_select(y, mi), EM_ERR_DTYPE);
    em_tensor *od = em_empty(SHAPE(0), EM_F64);
    CHECK_ERR(em_masked_select_out(od, y, m), EM_ERR_DTYPE);
    CHECK(tclose(y, xv, 0, 0));
    em_tensor *s = em_tensor_scalar(3, EM_F32), *t = em_scalar_bool(true), *ss = em_masked_select(s, t);
    CHECK(ss && tshape_is(ss, SHAPE(1)) && tval(ss, 0) == 3);
    RELEASE(x, m, mi, y, s2, sd, od, s, t, ss);
    COVER(EM_OP_masked_scatter, EM_OP_masked_select);
}

TEST(nonzero_matches_reference)
{
    COVER(EM_OP_argwhere);
    for (int k = 0; k < NDTYPES; k++) {
        em_dtype dt = DTYPES[k];
        em_tensor *x = tints(dt, SHAPE(3, 4, 5), 0, 3), *xn = tnoncontig(x), *t = em_transpose(xn, 0, 2);
        em_tensor *r = em_nonzero(t), *a = em_argwhere(t);
        CHECK(r && em_dtype_of(r) == EM_I64 && em_ndim(r) == 2 && em_size(r, 1) == 3 && a && em_equal(a, r));
        int64_t q = 0, c[3];
        for (int64_t e = 0; e < 60; e++) {
            tunravel(e, 3, (const int64_t[]){5, 4, 3}, c);
            if (!tval(t, e)) continue;
            CHECK(q < em_size(r, 0));
            for (int d = 0; d < 3; d++) CHECK(tval(r, q * 3 + d) == c[d]);
            q++;
        }
        CHECK(q == em_size(r, 0));
        RELEASE(x, xn, t, r, a);
    }
    double fv[] = {NAN, -0.0, 0.0, 1e-40, -2};
    em_tensor *f = tt(EM_F64, SHAPE(5), fv), *h = em_to_dtype(f, EM_F16), *rf = em_nonzero(f), *rh = em_nonzero(h);
    CHECK(rf && tshape_is(rf, SHAPE(3, 1)) && tval(rf, 0) == 0 && tval(rf, 1) == 3 && tval(rf, 2) == 4);
    CHECK(rh && tshape_is(rh, SHAPE(2, 1)) && tval(rh, 1) == 4); /* 1e-40 is 0 in float16 */
    em_tensor *s = em_tensor_scalar(3, EM_F32), *z = em_tensor_scalar(0, EM_F32), *rs = em_nonzero(s), *rz = em_nonzero(z);
    CHECK(rs && tshape_is(rs, SHAPE(1, 0)) && rz && tshape_is(rz, SHAPE(0, 0)));
    em_tensor *e = em_zeros(SHAPE(2, 0), EM_F32), *re = em_nonzero(e), *out = em_zeros(SHAPE(7), EM_I64);
    em_tensor *o32 = em_zeros(SHAPE(1), EM_I32);
    CHECK(re && tshape_is(re, SHAPE(0, 2)) && em_nonzero_out(out, f) == EM_OK && em_equal(out, rf));
    CHECK_ERR(em_nonzero_out(o32, f), EM_ERR_DTYPE);
    CHECK(tshape_is(o32, SHAPE(1)));
    RELEASE(f, h, rf, rh, s, z, rs, rz, e, re, out, o32);
    COVER(EM_OP_nonzero);
}
