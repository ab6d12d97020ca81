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
        if (mask >> d & 1) n *= sz[d];
        else nout *= sz[d];
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
        if (!(mask >> d & 1)) want[n++] = em_sizes(x)[d];
        else if (keepdim) want[n++] = 1;
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
        if (p == INFINITY) s = isnan(a) || a > s ? a : s;
        else if (p == -INFINITY) s = isnan(a) || a < s ? a : s;
        else if (p == 0) s += a != 0;
        else s += pow(a, p);
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
static em_tensor *f_sum(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_sum(x, nd, d, k, EM_DTYPE_NONE); }
static em_tensor *f_nansum(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_nansum(x, nd, d, k, EM_DTYPE_NONE); }
static em_tensor *f_mean(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_mean(x, nd, d, k, EM_DTYPE_NONE); }
static em_tensor *f_nanmean(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_nanmean(x, nd, d, k, EM_DTYPE_NONE); }
static em_tensor *f_prod(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_prod(x, nd, d, k, EM_DTYPE_NONE); }
static em_tensor *f_amax(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_amax(x, nd, d, k); }
static em_tensor *f_amin(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_amin(x, nd, d, k); }
static em_tensor *f_all(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_all(x, nd, d, k); }
static em_tensor *f_any(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_any(x, nd, d, k); }
static em_tensor *f_count(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_count_nonzero(x, nd, d); }
static em_tensor *f_var(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_var(x, nd, d, p, k); }
static em_tensor *f_std(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_std(x, nd, d, p, k); }
static em_tensor *f_norm(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_norm(x, p, nd, d, k, EM_DTYPE_NONE); }
static em_tensor *f_lse(const em_tensor *x, int nd, const int *d, bool k, double p) { return em_logsumexp(x, nd, d, k); }

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
    {2, {3, 4}, 0, {0}},           {2, {3, 4}, 1, {0}},          {2, {3, 4}, 1, {-1}},
    {3, {2, 3, 5}, 2, {0, 2}},     {3, {2, 3, 5}, 1, {1}},       {3, {2, 3, 5}, 2, {-1, -2}},
    {4, {2, 3, 4, 5}, 2, {1, 3}},  {4, {2, 3, 4, 5}, 3, {0, 1, 2}}, {1, {1000}, 1, {0}},
    {2, {70, 300}, 1, {0}},        {2, {5000, 3}, 1, {0}},       {1, {70001}, 0, {0}},
    {0, {0}, 0, {0}},              {0, {0}, 1, {-1}},            {2, {0, 3}, 1, {1}},
    {2, {0, 3}, 1, {0}},           {3, {2, 1, 3}, 1, {1}},
};

/* x laid out as asked: 0 contiguous, 1 every other element, 2 transposed
 * (first and last dims swapped in memory). New reference. */
static em_tensor *tlayout(em_dtype dt, int ndim, const int64_t *sizes, int layout, double lo, double hi)
{
    if (layout == 1) {
        em_tensor *c = trand(dt, ndim, sizes, lo, hi), *r = tnoncontig(c);
        em_release(c);
        return r;
    }
    if (layout == 2 && ndim >= 2) {
        int64_t s[EM_MAX_DIMS];
        memcpy(s, sizes, ndim * sizeof *s);
        s[0] = sizes[ndim - 1], s[ndim - 1] = sizes[0];
        em_tensor *b = trand(dt, ndim, s, lo, hi), *r = em_transpose(b, 0, ndim - 1);
        em_release(b);
        return r;
    }
    return trand(dt, ndim, sizes, lo, hi);
}

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
        double tol = em_dtype_of(x) == EM_F32 ? 2e-5 : 1e-11, scale = 0;
        for (int64_t o = 0; o < nout; o++) {
            want[o] = s->ref(g + o * per, per, s->param);
            scale = fmax(scale, fabs(want[o]));
        }
        ok = tclose(r, want, tol, tol * 1e-3 * scale);
        free(g);
        free(want);
    }
    if (!ok) fprintf(stderr, "  %s on case ndim=%d nd=%d layout=%d keepdim=%d\n", s->name, c->ndim, c->nd, layout, keepdim);
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
    COVER(EM_OP_sum, EM_OP_nansum, EM_OP_mean, EM_OP_nanmean, EM_OP_prod, EM_OP_amax, EM_OP_amin, EM_OP_all,
          EM_OP_any, EM_OP_count_nonzero, EM_OP_var, EM_OP_std, EM_OP_norm, EM_OP_logsumexp);
}
