/* Reductions, scans, selection and softmax: each op against a naive double
 * reference over many shapes, dims sets, keepdim, layouts (contiguous,
 * strided, transposed) and dtypes; accuracy, threads, dtype rules, edge
 * cases and errors (each checked against PyTorch 1.13). */
#include "test.h"

/* ---- the generic reference --------------------------------------------- */

/* For each output of reducing x over `mask`, its values in row-major order:
 * *groups gets nout * per values (caller frees). */
static int64_t tred_groups(const em_tensor *x, uint32_t mask, double **groups, int64_t *per)
{
    int nd = em_ndim(x);
    const int64_t *sz = em_sizes(x);
    int64_t nout = 1, n = 1;
    for (int d = 0; d < nd; d++) {
        if (mask >> d & 1)
            n *= sz[d];
        else
            nout *= sz[d];
    }
    double *v = tvals(x), *g = malloc((size_t)(nout * n > 0 ? nout * n : 1) * sizeof *g);
    int64_t *fill = calloc((size_t)(nout ? nout : 1), sizeof *fill);
    for (int64_t i = 0, total = em_numel(x); i < total; i++) {
        int64_t r = i, o = 0, stride = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t c = r % sz[d];
            r /= sz[d];
            if (!(mask >> d & 1)) o += c * stride, stride *= sz[d];
        }
        g[o * n + fill[o]++] = v[i];
    }
    free(v);
    free(fill);
    *groups = g;
    *per = n;
    return nout;
}

static bool tred_shape_ok(const em_tensor *r, const em_tensor *x, uint32_t mask, bool keepdim)
{
    int64_t want[EM_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < em_ndim(x); d++) {
        if (!(mask >> d & 1))
            want[n++] = em_sizes(x)[d];
        else if (keepdim)
            want[n++] = 1;
    }
    return tshape_is(r, n, want);
}

static double r_sum(const double *v, int64_t n, double p)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    return s;
}
static double r_nansum(const double *v, int64_t n, double p)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += isnan(v[i]) ? 0 : v[i];
    return s;
}
static double r_mean(const double *v, int64_t n, double p) { return r_sum(v, n, p) / n; }
static double r_nanmean(const double *v, int64_t n, double p)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += !isnan(v[i]);
    return r_nansum(v, n, p) / k;
}
static double r_prod(const double *v, int64_t n, double p)
{
    double s = 1;
    for (int64_t i = 0; i < n; i++) s *= v[i];
    return s;
}
static double r_amax(const double *v, int64_t n, double p)
{
    double s = -INFINITY;
    for (int64_t i = 0; i < n; i++) s = isnan(v[i]) || v[i] > s ? v[i] : s;
    return s;
}
static double r_amin(const double *v, int64_t n, double p)
{
    double s = INFINITY;
    for (int64_t i = 0; i < n; i++) s = isnan(v[i]) || v[i] < s ? v[i] : s;
    return s;
}
static double r_all(const double *v, int64_t n, double p)
{
    for (int64_t i = 0; i < n; i++)
        if (v[i] == 0) return 0;
    return 1;
}
static double r_count_nonzero(const double *v, int64_t n, double p)
{
    double k = 0;
    for (int64_t i = 0; i < n; i++) k += v[i] != 0; /* NaN counts */
    return k;
}
static double r_any(const double *v, int64_t n, double p) { return r_count_nonzero(v, n, p) > 0; }
static double r_var(const double *v, int64_t n, double corr)
{
    double m = r_mean(v, n, 0), s = 0, d = n - corr;
    for (int64_t i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
    return s / (d > 0 ? d : 0);
}
static double r_std(const double *v, int64_t n, double corr) { return sqrt(r_var(v, n, corr)); }
static double r_norm(const double *v, int64_t n, double p)
{
    double s = p == -INFINITY ? INFINITY : 0;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(v[i]);
        if (p == INFINITY)
            s = isnan(a) || a > s ? a : s;
        else if (p == -INFINITY)
            s = isnan(a) || a < s ? a : s;
        else if (p == 0)
            s += a != 0;
        else
            s += pow(a, p);
    }
    if (p == -INFINITY && n == 0) return 0;
    return p == INFINITY || p == -INFINITY || p == 0 || p == 1 ? s : pow(s, 1 / p);
}
static double r_logsumexp(const double *v, int64_t n, double p)
{
    double m = r_amax(v, n, 0), s = 0;
    if (isinf(m)) m = 0;
    for (int64_t i = 0; i < n; i++) s += exp(v[i] - m);
    return log(s) + m;
}

/* Every reduction as (x, dims, keepdim, param) -> tensor. */
static em_tensor *f_sum(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_sum(x, nd, d, k, EM_DTYPE_NONE);
}
static em_tensor *f_nansum(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_nansum(x, nd, d, k, EM_DTYPE_NONE);
}
static em_tensor *f_mean(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_mean(x, nd, d, k, EM_DTYPE_NONE);
}
static em_tensor *f_nanmean(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_nanmean(x, nd, d, k, EM_DTYPE_NONE);
}
static em_tensor *f_prod(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_prod(x, nd, d, k, EM_DTYPE_NONE);
}
static em_tensor *f_amax(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_amax(x, nd, d, k); }
static em_tensor *f_amin(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_amin(x, nd, d, k); }
static em_tensor *f_all(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_all(x, nd, d, k); }
static em_tensor *f_any(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_any(x, nd, d, k); }
static em_tensor *f_count(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_count_nonzero(x, nd, d);
}
static em_tensor *f_var(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_var(x, nd, d, p, k); }
static em_tensor *f_std(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_std(x, nd, d, p, k); }
static em_tensor *f_norm(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_norm(x, p, nd, d, k, EM_DTYPE_NONE);
}
static em_tensor *f_lse(const em_tensor *x, int nd, const int *d, bool k, double p)
{
    return em_logsumexp(x, nd, d, k);
}

typedef struct rspec {
    const char *name;
    em_tensor *(*run)(const em_tensor *x, int nd, const int *d, bool k, double p);
    double (*ref)(const double *v, int64_t n, double p);
    double param;
    bool no_identity; /* errors on an empty reduced dim */
    bool keeps_dim;   /* has a keepdim argument */
} rspec;

static const rspec specs[] = {
    {"sum", f_sum, r_sum, 0, false, true},
    {"nansum", f_nansum, r_nansum, 0, false, true},
    {"mean", f_mean, r_mean, 0, false, true},
    {"nanmean", f_nanmean, r_nanmean, 0, false, true},
    {"prod", f_prod, r_prod, 0, false, true},
    {"amax", f_amax, r_amax, 0, true, true},
    {"amin", f_amin, r_amin, 0, true, true},
    {"all", f_all, r_all, 0, false, true},
    {"any", f_any, r_any, 0, false, true},
    {"count_nonzero", f_count, r_count_nonzero, 0, false, false},
    {"var", f_var, r_var, 1, false, true},
    {"var(correction=0)", f_var, r_var, 0, false, true},
    {"std", f_std, r_std, 1, false, true},
    {"norm2", f_norm, r_norm, 2, false, true},
    {"norm1", f_norm, r_norm, 1, false, true},
    {"norm_inf", f_norm, r_norm, INFINITY, false, true},
    {"norm_-inf", f_norm, r_norm, -INFINITY, false, true},
    {"norm0", f_norm, r_norm, 0, false, true},
    {"norm3.5", f_norm, r_norm, 3.5, false, true},
    {"norm-1.5", f_norm, r_norm, -1.5, false, true},
    {"logsumexp", f_lse, r_logsumexp, 0, false, true},
};

/* Shapes and dims sets: all dims, inner, outer (vertical), middle,
 * non-adjacent (a copy), a 0-d tensor, empty tensors, and sizes that cross
 * the kernels' block boundaries (row blocks of 32768, 256 columns, 4096 rows). */
static const struct rcase {
    int ndim;
    int64_t sizes[4];
    int nd;
    int dims[3];
} cases[] = {
    {2, {3, 4}, 0, {0}},    {2, {3, 4}, 1, {0}},         {2, {3, 4}, 1, {-1}},         {3, {2, 3, 5}, 2, {0, 2}},
    {3, {2, 3, 5}, 1, {1}}, {3, {2, 3, 5}, 2, {-1, -2}}, {4, {2, 3, 4, 5}, 2, {1, 3}}, {4, {2, 3, 4, 5}, 3, {0, 1, 2}},
    {1, {1000}, 1, {0}},    {2, {70, 300}, 1, {0}},      {2, {5000, 3}, 1, {0}},       {1, {70001}, 0, {0}},
    {0, {0}, 0, {0}},       {0, {0}, 1, {-1}},           {2, {0, 3}, 1, {1}},          {2, {0, 3}, 1, {0}},
    {3, {2, 1, 3}, 1, {1}},
};

static uint32_t tmask(int ndim, int nd, const int *dims)
{
    if (nd == 0) return ndim ? (1u << ndim) - 1 : 0;
    uint32_t m = 0;
    for (int k = 0; k < nd; k++) m |= ndim ? 1u << ((dims[k] + ndim) % ndim) : 0;
    return m;
}

/* Runs spec s on one case and layout; false (with a message) on mismatch. */
static bool check_case(const rspec *s, const struct rcase *c, int layout, bool keepdim, em_dtype dt)
{
    em_tensor *x = tlayout(dt, c->ndim, c->sizes, layout, s->ref == r_prod ? 0.9 : -2, s->ref == r_prod ? 1.1 : 2);
    uint32_t mask = tmask(c->ndim, c->nd, c->dims);
    bool empty_dim = false;
    for (int d = 0; d < c->ndim; d++) empty_dim |= (mask >> d & 1) && c->sizes[d] == 0;
    em_clear_error();
    em_tensor *r = s->run(x, c->nd, c->dims, keepdim, s->param);
    bool ok = true;
    if (s->no_identity && (empty_dim || (c->nd == 0 && em_numel(x) == 0))) {
        ok = !r && em_error_code() != EM_OK;
    } else if (!r || !tred_shape_ok(r, x, mask, keepdim && s->keeps_dim)) {
        fprintf(stderr, "  %s: no result or wrong shape (%s)\n", s->name, em_last_error());
        ok = false;
    } else {
        double *g, *want;
        int64_t per, nout = tred_groups(x, mask, &g, &per);
        want = malloc((size_t)(nout ? nout : 1) * sizeof *want);
        /* relative to the result, and absolute to the size of what was summed */
        double tol = em_dtype_of(x) == EM_F32 ? 2e-5 : 1e-11, ulps = em_dtype_of(x) == EM_F32 ? 1e-6 : 1e-14;
        double scale = 1;
        for (int64_t o = 0; o < nout; o++) {
            want[o] = s->ref(g + o * per, per, s->param);
            double size = 0;
            for (int64_t i = 0; i < per; i++) size += fabs(g[o * per + i]);
            scale = fmax(scale, size);
        }
        ok = tclose(r, want, tol, ulps * scale);
        free(g);
        free(want);
    }
    if (!ok)
        fprintf(stderr, "  %s on case ndim=%d nd=%d layout=%d keepdim=%d\n", s->name, c->ndim, c->nd, layout, keepdim);
    em_release(x);
    em_release(r);
    return ok;
}

TEST(reduce_all_ops_against_reference)
{
    em_dtype dts[] = {EM_F64, EM_F32};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
            for (int layout = 0; layout < 3; layout++)
                for (size_t t = 0; t < 2; t++) {
                    int64_t numel = 1;
                    for (int d = 0; d < cases[c].ndim; d++) numel *= cases[c].sizes[d];
                    bool big = numel > 4000;
                    if (big && (layout || t)) continue; /* keep the suite fast */
                    CHECK(check_case(&specs[k], &cases[c], layout, (c + layout) % 2, dts[t]));
                }
    COVER(EM_OP_sum, EM_OP_nansum, EM_OP_mean, EM_OP_nanmean, EM_OP_prod, EM_OP_amax, EM_OP_amin, EM_OP_all, EM_OP_any,
          EM_OP_count_nonzero, EM_OP_var, EM_OP_std, EM_OP_norm, EM_OP_logsumexp);
}

/* ---- dtypes ------------------------------------------------------------- */

TEST(reduce_result_dtypes)
{
    for (int dt = 0; dt < TEST_REAL_DTYPES; dt++) {
        em_tensor *x = trand((em_dtype)dt, SHAPE(3, 4), 0, 5);
        bool fl = em_dtype_is_float((em_dtype)dt), half = dt == EM_F16 || dt == EM_BF16;
        em_tensor *s = em_sum(x, 0, NULL, false, EM_DTYPE_NONE),
                  *ns = em_nansum(x, 1, (int[]){0}, false, EM_DTYPE_NONE);
        em_tensor *a = em_amax(x, 1, (int[]){1}, true), *al = em_all(x, 0, NULL, false);
        em_tensor *an = em_any(x, 1, (int[]){0}, false), *cn = em_count_nonzero(x, 1, (int[]){1});
        CHECK(s && ns && a && al && an && cn);
        CHECK(em_dtype_of(s) == (fl ? dt : EM_I64) && em_dtype_of(ns) == em_dtype_of(s));
        CHECK(em_dtype_of(a) == dt && tshape_is(a, SHAPE(3, 1)));
        CHECK(em_dtype_of(al) == (dt == EM_U8 ? EM_U8 : EM_BOOL) && em_dtype_of(an) == em_dtype_of(al));
        CHECK(em_dtype_of(cn) == EM_I64);
        double *v = tvals(x), total = 0, big = -INFINITY, nz = 0;
        for (int i = 0; i < 12; i++) total += v[i], big = fmax(big, v[i]), nz += v[i] != 0;
        CHECK_MSG(fabs(tval(s, 0) - total) <= (half ? 0.1 : 1e-5) * total, "%s: sum %g != %g", em_dtype_name(dt),
                  tval(s, 0), total);
        CHECK(tval(al, 0) == (nz == 12) && tval(cn, 0) + tval(cn, 1) + tval(cn, 2) == nz);
        double row0 = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
        CHECK(tval(a, 0) == row0 && big >= row0);
        free(v);
        em_tensor *all[] = {s, ns, a, al, an, cn};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
        /* float-only ops, and prod's missing half kernels (PyTorch 1.13) */
        em_tensor *m = em_mean(x, 0, NULL, false, EM_DTYPE_NONE), *p = em_prod(x, 0, NULL, false, EM_DTYPE_NONE);
        em_tensor *vr = em_var(x, 0, NULL, 1, false), *nm = em_norm(x, 2, 0, NULL, false, EM_DTYPE_NONE);
        em_tensor *ls = em_logsumexp(x, 1, (int[]){1}, false);
        CHECK(!m == !fl && !vr == !fl && !nm == !fl && !p == half);
        CHECK(!ls == (dt == EM_F16) && (!ls || em_dtype_of(ls) == (fl ? dt : EM_F32)));
        em_release(m), em_release(p), em_release(vr), em_release(nm), em_release(ls), em_release(x);
    }
}

TEST(reduce_dtype_argument)
{
    double v[] = {0.5, 1.5, -2.5, 3.75, 0, 1};
    em_tensor *x = tt(EM_F32, SHAPE(6), v), *i = tt(EM_I32, SHAPE(6), v);
    /* dtype= converts first: 0.5 -> 0 in int32, -> true in bool */
    em_tensor *si = em_sum(x, 0, NULL, false, EM_I32), *sb = em_sum(x, 0, NULL, false, EM_BOOL);
    em_tensor *sd = em_sum(x, 0, NULL, false, EM_F64), *mi = em_mean(i, 0, NULL, false, EM_F32);
    em_tensor *pd = em_prod(i, 0, NULL, false, EM_F64), *nd = em_norm(x, 1, 0, NULL, false, EM_F64);
    CHECK(si && sb && sd && mi && pd && nd);
    CHECK(em_dtype_of(si) == EM_I32 && tval(si, 0) == 0 + 1 - 2 + 3 + 0 + 1);
    CHECK(em_dtype_of(sb) == EM_BOOL && tval(sb, 0) == 1);
    CHECK(em_dtype_of(sd) == EM_F64 && tval(sd, 0) == 4.25);
    CHECK(em_dtype_of(mi) == EM_F32 && fabs(tval(mi, 0) - 0.5) < 1e-7);
    CHECK(em_dtype_of(pd) == EM_F64 && tval(pd, 0) == 0);
    CHECK(em_dtype_of(nd) == EM_F64 && tval(nd, 0) == 9.25);
    CHECK_ERR(em_mean(i, 0, NULL, false, EM_DTYPE_NONE), EM_ERR_DTYPE);
    CHECK_ERR(em_mean(x, 0, NULL, false, EM_I64), EM_ERR_DTYPE);
    CHECK_ERR(em_nanmean(i, 0, NULL, false, EM_F32), EM_ERR_DTYPE);
    CHECK_ERR(em_nansum(x, 0, NULL, false, EM_I64), EM_ERR_DTYPE);
    CHECK_ERR(em_prod(x, 0, NULL, false, EM_F16), EM_ERR_DTYPE);
    CHECK_ERR(em_norm(x, 2, 0, NULL, false, EM_I64), EM_ERR_DTYPE);
    CHECK_ERR(em_sum(x, 0, NULL, false, (em_dtype)42), EM_ERR_DTYPE);
    em_tensor *all[] = {x, i, si, sb, sd, mi, pd, nd};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

/* ---- accuracy and threads ------------------------------------------------- */

TEST(reduce_float32_accuracy)
{
    int64_t n = 10000000;
    em_tensor *x = em_full(SHAPE(n), 0.1, EM_F32);
    em_tensor *s = em_sum(x, 0, NULL, false, EM_DTYPE_NONE), *m = em_mean(x, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(s && m);
    double exact = (double)0.1f * (double)n;
    CHECK_MSG(fabs(tval(s, 0) - exact) / exact < 1e-6, "sum of 1e7 x 0.1f: %.9g vs %.9g", tval(s, 0), exact);
    CHECK(fabs(tval(m, 0) - 0.1f) / 0.1 < 1e-6);
    /* the same along a slow dim: (1e6, 10) summed over dim 0 */
    em_tensor *v = em_view(x, SHAPE(1000000, 10)), *s0 = em_sum(v, 1, (int[]){0}, false, EM_DTYPE_NONE);
    CHECK(s0 && fabs(tval(s0, 7) - exact / 10) / (exact / 10) < 1e-6);
    em_release(x), em_release(s), em_release(m), em_release(v), em_release(s0);
    /* var with a large mean: 1e4 + U(-1, 1) in float32 */
    em_tensor *u = trand(EM_F64, SHAPE(200000), -1, 1), *u32 = em_to_dtype(u, EM_F32);
    float *p = em_data_ptr(u32);
    for (int i = 0; i < 200000; i++) p[i] += 1e4f;
    double *g = tvals(u32), mean = 0, ss = 0;
    for (int i = 0; i < 200000; i++) mean += g[i] / 200000;
    for (int i = 0; i < 200000; i++) ss += (g[i] - mean) * (g[i] - mean);
    em_tensor *vr = em_var(u32, 0, NULL, 1, false);
    CHECK_MSG(vr && fabs(tval(vr, 0) - ss / 199999) < 1e-4 * ss / 199999, "var %.9g vs %.9g", tval(vr, 0), ss / 199999);
    free(g);
    em_release(u), em_release(u32), em_release(vr);
}

TEST(reduce_thread_count_independent)
{
    em_tensor *x = trand(EM_F32, SHAPE(300, 2000), -1, 1), *xt = em_t(x);
    em_tensor *r[2][5];
    for (int t = 0; t < 2; t++) {
        em_set_num_threads(t + 1);
        r[t][0] = em_sum(x, 0, NULL, false, EM_DTYPE_NONE);
        r[t][1] = em_sum(x, 1, (int[]){0}, false, EM_DTYPE_NONE);
        r[t][2] = em_var(xt, 1, (int[]){1}, 1, false);
        r[t][3] = em_argmax(x, NULL, false);
        r[t][4] = em_softmax(x, 0, EM_DTYPE_NONE);
    }
    em_set_num_threads(2);
    for (int k = 0; k < 5; k++) CHECK(r[0][k] && r[1][k] && em_equal(r[0][k], r[1][k]));
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 5; k++) em_release(r[t][k]);
    em_release(x), em_release(xt);
}

/* ---- edge cases and errors --------------------------------------------------- */

TEST(reduce_empty_and_0d)
{
    em_tensor *e = em_zeros(SHAPE(0, 3), EM_F32), *z = em_scalar_float(2.5);
    em_tensor *s = em_sum(e, 1, (int[]){0}, false, EM_DTYPE_NONE), *p = em_prod(e, 1, (int[]){0}, true, EM_DTYPE_NONE);
    em_tensor *a = em_all(e, 1, (int[]){0}, false), *an = em_any(e, 0, NULL, false),
              *m = em_mean(e, 0, NULL, false, EM_DTYPE_NONE);
    em_tensor *n = em_norm(e, -INFINITY, 1, (int[]){0}, false, EM_DTYPE_NONE),
              *l = em_logsumexp(e, 1, (int[]){0}, false);
    em_tensor *v = em_var(e, 0, NULL, 1, false), *s1 = em_sum(e, 1, (int[]){1}, false, EM_DTYPE_NONE);
    CHECK(s && p && a && an && m && n && l && v && s1);
    CHECK(tshape_is(s, SHAPE(3)) && tval(s, 0) == 0 && tshape_is(p, SHAPE(1, 3)) && tval(p, 2) == 1);
    CHECK(tval(a, 1) == 1 && tval(an, 0) == 0 && isnan(tval(m, 0)) && tval(n, 0) == 0 && tval(l, 0) == -INFINITY);
    CHECK(isnan(tval(v, 0)) && tshape_is(s1, SHAPE(0)));
    CHECK_ERR(em_max(e), EM_ERR_RUNTIME);
    CHECK_ERR(em_amin(e, 0, NULL, false), EM_ERR_RUNTIME);
    CHECK_ERR(em_amax(e, 1, (int[]){0}, false), EM_ERR_INDEX);
    CHECK_ERR(em_argmax(e, NULL, false), EM_ERR_INDEX);
    em_tensor *ok = em_amax(e, 1, (int[]){1}, false);
    CHECK(ok && tshape_is(ok, SHAPE(0)));
    /* 0-d: dim 0 and -1 work, keepdim keeps 0-d */
    em_tensor *z1 = em_sum(z, 1, (int[]){-1}, true, EM_DTYPE_NONE), *z2 = em_amax(z, 1, (int[]){0}, false);
    em_tensor *z3 = em_std(z, 0, NULL, 1, false), *z4 = em_max(z);
    CHECK(z1 && tshape_is(z1, 0, NULL) && tval(z1, 0) == 2.5 && tval(z2, 0) == 2.5 && isnan(tval(z3, 0)) &&
          tval(z4, 0) == 2.5);
    CHECK_ERR(em_sum(z, 1, (int[]){1}, false, EM_DTYPE_NONE), EM_ERR_INDEX);
    em_tensor *all[] = {e, z, s, p, a, an, m, n, l, v, s1, ok, z1, z2, z3, z4};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_max, EM_OP_min);
}

TEST(reduce_special_values_and_errors)
{
    double v[] = {1, NAN, -3, 2};
    em_tensor *x = tt(EM_F32, SHAPE(4), v), *m = em_max(x), *mi = em_min(x),
              *ns = em_nansum(x, 0, NULL, false, EM_DTYPE_NONE);
    em_tensor *nm = em_nanmean(x, 0, NULL, false, EM_DTYPE_NONE), *n0 = em_norm(x, 0, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(isnan(tval(m, 0)) && isnan(tval(mi, 0)) && tval(ns, 0) == 0 && tval(nm, 0) == 0 && tval(n0, 0) == 4);
    /* var: divisor max(0, N - correction) */
    em_tensor *v4 = em_var(x, 0, NULL, 4, false), *one = em_ones(SHAPE(2), EM_F64),
              *v2 = em_var(one, 0, NULL, 2, false);
    em_tensor *pi = tt(EM_F64, SHAPE(2), (double[]){1, 2}), *v5 = em_var(pi, 0, NULL, 5, false);
    CHECK(isnan(tval(v4, 0)) && isnan(tval(v2, 0)) && tval(v5, 0) == INFINITY);
    /* integer sums and products wrap like int64 */
    double big[] = {4611686018427387904.0, 4611686018427387904.0, 4611686018427387904.0};
    em_tensor *b = tt(EM_I64, SHAPE(3), big), *bs = em_sum(b, 0, NULL, false, EM_DTYPE_NONE);
    int64_t got;
    memcpy(&got, em_data_ptr(bs), 8);
    CHECK(got == INT64_MIN / 2);
    /* logsumexp with infinities */
    em_tensor *inf = tt(EM_F32, SHAPE(2, 2), (double[]){INFINITY, 1, -INFINITY, -INFINITY});
    em_tensor *li = em_logsumexp(inf, 1, (int[]){1}, false);
    CHECK(tval(li, 0) == INFINITY && tval(li, 1) == -INFINITY);
    /* errors: dims, NULL, dtypes */
    CHECK_ERR(em_sum(x, 1, (int[]){1}, false, EM_DTYPE_NONE), EM_ERR_INDEX);
    CHECK_ERR(em_sum(inf, 2, (int[]){1, -1}, false, EM_DTYPE_NONE), EM_ERR_RUNTIME);
    CHECK_ERR(em_sum(NULL, 0, NULL, false, EM_DTYPE_NONE), EM_ERR_VALUE);
    CHECK_ERR(em_sum(x, -1, NULL, false, EM_DTYPE_NONE), EM_ERR_VALUE);
    CHECK_ERR(em_count_nonzero(inf, 2, (int[]){0, 0}), EM_ERR_RUNTIME);
    em_tensor *bl = em_zeros(SHAPE(3), EM_BOOL), *h = em_zeros(SHAPE(3), EM_F16);
    CHECK_ERR(em_argmax(bl, NULL, false), EM_ERR_DTYPE);
    CHECK_ERR(em_var(bl, 0, NULL, 1, false), EM_ERR_DTYPE);
    CHECK_ERR(em_logsumexp(h, 0, NULL, false), EM_ERR_DTYPE);
    em_tensor *all[] = {x, m, mi, ns, nm, n0, v4, one, v2, pi, v5, b, bs, inf, li, bl, h};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

TEST(reduce_out_variants)
{
    em_tensor *x = trand(EM_F32, SHAPE(3, 4), -2, 2), *out = em_empty(SHAPE(7), EM_F64);
    uint64_t ver = em_version(out);
    CHECK(em_sum_out(out, x, 1, (int[]){0}, false, EM_DTYPE_NONE) == EM_OK && tshape_is(out, SHAPE(4)));
    CHECK(em_version(out) > ver && em_dtype_of(out) == EM_F64);
    double col = tval(x, 1) + tval(x, 5) + tval(x, 9);
    CHECK(fabs(tval(out, 1) - col) < 1e-6);
    /* without dtype=, out's dtype is the compute dtype: int64 truncates first */
    em_tensor *io = em_empty(SHAPE(4), EM_I64);
    CHECK(em_sum_out(io, x, 1, (int[]){0}, false, EM_DTYPE_NONE) == EM_OK);
    CHECK(tval(io, 1) == trunc(tval(x, 1)) + trunc(tval(x, 5)) + trunc(tval(x, 9)));
    CHECK_ERR(em_sum_out(out, x, 1, (int[]){0}, false, EM_F32), EM_ERR_DTYPE);
    CHECK_ERR(em_amax_out(out, x, 1, (int[]){0}, false), EM_ERR_DTYPE);
    CHECK_ERR(em_sum_out(NULL, x, 0, NULL, false, EM_DTYPE_NONE), EM_ERR_VALUE);
    double before = tval(out, 0);
    CHECK_ERR(em_mean_out(out, io, 0, NULL, false, EM_DTYPE_NONE), EM_ERR_DTYPE); /* int input: out unchanged */
    CHECK(tval(out, 0) == before && tshape_is(out, SHAPE(4)));
    em_tensor *f = em_empty(SHAPE(3), EM_F32), *u8 = em_empty(SHAPE(1), EM_U8), *b = em_empty(SHAPE(1), EM_BOOL);
    CHECK(em_mean_out(out, x, 1, (int[]){0}, true, EM_DTYPE_NONE) == EM_OK && tshape_is(out, SHAPE(1, 4)));
    CHECK(em_nansum_out(f, x, 1, (int[]){1}, false, EM_DTYPE_NONE) == EM_OK);
    CHECK(em_nanmean_out(f, x, 1, (int[]){1}, false, EM_DTYPE_NONE) == EM_OK);
    CHECK(em_prod_out(f, x, 1, (int[]){1}, false, EM_DTYPE_NONE) == EM_OK);
    CHECK(em_amax_out(f, x, 1, (int[]){1}, false) == EM_OK && em_amin_out(f, x, 1, (int[]){1}, false) == EM_OK);
    CHECK(em_all_out(u8, x, 0, NULL, false) == EM_OK && tshape_is(u8, 0, NULL) &&
          em_any_out(b, x, 0, NULL, false) == EM_OK);
    CHECK_ERR(em_all_out(f, x, 0, NULL, false), EM_ERR_DTYPE);
    CHECK(em_var_out(out, x, 1, (int[]){1}, 1, false) == EM_OK && em_std_out(f, x, 1, (int[]){1}, 0, false) == EM_OK);
    CHECK_ERR(em_var_out(io, x, 0, NULL, 1, false), EM_ERR_DTYPE);
    CHECK(em_norm_out(out, x, 2, 1, (int[]){1}, false, EM_DTYPE_NONE) == EM_OK);
    CHECK(em_logsumexp_out(out, x, 1, (int[]){0}, false) == EM_OK);
    CHECK_ERR(em_logsumexp_out(io, x, 1, (int[]){0}, false), EM_ERR_DTYPE);
    em_tensor *all[] = {x, out, io, f, u8, b};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

TEST(reduce_var_mean_pairs)
{
    em_tensor *x = tlayout(EM_F32, SHAPE(4, 6, 5), 2, -3, 3), *v, *m, *sd, *m2;
    int dims[] = {0, -1};
    CHECK(em_var_mean(x, 2, dims, 0, true, &v, &m) == EM_OK && em_std_mean(x, 2, dims, 1, false, &sd, &m2) == EM_OK);
    em_tensor *rv = em_var(x, 2, dims, 0, true), *rs = em_std(x, 2, dims, 1, false),
              *rm = em_mean(x, 2, dims, false, EM_DTYPE_NONE);
    CHECK(tshape_is(v, SHAPE(1, 6, 1)) && tshape_is(m, SHAPE(1, 6, 1)) && tshape_is(sd, SHAPE(6)) &&
          tshape_is(m2, SHAPE(6)));
    CHECK(em_equal(v, rv) && em_equal(sd, rs) && em_equal(m2, rm));
    for (int i = 0; i < 6; i++) CHECK(tval(m, i) == tval(rm, i));
    em_tensor *iv, *im, *bi = em_zeros(SHAPE(2), EM_I32);
    CHECK_ERR(em_var_mean(bi, 0, NULL, 1, false, &iv, &im), EM_ERR_DTYPE);
    CHECK(!iv && !im);
    em_tensor *all[] = {x, v, m, sd, m2, rv, rs, rm, bi};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_var_mean, EM_OP_std_mean);
}
