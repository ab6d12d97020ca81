/* Backward formulas of the pointwise math ops (unary, binary, ternary) and
 * copy, written with Ember ops (DESIGN principle 4); the activations are in
 * formulas_activation.c. `go` holds the output's gradient, `gi` receives the
 * inputs'; broadcasting is undone by the engine. X() puts a result in the
 * formula's arena (released at the end); shorthands: formulas_pointwise.h.
 * Values at boundaries (ties, zeros, kinks) follow PyTorch's derivatives.yaml. */
#include "formulas_pointwise.h"

EM_BACKWARD(neg, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_neg(G)));
    DONE();
}
/* the identities of the gradient: frac(x) = x - trunc(x) */
#define PASS_GRAD(op)                                  \
    EM_BACKWARD(op, 0)                                 \
    {                                                  \
        em_arena a = {0};                              \
        GRAD(0, G);                                    \
        DONE();                                        \
    }
PASS_GRAD(positive)
PASS_GRAD(frac)
/* piecewise-constant ops: a zero gradient for every input */
#define ZERO_GRAD(op)                                                                   \
    EM_BACKWARD(op, 0)                                                                  \
    {                                                                                   \
        em_arena a = {0};                                                               \
        for (int i = 0; i < n->nin; i++) GRAD(i, X(em_zeros_like(G, EM_DTYPE_NONE)));  \
        DONE();                                                                         \
    }
ZERO_GRAD(sign)
ZERO_GRAD(floor)
ZERO_GRAD(ceil)
ZERO_GRAD(trunc)
ZERO_GRAD(round)
ZERO_GRAD(div_trunc)
ZERO_GRAD(div_floor)
/* derivatives PyTorch leaves unimplemented: recorded, refused by backward */
#define NO_DERIVATIVE(name)                                                                         \
    EM_BACKWARD(name, 0)                                                                            \
    {                                                                                               \
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' is not implemented.", #name); \
    }
NO_DERIVATIVE(nextafter)
NO_DERIVATIVE(heaviside)

UNARY_IN(abs, X(em_mul(G, X(em_sign(x)))))
UNARY_OUT(exp, X(em_mul(G, C(y))))
UNARY_OUT(exp2, X(em_mul(G, X(em_mul(y, S(0.69314718055994530942))))))
UNARY_OUT(expm1, X(em_mul(G, X(em_add(y, S(1), 1)))))
UNARY_IN(log, X(em_div(G, C(x))))
UNARY_IN(log2, X(em_div(G, X(em_mul(x, S(0.69314718055994530942))))))
UNARY_IN(log10, X(em_div(G, X(em_mul(x, S(2.30258509299404568402))))))
UNARY_IN(log1p, X(em_div(G, X(em_add(x, S(1), 1)))))
UNARY_OUT(sqrt, X(em_div(G, C(X(em_mul(y, S(2)))))))
UNARY_OUT(rsqrt, X(em_mul(G, C(X(em_mul(X(em_pow(y, S(3))), S(-0.5)))))))
UNARY_OUT(reciprocal, X(em_neg(X(em_mul(G, C(X(em_mul(y, y))))))))
UNARY_IN(square, X(em_mul(G, C(X(em_mul(x, S(2)))))))
UNARY_IN(sin, X(em_mul(G, C(X(em_cos(x))))))
UNARY_IN(cos, X(em_neg(X(em_mul(G, C(X(em_sin(x))))))))
UNARY_OUT(tan, X(em_mul(G, C(X(em_add(X(em_mul(y, y)), S(1), 1))))))
UNARY_OUT(tanh, X(em_mul(G, C(X(em_sub(S(1), X(em_mul(y, y)), 1))))))
UNARY_OUT(sigmoid, X(em_mul(G, C(X(em_mul(y, X(em_sub(S(1), y, 1))))))))
UNARY_IN(sinh, X(em_mul(G, C(X(em_cosh(x))))))
UNARY_IN(cosh, X(em_mul(G, C(X(em_sinh(x))))))
UNARY_IN(asin, X(em_mul(G, C(X(em_rsqrt(X(em_sub(S(1), X(em_mul(x, x)), 1))))))))
UNARY_IN(acos, X(em_neg(X(em_mul(G, C(X(em_rsqrt(X(em_sub(S(1), X(em_mul(x, x)), 1))))))))))
UNARY_IN(atan, X(em_div(G, C(X(em_add(X(em_mul(x, x)), S(1), 1))))))
UNARY_IN(asinh, X(em_mul(G, C(X(em_rsqrt(X(em_add(X(em_mul(x, x)), S(1), 1))))))))
/* acosh' = 1 / (sqrt(x - 1) sqrt(x + 1)): for complex x not 1 / sqrt(x^2 - 1), whose branch cut differs */
UNARY_IN(acosh, X(em_mul(G, C(X(em_mul(X(em_rsqrt(X(em_sub(x, S(1), 1)))), X(em_rsqrt(X(em_add(x, S(1), 1))))))))))
UNARY_IN(atanh, X(em_div(G, C(X(em_sub(S(1), X(em_mul(x, x)), 1))))))
/* erf' = 2/sqrt(pi) exp(-x^2); erfinv' = sqrt(pi)/2 exp(erfinv(x)^2) */
UNARY_IN(erf, X(em_mul(G, X(em_mul(X(em_exp(X(em_neg(X(em_mul(x, x)))))), S(1.12837916709551257390))))))
UNARY_IN(erfc, X(em_mul(G, X(em_mul(X(em_exp(X(em_neg(X(em_mul(x, x)))))), S(-1.12837916709551257390))))))
UNARY_OUT(erfinv, X(em_mul(G, X(em_mul(X(em_exp(X(em_mul(y, y)))), S(0.88622692545275801365))))))
/* nan_to_num: the gradient passes where x is finite */
UNARY_IN(nan_to_num, MASKED(X(em_isfinite(x))))
/* clamp and clip with scalar bounds (NAN: none): inside the closed bounds */
EM_BACKWARD(clamp, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *mask = X(em_ones_like(x, EM_BOOL));
    if (P(0) == P(0)) mask = AND(mask, X(em_ge(x, S(P(0)))));
    if (P(1) == P(1)) mask = AND(mask, X(em_le(x, S(P(1)))));
    GRAD(0, MASKED(mask));
    DONE();
}
EM_BACKWARD(clip, EM_SAVE_IN(0)) { return em_bw_clamp(n, go, gi); }

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
    GRAD(0, X(em_mul(G, C(y))));
    GRAD(1, X(em_mul(G, C(x))));
    DONE();
}
EM_BACKWARD(div, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    GRAD(0, X(em_div(G, C(y))));
    GRAD(1, X(em_neg(X(em_mul(G, C(X(em_div(x, X(em_mul(y, y))))))))));
    DONE();
}
/* remainder and fmod: x - y * q, with q = div_floor (div_trunc) piecewise constant */
#define REMAINDER(op, quotient)                                                 \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1))                              \
    {                                                                           \
        em_arena a = {0};                                                       \
        INPUT(x, 0);                                                            \
        INPUT(y, 1);                                                            \
        GRAD(0, G);                                                             \
        GRAD(1, X(em_neg(X(em_mul(G, X(em_##quotient(x, y)))))));              \
        DONE();                                                                 \
    }
REMAINDER(remainder, div_floor)
REMAINDER(fmod, div_trunc)

/* y = x^b: b x^(b-1) (0 where b == 0) and y log(x) (0 where x == 0 and
 * b >= 0), as PyTorch's pow_backward_self / pow_backward_exponent */
static em_status pow_grads(const em_node *n, em_tensor *const *go, em_tensor **gi, const em_tensor *x,
                           const em_tensor *b, const em_tensor *y)
{
    em_arena a = {0};
    if (em_node_needs_grad(n, 0)) {
        em_tensor *d = X(em_mul(b, X(em_pow(x, X(em_sub(b, S(1), 1))))));
        GRAD(0, X(em_mul(G, C(X(em_where(X(em_eq(b, S(0))), S(0), d))))));
    }
    if (em_node_needs_grad(n, 1)) { /* (a complex b: the sign of its real part) */
        bool b_complex = em_dtype_is_complex((em_dtype)b->dtype);
        const em_tensor *b_plain = b_complex ? X(em_resolve_conj(X(em_detach(b)))) : NULL; /* (a conj view: no parts) */
        const em_tensor *b_re = b_plain ? X(em_select(X(em_view_as_real(b_plain)), -1, 0)) : b; /* a mask */
        em_tensor *zero = AND(X(em_eq(x, S(0))), X(em_ge(b_re, S(0))));
        GRAD(1, X(em_mul(G, C(X(em_where(zero, S(0), X(em_mul(y, X(em_log(x))))))))));
    }
    DONE();
}
EM_BACKWARD(pow, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(b, 1);
    OUTPUT(y, 0);
    em_status st = pow_grads(n, go, gi, x, b, y);
    em_arena_end(&a);
    return st;
}
/* float_power: pow computed in float64 (the result's dtype) */
EM_BACKWARD(float_power, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(b, 1);
    OUTPUT(y, 0);
    em_tensor *x64 = X(em_to_dtype(x, EM_F64)), *b64 = X(em_to_dtype(b, EM_F64));
    em_status st = a.failed ? em_error_code() : pow_grads(n, go, gi, x64, b64, y);
    em_arena_end(&a);
    return st;
}

/* maximum / minimum: to the larger (smaller) input, ties split evenly, both
 * where either is nan (PyTorch: masked only where an input loses) */
#define MINMAX(op, loses)                                                               \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1))                                      \
    {                                                                                   \
        em_arena a = {0};                                                               \
        INPUT(x, 0);                                                                    \
        INPUT(y, 1);                                                                    \
        em_tensor *share = X(em_where(X(em_eq(x, y)), S(0.5), S(1)));                   \
        GRAD(0, X(em_mul(G, X(em_where(X(em_##loses(x, y)), S(0), share)))));           \
        GRAD(1, X(em_mul(G, X(em_where(X(em_##loses(y, x)), S(0), share)))));           \
        DONE();                                                                         \
    }
MINMAX(maximum, lt)
MINMAX(minimum, gt)
/* fmax / fmin: all to x where it wins or ties or y is nan, else all to y */
#define FMINMAX(op, wins)                                                               \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1))                                      \
    {                                                                                   \
        em_arena a = {0};                                                               \
        INPUT(x, 0);                                                                    \
        INPUT(y, 1);                                                                    \
        em_tensor *to_x = X(em_logical_or(X(em_##wins(x, y)), X(em_isnan(y))));         \
        GRAD(0, MASKED(to_x));                                                          \
        GRAD(1, MASKED(X(em_logical_not(to_x))));                                       \
        DONE();                                                                         \
    }
FMINMAX(fmax, ge)
FMINMAX(fmin, le)
/* clamp_min / clamp_max with a tensor bound: x where it is within (ties
 * included), the bound where x is beyond it */
#define CLAMP_ONE(op, within, beyond)                                                   \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1))                                      \
    {                                                                                   \
        em_arena a = {0};                                                               \
        INPUT(x, 0);                                                                    \
        INPUT(bound, 1);                                                                \
        GRAD(0, MASKED(X(em_##within(x, bound))));                                      \
        GRAD(1, MASKED(X(em_##beyond(x, bound))));                                      \
        DONE();                                                                         \
    }
CLAMP_ONE(clamp_min_tensor, ge, lt)
CLAMP_ONE(clamp_max_tensor, le, gt)

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
/* hypot: x / r, y / r with r the result */
EM_BACKWARD(hypot, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    OUTPUT(r, 0);
    GRAD(0, X(em_div(X(em_mul(G, x)), r)));
    GRAD(1, X(em_div(X(em_mul(G, y)), r)));
    DONE();
}
/* copysign(x, s): sign(x) sign(result), 0 where x == 0; none to s (zeros) */
EM_BACKWARD(copysign, EM_SAVE_IN(0) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    OUTPUT(y, 0);
    GRAD(0, X(em_mul(G, X(em_mul(X(em_sign(x)), X(em_sign(y)))))));
    GRAD(1, X(em_zeros_like(G, EM_DTYPE_NONE)));
    DONE();
}
/* xlogy(x, y) = x log(y): log(y) (as xlogy(g, y); 0 where x == 0 and
 * y <= 0), and x / y */
EM_BACKWARD(xlogy, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    if (em_node_needs_grad(n, 0)) {
        em_tensor *zero = AND(X(em_eq(x, S(0))), X(em_le(y, S(0))));
        GRAD(0, X(em_where(zero, S(0), X(em_xlogy(G, y)))));
    }
    GRAD(1, X(em_div(X(em_mul(G, x)), y)));
    DONE();
}
/* logaddexp(x, y): sigmoid(x - y), sigmoid(y - x); base 2: of (x - y) ln 2 */
#define LOGADDEXP(op, scale)                                                            \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1))                                      \
    {                                                                                   \
        em_arena a = {0};                                                               \
        INPUT(x, 0);                                                                    \
        INPUT(y, 1);                                                                    \
        GRAD(0, X(em_mul(G, X(em_sigmoid(X(em_mul(X(em_sub(x, y, 1)), S(scale))))))));  \
        GRAD(1, X(em_mul(G, X(em_sigmoid(X(em_mul(X(em_sub(y, x, 1)), S(scale))))))));  \
        DONE();                                                                         \
    }
LOGADDEXP(logaddexp, 1)
LOGADDEXP(logaddexp2, 0.69314718055994530942)

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
/* clamp(x, lo, hi) with tensor bounds, as PyTorch's clamp_backward_min_max:
 * x inside [lo, hi]; lo where x < lo < hi; hi where x > hi or hi < lo (the
 * result is hi then) */
EM_BACKWARD(clamp_tensor, EM_SAVE_INPUTS)
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(lo, 1);
    INPUT(hi, 2);
    GRAD(0, MASKED(AND(X(em_ge(x, lo)), X(em_le(x, hi)))));
    GRAD(1, MASKED(AND(X(em_lt(x, lo)), X(em_lt(lo, hi)))));
    GRAD(2, MASKED(X(em_logical_or(X(em_gt(x, hi)), X(em_lt(hi, lo))))));
    DONE();
}

/* ---- copy: the source gets the gradient (the engine casts it to its dtype) */
EM_BACKWARD(copy, 0)
{
    em_arena a = {0};
    GRAD(0, G);
    DONE();
}
