/* Backward formulas of the pointwise ops (unary, binary, ternary) and copy,
 * written with Ember ops (DESIGN principle 4). `go` holds the output's
 * gradient, `gi` receives the inputs'; broadcasting is undone by the engine.
 * X() puts a result in the formula's arena (released at the end). */
#include "autograd.h"
#include "ember/ember.h"

#define S(v) X(em_scalar_float(v))
#define P(k) (n->call.f[k])
/* Saved input / output, or return the version (or freed-graph) error. */
#define INPUT(v, i)                                    \
    const em_tensor *v = em_node_input(n, i);          \
    if (!v) return em_error_code()
#define OUTPUT(v, k)                                   \
    const em_tensor *v = em_node_output(n, k);         \
    if (!v) return em_error_code()

/* One-line formulas: d/dx in terms of x (input 0), y (output 0) and g. */
#define UNARY_IN(op, expr)                             \
    EM_BACKWARD(op, EM_SAVE_IN(0))                     \
    {                                                  \
        em_arena a = {0};                              \
        INPUT(x, 0);                                   \
        GRAD(0, (expr));                               \
        DONE();                                        \
    }
#define UNARY_OUT(op, expr)                            \
    EM_BACKWARD(op, EM_SAVE_OUT(0))                    \
    {                                                  \
        em_arena a = {0};                              \
        OUTPUT(y, 0);                                  \
        GRAD(0, (expr));                               \
        DONE();                                        \
    }

EM_BACKWARD(neg, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_neg(G)));
    DONE();
}
EM_BACKWARD(positive, 0)
{
    em_arena a = {0};
    GRAD(0, G);
    DONE();
}
UNARY_IN(abs, X(em_mul(G, X(em_sign(x)))))
UNARY_OUT(exp, X(em_mul(G, y)))
UNARY_OUT(exp2, X(em_mul(G, X(em_mul(y, S(0.69314718055994530942))))))
UNARY_OUT(expm1, X(em_mul(G, X(em_add(y, S(1), 1)))))
UNARY_IN(log, X(em_div(G, x)))
UNARY_IN(log2, X(em_div(G, X(em_mul(x, S(0.69314718055994530942))))))
UNARY_IN(log10, X(em_div(G, X(em_mul(x, S(2.30258509299404568402))))))
UNARY_IN(log1p, X(em_div(G, X(em_add(x, S(1), 1)))))
UNARY_OUT(sqrt, X(em_div(G, X(em_mul(y, S(2))))))
UNARY_OUT(rsqrt, X(em_mul(G, X(em_mul(X(em_pow(y, S(3))), S(-0.5))))))
UNARY_OUT(reciprocal, X(em_neg(X(em_mul(G, X(em_mul(y, y)))))))
UNARY_IN(square, X(em_mul(G, X(em_mul(x, S(2))))))
UNARY_IN(sin, X(em_mul(G, X(em_cos(x)))))
UNARY_IN(cos, X(em_neg(X(em_mul(G, X(em_sin(x)))))))
UNARY_OUT(tan, X(em_mul(G, X(em_add(X(em_mul(y, y)), S(1), 1)))))
UNARY_OUT(tanh, X(em_mul(G, X(em_sub(S(1), X(em_mul(y, y)), 1)))))
UNARY_OUT(sigmoid, X(em_mul(G, X(em_mul(y, X(em_sub(S(1), y, 1)))))))
UNARY_IN(sinh, X(em_mul(G, X(em_cosh(x)))))
UNARY_IN(cosh, X(em_mul(G, X(em_sinh(x)))))
UNARY_IN(asin, X(em_mul(G, X(em_rsqrt(X(em_sub(S(1), X(em_mul(x, x)), 1)))))))
UNARY_IN(acos, X(em_neg(X(em_mul(G, X(em_rsqrt(X(em_sub(S(1), X(em_mul(x, x)), 1)))))))))
UNARY_IN(atan, X(em_div(G, X(em_add(X(em_mul(x, x)), S(1), 1)))))
UNARY_IN(erf, X(em_mul(G, X(em_mul(X(em_exp(X(em_neg(X(em_mul(x, x)))))), S(1.12837916709551257390))))))
/* relu: the gradient passes where the output is positive */
UNARY_OUT(relu, X(em_mul(G, X(em_gt(y, S(0))))))
UNARY_IN(leaky_relu, X(em_where(X(em_gt(x, S(0))), G, X(em_mul(G, S(P(0)))))))
/* silu = x sigmoid(x): s (1 + x (1 - s)) */
EM_BACKWARD(silu, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *s = X(em_sigmoid(x));
    GRAD(0, X(em_mul(G, X(em_mul(s, X(em_add(S(1), X(em_mul(x, X(em_sub(S(1), s, 1)))), 1)))))));
    DONE();
}
/* gelu: exact Phi(x) + x phi(x); tanh form through its inner u = c (x + 0.044715 x^3) */
EM_BACKWARD(gelu, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *d;
    if (P(0) == 0) {
        em_tensor *cdf = X(em_mul(X(em_add(S(1), X(em_erf(X(em_mul(x, S(0.70710678118654752440))))), 1)), S(0.5)));
        em_tensor *pdf = X(em_mul(X(em_exp(X(em_mul(X(em_mul(x, x)), S(-0.5))))), S(0.39894228040143267794)));
        d = X(em_add(cdf, X(em_mul(x, pdf)), 1));
    } else {
        const double c = 0.79788456080286535588, k = 0.044715;
        em_tensor *x2 = X(em_mul(x, x));
        em_tensor *t = X(em_tanh(X(em_mul(X(em_mul(x, X(em_add(S(1), X(em_mul(x2, S(k))), 1)))), S(c)))));
        em_tensor *du = X(em_mul(X(em_add(S(1), X(em_mul(x2, S(3 * k))), 1)), S(c)));
        em_tensor *sech2 = X(em_sub(S(1), X(em_mul(t, t)), 1));
        d = X(em_mul(X(em_add(X(em_add(S(1), t, 1)), X(em_mul(X(em_mul(x, sech2)), du)), 1)), S(0.5)));
    }
    GRAD(0, X(em_mul(G, d)));
    DONE();
}
/* clamp with scalar bounds (NAN: none): the gradient passes inside them */
EM_BACKWARD(clamp, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *mask = X(em_ones_like(x, EM_BOOL));
    if (P(0) == P(0)) mask = X(em_logical_and(mask, X(em_ge(x, S(P(0))))));
    if (P(1) == P(1)) mask = X(em_logical_and(mask, X(em_le(x, S(P(1))))));
    GRAD(0, X(em_mul(G, mask)));
    DONE();
}
/* piecewise-constant ops: zero gradient */
#define ZERO_GRAD(op)                                  \
    EM_BACKWARD(op, 0)                                 \
    {                                                  \
        em_arena a = {0};                              \
        GRAD(0, X(em_zeros_like(G, EM_DTYPE_NONE)));   \
        DONE();                                        \
    }
ZERO_GRAD(sign)
ZERO_GRAD(floor)
ZERO_GRAD(ceil)
ZERO_GRAD(trunc)
ZERO_GRAD(round)

/* ---- binary ------------------------------------------------------------- */
EM_BACKWARD(add, 0)
{
    em_arena a = {0};
    GRAD(0, G);
    GRAD(1, P(0) == 1 ? G : X(em_mul(G, S(P(0)))));
    DONE();
}
EM_BACKWARD(sub, 0)
{
    em_arena a = {0};
    GRAD(0, G);
    GRAD(1, X(em_mul(G, S(-P(0)))));
    DONE();
}
EM_BACKWARD(mul, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    GRAD(0, X(em_mul(G, y)));
    GRAD(1, X(em_mul(G, x)));
    DONE();
}
EM_BACKWARD(div, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    GRAD(0, X(em_div(G, y)));
    GRAD(1, X(em_neg(X(em_div(X(em_mul(G, x)), X(em_mul(y, y)))))));
    DONE();
}
/* pow: b x^(b-1) and x^b log(x) (0 where x == 0 and b >= 0, as PyTorch) */
EM_BACKWARD(pow, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(b, 1);
    OUTPUT(y, 0);
    GRAD(0, X(em_mul(G, X(em_mul(b, X(em_pow(x, X(em_sub(b, S(1), 1)))))))));
    if (em_node_needs_grad(n, 1)) {
        em_tensor *zero = X(em_logical_and(X(em_eq(x, S(0))), X(em_ge(b, S(0)))));
        em_tensor *d = X(em_where(zero, S(0), X(em_mul(y, X(em_log(x))))));
        GRAD(1, X(em_mul(G, d)));
    }
    DONE();
}
/* maximum/minimum: to the larger (smaller) input; ties split evenly */
#define MINMAX(op, cmp)                                                             \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1))                                  \
    {                                                                               \
        em_arena a = {0};                                                           \
        INPUT(x, 0);                                                                \
        INPUT(y, 1);                                                                \
        em_tensor *tie = X(em_mul(X(em_eq(x, y)), S(0.5)));                         \
        GRAD(0, X(em_mul(G, X(em_add(X(em_##cmp(x, y)), tie, 1)))));                \
        GRAD(1, X(em_mul(G, X(em_add(X(em_##cmp(y, x)), tie, 1)))));                \
        DONE();                                                                     \
    }
MINMAX(maximum, gt)
MINMAX(minimum, lt)
EM_BACKWARD(atan2, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    em_tensor *r2 = X(em_add(X(em_mul(x, x)), X(em_mul(y, y)), 1));
    GRAD(0, X(em_div(X(em_mul(G, y)), r2)));
    GRAD(1, X(em_neg(X(em_div(X(em_mul(G, x)), r2)))));
    DONE();
}

/* ---- ternary ------------------------------------------------------------ */
EM_BACKWARD(where, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(cond, 0);
    em_tensor *zero = S(0);
    GRAD(1, X(em_where(cond, G, zero)));
    GRAD(2, X(em_where(cond, zero, G)));
    DONE();
}
EM_BACKWARD(addcmul, EM_SAVE_IN(1) | EM_SAVE_IN(2))
{
    em_arena a = {0};
    INPUT(t1, 1);
    INPUT(t2, 2);
    GRAD(0, G);
    GRAD(1, X(em_mul(G, X(em_mul(t2, S(P(0)))))));
    GRAD(2, X(em_mul(G, X(em_mul(t1, S(P(0)))))));
    DONE();
}
EM_BACKWARD(addcdiv, EM_SAVE_IN(1) | EM_SAVE_IN(2))
{
    em_arena a = {0};
    INPUT(t1, 1);
    INPUT(t2, 2);
    GRAD(0, G);
    GRAD(1, X(em_div(X(em_mul(G, S(P(0)))), t2)));
    GRAD(2, X(em_neg(X(em_div(X(em_mul(X(em_mul(G, S(P(0)))), t1)), X(em_mul(t2, t2)))))));
    DONE();
}
/* lerp: x + w (y - x) */
EM_BACKWARD(lerp, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_IN(2))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    INPUT(w, 2);
    GRAD(0, X(em_mul(G, X(em_sub(S(1), w, 1)))));
    GRAD(1, X(em_mul(G, w)));
    GRAD(2, X(em_mul(G, X(em_sub(y, x, 1)))));
    DONE();
}

/* ---- copy: the source gets the gradient (the engine casts it to its dtype) */
EM_BACKWARD(copy, 0)
{
    em_arena a = {0};
    GRAD(0, G);
    DONE();
}
