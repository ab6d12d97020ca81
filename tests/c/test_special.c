/* Tests of torch.special's ops (include/ember/ops/special.def): values
 * against high-precision references (mpmath at 40 digits) in float64 and
 * float32, PyTorch 1.13's values at poles, infinities and out-of-domain
 * inputs, the dtype rule, param errors, and float64 gradchecks of the
 * differentiable ones (igamma, igammac and zeta in their second input only,
 * the first refusing as PyTorch does). */
#include "test.h"

typedef em_tensor *(*unary_fn)(const em_tensor *);
typedef em_tensor *(*binary_fn)(const em_tensor *, const em_tensor *);
typedef struct special_case {
    em_op op;
    unary_fn f1;
    binary_fn f2;
    double a, b, want;
} special_case;
#define U(op, x, v) {EM_OP_##op, em_##op, NULL, x, 0, v}
#define B(op, x, y, v) {EM_OP_##op, NULL, em_##op, x, y, v}

static em_tensor *scalar(em_dtype dt, double v) { return tt(dt, SHAPE(1), (const double[]){v}); }

static em_tensor *call(const special_case *c, em_dtype dt)
{
    em_tensor *x = scalar(dt, c->a), *y = c->f2 ? scalar(dt, c->b) : NULL;
    em_tensor *r = c->f2 ? c->f2(x, y) : c->f1(x);
    RELEASE(x, y);
    return r;
}

TEST(special_values)
{
    static const special_case cases[] = {
        U(lgamma, -2.5, -0.056243716497674054),
        U(lgamma, 30.0, 71.25703896716801),
        U(digamma, -2.5, 1.103156640645243),
        U(digamma, 7.25, 1.910453526883736),
        U(i0, 3.5, 7.3782034322254795),
        U(special_i0e, -40.0, 0.06327827987523534),
        U(special_i1, -2.5, -2.5167162452886984),
        U(special_i1e, 50.0, 0.0559931238928954),
        U(special_erfcx, -3.0, 16205.988853999586),
        U(special_erfcx, 30.0, 0.01879588886141675),
        U(special_ndtri, 1e-20, -9.262340089798407),
        U(special_ndtri, 0.75, 0.6744897501960817),
        U(special_log_ndtr, -30.0, -454.3212439563432),
        U(special_log_ndtr, 2.0, -0.02301290932896349),
        U(special_entr, 0.25, 0.34657359027997264),
        U(special_airy_ai, -7.5, 0.3217757163806479),
        U(special_airy_ai, 3.0, 0.006591139357460719),
        U(special_airy_ai, -30.0, -0.08796818845684216),
        U(special_bessel_j0, 7.0, 0.3000792705195556),
        U(special_bessel_j0, 40.0, 0.00736689058423729),
        U(special_bessel_j1, -1.5, -0.5579365079100996),
        U(special_bessel_y0, 0.5, -0.44451873350670656),
        U(special_bessel_y0, 12.0, -0.22523731263436145),
        U(special_bessel_y1, 3.5, 0.41018841788751187),
        U(special_bessel_y1, 60.0, 0.09186960936986689),
        U(special_modified_bessel_i0, -1.0, 1.2660658777520084),
        U(special_modified_bessel_i1, 4.0, 9.75946515370445),
        U(special_modified_bessel_k0, 0.1, 2.4270690247020164),
        U(special_modified_bessel_k0, 5.0, 0.0036910983340425942),
        U(special_modified_bessel_k1, 0.3, 3.055992033457325),
        U(special_modified_bessel_k1, 2.0, 0.13986588181652243),
        U(special_scaled_modified_bessel_k0, 100.0, 0.12517562165912657),
        U(special_scaled_modified_bessel_k1, 0.2, 5.833386037186726),
        U(special_spherical_bessel_j0, 2.0, 0.45464871341284085),
        B(igamma, 2.5, 1.5, 0.3000141641213725),
        B(igamma, 50.0, 45.0, 0.24680203440017026),
        B(igammac, 0.5, 3.0, 0.01430587843542964),
        B(igammac, 20.0, 30.0, 0.021873468441390854),
        B(special_zeta, 2.0, 1.0, 1.6449340668482264),
        B(special_zeta, 3.5, 2.25, 0.08901224249238886),
        B(special_zeta, 4.0, -1.5, 32.432379369864606),
        B(special_xlog1py, 2.0, 0.5, 0.8109302162163288),
        B(special_chebyshev_polynomial_t, 0.3, 5.0, 0.99888),
        B(special_chebyshev_polynomial_u, -1.2, 4.0, 16.897599999999997),
        B(special_shifted_chebyshev_polynomial_t, 0.3, 4.0, -0.0752000000000001),
        B(special_shifted_chebyshev_polynomial_u, 0.8, 3.0, -0.6719999999999996),
        B(special_hermite_polynomial_h, 1.5, 6.0, -201.0),
        B(special_hermite_polynomial_he, 1.5, 6.0, 21.703125),
        B(special_laguerre_polynomial_l, 2.5, 7.0, 0.10795665922619048),
        B(special_legendre_polynomial_p, -0.6, 9.0, 0.046103040000000074),
        B(special_chebyshev_polynomial_v, 0.4, 3.0, -0.728),
        B(special_chebyshev_polynomial_w, 0.4, 3.0, -1.448),
        B(special_shifted_chebyshev_polynomial_v, 0.4, 3.0, 1.576),
        B(special_shifted_chebyshev_polynomial_w, 0.4, 3.0, -0.104),
    };
    /* float64 against the reference; float32 against float64 at the same
     * (rounded) inputs, so that the inputs' rounding does not count */
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const special_case *c = &cases[k];
        em_tensor *r = call(c, EM_F64);
        CHECK_MSG(r && em_dtype_of(r) == EM_F64, "%s: %s", em_ops[c->op].name, em_last_error());
        double got = tval(r, 0);
        em_release(r);
        CHECK_MSG(fabs(got - c->want) <= 2e-13 * fabs(c->want), "%s(%g, %g) = %.17g, want %.17g",
                  em_ops[c->op].name, c->a, c->b, got, c->want);
        special_case rounded = *c;
        rounded.a = tcast(EM_F32, c->a), rounded.b = tcast(EM_F32, c->b);
        em_tensor *r64 = call(&rounded, EM_F64), *r32 = call(c, EM_F32);
        CHECK_MSG(r32 && em_dtype_of(r32) == EM_F32, "%s float32: %s", em_ops[c->op].name, em_last_error());
        double want32 = tval(r64, 0), got32 = tval(r32, 0);
        RELEASE(r64, r32);
        CHECK_MSG(fabs(got32 - want32) <= 1e-6 * fabs(want32), "%s(%g, %g) in float32 = %.9g, want %.9g",
                  em_ops[c->op].name, c->a, c->b, got32, want32);
        COVER(c->op);
    }
}

/* PyTorch 1.13's values at poles, zeros, infinities and outside the domains */
typedef struct edge_case {
    em_op op;
    unary_fn f1;
    binary_fn f2;
    int n;
    double a[8], b[8], want[8];
} edge_case;
#define EU(op, n, a, want) {EM_OP_##op, em_##op, NULL, n, a, {0}, want}
#define EB(op, n, a, b, want) {EM_OP_##op, NULL, em_##op, n, a, b, want}
#define V(...) {__VA_ARGS__}

static bool same(double got, double want)
{
    if (isnan(want)) return isnan(got);
    if (got != want) return false;
    return got != 0 || signbit(got) == signbit(want);
}

TEST(special_edge_values)
{
    const double inf = INFINITY, nan = NAN;
    static const edge_case cases[] = {
        EU(lgamma, 5, V(-inf, -3, 0, inf, nan), V(inf, inf, inf, inf, nan)),
        EU(digamma, 6, V(-inf, -3, -0.0, 0, inf, nan), V(nan, nan, inf, -inf, inf, nan)),
        EU(i0, 4, V(-inf, 0, inf, nan), V(nan, 1, nan, nan)),
        EU(special_i0e, 3, V(-inf, 0, inf), V(0, 1, 0)),
        EU(special_i1, 4, V(-inf, -0.0, 0, inf), V(nan, -0.0, 0, nan)),
        EU(special_i1e, 3, V(-inf, 0, inf), V(-0.0, 0, 0)),
        EU(special_erfcx, 4, V(-inf, 0, inf, nan), V(inf, 1, 0, nan)),
        EU(special_ndtri, 7, V(-0.5, 0, 0.5, 1, 1.5, inf, nan), V(nan, -inf, 0, inf, nan, nan, nan)),
        EU(special_log_ndtr, 4, V(-inf, 0, inf, nan), V(-inf, -0.69314718055994531, -0.0, nan)),
        EU(special_entr, 5, V(-1, 0, 1, inf, nan), V(-inf, 0, -0.0, -inf, nan)),
        EU(special_airy_ai, 4, V(-inf, 0, inf, 1e5), V(nan, 0.35502805388781724, nan, 0)),
        EU(special_bessel_j0, 4, V(-inf, 0, inf, nan), V(nan, 1, nan, nan)),
        EU(special_bessel_j1, 4, V(-inf, -0.0, 0, inf), V(nan, -0.0, 0, nan)),
        EU(special_bessel_y0, 5, V(-inf, -1, 0, inf, nan), V(nan, nan, -inf, nan, nan)),
        EU(special_bessel_y1, 4, V(-1, -0.0, 0, inf), V(nan, -inf, -inf, nan)),
        EU(special_modified_bessel_i0, 3, V(-inf, 0, inf), V(nan, 1, nan)),
        EU(special_modified_bessel_i1, 3, V(-inf, 0, inf), V(nan, 0, nan)),
        EU(special_modified_bessel_k0, 5, V(-1, -0.0, 0, inf, nan), V(nan, inf, inf, 0, nan)),
        EU(special_modified_bessel_k1, 4, V(-1, 0, inf, 1e5), V(nan, inf, 0, 0)),
        EU(special_scaled_modified_bessel_k0, 3, V(-1, 0, inf), V(nan, inf, 0)),
        EU(special_scaled_modified_bessel_k1, 3, V(-1, 0, inf), V(nan, inf, 0)),
        EU(special_spherical_bessel_j0, 4, V(-inf, 0, inf, nan), V(0, 1, 0, nan)),
        EB(igamma, 8, V(0, 0, 1, 1, -1, 2, inf, 2), V(0, 1, 0, inf, 1, -1, 2, inf), V(nan, 1, 0, 1, nan, nan, 0, 1)),
        EB(igammac, 8, V(0, 0, 1, 1, -1, 2, inf, 2), V(0, 1, 0, inf, 1, -1, 2, inf), V(nan, 0, 1, 0, nan, nan, 1, 0)),
        EB(special_zeta, 8, V(1, 0.5, 2, 2, 2, inf, 2, -1), V(1, 1, 0, -1, inf, 2, nan, 2),
           V(inf, nan, inf, inf, nan, nan, nan, nan)),
        EB(special_xlog1py, 4, V(0, 0, 0, 2), V(-1, -2, nan, -1), V(0, 0, nan, -inf)),
        EB(special_chebyshev_polynomial_t, 6, V(nan, 2, inf, inf, 1, -1), V(0, -1, 1, 3, 7, 7), V(1, 0, inf, nan, 1, -1)),
        EB(special_chebyshev_polynomial_u, 3, V(1, -1, 0.5), V(10, 10, -0.5), V(11, 11, 1)),
        EB(special_hermite_polynomial_h, 3, V(inf, 0, 2), V(3, 10, 1e30), V(nan, -30240, nan)),
        EB(special_laguerre_polynomial_l, 3, V(inf, 0, 1), V(1, 5, -2), V(-inf, 1, 0)),
        EB(special_legendre_polynomial_p, 3, V(1, -1, 0), V(9, 9, 10), V(1, -1, -0.24609375)),
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const edge_case *c = &cases[k];
        em_tensor *x = tt(EM_F64, SHAPE(c->n), c->a), *y = c->f2 ? tt(EM_F64, SHAPE(c->n), c->b) : NULL;
        em_tensor *r = c->f2 ? c->f2(x, y) : c->f1(x);
        CHECK_MSG(r, "%s: %s", em_ops[c->op].name, em_last_error());
        for (int i = 0; i < c->n; i++) {
            double got = tval(r, i);
            if (!same(got, c->want[i])) {
                RELEASE(x, y, r);
                CHECK_MSG(false, "%s(%g, %g) = %g, want %g", em_ops[c->op].name, c->a[i], c->b[i], got, c->want[i]);
            }
        }
        RELEASE(x, y, r);
    }
}

/* polygamma(n, x): the order as a param; PyTorch's errors for a negative or
 * non-integral n; trigamma (n = 1) reflected as PyTorch's, finite at the
 * negative integers */
TEST(special_polygamma)
{
    em_tensor *x = tt(EM_F64, SHAPE(3), (const double[]){1.5, -2.5, 10});
    em_tensor *p3 = em_polygamma(x, 3), *p1 = em_polygamma(x, 1), *p0 = em_polygamma(x, 0), *d = em_digamma(x);
    CHECK(p3 && p1 && p0 && d);
    CHECK(fabs(tval(p3, 0) - 1.4090910340024372) < 1e-14);
    CHECK(fabs(tval(p1, 1) - 9.539246644989124) < 1e-13);
    for (int i = 0; i < 3; i++) CHECK(tval(p0, i) == tval(d, i));
    CHECK_ERR(em_polygamma(x, -1), EM_ERR_RUNTIME);
    CHECK_ERR(em_polygamma(x, 1.5), EM_ERR_TYPE);
    em_tensor *neg = tt(EM_F64, SHAPE(1), (const double[]){-3}), *t = em_polygamma(neg, 1);
    CHECK(t && isfinite(tval(t, 0)) && tval(t, 0) > 1e30);
    RELEASE(x, p3, p1, p0, d, neg, t);
}

/* integral and bool inputs compute in the default float dtype; float16 through float32 */
TEST(special_dtypes)
{
    em_tensor *i = tt(EM_I64, SHAPE(2), (const double[]){1, 3}), *h = tt(EM_F16, SHAPE(2), (const double[]){1, 3});
    em_tensor *gi = em_lgamma(i), *gh = em_lgamma(h), *z = em_special_zeta(i, h);
    CHECK(gi && gh && z);
    CHECK(em_dtype_of(gi) == EM_F32 && em_dtype_of(gh) == EM_F16 && em_dtype_of(z) == EM_F16);
    CHECK(fabs(tval(gi, 1) - 0.69314718) < 1e-6 && fabs(tval(gh, 1) - 0.69314718) < 1e-3);
    RELEASE(i, h, gi, gh, z);
}

/* ---- gradients ------------------------------------------------------------ */
typedef struct grad_case {
    em_op op;
    unary_fn f1;
    binary_fn f2; /* with a constant first input */
    double lo, hi, first;
} grad_case;
static em_tensor *call_grad(em_tensor *const *in, const void *ctx)
{
    const grad_case *c = ctx;
    if (c->f1) return c->f1(in[0]);
    em_tensor *first = em_full(1, (const int64_t[]){1}, c->first, EM_F64), *r = c->f2(first, in[0]);
    em_release(first);
    return r;
}
static em_tensor *call_polygamma2(em_tensor *const *in, const void *ctx) { return (void)ctx, em_polygamma(in[0], 2); }
static em_tensor *call_xlog1py(em_tensor *const *in, const void *ctx)
{
    return (void)ctx, em_special_xlog1py(in[0], in[1]);
}

TEST(special_gradcheck)
{
    static const grad_case cases[] = {
        {EM_OP_lgamma, em_lgamma, NULL, 0.2, 4, 0},
        {EM_OP_digamma, em_digamma, NULL, 0.2, 4, 0},
        {EM_OP_i0, em_i0, NULL, -3, 3, 0},
        {EM_OP_special_i0e, em_special_i0e, NULL, 0.2, 3, 0},
        {EM_OP_special_i1, em_special_i1, NULL, -3, 3, 0},
        {EM_OP_special_i1e, em_special_i1e, NULL, 0.2, 3, 0},
        {EM_OP_special_erfcx, em_special_erfcx, NULL, -2, 3, 0},
        {EM_OP_special_ndtri, em_special_ndtri, NULL, 0.1, 0.9, 0},
        {EM_OP_special_log_ndtr, em_special_log_ndtr, NULL, -3, 3, 0},
        {EM_OP_special_entr, em_special_entr, NULL, 0.2, 2, 0},
        {EM_OP_igamma, NULL, em_igamma, 0.5, 3, 2.5},
        {EM_OP_igammac, NULL, em_igammac, 0.5, 3, 1.5},
        {EM_OP_special_zeta, NULL, em_special_zeta, 0.5, 3, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const grad_case *c = &cases[k];
        em_tensor *x = leaf(SHAPE(2, 3), c->lo, c->hi);
        CHECK_MSG(gradcheck(em_ops[c->op].name, call_grad, 1, &x, c), "%s", em_ops[c->op].name);
        CHECK_MSG(gradgradcheck(em_ops[c->op].name, call_grad, 1, &x, c), "%s (twice)", em_ops[c->op].name);
        em_release(x);
        GRAD_COVER(c->op);
    }
    em_tensor *x = leaf(SHAPE(2, 3), 0.3, 3), *y = leaf(SHAPE(3), -0.5, 2);
    CHECK(gradcheck("polygamma", call_polygamma2, 1, &x, NULL));
    CHECK(gradcheck("xlog1py", call_xlog1py, 2, (em_tensor *const[]){x, y}, NULL));
    CHECK(gradgradcheck("xlog1py", call_xlog1py, 2, (em_tensor *const[]){x, y}, NULL));
    GRAD_COVER(EM_OP_polygamma, EM_OP_special_xlog1py);
    RELEASE(x, y);
}

/* The inputs PyTorch does not differentiate: igamma's and zeta's first */
TEST(special_refused_gradients)
{
    em_tensor *a = leaf(SHAPE(2), 1, 2), *x = leaf(SHAPE(2), 1, 2), *s2 = em_add(a, a, 1);
    em_tensor *ops[] = {em_igamma(a, x), em_igammac(a, x), em_special_zeta(s2, x)};
    for (int k = 0; k < 3; k++) {
        CHECK(ops[k]);
        em_tensor *s = em_sum(ops[k], 0, NULL, false, EM_DTYPE_NONE);
        CHECK_ERR(em_backward(1, &s, NULL, false, false, 0, NULL), EM_ERR_NOT_IMPLEMENTED);
        em_release(s);
    }
    RELEASE(a, x, s2, ops[0], ops[1], ops[2]);
}
