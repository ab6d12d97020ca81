/* Tensor helpers for the C tests (see test.h). */
#include "test.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
double trandu(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (rng_state >> 11) * (1.0 / 9007199254740992.0);
}

em_tensor *tt(em_dtype dt, int ndim, const int64_t *sizes, const double *vals)
{
    em_tensor *t = em_empty(ndim, sizes, dt);
    if (!t) return NULL;
    int64_t n = em_numel(t), idx[EM_MAX_DIMS];
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i;
        for (int d = ndim - 1; d >= 0; d--) idx[d] = r % sizes[d], r /= sizes[d];
        em_set(t, idx, vals[i]);
    }
    return t;
}

em_tensor *trand(em_dtype dt, int ndim, const int64_t *sizes, double lo, double hi)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        double x = lo + (hi - lo) * trandu();
        if (dt == EM_BOOL) x = trandu() < 0.5;
        else if (!em_dtype_is_float(dt)) x = floor(x);
        v[i] = x;
    }
    em_tensor *t = tt(dt, ndim, sizes, v);
    free(v);
    return t;
}

em_tensor *tnoncontig(const em_tensor *t)
{
    int n = em_ndim(t);
    int64_t big[EM_MAX_DIMS + 1];
    memcpy(big, em_sizes(t), n * sizeof *big);
    big[n] = 2;
    em_tensor *b = em_zeros(n + 1, big, em_dtype_of(t));
    em_tensor *v = em_select(b, n, 1);
    em_release(b);
    if (!v || em_copy_(v, t)) {
        em_release(v);
        return NULL;
    }
    return v;
}

double tval(const em_tensor *t, int64_t i)
{
    int n = em_ndim(t);
    int64_t idx[EM_MAX_DIMS];
    for (int d = n - 1; d >= 0; d--) idx[d] = i % em_sizes(t)[d], i /= em_sizes(t)[d];
    double v = NAN;
    em_get(t, idx, &v);
    return v;
}

double *tvals(const em_tensor *t)
{
    int64_t n = em_numel(t);
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = tval(t, i);
    return v;
}

bool tshape_is(const em_tensor *t, int ndim, const int64_t *sizes)
{
    if (em_ndim(t) != ndim) return false;
    for (int i = 0; i < ndim; i++)
        if (em_sizes(t)[i] != sizes[i]) return false;
    return true;
}

bool tclose(const em_tensor *got, const double *want, double rtol, double atol)
{
    int64_t n = em_numel(got);
    for (int64_t i = 0; i < n; i++) {
        double g = tval(got, i), w = want[i];
        if (isnan(g) && isnan(w)) continue;
        if (g == w) continue;
        if (!(fabs(g - w) <= atol + rtol * fabs(w))) {
            fprintf(stderr, "  element %lld: got %.17g, want %.17g\n", (long long)i, g, w);
            return false;
        }
    }
    return true;
}

double trtol(em_dtype dt)
{
    switch (dt) {
    case EM_F16: return 2e-3;
    case EM_BF16: return 1.6e-2;
    case EM_F32: return 2e-6;
    case EM_F64: return 1e-12;
    default: return 0;
    }
}

em_tensor *tints(em_dtype dt, int ndim, const int64_t *sizes, int64_t lo, int64_t hi)
{
    em_tensor *i = trand(EM_I64, ndim, sizes, (double)lo, (double)hi), *r = em_to_dtype(i, dt);
    em_release(i);
    return r;
}

double tcast(em_dtype dt, double v)
{
    em_tensor *t = em_tensor_scalar(v, dt);
    double r = tval(t, 0);
    em_release(t);
    return r;
}

void tunravel(int64_t i, int ndim, const int64_t *sizes, int64_t *coord)
{
    for (int d = ndim - 1; d >= 0; d--) coord[d] = i % sizes[d], i /= sizes[d];
}

int64_t travel(int ndim, const int64_t *sizes, const int64_t *coord)
{
    int64_t i = 0;
    for (int d = 0; d < ndim; d++) i = i * sizes[d] + coord[d];
    return i;
}

void trelease_n(em_tensor *const *ts, size_t n)
{
    for (size_t i = 0; i < n; i++) em_release(ts[i]);
}

em_tensor *tlayout(em_dtype dt, int ndim, const int64_t *sizes, int layout, double lo, double hi)
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
