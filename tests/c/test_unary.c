/* Tests of the pointwise unary ops (include/ember/ops/unary.def): every op
 * against a double reference computed here, on every dtype (accepted or
 * rejected as PyTorch 1.13 does), special values, strided, transposed,
 * broadcast, 0-d and empty inputs, out= and in-place; then the param
 * checks, PyTorch's edge cases, and float32 accuracy sweeps of the
 * vectorized math (src/cpu/vmath.h and glibc's libmvec), and float64
 * sweeps of the libmvec ops. */
#include "test.h"
#include <float.h>

/* ---- every unary op through one signature: p holds its params ---------- */
typedef struct unary_api {
    em_tensor *(*fn)(const em_tensor *x, const double *p);
    em_status (*inplace)(em_tensor *self, const double *p);
    em_status (*out)(em_tensor *out, const em_tensor *x, const double *p);
} unary_api;
#define ARGS0
#define ARGS1 , p[0]
#define ARGS2 , p[0], p[1]
#define ARGS3 , p[0], p[1], p[2]
#define EM_UNARY(name, rule, flags, n, ps)                                                                     \
    static em_tensor *new_##name(const em_tensor *x, const double *p) { return (void)p, em_##name(x ARGS##n); } \
    static em_status inplace_##name(em_tensor *x, const double *p) { return (void)p, em_##name##_(x ARGS##n); } \
    static em_status out_##name(em_tensor *o, const em_tensor *x, const double *p)                              \
    {                                                                                                          \
        return (void)p, em_##name##_out(o, x ARGS##n);                                                         \
    }
#include "ember/ops/unary.def"
#undef EM_UNARY
static const unary_api api[EM_OP_COUNT] = {
#define EM_UNARY(name, rule, flags, n, ps) [EM_OP_##name] = {new_##name, inplace_##name, out_##name},
#include "ember/ops/unary.def"
#undef EM_UNARY
};

/* ---- double references ------------------------------------------------- */
typedef double (*ref_fn)(double x, const double *p, em_dtype dt);
#define REF(name, expr) \
    static double ref_##name(double x, const double *p, em_dtype dt) { return (void)p, (void)dt, (expr); }

/* y * sigmoid(z) without overflow or cancellation */
static double mul_sigmoid(double y, double z)
{
    double e = exp(-fabs(z));
    return y * (z >= 0 ? 1 : e) / (1 + e);
}
static double clamp_ref(double x, double lo, double hi)
{
    if (!isnan(lo) && x < lo) x = lo;
    return !isnan(hi) && x > hi ? hi : x;
}
static double elu_ref(double x, double alpha, double scale, double input_scale)
{
    return x <= 0 ? alpha * scale * expm1(x * input_scale) : scale * x;
}
/* erfinv by bisection on erf (|y| <= 0.5) or erfc (beyond, 1 - |y| exact) */
static double erfinv_ref(double y)
{
    double ay = fabs(y), lo = 0, hi = 10;
    if (!(ay < 1)) return ay == 1 ? copysign(INFINITY, y) : NAN;
    if (ay == 0) return y;
    for (int k = 0; k < 200 && lo < hi; k++) {
        double mid = 0.5 * (lo + hi);
        if (mid == lo || mid == hi) break;
        bool below = ay <= 0.5 ? erf(mid) < ay : erfc(mid) > 1 - ay;
        *(below ? &lo : &hi) = mid;
    }
    return copysign(0.5 * (lo + hi), y);
}
static double largest(em_dtype dt)
{
    return dt == EM_F16 ? 65504.0 : dt == EM_BF16 ? 0x1.fep127 : dt == EM_F32 ? FLT_MAX : DBL_MAX;
}
static double nan_to_num_ref(double x, const double *p, em_dtype dt)
{
    if (isnan(x)) return p[0];
    if (x == INFINITY) return isinf(p[1]) ? largest(dt) : p[1];
    if (x == -INFINITY) return isinf(p[2]) ? -largest(dt) : p[2];
    return x;
}

REF(neg, -x)
REF(abs, fabs(x))
REF(sign, (x > 0) - (x < 0))
REF(identity, x)
REF(square, x * x)
REF(exp, exp(x))
REF(exp2, exp2(x))
REF(expm1, expm1(x))
REF(log, log(x))
REF(log2, log2(x))
REF(log10, log10(x))
REF(log1p, log1p(x))
REF(sqrt, sqrt(x))
REF(rsqrt, 1 / sqrt(x))
REF(reciprocal, 1 / x)
REF(sin, sin(x))
REF(cos, cos(x))
REF(tan, tan(x))
REF(asin, asin(x))
REF(acos, acos(x))
REF(atan, atan(x))
REF(sinh, sinh(x))
REF(cosh, cosh(x))
REF(tanh, tanh(x))
REF(asinh, asinh(x))
REF(acosh, acosh(x))
REF(atanh, atanh(x))
REF(erf, erf(x))
REF(erfc, erfc(x))
REF(erfinv, erfinv_ref(x))
REF(sigmoid, mul_sigmoid(1, x))
REF(logsigmoid, fmin(x, 0) - log1p(exp(-fabs(x))))
REF(relu, x < 0 ? 0 : x)
REF(relu6, clamp_ref(x, 0, 6))
REF(gelu, p[0] == 0 ? 0.5 * x * erfc(-x / sqrt(2.0)) : mul_sigmoid(x, 2 * sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)))
REF(silu, mul_sigmoid(x, x))
REF(mish, x * tanh(log1p(exp(x))))
REF(softplus, x * p[0] > p[1] ? x : log1p(exp(x * p[0])) / p[0])
REF(elu, elu_ref(x, p[0], 1, 1))
REF(celu, elu_ref(x, p[0], 1, 1 / p[0]))
REF(selu, elu_ref(x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1))
REF(leaky_relu, x > 0 ? x : x * p[0])
REF(clamp, clamp_ref(x, p[0], p[1]))
REF(hardsigmoid, clamp_ref(x + 3, 0, 6) / 6)
REF(hardswish, x * clamp_ref(x + 3, 0, 6) / 6)
REF(floor, floor(x))
REF(ceil, ceil(x))
REF(round, p[0] == 0 ? nearbyint(x) : p[0] > 0 ? nearbyint(x * pow(10, p[0])) / pow(10, p[0]) : nearbyint(x / pow(10, -p[0])) * pow(10, -p[0]))
REF(trunc, trunc(x))
REF(frac, x - trunc(x))
REF(nan_to_num, nan_to_num_ref(x, p, dt))
REF(isnan, isnan(x))
REF(isinf, isinf(x))
REF(isfinite, isfinite(x))
REF(isposinf, x == INFINITY)
REF(isneginf, x == -INFINITY)
REF(logical_not, x == 0)
REF(bitwise_not, dt == EM_BOOL ? x == 0 : -x - 1)

/* ---- the cases --------------------------------------------------------- */
#define DT(E) (1u << EM_##E)
#define INTS (DT(U8) | DT(I8) | DT(I16) | DT(I32) | DT(I64))
#define FLOATS (DT(F16) | DT(F32) | DT(F64) | DT(BF16))
#define NUMERIC (INTS | FLOATS)
#define ALL (NUMERIC | DT(BOOL))

/* Result dtype: the input's, float (the default dtype for integral inputs), bool. */
enum { SAME, FLOAT, BOOL };

typedef struct unary_case {
    em_op op;
    ref_fn ref;
    unsigned dtypes; /* accepted input dtypes; the others must fail with EM_ERR_DTYPE */
    int result;
    double lo, hi;   /* range of the random inputs */
    double ulps;     /* float32 tolerance against the double reference */
    double rtol64;   /* float64 tolerance (relative), 0 for 1e-14 */
    double p[3];
    unsigned skip;   /* dtypes whose semantics the reference does not model */
} unary_case;

#define C(op, dtypes, result, lo, hi, ulps, ...) {EM_OP_##op, ref_##op, dtypes, result, lo, hi, ulps, 0, __VA_ARGS__}
static const unary_case cases[] = {
    C(neg, NUMERIC, SAME, -100, 100, 0, {0}),
    C(abs, NUMERIC, SAME, -100, 100, 0, {0}),
    C(sign, ALL, SAME, -3, 3, 0, {0}),
    {EM_OP_positive, ref_identity, NUMERIC, SAME, -100, 100, 0, 0, {0}, 0},
    C(square, NUMERIC, SAME, -100, 100, 0.5, {0}),
    C(exp, ALL, FLOAT, -110, 100, 1, {0}),
    C(exp2, ALL, FLOAT, -160, 140, 2, {0}),
    C(expm1, ALL, FLOAT, -20, 100, 1.5, {0}),
    C(log, ALL, FLOAT, 0, 1000, 1, {0}),
    C(log2, ALL, FLOAT, 0, 1000, 2.5, {0}),
    C(log10, ALL, FLOAT, 0, 1000, 2.5, {0}),
    C(log1p, ALL, FLOAT, -1, 1000, 1.5, {0}),
    C(sqrt, ALL, FLOAT, 0, 1000, 0.5, {0}),
    C(rsqrt, ALL, FLOAT, 0, 1000, 1.5, {0}),
    C(reciprocal, ALL, FLOAT, -100, 100, 0.5, {0}),
    /* float32 through glibc's libmvec: up to 3.5 ulp (unary_f32_accuracy) */
    C(sin, ALL, FLOAT, -10, 10, 2.5, {0}),
    C(cos, ALL, FLOAT, -10, 10, 2, {0}),
    C(tan, ALL, FLOAT, -1.5, 1.5, 3.5, {0}),
    C(asin, ALL, FLOAT, -1, 1, 3.5, {0}),
    C(acos, ALL, FLOAT, -1, 1, 2.5, {0}),
    C(atan, ALL, FLOAT, -10, 10, 2.5, {0}),
    C(sinh, ALL, FLOAT, -90, 90, 2, {0}),
    C(cosh, ALL, FLOAT, -90, 90, 2.5, {0}),
    C(tanh, ALL, FLOAT, -10, 10, 2, {0}),
    C(asinh, ALL, FLOAT, -100, 100, 2.5, {0}),
    C(acosh, ALL, FLOAT, 1, 100, 3, {0}),
    C(atanh, ALL, FLOAT, -1, 1, 2.5, {0}),
    C(erf, ALL, FLOAT, -4, 4, 2.5, {0}),
    C(erfc, ALL, FLOAT, -4, 10, 3, {0}),
    C(erfinv, ALL, FLOAT, -1, 1, 1, {0}),
    C(sigmoid, ALL, FLOAT, -100, 100, 2.5, {0}),
    C(logsigmoid, FLOATS, SAME, -100, 100, 3, {0}),
    C(relu, NUMERIC, SAME, -100, 100, 0, {0}),
    C(relu6, NUMERIC, SAME, -10, 10, 0, {0}),
    /* gelu's float64 error grows as x^2 eps in the negative tail: the
     * rounding of x/sqrt2 (in the reference too). tanh-gelu in float32 rounds
     * u = sqrt(2/pi)(x + 0.044715x^3), as PyTorch does, so its relative error
     * grows as |u| ulp for negative x (unary_f32_accuracy covers the tail). */
    {EM_OP_gelu, ref_gelu, FLOATS, SAME, -15, 10, 6.5, 1e-12, {0}, 0},
    {EM_OP_gelu, ref_gelu, FLOATS, SAME, -3, 10, 12, 0, {1}, 0},
    C(silu, FLOATS, SAME, -100, 100, 3.5, {0}),
    C(mish, FLOATS, SAME, -100, 30, 4.5, {0}),
    C(softplus, FLOATS, SAME, -50, 50, 2.5, {2, 15}),
    C(softplus, FLOATS, SAME, -50, 50, 2.5, {0.5, 3}),
    C(elu, FLOATS, SAME, -20, 20, 2, {1.5}),
    C(celu, FLOATS, SAME, -20, 20, 2, {2}),
    C(selu, FLOATS, SAME, -20, 20, 4, {0}),
    C(leaky_relu, FLOATS, SAME, -20, 20, 1.5, {0.01}),
    {EM_OP_hardtanh, ref_clamp, NUMERIC, SAME, -5, 5, 0, 0, {0.5, 2.5}, 0},
    {EM_OP_hardtanh, ref_clamp, NUMERIC, SAME, -5, 5, 0, 0, {-1.5, 2.5}, DT(U8)},
    C(hardsigmoid, FLOATS, SAME, -5, 5, 1.5, {0}),
    C(hardswish, FLOATS, SAME, -5, 5, 2, {0}),
    C(floor, NUMERIC, SAME, -100, 100, 0, {0}),
    C(ceil, NUMERIC, SAME, -100, 100, 0, {0}),
    C(trunc, NUMERIC, SAME, -100, 100, 0, {0}),
    C(round, NUMERIC, SAME, -100, 100, 0, {0}),
    C(round, FLOATS, SAME, -100, 100, 0.5, {2}),
    C(round, FLOATS, SAME, -10000, 10000, 1.5, {-2}),
    C(frac, FLOATS, SAME, -100, 100, 0, {0}),
    C(clamp, NUMERIC, SAME, -10, 10, 0, {0.5, 5.5}),
    C(clamp, NUMERIC, SAME, -10, 10, 0, {NAN, 3}),
    C(clamp, NUMERIC, SAME, -10, 10, 0, {-2.5, NAN}, DT(U8)),
    C(clamp, NUMERIC, SAME, -10, 10, 0, {4, 1}),
    {EM_OP_clip, ref_clamp, NUMERIC, SAME, -10, 10, 0, 0, {1, 4}, 0},
    C(nan_to_num, ALL, SAME, -10, 10, 0, {0, INFINITY, -INFINITY}),
    C(nan_to_num, ALL, SAME, -10, 10, 0, {7, 100, -INFINITY}),
    C(isnan, ALL, BOOL, -10, 10, 0, {0}),
    C(isinf, ALL, BOOL, -10, 10, 0, {0}),
    C(isfinite, ALL, BOOL, -10, 10, 0, {0}),
    C(isposinf, ALL, BOOL, -10, 10, 0, {0}),
    C(isneginf, ALL, BOOL, -10, 10, 0, {0}),
    C(logical_not, ALL, BOOL, -2, 2, 0, {0}),
    C(bitwise_not, INTS | DT(BOOL), SAME, -100, 100, 0, {0}),
};

/* ---- comparing with the reference ------------------------------------- */
/* Spacing of float32 at |v| (the smallest subnormal below FLT_MIN). */
static double ulp32(double v)
{
    int e;
    if (fabs(v) < FLT_MIN) return 0x1p-149;
    frexp(v, &e);
    return ldexp(1, e - 24);
}
/* The reference value as an integral dtype stores it: truncated, wrapped. */
static double wrap(double v, em_dtype dt)
{
    uint64_t u = (uint64_t)(int64_t)v;
    switch (dt) {
    case EM_U8: return (uint8_t)u;
    case EM_I8: return (int8_t)u;
    case EM_I16: return (int16_t)u;
    case EM_I32: return (int32_t)u;
    case EM_BOOL: return v != 0;
    default: return (int64_t)u;
    }
}
/* got ~ want for a result of dtype dt: float32 within `ulps`, float64
 * within rtol64, half types within their precision of the rounded
 * reference (rounded: `want` already in dt), exact otherwise. */
static bool close(double got, double want, double rounded, em_dtype dt, double ulps, double rtol64)
{
    if (isnan(want) || isnan(rounded)) return isnan(got);
    switch (dt) {
    case EM_F32:
        if (isinf((float)want)) return got == (float)want;
        return fabs(got - want) <= ulps * ulp32(want);
    case EM_F64: return isinf(want) ? got == want : fabs(got - want) <= (rtol64 ? rtol64 : 1e-14) * fabs(want) + 1e-300;
    case EM_F16:
    case EM_BF16: return isinf(rounded) ? got == rounded : fabs(got - rounded) <= 2 * trtol(dt) * fabs(rounded) + 1e-7;
    default: return got == rounded;
    }
}
static const char *case_name(const unary_case *c)
{
    static char buf[96];
    snprintf(buf, sizeof buf, "%s(%g, %g, %g)", em_ops[c->op].name, c->p[0], c->p[1], c->p[2]);
    return buf;
}
/* y == op(x) elementwise, y of dtype dt (a result of c, maybe cast to dt). */
static bool matches(const unary_case *c, const em_tensor *x, const em_tensor *y, em_dtype dt)
{
    int64_t n = em_numel(x);
    if (em_numel(y) != n) return false;
    double *xv = tvals(x), *yv = tvals(y), *want = malloc(n * sizeof *want);
    for (int64_t i = 0; i < n; i++) {
        want[i] = c->ref(xv[i], c->p, dt);
        if (!em_dtype_is_float(dt)) want[i] = wrap(want[i], dt);
    }
    em_tensor *rounded = tt(dt, em_ndim(x), em_sizes(x), want);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        double r = tval(rounded, i);
        ok = close(yv[i], want[i], r, dt, c->ulps, c->rtol64);
        if (!ok)
            fprintf(stderr, "  %s on %s: x=%.9g got %.9g want %.9g\n", case_name(c), em_dtype_name(em_dtype_of(x)), xv[i],
                    yv[i], want[i]);
    }
    em_release(rounded);
    free(xv), free(yv), free(want);
    return ok;
}

/* ---- inputs ------------------------------------------------------------ */
static const double specials[] = {0,     -0.0,   INFINITY, -INFINITY, NAN,   1,    -1,   0.5, -0.5,
                                  1e-30, -1e-30, 1e-40,    3,         -3,    1e30, -1e30, 0.999};
#define NSPECIAL (sizeof specials / sizeof *specials)
enum { ROWS = 4, COLS = 9 };

/* A (ROWS, COLS) input of dtype dt: floats begin with the special values,
 * integers stay in range of dt; bools alternate. */
static em_tensor *case_input(const unary_case *c, em_dtype dt)
{
    double v[ROWS * COLS], lo = c->lo, hi = c->hi;
    if (dt == EM_U8) lo = fmax(lo, 0), hi = fmin(fmax(hi, 1), 255);
    if (dt == EM_I8) lo = fmax(lo, -128), hi = fmin(hi, 127);
    for (int i = 0; i < ROWS * COLS; i++) {
        bool special = em_dtype_is_float(dt) && i < (int)NSPECIAL;
        v[i] = special ? specials[i] : lo + (hi - lo) * trandu();
        if (dt == EM_BOOL) v[i] = i % 3 == 0;
    }
    return tt(dt, SHAPE(ROWS, COLS), v);
}
static em_dtype result_dtype(const unary_case *c, em_dtype dt)
{
    if (c->result == BOOL) return EM_BOOL;
    if (c->result == FLOAT && !em_dtype_is_float(dt)) return EM_F32;
    return dt;
}

/* ---- one case on one dtype: every form and layout ---------------------- */
/* t's values are `want` (NaN matching NaN) */
static bool values_are(const em_tensor *t, const double *want)
{
    for (int64_t i = 0; i < em_numel(t); i++) {
        double v = tval(t, i);
        if (!(v == want[i] || (isnan(v) && isnan(want[i])))) return false;
    }
    return true;
}

static void run_case(const unary_case *c, em_dtype dt)
{
    const unary_api *f = &api[c->op];
    em_tensor *x = case_input(c, dt);
    if (!(c->dtypes & (1u << dt))) {
        CHECK_ERR(f->fn(x, c->p), EM_ERR_DTYPE);
        em_release(x);
        return;
    }
    em_dtype rdt = result_dtype(c, dt);
    /* contiguous, strided, transposed */
    em_tensor *y = f->fn(x, c->p), *xs = tnoncontig(x), *ys = f->fn(xs, c->p);
    em_tensor *xt = em_t(x), *yt = f->fn(xt, c->p);
    bool ok = y && ys && yt && em_dtype_of(y) == rdt && tshape_is(y, SHAPE(ROWS, COLS)) && tshape_is(yt, SHAPE(COLS, ROWS));
    ok = ok && matches(c, x, y, rdt) && matches(c, xs, ys, rdt) && matches(c, xt, yt, rdt);
    em_release(y), em_release(ys), em_release(yt), em_release(xt);
    if (!ok) test_fail(__FILE__, __LINE__, "%s on %s: new results [%s]", case_name(c), em_dtype_name(dt), em_last_error());

    /* out=: resized from another shape; into float64 when the result casts */
    em_tensor *out = em_empty(SHAPE(2), rdt);
    ok = ok && f->out(out, x, c->p) == EM_OK && tshape_is(out, SHAPE(ROWS, COLS)) && matches(c, x, out, rdt);
    em_release(out);
    /* (half types: the runner writes a wider out from the float32 loop
     * without rounding to the half type first, unlike PyTorch) */
    if (rdt != EM_BOOL && rdt != EM_F16 && rdt != EM_BF16) {
        out = em_empty(SHAPE(ROWS, COLS), EM_F64);
        em_tensor *want = f->fn(x, c->p);
        double *wv = tvals(want);
        ok = ok && f->out(out, x, c->p) == EM_OK && values_are(out, wv);
        em_release(out), em_release(want), free(wv);
    }
    if (rdt != EM_BOOL) { /* no float -> integral, no number -> bool */
        out = em_zeros(SHAPE(ROWS, COLS), em_dtype_is_float(rdt) ? EM_I32 : EM_BOOL);
        em_clear_error();
        ok = ok && f->out(out, x, c->p) != EM_OK && em_error_code() == EM_ERR_DTYPE;
        em_release(out);
    }
    if (!ok) test_fail(__FILE__, __LINE__, "%s on %s: out= [%s]", case_name(c), em_dtype_name(dt), em_last_error());

    /* in place, on a strided view: allowed when the result casts back */
    double *before = tvals(xs);
    uint64_t version = em_version(xs);
    if (em_ops[c->op].flags & EM_F_NO_INPLACE) {
        CHECK_ERR(f->inplace(xs, c->p), EM_ERR_NOT_IMPLEMENTED);
        ok = values_are(xs, before);
    } else if ((em_dtype_is_float(rdt) && !em_dtype_is_float(dt)) || (rdt != EM_BOOL && dt == EM_BOOL)) {
        CHECK_ERR(f->inplace(xs, c->p), EM_ERR_DTYPE);
        ok = values_are(xs, before) && em_version(xs) == version;
    } else {
        em_tensor *copy = em_clone(xs);
        ok = f->inplace(xs, c->p) == EM_OK && em_version(xs) == version + 1 && matches(c, copy, xs, dt);
        em_release(copy);
    }
    free(before);
    if (!ok) test_fail(__FILE__, __LINE__, "%s on %s: in place [%s]", case_name(c), em_dtype_name(dt), em_last_error());
    em_release(xs), em_release(x);
}

TEST(unary_ops_all_dtypes)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases && !test_failed(); k++)
        for (int dt = 0; dt < TEST_REAL_DTYPES; dt++)
            if (!(cases[k].skip & (1u << dt))) run_case(&cases[k], (em_dtype)dt);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) test_cover(cases[k].op);
}

/* ---- 0-d, empty and broadcast inputs; overlapping outputs -------------- */
TEST(unary_layouts)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases && !test_failed(); k++) {
        const unary_case *c = &cases[k];
        em_dtype dt = c->dtypes & DT(F32) ? EM_F32 : EM_I64;
        em_dtype rdt = result_dtype(c, dt);
        em_tensor *scalar = em_tensor_scalar(c->lo + 0.3 * (c->hi - c->lo), dt), *empty = em_zeros(SHAPE(0, 3), dt);
        em_tensor *row = case_input(c, dt), *row0 = em_select(row, 0, 1), *wide = em_expand(row0, SHAPE(3, COLS));
        em_tensor *ys = api[c->op].fn(scalar, c->p), *ye = api[c->op].fn(empty, c->p), *yw = api[c->op].fn(wide, c->p);
        bool ok = ys && ye && yw && em_ndim(ys) == 0 && em_dtype_of(ys) == rdt && tshape_is(ye, SHAPE(0, 3)) &&
                  em_dtype_of(ye) == rdt && tshape_is(yw, SHAPE(3, COLS)) && matches(c, scalar, ys, rdt) &&
                  matches(c, wide, yw, rdt);
        em_release(ys), em_release(ye), em_release(yw), em_release(scalar), em_release(empty);
        CHECK_MSG(ok, "%s: 0-d, empty or broadcast input [%s]", case_name(c), em_last_error());
        /* writing through the broadcast view would race on its shared elements */
        if (!(em_ops[c->op].flags & EM_F_NO_INPLACE) && rdt == dt) CHECK_ERR(api[c->op].inplace(wide, c->p), EM_ERR_RUNTIME);
        em_release(wide), em_release(row0), em_release(row);
    }
    /* out= may be the input itself (that is in place), not a shifted view of it */
    em_tensor *x = trand(EM_F32, SHAPE(10), -2, 2), *want = em_exp(x);
    double *wv = tvals(want);
    bool same = em_exp_out(x, x) == EM_OK && values_are(x, wv);
    free(wv);
    CHECK(same);
    em_tensor *head = em_narrow(x, 0, 0, 9), *tail = em_narrow(x, 0, 1, 9);
    CHECK_ERR(em_sigmoid_out(tail, head), EM_ERR_RUNTIME);
    em_release(head), em_release(tail), em_release(x), em_release(want);
}

/* ---- params: PyTorch's argument errors and their meaning --------------- */
/* op(x) has exactly the values `want` and dtype dt; releases the result */
static bool gives(em_tensor *y, em_dtype dt, int n, const double *want)
{
    bool ok = y && em_dtype_of(y) == dt && em_numel(y) == n && values_are(y, want);
    em_release(y);
    return ok;
}
#define VALS(...) (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), ((const double[]){__VA_ARGS__})

TEST(unary_param_checks)
{
    em_tensor *u8 = tt(EM_U8, SHAPE(3), (double[]){0, 5, 200}), *i8 = tt(EM_I8, SHAPE(3), (double[]){-100, 0, 100});
    em_tensor *f = tt(EM_F32, SHAPE(3), (double[]){-2, 0.5, 3}), *i64 = tt(EM_I64, SHAPE(2), (double[]){0x1p62 + 1024, -5});
    /* clamp: NAN is None; bounds convert to the dtype, which they must fit */
    CHECK_ERR(em_clamp(f, NAN, NAN), EM_ERR_RUNTIME);
    CHECK_ERR(em_clip_(f, NAN, NAN), EM_ERR_RUNTIME);
    CHECK(tval(f, 0) == -2);
    CHECK_ERR(em_clamp(i8, -1000, NAN), EM_ERR_RUNTIME);
    CHECK_ERR(em_clamp(i8, NAN, 128), EM_ERR_RUNTIME);
    CHECK_ERR(em_clamp(u8, NAN, 300), EM_ERR_RUNTIME);
    CHECK_ERR(em_clamp(u8, -256, NAN), EM_ERR_RUNTIME);
    CHECK_ERR(em_clamp(f, 1e39, NAN), EM_ERR_RUNTIME);
    CHECK_ERR(em_clamp(f, NAN, -1e39), EM_ERR_RUNTIME);
    CHECK(gives(em_clamp(u8, -1, NAN), EM_U8, VALS(255, 255, 255))); /* uint8 wraps -1, as PyTorch */
    CHECK(gives(em_clamp(u8, 3, -1), EM_U8, VALS(3, 5, 200)));
    CHECK(gives(em_clamp(i8, -128, 127), EM_I8, VALS(-100, 0, 100)));
    CHECK(gives(em_clamp(i64, NAN, 0x1p62), EM_I64, VALS(0x1p62, -5)));
    CHECK(gives(em_clamp(f, INFINITY, NAN), EM_F32, VALS(INFINITY, INFINITY, INFINITY)));
    /* hardtanh: unsigned inputs need non-negative limits; integers truncate */
    CHECK_ERR(em_hardtanh(u8, -1, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_hardtanh(i8, -129, 127), EM_ERR_RUNTIME);
    CHECK(gives(em_hardtanh(u8, 0.5, 6), EM_U8, VALS(0, 5, 6)));
    CHECK(gives(em_hardtanh(i8, -1.5, 1.5), EM_I8, VALS(-1, 0, 1)));
    CHECK(gives(em_relu6(u8), EM_U8, VALS(0, 5, 6)));
    CHECK_ERR(em_relu(NULL), EM_ERR_VALUE);
    /* activations' params */
    CHECK_ERR(em_celu(f, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_gelu(f, 2), EM_ERR_RUNTIME);
    CHECK_ERR(em_gelu_(f, 0.5), EM_ERR_RUNTIME);
    CHECK_ERR(em_leaky_relu(f, 1e39), EM_ERR_RUNTIME);
    CHECK_ERR(em_elu(f, -1e39), EM_ERR_RUNTIME);
    CHECK_ERR(em_softplus(f, 1e39, 20), EM_ERR_RUNTIME);
    CHECK(gives(em_softplus(f, 0, 20), EM_F32, VALS(INFINITY, INFINITY, INFINITY))); /* log(2) / 0 */
    CHECK(gives(em_elu(f, 0), EM_F32, VALS(-0.0, 0.5, 3)));
    /* round: decimals is an integer, and != 0 only for floating inputs */
    CHECK_ERR(em_round(f, 0.5), EM_ERR_TYPE);
    CHECK_ERR(em_round(f, 1e300), EM_ERR_TYPE);
    CHECK_ERR(em_round(i64, 1), EM_ERR_DTYPE);
    CHECK(gives(em_round(i64, 0), EM_I64, VALS(0x1p62 + 1024, -5)));
    em_tensor *halves = tt(EM_F32, SHAPE(4), (double[]){0.5, 1.5, 2.5, -0.5});
    em_tensor *dec = tt(EM_F32, SHAPE(3), (double[]){1.25, 1.35, 1234.5}), *big = tt(EM_F32, SHAPE(1), (double[]){1.5e30});
    CHECK(gives(em_round(halves, 0), EM_F32, VALS(0, 2, 2, -0.0)));
    CHECK(gives(em_round(dec, 1), EM_F32, VALS(1.2f, 1.4f, 1234.5f)));
    CHECK(gives(em_round(dec, -2), EM_F32, VALS(0, 0, 1200)));
    CHECK(gives(em_round(big, 10), EM_F32, VALS(INFINITY))); /* 1.5e30 * 1e10 overflows float32, as in PyTorch */
    em_tensor *all[] = {u8, i8, f, i64, halves, dec, big};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) em_release(all[k]);
}

/* ---- PyTorch's values at the edges ------------------------------------- */
TEST(unary_edge_values)
{
    /* signed zeros and NaN */
    em_tensor *z = tt(EM_F32, SHAPE(3), (double[]){-0.0, NAN, 0.0});
    em_tensor *sg = em_sign(z), *re = em_relu(z), *ab = em_abs(z), *fr = em_frac(z), *sq = em_sqrt(z), *rs = em_rsqrt(z);
    CHECK(sg && tval(sg, 0) == 0 && !signbit(tval(sg, 0)) && tval(sg, 1) == 0); /* sign(NaN) = 0 on CPU */
    CHECK(re && signbit(tval(re, 0)) && isnan(tval(re, 1)));                   /* relu(-0) = -0 */
    CHECK(ab && !signbit(tval(ab, 0)) && fr && !signbit(tval(fr, 0)));
    CHECK(sq && signbit(tval(sq, 0)) && rs && tval(rs, 0) == -INFINITY && tval(rs, 2) == INFINITY);
    em_tensor *edge[] = {z, sg, re, ab, fr, sq, rs};
    for (size_t k = 0; k < sizeof edge / sizeof *edge; k++) em_release(edge[k]);

    /* integer wrap-around, as PyTorch's two's complement */
    const int64_t i64v[] = {INT64_MIN, INT64_MAX, 3037000500, -7};
    const int32_t i32v[] = {INT32_MIN, INT32_MAX, 46341, -7};
    em_tensor *l = em_from_data(i64v, SHAPE(4), EM_I64), *w = em_from_data(i32v, SHAPE(4), EM_I32);
    em_tensor *ln = em_neg(l), *la = em_abs(l), *lsq = em_square(l), *lbn = em_bitwise_not(l), *wn = em_neg(w), *wsq = em_square(w);
    CHECK(ln && la && lsq && lbn && wn && wsq);
    const int64_t *pn = em_data_ptr(ln), *pa = em_data_ptr(la), *psq = em_data_ptr(lsq), *pbn = em_data_ptr(lbn);
    CHECK(pn[0] == INT64_MIN && pn[1] == -INT64_MAX && pa[0] == INT64_MIN && pa[3] == 7);
    CHECK(psq[2] == (int64_t)(3037000500ull * 3037000500ull) && pbn[0] == INT64_MAX && pbn[3] == 6);
    const int32_t *wnp = em_data_ptr(wn), *wsqp = em_data_ptr(wsq);
    CHECK(wnp[0] == INT32_MIN && wnp[1] == -INT32_MAX && wsqp[2] == (int32_t)(46341u * 46341u) && wsqp[3] == 49);
    em_tensor *u = tt(EM_U8, SHAPE(3), (double[]){0, 5, 200}), *b = tt(EM_BOOL, SHAPE(2), (double[]){1, 0});
    CHECK(gives(em_neg(u), EM_U8, VALS(0, 251, 56)));
    CHECK(gives(em_square(u), EM_U8, VALS(0, 25, 64)));
    CHECK(gives(em_sign(u), EM_U8, VALS(0, 1, 1)));
    CHECK(gives(em_bitwise_not(u), EM_U8, VALS(255, 250, 55)));
    CHECK(gives(em_bitwise_not(b), EM_BOOL, VALS(0, 1)));
    CHECK(gives(em_reciprocal(u), EM_F32, VALS(INFINITY, 0.2f, 0.005f)));
    CHECK(gives(em_log(u), EM_F32, VALS(-INFINITY, logf(5), logf(200))));
    em_tensor *ints[] = {l, w, ln, la, lsq, lbn, wn, wsq, u, b};
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) em_release(ints[k]);

    /* logical_not reads NaN as true; nan_to_num's defaults are per dtype */
    em_tensor *nf = tt(EM_F32, SHAPE(4), (double[]){NAN, 0, 2, -INFINITY});
    CHECK(gives(em_logical_not(nf), EM_BOOL, VALS(0, 1, 0, 0)));
    em_tensor *inf = tt(EM_F32, SHAPE(3), (double[]){INFINITY, -INFINITY, NAN});
    em_tensor *h = em_to_dtype(inf, EM_F16), *bf = em_to_dtype(inf, EM_BF16), *d = em_to_dtype(inf, EM_F64);
    CHECK(gives(em_nan_to_num(inf, 0, INFINITY, -INFINITY), EM_F32, VALS(FLT_MAX, -FLT_MAX, 0)));
    CHECK(gives(em_nan_to_num(h, 1, INFINITY, -INFINITY), EM_F16, VALS(65504, -65504, 1)));
    CHECK(gives(em_nan_to_num(bf, 0, INFINITY, -INFINITY), EM_BF16, VALS(0x1.fep127, -0x1.fep127, 0)));
    CHECK(gives(em_nan_to_num(d, 0, INFINITY, 5), EM_F64, VALS(DBL_MAX, 5, 0)));
    CHECK(gives(em_nan_to_num(inf, 0, 1e39, -INFINITY), EM_F32, VALS(INFINITY, -FLT_MAX, 0))); /* 1e39 -> inf */
    /* far tails, where PyTorch's float32 kernels round to 0 */
    em_tensor *neg = tt(EM_F32, SHAPE(2), (double[]){-100, -10});
    em_tensor *sig = em_sigmoid(neg), *gel = em_gelu(neg, 0);
    CHECK(sig && fabs(tval(sig, 0) - exp(-100.0)) <= 0x1p-149 && gel && fabs(tval(gel, 1) / (-10 * 0.5 * erfc(10 / sqrt(2.0))) - 1) < 1e-5);
    em_tensor *more[] = {nf, inf, h, bf, d, neg, sig, gel};
    for (size_t k = 0; k < sizeof more / sizeof *more; k++) em_release(more[k]);
}

/* ---- float32 accuracy of the vectorized math --------------------------- */
/* Max error in ulps of op over `n` float32 inputs against ref; results
 * below FLT_MIN count in units of the smallest subnormal. Worst x in *at. */
static double max_ulps(em_tensor *(*op)(const em_tensor *, const double *), const double *p, const float *x,
                       int64_t n, double (*ref)(double, const double *, em_dtype), double (*budget)(double), float *at)
{
    em_tensor *xt = em_from_data(x, 1, &n, EM_F32), *yt = op(xt, p);
    double worst = yt ? 0 : INFINITY;
    const float *y = yt ? em_data_ptr(yt) : NULL;
    for (int64_t i = 0; y && i < n; i++) {
        double want = ref(x[i], p, EM_F32), err;
        if (isnan(want) || isinf((float)want))
            err = (isnan(want) ? isnan(y[i]) : y[i] == (float)want) ? 0 : INFINITY;
        else
            err = fabs(y[i] - want) / ulp32(want) / (budget ? budget(x[i]) : 1);
        if (!(err <= worst)) worst = err, *at = x[i];
    }
    em_release(xt), em_release(yt);
    return worst;
}
/* tanh-gelu's error grows as 3|2u| ulp (float32 rounding of u): the budget
 * of 4 ulp is scaled to 4 + 3|2u| */
static double gelu_tanh_scale(double x) { return 1 + 0.75 * fabs(2 * sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)); }

TEST(unary_f32_accuracy)
{
    /* every 2^15th float32 (all binades, infinities, NaNs) and a dense sweep of [-20, 20] */
    enum { STRIDED = 1 << 17, DENSE = 1 << 16, N = STRIDED + DENSE };
    float *x = malloc(N * sizeof *x);
    for (uint32_t i = 0; i < STRIDED; i++) {
        uint32_t bits = i * 32768u + 12345u;
        memcpy(&x[i], &bits, 4);
    }
    for (int i = 0; i < DENSE; i++) x[STRIDED + i] = -20 + 40 * (float)i / DENSE;
    static const struct {
        em_op op;
        ref_fn ref;
        double p, ulps;
        double (*budget)(double);
    } sweeps[] = {
        {EM_OP_exp, ref_exp, 0, 1, NULL},           {EM_OP_sigmoid, ref_sigmoid, 0, 2.5, NULL},
        {EM_OP_tanh, ref_tanh, 0, 2, NULL},         {EM_OP_silu, ref_silu, 0, 3.5, NULL},
        {EM_OP_mish, ref_mish, 0, 4.5, NULL},       {EM_OP_gelu, ref_gelu, 0, 6.5, NULL},
        {EM_OP_gelu, ref_gelu, 1, 4, gelu_tanh_scale}, {EM_OP_logsigmoid, ref_logsigmoid, 0, 3, NULL},
        {EM_OP_softplus, ref_softplus, 1, 2.5, NULL},   {EM_OP_log, ref_log, 0, 1, NULL},
        {EM_OP_log1p, ref_log1p, 0, 1.5, NULL},         {EM_OP_expm1, ref_expm1, 0, 1.5, NULL},
        {EM_OP_elu, ref_elu, 1, 2, NULL},
        /* glibc: max ulp measured over every 1024th float32 and a dense
         * [-20, 20], the worst of its SSE, AVX2 and AVX-512 libmvec variants
         * (per EM_SIMD clone) and scalar libm (loop remainders): sin 2.0,
         * cos 1.9, tan 3.5, asin 3.0, acos 2.3, atan 2.4, sinh 1.9, cosh 2.4,
         * asinh 2.0, acosh 2.5, atanh 2.0, exp2 1.1, log2 2.4, log10 2.3,
         * erfc 2.9 (libm's erfcf); erf is vmath.h's, 2.3 */
        {EM_OP_sin, ref_sin, 0, 2.5, NULL},         {EM_OP_cos, ref_cos, 0, 2, NULL},
        {EM_OP_tan, ref_tan, 0, 3.5, NULL},         {EM_OP_asin, ref_asin, 0, 3.5, NULL},
        {EM_OP_acos, ref_acos, 0, 2.5, NULL},       {EM_OP_atan, ref_atan, 0, 2.5, NULL},
        {EM_OP_sinh, ref_sinh, 0, 2, NULL},         {EM_OP_cosh, ref_cosh, 0, 2.5, NULL},
        {EM_OP_asinh, ref_asinh, 0, 2.5, NULL},     {EM_OP_acosh, ref_acosh, 0, 3, NULL},
        {EM_OP_atanh, ref_atanh, 0, 2.5, NULL},     {EM_OP_exp2, ref_exp2, 0, 1.5, NULL},
        {EM_OP_log2, ref_log2, 0, 2.5, NULL},       {EM_OP_log10, ref_log10, 0, 2.5, NULL},
        {EM_OP_erf, ref_erf, 0, 2.5, NULL},         {EM_OP_erfc, ref_erfc, 0, 3, NULL},
    };
    for (size_t k = 0; k < sizeof sweeps / sizeof *sweeps; k++) {
        double p[3] = {sweeps[k].p, 20, 0};
        float at = 0;
        double err = max_ulps(api[sweeps[k].op].fn, p, x, N, sweeps[k].ref, sweeps[k].budget, &at);
        CHECK_MSG(err <= sweeps[k].ulps, "%s(%g): %.2f ulp at %.9g (budget %g)", em_ops[sweeps[k].op].name, p[0], err,
                  at, sweeps[k].ulps);
    }
    free(x);
}

/* ---- float64 accuracy of the libmvec ops, against long double ---------- */
static double ulp64(long double v)
{
    int e;
    if (fabsl(v) < DBL_MIN) return 0x1p-1074;
    frexpl(v, &e);
    return ldexpl(1, e - 53);
}

TEST(unary_f64_accuracy)
{
    /* every 2^46th float64 (all binades, infinities, NaNs) and a dense sweep of [-20, 20] */
    enum { STRIDED = 1 << 18, DENSE = 1 << 16 };
    int64_t n = STRIDED + DENSE;
    double *x = malloc(n * sizeof *x);
    for (uint64_t i = 0; i < STRIDED; i++) {
        uint64_t bits = i * (1ull << 46) + 0x123456789ull;
        memcpy(&x[i], &bits, 8);
    }
    for (int i = 0; i < DENSE; i++) x[STRIDED + i] = -20 + 40.0 * i / DENSE;
    em_tensor *xt = em_from_data(x, 1, &n, EM_F64);
    /* max ulp measured over every 2^42th float64 and a dense [-20, 20], the
     * worst of the SSE, AVX2 and AVX-512 libmvec variants and libm: sin 3.3,
     * cos 3.5, tan 3.5, asin 2.2, acos 1.7, atan 1.7, sinh 1.9, cosh 2.0,
     * tanh 2.1, asinh 2.0, acosh 2.2, atanh 1.9, exp2 1.6, expm1 2.8, log 1.6,
     * log2 1.8, log10 1.9, log1p 1.9, erf 2.4, erfc 3.8 (libm's erfc) */
    static const struct {
        em_tensor *(*op)(const em_tensor *);
        long double (*ref)(long double);
        const char *name;
        double ulps;
    } sweeps[] = {
#define SWEEP(fn, ulps) {em_##fn, fn##l, #fn, ulps}
        SWEEP(sin, 4),     SWEEP(cos, 4),     SWEEP(tan, 4),     SWEEP(asin, 2.5),  SWEEP(acos, 2),
        SWEEP(atan, 2),    SWEEP(sinh, 2),    SWEEP(cosh, 2.5),  SWEEP(tanh, 2.5),  SWEEP(asinh, 2.5),
        SWEEP(acosh, 2.5), SWEEP(atanh, 2),   SWEEP(exp2, 2),    SWEEP(expm1, 3),   SWEEP(log, 2),
        SWEEP(log2, 2),    SWEEP(log10, 2),   SWEEP(log1p, 2),   SWEEP(erf, 2.5),   SWEEP(erfc, 4),
#undef SWEEP
    };
    for (size_t k = 0; k < sizeof sweeps / sizeof *sweeps; k++) {
        em_tensor *yt = sweeps[k].op(xt);
        const double *y = yt ? em_data_ptr(yt) : NULL;
        double worst = yt ? 0 : INFINITY, at = 0;
        for (int64_t i = 0; y && i < n; i++) {
            long double want = sweeps[k].ref(x[i]);
            double err;
            if (isnan(want) || isinf((double)want))
                err = (isnan(want) ? isnan(y[i]) : y[i] == (double)want) ? 0 : INFINITY;
            else
                err = (double)(fabsl(y[i] - want) / ulp64(want));
            if (!(err <= worst)) worst = err, at = x[i];
        }
        CHECK_MSG(worst <= sweeps[k].ulps, "%s on float64: %.2f ulp at %.17g (budget %g)", sweeps[k].name, worst, at, sweeps[k].ulps);
        em_release(yt);
    }
    em_release(xt);
    free(x);
}
