/* Shorthands shared by the pointwise formula files (formulas_pointwise.c,
 * formulas_activation.c), on top of autograd.h's X / G / GRAD / DONE. */
#ifndef EMBER_FORMULAS_POINTWISE_H
#define EMBER_FORMULAS_POINTWISE_H

#include "autograd.h"
#include "ember/ember.h"
#include <math.h>

#define S(v) X(em_scalar_float(v))
#define P(k) (n->call.f[k])
/* conj(v) for a complex v, v itself otherwise (Note [Complex gradients]) */
#define C(v) X(em_conj_if_complex(v))
/* Saved input i (borrowed), or return the version (or freed-graph) error. */
#define INPUT(v, i)                                    \
    const em_tensor *v = em_node_input(n, i);          \
    if (!v) return em_error_code()
/* Saved output k, held by the arena: with history while recording, so that
 * the formula differentiates twice (Note [Unpacking a saved output]). */
#define OUTPUT(v, k)                                   \
    em_tensor *v = X(em_node_unpack_output(n, k));     \
    if (!v) return em_arena_end(&a)

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
/* g * mask, a bool mask: the gradient passes where it is true */
#define MASKED(mask) X(em_mul(G, (mask)))
#define AND(p, q) X(em_logical_and((p), (q)))

#endif
