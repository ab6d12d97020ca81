/* Pointwise binary and ternary ops (include/ember/ops/binary.def, ternary.def):
 * every op and dtype against a double reference on broadcast, non-contiguous,
 * transposed, 0-d and empty inputs, through the new, in-place and out= forms.
 * Edge values, dtype rules and errors (checked against PyTorch 1.13) are in
 * test_binary_rules.c. */
#include "test.h"

/* ---- dtype sets ------------------------------------------------------- */
#define D(x) (1u << EM_##x)
#define INTS (D(U8) | D(I8) | D(I16) | D(I32) | D(I64))
#define FLOATS (D(F16) | D(F32) | D(F64) | D(BF16))
#define NUMERIC (INTS | FLOATS)
#define ALL (NUMERIC | D(BOOL))

/* ---- references: x[] are the operands as read in compute dtype dt ----- */
static bool isf(em_dtype dt) { return em_dtype_is_float(dt); }
static double r_add(const double *x, em_dtype dt) { return dt == EM_BOOL ? (x[0] || x[1]) : x[0] + 2 * x[1]; }
static double r_sub(const double *x, em_dtype dt) { return x[0] - 2 * x[1]; }
static double r_mul(const double *x, em_dtype dt) { return x[0] * x[1]; }
static double r_div(const double *x, em_dtype dt) { return x[0] / x[1]; }
static double r_div_trunc(const double *x, em_dtype dt) { return trunc(x[0] / x[1]); }
static double r_div_floor(const double *x, em_dtype dt) { return floor(x[0] / x[1]); }
static double r_remainder(const double *x, em_dtype dt)
{
    double r = fmod(x[0], x[1]);
    return r != 0 && (r < 0) != (x[1] < 0) ? r + x[1] : r;
}
static double r_fmod(const double *x, em_dtype dt) { return fmod(x[0], x[1]); }
static double r_pow(const double *x, em_dtype dt) { return pow(x[0], x[1]); }
static double r_atan2(const double *x, em_dtype dt) { return atan2(x[0], x[1]); }
static double r_hypot(const double *x, em_dtype dt) { return hypot(x[0], x[1]); }
static double r_copysign(const double *x, em_dtype dt) { return copysign(x[0], x[1]); }
static double r_xlogy(const double *x, em_dtype dt) { return x[0] == 0 ? 0 : x[0] * log(x[1]); }
static double r_logaddexp(const double *x, em_dtype dt) { return log(exp(x[0]) + exp(x[1])); }
static double r_logaddexp2(const double *x, em_dtype dt) { return log2(exp2(x[0]) + exp2(x[1])); }
static double r_nextafter(const double *x, em_dtype dt)
{
    return dt == EM_F32 ? nextafterf((float)x[0], (float)x[1]) : nextafter(x[0], x[1]);
}
static double r_max(const double *x, em_dtype dt) { return fmax(x[0], x[1]); }
static double r_min(const double *x, em_dtype dt) { return fmin(x[0], x[1]); }
static double r_eq(const double *x, em_dtype dt) { return x[0] == x[1]; }
static double r_ne(const double *x, em_dtype dt) { return x[0] != x[1]; }
static double r_lt(const double *x, em_dtype dt) { return x[0] < x[1]; }
static double r_le(const double *x, em_dtype dt) { return x[0] <= x[1]; }
static double r_gt(const double *x, em_dtype dt) { return x[0] > x[1]; }
static double r_ge(const double *x, em_dtype dt) { return x[0] >= x[1]; }
static double r_land(const double *x, em_dtype dt) { return x[0] && x[1]; }
static double r_lor(const double *x, em_dtype dt) { return x[0] || x[1]; }
static double r_lxor(const double *x, em_dtype dt) { return !x[0] != !x[1]; }
static double r_band(const double *x, em_dtype dt) { return (double)((int64_t)x[0] & (int64_t)x[1]); }
static double r_bor(const double *x, em_dtype dt) { return (double)((int64_t)x[0] | (int64_t)x[1]); }
static double r_bxor(const double *x, em_dtype dt) { return (double)((int64_t)x[0] ^ (int64_t)x[1]); }
static double r_lshift(const double *x, em_dtype dt) { return x[0] * exp2(x[1]); }
static double r_rshift(const double *x, em_dtype dt) { return floor(x[0] / exp2(x[1])); }
static double r_gcd(const double *x, em_dtype dt)
{
    int64_t a = llabs((int64_t)x[0]), b = llabs((int64_t)x[1]);
    while (a) {
        int64_t t = a;
        a = b % a;
        b = t;
    }
    return (double)b;
}
static double r_lcm(const double *x, em_dtype dt)
{
    double g = r_gcd(x, dt);
    return g == 0 ? 0 : fabs(x[0] / g * x[1]);
}
static double r_heaviside(const double *x, em_dtype dt) { return x[0] == 0 ? x[1] : x[0] > 0; }
static double r_where(const double *x, em_dtype dt) { return x[0] ? x[1] : x[2]; }
static double r_lerp(const double *x, em_dtype dt) { return x[0] + x[2] * (x[1] - x[0]); }
static double r_addcmul(const double *x, em_dtype dt) { return x[0] + 2 * x[1] * x[2]; }
static double r_addcdiv(const double *x, em_dtype dt) { return x[0] + 2 * x[1] / x[2]; }
static double r_clamp(const double *x, em_dtype dt) { return fmin(fmax(x[0], x[1]), x[2]); }

/* ---- the op table under test ------------------------------------------ */
/* Each op through a uniform signature (params fixed: alpha = value = 2). */
typedef em_tensor *(*new_fn)(em_tensor *const *in);
typedef em_status (*inplace_fn)(em_tensor *self, em_tensor *const *in);
typedef em_status (*out_fn)(em_tensor *out, em_tensor *const *in);
#define WRAP2(name, ...)                                                                                         \
    static em_tensor *name##_n(em_tensor *const *in) { return em_##name(in[0], in[1] __VA_ARGS__); }             \
    static em_status name##_i(em_tensor *s, em_tensor *const *in) { return em_##name##_(s, in[1] __VA_ARGS__); } \
    static em_status name##_o(em_tensor *o, em_tensor *const *in)                                                \
    {                                                                                                            \
        return em_##name##_out(o, in[0], in[1] __VA_ARGS__);                                                     \
    }
#define WRAP3(name, ...)                                                                                    \
    static em_tensor *name##_n(em_tensor *const *in) { return em_##name(in[0], in[1], in[2] __VA_ARGS__); } \
    static em_status name##_i(em_tensor *s, em_tensor *const *in)                                           \
    {                                                                                                       \
        return em_##name##_(s, in[1], in[2] __VA_ARGS__);                                                   \
    }                                                                                                       \
    static em_status name##_o(em_tensor *o, em_tensor *const *in)                                           \
    {                                                                                                       \
        return em_##name##_out(o, in[0], in[1], in[2] __VA_ARGS__);                                         \
    }
WRAP2(add, , 2) WRAP2(sub, , 2) WRAP2(mul) WRAP2(div) WRAP2(div_trunc) WRAP2(div_floor) WRAP2(remainder)
WRAP2(fmod) WRAP2(pow) WRAP2(float_power) WRAP2(atan2) WRAP2(hypot) WRAP2(copysign) WRAP2(xlogy)
WRAP2(logaddexp) WRAP2(logaddexp2) WRAP2(nextafter) WRAP2(maximum) WRAP2(minimum) WRAP2(fmax) WRAP2(fmin)
WRAP2(clamp_min_tensor) WRAP2(clamp_max_tensor) WRAP2(eq) WRAP2(ne) WRAP2(lt) WRAP2(le) WRAP2(gt) WRAP2(ge)
WRAP2(logical_and) WRAP2(logical_or) WRAP2(logical_xor) WRAP2(bitwise_and) WRAP2(bitwise_or) WRAP2(bitwise_xor)
WRAP2(bitwise_left_shift) WRAP2(bitwise_right_shift) WRAP2(gcd) WRAP2(lcm) WRAP2(heaviside)
WRAP3(where) WRAP3(lerp) WRAP3(addcmul, , 2) WRAP3(addcdiv, , 2) WRAP3(clamp_tensor)

enum { INTVALS = 1, NONZERO = 2 }; /* integer-valued inputs; no zero in the last input */
typedef struct opcase {
    em_op op;
    int nin;
    new_fn fn;
    inplace_fn fn_;
    out_fn fn_out;
    double (*ref)(const double *x, em_dtype dt);
    unsigned dtypes;  /* supported; the others fail with `bad` (0: not tested) */
    em_status bad;
    double lo[3], hi[3]; /* value range of each input */
    int flags;
} opcase;

#define OP2(name, ref, dts, bad, lo0, hi0, lo1, hi1, fl) \
    {EM_OP_##name, 2, name##_n, name##_i, name##_o, ref, dts, bad, {lo0, lo1}, {hi0, hi1}, fl}
#define OP3(name, ref, dts, bad, lo0, hi0, lo1, hi1, lo2, hi2, fl) \
    {EM_OP_##name, 3, name##_n, name##_i, name##_o, ref, dts, bad, {lo0, lo1, lo2}, {hi0, hi1, hi2}, fl}
static const opcase cases[] = {
    OP2(add, r_add, ALL, 0, -50, 50, -50, 50, 0),
    OP2(sub, r_sub, NUMERIC, EM_ERR_RUNTIME, -50, 50, -50, 50, 0),
    OP2(mul, r_mul, ALL, 0, -20, 20, -20, 20, 0),
    OP2(div, r_div, ALL, 0, -20, 20, 1, 9, NONZERO),
    OP2(div_trunc, r_div_trunc, NUMERIC, EM_ERR_DTYPE, -50, 50, -9, 9, NONZERO),
    OP2(div_floor, r_div_floor, NUMERIC, EM_ERR_DTYPE, -50, 50, -9, 9, NONZERO),
    OP2(remainder, r_remainder, NUMERIC, EM_ERR_DTYPE, -50, 50, -9, 9, NONZERO),
    OP2(fmod, r_fmod, NUMERIC, EM_ERR_DTYPE, -50, 50, -9, 9, NONZERO),
    OP2(pow, r_pow, NUMERIC, EM_ERR_DTYPE, 0.1, 6, 0, 5, 0),
    OP2(float_power, r_pow, ALL, 0, 0.1, 6, -2, 4, 0),
    OP2(atan2, r_atan2, ALL, 0, -5, 5, -5, 5, 0),
    OP2(hypot, r_hypot, FLOATS, EM_ERR_DTYPE, -5, 5, -5, 5, 0),
    OP2(copysign, r_copysign, ALL, 0, -5, 5, -5, 5, 0),
    OP2(xlogy, r_xlogy, ALL, 0, -3, 3, 0.1, 5, INTVALS | NONZERO),
    OP2(logaddexp, r_logaddexp, FLOATS, EM_ERR_DTYPE, -5, 5, -5, 5, 0),
    OP2(logaddexp2, r_logaddexp2, FLOATS, EM_ERR_DTYPE, -5, 5, -5, 5, 0),
    /* 16-bit floats: test_binary_rules.c; bad 0: other dtypes not checked here */
    OP2(nextafter, r_nextafter, D(F32) | D(F64), 0, -3, 3, -3, 3, INTVALS),
    OP2(maximum, r_max, ALL, 0, -9, 9, -9, 9, INTVALS),
    OP2(minimum, r_min, ALL, 0, -9, 9, -9, 9, INTVALS),
    OP2(fmax, r_max, ALL, 0, -9, 9, -9, 9, INTVALS),
    OP2(fmin, r_min, ALL, 0, -9, 9, -9, 9, INTVALS),
    OP2(clamp_min_tensor, r_max, ALL, 0, -9, 9, -9, 9, 0),
    OP2(clamp_max_tensor, r_min, ALL, 0, -9, 9, -9, 9, 0),
    OP2(eq, r_eq, ALL, 0, -3, 3, -3, 3, INTVALS),
    OP2(ne, r_ne, ALL, 0, -3, 3, -3, 3, INTVALS),
    OP2(lt, r_lt, ALL, 0, -3, 3, -3, 3, INTVALS),
    OP2(le, r_le, ALL, 0, -3, 3, -3, 3, INTVALS),
    OP2(gt, r_gt, ALL, 0, -3, 3, -3, 3, INTVALS),
    OP2(ge, r_ge, ALL, 0, -3, 3, -3, 3, INTVALS),
    OP2(logical_and, r_land, ALL, 0, -2, 2, -2, 2, INTVALS),
    OP2(logical_or, r_lor, ALL, 0, -2, 2, -2, 2, INTVALS),
    OP2(logical_xor, r_lxor, ALL, 0, -2, 2, -2, 2, INTVALS),
    OP2(bitwise_and, r_band, INTS | D(BOOL), EM_ERR_DTYPE, -100, 100, -100, 100, 0),
    OP2(bitwise_or, r_bor, INTS | D(BOOL), EM_ERR_DTYPE, -100, 100, -100, 100, 0),
    OP2(bitwise_xor, r_bxor, INTS | D(BOOL), EM_ERR_DTYPE, -100, 100, -100, 100, 0),
    OP2(bitwise_left_shift, r_lshift, INTS, EM_ERR_DTYPE, -100, 100, 0, 8, 0),
    OP2(bitwise_right_shift, r_rshift, INTS, EM_ERR_DTYPE, -100, 100, 0, 8, 0),
    OP2(gcd, r_gcd, INTS, EM_ERR_DTYPE, -40, 40, -40, 40, 0),
    OP2(lcm, r_lcm, INTS, EM_ERR_DTYPE, -40, 40, -40, 40, 0),
    OP2(heaviside, r_heaviside, ALL, 0, -2, 2, -3, 3, INTVALS),
    OP3(where, r_where, ALL, 0, 0, 2, -9, 9, -9, 9, 0),
    OP3(lerp, r_lerp, FLOATS, EM_ERR_DTYPE, -5, 5, -5, 5, -0.5, 1.5, 0),
    OP3(addcmul, r_addcmul, NUMERIC, EM_ERR_DTYPE, -20, 20, -9, 9, -9, 9, 0),
    OP3(addcdiv, r_addcdiv, FLOATS, EM_ERR_RUNTIME, -20, 20, -9, 9, 0.5, 4, 0),
    OP3(clamp_tensor, r_clamp, NUMERIC, EM_ERR_DTYPE, -9, 9, -6, 3, -3, 6, 0),
};

/* ---- driver ------------------------------------------------------------ */
static em_dtype compute_dtype(em_op op, em_dtype dt)
{
    switch (em_ops[op].rule) {
    case EM_RULE_FLOAT: return isf(dt) ? dt : EM_F32;
    case EM_RULE_LOGICAL: return EM_BOOL;
    case EM_RULE_DOUBLE: return EM_F64;
    default: return dt;
    }
}
static em_dtype result_dtype(em_op op, em_dtype dt)
{
    em_rule r = (em_rule)em_ops[op].rule;
    return r == EM_RULE_COMPARE || r == EM_RULE_LOGICAL ? EM_BOOL : compute_dtype(op, dt);
}

/* v as stored in dtype dt: integers wrap, floats round */
static double as_dtype(double v, em_dtype dt)
{
    switch (dt) {
    case EM_U8: return (uint8_t)(int64_t)v;
    case EM_I8: return (int8_t)(int64_t)v;
    case EM_I16: return (int16_t)(int64_t)v;
    case EM_I32: return (int32_t)(int64_t)v;
    case EM_I64: return (double)(int64_t)v;
    case EM_BOOL: return v != 0;
    case EM_F32: return (float)v;
    case EM_F64: return v;
    default: {
        em_tensor *s = em_tensor_scalar(v, dt);
        double r = NAN;
        em_item(s, &r);
        em_release(s);
        return r;
    }
    }
}

/* Input k of case o in dtype dt (where's condition is bool). */
static em_tensor *gen(const opcase *o, int k, em_dtype dt, int ndim, const int64_t *sizes)
{
    if (o->op == EM_OP_where && k == 0) dt = EM_BOOL;
    double lo = o->lo[k], hi = o->hi[k];
    if (dt == EM_U8 && lo < 0) lo = 0;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= sizes[d];
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        double x = lo + (hi - lo) * trandu();
        if (dt == EM_BOOL) x = trandu() < 0.5;
        else if (!isf(dt) || (o->flags & INTVALS)) x = floor(x);
        if (x == 0 && (o->flags & NONZERO) && k == o->nin - 1) x = dt == EM_BOOL ? 1 : 3;
        v[i] = as_dtype(x, dt);
    }
    em_tensor *t = tt(dt, ndim, sizes, v);
    free(v);
    return t;
}

/* Checks got[i] against the reference on the inputs broadcast to got's
 * shape, the reference rounded to got's dtype. */
static bool check_values(const opcase *o, em_dtype dt, const em_tensor *got, em_tensor *const *in)
{
    em_dtype cdt = compute_dtype(o->op, dt), rd = em_dtype_of(got);
    int nd = em_ndim(got);
    int64_t n = em_numel(got), idx[EM_MAX_DIMS], sub[EM_MAX_DIMS];
    double tol = 4 * fmax(trtol(cdt), trtol(rd));
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i;
        for (int d = nd - 1; d >= 0; d--) idx[d] = r % em_sizes(got)[d], r /= em_sizes(got)[d];
        double x[3], g;
        for (int k = 0; k < o->nin; k++) {
            int kd = em_ndim(in[k]);
            for (int d = 0; d < kd; d++) sub[d] = em_sizes(in[k])[d] == 1 ? 0 : idx[nd - kd + d];
            em_get(in[k], sub, &x[k]);
            if (k > 0 || o->op != EM_OP_where) x[k] = as_dtype(x[k], cdt == EM_BOOL || !isf(cdt) ? cdt : EM_F64);
        }
        double want = o->ref(x, cdt);
        if (!isf(cdt)) want = as_dtype(want, cdt); /* integer results wrap in the compute dtype */
        want = as_dtype(want, rd);
        em_get(got, idx, &g);
        bool ok = (isnan(g) && isnan(want)) || g == want || fabs(g - want) <= tol * (1 + fabs(want));
        if (!ok) {
            fprintf(stderr, "  %s %s: element %lld: got %.9g, want %.9g (inputs %g, %g, %g)\n", em_ops[o->op].name,
                    em_dtype_name(dt), (long long)i, g, want, x[0], x[1], o->nin > 2 ? x[2] : 0.0);
            return false;
        }
    }
    return true;
}

static void release_all(em_tensor **ts, int n)
{
    for (int k = 0; k < n; k++) em_release(ts[k]), ts[k] = NULL;
}

/* One op, one dtype: every layout and form. */
static void run_case(const opcase *o, em_dtype dt)
{
    const char *name = em_ops[o->op].name;
    em_dtype rd = result_dtype(o->op, dt);
    em_tensor *in[3] = {0}, *r = NULL;
    /* broadcast, the first input non-contiguous: (4,1,3) (5,1) (1,3) -> (4,5,3) */
    em_tensor *a = gen(o, 0, dt, SHAPE(4, 1, 3));
    in[0] = tnoncontig(a);
    em_release(a);
    in[1] = gen(o, 1, dt, SHAPE(5, 1));
    if (o->nin == 3) in[2] = gen(o, 2, dt, SHAPE(1, 3));
    r = o->fn(in);
    CHECK_MSG(r, "%s %s: %s", name, em_dtype_name(dt), em_last_error());
    CHECK_MSG(em_dtype_of(r) == rd, "%s %s: result dtype %s", name, em_dtype_name(dt), em_dtype_name(em_dtype_of(r)));
    CHECK(tshape_is(r, SHAPE(4, 5, 3)) && check_values(o, dt, r, in));

    /* out=: resized from a wrong shape; and a float64 out takes any non-bool result */
    em_tensor *out = em_empty(SHAPE(2), rd);
    CHECK(o->fn_out(out, in) == EM_OK && tshape_is(out, SHAPE(4, 5, 3)));
    CHECK(em_equal(out, r));
    em_release(out), em_release(r);
    if (rd != EM_BOOL) {
        out = em_empty(SHAPE(4, 5, 3), EM_F64);
        CHECK(o->fn_out(out, in) == EM_OK && check_values(o, dt, out, in));
        em_release(out);
    }

    /* in place on a non-contiguous (4,5,3) self: the result cast to self's dtype, if allowed */
    a = gen(o, 0, dt, SHAPE(4, 5, 3));
    em_tensor *self = tnoncontig(a), *before = em_clone(a);
    em_release(a);
    em_release(in[0]);
    in[0] = before; /* the reference reads self's old values */
    em_status fails = em_ops[o->op].flags & EM_F_NO_INPLACE ? EM_ERR_NOT_IMPLEMENTED
                      : isf(rd) && !isf(dt)                  ? EM_ERR_DTYPE   /* float result into an integer self */
                      : o->op == EM_OP_float_power && dt != EM_F64 ? EM_ERR_RUNTIME
                                                                   : EM_OK;
    if (fails) {
        CHECK_ERR(o->fn_(self, in), fails);
        CHECK(em_equal(self, before));
    } else {
        CHECK_MSG(o->fn_(self, in) == EM_OK, "%s_ %s: %s", name, em_dtype_name(dt), em_last_error());
        CHECK(em_dtype_of(self) == dt && check_values(o, dt, self, in));
    }
    em_release(self), em_release(before);
    in[0] = NULL;
    release_all(in, 3);

    /* 0-d operands, a transposed first operand, and empty operands */
    for (int k = 0; k < o->nin; k++) in[k] = gen(o, k, dt, 0, NULL);
    r = o->fn(in);
    CHECK(r && em_ndim(r) == 0 && check_values(o, dt, r, in));
    em_release(r);
    release_all(in, 3);
    a = gen(o, 0, dt, SHAPE(3, 4));
    in[0] = em_t(a);
    em_release(a);
    for (int k = 1; k < o->nin; k++) in[k] = gen(o, k, dt, SHAPE(4, 3));
    r = o->fn(in);
    CHECK(r && tshape_is(r, SHAPE(4, 3)) && check_values(o, dt, r, in));
    em_release(r);
    release_all(in, 3);
    in[0] = gen(o, 0, dt, SHAPE(0, 3));
    for (int k = 1; k < o->nin; k++) in[k] = gen(o, k, dt, SHAPE(3));
    r = o->fn(in);
    CHECK(r && tshape_is(r, SHAPE(0, 3)) && em_dtype_of(r) == rd);
    em_release(r);
    release_all(in, 3);
}

/* An unsupported dtype fails with the op's error and writes nothing. */
static void run_unsupported(const opcase *o, em_dtype dt)
{
    em_tensor *in[3] = {0};
    for (int k = 0; k < o->nin; k++) in[k] = gen(o, k, dt, SHAPE(3));
    em_tensor *out = em_zeros(SHAPE(3), EM_F64);
    CHECK_ERR(o->fn(in), o->bad);
    CHECK_ERR(o->fn_out(out, in), o->bad);
    CHECK(tval(out, 0) == 0);
    em_release(out);
    release_all(in, 3);
}

static void run_cases(int nin)
{
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const opcase *o = &cases[c];
        if (o->nin != nin) continue;
        for (int dt = 0; dt < TEST_REAL_DTYPES && !test_failed(); dt++) {
            if (o->dtypes & (1u << dt))
                run_case(o, (em_dtype)dt);
            else if (o->bad)
                run_unsupported(o, (em_dtype)dt);
        }
        if (test_failed()) {
            fprintf(stderr, "  (in op %s)\n", em_ops[o->op].name);
            return;
        }
        test_cover(o->op);
    }
}

TEST(binary_values_all_dtypes_and_layouts) { run_cases(2); }
TEST(ternary_values_all_dtypes_and_layouts) { run_cases(3); }
