/* Random generators and random ops: Philox known answers, determinism and
 * state replay, independence from the thread count, distributions (mean,
 * variance, Kolmogorov-Smirnov, counts) and PyTorch's argument errors.
 * Bounds are 5 or more standard deviations wide for 1e5 draws: loose for a
 * correct sampler, far too tight for a biased or truncated one. */
#include "../../src/cpu/philox_block.h"
#include "test.h"

#define N 100000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Kolmogorov-Smirnov distance between the values of t and the CDF `cdf`. */
static double ks_distance(const em_tensor *t, double (*cdf)(double))
{
    int64_t n = em_numel(t);
    double *v = tvals(t), d = 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    for (int64_t i = 0; i < n; i++) {
        double f = cdf(v[i]), lo = f - (double)i / n, hi = (double)(i + 1) / n - f;
        d = fmax(d, fmax(lo, hi));
    }
    free(v);
    return d;
}
/* KS distance above which a correct sampler fails once in 1000 runs */
#define KS_LIMIT(n) (1.95 / sqrt((double)(n)))

static double uniform_cdf(double x) { return x < 0 ? 0 : x > 1 ? 1 : x; }
static double normal_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }
static double exp2_cdf(double x) { return x < 0 ? 0 : 1 - exp(-2 * x); }

/* sample mean and variance of t's values */
static void moments(const em_tensor *t, double *mean, double *var)
{
    int64_t n = em_numel(t);
    double *v = tvals(t), s = 0, ss = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    *mean = s / n;
    for (int64_t i = 0; i < n; i++) ss += (v[i] - *mean) * (v[i] - *mean);
    *var = ss / (n - 1);
    free(v);
}

static bool same_data(const em_tensor *a, const em_tensor *b)
{
    return em_numel(a) == em_numel(b) && em_dtype_of(a) == em_dtype_of(b) &&
           !memcmp(em_data_ptr(a), em_data_ptr(b), (size_t)em_numel(a) * em_dtype_size(em_dtype_of(a)));
}

TEST(philox_known_answers)
{
    /* Random123's known-answer vectors for Philox4x32-10 */
    static const uint32_t ctr[3][4] = {{0, 0, 0, 0}, {~0u, ~0u, ~0u, ~0u}, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}};
    static const uint32_t key[3][2] = {{0, 0}, {~0u, ~0u}, {0xa4093822, 0x299f31d0}};
    static const uint32_t want[3][4] = {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
                                        {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                                        {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int k = 0; k < 3; k++) {
        uint32_t out[4];
        em_philox4x32(ctr[k], key[k], out);
        CHECK(!memcmp(out, want[k], sizeof out));
    }
    /* the vectorized block gives the same words, also across a carry into the counter's high half */
    uint32_t block[EM_PHILOX_WORDS];
    const uint64_t seed = 0x0123456789abcdefull, first = (1ull << 32) - 10;
    cpu_philox_block(seed, first, block);
    for (int j = 0; j < EM_PHILOX_BLOCK; j++) {
        uint32_t one[4];
        em_philox_words(seed, first + (uint64_t)j, one);
        CHECK_MSG(!memcmp(one, block + 4 * j, sizeof one), "counter %d of the block", j);
    }
}

TEST(generator_seed_state_clone)
{
    int64_t n = 1000;
    em_generator *g = em_generator_new(42), *h = em_generator_new(42), *other = em_generator_new(43);
    em_tensor *a = em_rand(SHAPE(n), EM_F32, g), *b = em_rand(SHAPE(n), EM_F32, h), *c = em_rand(SHAPE(n), EM_F32, other);
    CHECK(a && b && c && same_data(a, b) && !same_data(a, c));
    CHECK(em_generator_initial_seed(g) == 42);
    /* a saved state replays; a clone continues independently */
    uint8_t state[EM_GENERATOR_STATE_SIZE];
    em_generator_get_state(g, state);
    em_generator *k = em_generator_clone(g);
    em_tensor *d1 = em_randn(SHAPE(n), EM_F64, g), *d2 = em_randn(SHAPE(n), EM_F64, g), *dk = em_randn(SHAPE(n), EM_F64, k);
    CHECK(d1 && d2 && dk && !same_data(d1, d2) && same_data(d1, dk));
    CHECK(em_generator_set_state(g, state, sizeof state) == EM_OK);
    em_tensor *replay = em_randn(SHAPE(n), EM_F64, g);
    CHECK(replay && same_data(replay, d1));
    /* manual_seed restarts the stream */
    em_generator_manual_seed(g, 42);
    em_tensor *again = em_rand(SHAPE(n), EM_F32, g);
    CHECK(again && same_data(again, a));
    /* bad states leave the generator alone */
    uint8_t bad[EM_GENERATOR_STATE_SIZE], kept[EM_GENERATOR_STATE_SIZE];
    memset(bad, 7, sizeof bad);
    em_generator_get_state(g, state);
    CHECK_ERR(em_generator_set_state(g, state, 5), EM_ERR_RUNTIME);
    CHECK_ERR(em_generator_set_state(g, bad, sizeof bad), EM_ERR_RUNTIME);
    CHECK_ERR(em_generator_set_state(g, NULL, sizeof bad), EM_ERR_VALUE);
    em_generator_get_state(g, kept);
    CHECK(!memcmp(state, kept, sizeof state));
    em_tensor *all[] = {a, b, c, d1, d2, dk, replay, again};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    em_generator_free(g), em_generator_free(h), em_generator_free(other), em_generator_free(k);
    COVER(EM_OP_uniform, EM_OP_normal);
}

TEST(default_generator_and_manual_seed)
{
    em_manual_seed(7);
    CHECK(em_generator_initial_seed(NULL) == 7 && em_generator_initial_seed(em_default_generator()) == 7);
    em_tensor *a = em_randint(0, 1000, SHAPE(64), EM_DTYPE_NONE, NULL);
    em_manual_seed(7);
    em_tensor *b = em_randint(0, 1000, SHAPE(64), EM_DTYPE_NONE, em_default_generator());
    em_generator *g = em_generator_new(7);
    em_tensor *c = em_randint(0, 1000, SHAPE(64), EM_DTYPE_NONE, g);
    CHECK(a && b && c && em_dtype_of(a) == EM_I64 && same_data(a, b) && same_data(a, c));
    em_generator_free(em_default_generator()); /* ignored */
    em_manual_seed(EM_DEFAULT_SEED);
    em_release(a), em_release(b), em_release(c), em_generator_free(g);
    COVER(EM_OP_random);
}

/* Each op advances its generator by the counters it used (four words each),
 * so consecutive calls read one stream. */
TEST(generator_offset_counts_counters)
{
    em_generator *g = em_generator_new(5), *h = em_generator_new(5);
    em_tensor *first = em_rand(SHAPE(5), EM_F32, g), *next = em_rand(SHAPE(4), EM_F32, g); /* 2 counters, then 1 */
    em_tensor *whole = em_rand(SHAPE(12), EM_F32, h);
    CHECK(first && next && whole);
    for (int i = 0; i < 5; i++) CHECK(tval(first, i) == tval(whole, i));
    for (int i = 0; i < 4; i++) CHECK(tval(next, i) == tval(whole, 8 + i));
    /* float64 takes two words per element: 3 elements use 2 counters */
    em_generator_manual_seed(g, 5), em_generator_manual_seed(h, 5);
    em_tensor *d = em_rand(SHAPE(3), EM_F64, g), *f = em_rand(SHAPE(4), EM_F32, g), *w = em_rand(SHAPE(12), EM_F32, h);
    CHECK(d && f && w);
    for (int i = 0; i < 4; i++) CHECK(tval(f, i) == tval(w, 8 + i));
    em_tensor *all[] = {first, next, whole, d, f, w};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    em_generator_free(g), em_generator_free(h);
}

/* Runs `make` with 1, 2 and 3 threads from the same seed; all must agree. */
typedef em_tensor *(*maker)(em_generator *g);
static bool thread_count_independent(maker make)
{
    em_generator *g = em_generator_new(1234);
    int saved = em_get_num_threads();
    em_tensor *ref = NULL;
    bool ok = true;
    for (int threads = 1; threads <= 3 && ok; threads++) {
        em_set_num_threads(threads);
        em_generator_manual_seed(g, 1234);
        em_tensor *t = make(g);
        ok = t && (!ref || same_data(t, ref));
        if (!ref) {
            ref = t;
        } else {
            em_release(t);
        }
    }
    em_set_num_threads(saved);
    em_release(ref);
    em_generator_free(g);
    return ok;
}

#define BIG 200003 /* above the parallel grain, not a multiple of a block */
static em_tensor *make_rand32(em_generator *g) { return em_rand(SHAPE(BIG), EM_F32, g); }
static em_tensor *make_rand16(em_generator *g) { return em_rand(SHAPE(BIG), EM_BF16, g); }
static em_tensor *make_randn32(em_generator *g) { return em_randn(SHAPE(BIG), EM_F32, g); }
static em_tensor *make_randn64(em_generator *g) { return em_randn(SHAPE(BIG), EM_F64, g); }
static em_tensor *make_randint(em_generator *g) { return em_randint(-5, 1LL << 40, SHAPE(BIG), EM_I64, g); }
static em_tensor *make_randint8(em_generator *g) { return em_randint(-5, 100, SHAPE(BIG), EM_I8, g); }
static em_tensor *make_bernoulli(em_generator *g)
{
    em_tensor *t = em_zeros(SHAPE(BIG), EM_U8);
    if (t && em_bernoulli_(t, 0.25, g)) em_release(t), t = NULL;
    return t;
}
static em_tensor *make_exponential(em_generator *g)
{
    em_tensor *t = em_empty(SHAPE(BIG), EM_F32);
    if (t && em_exponential_(t, 3, g)) em_release(t), t = NULL;
    return t;
}
static em_tensor *make_normal_tensor(em_generator *g)
{
    em_tensor *m = em_full(SHAPE(BIG / 7, 7), 2, EM_F32), *s = em_full(SHAPE(7), 0.5, EM_F32);
    em_tensor *r = em_normal(m, s, g);
    em_release(m), em_release(s);
    return r;
}
static em_tensor *make_multinomial(em_generator *g)
{
    em_tensor *p = em_ones(SHAPE(3000, 20), EM_F32);
    em_tensor *r = em_multinomial(p, 15, false, g);
    em_release(p);
    return r;
}
static em_tensor *make_multinomial_r(em_generator *g)
{
    em_tensor *p = em_ones(SHAPE(300, 20), EM_F64);
    em_tensor *r = em_multinomial(p, 200, true, g);
    em_release(p);
    return r;
}

TEST(random_ops_independent_of_thread_count)
{
    maker makers[] = {make_rand32, make_rand16, make_randn32, make_randn64, make_randint, make_randint8,
                      make_bernoulli, make_exponential, make_normal_tensor, make_multinomial, make_multinomial_r};
    for (size_t i = 0; i < sizeof makers / sizeof *makers; i++) CHECK_MSG(thread_count_independent(makers[i]), "maker %zu", i);
    COVER(EM_OP_bernoulli, EM_OP_exponential, EM_OP_multinomial);
}

TEST(uniform_distribution)
{
    em_generator *g = em_generator_new(11);
    em_dtype dts[] = {EM_F32, EM_F64, EM_F16, EM_BF16};
    for (size_t k = 0; k < 4; k++) {
        em_tensor *t = em_rand(SHAPE(N), dts[k], g);
        CHECK(t && em_dtype_of(t) == dts[k]);
        double *v = tvals(t), mean, var;
        bool in_range = true;
        for (int64_t i = 0; i < N; i++) in_range &= v[i] >= 0 && v[i] < 1;
        free(v);
        CHECK_MSG(in_range, "%s: value outside [0, 1)", em_dtype_name(dts[k]));
        moments(t, &mean, &var);
        CHECK_MSG(fabs(mean - 0.5) < 0.005 && fabs(var - 1.0 / 12) < 0.0015, "%s: mean %g var %g",
                  em_dtype_name(dts[k]), mean, var);
        /* bfloat16 has only 256 values in [0, 1): its CDF is a staircase */
        double ks = ks_distance(t, uniform_cdf), limit = dts[k] == EM_BF16 ? 1.0 / 256 + KS_LIMIT(N) : KS_LIMIT(N);
        CHECK_MSG(ks < limit, "%s: KS distance %g", em_dtype_name(dts[k]), ks);
        em_release(t);
    }
    /* uniform_ on [-3, 5) in place, through a transposed (non-contiguous) view */
    em_tensor *base = em_zeros(SHAPE(400, 250), EM_F64), *view = em_t(base);
    uint64_t version = em_version(base);
    CHECK(em_uniform_(view, -3, 5, g) == EM_OK && em_version(base) > version);
    double mean, var;
    moments(base, &mean, &var);
    CHECK(fabs(mean - 1) < 0.04 && fabs(var - 64.0 / 12) < 0.1);
    em_release(base), em_release(view), em_generator_free(g);
}

TEST(uniform_stays_below_to)
{
    /* from + U * (to - from) rounds up to `to` here for half of the draws */
    em_tensor *f = em_empty(SHAPE(1000), EM_F32), *h = em_empty(SHAPE(1000), EM_F16), *z = em_empty(SHAPE(10), EM_F64);
    CHECK(em_uniform_(f, 1, 1 + 0x1p-23, NULL) == EM_OK && em_uniform_(h, 1, 1 + 0x1p-10, NULL) == EM_OK);
    for (int i = 0; i < 1000; i++) CHECK(tval(f, i) == 1 && tval(h, i) == 1);
    CHECK(em_uniform_(z, 2, 2, NULL) == EM_OK && tval(z, 9) == 2); /* from == to */
    em_release(f), em_release(h), em_release(z);
}

/* The i-th value of an in-place draw is the i-th in row-major order,
 * whatever the target's layout. */
TEST(inplace_draw_follows_logical_order)
{
    em_generator *g = em_generator_new(3);
    em_tensor *base = em_zeros(SHAPE(5, 6), EM_F32), *view = em_t(base), *ref;
    CHECK(em_normal_(view, 1, 2, g) == EM_OK);
    em_generator_manual_seed(g, 3);
    ref = em_normal_float_float(1, 2, SHAPE(6, 5), EM_F32, g);
    CHECK(ref && em_equal(view, ref));
    em_release(base), em_release(view), em_release(ref), em_generator_free(g);
}

TEST(normal_distribution)
{
    em_generator *g = em_generator_new(12);
    em_dtype dts[] = {EM_F32, EM_F64, EM_BF16};
    for (size_t k = 0; k < 3; k++) {
        em_tensor *t = em_randn(SHAPE(N), dts[k], g);
        CHECK(t && em_dtype_of(t) == dts[k]);
        double mean, var, *v = tvals(t), m4 = 0;
        moments(t, &mean, &var);
        int64_t tail = 0;
        for (int64_t i = 0; i < N; i++) m4 += pow(v[i], 4) / N, tail += fabs(v[i]) > 3;
        free(v);
        double tol = dts[k] == EM_BF16 ? 0.02 : 0; /* bfloat16 keeps 8 bits */
        CHECK_MSG(fabs(mean) < 0.02 && fabs(var - 1) < 0.03 + tol && fabs(m4 - 3) < 0.15 + 6 * tol,
                  "%s: mean %g var %g m4 %g", em_dtype_name(dts[k]), mean, var, m4);
        CHECK_MSG(tail > 200 && tail < 340, "%s: %lld draws beyond 3 sigma", em_dtype_name(dts[k]), (long long)tail);
        double ks = ks_distance(t, normal_cdf);
        CHECK_MSG(ks < KS_LIMIT(N) + tol / 2, "%s: KS distance %g", em_dtype_name(dts[k]), ks);
        em_release(t);
    }
    /* normal_(mean, std) and std == 0 */
    em_tensor *t = em_empty(SHAPE(N), EM_F64), *z = em_empty(SHAPE(7), EM_F32);
    double mean, var;
    CHECK(em_normal_(t, -4, 3, g) == EM_OK && em_normal_(z, 2.5, 0, g) == EM_OK);
    moments(t, &mean, &var);
    CHECK(fabs(mean + 4) < 0.06 && fabs(var - 9) < 0.3);
    for (int i = 0; i < 7; i++) CHECK(tval(z, i) == 2.5);
    em_release(t), em_release(z), em_generator_free(g);
}

TEST(normal_tensor_forms)
{
    em_generator *g = em_generator_new(13);
    em_tensor *mean = tt(EM_F64, SHAPE(3), (const double[]){-100, 0, 100}), *std = em_zeros(SHAPE(2, 1), EM_F32);
    em_tensor *r = em_normal(mean, std, g); /* std 0: exactly the mean, broadcast to (2, 3) */
    CHECK(r && tshape_is(r, SHAPE(2, 3)) && em_dtype_of(r) == EM_F64);
    for (int i = 0; i < 6; i++) CHECK(tval(r, i) == tval(mean, i % 3));
    em_tensor *stdf = em_full(SHAPE(N), 2, EM_F32), *r2 = em_normal_float_tensor(10, stdf, g);
    em_tensor *meanf = em_full(SHAPE(N), -1, EM_F64), *r3 = em_normal_tensor_float(meanf, 0.5, g);
    CHECK(r2 && em_dtype_of(r2) == EM_F32 && r3 && em_dtype_of(r3) == EM_F64);
    double m, v;
    moments(r2, &m, &v);
    CHECK(fabs(m - 10) < 0.04 && fabs(v - 4) < 0.15);
    moments(r3, &m, &v);
    CHECK(fabs(m + 1) < 0.01 && fabs(v - 0.25) < 0.01);
    /* errors: dtype of the result, negative std (scalar and tensor), shapes; out stays as it was */
    em_tensor *lmean = em_zeros(SHAPE(3), EM_I64), *neg = em_full(SHAPE(3), -1, EM_F32), *out = em_zeros(SHAPE(4), EM_F32);
    CHECK_ERR(em_normal(lmean, stdf, g), EM_ERR_DTYPE);
    CHECK_ERR(em_normal_tensor_float(mean, -1, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_normal(mean, neg, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_normal_out(out, mean, neg, g), EM_ERR_RUNTIME);
    CHECK(tshape_is(out, SHAPE(4)) && tval(out, 0) == 0);
    CHECK_ERR(em_normal(mean, stdf, g), EM_ERR_SHAPE);
    CHECK_ERR(em_normal(NULL, stdf, g), EM_ERR_VALUE);
    CHECK(em_normal_out(out, mean, std, g) == EM_OK && tshape_is(out, SHAPE(2, 3)) && tval(out, 5) == 100);
    em_tensor *all[] = {mean, std, r, stdf, r2, meanf, r3, lmean, neg, out};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    em_generator_free(g);
}

TEST(exponential_distribution)
{
    em_tensor *t = em_empty(SHAPE(N), EM_F64), *h = em_empty(SHAPE(100), EM_F16), *inf = em_empty(SHAPE(3), EM_F32);
    CHECK(em_exponential_(t, 2, NULL) == EM_OK && em_exponential_(h, 1, NULL) == EM_OK);
    double mean, var;
    moments(t, &mean, &var);
    CHECK(fabs(mean - 0.5) < 0.008 && fabs(var - 0.25) < 0.015);
    CHECK(ks_distance(t, exp2_cdf) < KS_LIMIT(N));
    for (int i = 0; i < 100; i++) CHECK(tval(h, i) >= 0);
    CHECK(em_exponential_(inf, INFINITY, NULL) == EM_OK && tval(inf, 0) == 0);
    em_tensor *l = em_zeros(SHAPE(3), EM_I64);
    CHECK_ERR(em_exponential_(l, 1, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_exponential_(t, -1, NULL), EM_ERR_RUNTIME);
    em_release(t), em_release(h), em_release(inf), em_release(l);
}

TEST(randint_range_and_counts)
{
    em_generator *g = em_generator_new(14);
    em_tensor *t = em_randint(3, 13, SHAPE(N), EM_DTYPE_NONE, g);
    CHECK(t && em_dtype_of(t) == EM_I64);
    int64_t counts[10] = {0};
    const int64_t *p = em_data_ptr(t);
    for (int64_t i = 0; i < N; i++) {
        CHECK(p[i] >= 3 && p[i] < 13);
        counts[p[i] - 3]++;
    }
    double chi2 = 0;
    for (int k = 0; k < 10; k++) chi2 += pow(counts[k] - N / 10.0, 2) / (N / 10.0);
    CHECK_MSG(chi2 < 30, "chi-square %g over 9 degrees of freedom", chi2);
    /* a wide range (two words per draw), negative bounds, other dtypes */
    em_tensor *w = em_randint(-(1LL << 50), 1LL << 50, SHAPE(N), EM_I64, g);
    double mean, var;
    moments(w, &mean, &var);
    CHECK(fabs(mean) / 0x1p50 < 0.01 && fabs(var / 0x1p100 - 1.0 / 3) < 0.01);
    em_dtype dts[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_F16, EM_BF16, EM_F32, EM_F64, EM_BOOL};
    for (size_t k = 0; k < sizeof dts / sizeof *dts; k++) {
        int64_t lo = dts[k] == EM_U8 || dts[k] == EM_BOOL ? 0 : -3, hi = dts[k] == EM_BOOL ? 2 : 100;
        em_tensor *d = em_randint(lo, hi, SHAPE(1000), dts[k], g);
        CHECK(d && em_dtype_of(d) == dts[k]);
        double *v = tvals(d), lo_seen = 1e9, hi_seen = -1e9;
        for (int i = 0; i < 1000; i++) lo_seen = fmin(lo_seen, v[i]), hi_seen = fmax(hi_seen, v[i]);
        free(v);
        CHECK_MSG(lo_seen == lo && hi_seen == hi - 1, "%s: [%g, %g]", em_dtype_name(dts[k]), lo_seen, hi_seen);
        em_release(d);
    }
    /* random_: full ranges per dtype; random_from_ with and without `to` */
    em_tensor *r8 = em_empty(SHAPE(2000), EM_I8), *rf = em_empty(SHAPE(1000), EM_F16), *full = em_empty(SHAPE(1000), EM_I64);
    CHECK(em_random_(r8, g) == EM_OK && em_random_(rf, g) == EM_OK);
    double *v8 = tvals(r8), *vf = tvals(rf), max8 = 0, maxf = 0;
    for (int i = 0; i < 1000; i++) CHECK(v8[i] >= 0 && vf[i] >= 0 && vf[i] <= 2048 && vf[i] == floor(vf[i]));
    for (int i = 0; i < 2000; i++) max8 = fmax(max8, v8[i]);
    for (int i = 0; i < 1000; i++) maxf = fmax(maxf, vf[i]);
    free(v8), free(vf);
    CHECK(max8 == 127 && maxf > 1900);
    CHECK(em_random_from_(full, INT64_MIN, NULL, g) == EM_OK); /* all 2^64 values */
    int negative = 0;
    for (int i = 0; i < 1000; i++) negative += ((const int64_t *)em_data_ptr(full))[i] < 0;
    CHECK(negative > 400 && negative < 600);
    int64_t to = 5;
    CHECK(em_random_from_(r8, -2, &to, g) == EM_OK);
    for (int i = 0; i < 2000; i++) CHECK(tval(r8, i) >= -2 && tval(r8, i) < 5);
    em_tensor *all[] = {t, w, r8, rf, full};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    em_generator_free(g);
}

TEST(randint_errors)
{
    em_tensor *b = em_empty(SHAPE(3), EM_BOOL), *u = em_empty(SHAPE(3), EM_U8);
    CHECK_ERR(em_randint(5, 5, SHAPE(3), EM_I64, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_randint(0, 300, SHAPE(3), EM_U8, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_randint(-1, 3, SHAPE(3), EM_U8, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_randint(0, 3, SHAPE(3), EM_BOOL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_randint(0, 70000, SHAPE(3), EM_F16, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_randint(0, 3, SHAPE(-3), EM_I64, NULL), EM_ERR_SHAPE);
    CHECK(em_randint_out(u, 0, 3, SHAPE(4), NULL) == EM_OK && tshape_is(u, SHAPE(4)));
    int64_t to = -5;
    CHECK_ERR(em_random_from_(u, 0, &to, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_random_from_(u, 300, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_random_(NULL, NULL), EM_ERR_VALUE);
    CHECK(em_random_(b, NULL) == EM_OK);
    em_release(b), em_release(u);
}

TEST(randperm_is_a_permutation)
{
    em_generator *g = em_generator_new(15);
    int64_t sizes[] = {0, 1, 2, 10, 1000, 100003};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int64_t n = sizes[k];
        em_tensor *p = em_randperm(n, EM_DTYPE_NONE, g);
        CHECK(p && em_dtype_of(p) == EM_I64 && em_numel(p) == n);
        char *seen = calloc((size_t)n + 1, 1);
        const int64_t *v = em_data_ptr(p);
        bool ok = true;
        for (int64_t i = 0; i < n && ok; i++) {
            ok = v[i] >= 0 && v[i] < n && !seen[v[i]];
            if (ok) seen[v[i]] = 1;
        }
        free(seen);
        em_release(p);
        CHECK_MSG(ok, "randperm(%lld) is not a permutation", (long long)n);
    }
    /* every value is equally likely first: 4000 permutations of 5 */
    int64_t first[5] = {0};
    for (int trial = 0; trial < 4000; trial++) {
        em_tensor *p = em_randperm(5, EM_I32, g);
        CHECK(p && em_dtype_of(p) == EM_I32);
        first[(int)tval(p, 0)]++;
        em_release(p);
    }
    for (int k = 0; k < 5; k++) CHECK_MSG(first[k] > 680 && first[k] < 920, "value %d first %lld times", k, (long long)first[k]);
    em_tensor *f = em_randperm(2049, EM_F16, g), *o = em_zeros(SHAPE(2, 2), EM_F32);
    CHECK(f && em_randperm_out(o, 7, g) == EM_OK && tshape_is(o, SHAPE(7)));
    double sum = 0;
    for (int i = 0; i < 2049; i++) sum += tval(f, i);
    CHECK(sum == 2048.0 * 2049 / 2);
    CHECK_ERR(em_randperm(-1, EM_I64, g), EM_ERR_SHAPE);
    CHECK_ERR(em_randperm(3, EM_BOOL, g), EM_ERR_DTYPE);
    CHECK_ERR(em_randperm(129, EM_I8, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_randperm(2050, EM_F16, g), EM_ERR_RUNTIME);
    em_release(f), em_release(o), em_generator_free(g);
    COVER(EM_OP_randperm);
}

TEST(bernoulli_rates)
{
    em_generator *g = em_generator_new(16);
    em_tensor *x = em_empty(SHAPE(N), EM_F32), *r = em_bernoulli_p(x, 0.3, g);
    double mean, var;
    CHECK(r && em_dtype_of(r) == EM_F32);
    moments(r, &mean, &var);
    CHECK(fabs(mean - 0.3) < 0.007);
    /* per-element probabilities, broadcast in place into int64 and bool */
    em_tensor *p = tt(EM_F64, SHAPE(4), (const double[]){0, 1, 0.5, 0.9}), *li = em_empty(SHAPE(N / 4, 4), EM_I64);
    em_tensor *bo = em_empty(SHAPE(N / 4, 4), EM_BOOL);
    CHECK(em_bernoulli_tensor_(li, p, g) == EM_OK && em_bernoulli_(bo, 0.75, g) == EM_OK);
    double ones[4] = {0}, bsum = 0;
    for (int64_t i = 0; i < N; i++) ones[i % 4] += tval(li, i), bsum += tval(bo, i);
    CHECK(ones[0] == 0 && ones[1] == N / 4);
    CHECK(fabs(ones[2] / (N / 4) - 0.5) < 0.015 && fabs(ones[3] / (N / 4) - 0.9) < 0.01 && fabs(bsum / N - 0.75) < 0.007);
    em_tensor *b = em_bernoulli(p, g), *bo2 = em_empty(SHAPE(1), EM_BF16);
    CHECK(b && em_dtype_of(b) == EM_F64 && tval(b, 0) == 0 && tval(b, 1) == 1);
    CHECK(em_bernoulli_out(bo2, p, g) == EM_OK && tshape_is(bo2, SHAPE(4)) && tval(bo2, 1) == 1);
    /* errors */
    em_tensor *lp = em_zeros(SHAPE(4), EM_I64), *big = em_full(SHAPE(4), 1.5, EM_F32), *h = em_empty(SHAPE(4), EM_F16);
    em_tensor *col = em_full(SHAPE(2, 1), 0.5, EM_F32);
    CHECK_ERR(em_bernoulli(lp, g), EM_ERR_DTYPE);
    CHECK_ERR(em_bernoulli(h, g), EM_ERR_DTYPE);
    CHECK_ERR(em_bernoulli(big, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_bernoulli_(x, 1.5, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_bernoulli_(x, NAN, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_bernoulli_(h, 0.5, g), EM_ERR_DTYPE);
    CHECK_ERR(em_bernoulli_tensor_(p, col, g), EM_ERR_SHAPE);
    CHECK_ERR(em_bernoulli_tensor_(p, lp, g), EM_ERR_DTYPE);
    em_tensor *all[] = {x, r, p, li, bo, b, bo2, lp, big, h, col};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    em_generator_free(g);
}

TEST(multinomial_with_replacement)
{
    em_generator *g = em_generator_new(17);
    const double pv[5] = {0.1, 0.2, 0, 0.3, 0.4};
    em_tensor *p = tt(EM_F32, SHAPE(5), pv), *s = em_multinomial(p, N, true, g);
    CHECK(s && em_dtype_of(s) == EM_I64 && tshape_is(s, SHAPE(N)));
    int64_t counts[5] = {0};
    const int64_t *v = em_data_ptr(s);
    for (int64_t i = 0; i < N; i++) counts[v[i]]++;
    CHECK(counts[2] == 0);
    for (int k = 0; k < 5; k++) CHECK_MSG(fabs(counts[k] / (double)N - pv[k]) < 0.008, "category %d: %lld", k, (long long)counts[k]);
    /* 2-d, unnormalized weights, one row at a time */
    em_tensor *p2 = tt(EM_F64, SHAPE(2, 3), (const double[]){0, 0, 5, 1, 0, 0}), *s2 = em_multinomial(p2, 4, true, g);
    CHECK(s2 && tshape_is(s2, SHAPE(2, 4)));
    for (int i = 0; i < 4; i++) CHECK(tval(s2, i) == 2 && tval(s2, 4 + i) == 0);
    em_release(p), em_release(s), em_release(p2), em_release(s2), em_generator_free(g);
}

TEST(multinomial_without_replacement)
{
    em_generator *g = em_generator_new(18);
    const double pv[4] = {0.1, 0.2, 0.3, 0.4};
    const int rows = 20000;
    em_tensor *p1 = tt(EM_F64, SHAPE(4), pv), *p = em_empty(SHAPE(rows, 4), EM_F64);
    CHECK(em_copy_(p, p1) == EM_OK);
    em_tensor *s = em_multinomial(p, 4, false, g);
    CHECK(s && tshape_is(s, SHAPE(rows, 4)));
    const int64_t *v = em_data_ptr(s);
    int64_t first[4] = {0}, second[4] = {0};
    for (int r = 0; r < rows; r++) {
        int seen = 0;
        for (int k = 0; k < 4; k++) seen |= 1 << v[r * 4 + k];
        CHECK_MSG(seen == 15, "row %d repeats a category", r);
        first[v[r * 4]]++, second[v[r * 4 + 1]]++;
    }
    /* sequential sampling: P(first = k) = p_k, P(second = k) = sum_j p_j p_k / (1 - p_j) */
    for (int k = 0; k < 4; k++) {
        double p2 = 0;
        for (int j = 0; j < 4; j++)
            if (j != k) p2 += pv[j] * pv[k] / (1 - pv[j]);
        CHECK_MSG(fabs(first[k] / (double)rows - pv[k]) < 0.015 && fabs(second[k] / (double)rows - p2) < 0.015,
                  "category %d: first %lld second %lld", k, (long long)first[k], (long long)second[k]);
    }
    /* zero-probability categories come last; one sample is the argmax of the keys */
    em_tensor *z = tt(EM_F32, SHAPE(3), (const double[]){0, 1, 0}), *sz = em_multinomial(z, 3, false, g);
    em_tensor *one = em_multinomial(z, 1, false, g);
    CHECK(sz && tval(sz, 0) == 1 && tval(sz, 1) == 0 && tval(sz, 2) == 2 && one && tval(one, 0) == 1);
    em_release(p1), em_release(p), em_release(s), em_release(z), em_release(sz), em_release(one);
    em_generator_free(g);
}

TEST(multinomial_errors)
{
    em_generator *g = em_generator_new(19);
    uint8_t before[EM_GENERATOR_STATE_SIZE], after[EM_GENERATOR_STATE_SIZE];
    em_tensor *p = em_full(SHAPE(3), 0.5, EM_F32), *zeros = em_zeros(SHAPE(2, 3), EM_F32);
    em_tensor *neg = tt(EM_F32, SHAPE(3), (const double[]){1, -1, 3}), *inf = tt(EM_F64, SHAPE(3), (const double[]){1, INFINITY, 3});
    em_tensor *nan = tt(EM_F32, SHAPE(3), (const double[]){1, NAN, 3}), *l = em_zeros(SHAPE(3), EM_I64);
    em_tensor *h = em_ones(SHAPE(3), EM_F16), *cube = em_ones(SHAPE(2, 2, 2), EM_F32), *s0 = em_ones(SHAPE(0), EM_F32);
    em_tensor *fout = em_empty(SHAPE(2), EM_F32), *lout = em_zeros(SHAPE(7), EM_I64), *rows0 = em_ones(SHAPE(0, 3), EM_F32);
    em_generator_get_state(g, before);
    CHECK_ERR(em_multinomial(zeros, 1, false, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(zeros, 2, true, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(neg, 1, false, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(neg, 2, true, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(inf, 2, true, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(nan, 1, true, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial_out(lout, neg, 2, true, g), EM_ERR_RUNTIME);
    em_generator_get_state(g, after);
    CHECK(!memcmp(before, after, sizeof before) && tshape_is(lout, SHAPE(7))); /* nothing drawn or resized */
    CHECK_ERR(em_multinomial(p, 4, false, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(p, 0, true, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(s0, 1, false, g), EM_ERR_RUNTIME);
    CHECK_ERR(em_multinomial(l, 1, false, g), EM_ERR_DTYPE);
    CHECK_ERR(em_multinomial(h, 1, false, g), EM_ERR_DTYPE);
    CHECK_ERR(em_multinomial(cube, 1, false, g), EM_ERR_SHAPE);
    CHECK_ERR(em_multinomial_out(fout, p, 2, false, g), EM_ERR_DTYPE);
    CHECK_ERR(em_multinomial(NULL, 1, false, g), EM_ERR_VALUE);
    em_tensor *empty = em_multinomial(rows0, 2, false, g);
    CHECK(empty && tshape_is(empty, SHAPE(0, 2)));
    CHECK(em_multinomial_out(lout, p, 2, false, g) == EM_OK && tshape_is(lout, SHAPE(2)) && tval(lout, 0) != tval(lout, 1));
    em_tensor *all[] = {p, zeros, neg, inf, nan, l, h, cube, s0, fout, lout, rows0, empty};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    em_generator_free(g);
}

TEST(random_dtype_and_argument_errors)
{
    em_tensor *l = em_zeros(SHAPE(3), EM_I64), *f = em_zeros(SHAPE(3), EM_F32), *h = em_zeros(SHAPE(3), EM_F16);
    em_tensor *o = em_zeros(SHAPE(2), EM_F64), *ex = NULL, *one = em_zeros(SHAPE(1), EM_F32);
    CHECK_ERR(em_rand(SHAPE(2), EM_I64, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_rand(SHAPE(2), EM_BOOL, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_randn(SHAPE(2), EM_I32, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_rand(SHAPE(-1), EM_F32, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_uniform_(l, 0, 1, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_normal_(l, 0, 1, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_uniform_(f, 1, 0, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_uniform_(f, NAN, 1, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_uniform_(f, 0, INFINITY, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_uniform_(f, -3e38, 3e38, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_uniform_(h, 0, 7e4, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_normal_(f, 0, -1, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_normal_float_float(0, -1, SHAPE(2), EM_DTYPE_NONE, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_uniform_(NULL, 0, 1, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_rand_out(l, SHAPE(2), NULL), EM_ERR_DTYPE);
    /* in place into overlapping memory */
    CHECK(ex = em_expand(one, SHAPE(4)));
    CHECK_ERR(em_uniform_(ex, 0, 1, NULL), EM_ERR_RUNTIME);
    /* out= resizes */
    CHECK(em_rand_out(o, SHAPE(3, 3), NULL) == EM_OK && tshape_is(o, SHAPE(3, 3)) && tval(o, 8) >= 0);
    CHECK(em_randn_out(o, SHAPE(5), NULL) == EM_OK && tshape_is(o, SHAPE(5)));
    em_release(l), em_release(f), em_release(h), em_release(o), em_release(ex), em_release(one);
}

/* Two threads drawing from one generator get disjoint counters. */
TEST(shared_generator_is_locked)
{
    em_generator *g = em_generator_new(20), *h = em_generator_new(20);
    bool ok = true;
#pragma omp parallel for num_threads(2) reduction(&& : ok)
    for (int i = 0; i < 200; i++) {
        em_tensor *t = em_rand(SHAPE(4), EM_F32, g);
        ok = ok && t;
        em_release(t);
    }
    CHECK(ok);
    em_tensor *a = em_rand(SHAPE(4), EM_F32, g), *b = em_rand(SHAPE(804), EM_F32, h); /* 200 counters used */
    CHECK(a && b);
    for (int i = 0; i < 4; i++) CHECK(tval(a, i) == tval(b, 800 + i));
    em_release(a), em_release(b), em_generator_free(g), em_generator_free(h);
}
