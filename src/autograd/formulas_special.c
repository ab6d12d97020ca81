/* Backward formulas of torch.special's ops (include/ember/ops/special.def),
 * written with Ember ops, as PyTorch 1.13's derivatives.yaml has them:
 * igamma/igammac differentiate in x only, zeta in q only (the other input
 * refuses, with PyTorch's message). */
#include "formulas_pointwise.h"

UNARY_IN(lgamma, X(em_mul(G, X(em_digamma(x)))))
UNARY_IN(digamma, X(em_mul(G, X(em_polygamma(x, 1)))))
EM_BACKWARD(polygamma, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    GRAD(0, X(em_mul(G, X(em_polygamma(x, P(0) + 1)))));
    DONE();
}
UNARY_IN(i0, X(em_mul(G, X(em_special_i1(x)))))
/* i0e' = i1e(x) - sgn(x) i0e(x) */
EM_BACKWARD(special_i0e, EM_SAVE_IN(0) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    OUTPUT(y, 0);
    GRAD(0, X(em_mul(G, X(em_sub(X(em_special_i1e(x)), X(em_mul(X(em_sign(x)), y)), 1)))));
    DONE();
}
/* i1' = i0(x) - i1(x)/x and i1e' = i0e(x) - i1e(x) (sgn(x) + 1/x), both 1/2 at 0 */
EM_BACKWARD(special_i1, EM_SAVE_IN(0) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    OUTPUT(y, 0);
    em_tensor *d = X(em_sub(X(em_i0(x)), X(em_div(y, x)), 1));
    GRAD(0, X(em_mul(G, X(em_where(X(em_eq(x, S(0))), S(0.5), d)))));
    DONE();
}
EM_BACKWARD(special_i1e, EM_SAVE_IN(0) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    OUTPUT(y, 0);
    em_tensor *d = X(em_sub(X(em_special_i0e(x)), X(em_mul(y, X(em_add(X(em_sign(x)), X(em_reciprocal(x)), 1)))), 1));
    GRAD(0, X(em_mul(G, X(em_where(X(em_eq(x, S(0))), S(0.5), d)))));
    DONE();
}
/* erfcx' = 2x erfcx(x) - 2/sqrt(pi) */
EM_BACKWARD(special_erfcx, EM_SAVE_IN(0) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    OUTPUT(y, 0);
    GRAD(0, X(em_mul(G, X(em_sub(X(em_mul(X(em_mul(x, y)), S(2))), S(1.12837916709551257390), 1)))));
    DONE();
}
/* ndtri' = sqrt(2pi) exp(ndtri(p)^2 / 2) */
UNARY_OUT(special_ndtri, X(em_mul(G, X(em_mul(X(em_exp(X(em_mul(X(em_mul(y, y)), S(0.5))))), S(2.50662827463100050242))))))
/* log_ndtr' = phi(x) / Phi(x) = exp(-x^2/2 - log_ndtr(x)) / sqrt(2pi) */
EM_BACKWARD(special_log_ndtr, EM_SAVE_IN(0) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    OUTPUT(y, 0);
    em_tensor *e = X(em_exp(X(em_neg(X(em_add(y, X(em_mul(X(em_mul(x, x)), S(0.5))), 1))))));
    GRAD(0, X(em_mul(G, X(em_mul(e, S(0.39894228040143267794))))));
    DONE();
}
/* entr' = -(1 + log x) */
UNARY_IN(special_entr, X(em_mul(G, X(em_neg(X(em_add(X(em_log(x)), S(1), 1)))))))

/* igamma(a, x)' in x: x^(a-1) e^-x / Gamma(a) (igammac: its negative) */
#define IGAMMA_BACKWARD(op, sign)                                                                        \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1))                                                       \
    {                                                                                                    \
        if (em_node_needs_grad(n, 0))                                                                    \
            return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s: input' is not implemented.", #op); \
        em_arena a = {0};                                                                                \
        INPUT(s, 0);                                                                                     \
        INPUT(x, 1);                                                                                     \
        em_tensor *l = X(em_sub(X(em_mul(X(em_sub(s, S(1), 1)), X(em_log(x)))), x, 1));                 \
        em_tensor *density = X(em_exp(X(em_sub(l, X(em_lgamma(s)), 1))));                               \
        GRAD(1, X(em_mul(G, X(em_mul(density, S(sign))))));                                              \
        DONE();                                                                                          \
    }
IGAMMA_BACKWARD(igamma, 1)
IGAMMA_BACKWARD(igammac, -1)

/* zeta(s, q)' in q: -s zeta(s + 1, q) */
EM_BACKWARD(special_zeta, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    if (em_node_needs_grad(n, 0)) return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for 'zeta' is not implemented.");
    em_arena a = {0};
    INPUT(s, 0);
    INPUT(q, 1);
    GRAD(1, X(em_mul(G, X(em_neg(X(em_mul(s, X(em_special_zeta(X(em_add(s, S(1), 1)), q)))))))));
    DONE();
}

/* xlog1py(x, y) = x log1p(y): log1p(y) (as xlog1py(g, y); 0 where x == 0
 * and y <= -1), and x / (1 + y) */
EM_BACKWARD(special_xlog1py, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(y, 1);
    if (em_node_needs_grad(n, 0)) {
        em_tensor *zero = AND(X(em_eq(x, S(0))), X(em_le(y, S(-1))));
        GRAD(0, X(em_where(zero, S(0), X(em_special_xlog1py(G, y)))));
    }
    GRAD(1, X(em_div(X(em_mul(G, x)), X(em_add(y, S(1), 1)))));
    DONE();
}
