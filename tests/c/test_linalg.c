/* Linear algebra: matrix products (every matmul case, BLAS layouts, batch
 * broadcasting, empty dims, each dtype), the beta/alpha forms, out= and
 * in-place, einsum against explicit loops, tensordot, outer, kron, trace and
 * the error cases. References are computed here in double. */
#include "test.h"

#define REL(...) rel_all((em_tensor *[]){__VA_ARGS__}, sizeof((em_tensor *[]){__VA_ARGS__}) / sizeof(em_tensor *))
static void rel_all(em_tensor **t, size_t n)
{
    for (size_t i = 0; i < n; i++) em_release(t[i]);
}

/* ---- layouts: the same values stored differently ------------------------- */
enum { LAY_CONTIG, LAY_STEP, LAY_COLMAJOR, LAY_PADDED, LAY_COUNT };

/* t's values in layout `lay`: contiguous; every other element (no BLAS
 * layout); the last two dims stored transposed (column-major); rows padded
 * (a leading dimension larger than the row). */
static em_tensor *relayout(const em_tensor *t, int lay)
{
    int n = em_ndim(t);
    if (lay == LAY_STEP) return tnoncontig(t);
    if (n < 2 || lay == LAY_CONTIG) return em_clone(t);
    int64_t sz[EM_MAX_DIMS];
    memcpy(sz, em_sizes(t), n * sizeof *sz);
    em_tensor *base = NULL, *v = NULL;
    if (lay == LAY_COLMAJOR) {
        int64_t tmp = sz[n - 1];
        sz[n - 1] = sz[n - 2], sz[n - 2] = tmp;
        base = em_empty(n, sz, em_dtype_of(t));
        v = em_transpose(base, -1, -2);
    } else {
        sz[n - 1] += 3;
        base = em_zeros(n, sz, em_dtype_of(t));
        v = em_narrow(base, n - 1, 1, em_sizes(t)[n - 1]);
    }
    em_release(base);
    if (v && em_copy_(v, t)) {
        em_release(v);
        return NULL;
    }
    return v;
}

/* ---- reference matmul on doubles, PyTorch's rules -------------------------- */
typedef struct ref {
    int ndim;
    int64_t shape[EM_MAX_DIMS];
    double *v;
} ref;

/* Offset of a broadcast batch index in row-major values of a tensor whose
 * leading `nb_t` dims are batch dims (right-aligned to nb). */
static int64_t batch_offset(const em_tensor *t, int nb_t, int nb, const int64_t *idx, int64_t mat)
{
    int64_t off = 0;
    for (int d = 0; d < nb_t; d++) {
        int64_t s = em_sizes(t)[d];
        off = off * s + (s == 1 ? 0 : idx[nb - nb_t + d]);
    }
    return off * mat;
}

static ref ref_matmul(const em_tensor *a, const em_tensor *b)
{
    ref r = {0};
    int na = em_ndim(a), nbd = em_ndim(b);
    int64_t n = na >= 2 ? em_sizes(a)[na - 2] : 1, k = em_sizes(a)[na - 1], m = nbd >= 2 ? em_sizes(b)[nbd - 1] : 1;
    int ba = na > 2 ? na - 2 : 0, bb = nbd > 2 ? nbd - 2 : 0, nb = ba > bb ? ba : bb;
    int64_t batch = 1;
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - ba), db = d - (nb - bb);
        int64_t sa = da >= 0 ? em_sizes(a)[da] : 1, sb = db >= 0 ? em_sizes(b)[db] : 1;
        r.shape[r.ndim++] = sa == 1 ? sb : sa;
        batch *= r.shape[d];
    }
    if (na >= 2) r.shape[r.ndim++] = n;
    if (nbd >= 2) r.shape[r.ndim++] = m;
    double *x = tvals(a), *y = tvals(b);
    r.v = calloc((size_t)(batch * n * m) + 1, sizeof(double));
    int64_t idx[EM_MAX_DIMS] = {0};
    for (int64_t p = 0; p < batch; p++) {
        int64_t rem = p;
        for (int d = nb - 1; d >= 0; d--) idx[d] = rem % r.shape[d], rem /= r.shape[d];
        const double *xa = x + batch_offset(a, ba, nb, idx, n * k), *yb = y + batch_offset(b, bb, nb, idx, k * m);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < m; j++) {
                double s = 0;
                for (int64_t q = 0; q < k; q++) s += xa[i * k + q] * yb[q * m + j];
                r.v[(p * n + i) * m + j] = s;
            }
    }
    free(x), free(y);
    return r;
}

/* Values wrapped to an integer dtype as C's conversions do (products of
 * small integers are exact in double). */
static void wrap_to(em_dtype dt, double *v, int64_t n)
{
    if (em_dtype_is_float(dt)) return;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = (int64_t)v[i];
        switch (dt) {
        case EM_U8: v[i] = (uint8_t)x; break;
        case EM_I8: v[i] = (int8_t)x; break;
        case EM_I16: v[i] = (int16_t)x; break;
        case EM_I32: v[i] = (int32_t)x; break;
        default: v[i] = (double)x; break;
        }
    }
}

/* Random values suited to a dtype: [-1, 1) for floats, small integers. */
static em_tensor *tin(em_dtype dt, int n, const int64_t *shape)
{
    if (em_dtype_is_float(dt)) return trand(dt, n, shape, -1, 1);
    return trand(dt, n, shape, dt == EM_U8 ? 0 : -3, 4);
}

/* Tolerance for a product summing k terms of |values| <= 1 in dt. */
static double tol(em_dtype dt, int64_t k) { return trtol(dt) * 4 * (double)(k + 1); }

static bool check_against(const em_tensor *got, ref r, em_dtype dt, int64_t k)
{
    bool ok = got && em_dtype_of(got) == dt && tshape_is(got, r.ndim, r.shape);
    if (ok) {
        wrap_to(dt, r.v, em_numel(got));
        ok = tclose(got, r.v, trtol(dt), tol(dt, k));
    }
    free(r.v);
    return ok;
}

static const em_dtype product_dtypes[] = {EM_F32, EM_F64, EM_F16, EM_BF16, EM_U8, EM_I8, EM_I16, EM_I32, EM_I64};
#define NPRODUCT_DTYPES (int)(sizeof product_dtypes / sizeof *product_dtypes)

/* ---- matmul ------------------------------------------------------------------ */
typedef struct mcase {
    int na, nb;
    int64_t a[4], b[4];
} mcase;

static const mcase matmul_cases[] = {
    {1, 1, {5}, {5}},                    /* dot */
    {2, 1, {4, 5}, {5}},                 /* mv */
    {1, 2, {5}, {5, 3}},                 /* vector x matrix */
    {2, 2, {4, 5}, {5, 3}},              /* mm */
    {3, 2, {2, 4, 5}, {5, 3}},           /* batch folded into rows */
    {3, 1, {2, 4, 5}, {5}},              /* batched x vector */
    {1, 3, {5}, {2, 5, 3}},              /* vector x batched */
    {2, 3, {4, 5}, {2, 5, 3}},           /* matrix x batched */
    {3, 3, {2, 4, 5}, {2, 5, 3}},        /* bmm */
    {4, 3, {2, 1, 4, 5}, {3, 5, 2}},     /* batch dims broadcast both ways */
    {3, 4, {1, 4, 5}, {2, 3, 5, 3}},     /* broadcast, right side longer */
    {2, 2, {0, 5}, {5, 3}},              /* empty rows */
    {2, 2, {4, 0}, {0, 3}},              /* k == 0: zeros */
    {3, 3, {0, 4, 5}, {1, 5, 3}},        /* empty batch */
    {1, 1, {0}, {0}},                    /* empty dot: 0 */
    {2, 1, {3, 0}, {0}},                 /* empty mv: zeros */
};

TEST(matmul_every_case_and_dtype)
{
    COVER(EM_OP_matmul);
    for (size_t c = 0; c < sizeof matmul_cases / sizeof *matmul_cases; c++) {
        const mcase *mc = &matmul_cases[c];
        for (int di = 0; di < NPRODUCT_DTYPES; di++) {
            em_dtype dt = product_dtypes[di];
            em_tensor *a = tin(dt, mc->na, mc->a), *b = tin(dt, mc->nb, mc->b), *r = em_matmul(a, b);
            CHECK_MSG(check_against(r, ref_matmul(a, b), dt, mc->a[mc->na - 1]), "case %zu dtype %s: %s", c,
                      em_dtype_name(dt), em_last_error());
            REL(a, b, r);
        }
    }
}

/* Every operand layout (transposed, padded, strided) for the BLAS path and the
 * integer and half fallbacks. */
TEST(matmul_layouts)
{
    static const mcase cases[] = {{2, 2, {7, 6}, {6, 5}}, {3, 3, {3, 4, 6}, {3, 6, 5}}, {3, 2, {3, 4, 6}, {6, 5}},
                                  {2, 1, {7, 6}, {6}},    {1, 2, {6}, {6, 5}},          {1, 1, {6}, {6}},
                                  {2, 2, {1, 6}, {6, 5}}, {2, 2, {7, 6}, {6, 1}},       {2, 2, {7, 1}, {1, 5}}};
    const em_dtype dts[] = {EM_F32, EM_F64, EM_BF16, EM_I32};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int di = 0; di < 4; di++)
            for (int la = 0; la < LAY_COUNT; la++)
                for (int lb = 0; lb < LAY_COUNT; lb++) {
                    em_dtype dt = dts[di];
                    em_tensor *a0 = tin(dt, cases[c].na, cases[c].a), *b0 = tin(dt, cases[c].nb, cases[c].b);
                    em_tensor *a = relayout(a0, la), *b = relayout(b0, lb), *r = em_matmul(a, b);
                    CHECK_MSG(check_against(r, ref_matmul(a0, b0), dt, 6), "case %zu %s layouts %d %d", c,
                              em_dtype_name(dt), la, lb);
                    REL(a0, b0, a, b, r);
                }
}

/* Output layouts: out= keeps a matching out's strides, whatever they are. */
TEST(matmul_out_layouts)
{
    const em_dtype dts[] = {EM_F32, EM_F64, EM_F16, EM_I64};
    for (int di = 0; di < 4; di++)
        for (int lo = 0; lo < LAY_COUNT; lo++) {
            em_dtype dt = dts[di];
            em_tensor *a = tin(dt, SHAPE(2, 4, 6)), *b = tin(dt, SHAPE(6, 5)), *o0 = em_full(SHAPE(2, 4, 5), NAN, dt);
            em_tensor *out = relayout(o0, lo);
            const void *data = em_data_ptr(out);
            CHECK(em_matmul_out(out, a, b) == EM_OK);
            CHECK(em_data_ptr(out) == data);
            CHECK(check_against(out, ref_matmul(a, b), dt, 6));
            REL(a, b, o0, out);
        }
    /* a vector product into a strided out, and a broadcast (stride-0) operand */
    em_tensor *m = trand(EM_F32, SHAPE(4, 3), -1, 1), *v = trand(EM_F32, SHAPE(3), -1, 1);
    em_tensor *big = em_full(SHAPE(8), NAN, EM_F32), *o = em_slice(big, 0, 0, 8, 2);
    CHECK(em_mv_out(o, m, v) == EM_OK && em_strides(o)[0] == 2);
    CHECK(check_against(o, ref_matmul(m, v), EM_F32, 3));
    em_tensor *row = trand(EM_F64, SHAPE(1, 3), -1, 1), *ex = em_expand(row, SHAPE(4, 3));
    em_tensor *col = trand(EM_F64, SHAPE(3, 1), -1, 1), *ey = em_expand(col, SHAPE(3, 5));
    em_tensor *r1 = em_matmul(ex, ey), *r2 = em_mm(ex, ey);
    CHECK(check_against(r1, ref_matmul(ex, ey), EM_F64, 3));
    CHECK(check_against(r2, ref_matmul(ex, ey), EM_F64, 3));
    /* broadcast vectors (stride 0) as gemv and dot operands */
    em_tensor *one = trand(EM_F64, SHAPE(1), -1, 1), *ev = em_expand(one, SHAPE(3)), *md = trand(EM_F64, SHAPE(4, 3), -1, 1);
    em_tensor *w = trand(EM_F64, SHAPE(3), -1, 1), *m35 = trand(EM_F64, SHAPE(3, 5), -1, 1);
    em_tensor *r3 = em_mv(md, ev), *r4 = em_dot(ev, w), *r5 = em_matmul(ev, m35);
    CHECK(check_against(r3, ref_matmul(md, ev), EM_F64, 3));
    CHECK(check_against(r4, ref_matmul(ev, w), EM_F64, 3));
    CHECK(check_against(r5, ref_matmul(ev, m35), EM_F64, 3));
    REL(m, v, big, o, row, ex, col, ey, r1, r2, one, ev, md, w, m35, r3, r4, r5);
}

TEST(mm_bmm_mv_dot_vdot)
{
    for (int di = 0; di < NPRODUCT_DTYPES; di++) {
        em_dtype dt = product_dtypes[di];
        em_tensor *a = tin(dt, SHAPE(3, 4)), *b = tin(dt, SHAPE(4, 5)), *ba = tin(dt, SHAPE(2, 3, 4));
        em_tensor *bb = tin(dt, SHAPE(2, 4, 5)), *v = tin(dt, SHAPE(4)), *w = tin(dt, SHAPE(4));
        em_tensor *mm = em_mm(a, b), *bmm = em_bmm(ba, bb), *mv = em_mv(a, v), *dot = em_dot(v, w), *vdot = em_vdot(v, w);
        CHECK_MSG(check_against(mm, ref_matmul(a, b), dt, 4), "mm %s", em_dtype_name(dt));
        CHECK_MSG(check_against(bmm, ref_matmul(ba, bb), dt, 4), "bmm %s", em_dtype_name(dt));
        CHECK_MSG(check_against(mv, ref_matmul(a, v), dt, 4), "mv %s", em_dtype_name(dt));
        CHECK_MSG(check_against(dot, ref_matmul(v, w), dt, 4), "dot %s", em_dtype_name(dt));
        CHECK_MSG(check_against(vdot, ref_matmul(v, w), dt, 4), "vdot %s", em_dtype_name(dt));
        /* out= forms, resizing an empty out */
        em_tensor *o1 = em_empty(SHAPE(0), dt), *o2 = em_empty(SHAPE(0), dt), *o3 = em_empty(SHAPE(0), dt);
        em_tensor *o4 = em_empty(SHAPE(0), dt), *o5 = em_empty(SHAPE(2), dt);
        CHECK(em_mm_out(o1, a, b) == EM_OK && em_bmm_out(o2, ba, bb) == EM_OK && em_mv_out(o3, a, v) == EM_OK);
        CHECK(em_dot_out(o4, v, w) == EM_OK && em_vdot_out(o5, v, w) == EM_OK);
        CHECK(check_against(o1, ref_matmul(a, b), dt, 4) && check_against(o2, ref_matmul(ba, bb), dt, 4));
        CHECK(check_against(o3, ref_matmul(a, v), dt, 4) && check_against(o4, ref_matmul(v, w), dt, 4));
        CHECK(check_against(o5, ref_matmul(v, w), dt, 4));
        REL(a, b, ba, bb, v, w, mm, bmm, mv, dot, vdot, o1, o2, o3, o4, o5);
    }
    COVER(EM_OP_mm, EM_OP_bmm, EM_OP_mv, EM_OP_dot, EM_OP_vdot);
}

/* ---- beta * input + alpha * product ---------------------------------------------- */
/* ref = beta * input (broadcast to the product's shape) + alpha * p */
static ref ref_add(ref p, const em_tensor *input, double beta, double alpha, bool sum_batches)
{
    int64_t n = 1;
    for (int d = 0; d < p.ndim; d++) n *= p.shape[d];
    if (sum_batches) { /* addbmm: the batch dim of p summed */
        int64_t per = n / p.shape[0];
        for (int64_t b = 1; b < p.shape[0]; b++)
            for (int64_t i = 0; i < per; i++) p.v[i] += p.v[b * per + i];
        if (!p.shape[0]) memset(p.v, 0, (per + 1) * sizeof *p.v);
        memmove(p.shape, p.shape + 1, (--p.ndim) * sizeof *p.shape);
        n = per;
    }
    em_tensor *e = em_expand(input, p.ndim, p.shape);
    double *iv = e ? tvals(e) : NULL;
    for (int64_t i = 0; iv && i < n; i++) p.v[i] = (beta == 0 ? 0 : beta * iv[i]) + alpha * p.v[i];
    free(iv);
    em_release(e);
    return p;
}

TEST(addmm_addmv_baddbmm_addbmm)
{
    for (int di = 0; di < NPRODUCT_DTYPES; di++) {
        em_dtype dt = product_dtypes[di];
        bool f = em_dtype_is_float(dt);
        double beta = f ? 0.5 : 2, alpha = f ? -1.5 : 3;
        em_tensor *m1 = tin(dt, SHAPE(3, 4)), *m2 = tin(dt, SHAPE(4, 5)), *b1 = tin(dt, SHAPE(2, 3, 4));
        em_tensor *b2 = tin(dt, SHAPE(2, 4, 5)), *v = tin(dt, SHAPE(4));
        em_tensor *in_mm = tin(dt, SHAPE(5)), *in_mv = tin(dt, SHAPE(1)), *in_bb = tin(dt, SHAPE(3, 1)), *in_ab = tin(dt, SHAPE(3, 5));
        em_tensor *r1 = em_addmm(in_mm, m1, m2, beta, alpha), *r2 = em_addmv(in_mv, m1, v, beta, alpha);
        em_tensor *r3 = em_baddbmm(in_bb, b1, b2, beta, alpha), *r4 = em_addbmm(in_ab, b1, b2, beta, alpha);
        CHECK_MSG(check_against(r1, ref_add(ref_matmul(m1, m2), in_mm, beta, alpha, false), dt, 8), "addmm %s", em_dtype_name(dt));
        CHECK_MSG(check_against(r2, ref_add(ref_matmul(m1, v), in_mv, beta, alpha, false), dt, 8), "addmv %s", em_dtype_name(dt));
        CHECK_MSG(check_against(r3, ref_add(ref_matmul(b1, b2), in_bb, beta, alpha, false), dt, 8), "baddbmm %s", em_dtype_name(dt));
        CHECK_MSG(check_against(r4, ref_add(ref_matmul(b1, b2), in_ab, beta, alpha, true), dt, 16), "addbmm %s", em_dtype_name(dt));
        /* in place on a transposed self, and out= */
        em_tensor *s0 = tin(dt, SHAPE(3, 5)), *s = relayout(s0, LAY_COLMAJOR), *o = em_empty(SHAPE(1), dt);
        uint64_t ver = em_version(s);
        CHECK(em_addmm_(s, m1, m2, beta, alpha) == EM_OK && em_version(s) > ver);
        CHECK(check_against(s, ref_add(ref_matmul(m1, m2), s0, beta, alpha, false), dt, 8));
        CHECK(em_addbmm_out(o, in_ab, b1, b2, beta, alpha) == EM_OK);
        CHECK(check_against(o, ref_add(ref_matmul(b1, b2), in_ab, beta, alpha, true), dt, 16));
        em_tensor *sv0 = tin(dt, SHAPE(3)), *sv = tnoncontig(sv0), *sb0 = tin(dt, SHAPE(2, 3, 5)), *sb = em_clone(sb0);
        CHECK(em_addmv_(sv, m1, v, beta, alpha) == EM_OK && em_baddbmm_(sb, b1, b2, beta, alpha) == EM_OK);
        CHECK(check_against(sv, ref_add(ref_matmul(m1, v), sv0, beta, alpha, false), dt, 8));
        CHECK(check_against(sb, ref_add(ref_matmul(b1, b2), sb0, beta, alpha, false), dt, 8));
        em_tensor *sa0 = tin(dt, SHAPE(3, 5)), *sa = em_clone(sa0);
        em_tensor *o2 = em_empty(SHAPE(0), dt), *o3 = em_empty(SHAPE(0), dt), *o4 = em_empty(SHAPE(0), dt);
        CHECK(em_addbmm_(sa, b1, b2, beta, alpha) == EM_OK && em_addmm_out(o2, in_mm, m1, m2, beta, alpha) == EM_OK);
        CHECK(em_addmv_out(o3, in_mv, m1, v, beta, alpha) == EM_OK && em_baddbmm_out(o4, in_bb, b1, b2, beta, alpha) == EM_OK);
        CHECK(check_against(sa, ref_add(ref_matmul(b1, b2), sa0, beta, alpha, true), dt, 16));
        CHECK(check_against(o2, ref_add(ref_matmul(m1, m2), in_mm, beta, alpha, false), dt, 8));
        CHECK(check_against(o3, ref_add(ref_matmul(m1, v), in_mv, beta, alpha, false), dt, 8));
        CHECK(check_against(o4, ref_add(ref_matmul(b1, b2), in_bb, beta, alpha, false), dt, 8));
        REL(m1, m2, b1, b2, v, in_mm, in_mv, in_bb, in_ab, r1, r2, r3, r4, s0, s, o, sv0, sv, sb0, sb, sa0, sa, o2, o3, o4);
    }
    COVER(EM_OP_addmm, EM_OP_addmv, EM_OP_baddbmm, EM_OP_addbmm);
}

/* The input term of another dtype (addmv, baddbmm), beta == 0 ignoring nan,
 * k == 0 giving beta * input, and an empty batch for addbmm. */
TEST(addmm_family_edge_cases)
{
    em_tensor *m1 = trand(EM_F32, SHAPE(3, 4), -1, 1), *m2 = trand(EM_F32, SHAPE(4, 5), -1, 1), *v = trand(EM_F32, SHAPE(4), -1, 1);
    em_tensor *nan35 = em_full(SHAPE(3, 5), NAN, EM_F32), *nan3 = em_full(SHAPE(3), NAN, EM_F32);
    em_tensor *r1 = em_addmm(nan35, m1, m2, 0, 2), *r2 = em_addmv(nan3, m1, v, 0, 1);
    CHECK(check_against(r1, ref_add(ref_matmul(m1, m2), nan35, 0, 2, false), EM_F32, 4));
    CHECK(check_against(r2, ref_add(ref_matmul(m1, v), nan3, 0, 1, false), EM_F32, 4));
    em_tensor *d3 = trand(EM_F64, SHAPE(3), -1, 1), *r3 = em_addmv(d3, m1, v, 2, 1);
    CHECK(check_against(r3, ref_add(ref_matmul(m1, v), d3, 2, 1, false), EM_F32, 4));
    /* k == 0 */
    em_tensor *e1 = em_empty(SHAPE(3, 0), EM_F32), *e2 = em_empty(SHAPE(0, 5), EM_F32), *in = trand(EM_F32, SHAPE(3, 5), -1, 1);
    em_tensor *r4 = em_addmm(in, e1, e2, 2.5, 1), *r5 = em_addmm(nan35, e1, e2, 0, 1);
    CHECK(check_against(r4, ref_add(ref_matmul(e1, e2), in, 2.5, 1, false), EM_F32, 0));
    for (int i = 0; i < 15; i++) CHECK(tval(r5, i) == 0);
    /* addbmm over no batches, and bf16 and int variants of k == 0 */
    em_tensor *z1 = em_empty(SHAPE(0, 3, 4), EM_BF16), *z2 = em_empty(SHAPE(0, 4, 5), EM_BF16), *inb = em_to_dtype(in, EM_BF16);
    em_tensor *r6 = em_addbmm(inb, z1, z2, 2, 1);
    for (int i = 0; i < 15; i++) CHECK(fabs(tval(r6, i) - 2 * tval(inb, i)) <= 1e-2 * fabs(tval(inb, i)));
    em_tensor *i1 = em_empty(SHAPE(2, 3, 0), EM_I16), *i2 = em_empty(SHAPE(2, 0, 5), EM_I16), *ini = em_full(SHAPE(5), 7, EM_I16);
    em_tensor *r7 = em_baddbmm(ini, i1, i2, 3, 1);
    CHECK(r7 && em_dtype_of(r7) == EM_I16 && tshape_is(r7, SHAPE(2, 3, 5)));
    for (int i = 0; i < 30; i++) CHECK(tval(r7, i) == 21);
    /* integer alpha/beta truncate (PyTorch's Scalar.to<int>()) and products wrap */
    em_tensor *i3 = em_full(SHAPE(2, 3), 1, EM_I32), *i4 = em_full(SHAPE(3, 2), 1, EM_I32), *ci = em_full(SHAPE(2, 2), 1, EM_I32);
    em_tensor *r8 = em_addmm(ci, i3, i4, 0.5, 2.7);
    CHECK(r8 && tval(r8, 0) == 6);
    em_tensor *u1 = em_full(SHAPE(2, 16), 15, EM_U8), *u2 = em_full(SHAPE(16, 2), 15, EM_U8), *r9 = em_mm(u1, u2);
    CHECK(r9 && tval(r9, 0) == (3600 % 256));
    em_tensor *w1 = em_full(SHAPE(1, 2), 65536, EM_I32), *w2 = em_full(SHAPE(2, 1), -65536, EM_I32), *r10 = em_mm(w1, w2);
    em_tensor *l1 = em_full(SHAPE(1, 3), 1099511627776.0, EM_I64), *l2 = em_full(SHAPE(3), (1 << 30) + 3, EM_I64);
    em_tensor *r11 = em_mv(l1, l2);
    CHECK(r10 && tval(r10, 0) == 0);                     /* -2^33 wraps to 0 in int32 */
    CHECK(r11 && tval(r11, 0) == 9 * 1099511627776.0); /* 2^40 (2^30 + 3) = 2^70 + 3 2^40 wraps */
    REL(w1, w2, r10, l1, l2, r11);
    REL(m1, m2, v, nan35, nan3, r1, r2, d3, r3, e1, e2, in, r4, r5, z1, z2, inb, r6, i1, i2, ini, r7, i3, i4, ci, r8, u1, u2, r9);
}

static ref ref_kron(const em_tensor *a, const em_tensor *b);
static ref ref_einsum(const char *eq, int n, const em_tensor *const *ops);

/* An out that overlaps an input is computed through a temporary. */
TEST(products_overlapping_out)
{
    em_tensor *x = trand(EM_F64, SHAPE(4, 4), -1, 1), *x0 = em_clone(x);
    CHECK(em_mm_out(x, x, x) == EM_OK);
    CHECK(check_against(x, ref_matmul(x0, x0), EM_F64, 4));
    em_tensor *y = em_clone(x0);
    CHECK(em_addmm_(y, y, y, 1, 1) == EM_OK);
    CHECK(check_against(y, ref_add(ref_matmul(x0, x0), x0, 1, 1, false), EM_F64, 4));
    em_tensor *z = em_clone(x0), *zt = em_t(z), *col = em_select(z, 1, 0);
    CHECK(em_mv_out(col, zt, col) == EM_OK); /* col = z^T col, col a column of z */
    em_tensor *c0 = em_select(x0, 1, 0), *x0t = em_t(x0);
    CHECK(check_against(col, ref_matmul(x0t, c0), EM_F64, 4));
    /* out is an input and must be resized: the inputs are read as they were */
    em_tensor *m = trand(EM_F32, SHAPE(3, 3), -1, 1), *m0 = em_clone(m), *w = trand(EM_F32, SHAPE(3, 5), -1, 1);
    CHECK(em_mm_out(m, m, w) == EM_OK);
    CHECK(check_against(m, ref_matmul(m0, w), EM_F32, 3));
    em_tensor *v = trand(EM_F64, SHAPE(3), -1, 1), *v0 = em_clone(v);
    CHECK(em_dot_out(v, v, v) == EM_OK);
    CHECK(check_against(v, ref_matmul(v0, v0), EM_F64, 3));
    em_tensor *b = trand(EM_F32, SHAPE(2, 3, 3), -1, 1), *b0 = em_clone(b), *bw = trand(EM_F32, SHAPE(2, 3, 4), -1, 1);
    CHECK(em_bmm_out(b, b, bw) == EM_OK);
    CHECK(check_against(b, ref_matmul(b0, bw), EM_F32, 3));
    /* kron and outer into an input that is a view with room to grow in place */
    em_tensor *buf = trand(EM_F64, SHAPE(40), -1, 1), *k = em_narrow(buf, 0, 0, 4), *k0 = em_clone(k);
    em_tensor *kv = trand(EM_F64, SHAPE(3), -1, 1);
    CHECK(em_kron_out(k, k, kv) == EM_OK);
    CHECK(check_against(k, ref_kron(k0, kv), EM_F64, 1));
    em_tensor *o = em_narrow(buf, 0, 20, 4), *o0 = em_clone(o);
    CHECK(em_outer_out(o, o, kv) == EM_OK);
    CHECK(check_against(o, ref_einsum("i,j->ij", 2, (const em_tensor *[]){o0, kv}), EM_F64, 1));
    REL(x, x0, y, z, zt, col, c0, x0t, m, m0, w, v, v0, b, b0, bw, buf, k, k0, kv, o, o0);
}

/* Large enough for OpenBLAS's threads, and a batch of small matrices. */
TEST(matmul_threads)
{
    int saved = em_get_num_threads();
    em_set_num_threads(2);
    em_tensor *a = trand(EM_F32, SHAPE(96, 130), -1, 1), *b = trand(EM_F32, SHAPE(130, 70), -1, 1), *r = em_matmul(a, b);
    em_tensor *ba = trand(EM_F64, SHAPE(64, 5, 7), -1, 1), *bb = trand(EM_F64, SHAPE(64, 7, 3), -1, 1), *br = em_bmm(ba, bb);
    em_set_num_threads(saved);
    CHECK(check_against(r, ref_matmul(a, b), EM_F32, 130));
    CHECK(check_against(br, ref_matmul(ba, bb), EM_F64, 7));
    REL(a, b, r, ba, bb, br);
}

TEST(product_errors)
{
    em_tensor *f23 = em_zeros(SHAPE(2, 3), EM_F32), *f45 = em_zeros(SHAPE(4, 5), EM_F32), *d35 = em_zeros(SHAPE(3, 5), EM_F64);
    em_tensor *f3 = em_zeros(SHAPE(3), EM_F32), *f4 = em_zeros(SHAPE(4), EM_F32), *s = em_tensor_scalar(1, EM_F32);
    em_tensor *b23 = em_zeros(SHAPE(2, 3), EM_BOOL), *b35 = em_zeros(SHAPE(3, 5), EM_BOOL), *f35 = em_zeros(SHAPE(3, 5), EM_F32);
    em_tensor *f223 = em_zeros(SHAPE(2, 2, 3), EM_F32), *f345 = em_zeros(SHAPE(3, 4, 5), EM_F32), *f235 = em_zeros(SHAPE(2, 3, 5), EM_F32);
    CHECK_ERR(em_matmul(f23, f45), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"));
    CHECK_ERR(em_mm(f23, f45), EM_ERR_SHAPE);
    CHECK_ERR(em_matmul(f23, d35), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "expected scalar type Float but found Double"));
    CHECK_ERR(em_matmul(s, f3), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"));
    CHECK_ERR(em_matmul(f3, f4), EM_ERR_SHAPE);
    CHECK_ERR(em_matmul(f23, f4), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "size mismatch, got 2, 2x3,4"));
    CHECK_ERR(em_matmul(f223, f345), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"));
    CHECK_ERR(em_matmul(b23, b35), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "\"addmm_impl_cpu_\" not implemented for 'Bool'"));
    CHECK_ERR(em_mm(f3, f35), EM_ERR_SHAPE);
    CHECK_ERR(em_bmm(f23, f35), EM_ERR_SHAPE);
    CHECK_ERR(em_bmm(f223, f345), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 4]."));
    CHECK_ERR(em_mv(f23, f4), EM_ERR_SHAPE);
    CHECK_ERR(em_mv(f3, f3), EM_ERR_SHAPE);
    CHECK_ERR(em_dot(f3, f4), EM_ERR_SHAPE);
    CHECK_ERR(em_dot(f23, f3), EM_ERR_SHAPE);
    em_tensor *i3 = em_zeros(SHAPE(3), EM_I32), *bo3 = em_zeros(SHAPE(3), EM_BOOL);
    CHECK_ERR(em_vdot(f3, i3), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "dot : expected both vectors to have same dtype, but found Float and Int"));
    CHECK_ERR(em_dot(bo3, bo3), EM_ERR_DTYPE);
    /* addmm family */
    em_tensor *f25 = em_zeros(SHAPE(2, 5), EM_F32), *d25 = em_zeros(SHAPE(2, 5), EM_F64), *f15 = em_zeros(SHAPE(1, 5), EM_F32);
    CHECK_ERR(em_addmm(d25, f23, f35, 1, 1), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "self and mat2 must have the same dtype"));
    CHECK_ERR(em_addmm(f35, f23, f35, 1, 1), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "The expanded size of the tensor (2) must match the existing size (3) at non-singleton "
                                   "dimension 0.  Target sizes: [2, 5].  Tensor sizes: [3, 5]"));
    CHECK_ERR(em_addmm_(f15, f23, f35, 1, 1), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "Bad in-place call: input tensor size [1, 5] and output tensor size [2, 5] should match"));
    CHECK_ERR(em_addmm(f25, f3, f35, 1, 1), EM_ERR_SHAPE);
    em_tensor *f2 = em_zeros(SHAPE(2), EM_F32), *d2 = em_zeros(SHAPE(2), EM_F64);
    CHECK_ERR(em_addmv(f3, f23, f3, 1, 1), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "size mismatch, got 3, 2x3,3"));
    CHECK_ERR(em_addmv_(d2, f23, f3, 1, 1), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "Bad in-place call: input tensor dtype double and output tensor dtype float should match"));
    em_tensor *f225 = em_zeros(SHAPE(2, 2, 5), EM_F32), *f335 = em_zeros(SHAPE(3, 3, 5), EM_F32);
    CHECK_ERR(em_baddbmm(f225, f223, f335, 1, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_addbmm(f25, f223, f335, 1, 1), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "batch1 and batch2 must have same number of batches, got 2 and 3"));
    CHECK_ERR(em_addbmm(f25, f223, f225, 1, 1), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "Incompatible matrix sizes for bmm (2x3 and 2x5)"));
    CHECK_ERR(em_addbmm(d25, f223, f235, 1, 1), EM_ERR_DTYPE);
    /* out= dtype must match exactly; a failed call leaves out as it was */
    em_tensor *od = em_zeros(SHAPE(7), EM_F64);
    uint64_t ver = em_version(od);
    CHECK_ERR(em_mm_out(od, f23, f35), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "Expected out tensor to have dtype float, but got double instead"));
    CHECK(tshape_is(od, SHAPE(7)) && em_version(od) == ver);
    CHECK_ERR(em_dot_out(od, f3, f3), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "result dtype Double does not match input dtype Float"));
    CHECK_ERR(em_matmul_out(NULL, f23, f35), EM_ERR_VALUE);
    CHECK_ERR(em_matmul(NULL, f35), EM_ERR_VALUE);
    CHECK_ERR(em_addmm(NULL, f23, f35, 1, 1), EM_ERR_VALUE);
    /* an out with internal overlap */
    em_tensor *row = em_zeros(SHAPE(1, 5), EM_F32), *ex = em_expand(row, SHAPE(2, 5));
    CHECK_ERR(em_mm_out(ex, f23, f35), EM_ERR_RUNTIME);
    REL(f23, f45, d35, f3, f4, s, b23, b35, f35, f223, f345, f235, i3, bo3, f25, d25, f15, f2, d2, f225, f335, od, row, ex);
}

/* ---- einsum against explicit loops ---------------------------------------------- */
/* The reference: every assignment of values to the labels, the product of the
 * operands there added into the output (size-1 dims broadcast). Explicit
 * "->" and letters only. */
static ref ref_einsum(const char *eq, int n, const em_tensor *const *ops)
{
    ref r = {0};
    const char *sub[8];
    int len[8], nl = 0;
    char labels[64];
    int64_t lsize[128] = {0};
    const char *p = eq;
    for (int k = 0; k < n; k++) {
        sub[k] = p;
        while (*p != ',' && *p != '-') p++;
        len[k] = (int)(p - sub[k]);
        p++;
    }
    const char *out = strstr(eq, "->") + 2;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < len[k]; i++) {
            unsigned char c = (unsigned char)sub[k][i];
            int64_t s = em_sizes(ops[k])[i];
            if (!lsize[c] || lsize[c] == 1) {
                if (!lsize[c]) labels[nl++] = (char)c;
                lsize[c] = s;
            }
        }
    r.ndim = (int)strlen(out);
    int64_t total = 1, outn = 1;
    for (int i = 0; i < r.ndim; i++) r.shape[i] = lsize[(unsigned char)out[i]], outn *= r.shape[i];
    for (int i = 0; i < nl; i++) total *= lsize[(unsigned char)labels[i]];
    r.v = calloc((size_t)outn + 1, sizeof(double));
    double *vals[8];
    for (int k = 0; k < n; k++) vals[k] = tvals(ops[k]);
    int64_t idx[128];
    for (int64_t it = 0; it < total; it++) {
        int64_t rem = it;
        for (int i = nl - 1; i >= 0; i--) {
            int64_t s = lsize[(unsigned char)labels[i]];
            idx[(unsigned char)labels[i]] = rem % s, rem /= s;
        }
        double prod = 1;
        for (int k = 0; k < n; k++) {
            int64_t off = 0;
            for (int i = 0; i < len[k]; i++) {
                int64_t s = em_sizes(ops[k])[i];
                off = off * s + (s == 1 ? 0 : idx[(unsigned char)sub[k][i]]);
            }
            prod *= vals[k][off];
        }
        int64_t o = 0;
        for (int i = 0; i < r.ndim; i++) o = o * r.shape[i] + idx[(unsigned char)out[i]];
        r.v[o] += prod;
    }
    for (int k = 0; k < n; k++) free(vals[k]);
    return r;
}

typedef struct ecase {
    const char *eq, *ref_eq; /* ref_eq: the same with explicit labels (NULL: eq) */
    int n;
    int nd[3];
    int64_t s[3][4];
} ecase;

static const ecase einsum_cases[] = {
    {"ii->i", 0, 1, {2}, {{4, 4}}},
    {"ij->ji", 0, 1, {2}, {{3, 4}}},
    {"ij->", 0, 1, {2}, {{3, 4}}},
    {"ii->", 0, 1, {2}, {{4, 4}}},
    {"ij->j", 0, 1, {2}, {{3, 4}}},
    {"ijk->kji", 0, 1, {3}, {{2, 3, 4}}},
    {"iij->ji", 0, 1, {3}, {{3, 3, 2}}},
    {"ii", "ii->", 1, {2}, {{3, 3}}},
    {"ji", "ji->ij", 1, {2}, {{3, 2}}},
    {"i,i->", 0, 2, {1, 1}, {{5}, {5}}},
    {"i,i->i", 0, 2, {1, 1}, {{5}, {5}}},
    {"i,i->i", 0, 2, {1, 1}, {{1}, {5}}},
    {"i,j->ij", 0, 2, {1, 1}, {{3}, {4}}},
    {"ij,j->i", 0, 2, {2, 1}, {{3, 4}, {4}}},
    {"ij,jk->ik", 0, 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ij,kj->ik", 0, 2, {2, 2}, {{3, 4}, {5, 4}}},
    {"ji,jk->ik", 0, 2, {2, 2}, {{4, 3}, {4, 5}}},
    {"ij,jk", "ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ba,Ab", "ba,Ab->Aa", 2, {2, 2}, {{3, 4}, {2, 3}}},
    {"bij,bjk->bik", 0, 2, {3, 3}, {{2, 3, 4}, {2, 4, 5}}},
    {"bij,bkj->bik", 0, 2, {3, 3}, {{2, 3, 4}, {1, 5, 4}}},
    {"ij,ij->", 0, 2, {2, 2}, {{3, 4}, {3, 4}}},
    {"ij,ij->ij", 0, 2, {2, 2}, {{3, 1}, {1, 4}}},
    {"ij,ji->", 0, 2, {2, 2}, {{3, 4}, {4, 3}}},
    {"ab,ab->ba", 0, 2, {2, 2}, {{3, 4}, {3, 4}}},
    {"ii,ii->i", 0, 2, {2, 2}, {{3, 3}, {3, 3}}},
    {"ijk,jkl->il", 0, 2, {3, 3}, {{2, 3, 4}, {3, 4, 2}}},
    {"ijk,jkl->li", 0, 2, {3, 3}, {{2, 3, 4}, {3, 4, 2}}},
    {"ij,kl->ijkl", 0, 2, {2, 2}, {{2, 3}, {4, 2}}},
    {"ij,k->k", 0, 2, {2, 1}, {{2, 3}, {4}}},
    {"abc,cd->abd", 0, 2, {3, 2}, {{2, 3, 4}, {4, 3}}},
    {"abc,bd->dac", 0, 2, {3, 2}, {{2, 3, 4}, {3, 2}}},
    {"bn,anm,bm->ba", 0, 3, {2, 3, 2}, {{2, 3}, {4, 3, 5}, {2, 5}}},
    {"i,ij,j->", 0, 3, {1, 2, 1}, {{3}, {3, 4}, {4}}},
    {"ij,jk,kl->il", 0, 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 2}}},
    {"...ij,...jk->...ik", "bij,bjk->bik", 2, {3, 3}, {{2, 3, 4}, {2, 4, 5}}},
    {"...ij,jk", "bij,jk->bik", 2, {3, 2}, {{2, 3, 4}, {4, 5}}},
    {"i...->...", "ijk->jk", 1, {3}, {{2, 3, 4}}},
    {"...i->...", "ijk->ij", 1, {3}, {{2, 3, 4}}},
    {"...->", "ij->", 1, {2}, {{2, 3}}},
    {"b...a,Ab", "bca,Ab->cAa", 2, {3, 2}, {{2, 5, 3}, {4, 2}}},
    {"i j , j k -> i k", "ij,jk->ik", 2, {2, 2}, {{3, 4}, {4, 5}}},
    {"ij,jk->ik", 0, 2, {2, 2}, {{3, 0}, {0, 5}}},
    {"ij,jk->ik", 0, 2, {2, 2}, {{0, 4}, {4, 5}}},
    {"ii->i", 0, 1, {2}, {{0, 0}}},
};

TEST(einsum_against_loops)
{
    COVER(EM_OP_einsum);
    const em_dtype dts[] = {EM_F64, EM_F32, EM_BF16};
    for (size_t c = 0; c < sizeof einsum_cases / sizeof *einsum_cases; c++) {
        const ecase *ec = &einsum_cases[c];
        for (int di = 0; di < 3; di++)
            for (int lay = 0; lay < 3; lay++) {
                em_dtype dt = dts[di];
                em_tensor *ops[3] = {NULL, NULL, NULL}, *raw[3] = {NULL, NULL, NULL};
                for (int k = 0; k < ec->n; k++) {
                    raw[k] = trand(dt, ec->nd[k], ec->s[k], -1, 1);
                    ops[k] = relayout(raw[k], k == 1 ? LAY_CONTIG : lay);
                }
                em_tensor *r = em_einsum(ec->eq, ec->n, (const em_tensor *const *)ops);
                ref want = ref_einsum(ec->ref_eq ? ec->ref_eq : ec->eq, ec->n, (const em_tensor *const *)raw);
                int64_t k = 1;
                for (int i = 0; i < ec->nd[0]; i++) k *= ec->s[0][i];
                CHECK_MSG(check_against(r, want, dt, k), "einsum \"%s\" %s layout %d: %s", ec->eq, em_dtype_name(dt),
                          lay, em_last_error());
                REL(r, ops[0], ops[1], ops[2], raw[0], raw[1], raw[2]);
            }
    }
}

/* einsum's dtypes follow PyTorch: one-operand sums make integers int64,
 * products of one dtype keep it, elementwise pairs promote. */
TEST(einsum_dtypes_and_views)
{
    em_tensor *i23 = trand(EM_I32, SHAPE(2, 3), -3, 4), *i34 = trand(EM_I32, SHAPE(3, 4), -3, 4);
    em_tensor *b23 = trand(EM_BOOL, SHAPE(2, 3), 0, 1), *f3 = trand(EM_F32, SHAPE(3), -1, 1), *h3 = trand(EM_F16, SHAPE(3), -1, 1);
    em_tensor *r1 = em_einsum("ij,jk->ik", 2, (const em_tensor *[]){i23, i34});
    em_tensor *r2 = em_einsum("ij->i", 1, (const em_tensor *[]){i23});
    em_tensor *r3 = em_einsum("ij->", 1, (const em_tensor *[]){b23});
    em_tensor *r4 = em_einsum("ij->ji", 1, (const em_tensor *[]){b23});
    em_tensor *r5 = em_einsum("ij,ij->ij", 2, (const em_tensor *[]){b23, b23});
    em_tensor *r6 = em_einsum("i,j->ij", 2, (const em_tensor *[]){f3, h3});
    CHECK(r1 && r2 && r3 && r4 && r5 && r6);
    CHECK(check_against(r1, ref_einsum("ij,jk->ik", 2, (const em_tensor *[]){i23, i34}), EM_I32, 3));
    CHECK(check_against(r2, ref_einsum("ij->i", 1, (const em_tensor *[]){i23}), EM_I64, 3));
    CHECK(check_against(r3, ref_einsum("ij->", 1, (const em_tensor *[]){b23}), EM_I64, 6));
    CHECK(em_dtype_of(r4) == EM_BOOL && em_is_same_storage(r4, b23)); /* a permuted view, as PyTorch */
    CHECK(check_against(r5, ref_einsum("ij,ij->ij", 2, (const em_tensor *[]){b23, b23}), EM_BOOL, 1));
    CHECK(check_against(r6, ref_einsum("i,j->ij", 2, (const em_tensor *[]){f3, h3}), EM_F32, 1));
    /* a 0-d operand */
    em_tensor *s = em_tensor_scalar(2, EM_F32);
    CHECK_ERR(em_einsum(",ij", 2, (const em_tensor *[]){s, f3}), EM_ERR_SHAPE); /* ",ij" needs a 2-d second operand */
    em_tensor *m = trand(EM_F32, SHAPE(2, 3), -1, 1), *r8 = em_einsum(",ij", 2, (const em_tensor *[]){s, m});
    CHECK(r8 && tshape_is(r8, SHAPE(2, 3)) && fabs(tval(r8, 4) - 2 * tval(m, 4)) < 1e-6);
    em_tensor *r9 = em_einsum("", 1, (const em_tensor *[]){s});
    CHECK(r9 && em_ndim(r9) == 0 && tval(r9, 0) == 2);
    REL(i23, i34, b23, f3, h3, r1, r2, r3, r4, r5, r6, s, m, r8, r9);
}

TEST(einsum_errors)
{
    em_tensor *a = em_zeros(SHAPE(2, 3), EM_F32), *b = em_zeros(SHAPE(4, 5), EM_F32), *d = em_zeros(SHAPE(3, 4), EM_F64);
    em_tensor *bo = em_zeros(SHAPE(3, 4), EM_BOOL), *ba = em_zeros(SHAPE(2, 3), EM_BOOL);
    const em_tensor *ab[] = {a, b}, *ad[] = {a, d}, *bb[] = {ba, bo};
    CHECK_ERR(em_einsum("ij,jk", 2, ab), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"));
    CHECK_ERR(em_einsum("ij,jk->ik", 1, ab), EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "einsum(): fewer operands were provided than specified in the equation"));
    CHECK_ERR(em_einsum("ij->ij", 2, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("ij->ik", 1, ab), EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "einsum(): output subscript k does not appear in the equation for any input operand"));
    CHECK_ERR(em_einsum("ij->ii", 1, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("ijk->ij", 1, ab), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "einsum(): the number of subscripts in the equation (3) does not match the number of "
                                   "dimensions (2) for operand 0 and no ellipsis was given"));
    CHECK_ERR(em_einsum("i1->i", 1, ab), EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"));
    CHECK_ERR(em_einsum("ij->i->j", 1, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("ij-ik", 1, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("i..j", 1, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("i......j", 1, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("...ij->......", 1, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("ij->.", 1, ab), EM_ERR_RUNTIME);
    CHECK_ERR(em_einsum("ii->i", 1, ab), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"));
    CHECK_ERR(em_einsum("ij,jk->ik", 2, ad), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "expected scalar type Float but found Double"));
    CHECK_ERR(em_einsum("ij,jk->ik", 2, bb), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "\"bmm\" not implemented for 'Bool'"));
    CHECK_ERR(em_einsum("ij", 0, ab), EM_ERR_VALUE);
    CHECK_ERR(em_einsum(NULL, 1, ab), EM_ERR_VALUE);
    CHECK_ERR(em_einsum("ij", 1, (const em_tensor *[]){NULL}), EM_ERR_VALUE);
    REL(a, b, d, bo, ba);
}

/* ---- tensordot ---------------------------------------------------------------------- */
TEST(tensordot)
{
    COVER(EM_OP_tensordot);
    const em_dtype dts[] = {EM_F64, EM_F32, EM_I64};
    for (int di = 0; di < 3; di++) {
        em_dtype dt = dts[di];
        em_tensor *a = tin(dt, SHAPE(2, 3, 4)), *b = tin(dt, SHAPE(3, 4, 5)), *at = relayout(a, LAY_COLMAJOR);
        em_tensor *r1 = em_tensordot(at, b, 2), *r2 = em_tensordot(a, b, 0), *r3 = em_tensordot_dims(a, b, 2, (const int[]){-1, 1}, (const int[]){1, 0});
        em_tensor *b2 = tin(dt, SHAPE(4, 2)), *r4 = em_tensordot_dims(a, b2, 2, (const int[]){2, 0}, (const int[]){0, 1});
        CHECK(check_against(r1, ref_einsum("ijk,jkl->il", 2, (const em_tensor *[]){a, b}), dt, 12));
        CHECK(check_against(r2, ref_einsum("ijk,lmn->ijklmn", 2, (const em_tensor *[]){a, b}), dt, 1));
        CHECK(check_against(r3, ref_einsum("ijk,jkl->il", 2, (const em_tensor *[]){a, b}), dt, 12));
        CHECK(check_against(r4, ref_einsum("ijk,ki->j", 2, (const em_tensor *[]){a, b2}), dt, 8));
        em_tensor *out = em_empty(SHAPE(1), dt);
        CHECK(em_tensordot_dims_out(out, a, b, 2, (const int[]){1, 2}, (const int[]){0, 1}) == EM_OK);
        CHECK(check_against(out, ref_einsum("ijk,jkl->il", 2, (const em_tensor *[]){a, b}), dt, 12));
        REL(a, b, at, r1, r2, r3, b2, r4, out);
    }
    /* a contracted size-1 dim broadcasts (summing the other side), 0-d operands */
    em_tensor *a = trand(EM_F64, SHAPE(2, 3), -1, 1), *b = trand(EM_F64, SHAPE(1, 3), -1, 1);
    em_tensor *r = em_tensordot_dims(a, b, 2, (const int[]){0, 1}, (const int[]){0, 1});
    CHECK(check_against(r, ref_einsum("ij,kj->", 2, (const em_tensor *[]){a, b}), EM_F64, 6));
    em_tensor *s = em_tensor_scalar(2, EM_F64), *t = em_tensor_scalar(3, EM_F64), *st = em_tensordot(s, t, 0);
    CHECK(st && em_ndim(st) == 0 && tval(st, 0) == 6);
    CHECK_ERR(em_tensordot(s, t, 1), EM_ERR_INDEX);
    /* errors */
    em_tensor *c = em_zeros(SHAPE(3, 4), EM_F64), *f = em_zeros(SHAPE(3, 4), EM_F32), *o = em_empty(SHAPE(1), EM_F32);
    CHECK_ERR(em_tensordot_dims(a, c, 1, (const int[]){1}, (const int[]){1}), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 in dim 1"));
    CHECK_ERR(em_tensordot(a, c, 3), EM_ERR_INDEX);
    CHECK_ERR(em_tensordot(a, c, -1), EM_ERR_RUNTIME);
    CHECK_ERR(em_tensordot(a, f, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_tensordot_dims(a, c, 2, (const int[]){0, 0}, (const int[]){0, 1}), EM_ERR_SHAPE);
    CHECK_ERR(em_tensordot_dims(a, c, 1, (const int[]){5}, (const int[]){0}), EM_ERR_INDEX);
    CHECK_ERR(em_tensordot_dims_out(o, a, c, 1, (const int[]){1}, (const int[]){0}), EM_ERR_DTYPE);
    REL(a, b, r, s, t, st, c, f, o);
}

/* ---- outer, kron, trace ----------------------------------------------------------------- */
TEST(outer_and_ger)
{
    COVER(EM_OP_outer);
    const em_dtype dts[] = {EM_F32, EM_F16, EM_I64, EM_BOOL, EM_U8};
    for (int di = 0; di < 5; di++) {
        em_dtype dt = dts[di];
        em_tensor *a = tin(dt, SHAPE(3)), *b0 = tin(dt, SHAPE(4)), *b = tnoncontig(b0), *r = em_outer(a, b), *g = em_ger(a, b);
        CHECK(check_against(r, ref_einsum("i,j->ij", 2, (const em_tensor *[]){a, b0}), dt, 1));
        CHECK(check_against(g, ref_einsum("i,j->ij", 2, (const em_tensor *[]){a, b0}), dt, 1));
        REL(a, b0, b, r, g);
    }
    em_tensor *a = trand(EM_F32, SHAPE(3), -1, 1), *b = trand(EM_I32, SHAPE(2), -3, 3), *o = em_empty(SHAPE(0), EM_F64);
    CHECK(em_outer_out(o, a, b) == EM_OK && em_dtype_of(o) == EM_F64);
    ref want = ref_einsum("i,j->ij", 2, (const em_tensor *[]){a, b});
    CHECK(tshape_is(o, want.ndim, want.shape) && tclose(o, want.v, 1e-6, 1e-6));
    free(want.v);
    em_tensor *oi = em_empty(SHAPE(3, 2), EM_I64), *m = em_zeros(SHAPE(2, 2), EM_F32), *e = em_empty(SHAPE(0), EM_F32);
    CHECK_ERR(em_outer_out(oi, a, b), EM_ERR_DTYPE);
    CHECK_ERR(em_outer(m, a), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "outer: Expected 1-D argument self, but got 2-D"));
    em_tensor *re = em_outer(e, a);
    CHECK(re && tshape_is(re, SHAPE(0, 3)));
    REL(a, b, o, oi, m, e, re);
}

/* kron against its definition on padded shapes */
static ref ref_kron(const em_tensor *a, const em_tensor *b)
{
    ref r = {0};
    int na = em_ndim(a), nb = em_ndim(b), n = na > nb ? na : nb;
    int64_t sa[EM_MAX_DIMS], sb[EM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        sa[i] = i - (n - na) >= 0 ? em_sizes(a)[i - (n - na)] : 1;
        sb[i] = i - (n - nb) >= 0 ? em_sizes(b)[i - (n - nb)] : 1;
        r.shape[i] = sa[i] * sb[i];
    }
    r.ndim = n;
    int64_t total = 1;
    for (int i = 0; i < n; i++) total *= r.shape[i];
    double *x = tvals(a), *y = tvals(b);
    r.v = calloc((size_t)total + 1, sizeof(double));
    for (int64_t o = 0; o < total; o++) {
        int64_t rem = o, ia = 0, ib = 0, idx[EM_MAX_DIMS];
        for (int i = n - 1; i >= 0; i--) idx[i] = rem % r.shape[i], rem /= r.shape[i];
        for (int i = 0; i < n; i++) ia = ia * sa[i] + idx[i] / sb[i], ib = ib * sb[i] + idx[i] % sb[i];
        r.v[o] = x[ia] * y[ib];
    }
    free(x), free(y);
    return r;
}

TEST(kron)
{
    COVER(EM_OP_kron);
    static const mcase cases[] = {{2, 2, {2, 3}, {4, 2}}, {2, 3, {2, 3}, {4, 1, 5}}, {1, 2, {3}, {2, 2}},
                                  {0, 2, {0}, {2, 3}},    {0, 0, {0}, {0}},          {2, 2, {2, 0}, {3, 3}}};
    const em_dtype dts[] = {EM_F64, EM_I32, EM_BOOL, EM_F16};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int di = 0; di < 4; di++) {
            em_dtype dt = dts[di];
            em_tensor *a0 = tin(dt, cases[c].na, cases[c].a), *a = relayout(a0, LAY_STEP), *b = tin(dt, cases[c].nb, cases[c].b);
            em_tensor *r = em_kron(a, b), *o = em_empty(SHAPE(1), dt), *ot0 = NULL, *ot = NULL;
            CHECK_MSG(check_against(r, ref_kron(a0, b), dt, 1), "kron case %zu %s", c, em_dtype_name(dt));
            CHECK(em_kron_out(o, a, b) == EM_OK);
            CHECK(check_against(o, ref_kron(a0, b), dt, 1));
            if (em_ndim(r) == 2) { /* an out that cannot take the interleaved view */
                ot0 = em_empty(SHAPE(em_sizes(r)[1], em_sizes(r)[0]), dt), ot = em_t(ot0);
                CHECK(em_kron_out(ot, a, b) == EM_OK);
                CHECK(check_against(ot, ref_kron(a0, b), dt, 1));
            }
            REL(a0, a, b, r, o, ot0, ot);
        }
    em_tensor *i = trand(EM_I32, SHAPE(2, 3), -3, 3), *h = trand(EM_F16, SHAPE(3), -1, 1), *r = em_kron(i, h);
    CHECK(check_against(r, ref_kron(i, h), EM_F16, 1));
    em_tensor *oi = em_empty(SHAPE(1), EM_I32);
    CHECK_ERR(em_kron_out(oi, i, h), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "result type Half can't be cast to the desired output type Int"));
    REL(i, h, r, oi);
}

TEST(trace)
{
    const em_dtype dts[] = {EM_F32, EM_F64, EM_U8, EM_I8, EM_I16, EM_I32, EM_I64};
    static const int64_t shapes[][2] = {{4, 4}, {3, 5}, {5, 2}, {0, 0}, {0, 3}};
    for (int di = 0; di < 7; di++)
        for (int s = 0; s < 5; s++)
            for (int lay = 0; lay < LAY_COUNT; lay++) {
                em_dtype dt = dts[di];
                em_tensor *a0 = tin(dt, 2, shapes[s]), *a = relayout(a0, lay), *r = em_trace(a);
                ref want = {.ndim = 0, .v = calloc(1, sizeof(double))};
                for (int64_t k = 0; k < shapes[s][0] && k < shapes[s][1]; k++) want.v[0] += tval(a0, k * shapes[s][1] + k);
                CHECK(check_against(r, want, em_dtype_is_float(dt) ? dt : EM_I64, 4));
                REL(a0, a, r);
            }
    em_tensor *v = em_zeros(SHAPE(3), EM_F32), *b = em_zeros(SHAPE(2, 2), EM_BOOL), *h = em_zeros(SHAPE(2, 2), EM_F16);
    CHECK_ERR(em_trace(v), EM_ERR_SHAPE);
    CHECK(!strcmp(em_last_error(), "trace: expected a matrix, but got tensor with dim 1"));
    CHECK_ERR(em_trace(b), EM_ERR_DTYPE);
    CHECK(!strcmp(em_last_error(), "\"trace\" not implemented for 'Bool'"));
    CHECK_ERR(em_trace(h), EM_ERR_DTYPE);
    REL(v, b, h);
    COVER(EM_OP_trace);
}
