/* Backward formulas of the matrix products. The kernels compute
 * out = alpha * A B (beta is 0 for these ops), alpha in call.f[1]. */
#include "autograd.h"
#include "ember/ember.h"

#define INPUTS()                                       \
    const em_tensor *A = em_node_input(n, 0);          \
    const em_tensor *B = em_node_input(n, 1);          \
    if (!A || !B) return em_error_code()

/* g scaled by the call's alpha */
static em_tensor *scaled(em_arena *ap, const em_node *n, em_tensor *g)
{
    double alpha = n->call.f[1];
    return alpha == 1 ? g : em_arena_add(ap, em_mul(g, em_arena_add(ap, em_scalar_float(alpha))));
}

EM_BACKWARD(mm, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUTS();
    em_tensor *g = scaled(&a, n, G);
    GRAD(0, X(em_mm(g, X(em_t(B)))));
    GRAD(1, X(em_mm(X(em_t(A)), g)));
    DONE();
}

EM_BACKWARD(bmm, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUTS();
    em_tensor *g = scaled(&a, n, G);
    GRAD(0, X(em_bmm(g, X(em_transpose(B, 1, 2)))));
    GRAD(1, X(em_bmm(X(em_transpose(A, 1, 2)), g)));
    DONE();
}

EM_BACKWARD(mv, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUTS();
    em_tensor *g = scaled(&a, n, G);
    GRAD(0, X(em_outer(g, B)));
    GRAD(1, X(em_mv(X(em_t(A)), g)));
    DONE();
}

EM_BACKWARD(dot, EM_SAVE_IN(0) | EM_SAVE_IN(1))
{
    em_arena a = {0};
    INPUTS();
    em_tensor *g = scaled(&a, n, G);
    GRAD(0, X(em_mul(g, B)));
    GRAD(1, X(em_mul(g, A)));
    DONE();
}
