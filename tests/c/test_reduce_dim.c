/* The ops along one dim: max/min with indices, argmax/argmin, scans
 * (cumsum, cumprod, cummax, cummin, logcumsumexp), median, nanmedian,
 * mode, softmax and log_softmax, each against a naive double reference
 * over shapes, dims, layouts and dtypes, plus edge cases and errors
 * (checked against PyTorch 1.13). */
#include "test.h"

/* x's row-major values cut into lines along dim: element i of line l is
 * v[at(l, i)]. A 0-d tensor is one line of one element. */
typedef struct tlines {
    double *v;
    int64_t n, inner, count;
} tlines;

static tlines lines_of(const em_tensor *x, int dim)
{
    tlines L = {tvals(x), 1, 1, em_numel(x)};
    int nd = em_ndim(x);
    if (nd == 0) return L;
    dim = (dim + nd) % nd;
    L.n = em_sizes(x)[dim];
    for (int d = dim + 1; d < nd; d++) L.inner *= em_sizes(x)[d];
    L.count = L.n ? em_numel(x) / L.n : 0;
    return L;
}
static int64_t at(const tlines *L, int64_t l, int64_t i)
{
    return l / L->inner * L->n * L->inner + l % L->inner + i * L->inner;
}

/* A few NaNs, to check their propagation. */
static void sprinkle_nans(em_tensor *x, int every)
{
    int64_t idx[EM_MAX_DIMS] = {0}, n = em_numel(x);
    for (int64_t i = 0; i < n; i += every) {
        int64_t r = i;
        for (int d = em_ndim(x) - 1; d >= 0; d--) idx[d] = r % em_sizes(x)[d], r /= em_sizes(x)[d];
        em_set(x, idx, NAN);
    }
}

static const struct dcase {
    int ndim;
    int64_t sizes[3];
    int dim;
} dcases[] = {
    {2, {3, 4}, 0},   {2, {3, 4}, 1},  {2, {3, 4}, -1},   {3, {2, 3, 5}, 1}, {2, {300, 5}, 0},
    {2, {5, 300}, 0}, {1, {40000}, 0}, {2, {5000, 3}, 0}, {0, {0}, 0},       {2, {0, 3}, 1},
    {2, {4, 0}, 0},   {2, {3, 0}, 1},  {3, {2, 1, 3}, 1},
};
#define NCASES (sizeof dcases / sizeof *dcases)
static bool big_case(const struct dcase *c) { return c->ndim && c->sizes[0] * (c->ndim > 1 ? c->sizes[1] : 1) > 2000; }

/* ---- max/min along a dim, argmax/argmin ----------------------------------- */

static bool better(double v, double best, bool max)
{
    return max ? v > best || (isnan(v) && !isnan(best)) : v < best || (isnan(v) && !isnan(best));
}

static bool check_extremum_dim(const struct dcase *c, int layout, em_dtype dt, bool max)
{
    em_tensor *x = tlayout(dt, c->ndim, c->sizes, layout, 0, 5), *vals = NULL, *idx = NULL;
    if (dt == EM_F32 && em_numel(x) > 7) sprinkle_nans(x, 7 * (int)em_numel(x) / 8);
    tlines L = lines_of(x, c->dim);
    em_status st = (max ? em_max_dim : em_min_dim)(x, c->dim, true, &vals, &idx);
    em_tensor *am = (max ? em_argmax : em_argmin)(x, &c->dim, true);
    bool ok = true;
    if (L.n == 0) {
        ok = st == EM_ERR_INDEX && !vals && !idx && !am;
    } else {
        ok = st == EM_OK && am && em_dtype_of(vals) == dt && em_dtype_of(idx) == EM_I64;
        for (int64_t l = 0; ok && l < L.count; l++) {
            int64_t bi = 0;
            for (int64_t i = 1; i < L.n; i++)
                if (better(L.v[at(&L, l, i)], L.v[at(&L, l, bi)], max)) bi = i;
            double want = L.v[at(&L, l, bi)], got = tval(vals, l);
            ok = (got == want || (isnan(got) && isnan(want))) && tval(idx, l) == bi && tval(am, l) == bi;
            if (!ok)
                fprintf(stderr, "  line %lld: got %g at %g, want %g at %lld\n", (long long)l, got, tval(idx, l), want,
                        (long long)bi);
        }
    }
    if (!ok)
        fprintf(stderr, "  %s case ndim=%d dim=%d layout=%d %s\n", max ? "max" : "min", c->ndim, c->dim, layout,
                em_dtype_name(dt));
    free(L.v);
    em_release(x), em_release(vals), em_release(idx), em_release(am);
    return ok;
}

TEST(reduce_max_min_dim_and_argmax)
{
    em_dtype dts[] = {EM_F32, EM_I32, EM_F64, EM_BF16, EM_U8};
    for (size_t c = 0; c < NCASES; c++)
        for (int layout = 0; layout < 3; layout++)
            for (size_t t = 0; t < sizeof dts / sizeof *dts; t++) {
                if (big_case(&dcases[c]) && (layout || t > 1)) continue;
                CHECK(check_extremum_dim(&dcases[c], layout, dts[t], true));
                CHECK(check_extremum_dim(&dcases[c], layout, dts[t], false));
            }
    /* argmax of everything: the row-major index, also for a transposed x */
    em_tensor *b = trand(EM_F64, SHAPE(5, 7), -1, 1), *x = em_t(b), *am = em_argmax(x, NULL, false);
    em_tensor *amk = em_argmin(x, NULL, true);
    double *v = tvals(x);
    int64_t hi = 0, lo = 0;
    for (int i = 1; i < 35; i++) hi = v[i] > v[hi] ? i : hi, lo = v[i] < v[lo] ? i : lo;
    CHECK(am && tval(am, 0) == hi && tshape_is(amk, SHAPE(1, 1)) && tval(amk, 0) == lo);
    free(v);
    /* out=, and PyTorch's errors */
    em_tensor *vals = em_empty(SHAPE(2), EM_F64), *idx = em_empty(SHAPE(2), EM_I64), *i32 = em_empty(SHAPE(2), EM_I32);
    CHECK(em_max_dim_out(vals, idx, b, 1, false) == EM_OK && tshape_is(vals, SHAPE(5)) && tshape_is(idx, SHAPE(5)));
    CHECK(em_min_dim_out(vals, idx, b, 0, true) == EM_OK && tshape_is(idx, SHAPE(1, 7)));
    CHECK(em_argmax_out(idx, b, NULL, false) == EM_OK && tshape_is(idx, 0, NULL));
    CHECK(em_argmin_out(idx, b, (int[]){1}, false) == EM_OK && tshape_is(idx, SHAPE(5)));
    CHECK_ERR(em_max_dim_out(idx, idx, b, 1, false), EM_ERR_DTYPE);
    CHECK_ERR(em_argmax_out(i32, b, NULL, false), EM_ERR_DTYPE);
    em_tensor *bl = em_zeros(SHAPE(2), EM_BOOL), *bv, *bi;
    CHECK(em_max_dim(bl, 0, false, &bv, &bi) == EM_OK && em_dtype_of(bv) == EM_BOOL);
    CHECK_ERR(em_argmin(bl, NULL, false), EM_ERR_DTYPE);
    em_tensor *nv, *ni;
    CHECK_ERR(em_max_dim(b, 2, false, &nv, &ni), EM_ERR_INDEX);
    CHECK(!nv && !ni);
    em_tensor *all[] = {b, x, am, amk, vals, idx, i32, bl, bv, bi};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_max_dim, EM_OP_min_dim, EM_OP_argmax, EM_OP_argmin);
}

/* ---- scans ------------------------------------------------------------------ */

enum { CUMSUM, CUMPROD, CUMMAX, CUMMIN, LOGCUMSUMEXP };

static double log_add_exp(double a, double v)
{
    double lo = isnan(v) ? v : v < a ? v : a, hi = isnan(v) ? v : a < v ? v : a; /* std::min, std::max */
    return lo != hi || isfinite(lo) ? log1p(exp(lo - hi)) + hi : a;
}

static bool check_scan(int op, const struct dcase *c, int layout, em_dtype dt)
{
    em_tensor *x = tlayout(dt, c->ndim, c->sizes, layout, op == CUMPROD ? 0.9 : -2, op == CUMPROD ? 1.1 : 2);
    if (op >= CUMMAX && dt == EM_F32 && em_numel(x) > 5) sprinkle_nans(x, 5 * (int)em_numel(x) / 6);
    em_tensor *r = NULL, *ri = NULL;
    if (op == CUMSUM) r = em_cumsum(x, c->dim, EM_DTYPE_NONE);
    if (op == CUMPROD) r = em_cumprod(x, c->dim, EM_DTYPE_NONE);
    if (op == CUMMAX) em_cummax(x, c->dim, &r, &ri);
    if (op == CUMMIN) em_cummin(x, c->dim, &r, &ri);
    if (op == LOGCUMSUMEXP) r = em_logcumsumexp(x, c->dim);
    bool fl = em_dtype_is_float(dt), ok = r && tshape_is(r, em_ndim(x), em_sizes(x));
    ok = ok && em_dtype_of(r) == (op <= CUMPROD && !fl ? EM_I64 : dt);
    tlines L = lines_of(x, c->dim);
    double tol = dt == EM_F32 ? 3e-6 : dt == EM_BF16 ? 1e-2 : 1e-12;
    for (int64_t l = 0; ok && l < L.count && L.n; l++) {
        double acc = op == CUMPROD ? 1 : op == LOGCUMSUMEXP ? -INFINITY : 0, best = L.v[at(&L, l, 0)];
        int64_t bi = 0;
        for (int64_t i = 0; ok && i < L.n; i++) {
            double v = L.v[at(&L, l, i)], got = tval(r, at(&L, l, i));
            if (op == CUMSUM) acc += v;
            if (op == CUMPROD) acc *= v;
            if (op == LOGCUMSUMEXP) acc = log_add_exp(acc, v);
            if ((op == CUMMAX || op == CUMMIN) &&
                (isnan(v) || (!isnan(best) && (op == CUMMAX ? v >= best : v <= best))))
                best = v, bi = i;
            double want = op == CUMMAX || op == CUMMIN ? best : acc;
            ok = (isnan(got) && isnan(want)) || got == want || fabs(got - want) <= tol * (fabs(want) + i + 1);
            if (ri) ok = ok && tval(ri, at(&L, l, i)) == bi;
            if (!ok)
                fprintf(stderr, "  line %lld pos %lld: got %.9g want %.9g\n", (long long)l, (long long)i, got, want);
        }
    }
    if (!ok)
        fprintf(stderr, "  scan %d case ndim=%d dim=%d layout=%d %s\n", op, c->ndim, c->dim, layout, em_dtype_name(dt));
    free(L.v);
    em_release(x), em_release(r), em_release(ri);
    return ok;
}

TEST(reduce_scans)
{
    em_dtype dts[] = {EM_F64, EM_F32, EM_I32, EM_BF16};
    for (int op = CUMSUM; op <= LOGCUMSUMEXP; op++)
        for (size_t c = 0; c < NCASES; c++)
            for (int layout = 0; layout < 3; layout++)
                for (size_t t = 0; t < sizeof dts / sizeof *dts; t++) {
                    if ((big_case(&dcases[c]) && (layout || t)) || (op == LOGCUMSUMEXP && dts[t] == EM_I32)) continue;
                    if (dts[t] == EM_BF16 && op <= CUMPROD) continue; /* rounding at every step */
                    CHECK(check_scan(op, &dcases[c], layout, dts[t]));
                }
    /* dtype=, out= (computing in out's dtype), in place, errors */
    em_tensor *i = tt(EM_I32, SHAPE(2, 3), (double[]){1, 2, 3, 4, 5, 6}), *f = em_cumsum(i, 1, EM_F32);
    em_tensor *c16 = em_cumprod(i, 1, EM_I16), *out = em_empty(SHAPE(1), EM_F64);
    CHECK(f && em_dtype_of(f) == EM_F32 && tval(f, 5) == 15 && em_dtype_of(c16) == EM_I16 && tval(c16, 5) == 120);
    CHECK(em_cumsum_out(out, i, 0, EM_DTYPE_NONE) == EM_OK && tshape_is(out, SHAPE(2, 3)) && tval(out, 4) == 7);
    CHECK(em_cumprod_out(out, i, -1, EM_DTYPE_NONE) == EM_OK && tval(out, 2) == 6);
    CHECK_ERR(em_cumsum_out(out, i, 0, EM_F32), EM_ERR_DTYPE);
    uint64_t ver = em_version(i);
    CHECK(em_cumsum_(i, 0, EM_DTYPE_NONE) == EM_OK && em_dtype_of(i) == EM_I32 && tval(i, 3) == 5 &&
          em_version(i) > ver);
    CHECK(em_cumprod_(i, 1, EM_DTYPE_NONE) == EM_OK && tval(i, 5) == 5 * 7 * 9);
    CHECK_ERR(em_cumsum_(i, 0, EM_F32), EM_ERR_DTYPE);
    em_tensor *h = em_zeros(SHAPE(3), EM_F16), *vi[2], *vo = em_empty(SHAPE(2, 3), EM_I32),
              *io = em_empty(SHAPE(1), EM_I64);
    CHECK_ERR(em_cumsum(h, 0, EM_DTYPE_NONE), EM_ERR_DTYPE);
    CHECK_ERR(em_cumsum(i, 0, EM_BOOL), EM_ERR_DTYPE);
    CHECK_ERR(em_cummax(h, 0, &vi[0], &vi[1]), EM_ERR_DTYPE);
    CHECK_ERR(em_logcumsumexp(i, 0), EM_ERR_DTYPE);
    CHECK_ERR(em_cumsum(i, 2, EM_DTYPE_NONE), EM_ERR_INDEX);
    CHECK(em_cummax_out(vo, io, i, 1) == EM_OK && tshape_is(io, SHAPE(2, 3)) && tval(io, 5) == 2);
    CHECK(em_cummin_out(vo, io, i, 1) == EM_OK && tval(io, 5) == 0);
    em_tensor *lf = em_empty(SHAPE(1), EM_F32), *fx = em_to_dtype(i, EM_F32);
    CHECK(em_logcumsumexp_out(lf, fx, 0) == EM_OK && tshape_is(lf, SHAPE(2, 3)));
    CHECK_ERR(em_cummax_out(out, io, i, 1), EM_ERR_DTYPE);
    em_tensor *all[] = {i, f, c16, out, h, vo, io, lf, fx};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_cumsum, EM_OP_cumprod, EM_OP_cummax, EM_OP_cummin, EM_OP_logcumsumexp);
}

/* ---- median, nanmedian, mode ------------------------------------------------ */

static int cmp_nan_last(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

/* The reference value of median/nanmedian (mode 0, 1) or mode (2) of a line. */
static double line_ref(const double *line, int64_t n, int mode, int64_t *index)
{
    double *s = malloc((size_t)(n ? n : 1) * sizeof *s);
    memcpy(s, line, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_nan_last);
    int64_t real = 0, first_nan = -1;
    for (int64_t i = 0; i < n; i++)
        real += !isnan(line[i]), first_nan = first_nan < 0 && isnan(line[i]) ? i : first_nan;
    double want = NAN;
    *index = first_nan;
    if (mode == 2) {
        int64_t best = 0, run = 0, best_len = 0;
        for (int64_t i = 0; i < n; i++) {
            run++;
            if (i == n - 1 || !(s[i] == s[i + 1])) { /* each NaN is a run of its own */
                if (run > best_len) best = i, best_len = run;
                run = 0;
            }
        }
        want = s[best];
        if (!isnan(want)) /* the last occurrence */
            for (int64_t i = 0; i < n; i++) *index = line[i] == want ? i : *index;
    } else if (real && (mode == 1 || real == n)) {
        want = s[(real - 1) / 2];
        *index = 0;
        while (line[*index] != want) (*index)++;
    }
    free(s);
    return want;
}

static bool check_select(int mode, const struct dcase *c, int layout, em_dtype dt)
{
    em_tensor *x = tlayout(dt, c->ndim, c->sizes, layout, 0, mode == 2 ? 4 : 50), *vals = NULL, *idx = NULL;
    if (dt == EM_F32 && em_numel(x) > 3) sprinkle_nans(x, 3);
    tlines L = lines_of(x, c->dim);
    em_status st = (mode == 0 ? em_median_dim : mode == 1 ? em_nanmedian_dim : em_mode)(x, c->dim, false, &vals, &idx);
    bool ok = L.n ? st == EM_OK && em_dtype_of(vals) == dt : st == EM_ERR_INDEX;
    double *line = malloc((size_t)(L.n ? L.n : 1) * sizeof *line);
    for (int64_t l = 0; ok && L.n && l < L.count; l++) {
        for (int64_t i = 0; i < L.n; i++) line[i] = L.v[at(&L, l, i)];
        int64_t wi;
        double want = line_ref(line, L.n, mode, &wi), got = tval(vals, l);
        ok = (got == want || (isnan(got) && isnan(want))) && tval(idx, l) == wi;
        if (!ok)
            fprintf(stderr, "  line %lld: got %g at %g, want %g at %lld\n", (long long)l, got, tval(idx, l), want,
                    (long long)wi);
    }
    if (!ok)
        fprintf(stderr, "  select %d case ndim=%d dim=%d layout=%d %s\n", mode, c->ndim, c->dim, layout,
                em_dtype_name(dt));
    free(line);
    free(L.v);
    em_release(x), em_release(vals), em_release(idx);
    return ok;
}

TEST(reduce_median_and_mode)
{
    em_dtype dts[] = {EM_F32, EM_I64, EM_F64, EM_U8, EM_BF16};
    for (int mode = 0; mode < 3; mode++)
        for (size_t c = 0; c < NCASES; c++)
            for (int layout = 0; layout < 3; layout++)
                for (size_t t = 0; t < sizeof dts / sizeof *dts; t++) {
                    if (big_case(&dcases[c]) && (layout || t)) continue;
                    CHECK(check_select(mode, &dcases[c], layout, dts[t]));
                }
    double v[] = {3, 1, NAN, 2, 5, 4};
    em_tensor *x = tt(EM_F32, SHAPE(6), v), *m = em_median(x), *nm = em_nanmedian(x), *e = em_zeros(SHAPE(0), EM_F64);
    em_tensor *em = em_median(e), *ev = tt(EM_F64, SHAPE(2, 3), (double[]){4, 1, 3, 2, 6, 5}), *mt = em_median(ev);
    em_tensor *b = em_zeros(SHAPE(3), EM_BOOL), *bv, *bi, *vals = em_empty(SHAPE(1), EM_F32),
              *idx = em_empty(SHAPE(1), EM_I64);
    CHECK(isnan(tval(m, 0)) && tval(nm, 0) == 3 && isnan(tval(em, 0)));
    CHECK(mt && tval(mt, 0) == 3); /* the lower median */
    CHECK(em_median_dim_out(vals, idx, x, 0, false) == EM_OK && isnan(tval(vals, 0)) && tval(idx, 0) == 2);
    CHECK(em_nanmedian_dim_out(vals, idx, x, 0, true) == EM_OK && tval(vals, 0) == 3 && tval(idx, 0) == 0);
    CHECK(em_mode_out(vals, idx, x, 0, false) == EM_OK);
    CHECK(em_mode(b, 0, false, &bv, &bi) == EM_OK && tval(bv, 0) == 0 && tval(bi, 0) == 2);
    CHECK_ERR(em_median(b), EM_ERR_DTYPE);
    em_tensor *nv, *ni;
    CHECK_ERR(em_median_dim(e, 0, false, &nv, &ni), EM_ERR_INDEX);
    CHECK_ERR(em_mode_out(idx, idx, x, 0, false), EM_ERR_DTYPE);
    em_tensor *all[] = {x, m, nm, e, em, ev, mt, b, bv, bi, vals, idx};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_median, EM_OP_median_dim, EM_OP_nanmedian, EM_OP_nanmedian_dim, EM_OP_mode);
}

/* ---- softmax ------------------------------------------------------------------- */

static bool check_softmax(bool take_log, const struct dcase *c, int layout, em_dtype dt)
{
    em_tensor *x = tlayout(dt, c->ndim, c->sizes, layout, -20, 20);
    em_tensor *r = take_log ? em_log_softmax(x, c->dim, EM_DTYPE_NONE) : em_softmax(x, c->dim, EM_DTYPE_NONE);
    bool ok = r && em_dtype_of(r) == dt && tshape_is(r, em_ndim(x), em_sizes(x));
    tlines L = lines_of(x, c->dim);
    double rtol = dt == EM_F32 ? 1e-5 : dt == EM_BF16 ? 1e-2 : 1e-13; /* x - max rounds in float */
    for (int64_t l = 0; ok && L.n && l < L.count; l++) {
        double mx = -INFINITY, s = 0;
        for (int64_t i = 0; i < L.n; i++) mx = fmax(mx, L.v[at(&L, l, i)]);
        for (int64_t i = 0; i < L.n; i++) s += exp(L.v[at(&L, l, i)] - mx);
        for (int64_t i = 0; ok && i < L.n; i++) {
            double v = L.v[at(&L, l, i)], want = take_log ? v - mx - log(s) : exp(v - mx) / s,
                   got = tval(r, at(&L, l, i));
            ok = fabs(got - want) <= rtol * (fabs(want) + (take_log ? 1 + fabs(mx) : 0)) + (take_log ? 0 : 1e-37);
            if (!ok)
                fprintf(stderr, "  line %lld pos %lld: got %.9g want %.9g\n", (long long)l, (long long)i, got, want);
        }
    }
    if (!ok)
        fprintf(stderr, "  %s case ndim=%d dim=%d layout=%d %s\n", take_log ? "log_softmax" : "softmax", c->ndim,
                c->dim, layout, em_dtype_name(dt));
    free(L.v);
    em_release(x), em_release(r);
    return ok;
}

TEST(reduce_softmax)
{
    em_dtype dts[] = {EM_F32, EM_F64, EM_BF16};
    for (int lg = 0; lg < 2; lg++)
        for (size_t c = 0; c < NCASES; c++)
            for (int layout = 0; layout < 3; layout++)
                for (size_t t = 0; t < sizeof dts / sizeof *dts; t++) {
                    if (big_case(&dcases[c]) && (layout || t)) continue;
                    CHECK(check_softmax(lg, &dcases[c], layout, dts[t]));
                }
    /* infinities as PyTorch: all -inf or any +inf gives NaN; log of a -inf is -inf */
    em_tensor *x = tt(EM_F32, SHAPE(3, 2), (double[]){-INFINITY, -INFINITY, INFINITY, 1, -INFINITY, 1});
    em_tensor *s = em_softmax(x, 1, EM_DTYPE_NONE), *ls = em_log_softmax(x, -1, EM_DTYPE_NONE);
    CHECK(isnan(tval(s, 0)) && isnan(tval(s, 2)) && isnan(tval(s, 3)) && tval(s, 4) == 0 && tval(s, 5) == 1);
    CHECK(tval(ls, 4) == -INFINITY && tval(ls, 5) == 0);
    em_tensor *i = trand(EM_I32, SHAPE(2, 3), 0, 5), *sd = em_softmax(i, 1, EM_F64), *out = em_empty(SHAPE(1), EM_F64);
    CHECK(sd && em_dtype_of(sd) == EM_F64 && fabs(tval(sd, 0) + tval(sd, 1) + tval(sd, 2) - 1) < 1e-15);
    CHECK(em_softmax_out(out, i, 0, EM_F64) == EM_OK && tshape_is(out, SHAPE(2, 3)));
    CHECK(em_log_softmax_out(out, sd, 0, EM_DTYPE_NONE) == EM_OK);
    CHECK_ERR(em_softmax(i, 1, EM_DTYPE_NONE), EM_ERR_DTYPE);
    CHECK_ERR(em_softmax(x, 1, EM_F16), EM_ERR_DTYPE);
    CHECK_ERR(em_log_softmax(x, 2, EM_DTYPE_NONE), EM_ERR_INDEX);
    CHECK_ERR(em_softmax_out(out, x, 0, EM_DTYPE_NONE), EM_ERR_DTYPE);
    em_tensor *all[] = {x, s, ls, i, sd, out};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    COVER(EM_OP_softmax, EM_OP_log_softmax);
}
