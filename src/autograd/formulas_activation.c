/* Backward formulas of the activation functions (relu, elu, gelu, hard*,
 * softplus... of include/ember/ops/unary.def), written with Ember ops.
 * Values at the kinks follow PyTorch's derivatives.yaml: relu'(0) = 0,
 * hardtanh and hardsigmoid pass nothing at their bounds, hardswish is
 * x / 3 + 1/2 on the closed [-3, 3], the ELUs take their negative branch
 * at 0. Shorthands: formulas_pointwise.h. */
#include "formulas_pointwise.h"

/* relu: the gradient passes where the output is positive (one fused pass) */
UNARY_OUT(relu, X(em_threshold_backward(G, y, 0)))
UNARY_IN(leaky_relu, X(em_where(X(em_gt(x, S(0))), G, X(em_mul(G, S(P(0)))))))

/* hardtanh(min, max) and relu6 = hardtanh(0, 6): inside the open interval.
 * The output is strictly inside exactly where the input is (clamping is
 * exact), and reading it spares in-place calls a copy of the input. */
static em_status hardtanh_grad(const em_node *n, em_tensor *const *go, em_tensor **gi, double lo, double hi)
{
    em_arena a = {0};
    OUTPUT(y, 0);
    GRAD(0, MASKED(AND(X(em_gt(y, S(lo))), X(em_lt(y, S(hi))))));
    DONE();
}
EM_BACKWARD(hardtanh, EM_SAVE_OUT(0)) { return hardtanh_grad(n, go, gi, P(0), P(1)); }
EM_BACKWARD(relu6, EM_SAVE_OUT(0)) { return hardtanh_grad(n, go, gi, 0, 6); }

/* hardsigmoid = clamp(x / 6 + 1/2, 0, 1) */
UNARY_IN(hardsigmoid, X(em_mul(MASKED(AND(X(em_gt(x, S(-3))), X(em_lt(x, S(3))))), S(1.0 / 6))))
/* hardswish = x hardsigmoid(x) */
EM_BACKWARD(hardswish, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *mid = X(em_add(X(em_mul(x, S(1.0 / 3))), S(0.5), 1));
    em_tensor *d = X(em_where(X(em_lt(x, S(-3))), S(0), X(em_where(X(em_le(x, S(3))), mid, S(1)))));
    GRAD(0, X(em_mul(G, d)));
    DONE();
}

/* The ELU family: scale * (x > 0 ? x : alpha (exp(x * in_scale) - 1)).
 * The exponential is taken of min(x, 0): an overflow on the unused side
 * would turn the second derivative into 0 * inf. */
static em_status elu_grad(const em_node *n, em_tensor *const *go, em_tensor **gi, double alpha, double scale,
                          double in_scale)
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *x_neg = X(em_clamp(x, NAN, 0));
    em_tensor *neg = X(em_mul(X(em_exp(X(em_mul(x_neg, S(in_scale))))), S(scale * alpha * in_scale)));
    GRAD(0, X(em_mul(G, X(em_where(X(em_gt(x, S(0))), S(scale), neg)))));
    DONE();
}
EM_BACKWARD(elu, EM_SAVE_IN(0)) { return elu_grad(n, go, gi, P(0), 1, 1); }
EM_BACKWARD(celu, EM_SAVE_IN(0)) { return elu_grad(n, go, gi, P(0), 1, 1 / P(0)); }
EM_BACKWARD(selu, EM_SAVE_IN(0))
{
    return elu_grad(n, go, gi, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1);
}

/* softplus(beta, threshold): sigmoid(beta x), or 1 where beta x > threshold
 * (where the forward returns x itself) */
EM_BACKWARD(softplus, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *bx = X(em_mul(x, S(P(0))));
    GRAD(0, X(em_where(X(em_gt(bx, S(P(1)))), G, X(em_mul(G, X(em_sigmoid(bx)))))));
    DONE();
}
/* logsigmoid' = 1 - sigmoid(x) = sigmoid(-x) */
UNARY_IN(logsigmoid, X(em_mul(G, X(em_sigmoid(X(em_neg(x)))))))
/* silu = x sigmoid(x): s (1 + x (1 - s)) */
EM_BACKWARD(silu, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *s = X(em_sigmoid(x));
    GRAD(0, X(em_mul(G, X(em_mul(s, X(em_add(S(1), X(em_mul(x, X(em_sub(S(1), s, 1)))), 1)))))));
    DONE();
}
/* mish = x tanh(softplus(x)): t + x sigmoid(x) (1 - t^2) */
EM_BACKWARD(mish, EM_SAVE_IN(0))
{
    em_arena a = {0};
    INPUT(x, 0);
    em_tensor *t = X(em_tanh(X(em_softplus(x, 1, 20))));
    em_tensor *sech2 = X(em_sub(S(1), X(em_mul(t, t)), 1));
    GRAD(0, X(em_mul(G, X(em_add(t, X(em_mul(X(em_mul(x, X(em_sigmoid(x)))), sech2)), 1)))));
    DONE();
}
/* gelu: g gelu'(x) in one pass (gelu_backward) */
UNARY_IN(gelu, X(em_gelu_backward(G, x, P(0))))

/* gelu_backward(g, x) = g gelu'(x): linear in g; in x, g gelu''(x) with, exact,
 * gelu'' = phi(x) (2 - x^2), and for the tanh form t = tanh(u), u = c (x + k x^3):
 * gelu'' = (1 - t^2) (u' + x u'' / 2 - x t u'^2) */
EM_BACKWARD(gelu_backward, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUT(g, 0);
    INPUT(x, 1);
    GRAD(0, X(em_gelu_backward(G, x, P(0))));
    em_tensor *d2 = NULL;
    if (em_node_needs_grad(n, 1)) {
        em_tensor *x2 = X(em_mul(x, x));
        if (P(0) == 0) {
            em_tensor *pdf = X(em_mul(X(em_exp(X(em_mul(x2, S(-0.5))))), S(0.39894228040143267794)));
            d2 = X(em_mul(pdf, X(em_sub(S(2), x2, 1))));
        } else {
            const double c = 0.79788456080286535588, k = 0.044715;
            em_tensor *t = X(em_tanh(X(em_mul(X(em_mul(x, X(em_add(S(1), X(em_mul(x2, S(k))), 1)))), S(c)))));
            em_tensor *du = X(em_mul(X(em_add(S(1), X(em_mul(x2, S(3 * k))), 1)), S(c)));
            em_tensor *half_x_ddu = X(em_mul(x2, S(3 * c * k))); /* x u'' / 2, u'' = 6 c k x */
            em_tensor *inner = X(em_sub(X(em_add(du, half_x_ddu, 1)), X(em_mul(X(em_mul(x, t)), X(em_mul(du, du)))), 1));
            d2 = X(em_mul(X(em_sub(S(1), X(em_mul(t, t)), 1)), inner));
        }
    }
    GRAD(1, X(em_mul(X(em_mul(G, g)), d2)));
    DONE();
}
