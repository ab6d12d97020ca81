/* Sort family: sort, argsort, msort, topk, kthvalue, unique (flat and along a
 * dim), unique_consecutive, searchsorted, bucketize, histc, histogram and
 * bincount, each against a naive reference computed here in double. */
#include "test.h"

static const em_dtype ALL[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64, EM_F16, EM_F32, EM_F64, EM_BOOL, EM_BF16};
#define NALL ((int)(sizeof ALL / sizeof *ALL))

/* PyTorch's order: NaN above every number, -0.0 == 0.0. */
static int cmp_val(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
    return (a > b) - (a < b);
}

/* perm = the stable order of v[0..n) (descending: larger first, ties still
 * by position), by insertion sort. */
static void ref_argsort(const double *v, int64_t n, bool desc, int64_t *perm)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        for (; j > 0; j--) {
            int c = cmp_val(v[i], v[perm[j - 1]]);
            if (!(desc ? c > 0 : c < 0)) break;
            perm[j] = perm[j - 1];
        }
        perm[j] = i;
    }
}

/* Random values with many ties, and NaN and -0.0 for floating dtypes. */
static em_tensor *rand_ties(em_dtype dt, int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        double r = trandu(), x = floor(trandu() * 9) - 4;
        if (dt == EM_BOOL) x = r < 0.5;
        else if (dt == EM_U8) x += 4 + (r < 0.2 ? 240 : 0);
        else if (dt == EM_I64 && r < 0.2) x *= 1e15;
        else if (em_dtype_is_float(dt) && r < 0.1) x = NAN;
        else if (em_dtype_is_float(dt) && r < 0.2) x = x == 0 ? -0.0 : x + 0.5;
        v[i] = x;
    }
    em_tensor *t = tt(dt, ndim, sizes, v);
    free(v);
    return t;
}

/* Row r of t along dim (row-major over the other dims), as n doubles. */
static void get_row(const double *all, const em_tensor *t, int dim, int64_t r, double *row)
{
    int64_t n = em_ndim(t) ? em_sizes(t)[dim] : 1, inner = 1;
    for (int d = dim + 1; d < em_ndim(t); d++) inner *= em_sizes(t)[d];
    int64_t base = (r / inner) * n * inner + r % inner;
    for (int64_t j = 0; j < n; j++) row[j] = all[base + j * inner];
}

static bool same_val(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* values/indices (m along dim) are the first m of each row's stable order. */
static bool check_rows(const em_tensor *t, int dim, bool desc, int64_t m, const em_tensor *values,
                       const em_tensor *indices)
{
    int64_t n = em_ndim(t) ? em_sizes(t)[dim] : 1, rows = n ? em_numel(t) / n : 0;
    double *all = tvals(t), *got_v = values ? tvals(values) : NULL, *got_i = tvals(indices);
    double *row = malloc((n + 1) * sizeof *row), *vrow = malloc((m + 1) * sizeof *vrow), *irow = malloc((m + 1) * sizeof *irow);
    int64_t *perm = malloc((n + 1) * sizeof *perm);
    bool ok = true;
    for (int64_t r = 0; r < rows && ok; r++) {
        get_row(all, t, dim, r, row);
        ref_argsort(row, n, desc, perm);
        if (values) get_row(got_v, values, dim, r, vrow);
        get_row(got_i, indices, dim, r, irow);
        for (int64_t j = 0; j < m && ok; j++) {
            ok = irow[j] == perm[j] && (!values || same_val(vrow[j], row[perm[j]]));
            if (!ok) fprintf(stderr, "  row %lld pos %lld: got (%g, %g), want (%g, %lld)\n", (long long)r, (long long)j,
                             values ? vrow[j] : 0, irow[j], row[perm[j]], (long long)perm[j]);
        }
    }
    free(all), free(got_v), free(got_i), free(row), free(vrow), free(irow), free(perm);
    return ok;
}

/* The layouts each test runs on: contiguous, non-contiguous, transposed. */
static em_tensor *layout(em_tensor *t, int which)
{
    if (which == 0 || em_ndim(t) == 0) return em_retain(t);
    if (which == 1) return tnoncontig(t);
    em_tensor *c = em_transpose(t, 0, em_ndim(t) - 1), *cc = em_contiguous(c);
    em_tensor *back = em_transpose(cc, 0, em_ndim(t) - 1); /* same values, column-major */
    em_release(c), em_release(cc);
    return back;
}

static const int64_t SHAPES[][4] = {{1, 9}, {2, 3, 7}, {2, 4, 0}, {0}, {3, 2, 3, 5}, {1, 300}};

TEST(sort_matches_reference)
{
    COVER(EM_OP_argsort);
    for (int di = 0; di < NALL; di++)
        for (size_t si = 0; si < sizeof SHAPES / sizeof *SHAPES; si++)
            for (int lay = 0; lay < 3; lay++) {
                int ndim = (int)SHAPES[si][0];
                em_tensor *base = rand_ties(ALL[di], ndim, SHAPES[si] + 1), *t = layout(base, lay);
                CHECK(t);
                for (int dim = -1; dim < (ndim ? ndim : 1); dim++)
                    for (int desc = 0; desc < 2; desc++) {
                        em_tensor *v, *i;
                        CHECK(em_sort(t, dim, desc, false, &v, &i) == EM_OK);
                        int d = dim < 0 ? (ndim ? ndim - 1 : 0) : dim;
                        CHECK(em_dtype_of(v) == ALL[di] && em_dtype_of(i) == EM_I64);
                        CHECK(tshape_is(v, ndim, SHAPES[si] + 1) && tshape_is(i, ndim, SHAPES[si] + 1));
                        CHECK_MSG(check_rows(t, d, desc, ndim ? SHAPES[si][1 + d] : 1, v, i),
                                  "sort %s shape %zu layout %d dim %d desc %d", em_dtype_name(ALL[di]), si, lay, dim, desc);
                        em_tensor *a = em_argsort(t, dim, desc, true);
                        CHECK(a && em_equal(a, i));
                        em_release(v), em_release(i), em_release(a);
                    }
                em_release(base), em_release(t);
            }
    COVER(EM_OP_sort);
}

TEST(sort_large_rows_parallel_and_radix)
{
    /* rows long enough for the radix path, enough of them for threads */
    const em_dtype dts[] = {EM_F32, EM_F64, EM_I64, EM_I32, EM_I16, EM_BF16};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        em_tensor *t = rand_ties(dts[k], SHAPE(40, 700)), *tc = tnoncontig(t);
        for (int desc = 0; desc < 2; desc++) {
            em_tensor *v, *i;
            CHECK(em_sort(tc, 1, desc, true, &v, &i) == EM_OK);
            CHECK_MSG(check_rows(t, 1, desc, 700, v, i), "%s desc %d", em_dtype_name(dts[k]), desc);
            em_release(v), em_release(i);
            CHECK(em_sort(t, 0, desc, true, &v, &i) == EM_OK);
            CHECK(check_rows(t, 0, desc, 40, v, i));
            em_release(v), em_release(i);
        }
        em_release(t), em_release(tc);
    }
    /* distinct float32 values over the full range, and -0.0 / NaN payloads kept */
    double vals[] = {3.5, -0.0, NAN, -INFINITY, 0.0, 1e-40, -1e-40, INFINITY, -NAN, 2e38, -2e38, 0.0};
    em_tensor *t = tt(EM_F32, SHAPE(12), vals), *v, *i;
    CHECK(em_sort(t, 0, false, true, &v, &i) == EM_OK);
    CHECK(check_rows(t, 0, false, 12, v, i));
    CHECK(signbit(tval(v, 3)) && !signbit(tval(v, 4))); /* -0.0 then 0.0: their input order */
    em_release(t), em_release(v), em_release(i);
}

TEST(sort_out_and_msort)
{
    COVER(EM_OP_msort);
    double vals[] = {3, 1, 2, 0, 5, 4};
    em_tensor *t = tt(EM_F32, SHAPE(2, 3), vals);
    em_tensor *v = em_zeros(SHAPE(1), EM_F32), *i = em_zeros(SHAPE(7), EM_I64);
    CHECK(em_sort_out(v, i, t, 1, true, false) == EM_OK);
    CHECK(tshape_is(v, 2, (int64_t[]){2, 3}));
    CHECK(check_rows(t, 1, true, 3, v, i));
    /* wrong dtypes: nothing written */
    em_tensor *vd = em_zeros(SHAPE(1), EM_F64), *i32 = em_zeros(SHAPE(1), EM_I32);
    CHECK_ERR(em_sort_out(vd, i, t, 1, false, false), EM_ERR_DTYPE);
    CHECK_ERR(em_sort_out(v, i32, t, 1, false, false), EM_ERR_DTYPE);
    CHECK(tshape_is(vd, 1, (int64_t[]){1}));
    /* values may be the input itself */
    em_tensor *self = em_clone(t);
    CHECK(em_sort_out(self, i, self, 0, false, false) == EM_OK);
    double want[] = {0, 1, 2, 3, 5, 4};
    CHECK(tclose(self, want, 0, 0));
    /* msort: along dim 0; 0-d */
    em_tensor *m = em_msort(t), *m0 = em_msort(vd);
    CHECK(m && tclose(m, want, 0, 0));
    em_tensor *s = em_tensor_scalar(7, EM_I8), *ms = em_msort(s);
    CHECK(ms && em_ndim(ms) == 0 && tval(ms, 0) == 7 && em_dtype_of(ms) == EM_I8);
    CHECK(em_msort_out(vd, vd) == EM_OK);
    CHECK_ERR(em_msort_out(i32, t), EM_ERR_DTYPE);
    /* errors */
    em_tensor *rv = (em_tensor *)1, *ri = (em_tensor *)1;
    CHECK_ERR(em_sort(t, 2, false, false, &rv, &ri), EM_ERR_INDEX);
    CHECK(rv == NULL && ri == NULL);
    CHECK_ERR(em_sort(s, 1, false, false, &rv, &ri), EM_ERR_INDEX);
    CHECK_ERR(em_argsort(t, -3, false, false), EM_ERR_INDEX);
    em_tensor *all[] = {t, v, i, vd, i32, self, m, m0, s, ms};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

TEST(sort_zero_dim)
{
    em_tensor *s = em_tensor_scalar(NAN, EM_F64), *v, *i;
    CHECK(em_sort(s, 0, true, false, &v, &i) == EM_OK);
    CHECK(em_ndim(v) == 0 && em_ndim(i) == 0 && isnan(tval(v, 0)) && tval(i, 0) == 0);
    em_release(v), em_release(i);
    CHECK(em_sort(s, -1, false, false, &v, &i) == EM_OK);
    em_release(v), em_release(i), em_release(s);
}

/* ---- topk / kthvalue ---------------------------------------------------- */
static const em_dtype SELECT_DTYPES[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64, EM_F32, EM_F64, EM_BF16};

TEST(topk_matches_reference)
{
    const int64_t shapes[][4] = {{1, 9}, {2, 4, 7}, {3, 2, 3, 5}, {1, 600}, {2, 0, 3}};
    for (size_t di = 0; di < sizeof SELECT_DTYPES / sizeof *SELECT_DTYPES; di++)
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
            int ndim = (int)shapes[si][0];
            em_tensor *base = rand_ties(SELECT_DTYPES[di], ndim, shapes[si] + 1);
            for (int lay = 0; lay < 3; lay++) {
                em_tensor *t = layout(base, lay);
                for (int dim = 0; dim < ndim; dim++) {
                    int64_t n = shapes[si][1 + dim];
                    const int64_t ks[] = {0, 1, n / 3, n / 2 + 1, n};
                    for (int ki = 0; ki < 5; ki++)
                        for (int largest = 0; largest < 2; largest++) {
                            int64_t k = ks[ki] > n ? n : ks[ki];
                            em_tensor *v, *i;
                            CHECK(em_topk(t, k, dim, largest, true, &v, &i) == EM_OK);
                            CHECK(em_size(v, dim) == k && em_size(i, dim) == k);
                            CHECK_MSG(check_rows(t, dim, largest, k, v, i), "topk %s shape %zu dim %d k %lld largest %d",
                                      em_dtype_name(SELECT_DTYPES[di]), si, dim, (long long)k, largest);
                            em_release(v), em_release(i);
                        }
                }
                em_release(t);
            }
            em_release(base);
        }
    COVER(EM_OP_topk);
}

/* values/indices (keepdim or not) hold the k-th element of each row's stable order. */
static bool check_kth(const em_tensor *t, int dim, int64_t k, const em_tensor *values, const em_tensor *indices)
{
    int64_t n = em_sizes(t)[dim], rows = em_numel(t) / n;
    double *all = tvals(t), *row = malloc(n * sizeof *row);
    int64_t *perm = malloc(n * sizeof *perm);
    bool ok = em_numel(values) == rows && em_numel(indices) == rows;
    for (int64_t r = 0; r < rows && ok; r++) {
        get_row(all, t, dim, r, row);
        ref_argsort(row, n, false, perm);
        ok = tval(indices, r) == perm[k - 1] && same_val(tval(values, r), row[perm[k - 1]]);
    }
    free(all), free(row), free(perm);
    return ok;
}

TEST(kthvalue_matches_reference)
{
    for (size_t di = 0; di < sizeof SELECT_DTYPES / sizeof *SELECT_DTYPES; di++)
        for (int lay = 0; lay < 3; lay++) {
            em_tensor *base = rand_ties(SELECT_DTYPES[di], SHAPE(3, 5, 40)), *t = layout(base, lay);
            for (int dim = 0; dim < 3; dim++)
                for (int64_t k = 1; k <= em_sizes(t)[dim]; k += 1 + em_sizes(t)[dim] / 4)
                    for (int keep = 0; keep < 2; keep++) {
                        em_tensor *v, *i;
                        CHECK(em_kthvalue(t, k, dim, keep, &v, &i) == EM_OK);
                        CHECK(em_ndim(v) == 3 - !keep && em_ndim(i) == 3 - !keep);
                        CHECK(!keep || (em_size(v, dim) == 1 && em_size(i, dim) == 1));
                        CHECK_MSG(check_kth(t, dim, k, v, i), "kthvalue %s dim %d k %lld",
                                  em_dtype_name(SELECT_DTYPES[di]), dim, (long long)k);
                        em_release(v), em_release(i);
                    }
            em_release(base), em_release(t);
        }
    /* a long row: the quickselect path; all-equal rows */
    em_tensor *t = rand_ties(EM_F32, SHAPE(2, 5000)), *z = em_zeros(SHAPE(3, 100), EM_I32);
    const int64_t ks[] = {1, 17, 2500, 4999, 5000};
    for (int k = 0; k < 5; k++) {
        em_tensor *v, *i;
        CHECK(em_kthvalue(t, ks[k], 1, false, &v, &i) == EM_OK);
        CHECK(check_kth(t, 1, ks[k], v, i));
        em_release(v), em_release(i);
        CHECK(em_kthvalue(z, ks[k] % 100 + 1, 1, true, &v, &i) == EM_OK);
        CHECK(check_kth(z, 1, ks[k] % 100 + 1, v, i));
        em_release(v), em_release(i);
    }
    em_release(t), em_release(z);
    COVER(EM_OP_kthvalue);
}

TEST(topk_kthvalue_edges_and_errors)
{
    double vals[] = {1, NAN, 3, NAN};
    em_tensor *t = tt(EM_F32, SHAPE(4), vals), *v, *i;
    CHECK(em_topk(t, 3, 0, true, true, &v, &i) == EM_OK); /* NaN is the largest */
    CHECK(isnan(tval(v, 0)) && isnan(tval(v, 1)) && tval(v, 2) == 3 && tval(i, 0) == 1 && tval(i, 1) == 3);
    em_release(v), em_release(i);
    CHECK(em_kthvalue(t, 3, 0, false, &v, &i) == EM_OK);
    CHECK(isnan(tval(v, 0)) && tval(i, 0) == 1 && em_ndim(v) == 0);
    em_release(v), em_release(i);
    /* 0-d: k = 0 and 1 both give the element (as PyTorch) */
    em_tensor *s = em_tensor_scalar(5, EM_F32);
    for (int k = 0; k < 2; k++) {
        CHECK(em_topk(s, k, 0, true, true, &v, &i) == EM_OK);
        CHECK(em_ndim(v) == 0 && tval(v, 0) == 5 && tval(i, 0) == 0);
        em_release(v), em_release(i);
    }
    CHECK(em_kthvalue(s, 1, -1, true, &v, &i) == EM_OK);
    CHECK(em_ndim(v) == 0 && tval(v, 0) == 5);
    em_release(v), em_release(i);
    /* out= forms */
    em_tensor *ov = em_empty(SHAPE(0), EM_F32), *oi = em_empty(SHAPE(0), EM_I64);
    CHECK(em_topk_out(ov, oi, t, 2, 0, false, true) == EM_OK);
    CHECK(tval(ov, 0) == 1 && tval(ov, 1) == 3 && tval(oi, 1) == 2);
    CHECK(em_kthvalue_out(ov, oi, t, 2, 0, true) == EM_OK);
    CHECK(tshape_is(ov, 1, (int64_t[]){1}) && tval(ov, 0) == 3);
    em_tensor *od = em_empty(SHAPE(0), EM_F64), *o32 = em_empty(SHAPE(0), EM_I32);
    CHECK_ERR(em_topk_out(od, oi, t, 2, 0, true, true), EM_ERR_DTYPE);
    CHECK_ERR(em_kthvalue_out(ov, o32, t, 2, 0, true), EM_ERR_DTYPE);
    /* errors */
    CHECK_ERR(em_topk(t, 5, 0, true, true, &v, &i), EM_ERR_RUNTIME);
    CHECK(v == NULL && i == NULL);
    CHECK_ERR(em_topk(t, -1, 0, true, true, &v, &i), EM_ERR_RUNTIME);
    CHECK_ERR(em_topk(s, 2, 0, true, true, &v, &i), EM_ERR_RUNTIME);
    CHECK_ERR(em_topk(t, 1, 1, true, true, &v, &i), EM_ERR_INDEX);
    CHECK_ERR(em_kthvalue(t, 0, 0, false, &v, &i), EM_ERR_RUNTIME);
    CHECK_ERR(em_kthvalue(t, 5, 0, false, &v, &i), EM_ERR_RUNTIME);
    CHECK_ERR(em_kthvalue(s, 2, 0, false, &v, &i), EM_ERR_RUNTIME);
    em_tensor *e = em_zeros(SHAPE(0), EM_F32), *b = em_zeros(SHAPE(3), EM_BOOL), *h = em_zeros(SHAPE(3), EM_F16);
    CHECK_ERR(em_kthvalue(e, 1, 0, false, &v, &i), EM_ERR_INDEX);
    CHECK_ERR(em_topk(b, 1, 0, true, true, &v, &i), EM_ERR_DTYPE);
    CHECK_ERR(em_topk(h, 1, 0, true, true, &v, &i), EM_ERR_DTYPE);
    CHECK_ERR(em_kthvalue(b, 1, 0, false, &v, &i), EM_ERR_DTYPE);
    CHECK_ERR(em_kthvalue(h, 1, 0, false, &v, &i), EM_ERR_DTYPE);
    em_tensor *all[] = {t, s, ov, oi, od, o32, e, b, h};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

/* ---- unique ---------------------------------------------------------------- */
/* t as n slices of m doubles along dim (dim < 0: every element a slice). */
typedef struct ref_slices {
    int64_t n, m;
    double *v; /* n x m */
} ref_slices;

static ref_slices get_slices(const em_tensor *t, int dim)
{
    ref_slices s = {.n = em_numel(t), .m = 1};
    double *all = tvals(t);
    if (dim < 0) {
        s.v = all;
        return s;
    }
    int64_t post = 1;
    for (int d = dim + 1; d < em_ndim(t); d++) post *= em_sizes(t)[d];
    s.n = em_sizes(t)[dim];
    s.m = s.n ? em_numel(t) / s.n : 0;
    s.v = malloc((s.n * s.m + 1) * sizeof *s.v);
    for (int64_t i = 0; i < s.n; i++)
        for (int64_t j = 0; j < s.m; j++) s.v[i * s.m + j] = all[(j / post * s.n + i) * post + j % post];
    free(all);
    return s;
}

static int cmp_slice(const ref_slices *s, int64_t a, int64_t b)
{
    for (int64_t j = 0; j < s->m; j++) {
        int c = cmp_val(s->v[a * s->m + j], s->v[b * s->m + j]);
        if (c) return c;
    }
    return 0;
}

static bool equal_slice(const ref_slices *s, int64_t a, int64_t b)
{
    for (int64_t j = 0; j < s->m; j++)
        if (!(s->v[a * s->m + j] == s->v[b * s->m + j])) return false; /* NaN != NaN */
    return true;
}

/* Checks unique's three results against sorting (or not) and grouping slices. */
static bool check_unique(const em_tensor *t, int dim, bool sorted, const em_tensor *values, const em_tensor *inverse,
                         const em_tensor *counts)
{
    ref_slices s = get_slices(t, dim), got = get_slices(values, dim);
    int64_t *perm = malloc((s.n + 1) * sizeof *perm), g = -1;
    for (int64_t i = 0; i < s.n; i++) { /* stable insertion sort of slices */
        int64_t j = i;
        for (; sorted && j > 0 && cmp_slice(&s, i, perm[j - 1]) < 0; j--) perm[j] = perm[j - 1];
        perm[j] = i;
    }
    double *inv = inverse ? tvals(inverse) : NULL, *cnt = counts ? tvals(counts) : NULL;
    bool ok = got.m == s.m || s.n == 0;
    int64_t run = 0;
    for (int64_t pos = 0; pos < s.n && ok; pos++) {
        int64_t i = perm[pos];
        if (pos == 0 || !equal_slice(&s, perm[pos - 1], i)) {
            if (g >= 0 && cnt) ok = ok && cnt[g] == run;
            g++, run = 0;
            ok = ok && g < got.n;
            for (int64_t j = 0; j < s.m && ok; j++) ok = same_val(got.v[g * s.m + j], s.v[i * s.m + j]);
        }
        run++;
        ok = ok && (!inv || inv[i] == g);
    }
    if (cnt && g >= 0) ok = ok && cnt[g] == run;
    ok = ok && got.n == g + 1 && (!counts || em_numel(counts) == g + 1);
    free(s.v), free(got.v), free(perm), free(inv), free(cnt);
    return ok;
}

static const em_dtype UNIQUE_DTYPES[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64, EM_F32, EM_F64, EM_BOOL, EM_BF16};

TEST(unique_matches_reference)
{
    const int64_t shapes[][4] = {{1, 30}, {2, 6, 5}, {3, 4, 2, 3}, {2, 0, 3}, {0}, {1, 600}};
    for (size_t di = 0; di < sizeof UNIQUE_DTYPES / sizeof *UNIQUE_DTYPES; di++)
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
            for (int lay = 0; lay < 2; lay++) {
                int ndim = (int)shapes[si][0];
                em_tensor *base = rand_ties(UNIQUE_DTYPES[di], ndim, shapes[si] + 1), *t = layout(base, lay);
                for (int consec = 0; consec < 2; consec++)
                    for (int dim = -1; dim < ndim; dim++) {
                        if (dim >= 0 && em_numel(t) == 0 && em_sizes(t)[dim] != 0) continue;
                        em_tensor *v, *inv, *cnt;
                        em_status st = consec ? (dim < 0 ? em_unique_consecutive(t, &v, &inv, &cnt)
                                                         : em_unique_consecutive_dim(t, dim, &v, &inv, &cnt))
                                              : (dim < 0 ? em_unique(t, true, &v, &inv, &cnt)
                                                         : em_unique_dim(t, dim, true, &v, &inv, &cnt));
                        CHECK(st == EM_OK);
                        CHECK(em_dtype_of(v) == UNIQUE_DTYPES[di] && em_dtype_of(inv) == EM_I64 && em_dtype_of(cnt) == EM_I64);
                        CHECK(dim >= 0 ? tshape_is(inv, 1, &em_sizes(t)[dim]) : tshape_is(inv, ndim, em_sizes(t)));
                        CHECK(em_ndim(v) == (dim < 0 ? 1 : ndim) && em_is_contiguous(v));
                        CHECK_MSG(check_unique(t, dim, !consec, v, inv, cnt), "unique %s shape %zu dim %d consecutive %d",
                                  em_dtype_name(UNIQUE_DTYPES[di]), si, dim, consec);
                        em_release(v), em_release(inv), em_release(cnt);
                    }
                em_release(base), em_release(t);
            }
    COVER(EM_OP_unique, EM_OP_unique_consecutive);
}

TEST(unique_optional_results_and_errors)
{
    double vals[] = {3, NAN, 1, 3, NAN, -0.0, 0};
    em_tensor *t = tt(EM_F32, SHAPE(7), vals), *v, *inv = NULL, *cnt = NULL;
    CHECK(em_unique(t, false, &v, NULL, NULL) == EM_OK);
    double want[] = {0, 1, 3, NAN, NAN}; /* -0.0 == 0.0; each NaN apart */
    CHECK(tshape_is(v, 1, (int64_t[]){5}) && tclose(v, want, 0, 0));
    em_release(v);
    CHECK(em_unique(t, true, &v, NULL, &cnt) == EM_OK);
    double want_cnt[] = {2, 1, 2, 1, 1};
    CHECK(tclose(cnt, want_cnt, 0, 0));
    em_release(v), em_release(cnt);
    /* 0-d: values (1,), inverse 0-d */
    em_tensor *s = em_tensor_scalar(4, EM_I16);
    CHECK(em_unique(s, true, &v, &inv, &cnt) == EM_OK);
    CHECK(tshape_is(v, 1, (int64_t[]){1}) && em_ndim(inv) == 0 && tval(inv, 0) == 0 && tval(cnt, 0) == 1);
    em_release(v), em_release(inv), em_release(cnt);
    CHECK(em_unique_consecutive(s, &v, &inv, NULL) == EM_OK);
    CHECK(em_ndim(inv) == 0 && tval(v, 0) == 4);
    em_release(v), em_release(inv);
    /* unique rows, and a long run that gets compacted */
    double rows[] = {3, 1, 1, 3, 3, 1};
    em_tensor *r = tt(EM_I64, SHAPE(3, 2), rows), *z = em_zeros(SHAPE(1000), EM_U8);
    CHECK(em_unique_dim(r, 0, true, &v, &inv, &cnt) == EM_OK);
    double want_rows[] = {1, 3, 3, 1}, want_inv[] = {1, 0, 1};
    CHECK(tshape_is(v, 2, (int64_t[]){2, 2}) && tclose(v, want_rows, 0, 0) && tclose(inv, want_inv, 0, 0));
    em_release(v), em_release(inv), em_release(cnt);
    CHECK(em_unique(z, true, &v, NULL, &cnt) == EM_OK);
    CHECK(em_numel(v) == 1 && tval(cnt, 0) == 1000);
    em_release(v), em_release(cnt);
    /* errors: results NULL after */
    em_tensor *h = em_zeros(SHAPE(3), EM_F16), *e = em_zeros(SHAPE(2, 0), EM_F32);
    v = inv = cnt = (em_tensor *)1;
    CHECK_ERR(em_unique(h, true, &v, &inv, &cnt), EM_ERR_DTYPE);
    CHECK(!v && !inv && !cnt);
    CHECK_ERR(em_unique_consecutive_dim(h, 0, &v, NULL, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_unique_dim(s, 0, true, &v, NULL, NULL), EM_ERR_INDEX);
    CHECK_ERR(em_unique_consecutive_dim(s, 0, &v, NULL, NULL), EM_ERR_INDEX);
    CHECK_ERR(em_unique_dim(r, 2, true, &v, NULL, NULL), EM_ERR_INDEX);
    CHECK_ERR(em_unique_dim(e, 0, true, &v, NULL, NULL), EM_ERR_RUNTIME);
    CHECK(em_unique_dim(e, 1, true, &v, &inv, &cnt) == EM_OK);
    CHECK(tshape_is(v, 2, (int64_t[]){2, 0}) && em_numel(inv) == 0 && em_numel(cnt) == 0);
    em_release(v), em_release(inv), em_release(cnt);
    em_release(t), em_release(s), em_release(r), em_release(z), em_release(h), em_release(e);
}

/* ---- searchsorted / bucketize -------------------------------------------- */
/* PyTorch's binary search (the spec, NaN included) on one row, in double. */
static int64_t ref_search(const double *row, const double *sorter, int64_t len, double v, bool right)
{
    int64_t lo = 0, hi = len;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        double e = row[sorter ? (int64_t)sorter[mid] : mid];
        if (right ? !(e > v) : !(e >= v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool check_search(const em_tensor *seq, const em_tensor *values, const em_tensor *sorter, bool right,
                         const em_tensor *got)
{
    int64_t len = em_sizes(seq)[em_ndim(seq) - 1], n = em_numel(values);
    int64_t per_row = em_ndim(seq) > 1 ? em_sizes(values)[em_ndim(values) - 1] : 0;
    double *s = tvals(seq), *v = tvals(values), *g = tvals(got), *srt = sorter ? tvals(sorter) : NULL;
    bool ok = em_numel(got) == n;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t base = per_row ? i / per_row * len : 0;
        int64_t want = ref_search(s + base, srt ? srt + base : NULL, len, v[i], right);
        ok = g[i] == want;
        if (!ok) fprintf(stderr, "  value %lld (%g): got %g, want %lld\n", (long long)i, v[i], g[i], (long long)want);
    }
    free(s), free(v), free(g), free(srt);
    return ok;
}

/* A sorted copy of t along its last dim. */
static em_tensor *sorted_copy(const em_tensor *t)
{
    em_tensor *v = NULL, *i = NULL;
    em_sort(t, -1, false, true, &v, &i);
    em_release(i);
    return v;
}

TEST(searchsorted_matches_reference)
{
    COVER(EM_OP_bucketize);
    const em_dtype dts[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64, EM_F16, EM_F32, EM_F64, EM_BF16};
    for (size_t a = 0; a < sizeof dts / sizeof *dts; a++)
        for (size_t b = 0; b < sizeof dts / sizeof *dts; b += 2) {
            em_tensor *raw = rand_ties(dts[a], SHAPE(2, 3, 11)), *seq = sorted_copy(raw);
            em_tensor *seq_row = em_select(seq, 0, 1), *seq1 = em_select(seq_row, 0, 2); /* a 1-d row of a bigger base */
            em_release(seq_row);
            em_tensor *vals = rand_ties(dts[b], SHAPE(2, 3, 7)), *vnc = tnoncontig(vals);
            CHECK(seq && seq1 && vnc);
            for (int right = 0; right < 2; right++)
                for (int i32 = 0; i32 < 2; i32++) {
                    em_tensor *r = em_searchsorted(seq, vnc, i32, right, NULL, NULL);
                    CHECK(r && em_dtype_of(r) == (i32 ? EM_I32 : EM_I64) && tshape_is(r, 3, em_sizes(vals)));
                    CHECK_MSG(check_search(seq, vals, NULL, right, r), "%s seq, %s values, right %d",
                              em_dtype_name(dts[a]), em_dtype_name(dts[b]), right);
                    em_release(r);
                    r = em_searchsorted(seq1, vals, i32, false, right ? "right" : "left", NULL);
                    CHECK(r && check_search(seq1, vals, NULL, right, r));
                    em_release(r);
                    r = em_bucketize(vnc, seq1, i32, right);
                    CHECK(r && check_search(seq1, vals, NULL, right, r));
                    em_release(r);
                }
            em_release(raw), em_release(seq), em_release(seq1), em_release(vals), em_release(vnc);
        }
    COVER(EM_OP_searchsorted);
}

TEST(searchsorted_sorter_scalar_empty_and_out)
{
    /* an unsorted sequence with its argsort as sorter: rows of length 300 */
    em_tensor *raw = rand_ties(EM_F64, SHAPE(3, 300)), *srt = em_argsort(raw, -1, false, true);
    em_tensor *vals = rand_ties(EM_F64, SHAPE(3, 50)), *seq = sorted_copy(raw);
    for (int right = 0; right < 2; right++) {
        em_tensor *r = em_searchsorted(raw, vals, false, right, NULL, srt), *want = em_searchsorted(seq, vals, false, right, NULL, NULL);
        CHECK(r && check_search(raw, vals, srt, right, r) && em_equal(r, want));
        em_release(r), em_release(want);
    }
    /* 0-d value, empty sequence, empty values */
    double s3[] = {1, 3, 5};
    em_tensor *s = tt(EM_I32, SHAPE(3), s3), *v0 = em_tensor_scalar(3, EM_I64), *e = em_empty(SHAPE(0), EM_F32);
    em_tensor *r = em_searchsorted(s, v0, false, true, NULL, NULL);
    CHECK(r && em_ndim(r) == 0 && tval(r, 0) == 2);
    em_release(r);
    r = em_searchsorted(e, vals, false, false, NULL, NULL);
    CHECK(r && tshape_is(r, 2, em_sizes(vals)) && tval(r, 0) == 0);
    em_release(r);
    r = em_bucketize(e, s, true, false);
    CHECK(r && em_numel(r) == 0 && em_dtype_of(r) == EM_I32);
    em_release(r);
    /* out= */
    em_tensor *o = em_zeros(SHAPE(1), EM_I64), *o32 = em_zeros(SHAPE(1), EM_I32);
    CHECK(em_searchsorted_out(o, s, v0, false, false, NULL, NULL) == EM_OK);
    CHECK(em_ndim(o) == 0 && tval(o, 0) == 1);
    CHECK(em_searchsorted_out(o32, seq, vals, true, false, NULL, NULL) == EM_OK);
    CHECK(check_search(seq, vals, NULL, false, o32));
    CHECK(em_bucketize_out(o32, vals, s, true, true) == EM_OK);
    CHECK(check_search(s, vals, NULL, true, o32));
    CHECK_ERR(em_searchsorted_out(o32, s, v0, false, false, NULL, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_bucketize_out(o, s, s, true, false), EM_ERR_DTYPE);
    /* errors */
    em_tensor *b = em_zeros(SHAPE(3), EM_BOOL), *s2 = em_zeros(SHAPE(2, 3), EM_F32), *v12 = em_zeros(SHAPE(1, 2), EM_F32);
    em_tensor *srt32 = em_zeros(SHAPE(3), EM_I32), *srt2 = em_zeros(SHAPE(2), EM_I64);
    double bad[] = {0, 3, 1};
    em_tensor *srt_bad = tt(EM_I64, SHAPE(3), bad);
    CHECK_ERR(em_searchsorted(s, v0, false, false, "middle", NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_searchsorted(s, v0, false, true, "left", NULL), EM_ERR_RUNTIME);
    r = em_searchsorted(s, v0, false, false, "right", NULL); /* side wins over right = false */
    CHECK(r && tval(r, 0) == 2);
    em_release(r);
    CHECK_ERR(em_searchsorted(s, v0, false, false, NULL, srt32), EM_ERR_DTYPE);
    CHECK_ERR(em_searchsorted(s, v0, false, false, NULL, srt2), EM_ERR_SHAPE);
    CHECK_ERR(em_searchsorted(s, v0, false, false, NULL, srt_bad), EM_ERR_RUNTIME);
    CHECK_ERR(em_searchsorted(v0, s, false, false, NULL, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_searchsorted(s2, v0, false, false, NULL, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_searchsorted(s2, v12, false, false, NULL, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_searchsorted(s2, s, false, false, NULL, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_searchsorted(b, b, false, false, NULL, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_bucketize(s, s2, false, false), EM_ERR_SHAPE);
    CHECK_ERR(em_bucketize(s, v0, false, false), EM_ERR_SHAPE);
    r = em_bucketize(b, s, false, false); /* bool values promote with the boundaries */
    CHECK(r && tval(r, 0) == 0);
    em_release(r);
    em_tensor *all[] = {raw, srt, vals, seq, s, v0, e, o, o32, b, s2, v12, srt32, srt2, srt_bad};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

/* ---- histc / histogram / bincount ------------------------------------------- */
/* Grid values k/4 - 1 (k = 0..16: on and between edges of 8 bins over
 * [-1, 3]), some outside, some NaN: every bin position is exact arithmetic. */
static em_tensor *grid_data(em_dtype dt, int ndim, const int64_t *sizes, bool nan)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        double r = trandu();
        v[i] = r < 0.05 && nan ? NAN : r < 0.1 ? -3 : r < 0.15 ? 5 : floor(trandu() * 17) / 4 - 1;
    }
    em_tensor *t = tt(dt, ndim, sizes, v);
    free(v);
    return t;
}

/* Counts of t's values in bins equal bins over [lo, hi] (edges exact). */
static double *ref_hist(const em_tensor *t, const em_tensor *w, int64_t bins, double lo, double hi)
{
    double *x = tvals(t), *wv = w ? tvals(w) : NULL, *h = calloc(bins, sizeof *h);
    for (int64_t i = 0, n = em_numel(t); i < n; i++) {
        if (!(x[i] >= lo && x[i] <= hi)) continue;
        int64_t pos = (int64_t)floor((x[i] - lo) * bins / (hi - lo));
        h[pos < bins ? pos : bins - 1] += wv ? wv[i] : 1;
    }
    free(x), free(wv);
    return h;
}

TEST(histc_matches_reference)
{
    const em_dtype dts[] = {EM_F32, EM_F64, EM_BF16};
    for (int d = 0; d < 3; d++) {
        em_tensor *base = grid_data(dts[d], SHAPE(7, 9), true), *t = tnoncontig(base);
        em_tensor *h = em_histc(t, 8, -1, 3);
        double *want = ref_hist(base, NULL, 8, -1, 3);
        CHECK(h && em_dtype_of(h) == dts[d] && tshape_is(h, 1, (int64_t[]){8}) && tclose(h, want, 0, 0));
        em_release(h), free(want);
        /* min == max: the data's range (here [-3, 5], NaN-free) */
        em_tensor *clean = grid_data(dts[d], SHAPE(40), false);
        em_set(clean, (int64_t[]){0}, -3); /* the range must not depend on the random draw */
        em_set(clean, (int64_t[]){1}, 5);
        h = em_histc(clean, 16, 2, 2);
        want = ref_hist(clean, NULL, 16, -3, 5);
        CHECK(h && tclose(h, want, 0, 0));
        em_release(h), free(want);
        em_release(base), em_release(t), em_release(clean);
    }
    /* float rounding on bin edges, as PyTorch 1.13 computes it (values from it) */
    double x[61];
    for (int i = 0; i < 61; i++) {
        float v = (float)i * 0.01f;
        x[i] = v + 0.1f;
    }
    const double want32[] = {9, 9, 8, 9, 8, 9, 9}, want16[] = {9, 8, 9, 8, 9, 9, 9};
    for (int d = 0; d < 3; d++) {
        em_tensor *f = tt(EM_F32, SHAPE(61), x), *t = em_to_dtype(f, dts[d]), *h = em_histc(t, 7, 0.1, 0.7);
        CHECK(h && tclose(h, dts[d] == EM_BF16 ? want16 : want32, 0, 0));
        em_release(f), em_release(t), em_release(h);
    }
    COVER(EM_OP_histc);
}

TEST(histc_edges_and_errors)
{
    double two[] = {2, 2}, one_nan[] = {1, NAN};
    em_tensor *same = tt(EM_F32, SHAPE(2), two), *e = em_empty(SHAPE(0), EM_F64), *s = em_tensor_scalar(1, EM_F32);
    em_tensor *h = em_histc(same, 4, 0, 0); /* one value: [1, 3] */
    double want[] = {0, 0, 2, 0}, zeros[] = {0, 0, 0, 0}, want_s[] = {0, 1};
    CHECK(h && tclose(h, want, 0, 0));
    em_release(h);
    h = em_histc(e, 4, 0, 0);
    CHECK(h && em_dtype_of(h) == EM_F64 && tclose(h, zeros, 0, 0));
    em_release(h);
    h = em_histc(s, 2, 0, 0);
    CHECK(h && tclose(h, want_s, 0, 0));
    em_release(h);
    /* out= */
    em_tensor *o = em_zeros(SHAPE(1), EM_F32), *od = em_zeros(SHAPE(4), EM_F64);
    CHECK(em_histc_out(o, same, 4, 0, 0) == EM_OK && tclose(o, want, 0, 0));
    CHECK_ERR(em_histc_out(od, same, 4, 0, 0), EM_ERR_DTYPE);
    /* errors */
    em_tensor *nan = tt(EM_F32, SHAPE(2), one_nan), *i = em_zeros(SHAPE(2), EM_I64), *f16 = em_zeros(SHAPE(2), EM_F16);
    CHECK_ERR(em_histc(same, 0, 0, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_histc(same, -1, 0, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_histc(same, 4, 3, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_histc(same, 4, 0, INFINITY), EM_ERR_RUNTIME);
    CHECK_ERR(em_histc(same, 4, NAN, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_histc(nan, 4, 0, 0), EM_ERR_RUNTIME); /* the data's range is NaN */
    CHECK_ERR(em_histc(i, 4, 0, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_histc(f16, 4, 0, 1), EM_ERR_DTYPE);
    h = em_histc(nan, 2, 0, 2); /* NaN elements are skipped */
    CHECK(h && tval(h, 0) == 0 && tval(h, 1) == 1);
    em_release(h);
    em_release(same), em_release(e), em_release(s), em_release(o), em_release(od), em_release(nan), em_release(i),
        em_release(f16);
}

/* hist of t (and w) over the given increasing edges, in double: the last bin is closed. */
static double *ref_hist_edges(const em_tensor *t, const em_tensor *w, const double *e, int64_t bins, bool density)
{
    double *x = tvals(t), *wv = w ? tvals(w) : NULL, *h = calloc(bins, sizeof *h), total = 0;
    for (int64_t i = 0, n = em_numel(t); i < n; i++) {
        if (!(x[i] >= e[0] && x[i] <= e[bins])) continue;
        int64_t b = 0;
        while (b < bins - 1 && x[i] >= e[b + 1]) b++;
        h[b] += wv ? wv[i] : 1;
    }
    for (int64_t b = 0; b < bins; b++) total += h[b];
    for (int64_t b = 0; density && b < bins; b++) h[b] /= total * (e[b + 1] - e[b]);
    free(x), free(wv);
    return h;
}

TEST(histogram_matches_reference)
{
    const em_dtype dts[] = {EM_F32, EM_F64};
    double edges[] = {-1.5, -0.25, 0, 0.5, 2, 4.5};
    for (int d = 0; d < 2; d++)
        for (int weighted = 0; weighted < 2; weighted++)
            for (int density = 0; density < 2; density++) {
                em_tensor *base = grid_data(dts[d], SHAPE(5, 8), true), *t = tnoncontig(base);
                em_tensor *w = weighted ? trand(dts[d], SHAPE(40), 0, 2) : NULL, *h, *be;
                /* equal bins over a given range and over the data's */
                CHECK(em_histogram(t, 8, (double[]){-1, 3}, w, density, &h, &be) == EM_OK);
                double lin[9];
                for (int k = 0; k < 9; k++) lin[k] = -1 + k * 0.5;
                double *want = ref_hist_edges(base, w, lin, 8, density);
                CHECK(em_dtype_of(h) == dts[d] && em_dtype_of(be) == dts[d] && tclose(be, lin, 0, 0));
                CHECK_MSG(tclose(h, want, 1e-6, 0), "histogram %s weighted %d density %d", em_dtype_name(dts[d]), weighted, density);
                em_release(h), em_release(be), free(want);
                /* explicit edges */
                em_tensor *et = tt(dts[d], SHAPE(6), edges);
                CHECK(em_histogram_edges(t, et, w, density, &h, &be) == EM_OK);
                want = ref_hist_edges(base, w, edges, 5, density);
                CHECK(tclose(be, edges, 0, 0) && tclose(h, want, 1e-6, 0));
                em_release(h), em_release(be), free(want), em_release(et);
                em_release(base), em_release(t), em_release(w);
            }
    /* the data's range; float32 edges as PyTorch's linspace makes them */
    double x[61];
    for (int i = 0; i < 61; i++) {
        float v = (float)i * 0.01f;
        x[i] = v + 0.1f;
    }
    em_tensor *t = tt(EM_F32, SHAPE(61), x), *h, *be;
    CHECK(em_histogram(t, 7, NULL, NULL, false, &h, &be) == EM_OK);
    const double want_h[] = {9, 9, 8, 9, 8, 9, 9};
    const double want_e[] = {0.10000000149011612, 0.18571427464485168, 0.27142855525016785, 0.357142835855484,
                             0.44285714626312256, 0.5285714268684387, 0.6142857074737549, 0.699999988079071};
    CHECK(tclose(h, want_h, 0, 0) && tclose(be, want_e, 0, 0));
    em_release(t), em_release(h), em_release(be);
    COVER(EM_OP_histogram);
}

TEST(histogram_edges_and_errors)
{
    double two[] = {2, 2};
    em_tensor *same = tt(EM_F64, SHAPE(2), two), *e = em_empty(SHAPE(0), EM_F32), *h, *be;
    CHECK(em_histogram(same, 3, NULL, NULL, false, &h, &be) == EM_OK); /* one value: +-0.5 */
    double want_e[] = {1.5, 1.5 + 1 / 3.0, 2.5 - 1 / 3.0, 2.5}, want_h[] = {0, 2, 0};
    CHECK(tclose(be, want_e, 1e-15, 0) && tclose(h, want_h, 0, 0));
    em_release(h), em_release(be);
    CHECK(em_histogram(e, 2, NULL, NULL, false, &h, &be) == EM_OK); /* empty: [0, 1] */
    double want_e2[] = {0, 0.5, 1}, want_d[] = {NAN, NAN};
    CHECK(tclose(be, want_e2, 0, 0) && tval(h, 0) == 0);
    em_release(h), em_release(be);
    CHECK(em_histogram(same, 2, (double[]){5, 7}, NULL, true, &h, &be) == EM_OK); /* nothing in range: 0/0 */
    CHECK(tclose(h, want_d, 0, 0));
    em_release(h), em_release(be);
    /* errors */
    em_tensor *i = em_zeros(SHAPE(2), EM_I64), *bf = em_zeros(SHAPE(2), EM_BF16), *w32 = em_ones(SHAPE(2), EM_F32);
    em_tensor *w3 = em_ones(SHAPE(3), EM_F64), *e2 = em_zeros(SHAPE(1, 2), EM_F64), *e0 = em_zeros(SHAPE(0), EM_F64);
    em_tensor *e1 = em_zeros(SHAPE(1), EM_F64), *ef = em_zeros(SHAPE(2), EM_F32);
    h = be = (em_tensor *)1;
    CHECK_ERR(em_histogram(i, 2, NULL, NULL, false, &h, &be), EM_ERR_DTYPE);
    CHECK(!h && !be);
    CHECK_ERR(em_histogram(bf, 2, NULL, NULL, false, &h, &be), EM_ERR_DTYPE);
    CHECK_ERR(em_histogram(same, 0, NULL, NULL, false, &h, &be), EM_ERR_RUNTIME);
    CHECK_ERR(em_histogram(same, 2, (double[]){3, 1}, NULL, false, &h, &be), EM_ERR_RUNTIME);
    CHECK_ERR(em_histogram(same, 2, (double[]){1, INFINITY}, NULL, false, &h, &be), EM_ERR_RUNTIME);
    CHECK_ERR(em_histogram(same, 2, NULL, w32, false, &h, &be), EM_ERR_DTYPE);
    CHECK_ERR(em_histogram(same, 2, NULL, w3, false, &h, &be), EM_ERR_SHAPE);
    CHECK_ERR(em_histogram_edges(same, e2, NULL, false, &h, &be), EM_ERR_SHAPE);
    CHECK_ERR(em_histogram_edges(same, e0, NULL, false, &h, &be), EM_ERR_SHAPE);
    CHECK_ERR(em_histogram_edges(same, e1, NULL, false, &h, &be), EM_ERR_RUNTIME);
    CHECK_ERR(em_histogram_edges(same, ef, NULL, false, &h, &be), EM_ERR_DTYPE);
    em_tensor *all[] = {same, e, i, bf, w32, w3, e2, e0, e1, ef};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

TEST(bincount_matches_reference)
{
    const em_dtype dts[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64};
    const em_dtype wdts[] = {EM_DTYPE_NONE, EM_F32, EM_F64, EM_I32, EM_BOOL, EM_F16};
    for (int d = 0; d < 5; d++)
        for (int wd = 0; wd < 6; wd++)
            for (int64_t minlength = 0; minlength <= 30; minlength += 30) {
                em_tensor *base = trand(dts[d], SHAPE(50), 0, 20), *t = tnoncontig(base);
                em_tensor *w = wdts[wd] == EM_DTYPE_NONE ? NULL : trand(wdts[wd], SHAPE(50), 0, 3);
                em_tensor *r = em_bincount(t, w, minlength);
                CHECK(r);
                double *x = tvals(base), *wv = w ? tvals(w) : NULL, want[64] = {0};
                int64_t len = minlength;
                for (int i = 0; i < 50; i++) {
                    want[(int)x[i]] += wv ? wv[i] : 1;
                    if (x[i] + 1 > len) len = (int64_t)x[i] + 1;
                }
                em_dtype rdt = !w ? EM_I64 : wdts[wd] == EM_F32 ? EM_F32 : EM_F64;
                CHECK(em_dtype_of(r) == rdt && tshape_is(r, 1, &len));
                CHECK_MSG(tclose(r, want, 1e-6, 0), "bincount %s weights %d", em_dtype_name(dts[d]), wd);
                free(x), free(wv);
                em_release(base), em_release(t), em_release(w), em_release(r);
            }
    COVER(EM_OP_bincount);
}

TEST(bincount_edges_and_errors)
{
    double neg[] = {0, -1, 2}, big[] = {255, 0};
    em_tensor *e = em_empty(SHAPE(0), EM_I64), *ew = em_empty(SHAPE(0), EM_F64), *r = em_bincount(e, ew, 3);
    CHECK(r && em_dtype_of(r) == EM_I64 && tshape_is(r, 1, (int64_t[]){3}) && tval(r, 2) == 0);
    em_release(r);
    em_tensor *u = tt(EM_U8, SHAPE(2), big);
    r = em_bincount(u, NULL, 0);
    CHECK(r && em_numel(r) == 256 && tval(r, 255) == 1 && tval(r, 0) == 1);
    em_release(r);
    em_tensor *n = tt(EM_I8, SHAPE(3), neg), *m = em_zeros(SHAPE(2, 2), EM_I64), *s = em_tensor_scalar(1, EM_I64);
    em_tensor *f = em_zeros(SHAPE(2), EM_F32), *b = em_zeros(SHAPE(2), EM_BOOL), *w3 = em_ones(SHAPE(3), EM_F32);
    CHECK_ERR(em_bincount(n, NULL, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_bincount(m, NULL, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_bincount(s, NULL, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_bincount(f, NULL, 0), EM_ERR_DTYPE);
    CHECK_ERR(em_bincount(b, NULL, 0), EM_ERR_DTYPE);
    CHECK_ERR(em_bincount(u, NULL, -1), EM_ERR_RUNTIME);
    CHECK_ERR(em_bincount(u, w3, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_bincount(u, m, 0), EM_ERR_SHAPE);
    em_tensor *all[] = {e, ew, u, n, m, s, f, b, w3};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}
