/* Pointwise binary and ternary ops: result dtypes with Python-scalar-like
 * operands, edge values and errors, each as PyTorch 1.13 gives them (values
 * taken from torch), and the large threaded path. Values over every dtype and
 * layout: test_binary.c. */
#include "test.h"

/* ---- helpers ----------------------------------------------------------- */
#define NV(...) (int)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
/* a 1-d tensor of dtype dt from the listed values */
#define V(dt, ...) tt(dt, 1, (const int64_t[]){NV(__VA_ARGS__)}, (const double[]){__VA_ARGS__})
/* a 1-d int64 tensor from exact values */
#define VI64(...) em_from_data((const int64_t[]){__VA_ARGS__}, 1, \
                               (const int64_t[]){sizeof((const int64_t[]){__VA_ARGS__}) / 8}, EM_I64)

/* r (released here) has dtype dt and the values want, within rtol (nan == nan) */
static bool expect(em_tensor *r, const char *what, em_dtype dt, int n, const double *want, double rtol)
{
    bool ok = r && em_dtype_of(r) == dt && em_numel(r) == n && tclose(r, want, rtol, 0);
    if (!ok) fprintf(stderr, "  %s: got %s\n", what, r ? em_dtype_name(em_dtype_of(r)) : em_last_error());
    em_release(r);
    return ok;
}
#define EXPECT(expr, dt, ...) CHECK(expect((expr), #expr, dt, NV(__VA_ARGS__), (const double[]){__VA_ARGS__}, 0))
#define EXPECT_NEAR(expr, dt, ...) \
    CHECK(expect((expr), #expr, dt, NV(__VA_ARGS__), (const double[]){__VA_ARGS__}, 1e-6))

/* r (released here) is an int64 tensor equal to want exactly */
static bool expect_i64(em_tensor *r, const char *what, int n, const int64_t *want)
{
    bool ok = r && em_dtype_of(r) == EM_I64 && em_numel(r) == n && !memcmp(em_data_ptr(r), want, n * 8);
    if (!ok) fprintf(stderr, "  %s: wrong (%s)\n", what, r ? "values" : em_last_error());
    em_release(r);
    return ok;
}
#define EXPECT_I64(expr, ...) \
    CHECK(expect_i64((expr), #expr, sizeof((const int64_t[]){__VA_ARGS__}) / 8, (const int64_t[]){__VA_ARGS__}))

static bool neg_zero(const em_tensor *t, int64_t i) { return tval(t, i) == 0 && signbit(tval(t, i)); }

/* Operands shared by the tests (as in the PyTorch session the values come from). */
typedef struct operands {
    em_tensor *b, *i, *u, *f, *h, *bf, *i8, *si_m1, *si_2, *sf_2_5, *sb;
} operands;
static operands make_operands(void)
{
    return (operands){
        .b = V(EM_BOOL, 1, 0), .i = V(EM_I64, 5, -7), .u = V(EM_U8, 5, 7), .f = V(EM_F32, 5.5, -7.5),
        .h = V(EM_F16, 5.5, -7.5), .bf = V(EM_BF16, 5.5, -7.5), .i8 = V(EM_I8, -128, 5),
        .si_m1 = em_scalar_int(-1), .si_2 = em_scalar_int(2), .sf_2_5 = em_scalar_float(2.5),
        .sb = em_scalar_bool(true),
    };
}
static void free_operands(operands *o)
{
    em_tensor **all = (em_tensor **)o;
    for (size_t k = 0; k < sizeof *o / sizeof(em_tensor *); k++) em_release(all[k]);
}

/* ---- dtype rules ------------------------------------------------------- */
TEST(binary_dtype_rules_with_scalars)
{
    operands o = make_operands();
    em_tensor *s300 = em_scalar_int(300), *s256 = em_scalar_int(256), *s3 = em_scalar_int(3);
    em_tensor *sf55 = em_scalar_float(5.5), *sf15 = em_scalar_float(1.5), *sf1 = em_scalar_float(1);
    em_tensor *sf0 = em_scalar_float(0), *si1 = em_scalar_int(1), *si0 = em_scalar_int(0);
    em_tensor *i16 = V(EM_I16, 1, 2), *i32 = V(EM_I32, 5, -7), *zd2 = em_tensor_scalar(2, EM_I64);
    EXPECT(em_div(o.i, o.i), EM_F32, 1, 1);
    EXPECT(em_div(o.u, o.u), EM_F32, 1, 1);
    EXPECT(em_div(o.b, o.b), EM_F32, 1, NAN);
    EXPECT(em_add(o.u, o.si_m1, 1), EM_U8, 4, 6);
    EXPECT(em_mul(o.u, o.si_m1), EM_U8, 251, 249);
    EXPECT(em_add(o.i, sf15, 1), EM_F32, 6.5, -5.5);
    EXPECT(em_mul(o.b, o.si_2), EM_I64, 2, 0);
    EXPECT(em_mul(o.b, o.sb), EM_BOOL, 1, 0);
    EXPECT(em_add(o.b, o.b, 2), EM_BOOL, 1, 0);
    /* a negative int scalar is cast to uint8 (255) before comparing, as in PyTorch */
    EXPECT(em_lt(o.u, o.si_m1), EM_BOOL, 1, 1);
    EXPECT(em_eq(o.u, o.si_m1), EM_BOOL, 0, 0);
    EXPECT(em_gt(o.u, o.si_m1), EM_BOOL, 0, 0);
    EXPECT(em_lt(o.u, s300), EM_BOOL, 1, 1);
    EXPECT(em_eq(o.u, s256), EM_BOOL, 0, 0);
    EXPECT(em_lt(o.u, sf55), EM_BOOL, 1, 0);
    EXPECT(em_eq(o.b, o.si_2), EM_BOOL, 0, 0);
    EXPECT(em_eq(o.h, o.bf), EM_BOOL, 1, 1);
    EXPECT(em_remainder(o.u, o.si_m1), EM_U8, 5, 7);
    EXPECT(em_remainder(o.u, s3), EM_U8, 2, 1);
    EXPECT(em_remainder(o.i, o.sf_2_5), EM_F32, 0, 0.5);
    EXPECT(em_remainder(o.si_2, o.i), EM_I64, 2, -5);
    EXPECT(em_div_floor(o.f, si0), EM_F32, INFINITY, -INFINITY);
    EXPECT(em_pow(o.si_2, o.i), EM_I64, 32, 0);
    EXPECT_NEAR(em_pow(o.i, o.sf_2_5), EM_F32, 55.90169906616211, NAN);
    EXPECT_NEAR(em_pow(o.sf_2_5, o.i), EM_F32, 97.65625, 0.001638400019146502);
    EXPECT(em_pow(o.b, o.si_2), EM_I64, 1, 0);
    EXPECT(em_pow(o.i8, zd2), EM_I8, 0, 25); /* a 0-d int64 tensor does not raise int8 */
    EXPECT(em_float_power(i32, i32), EM_F64, 3125, pow(-7, -7));
    EXPECT_NEAR(em_atan2(o.b, o.b), EM_F32, M_PI / 4, 0);
    EXPECT(em_copysign(o.u, o.si_m1), EM_F32, -5, -7);
    EXPECT(em_copysign(o.h, o.si_m1), EM_F16, -5.5, -7.5);
    EXPECT(em_maximum(o.i, o.f), EM_F32, 5.5, -7);
    EXPECT(em_bitwise_and(o.i, o.b), EM_I64, 1, 0);
    EXPECT(em_bitwise_xor(o.u, o.si_m1), EM_U8, 250, 248);
    EXPECT(em_bitwise_or(o.i8, i16), EM_I16, -127, 7);
    EXPECT(em_logical_and(o.f, o.i), EM_BOOL, 1, 1);
    EXPECT(em_where(o.b, o.i, o.f), EM_F32, 5, -7.5);
    EXPECT(em_where(o.b, sf1, sf0), EM_F32, 1, 0);
    EXPECT(em_where(o.b, si1, si0), EM_I64, 1, 0);
    EXPECT(em_where(o.b, o.u, o.si_m1), EM_U8, 5, 255);
    EXPECT(em_where(o.b, o.h, o.bf), EM_F32, 5.5, -7.5);
    EXPECT(em_where(o.b, o.i8, o.sf_2_5), EM_F32, -128, 2.5);
    EXPECT(em_where(o.u, o.f, o.f), EM_F32, 5.5, -7.5); /* a uint8 condition is allowed */
    EXPECT(em_lerp(o.f, o.f, o.si_2), EM_F32, 5.5, -7.5);
    free_operands(&o);
    em_tensor *all[] = {s300, s256, s3, sf55, sf15, sf1, sf0, si1, si0, i16, i32, zd2};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

TEST(ternary_dtype_rules)
{
    operands o = make_operands();
    em_tensor *z2 = V(EM_F32, 0, 0), *o2 = V(EM_F32, 1, 1), *zi = V(EM_I64, 0, 0), *oi = V(EM_I64, 1, 1);
    em_tensor *z0 = em_tensor_scalar(0, EM_I64), *o0 = em_tensor_scalar(1, EM_F32);
    EXPECT(em_clamp_tensor(o.i, z2, o2), EM_F32, 1, 0);
    EXPECT(em_clamp_tensor(o.u, zi, oi), EM_I64, 1, 1);
    EXPECT(em_clamp_tensor(o.i, z0, o0), EM_F32, 1, 0);
    EXPECT_NEAR(em_addcdiv(o.i, o.f, o.i, 1), EM_F32, 6.099999904632568, -5.928571701049805);
    EXPECT(em_addcdiv(o.b, o.f, o.f, 1), EM_F32, 2, 1);
    EXPECT(em_addcmul(o.i, o.i, o.i, 0.5), EM_I64, 5, -7); /* value cast to the integer dtype: 0 */
    EXPECT(em_addcmul(o.u, o.u, o.u, -1), EM_U8, 236, 214);
    EXPECT(em_addcmul(o.f, o.i, o.i, 0.5), EM_F32, 18, 17);
    em_tensor *all[] = {z2, o2, zi, oi, z0, o0};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    free_operands(&o);
}

/* ---- division ---------------------------------------------------------- */
typedef em_tensor *(*div_fn)(const em_tensor *, const em_tensor *);
typedef em_status (*div_inplace_fn)(em_tensor *, const em_tensor *);
typedef em_status (*div_out_fn)(em_tensor *, const em_tensor *, const em_tensor *);
static const struct {
    em_op op;
    div_fn fn;
    div_inplace_fn fn_;
    div_out_fn fn_out;
} divisions[] = {
    {EM_OP_div_trunc, em_div_trunc, em_div_trunc_, em_div_trunc_out},
    {EM_OP_div_floor, em_div_floor, em_div_floor_, em_div_floor_out},
    {EM_OP_remainder, em_remainder, em_remainder_, em_remainder_out},
    {EM_OP_fmod, em_fmod, em_fmod_, em_fmod_out},
};
#define NDIV (sizeof divisions / sizeof *divisions)

TEST(binary_integer_division_by_zero)
{
    em_dtype ints[] = {EM_U8, EM_I8, EM_I16, EM_I32, EM_I64};
    for (size_t d = 0; d < NDIV; d++) {
        for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) {
            em_tensor *a = trand(ints[k], SHAPE(4, 3), 1, 50), *zb = trand(ints[k], SHAPE(3), 1, 9);
            em_tensor *before = em_clone(a), *out = em_full(SHAPE(2), 7, ints[k]), *nc = NULL;
            int64_t one = 1;
            em_set(zb, &one, 0);
            nc = tnoncontig(zb); /* the zero in a broadcast, non-contiguous divisor */
            uint64_t version = em_version(a);
            CHECK_ERR(divisions[d].fn(a, nc), EM_ERR_RUNTIME);
            CHECK(!strcmp(em_last_error(), "ZeroDivisionError"));
            CHECK_ERR(divisions[d].fn_(a, nc), EM_ERR_RUNTIME);
            CHECK(em_version(a) == version && em_equal(a, before));
            /* out= with the wrong shape: neither resized nor written */
            CHECK_ERR(divisions[d].fn_out(out, a, nc), EM_ERR_RUNTIME);
            CHECK(tshape_is(out, SHAPE(2)) && tval(out, 0) == 7 && tval(out, 1) == 7);
            em_release(a), em_release(zb), em_release(before), em_release(out), em_release(nc);
        }
        /* 256 becomes 0 in uint8, as in PyTorch; bool has no kernel */
        em_tensor *u = V(EM_U8, 5, 7), *s256 = em_scalar_int(256), *b = V(EM_BOOL, 1, 1);
        CHECK_ERR(divisions[d].fn(u, s256), EM_ERR_RUNTIME);
        CHECK_ERR(divisions[d].fn(b, b), EM_ERR_DTYPE);
        em_release(u), em_release(s256), em_release(b);
    }
    /* the scan runs on threads too: a zero at the very end of a large divisor */
    int64_t n = 1 << 17;
    em_tensor *a = em_full(SHAPE(n), 9, EM_I32), *big = em_full(SHAPE(n), 2, EM_I32);
    int64_t last = n - 1;
    em_set(big, &last, 0);
    em_set_num_threads(2);
    CHECK_ERR(em_remainder(a, big), EM_ERR_RUNTIME);
    em_release(a), em_release(big);
}

TEST(binary_integer_division_edges)
{
    /* INT_MIN / -1 wraps to INT_MIN (no SIGFPE), remainder 0; signs as Python and C */
    const double mins[] = {-128, -32768, -2147483648.0};
    const em_dtype dts[] = {EM_I8, EM_I16, EM_I32};
    for (int k = 0; k < 3; k++) {
        em_tensor *a = V(dts[k], mins[k], -7, 7, -7), *b = V(dts[k], -1, 2, -2, -2);
        EXPECT(em_div_trunc(a, b), dts[k], mins[k], -3, -3, 3);
        EXPECT(em_div_floor(a, b), dts[k], mins[k], -4, -4, 3);
        EXPECT(em_remainder(a, b), dts[k], 0, 1, -1, -1);
        EXPECT(em_fmod(a, b), dts[k], 0, -1, 1, -1);
        em_release(a), em_release(b);
    }
    em_tensor *a = VI64(INT64_MIN, -7), *b = VI64(-1, 2);
    EXPECT_I64(em_div_trunc(a, b), INT64_MIN, -3);
    EXPECT_I64(em_div_floor(a, b), INT64_MIN, -4);
    EXPECT_I64(em_remainder(a, b), 0, 1);
    EXPECT_I64(em_fmod(a, b), 0, -1);
    em_release(a), em_release(b);
    em_tensor *u = V(EM_U8, 250, 7), *ub = V(EM_U8, 7, 250);
    EXPECT(em_div_floor(u, ub), EM_U8, 35, 0);
    EXPECT(em_remainder(u, ub), EM_U8, 5, 7);
    em_release(u), em_release(ub);
}

TEST(binary_float_division_edges)
{
    em_tensor *a = V(EM_F32, 5, -5, 1, -1, 0, -7, 7, 0.7f, -0.0, 1e-20f, INFINITY);
    em_tensor *b = V(EM_F32, INFINITY, INFINITY, 0, 0, 0, 2, -2, 0.1f, 2, -1, 2);
    EXPECT(em_div_floor(a, b), EM_F32, 0, -1, INFINITY, -INFINITY, NAN, -4, -4, 6, -0.0, -1, NAN);
    EXPECT(em_div_trunc(a, b), EM_F32, 0, -0.0, INFINITY, -INFINITY, NAN, -3, -3, 7, -0.0, -0.0, INFINITY);
    EXPECT(em_remainder(a, b), EM_F32, 5, INFINITY, NAN, NAN, NAN, 1, -1, 0.09999997913837433, -0.0, -1, NAN);
    EXPECT(em_fmod(a, b), EM_F32, 5, -5, NAN, NAN, NAN, -1, 1, 0.09999997913837433, -0.0, 1e-20f, NAN);
    em_tensor *r = em_remainder(a, b), *q = em_div_floor(a, b);
    CHECK(neg_zero(r, 8) && neg_zero(q, 8));
    em_release(r), em_release(q), em_release(a), em_release(b);
    /* the 16-bit floats compute in float32 */
    em_tensor *h = V(EM_F16, -7, 7.5), *hb = V(EM_F16, 2, -2);
    EXPECT(em_div_floor(h, hb), EM_F16, -4, -4);
    EXPECT(em_remainder(h, hb), EM_F16, 1, -0.5);
    em_release(h), em_release(hb);
}

/* ---- params and bool rules --------------------------------------------- */
TEST(binary_alpha_and_value_params)
{
    operands o = make_operands();
    em_tensor *i8 = V(EM_I8, 1, 2), *big = V(EM_F32, 1, 2);
    CHECK_ERR(em_add(o.i, o.i, 0.5), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "alpha must not be a floating point number"));
    CHECK_ERR(em_sub(o.i, o.i, 0.5), EM_ERR_RUNTIME);
    CHECK_ERR(em_add(o.b, o.b, 0.5), EM_ERR_RUNTIME);
    CHECK_ERR(em_add(i8, i8, 200), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "without overflow"));
    CHECK_ERR(em_add(o.u, o.u, 256), EM_ERR_RUNTIME);
    CHECK_ERR(em_add(o.h, o.h, 1e6), EM_ERR_RUNTIME);
    CHECK_ERR(em_add(o.f, o.f, 1e300), EM_ERR_RUNTIME);
    CHECK_ERR(em_addcmul(i8, i8, i8, 200), EM_ERR_RUNTIME);
    CHECK_ERR(em_addcdiv(o.h, o.h, o.h, 1e6), EM_ERR_RUNTIME);
    CHECK_ERR(em_add_(big, big, NAN), EM_OK); /* nan and inf fit a float */
    EXPECT(em_add(o.u, o.u, -1), EM_U8, 0, 0);   /* negative integers wrap for uint8 */
    EXPECT(em_sub(o.u, o.u, 2), EM_U8, 251, 249);
    EXPECT(em_add(o.i, o.f, 0.5), EM_F32, 7.75, -10.75);
    EXPECT(em_add(o.i, o.sf_2_5, 2), EM_F32, 10, -2);
    EXPECT(em_sub(o.f, o.si_2, 0.5), EM_F32, 4.5, -8.5);
    em_tensor *x = VI64(INT64_C(1) << 62, INT64_C(1) << 62), *y = VI64(1, -1);
    EXPECT_I64(em_add(x, y, 4611686018427387904.0), INT64_MIN, 0);
    em_release(x), em_release(y), em_release(i8), em_release(big);
    free_operands(&o);
}

TEST(binary_sub_rejects_bool)
{
    operands o = make_operands();
    em_tensor *out = em_zeros(SHAPE(2), EM_F32);
    CHECK_ERR(em_sub(o.b, o.b, 1), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "two bool tensors"));
    CHECK_ERR(em_sub(o.b, o.f, 1), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "with a bool tensor"));
    CHECK_ERR(em_sub(o.f, o.b, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_sub(o.f, o.sb, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_sub(o.i, o.sb, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_sub_out(out, o.b, o.f, 1), EM_ERR_RUNTIME);
    em_release(out);
    free_operands(&o);
}

TEST(binary_pow_rules)
{
    operands o = make_operands();
    em_tensor *two = em_tensor_scalar(2, EM_I64), *m1 = em_tensor_scalar(-1, EM_I64), *sfm1 = em_scalar_float(-1);
    CHECK_ERR(em_pow(o.i, o.si_m1), EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "Integers to negative integer powers are not allowed."));
    CHECK_ERR(em_pow(o.u, o.si_m1), EM_ERR_RUNTIME);
    CHECK_ERR(em_pow(two, o.si_m1), EM_ERR_RUNTIME);
    CHECK_ERR(em_pow(o.b, o.b), EM_ERR_DTYPE);
    EXPECT(em_pow(o.i, m1), EM_I64, 0, 0); /* a tensor exponent is allowed */
    em_tensor *base = V(EM_I64, 1, -1, 2, 0, -1, 0), *ex = V(EM_I64, -1, -1, -2, -1, -2, 0);
    EXPECT(em_pow(base, ex), EM_I64, 1, -1, 0, 0, 1, 1);
    em_release(base), em_release(ex);
    em_tensor *x = VI64(2, 3), *e = VI64(62, 63), *i8 = V(EM_I8, 3), *i8e = V(EM_I8, 5);
    EXPECT_I64(em_pow(x, e), INT64_C(4611686018427387904), INT64_C(-3237885987332494933)); /* wraps */
    EXPECT(em_pow(i8, i8e), EM_I8, -13);
    EXPECT_NEAR(em_pow(o.i, sfm1), EM_F32, 0.2, -1.0 / 7);
    EXPECT(em_float_power(o.i, o.si_m1), EM_F64, 0.2, -1.0 / 7);
    /* float_power: in place and out= need float64 */
    em_tensor *f = em_clone(o.f), *out32 = em_zeros(SHAPE(2), EM_F32), *d = em_to_dtype(o.f, EM_F64);
    CHECK_ERR(em_float_power_(f, o.si_2), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "base given to float_power_") && tval(f, 0) == 5.5);
    CHECK_ERR(em_float_power_out(out32, o.f, o.si_2), EM_ERR_RUNTIME);
    CHECK(tval(out32, 0) == 0);
    CHECK(em_float_power_(d, o.si_2) == EM_OK && tval(d, 0) == 30.25 && tval(d, 1) == 56.25);
    em_tensor *all[] = {two, m1, sfm1, x, e, i8, i8e, f, out32, d};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    free_operands(&o);
}

/* ---- comparisons, min/max ---------------------------------------------- */
TEST(binary_min_max_nan_and_signed_zero)
{
    em_tensor *a = V(EM_F32, 1, NAN, NAN, -0.0, 0.0), *b = V(EM_F32, NAN, 1, NAN, 0.0, -0.0);
    EXPECT(em_maximum(a, b), EM_F32, NAN, NAN, NAN, 0, 0);
    EXPECT(em_minimum(a, b), EM_F32, NAN, NAN, NAN, 0, 0);
    EXPECT(em_fmax(a, b), EM_F32, 1, 1, NAN, 0, 0);
    EXPECT(em_fmin(a, b), EM_F32, 1, 1, NAN, 0, 0);
    EXPECT(em_clamp_min_tensor(a, b), EM_F32, NAN, NAN, NAN, 0, 0);
    EXPECT(em_clamp_max_tensor(a, b), EM_F32, NAN, NAN, NAN, 0, 0);
    /* ties give the first operand, as std::max in PyTorch */
    em_tensor *mx = em_maximum(a, b), *fx = em_fmax(a, b), *mn = em_minimum(a, b);
    CHECK(neg_zero(mx, 3) && !neg_zero(mx, 4) && neg_zero(fx, 3) && neg_zero(mn, 3));
    em_release(mx), em_release(fx), em_release(mn);
    EXPECT(em_eq(a, b), EM_BOOL, 0, 0, 0, 1, 1);
    EXPECT(em_ne(a, b), EM_BOOL, 1, 1, 1, 0, 0);
    EXPECT(em_le(a, b), EM_BOOL, 0, 0, 0, 1, 1);
    EXPECT(em_ge(a, b), EM_BOOL, 0, 0, 0, 1, 1);
    em_tensor *i = V(EM_I64, 1, 2), *u = V(EM_U8, 2, 1), *f = V(EM_F32, 1), *n = V(EM_F32, NAN, 0);
    EXPECT(em_maximum(i, u), EM_I64, 2, 2);
    EXPECT(em_eq(f, i), EM_BOOL, 1, 0);
    EXPECT(em_logical_xor(n, n), EM_BOOL, 0, 0);
    EXPECT(em_logical_or(n, n), EM_BOOL, 1, 0);
    em_release(a), em_release(b), em_release(i), em_release(u), em_release(f), em_release(n);
}

/* ---- bits -------------------------------------------------------------- */
TEST(binary_shifts_match_pytorch)
{
    em_tensor *a = VI64(1, 1, 1, 1, -1), *b = VI64(63, 64, 65, -1, 64);
    EXPECT_I64(em_bitwise_left_shift(a, b), INT64_MIN, 1, 2, INT64_MIN, -1);
    em_release(a), em_release(b);
    a = VI64(-8, -8, 8, 8, -1, 8), b = VI64(63, 64, 65, -1, 100, -1);
    EXPECT_I64(em_bitwise_right_shift(a, b), -1, -8, 4, 0, -1, 0);
    em_release(a), em_release(b);
    static const struct {
        em_dtype dt;
        bool left;
        double a[5], b[5], want[5];
    } rows[] = {
        {EM_I8, true, {1, 1, 1, 1, -1}, {7, 8, 9, -1, 8}, {-128, 0, 0, 0, 0}},
        {EM_I8, false, {-8, -8, 8, 8, -128}, {7, 8, 9, -1, 100}, {-1, -1, 0, 0, -8}},
        {EM_U8, true, {1, 1, 1, 255, 3}, {7, 8, 9, 255, 1}, {128, 0, 0, 0, 6}},
        {EM_U8, false, {128, 128, 128, 255, 255}, {7, 8, 9, 255, 0}, {1, 0, 0, 0, 255}},
        {EM_I16, true, {1, 1, 1, 3, 1}, {15, 16, 17, 0, 31}, {-32768, 0, 0, 3, 0}},
        {EM_I16, false, {-5, -5, 5, 5, 5}, {15, 16, 17, -3, 0}, {-1, -1, 0, 0, 5}},
        {EM_I32, true, {1, 1, 1, 3, -1}, {31, 32, 33, -1, 1}, {-2147483648.0, 1, 2, -2147483648.0, -2}},
        {EM_I32, false, {-5, -5, 5, 5, 5}, {31, 32, 33, -1, 0}, {-1, -5, 2, 0, 5}},
    };
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        em_tensor *x = tt(rows[k].dt, SHAPE(5), rows[k].a), *y = tt(rows[k].dt, SHAPE(5), rows[k].b);
        em_tensor *r = rows[k].left ? em_bitwise_left_shift(x, y) : em_bitwise_right_shift(x, y);
        CHECK_MSG(r && em_dtype_of(r) == rows[k].dt && tclose(r, rows[k].want, 0, 0), "shift row %zu", k);
        em_release(x), em_release(y), em_release(r);
    }
    operands o = make_operands();
    em_tensor *three = V(EM_U8, 3), *m1 = VI64(-1), *s300 = em_scalar_int(300);
    EXPECT(em_bitwise_left_shift(three, o.si_m1), EM_U8, 0);
    EXPECT_I64(em_bitwise_left_shift(three, m1), INT64_MIN);
    EXPECT(em_bitwise_left_shift(o.si_2, three), EM_U8, 16);
    EXPECT(em_bitwise_left_shift(three, s300), EM_U8, 0);
    CHECK_ERR(em_bitwise_left_shift(o.b, o.b), EM_ERR_DTYPE);
    CHECK_ERR(em_bitwise_right_shift(o.f, o.si_2), EM_ERR_DTYPE);
    CHECK_ERR(em_bitwise_and(o.f, o.f), EM_ERR_DTYPE);
    CHECK_ERR(em_bitwise_or(o.i, o.sf_2_5), EM_ERR_DTYPE);
    em_release(three), em_release(m1), em_release(s300);
    free_operands(&o);
}

TEST(binary_gcd_lcm_edges)
{
    em_tensor *a = VI64(12, -12, 0, 0, INT64_MIN, 7, INT64_MIN, INT64_MIN);
    em_tensor *b = VI64(18, 18, 0, -5, INT64_C(1) << 62, INT64_MIN, 0, -1);
    EXPECT_I64(em_gcd(a, b), 6, 6, 0, 5, INT64_C(1) << 62, -1, INT64_MIN, 1);
    em_release(a), em_release(b);
    a = VI64(4, -4, 0, 7, 0, INT64_MIN), b = VI64(6, 6, 3, -3, 0, 7);
    EXPECT_I64(em_lcm(a, b), 12, 12, 0, 21, 0, INT64_MIN); /* the last traps in PyTorch; wraps here */
    em_release(a), em_release(b);
    em_tensor *x = V(EM_I8, -128, 100), *y = V(EM_I8, 0, 3);
    EXPECT(em_gcd(x, y), EM_I8, -128, 1);
    EXPECT(em_lcm(x, y), EM_I8, 0, 44); /* 300 cut to int8 */
    em_tensor *f = V(EM_F32, 1), *bo = V(EM_BOOL, 1);
    CHECK_ERR(em_gcd(f, f), EM_ERR_DTYPE);
    CHECK_ERR(em_lcm(bo, bo), EM_ERR_DTYPE);
    em_release(x), em_release(y), em_release(f), em_release(bo);
}

/* ---- float functions --------------------------------------------------- */
TEST(binary_float_function_edges)
{
    em_tensor *x = V(EM_F32, 0, 0, 0, 1, NAN), *y = V(EM_F32, 0, NAN, -1, 0, 0);
    EXPECT(em_xlogy(x, y), EM_F32, 0, NAN, 0, -INFINITY, NAN);
    em_release(x), em_release(y);
    x = V(EM_F32, INFINITY, -INFINITY, INFINITY, NAN, 1000, -1);
    y = V(EM_F32, INFINITY, -INFINITY, -INFINITY, INFINITY, 1000, -1);
    EXPECT_NEAR(em_logaddexp(x, y), EM_F32, INFINITY, -INFINITY, INFINITY, NAN, 1000.6931471805599453, -1 + M_LN2);
    EXPECT(em_logaddexp2(x, y), EM_F32, INFINITY, -INFINITY, INFINITY, NAN, 1001, 0);
    em_release(x), em_release(y);
    x = V(EM_F32, 0, -0.0, NAN, 5.5, INFINITY, NAN, -0.0), y = V(EM_F32, -0.0, -0.0, -1, -0.0, NAN, 2, 3);
    EXPECT_NEAR(em_atan2(x, y), EM_F32, M_PI, -M_PI, NAN, M_PI / 2, NAN, NAN, -0.0);
    em_tensor *cs = em_copysign(x, y), *hv = em_heaviside(x, y);
    CHECK(cs && signbit(tval(cs, 2)) && tval(cs, 3) == -5.5 && neg_zero(cs, 0));
    CHECK(hv && tval(hv, 0) == -0.0 && tval(hv, 3) == 1 && tval(hv, 5) == 0 && tval(hv, 6) == 3); /* nan -> 0 */
    EXPECT(em_hypot(x, y), EM_F32, 0, 0, NAN, 5.5, INFINITY, NAN, 3);
    em_release(cs), em_release(hv), em_release(x), em_release(y);
    /* nextafter steps in the dtype's own precision */
    x = V(EM_F32, 1, 0, INFINITY, 1, NAN), y = V(EM_F32, 2, -1, 0, 1, 0);
    EXPECT(em_nextafter(x, y), EM_F32, 1 + 0x1p-23, -0x1p-149, 3.4028234663852886e+38, 1, NAN);
    em_release(x), em_release(y);
    x = V(EM_F64, 1, -0.0, 0.0), y = V(EM_F64, 2, 0.0, -0.0);
    em_tensor *nd = em_nextafter(x, y);
    CHECK(nd && tval(nd, 0) == 1 + 0x1p-52 && !signbit(tval(nd, 1)) && neg_zero(nd, 2));
    em_release(nd), em_release(x), em_release(y);
    x = V(EM_BF16, 1, 0, 1, -1, 1), y = V(EM_BF16, 2, -1, 1, NAN, 0);
    EXPECT(em_nextafter(x, y), EM_BF16, 1.0078125, -0x1p-133, 1, NAN, 1 - 0x1p-8);
    em_release(x), em_release(y);
    x = V(EM_F16, 1, 0, 65504, INFINITY, -1), y = V(EM_F16, 2, 1, INFINITY, 0, -2);
    EXPECT(em_nextafter(x, y), EM_F16, 1 + 0x1p-10, 0x1p-24, INFINITY, 65504, -1 - 0x1p-10);
    em_release(x), em_release(y);
    /* heaviside needs one dtype */
    em_tensor *i = V(EM_I64, 0, 0), *b = V(EM_BOOL, 1, 0), *f = V(EM_F32, 0, 0), *h = em_tensor_scalar(0.5, EM_F32);
    CHECK_ERR(em_heaviside(i, b), EM_ERR_RUNTIME);
    EXPECT(em_heaviside(f, h), EM_F32, 0.5, 0.5);
    CHECK_ERR(em_hypot(i, i), EM_ERR_DTYPE);
    CHECK_ERR(em_logaddexp(i, i), EM_ERR_DTYPE);
    CHECK_ERR(em_nextafter(i, i), EM_ERR_DTYPE);
    CHECK_ERR(em_logaddexp_(f, f), EM_ERR_NOT_IMPLEMENTED);
    em_release(i), em_release(b), em_release(f), em_release(h);
    COVER(EM_OP_nextafter);
}

/* ---- ternary ----------------------------------------------------------- */
TEST(ternary_edges_and_errors)
{
    operands o = make_operands();
    em_tensor *d = em_to_dtype(o.f, EM_F64), *w64 = em_tensor_scalar(0.5, EM_F64), *w = em_scalar_float(0.5);
    CHECK_ERR(em_where(o.i, o.f, o.f), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "where expected condition to be a boolean tensor"));
    CHECK_ERR(em_where(o.f, o.f, o.f), EM_ERR_RUNTIME);
    CHECK_ERR(em_where_(o.b, o.f, o.f), EM_ERR_NOT_IMPLEMENTED);
    CHECK_ERR(em_lerp(o.f, d, w), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "for `end`"));
    CHECK_ERR(em_lerp(o.f, o.f, w64), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "for `weight`"));
    CHECK_ERR(em_lerp(o.i, o.i, w), EM_ERR_DTYPE);
    EXPECT(em_lerp(o.f, o.f, w), EM_F32, 5.5, -7.5);
    em_tensor *s = V(EM_F32, 1, 2, 2, 0), *e = V(EM_F32, 3, 5, INFINITY, INFINITY);
    em_tensor *wt = V(EM_F32, 0.25, 0.75, 0.75, -1);
    EXPECT(em_lerp(s, e, wt), EM_F32, 1.5, 4.25, NAN, -INFINITY);
    CHECK_ERR(em_addcdiv(o.i, o.i, o.i, 1), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "Integer division with addcdiv is no longer supported"));
    CHECK_ERR(em_addcdiv(o.f, o.i, o.i, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_addcdiv(o.f, o.b, o.b, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_addcmul(o.b, o.b, o.b, 1), EM_ERR_DTYPE);
    /* clamp: a nan bound gives nan, min > max gives max */
    em_tensor *x = V(EM_F32, NAN, 1, 1, 1, 5), *lo = V(EM_F32, 0, NAN, 0, 3, 0), *hi = V(EM_F32, 1, 1, NAN, 2, 1);
    EXPECT(em_clamp_tensor(x, lo, hi), EM_F32, NAN, NAN, NAN, 2, 1);
    CHECK_ERR(em_clamp_tensor(o.b, o.b, o.b), EM_ERR_DTYPE);
    EXPECT(em_clamp_max_tensor(o.b, o.b), EM_BOOL, 1, 0);
    /* in place with a broadcast self shape mismatch */
    em_tensor *one = V(EM_F32, 1), *f2 = em_clone(o.f);
    CHECK_ERR(em_addcmul_(one, o.f, o.f, 1), EM_ERR_SHAPE);
    CHECK(em_addcmul_(f2, one, o.f, 2) == EM_OK && tval(f2, 0) == 16.5 && tval(f2, 1) == -22.5);
    em_tensor *all[] = {d, w64, w, s, e, wt, x, lo, hi, one, f2};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
    free_operands(&o);
}

/* ---- the large, threaded, vectorized path ------------------------------ */
TEST(binary_large_contiguous_matches_scalar)
{
    int64_t n = (1 << 18) + 3;
    em_tensor *a = trand(EM_F32, SHAPE(n), -4, 4), *b = trand(EM_F32, SHAPE(n), -4, 4);
    em_set_num_threads(2);
    em_tensor *s = em_add(a, b, 1), *m = em_mul(a, b), *c = em_lt(a, b), *q = em_div_floor(a, b);
    em_tensor *na = tnoncontig(a), *qs = em_div_floor(na, b); /* the strided path */
    CHECK(s && m && c && q && qs && em_equal(q, qs));
    const float *pa = em_data_ptr(a), *pb = em_data_ptr(b), *ps = em_data_ptr(s), *pm = em_data_ptr(m);
    const bool *pc = em_data_ptr(c);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += ps[i] != pa[i] + pb[i] || pm[i] != pa[i] * pb[i] || pc[i] != (pa[i] < pb[i]);
    CHECK_MSG(bad == 0, "%lld mismatches", (long long)bad);
    em_tensor *all[] = {a, b, s, m, c, q, na, qs};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}
