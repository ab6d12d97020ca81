/* Autograd of the pointwise ops: every formula of formulas_pointwise.def
 * gradchecked (broadcast, non-contiguous and in-place calls) and
 * gradgradchecked (create_graph), the values PyTorch gives at ties, kinks
 * and zeros, and the ops whose backward refuses. */
#include "test.h"

/* ---- one table of calls ----------------------------------------------------- */
/* An op called through its public function (f: em_<op>, f_: em_<op>_), whose
 * arity and params come from the op table. */
typedef void (*any_fn)(void);
typedef struct pw_case {
    em_op op;
    any_fn f, f_;
    double lo, hi; /* inputs drawn from [lo, hi) */
    double p[3];
} pw_case;
#define C(op, lo, hi, ...) {EM_OP_##op, (any_fn)em_##op, (any_fn)em_##op##_, lo, hi, {__VA_ARGS__}}

typedef em_tensor *(*u0_fn)(const em_tensor *);
typedef em_tensor *(*u1_fn)(const em_tensor *, double);
typedef em_tensor *(*u2_fn)(const em_tensor *, double, double);
typedef em_tensor *(*u3_fn)(const em_tensor *, double, double, double);
typedef em_tensor *(*b0_fn)(const em_tensor *, const em_tensor *);
typedef em_tensor *(*b1_fn)(const em_tensor *, const em_tensor *, double);
typedef em_tensor *(*t0_fn)(const em_tensor *, const em_tensor *, const em_tensor *);
typedef em_tensor *(*t1_fn)(const em_tensor *, const em_tensor *, const em_tensor *, double);
typedef em_status (*u0_ifn)(em_tensor *);
typedef em_status (*u1_ifn)(em_tensor *, double);
typedef em_status (*u2_ifn)(em_tensor *, double, double);
typedef em_status (*u3_ifn)(em_tensor *, double, double, double);
typedef em_status (*b0_ifn)(em_tensor *, const em_tensor *);
typedef em_status (*b1_ifn)(em_tensor *, const em_tensor *, double);
typedef em_status (*t0_ifn)(em_tensor *, const em_tensor *, const em_tensor *);
typedef em_status (*t1_ifn)(em_tensor *, const em_tensor *, const em_tensor *, double);

static int arity(em_op op) { return em_ops[op].kind; } /* EM_KIND_UNARY == 1 ... TERNARY == 3 */
#define SHAPE_KEY(nin, np) ((nin) * 4 + (np))

static em_tensor *call_new(const pw_case *c, const em_tensor *const *t)
{
    const double *p = c->p;
    switch (SHAPE_KEY(arity(c->op), em_ops[c->op].nparams)) {
    case SHAPE_KEY(1, 0): return ((u0_fn)c->f)(t[0]);
    case SHAPE_KEY(1, 1): return ((u1_fn)c->f)(t[0], p[0]);
    case SHAPE_KEY(1, 2): return ((u2_fn)c->f)(t[0], p[0], p[1]);
    case SHAPE_KEY(1, 3): return ((u3_fn)c->f)(t[0], p[0], p[1], p[2]);
    case SHAPE_KEY(2, 0): return ((b0_fn)c->f)(t[0], t[1]);
    case SHAPE_KEY(2, 1): return ((b1_fn)c->f)(t[0], t[1], p[0]);
    case SHAPE_KEY(3, 0): return ((t0_fn)c->f)(t[0], t[1], t[2]);
    case SHAPE_KEY(3, 1): return ((t1_fn)c->f)(t[0], t[1], t[2], p[0]);
    }
    return NULL;
}

static em_status call_inplace(const pw_case *c, em_tensor *self, const em_tensor *const *t)
{
    const double *p = c->p;
    switch (SHAPE_KEY(arity(c->op), em_ops[c->op].nparams)) {
    case SHAPE_KEY(1, 0): return ((u0_ifn)c->f_)(self);
    case SHAPE_KEY(1, 1): return ((u1_ifn)c->f_)(self, p[0]);
    case SHAPE_KEY(1, 2): return ((u2_ifn)c->f_)(self, p[0], p[1]);
    case SHAPE_KEY(1, 3): return ((u3_ifn)c->f_)(self, p[0], p[1], p[2]);
    case SHAPE_KEY(2, 0): return ((b0_ifn)c->f_)(self, t[1]);
    case SHAPE_KEY(2, 1): return ((b1_ifn)c->f_)(self, t[1], p[0]);
    case SHAPE_KEY(3, 0): return ((t0_ifn)c->f_)(self, t[1], t[2]);
    case SHAPE_KEY(3, 1): return ((t1_ifn)c->f_)(self, t[1], t[2], p[0]);
    }
    return EM_ERR_RUNTIME;
}

/* How a case is called: on the leaves; on a transposed (non-contiguous)
 * view of the first; in place on a copy of the first. */
enum { PLAIN, TRANSPOSED, IN_PLACE };
typedef struct pw_call {
    const pw_case *c;
    int how;
} pw_call;

static em_tensor *call_case(em_tensor *const *in, const void *ctx)
{
    const pw_call *pc = ctx;
    const em_tensor *t[3] = {in[0], arity(pc->c->op) > 1 ? in[1] : NULL, arity(pc->c->op) > 2 ? in[2] : NULL};
    if (pc->how == PLAIN) return call_new(pc->c, t);
    if (pc->how == TRANSPOSED) {
        em_tensor *first = em_t(in[0]);
        t[0] = first;
        em_tensor *r = first ? call_new(pc->c, t) : NULL;
        em_release(first);
        return r;
    }
    em_tensor *self = em_clone(in[0]);
    if (self && call_inplace(pc->c, self, t) == EM_OK) return self;
    em_release(self);
    return NULL;
}

static const pw_case cases[] = {
    C(neg, -2, 2),          C(positive, -2, 2),     C(abs, -2, 2),          C(sign, -2, 2),
    C(floor, -2, 2),        C(ceil, -2, 2),         C(trunc, -2, 2),        C(round, -2, 2, 0),
    C(round, -2, 2, 1),     C(frac, -2, 2),         C(exp, -2, 2),          C(exp2, -2, 2),
    C(expm1, -2, 2),        C(log, 0.2, 3),         C(log2, 0.2, 3),        C(log10, 0.2, 3),
    C(log1p, -0.5, 3),      C(sqrt, 0.2, 3),        C(rsqrt, 0.2, 3),       C(reciprocal, 0.3, 3),
    C(square, -2, 2),       C(sin, -3, 3),          C(cos, -3, 3),          C(tan, -1, 1),
    C(tanh, -2, 2),         C(sigmoid, -3, 3),      C(sinh, -2, 2),         C(cosh, -2, 2),
    C(asin, -0.9, 0.9),     C(acos, -0.9, 0.9),     C(atan, -3, 3),         C(asinh, -3, 3),
    C(acosh, 1.2, 3),       C(atanh, -0.8, 0.8),    C(erf, -2, 2),          C(erfc, -2, 2),
    C(erfinv, -0.9, 0.9),   C(nan_to_num, -2, 2, 0, INFINITY, -INFINITY),
    C(clamp, -1, 1, -0.5, 0.7), C(clamp, -1, 1, -0.5, NAN), C(clip, -1, 1, NAN, 0.5),
    /* activations */
    C(relu, -2, 2),         C(leaky_relu, -2, 2, 0.1), C(hardtanh, -2, 2, -0.5, 1.2), C(relu6, -2, 8),
    C(hardsigmoid, -5, 5),  C(hardswish, -5, 5),    C(elu, -2, 2, 0.7),     C(celu, -2, 2, 0.7),
    C(selu, -2, 2),         C(softplus, -2, 2, 2, 3), C(logsigmoid, -3, 3), C(silu, -3, 3),
    C(mish, -3, 3),         C(gelu, -2, 2, 0),      C(gelu, -2, 2, 1),
    /* binary: (2, 3) op (3,) */
    C(add, -2, 2, 2.5),     C(sub, -2, 2, 0.5),     C(mul, -2, 2),          C(div, 0.5, 2),
    C(div_trunc, 0.5, 2),   C(div_floor, 0.5, 2),   C(remainder, 0.5, 2),   C(fmod, 0.5, 2),
    C(pow, 0.5, 2),         C(float_power, 0.5, 2), C(maximum, -2, 2),      C(minimum, -2, 2),
    C(fmax, -2, 2),         C(fmin, -2, 2),         C(clamp_min_tensor, -2, 2), C(clamp_max_tensor, -2, 2),
    C(atan2, -2, 2),        C(hypot, -2, 2),        C(copysign, -2, 2),     C(xlogy, 0.5, 2),
    C(logaddexp, -2, 2),    C(logaddexp2, -2, 2),
    /* ternary: (2, 3), (3,), (2, 1) */
    C(lerp, 0.5, 2),        C(addcmul, 0.5, 2, 0.7), C(addcdiv, 0.5, 2, 0.7), C(clamp_tensor, -2, 2),
};

/* The leaves of a case: (2, 3), then (3,), then (2, 1), so that every
 * input is broadcast somewhere; the first is (3, 2) to be transposed. */
static void make_leaves(const pw_case *c, int how, em_tensor **in)
{
    in[0] = how == TRANSPOSED ? leaf(SHAPE(3, 2), c->lo, c->hi) : leaf(SHAPE(2, 3), c->lo, c->hi);
    in[1] = arity(c->op) > 1 ? leaf(SHAPE(3), c->lo, c->hi) : NULL;
    in[2] = arity(c->op) > 2 ? leaf(SHAPE(2, 1), c->lo, c->hi) : NULL;
}

static const char *how_name[] = {"", " (transposed)", " (in place)"};

TEST(gradcheck_pointwise_ops)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const pw_case *c = &cases[k];
        for (int how = PLAIN; how <= IN_PLACE; how++) {
            if (how == IN_PLACE && (em_ops[c->op].flags & EM_F_NO_INPLACE)) continue;
            em_tensor *in[3];
            make_leaves(c, how, in);
            pw_call pc = {c, how};
            CHECK_MSG(gradcheck(em_ops[c->op].name, call_case, arity(c->op), in, &pc), "%s%s", em_ops[c->op].name,
                      how_name[how]);
            RELEASE(in[0], in[1], in[2]);
        }
        GRAD_COVER(c->op);
    }
}

/* create_graph: second derivatives of every formula, also of those that
 * read their saved output, also after an in-place call */
TEST(gradgradcheck_pointwise_ops)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const pw_case *c = &cases[k];
        for (int how = PLAIN; how <= IN_PLACE; how += IN_PLACE - PLAIN) {
            if (how == IN_PLACE && (em_ops[c->op].flags & EM_F_NO_INPLACE)) continue;
            em_tensor *in[3];
            make_leaves(c, how, in);
            pw_call pc = {c, how};
            CHECK_MSG(gradgradcheck(em_ops[c->op].name, call_case, arity(c->op), in, &pc), "%s%s",
                      em_ops[c->op].name, how_name[how]);
            RELEASE(in[0], in[1], in[2]);
        }
    }
}

/* where: its condition is no leaf */
static em_tensor *f_where(em_tensor *const *in, const void *c)
{
    em_tensor *cond = em_gt(in[0], in[1]), *r = em_where(cond, in[0], in[1]);
    em_release(cond);
    return r;
}

TEST(gradcheck_where)
{
    em_tensor *in[2] = {leaf(SHAPE(2, 3), -1, 1), leaf(SHAPE(3), -1, 1)};
    CHECK(gradcheck("where", f_where, 2, in, NULL));
    CHECK(gradgradcheck("where", f_where, 2, in, NULL));
    GRAD_COVER(EM_OP_where);
    RELEASE(in[0], in[1]);
}

/* ---- values at boundaries, as PyTorch 1.13 gives them ----------------------- */
typedef struct boundary {
    pw_case c;
    int n;               /* elements per input (1-d) */
    double in[3][5];
    double want[3][5];   /* d sum(op(in)) / d in[k] */
} boundary;

TEST(pointwise_grads_at_boundaries)
{
    const double nan = NAN, inf = INFINITY;
    static const boundary cases_b[] = {
        {C(relu, 0, 0), 2, {{0, -0.0}}, {{0, 0}}},
        {C(leaky_relu, 0, 0, 0.1), 1, {{0}}, {{0.1}}},
        {C(hardtanh, 0, 0, -1, 1), 4, {{-1, 1, 0.5, 2}}, {{0, 0, 1, 0}}},
        {C(relu6, 0, 0), 3, {{0, 6, 3}}, {{0, 0, 1}}},
        {C(hardsigmoid, 0, 0), 3, {{-3, 3, 0}}, {{0, 0, 1.0 / 6}}},
        {C(hardswish, 0, 0), 3, {{-3, 3, 0}}, {{-0.5, 1.5, 0.5}}},
        {C(elu, 0, 0, 0.7), 1, {{0}}, {{0.7}}},
        {C(celu, 0, 0, 0.7), 1, {{0}}, {{1}}},
        {C(selu, 0, 0), 2, {{0, 1}}, {{1.7580993408473766, 1.0507009873554805}}},
        {C(softplus, 0, 0, 2, 2), 2, {{1, 1.01}}, {{0.8807970779778824, 1}}},
        {C(abs, 0, 0), 1, {{0}}, {{0}}},
        {C(nan_to_num, 0, 0, 0, inf, -inf), 3, {{nan, inf, 1}}, {{0, 0, 1}}},
        {C(clamp, 0, 0, -1, 1), 3, {{-1, 1, nan}}, {{1, 1, 0}}},
        {C(clamp, 0, 0, 1, -1), 3, {{-1, 1, 0}}, {{0, 0, 0}}},
        {C(maximum, 0, 0), 3, {{1, nan, 2}, {1, 1, nan}}, {{0.5, 1, 1}, {0.5, 1, 1}}},
        {C(minimum, 0, 0), 3, {{1, nan, 2}, {1, 1, nan}}, {{0.5, 1, 1}, {0.5, 1, 1}}},
        {C(fmax, 0, 0), 3, {{1, nan, 2}, {1, 1, nan}}, {{1, 0, 1}, {0, 1, 0}}},
        {C(fmin, 0, 0), 3, {{1, nan, 2}, {1, 1, nan}}, {{1, 0, 1}, {0, 1, 0}}},
        {C(clamp_min_tensor, 0, 0), 3, {{1, 0, 2}, {1, 1, 1}}, {{1, 0, 1}, {0, 1, 0}}},
        {C(clamp_max_tensor, 0, 0), 3, {{1, 0, 2}, {1, 1, 1}}, {{1, 1, 0}, {0, 0, 1}}},
        {C(clamp_tensor, 0, 0), 5, {{1, 0, 2, 3, 0.5}, {1, 1, 1, 4, 2}, {2, 2, 2, 2, 1}},
         {{1, 0, 1, 0, 0}, {0, 1, 0, 0, 0}, {0, 0, 0, 1, 1}}},
        {C(copysign, 0, 0), 4, {{0, -0.0, 1, -2}, {1, -1, -1, 1}}, {{0, 0, -1, -1}, {0, 0, 0, 0}}},
        {C(xlogy, 0, 0), 4, {{0, 0, 1, 0}, {0, -1, 2, nan}}, {{0, 0, 0.6931471805599453, nan}, {nan, 0, 0.5, nan}}},
        {C(pow, 0, 0), 3, {{0, 0, 0}, {0, 1, -1}}, {{0, 1, -inf}, {0, 0, -inf}}},
        {C(float_power, 0, 0), 3, {{0, 0, 2}, {0, 2, 3}}, {{0, 0, 12}, {0, 0, 5.545177444479562}}},
        {C(fmod, 0, 0), 2, {{5.5, -5.5}, {2, 2}}, {{1, 1}, {-2, 2}}},
        {C(remainder, 0, 0), 2, {{5.5, -5.5}, {2, 2}}, {{1, 1}, {-2, 3}}},
        {C(hypot, 0, 0), 1, {{3}, {4}}, {{0.6}, {0.8}}},
        {C(logaddexp, 0, 0), 2, {{-inf, 0}, {-inf, 0}}, {{nan, 0.5}, {nan, 0.5}}},
        {C(div_floor, 0, 0), 1, {{1}, {2}}, {{0}, {0}}},
        {C(sign, 0, 0), 1, {{1}}, {{0}}},
    };
    for (size_t k = 0; k < sizeof cases_b / sizeof *cases_b; k++) {
        const boundary *b = &cases_b[k];
        int nin = arity(b->c.op);
        em_tensor *in[3] = {0}, *g[3] = {0};
        for (int i = 0; i < nin; i++) {
            in[i] = tt(EM_F64, 1, (const int64_t[]){b->n}, b->in[i]);
            em_set_requires_grad(in[i], true);
        }
        em_tensor *y = call_new(&b->c, (const em_tensor *const *)in);
        em_tensor *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
        CHECK(s && em_autograd_grad(1, &s, NULL, nin, in, false, false, false, g) == EM_OK);
        for (int i = 0; i < nin; i++)
            CHECK_MSG(tclose(g[i], b->want[i], 1e-12, 1e-15), "%s: d/d input %d", em_ops[b->c.op].name, i);
        RELEASE(y, s, in[0], in[1], in[2], g[0], g[1], g[2]);
    }
}

/* a float32 input of float_power (computed in float64) gets a float32 gradient */
TEST(float_power_grad_dtype)
{
    em_tensor *x = tt(EM_F32, SHAPE(2), (const double[]){0.5, 1.5}), *b = em_scalar_float(3), *g = NULL;
    em_set_requires_grad(x, true);
    em_tensor *y = em_float_power(x, b), *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_dtype_of(y) == EM_F64);
    CHECK(em_autograd_grad(1, &s, NULL, 1, &x, false, false, false, &g) == EM_OK);
    CHECK(em_dtype_of(g) == EM_F32 && tclose(g, (const double[]){0.75, 6.75}, 1e-7, 0));
    RELEASE(x, b, g, y, s);
}

/* nextafter and heaviside: recorded, but their backward refuses (PyTorch's
 * not_implemented); a double backward through a saved output now works */
TEST(pointwise_backward_refused_or_twice)
{
    em_tensor *x = leaf(SHAPE(3), 0.5, 1), *v = em_ones(SHAPE(3), EM_F64), *g = NULL;
    em_tensor *na = em_nextafter(x, v), *hv = em_heaviside(x, v);
    CHECK(na && hv && em_requires_grad(na) && em_requires_grad(hv));
    em_tensor *s1 = em_sum(na, 0, NULL, false, EM_DTYPE_NONE), *s2 = em_sum(hv, 0, NULL, false, EM_DTYPE_NONE);
    CHECK_ERR(em_autograd_grad(1, &s1, NULL, 1, &x, false, false, false, &g), EM_ERR_NOT_IMPLEMENTED);
    CHECK(strstr(em_last_error(), "'nextafter'"));
    CHECK_ERR(em_autograd_grad(1, &s2, NULL, 1, &x, false, false, false, &g), EM_ERR_NOT_IMPLEMENTED);
    GRAD_COVER(EM_OP_nextafter, EM_OP_heaviside);
    /* d2/dx2 sum(exp(x)) = exp(x), through ExpBackward0's saved output */
    em_tensor *y = em_exp(x), *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE), *gs = NULL, *gg = NULL;
    CHECK(em_autograd_grad(1, &s, NULL, 1, &x, true, true, false, &g) == EM_OK && em_requires_grad(g));
    CHECK((gs = em_sum(g, 0, NULL, false, EM_DTYPE_NONE)) != NULL);
    CHECK(em_autograd_grad(1, &gs, NULL, 1, &x, false, false, false, &gg) == EM_OK);
    for (int i = 0; i < 3; i++) CHECK(fabs(tval(gg, i) - exp(tval(x, i))) < 1e-12);
    RELEASE(x, v, na, hv, s1, s2, y, s, g, gs, gg);
}

/* d sum(op(in)) / d in[k] into g[], or false */
static bool sum_grads(const pw_case *c, em_tensor *const *in, em_tensor **g)
{
    em_tensor *y = call_new(c, (const em_tensor *const *)in);
    em_tensor *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    bool ok = s && em_autograd_grad(1, &s, NULL, arity(c->op), in, false, false, false, g) == EM_OK;
    RELEASE(y, s);
    return ok;
}

/* The formulas in float32 and bfloat16: gradients of the input's dtype,
 * close to those of float64 inputs of the same values */
TEST(pointwise_grads_in_low_precision)
{
    const em_dtype dts[] = {EM_F32, EM_BF16};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const pw_case *c = &cases[k];
        int nin = arity(c->op);
        for (int d = 0; d < 2; d++) {
            em_tensor *lo[3] = {0}, *hi[3] = {0}, *glo[3] = {0}, *ghi[3] = {0};
            const int64_t *shapes[] = {(const int64_t[]){2, 3}, (const int64_t[]){3}, (const int64_t[]){2, 1}};
            const int ndims[] = {2, 1, 2};
            for (int i = 0; i < nin; i++) {
                lo[i] = trand(dts[d], ndims[i], shapes[i], c->lo, c->hi);
                hi[i] = em_to_dtype(lo[i], EM_F64);
                em_set_requires_grad(lo[i], true);
                em_set_requires_grad(hi[i], true);
            }
            bool ok = sum_grads(c, lo, glo) && sum_grads(c, hi, ghi);
            for (int i = 0; i < nin && ok; i++) {
                double *want = tvals(ghi[i]), tol = dts[d] == EM_F32 ? 1e-5 : 3e-2;
                ok = em_dtype_of(glo[i]) == dts[d] && tclose(glo[i], want, tol, tol);
                free(want);
            }
            RELEASE(lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], glo[0], glo[1], glo[2], ghi[0], ghi[1], ghi[2]);
            CHECK_MSG(ok, "%s in %s [%s]", em_ops[c->op].name, em_dtype_name(dts[d]), em_last_error());
        }
    }
}
