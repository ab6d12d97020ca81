/* Core: dtypes and promotion, tensor lifetime, views, copies, creation,
 * and the pointwise machinery (broadcasting, dtype conversion, out=, in-place). */
#include "test.h"

TEST(dtype_promotion_matrix)
{
    CHECK(em_promote_types(EM_U8, EM_I8) == EM_I16);
    CHECK(em_promote_types(EM_BOOL, EM_U8) == EM_U8);
    CHECK(em_promote_types(EM_F16, EM_BF16) == EM_F32);
    CHECK(em_promote_types(EM_I64, EM_F16) == EM_F16);
    CHECK(em_promote_types(EM_F32, EM_F64) == EM_F64);
    for (int a = 0; a < EM_DTYPE_COUNT; a++)
        for (int b = 0; b < EM_DTYPE_COUNT; b++) CHECK(em_promote_types(a, b) == em_promote_types(b, a));
}

TEST(weak_scalar_promotion)
{
    em_tensor *i = em_zeros(SHAPE(3), EM_I64), *h = em_zeros(SHAPE(3), EM_F16), *u = em_zeros(SHAPE(3), EM_U8);
    em_tensor *f = em_scalar_float(2.5), *n = em_scalar_int(1000), *z = em_tensor_scalar(1, EM_F64);
    em_tensor *r1 = em_add(i, f, 1), *r2 = em_add(h, f, 1), *r3 = em_add(u, n, 1), *r4 = em_add(i, z, 1);
    em_tensor *r5 = em_add(h, z, 1); /* 0-d float64 does not raise a dimensioned float16 */
    CHECK(r1 && r2 && r3 && r4 && r5);
    CHECK(em_dtype_of(r1) == EM_F32);
    CHECK(em_dtype_of(r2) == EM_F16);
    CHECK(em_dtype_of(r3) == EM_U8);
    CHECK(tval(r3, 0) == 1000 % 256);
    CHECK(em_dtype_of(r4) == EM_F64);
    CHECK(em_dtype_of(r5) == EM_F16);
    em_tensor *all[] = {i, h, u, f, n, z, r1, r2, r3, r4, r5};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_add);
}

TEST(half_conversions_round_trip)
{
    /* every float16 bit pattern survives f16 -> f32 -> f16 (nan stays nan) */
    em_tensor *h = em_empty(SHAPE(65536), EM_F16);
    uint16_t *p = em_data_ptr(h);
    for (int i = 0; i < 65536; i++) p[i] = (uint16_t)i;
    em_tensor *f = em_to_dtype(h, EM_F32), *back = em_to_dtype(f, EM_F16);
    CHECK(f && back);
    const uint16_t *q = em_data_ptr(back);
    int bad = 0;
    for (int i = 0; i < 65536; i++) {
        bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        if (nan ? !((q[i] & 0x7c00) == 0x7c00 && (q[i] & 0x3ff)) : q[i] != i) bad++;
    }
    CHECK_MSG(bad == 0, "%d float16 patterns did not round-trip", bad);
    /* rounding: 1 + 2^-11 is a tie -> 1.0; 65520 -> inf; 2^-25 -> 0; bf16 ties to even */
    double vals[] = {1 + 1.0 / 2048, 65520, 65519, pow(2, -25), pow(2, -24), 1 + 3.0 / 256};
    em_tensor *d = tt(EM_F64, SHAPE(6), vals), *dh = em_to_dtype(d, EM_F16), *db = em_to_dtype(d, EM_BF16);
    CHECK(tval(dh, 0) == 1 && isinf(tval(dh, 1)) && tval(dh, 2) == 65504 && tval(dh, 3) == 0);
    CHECK(tval(dh, 4) == pow(2, -24));
    CHECK(tval(db, 5) == 1 + 4.0 / 256);
    em_release(h), em_release(f), em_release(back), em_release(d), em_release(dh), em_release(db);
    COVER(EM_OP_copy);
}

TEST(creation_and_fill)
{
    em_tensor *z = em_zeros(SHAPE(2, 3), EM_F32), *o = em_ones(SHAPE(2, 3), EM_I32), *f = em_full(SHAPE(4), 7.5, EM_F64);
    CHECK(z && o && f);
    for (int i = 0; i < 6; i++) CHECK(tval(z, i) == 0 && tval(o, i) == 1);
    for (int i = 0; i < 4; i++) CHECK(tval(f, i) == 7.5);
    em_tensor *big = em_full(SHAPE(1), 9007199254740993.0, EM_I64); /* not representable in double */
    CHECK(big);
    em_tensor *e = em_empty(SHAPE(0, 5), EM_F32);
    CHECK(e && em_numel(e) == 0 && em_fill_(e, 1) == EM_OK);
    CHECK_ERR(em_zeros(SHAPE(-1), EM_F32), EM_ERR_SHAPE);
    CHECK_ERR(em_zeros(SHAPE(INT64_MAX / 2, 4), EM_F32), EM_ERR_MEMORY);
    CHECK_ERR(em_zeros(SHAPE(3), (em_dtype)42), EM_ERR_DTYPE);
    em_release(z), em_release(o), em_release(f), em_release(big), em_release(e);
    COVER(EM_OP_fill);
}

TEST(views_share_storage)
{
    double v[12];
    for (int i = 0; i < 12; i++) v[i] = i;
    em_tensor *a = tt(EM_F32, SHAPE(3, 4), v);
    em_tensor *t = em_t(a), *s = em_slice(a, 1, 1, 4, 2), *sel = em_select(a, 0, -1), *d = em_diagonal(a, 1, 0, 1);
    CHECK(t && s && sel && d);
    CHECK(tshape_is(t, SHAPE(4, 3)) && tval(t, 1) == 4);
    CHECK(tshape_is(s, SHAPE(3, 2)) && tval(s, 0) == 1 && tval(s, 1) == 3 && tval(s, 2) == 5);
    CHECK(tshape_is(sel, SHAPE(4)) && tval(sel, 0) == 8);
    CHECK(tshape_is(d, SHAPE(3)) && tval(d, 0) == 1 && tval(d, 1) == 6 && tval(d, 2) == 11);
    CHECK(em_is_same_storage(a, t) && !em_is_contiguous(t));
    int64_t idx[] = {0, 1};
    CHECK(em_set(t, idx, 100) == EM_OK && tval(a, 4) == 100);
    em_tensor *u = em_unfold(sel, 0, 2, 1);
    CHECK(u && tshape_is(u, SHAPE(3, 2)) && tval(u, 3) == 10);
    em_tensor *vw = em_view(a, SHAPE(2, -1)), *bad = NULL;
    CHECK(vw && tshape_is(vw, SHAPE(2, 6)));
    CHECK_ERR(bad = em_view(t, SHAPE(12)), EM_ERR_SHAPE);
    em_tensor *r = em_reshape(t, SHAPE(12)); /* copies */
    CHECK(r && !em_is_same_storage(r, a) && tval(r, 1) == 100);
    CHECK_ERR(em_select(a, 2, 0), EM_ERR_INDEX);
    CHECK_ERR(em_select(a, 0, 3), EM_ERR_INDEX);
    CHECK_ERR(em_narrow(a, 1, 2, 3), EM_ERR_SHAPE);
    em_tensor *all[] = {a, t, s, sel, d, u, vw, r};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

TEST(view_family)
{
    em_tensor *a = trand(EM_F64, SHAPE(2, 3, 4), -1, 1);
    em_tensor *p = em_permute(a, (const int[]){2, 0, 1}), *m = em_movedim(a, 1, (const int[]){0}, (const int[]){2});
    CHECK(p && tshape_is(p, SHAPE(4, 2, 3)) && m && tshape_is(m, SHAPE(3, 4, 2)));
    em_tensor *a0 = em_select(a, 0, 0), *e = em_expand(a0, SHAPE(5, 3, 4));
    CHECK(e && tshape_is(e, SHAPE(5, 3, 4)) && em_strides(e)[0] == 0);
    em_tensor *uq = em_unsqueeze(a, -1), *sq = em_squeeze(uq), *fl = em_flatten(a, 1, 2), *uf = em_unflatten(fl, 1, SHAPE(3, -1));
    CHECK(tshape_is(uq, SHAPE(2, 3, 4, 1)) && tshape_is(sq, SHAPE(2, 3, 4)) && tshape_is(fl, SHAPE(2, 12)));
    CHECK(tshape_is(uf, SHAPE(2, 3, 4)) && em_equal(uf, a));
    em_tensor *parts[8];
    int n = 8;
    CHECK(em_split(a, 3, 2, parts, &n) == EM_OK && n == 2 && em_size(parts[1], 2) == 1);
    for (int i = 0; i < n; i++) em_release(parts[i]);
    n = 8;
    CHECK(em_chunk(a, 3, 1, parts, &n) == EM_OK && n == 3);
    for (int i = 0; i < n; i++) em_release(parts[i]);
    n = 8;
    CHECK(em_unbind(a, 0, parts, &n) == EM_OK && n == 2 && tshape_is(parts[0], SHAPE(3, 4)));
    for (int i = 0; i < n; i++) em_release(parts[i]);
    em_tensor *as = em_as_strided(a, SHAPE(2, 2), (const int64_t[]){1, 2}, 1);
    CHECK(as && tval(as, 0) == tval(a, 1) && tval(as, 1) == tval(a, 3) && tval(as, 2) == tval(a, 2));
    CHECK_ERR(em_as_strided(a, SHAPE(100), (const int64_t[]){1}, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_expand(a, SHAPE(2, 5, 4)), EM_ERR_SHAPE);
    em_tensor *all[] = {a, p, m, a0, e, uq, sq, fl, uf, as};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

/* em_set_: t takes src's storage and geometry (Tensor.set_, the in-place view
 * ops); the old storage lives on while another tensor holds it. */
TEST(set_takes_storage_and_geometry)
{
    em_tensor *a = trand(EM_F32, SHAPE(2, 3), -1, 1), *b = trand(EM_F32, SHAPE(4), -1, 1), *keep = em_t(b);
    em_tensor *at = em_t(a);
    CHECK(em_set_(a, at) == EM_OK && tshape_is(a, SHAPE(3, 2)) && em_strides(a)[0] == 1); /* a.t_() */
    CHECK(em_set_(b, a) == EM_OK && tshape_is(b, SHAPE(3, 2)) && tval(b, 1) == tval(at, 1));
    CHECK(em_set_(b, b) == EM_OK && tshape_is(b, SHAPE(3, 2)));
    CHECK(tshape_is(keep, SHAPE(4)) && em_numel(keep) == 4); /* b's old storage, kept by its view */
    em_tensor *i = em_empty(SHAPE(2), EM_I64);
    CHECK_ERR(em_set_(i, a), EM_ERR_RUNTIME);
    em_release(a), em_release(b), em_release(keep), em_release(at), em_release(i);
}

TEST(copy_between_layouts_and_dtypes)
{
    em_tensor *a = trand(EM_F32, SHAPE(5, 7), -100, 100);
    for (int dt = 0; dt < EM_DTYPE_COUNT; dt++) {
        em_tensor *c = em_to_dtype(a, (em_dtype)dt), *nc = tnoncontig(c), *back = em_empty(SHAPE(5, 7), (em_dtype)dt);
        CHECK(c && nc && back && em_copy_(back, nc) == EM_OK);
        CHECK(em_equal(back, c));
        em_release(c), em_release(nc), em_release(back);
    }
    /* broadcasting copy, and a copy into a transposed view */
    em_tensor *row = trand(EM_F64, SHAPE(7), 0, 1), *dst = em_empty(SHAPE(7, 5), EM_F64), *dt = em_t(dst);
    CHECK(em_copy_(dt, row) == EM_OK);
    for (int i = 0; i < 35; i++) CHECK(tval(dst, i) == tval(row, i / 5));
    CHECK_ERR(em_copy_(row, dst), EM_ERR_SHAPE);
    em_release(a), em_release(row), em_release(dst), em_release(dt);
}

static int blob_freed;
static void blob_deleter(void *ctx) { blob_freed += ctx != NULL; }

TEST(from_blob_deleter)
{
    static float buf[6] = {1, 2, 3, 4, 5, 6};
    blob_freed = 0;
    em_tensor *t = em_from_blob(buf, SHAPE(2, 3), NULL, EM_F32, blob_deleter, buf);
    em_tensor *v = em_select(t, 0, 1);
    CHECK(t && v && tval(t, 5) == 6);
    buf[5] = 60; /* shared, not copied */
    CHECK(tval(v, 2) == 60);
    em_release(t);
    CHECK(blob_freed == 0); /* the view keeps the buffer alive */
    em_release(v);
    CHECK(blob_freed == 1);
    em_tensor *borrowed = em_from_blob(buf, SHAPE(6), NULL, EM_F32, NULL, NULL);
    CHECK(borrowed && tval(borrowed, 0) == 1);
    em_release(borrowed); /* must not free a static buffer */
}

TEST(pointwise_broadcast_and_noncontig)
{
    em_dtype dts[] = {EM_F32, EM_F64, EM_I32, EM_I64, EM_U8, EM_I16, EM_F16, EM_BF16};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        em_dtype dt = dts[k];
        em_tensor *a = trand(dt, SHAPE(4, 1, 3), 0, 10), *b = trand(dt, SHAPE(5, 1), 0, 10);
        em_tensor *na = tnoncontig(a), *r = em_mul(na, b);
        CHECK(r && tshape_is(r, SHAPE(4, 5, 3)) && em_dtype_of(r) == dt);
        for (int i = 0; i < 60; i++) {
            double want = tval(a, (i / 15) * 3 + i % 3) * tval(b, (i / 3) % 5);
            em_tensor *w = em_tensor_scalar(want, dt); /* rounded like the result */
            CHECK_MSG(fabs(tval(r, i) - tval(w, 0)) <= 1e-2 * fabs(want), "%s: element %d", em_dtype_name(dt), i);
            em_release(w);
        }
        em_release(a), em_release(b), em_release(na), em_release(r);
    }
    COVER(EM_OP_mul);
}

TEST(pointwise_threads_large)
{
    int64_t n = 1 << 20;
    em_tensor *a = trand(EM_F32, SHAPE(n), -1, 1), *b = trand(EM_F32, SHAPE(n), -1, 1);
    em_set_num_threads(2);
    em_tensor *r = em_sub(a, b, 2.0);
    CHECK(r);
    const float *pa = em_data_ptr(a), *pb = em_data_ptr(b), *pr = em_data_ptr(r);
    for (int64_t i = 0; i < n; i++) CHECK(pr[i] == pa[i] - 2.0f * pb[i]);
    em_release(a), em_release(b), em_release(r);
    COVER(EM_OP_sub);
}

TEST(pointwise_out_and_inplace)
{
    em_tensor *a = trand(EM_F32, SHAPE(3, 4), -2, 2), *b = trand(EM_F32, SHAPE(4), -2, 2);
    em_tensor *out = em_empty(SHAPE(1), EM_F64); /* resized, and written through a float64 */
    CHECK(em_add_out(out, a, b, 1) == EM_OK && tshape_is(out, SHAPE(3, 4)) && em_dtype_of(out) == EM_F64);
    for (int i = 0; i < 12; i++) CHECK(tval(out, i) == (double)(float)(tval(a, i) + tval(b, i % 4)));
    uint64_t v = em_version(a);
    double before = tval(a, 5);
    CHECK(em_add_(a, b, -1) == EM_OK && em_version(a) == v + 1);
    CHECK(tval(a, 5) == (float)(before - tval(b, 1)));
    /* errors leave the tensor unchanged */
    em_tensor *i = em_zeros(SHAPE(3, 4), EM_I64), *small = em_zeros(SHAPE(4), EM_F32), *small5 = em_zeros(SHAPE(5), EM_F32);
    em_tensor *bools = em_zeros_like(i, EM_BOOL);
    CHECK_ERR(em_add_(i, a, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_add_(small, a, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_add(a, small5, 1), EM_ERR_SHAPE);
    em_tensor *ex = em_expand(small, SHAPE(3, 4));
    CHECK_ERR(em_exp_(ex), EM_ERR_RUNTIME); /* writes through a broadcast view */
    CHECK_ERR(em_neg(bools), EM_ERR_DTYPE);
    em_tensor *all[] = {a, b, out, i, small, small5, bools, ex};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_exp, EM_OP_neg);
}

TEST(sample_pointwise_values)
{
    double xv[] = {-2, -0.5, 0, 0.5, NAN, INFINITY};
    em_tensor *x = tt(EM_F64, SHAPE(6), xv);
    em_tensor *ab = em_abs(x), *lr = em_leaky_relu(x, 0.1), *nan = em_isnan(x), *ex = em_exp(x);
    double want_lr[] = {-0.2, -0.05, 0, 0.5, NAN, INFINITY};
    CHECK(tclose(lr, want_lr, 0, 0));
    for (int i = 0; i < 6; i++) {
        CHECK(isnan(xv[i]) ? isnan(tval(ab, i)) : tval(ab, i) == fabs(xv[i]));
        CHECK(tval(nan, i) == (double)isnan(xv[i]));
        CHECK(isnan(xv[i]) ? isnan(tval(ex, i)) : tval(ex, i) == exp(xv[i]));
    }
    CHECK(em_dtype_of(nan) == EM_BOOL);
    em_tensor *ii = trand(EM_I32, SHAPE(6), -5, 5), *ei = em_exp(ii), *q = em_div(ii, ii);
    CHECK(em_dtype_of(ei) == EM_F32 && em_dtype_of(q) == EM_F32);
    em_tensor *eqt = em_eq(x, x), *ltt = em_lt(x, ab);
    CHECK(em_dtype_of(eqt) == EM_BOOL && tval(eqt, 4) == 0 && tval(eqt, 0) == 1 && tval(ltt, 0) == 1);
    em_tensor *one = em_scalar_float(2), *acm = em_addcmul(x, x, one, 0.5);
    CHECK(acm && tval(acm, 0) == -4);
    em_tensor *all[] = {x, ab, lr, nan, ex, ii, ei, q, eqt, ltt, one, acm};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_abs, EM_OP_leaky_relu, EM_OP_isnan, EM_OP_div, EM_OP_eq, EM_OP_lt, EM_OP_addcmul);
}

TEST(large_blocks_are_reused_and_released)
{
    int64_t n = 1 << 20; /* 4 MiB of float32: goes through the block cache */
    for (int i = 0; i < 3; i++) {
        em_tensor *a = em_full(SHAPE(n), i, EM_F32);
        CHECK(a && tval(a, n - 1) == i);
        em_release(a);
    }
    em_empty_cache();
    em_tensor *b = em_zeros(SHAPE(n + 1), EM_F32);
    CHECK(b && tval(b, n) == 0);
    em_release(b);
    em_empty_cache();
}

TEST(broadcast_shape_of_unequal_ranks)
{
    /* [3] with [2, 1] is [2, 3] (a regression: the result aliased an input) */
    em_tensor *a = trand(EM_F32, SHAPE(3), 0, 1), *b = trand(EM_F32, SHAPE(2, 1), 0, 1), *r = em_add(a, b, 1);
    CHECK(r && tshape_is(r, SHAPE(2, 3)));
    for (int i = 0; i < 6; i++) CHECK(tval(r, i) == (float)(tval(a, i % 3) + tval(b, i / 3)));
    em_release(a), em_release(b), em_release(r);
}

TEST(half_result_rounded_before_wider_out)
{
    /* a float16 op computed through float32 and written to a float64 out=
     * holds the float16 result, as PyTorch gives */
    em_tensor *x = trand(EM_F16, SHAPE(64), -3, 3), *out = em_empty(SHAPE(64), EM_F64), *ref = em_exp(x);
    CHECK(ref && em_exp_out(out, x) == EM_OK);
    for (int i = 0; i < 64; i++) CHECK(tval(out, i) == tval(ref, i));
    em_release(x), em_release(out), em_release(ref);
}
