/* Shape ops, part 2: triangles (tril, triu, their indices), diagonals
 * (diag, diag_embed, diagflat), diff and one_hot, against naive references
 * on non-contiguous, batched, empty and 0-d inputs, plus PyTorch 1.13's
 * errors. */
#include "test_shape.h"

/* ---- tril / triu ---------------------------------------------------------- */
typedef struct {
    const em_tensor *x;
    int64_t k;
    bool upper;
} tri_ref;
static double tri_value(const int64_t *idx, const void *ctx)
{
    const tri_ref *r = ctx;
    int nd = em_ndim(r->x);
    int64_t i = idx[nd - 2], j = idx[nd - 1];
    bool keep = r->upper ? j - i >= r->k : j - i <= r->k;
    return keep ? shape_at(r->x, idx) : 0;
}

TEST(shape_tril_triu)
{
    em_tensor *x0 = trand(EM_F32, SHAPE(2, 3, 4, 5), -1, 1), *x = tnoncontig(x0);
    int64_t ks[] = {-5, -4, -1, 0, 1, 3, 5, INT64_MAX, INT64_MIN};
    for (int up = 0; up < 2; up++)
        for (size_t q = 0; q < sizeof ks / sizeof *ks; q++) {
            em_tensor *r = up ? em_triu(x, ks[q]) : em_tril(x, ks[q]);
            CHECK_MSG(r && tshape_is(r, SHAPE(2, 3, 4, 5)), "k %lld", (long long)ks[q]);
            CHECK(shape_check(r, tri_value, &(tri_ref){x, ks[q], up}));
            em_release(r);
        }
    for (int dt = 0; dt < EM_DTYPE_COUNT; dt++) { /* every dtype, on a transposed input */
        em_tensor *t = shape_transposed((em_dtype)dt, 4, 3), *lo = em_tril(t, -1), *hi = em_triu(t, 1);
        CHECK(lo && hi && em_dtype_of(lo) == dt && em_dtype_of(hi) == dt);
        CHECK(shape_check(lo, tri_value, &(tri_ref){t, -1, false}) && shape_check(hi, tri_value, &(tri_ref){t, 1, true}));
        em_release(t), em_release(lo), em_release(hi);
    }
    /* in place on a transposed view: only the dropped part is written */
    em_tensor *base = trand(EM_F64, SHAPE(5, 4), -1, 1), *view = em_t(base), *before = em_clone(view);
    uint64_t v = em_version(base);
    CHECK(em_triu_(view, 0) == EM_OK && em_version(base) == v + 1);
    CHECK(shape_check(view, tri_value, &(tri_ref){before, 0, true}));
    CHECK(em_tril_(view, -10) == EM_OK && shape_check(view, tri_value, &(tri_ref){before, -10, false}));
    /* out=: resized; the same dtype as x required; out may be x itself */
    em_tensor *out = em_empty(SHAPE(7), EM_F32), *wrong = em_empty(SHAPE(0), EM_F64), *self = em_clone(x);
    CHECK(em_tril_out(out, x, 1) == EM_OK && tshape_is(out, SHAPE(2, 3, 4, 5)));
    CHECK(shape_check(out, tri_value, &(tri_ref){x, 1, false}));
    CHECK(em_triu_out(self, self, 2) == EM_OK && shape_check(self, tri_value, &(tri_ref){x, 2, true}));
    CHECK_ERR(em_tril_out(wrong, x, 0), EM_ERR_DTYPE);
    CHECK(shape_error_says("Expected out tensor to have dtype float32, but got float64 instead"));
    em_tensor *e = em_zeros(SHAPE(0, 3), EM_F32), *re = em_tril(e, 0), *vec = em_zeros(SHAPE(3), EM_F32);
    em_tensor *s = em_tensor_scalar(1, EM_F32), *row = em_zeros(SHAPE(3), EM_F32), *ex = em_expand(row, SHAPE(3, 3));
    CHECK(re && tshape_is(re, SHAPE(0, 3)));
    CHECK_ERR(em_tril(vec, 0), EM_ERR_INDEX);
    CHECK(shape_error_says("Dimension out of range (expected to be in range of [-1, 0], but got -2)"));
    CHECK_ERR(em_triu(s, 0), EM_ERR_INDEX);
    CHECK(shape_error_says("Dimension specified as -2 but tensor has no dimensions"));
    CHECK_ERR(em_tril_(ex, 0), EM_ERR_RUNTIME); /* writes through a broadcast view */
    em_tensor *all[] = {x0, x, base, view, before, out, wrong, self, e, re, vec, s, row, ex};
    shape_release_all(all, 14);
    COVER(EM_OP_tril, EM_OP_triu);
}

TEST(shape_tri_indices)
{
    int64_t dims[][2] = {{0, 0}, {0, 4}, {3, 0}, {1, 1}, {3, 4}, {4, 3}, {5, 5}};
    for (size_t q = 0; q < sizeof dims / sizeof *dims; q++)
        for (int64_t k = -6; k <= 6; k++)
            for (int up = 0; up < 2; up++) {
                int64_t rows = dims[q][0], cols = dims[q][1], n = 0;
                em_tensor *r = up ? em_triu_indices(rows, cols, k, EM_I64) : em_tril_indices(rows, cols, k, EM_I32);
                CHECK_MSG(r && em_ndim(r) == 2 && em_size(r, 0) == 2, "%lld x %lld, k %lld", (long long)rows,
                          (long long)cols, (long long)k);
                CHECK(em_dtype_of(r) == (up ? EM_I64 : EM_I32));
                int64_t total = em_size(r, 1);
                for (int64_t i = 0; i < rows; i++)
                    for (int64_t j = 0; j < cols; j++)
                        if (up ? j - i >= k : j - i <= k) {
                            CHECK_MSG(n < total && tval(r, n) == i && tval(r, total + n) == j, "pair %lld", (long long)n);
                            n++;
                        }
                CHECK(n == total);
                em_release(r);
            }
    /* huge matrices with small triangles cost only the triangle */
    int64_t big = (int64_t)1 << 40;
    em_tensor *u = em_triu_indices(big, 3, 0, EM_I64), *l = em_tril_indices(big, 3, 2 - big, EM_I64);
    em_tensor *z = em_tril_indices(big, 0, 0, EM_I64);
    CHECK(u && em_size(u, 1) == 6 && tval(u, 5) == 2 && tval(u, 11) == 2);
    CHECK(l && em_size(l, 1) == 3 && tval(l, 0) == big - 2 && tval(l, 2) == big - 1 && tval(l, 5) == 1);
    CHECK(z && em_size(z, 1) == 0);
    CHECK_ERR(em_tril_indices(-1, 4, 0, EM_I64), EM_ERR_SHAPE);
    CHECK(shape_error_says("row must be non-negative"));
    CHECK_ERR(em_triu_indices(3, -4, 0, EM_I64), EM_ERR_SHAPE);
    CHECK_ERR(em_tril_indices(3, 4, 0, EM_F32), EM_ERR_DTYPE);
    CHECK(shape_error_says("\"tril_indices\" not implemented for 'float32'"));
    CHECK_ERR(em_tril_indices(INT64_MAX, INT64_MAX, 0, EM_I64), EM_ERR_MEMORY);
    em_release(u), em_release(l), em_release(z);
    COVER(EM_OP_tril_indices, EM_OP_triu_indices);
}

/* ---- diag, diag_embed, diagflat --------------------------------------------- */
/* Embedding: the result at idx is x[batch..., position on the diagonal] on
 * the `offset` diagonal of dims d1, d2, else 0; x is read flattened when
 * `flat` (diagflat). */
typedef struct {
    const em_tensor *x;
    int64_t offset;
    int d1, d2;
    bool flat;
} embed_ref;
static double embed_value(const int64_t *idx, const void *ctx)
{
    const embed_ref *r = ctx;
    int64_t a = idx[r->d1], b = idx[r->d2], i[EM_MAX_DIMS];
    if (b - a != r->offset) return 0;
    int64_t pos = r->offset >= 0 ? a : b;
    if (r->flat) {
        shape_unravel(pos, em_ndim(r->x), em_sizes(r->x), i);
        return shape_at(r->x, i);
    }
    int n = 0;
    for (int d = 0; d < em_ndim(r->x) + 1; d++)
        if (d != r->d1 && d != r->d2) i[n++] = idx[d];
    i[n] = pos;
    return shape_at(r->x, i);
}

TEST(shape_diag)
{
    em_tensor *v0 = trand(EM_I64, SHAPE(4), -9, 9), *v = tnoncontig(v0), *m = shape_transposed(EM_F32, 3, 5);
    for (int64_t k = -3; k <= 3; k++) {
        int64_t side = 4 + (k < 0 ? -k : k);
        em_tensor *r = em_diag(v, k), *d = em_diag(m, k);
        CHECK(r && tshape_is(r, 2, (int64_t[]){side, side}) && em_dtype_of(r) == EM_I64);
        CHECK(shape_check(r, embed_value, &(embed_ref){v, k, 0, 1}));
        int64_t len = k >= 0 ? (3 < 5 - k ? 3 : 5 - k) : 3 + k;
        CHECK(d && tshape_is(d, 1, &len));
        for (int64_t i = 0; i < len; i++) CHECK(tval(d, i) == shape_at(m, (int64_t[]){k >= 0 ? i : i - k, k >= 0 ? i + k : i}));
        em_release(r), em_release(d);
    }
    em_tensor *far = em_diag(m, 5), *farneg = em_diag(m, INT64_MIN), *e = em_zeros(SHAPE(0), EM_BOOL), *de = em_diag(e, 2);
    CHECK(far && em_numel(far) == 0 && farneg && em_numel(farneg) == 0); /* PyTorch errors on these */
    CHECK(de && tshape_is(de, SHAPE(2, 2)) && tval(de, 0) == 0 && em_dtype_of(de) == EM_BOOL);
    em_tensor *out = em_empty(SHAPE(9), EM_I64), *wrong = em_empty(SHAPE(0), EM_F32);
    CHECK(em_diag_out(out, v, -1) == EM_OK && tshape_is(out, SHAPE(5, 5)));
    CHECK(shape_check(out, embed_value, &(embed_ref){v, -1, 0, 1}));
    CHECK_ERR(em_diag_out(wrong, v, 0), EM_ERR_DTYPE);
    em_tensor *s = em_tensor_scalar(1, EM_F32), *t3 = em_zeros(SHAPE(2, 2, 2), EM_F32);
    CHECK_ERR(em_diag(s, 0), EM_ERR_SHAPE);
    CHECK(shape_error_says("matrix or a vector expected"));
    CHECK_ERR(em_diag(t3, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_diag(v, INT64_MAX), EM_ERR_MEMORY);
    em_tensor *all[] = {v0, v, m, far, farneg, e, de, out, wrong, s, t3};
    shape_release_all(all, 11);
    COVER(EM_OP_diag);
}

TEST(shape_diag_embed_and_diagflat)
{
    em_tensor *x0 = trand(EM_F64, SHAPE(2, 3), -1, 1), *x = tnoncontig(x0);
    int pairs[][2] = {{-2, -1}, {0, 2}, {2, 0}, {-1, 0}, {1, -1}};
    for (int p = 0; p < 5; p++)
        for (int64_t k = -2; k <= 2; k++) {
            int d1 = (pairs[p][0] + 3) % 3, d2 = (pairs[p][1] + 3) % 3;
            em_tensor *r = em_diag_embed(x, k, pairs[p][0], pairs[p][1]);
            int64_t side = 3 + (k < 0 ? -k : k);
            CHECK_MSG(r && em_ndim(r) == 3 && em_size(r, d1) == side && em_size(r, d2) == side, "dims %d %d", d1, d2);
            CHECK(shape_check(r, embed_value, &(embed_ref){x, k, d1, d2}));
            em_release(r);
        }
    em_tensor *h = em_to_dtype(x, EM_F16), *rh = em_diag_embed(h, 0, -2, -1);
    CHECK(rh && em_dtype_of(rh) == EM_F16 && shape_check(rh, embed_value, &(embed_ref){h, 0, 1, 2}));
    for (int64_t k = -2; k <= 2; k++) {
        em_tensor *r = em_diagflat(x, k);
        int64_t side = 6 + (k < 0 ? -k : k);
        CHECK(r && tshape_is(r, 2, (int64_t[]){side, side}));
        CHECK(shape_check(r, embed_value, &(embed_ref){x, k, 0, 1, true}));
        em_release(r);
    }
    em_tensor *s = em_tensor_scalar(5, EM_I32), *fs = em_diagflat(s, 1), *e = em_zeros(SHAPE(2, 0), EM_F32);
    em_tensor *fe = em_diagflat(e, -1), *ee = em_diag_embed(e, 0, 0, 1);
    double want[] = {0, 5, 0, 0};
    CHECK(fs && tshape_is(fs, SHAPE(2, 2)) && tclose(fs, want, 0, 0));
    CHECK(fe && tshape_is(fe, SHAPE(1, 1)) && tval(fe, 0) == 0 && ee && tshape_is(ee, SHAPE(0, 0, 2)));
    CHECK_ERR(em_diag_embed(x, 0, 1, -2), EM_ERR_SHAPE);
    CHECK(shape_error_says("diagonal dimensions cannot be identical 1, -2"));
    CHECK_ERR(em_diag_embed(x, 0, 3, 1), EM_ERR_INDEX);
    CHECK_ERR(em_diag_embed(s, 0, -2, -1), EM_ERR_INDEX);
    CHECK_ERR(em_diagflat(x, INT64_MIN), EM_ERR_MEMORY);
    em_tensor *all[] = {x0, x, h, rh, s, fs, e, fe, ee};
    shape_release_all(all, 9);
    COVER(EM_OP_diag_embed, EM_OP_diagflat);
}

/* ---- diff -------------------------------------------------------------------------- */
/* The reference: x joined with prepend and append along dim, then n
 * differences, each rounded to the result's dtype (as the op computes). */
static em_tensor *diff_reference(const em_tensor *x, int64_t n, int dim, const em_tensor *pre, const em_tensor *app,
                                 em_dtype dt)
{
    int nd = em_ndim(x);
    int64_t shape[EM_MAX_DIMS], idx[EM_MAX_DIMS], j[EM_MAX_DIMS];
    memcpy(shape, em_sizes(x), nd * sizeof *shape);
    int64_t lp = pre ? em_size(pre, dim) : 0, lx = em_size(x, dim), la = app ? em_size(app, dim) : 0;
    shape[dim] = lp + lx + la;
    em_tensor *cur = em_empty(nd, shape, EM_F64);
    for (int64_t i = 0; i < em_numel(cur); i++) {
        shape_unravel(i, nd, shape, idx);
        memcpy(j, idx, nd * sizeof *j);
        int64_t at = idx[dim];
        const em_tensor *src = at < lp ? pre : at < lp + lx ? x : app;
        j[dim] = at < lp ? at : at < lp + lx ? at - lp : at - lp - lx;
        em_set(cur, idx, shape_cast(shape_at(src, j), dt));
    }
    for (int64_t step = 0; step < n && shape[dim] > 0; step++) {
        shape[dim]--;
        em_tensor *next = em_empty(nd, shape, EM_F64);
        for (int64_t i = 0; i < em_numel(next); i++) {
            shape_unravel(i, nd, shape, idx);
            memcpy(j, idx, nd * sizeof *j);
            j[dim]++;
            double hi = shape_at(cur, j), lo = shape_at(cur, idx);
            em_set(next, idx, shape_cast(dt == EM_BOOL ? hi != lo : hi - lo, dt));
        }
        em_release(cur);
        cur = next;
    }
    return cur;
}

static double copy_value(const int64_t *idx, const void *ctx) { return shape_at(ctx, idx); }

TEST(shape_diff)
{
    em_tensor *x0 = trand(EM_F32, SHAPE(3, 5), -1, 1), *x = tnoncontig(x0);
    em_tensor *pre = trand(EM_F64, SHAPE(3, 2), -1, 1), *app = shape_transposed(EM_I32, 3, 1);
    for (int dim = -2; dim < 2; dim++)
        for (int64_t n = 0; n <= 6; n++) {
            int d = dim + (dim < 0 ? 2 : 0);
            em_tensor *r = em_diff(x, n, dim, NULL, NULL), *want = diff_reference(x, n, d, NULL, NULL, EM_F32);
            CHECK_MSG(r && em_dtype_of(r) == EM_F32 && tshape_is(r, em_ndim(want), em_sizes(want)), "dim %d n %lld", d,
                      (long long)n);
            CHECK(shape_check(r, copy_value, want));
            em_release(r), em_release(want);
        }
    for (int64_t n = 0; n <= 3; n++) { /* joined: the dtype promotes to float64 */
        em_tensor *r = em_diff(x, n, 1, pre, app), *want = diff_reference(x, n, 1, n ? pre : NULL, n ? app : NULL,
                                                                           n ? EM_F64 : EM_F32);
        CHECK(r && em_dtype_of(r) == (n ? EM_F64 : EM_F32) && tshape_is(r, em_ndim(want), em_sizes(want)));
        CHECK(shape_check(r, copy_value, want));
        em_release(r), em_release(want);
    }
    /* bool: xor; small ints wrap as PyTorch's; half types */
    em_tensor *b = trand(EM_BOOL, SHAPE(2, 6), 0, 1), *i8 = tt(EM_I8, SHAPE(3), (double[]){-100, 100, -100});
    em_tensor *u8 = tt(EM_U8, SHAPE(2), (double[]){5, 1}), *bf = shape_transposed(EM_BF16, 4, 3);
    em_tensor *rb = em_diff(b, 2, -1, NULL, NULL), *wb = diff_reference(b, 2, 1, NULL, NULL, EM_BOOL);
    em_tensor *ri = em_diff(i8, 1, 0, NULL, NULL), *ru = em_diff(u8, 1, 0, NULL, NULL), *rbf = em_diff(bf, 1, 0, NULL, NULL);
    em_tensor *wbf = diff_reference(bf, 1, 0, NULL, NULL, EM_BF16);
    CHECK(rb && em_dtype_of(rb) == EM_BOOL && shape_check(rb, copy_value, wb));
    CHECK(ri && tval(ri, 0) == -56 && tval(ri, 1) == 56 && ru && tval(ru, 0) == 252);
    CHECK(rbf && em_dtype_of(rbf) == EM_BF16 && shape_check(rbf, copy_value, wbf));
    /* out=: converted to out's dtype when the result casts to it */
    em_tensor *out = em_empty(SHAPE(0), EM_F64), *iout = em_empty(SHAPE(0), EM_I64), *w1 = diff_reference(x, 1, 1, NULL, NULL, EM_F32);
    CHECK(em_diff_out(out, x, 1, 1, NULL, NULL) == EM_OK && tshape_is(out, SHAPE(3, 4)) && shape_check(out, copy_value, w1));
    CHECK_ERR(em_diff_out(iout, x, 1, 1, NULL, NULL), EM_ERR_DTYPE);
    CHECK(shape_error_says("result type float32 can't be cast to the desired output type int64"));
    CHECK_ERR(em_diff_out(x0, x0, 1, 1, NULL, NULL), EM_ERR_RUNTIME); /* overlaps its input */
    em_tensor *s = em_tensor_scalar(1, EM_F32), *v = trand(EM_F32, SHAPE(3), 0, 1), *badpre = em_zeros(SHAPE(2, 1), EM_F32);
    CHECK_ERR(em_diff(s, 1, 0, NULL, NULL), EM_ERR_SHAPE);
    CHECK(shape_error_says("diff expects input to be at least one-dimensional"));
    CHECK_ERR(em_diff(x, 1, 1, v, NULL), EM_ERR_SHAPE);
    CHECK(shape_error_says("diff expects prepend or append to be the same dimension as input"));
    CHECK_ERR(em_diff(x, 1, 1, NULL, badpre), EM_ERR_SHAPE);
    CHECK(shape_error_says("input.size(0) = 3, but got tensor.size(0) = 2"));
    CHECK_ERR(em_diff(x, -1, 1, NULL, NULL), EM_ERR_RUNTIME); /* PyTorch 1.13 returned x; later versions raise */
    CHECK_ERR(em_diff(x, 1, 2, NULL, NULL), EM_ERR_INDEX);
    em_tensor *all[] = {x0, x, pre, app, b, i8, u8, bf, rb, wb, ri, ru, rbf, wbf, out, iout, w1, s, v, badpre};
    shape_release_all(all, 20);
    COVER(EM_OP_diff);
}

/* ---- one_hot ------------------------------------------------------------------------- */
static double one_hot_value(const int64_t *idx, const void *ctx)
{
    const em_tensor *x = ctx;
    return shape_at(x, idx) == idx[em_ndim(x)];
}

TEST(shape_one_hot)
{
    em_tensor *x0 = trand(EM_I64, SHAPE(3, 4), 0, 6), *x = em_t(x0);
    em_tensor *r = em_one_hot(x, 8), *inferred = em_one_hot(x, -1);
    double mx = 0;
    for (int i = 0; i < 12; i++) mx = fmax(mx, tval(x0, i));
    CHECK(r && tshape_is(r, SHAPE(4, 3, 8)) && em_dtype_of(r) == EM_I64 && shape_check(r, one_hot_value, x));
    CHECK(inferred && em_size(inferred, 2) == (int64_t)mx + 1 && shape_check(inferred, one_hot_value, x));
    em_tensor *s = em_from_data((int64_t[]){2}, 0, NULL, EM_I64), *rs = em_one_hot(s, -1);
    double want[] = {0, 0, 1};
    CHECK(rs && tshape_is(rs, SHAPE(3)) && tclose(rs, want, 0, 0));
    em_tensor *e = em_zeros(SHAPE(2, 0), EM_I64), *re = em_one_hot(e, 4);
    CHECK(re && tshape_is(re, SHAPE(2, 0, 4)));
    em_tensor *neg = em_from_data((int64_t[]){0, -2, 1}, SHAPE(3), EM_I64), *f = em_zeros(SHAPE(3), EM_F32);
    em_tensor *i32 = em_zeros(SHAPE(3), EM_I32);
    CHECK_ERR(em_one_hot(neg, -1), EM_ERR_RUNTIME);
    CHECK(shape_error_says("Class values must be non-negative."));
    CHECK_ERR(em_one_hot(neg, 3), EM_ERR_RUNTIME);
    CHECK_ERR(em_one_hot(x, 3), EM_ERR_RUNTIME);
    CHECK(shape_error_says("Class values must be smaller than num_classes."));
    CHECK_ERR(em_one_hot(s, -2), EM_ERR_RUNTIME);
    CHECK_ERR(em_one_hot(e, -1), EM_ERR_RUNTIME);
    CHECK(shape_error_says("Can not infer total number of classes from empty tensor."));
    CHECK_ERR(em_one_hot(e, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_one_hot(f, 3), EM_ERR_DTYPE);
    CHECK(shape_error_says("one_hot is only applicable to index tensor."));
    CHECK_ERR(em_one_hot(i32, 3), EM_ERR_DTYPE);
    CHECK_ERR(em_one_hot(s, INT64_MAX), EM_ERR_MEMORY);
    em_tensor *all[] = {x0, x, r, inferred, s, rs, e, re, neg, f, i32};
    shape_release_all(all, 11);
    COVER(EM_OP_one_hot);
}
