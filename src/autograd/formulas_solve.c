/* Backward of linalg.solve (include/ember/lapack.h): X = A^-1 B gives
 * gB = A^-H G and gA = -gB X^H. Notation as formulas_lapack.c. */
#include "autograd.h"
#include "ember/ember.h"

/* gB reuses the forward's LU of A^T (one getrs, no new factorization; for a
 * complex A, A^-H G = conj((A^T)^-1 conj(G))). Under create_graph it is a new
 * solve with A^H instead, so that it has a gradient itself in A and G. */
EM_BACKWARD(linalg_solve_ex, EM_SAVE_IN(0) | EM_SAVE_OUT(0) | EM_SAVE_OUT(1) | EM_SAVE_OUT(2))
{
    em_arena a = {0};
    em_tensor *Xo = X(em_node_unpack_output(n, 0)), *gB;
    if (em_is_grad_enabled()) {
        const em_tensor *A = em_node_input(n, 0);
        em_tensor *r[4] = {NULL}; /* NULL on failure */
        if (A) em_linalg_solve_ex(X(em_conj_if_complex(X(em_transpose(A, -2, -1)))), G, &r[0], &r[1], &r[2], &r[3]);
        for (int k = 1; k < 4; k++) em_release(r[k]);
        gB = X(r[0]);
    } else {
        const em_tensor *LU = em_node_output(n, 1), *piv = em_node_output(n, 2);
        /* LU is A^T's: A^T conj(gB) = conj(G) */
        gB = LU && piv ? X(em_conj_if_complex(X(em_linalg_lu_solve(LU, piv, X(em_conj_if_complex(G)), false))))
                       : X(NULL);
    }
    GRAD(1, gB);
    GRAD(0, X(em_neg(X(em_matmul(gB, X(em_conj_if_complex(X(em_transpose(Xo, -2, -1)))))))));
    DONE();
}
