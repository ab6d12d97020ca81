/* Backward formulas of the matrix products and trace.
 *
 * Every product op is one kernel contract (Note [GEMM call] in
 * src/cpu/linalg.c): C = beta * input + alpha * A @ B with A = in[0],
 * B = in[1], input = in[2] (the add* ops), beta = f[0], alpha = f[1]; A may
 * be a vector read as a row, B one read as a column, batch dims broadcast,
 * and addbmm sums over the batch. So one formula serves all eight:
 *   dA = alpha * G @ B^H,   dB = alpha * A^H @ G,   dinput = beta * G
 * (^H: the conjugate transpose, ^T for real operands: Note [Complex
 * gradients] in autograd.h)
 * with the vectors' missing dims put back on G, and matmul's broadcasting
 * (the engine sums broadcast batch dims back to each input's shape; for
 * addbmm, matmul broadcasts G over the summed batch). */
#include "autograd.h"
#include "ember/ember.h"

/* g * s, or g itself when s == 1 (PyTorch's maybe_multiply). */
static em_tensor *times(em_arena *ap, em_tensor *g, double s)
{
    return s == 1 ? g : em_arena_add(ap, em_mul(g, em_arena_add(ap, em_scalar_float(s))));
}

/* Are t's matrices stored column by column (a transposed view)? Then its
 * gradient is computed transposed, so that it has t's layout and the
 * transpose's view backward needs no copy (Note [View backward]). */
static bool col_major(const em_tensor *t)
{
    const int d = t->ndim;
    return d >= 2 && t->sizes[d - 2] > 1 && t->sizes[d - 1] > 1 && t->strides[d - 2] == 1 &&
           t->strides[d - 1] >= t->sizes[d - 2];
}

static em_status product_backward(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    const em_tensor *A = em_node_input(n, 0), *B = em_node_input(n, 1);
    if (!A || !B) return em_error_code();
    const bool a_vec = n->in_geom[0].ndim == 1, b_vec = n->in_geom[1].ndim == 1;
    const int gdim = n->out_geom[0].ndim;
    /* G as (..., M, N): a column dim for a vector B, a row dim for a vector A */
    em_tensor *g = times(&a, G, n->call.f[1]);
    if (g && b_vec) g = X(em_unsqueeze(g, gdim));
    if (g && a_vec) g = X(em_unsqueeze(g, gdim - !b_vec));
    const em_tensor *A2 = a_vec ? X(em_unsqueeze(A, 0)) : A, *B2 = b_vec ? X(em_unsqueeze(B, 1)) : B;
    if (a.failed) DONE();
    const bool a_cm = col_major(A2), b_cm = col_major(B2);
    if (em_node_needs_grad(n, 0)) {
        B2 = X(em_conj_if_complex(B2));
        em_tensor *d = !B2 ? NULL : a_cm ? X(em_transpose(X(em_matmul(B2, X(em_transpose(g, -1, -2)))), -1, -2))
                                     : X(em_matmul(g, X(em_transpose(B2, -1, -2))));
        GRAD(0, a_vec && d ? X(em_squeeze_dim(d, -2)) : d);
    }
    if (em_node_needs_grad(n, 1)) {
        A2 = X(em_conj_if_complex(A2));
        em_tensor *d = !A2 ? NULL : b_cm ? X(em_transpose(X(em_matmul(X(em_transpose(g, -1, -2)), A2)), -1, -2))
                                     : X(em_matmul(X(em_transpose(A2, -1, -2)), g));
        GRAD(1, b_vec && d ? X(em_squeeze_dim(d, -1)) : d);
    }
    GRAD(2, times(&a, G, n->call.f[0]));
    DONE();
}

#define PRODUCT_FORMULA(op) \
    EM_BACKWARD(op, EM_SAVE_IN(0) | EM_SAVE_IN(1)) { return product_backward(n, go, gi); }
PRODUCT_FORMULA(mm)
PRODUCT_FORMULA(bmm)
PRODUCT_FORMULA(addmm)
PRODUCT_FORMULA(baddbmm)
PRODUCT_FORMULA(addbmm)
PRODUCT_FORMULA(mv)
PRODUCT_FORMULA(addmv)
PRODUCT_FORMULA(dot)

/* trace: G on the diagonal of the input's shape. */
EM_BACKWARD(trace, 0)
{
    em_arena a = {0};
    const em_geometry *in = &n->in_geom[0];
    GRAD(0, X(em_mul(X(em_eye(in->sizes[0], in->sizes[1], (em_dtype)G->dtype)), G)));
    DONE();
}
