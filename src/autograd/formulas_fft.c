/* Backward formulas of the DFT primitives (include/ember/fft.h). A DFT's
 * matrix is symmetric, and its adjoint (conjugate transpose) is the DFT of
 * the opposite direction with the same scale; with PyTorch's convention for
 * complex gradients (the gradient of y = A x is A^H g), each formula is
 * another DFT:
 *   c2c:  g -> c2c(g) in the other direction;
 *   r2c:  the half spectrum is the full one with entries dropped, so the
 *         gradient zero-fills them, runs the inverse c2c and keeps the real
 *         part (the input is real);
 *   c2r:  the Hermitian completion reads each entry 1 .. n - n/2 - 1 of the
 *         half twice (as itself and mirrored), so the gradient is the
 *         forward r2c of g with those entries doubled. */
#include "autograd.h"
#include "ember/ember.h"

/* The forward call's dims, the halved (last) one last. */
static int call_dims(const em_node *n, int64_t *dims)
{
    const uint64_t mask = (uint64_t)n->call.i[0];
    const int last = (int)n->call.i[1];
    int k = 0;
    for (int d = 0; d < EM_MAX_DIMS; d++)
        if ((mask >> d & 1) && d != last) dims[k++] = d;
    dims[k++] = last;
    return k;
}

#define NORM ((em_fft_norm)n->call.i[2])

EM_BACKWARD(fft_c2c, 0)
{
    em_arena a = {0};
    int64_t dims[EM_MAX_DIMS];
    const int nd = call_dims(n, dims);
    GRAD(0, X(em_fft_c2c(G, nd, dims, NORM, !n->call.i[3])));
    DONE();
}

EM_BACKWARD(fft_r2c, 0)
{
    em_arena a = {0};
    int64_t dims[EM_MAX_DIMS];
    const int nd = call_dims(n, dims), last = (int)n->call.i[1];
    const em_geometry *in = &n->in_geom[0];
    em_tensor *g = G;
    if (n->call.i[3] && in->sizes[last] > G->sizes[last]) { /* onesided: zeros for the dropped entries */
        int64_t sizes[EM_MAX_DIMS];
        memcpy(sizes, G->sizes, G->ndim * sizeof *sizes);
        sizes[last] = in->sizes[last] - G->sizes[last];
        em_tensor *zeros = X(em_zeros(G->ndim, sizes, (em_dtype)G->dtype));
        g = zeros ? X(em_cat(2, (const em_tensor *[]){G, zeros}, last)) : NULL;
    }
    em_tensor *z = g ? X(em_fft_c2c(g, nd, dims, NORM, false)) : NULL;
    GRAD(0, z ? X(em_select(X(em_view_as_real(z)), -1, 0)) : NULL);
    DONE();
}

EM_BACKWARD(fft_c2r, 0)
{
    em_arena a = {0};
    int64_t dims[EM_MAX_DIMS];
    const int nd = call_dims(n, dims), last = (int)n->call.i[1];
    em_tensor *gz = X(em_fft_r2c(G, nd, dims, NORM, true));
    const int64_t half = gz ? gz->sizes[last] : 0, twice = n->call.i[4] - half;
    if (gz && twice > 0) {
        em_tensor *parts[3] = {X(em_narrow(gz, last, 0, 1)), X(em_narrow(gz, last, 1, twice)),
                               X(em_narrow(gz, last, 1 + twice, half - 1 - twice))};
        parts[1] = parts[1] ? X(em_mul(parts[1], X(em_scalar_float(2)))) : NULL;
        gz = parts[0] && parts[1] && parts[2] ? X(em_cat(3, (const em_tensor *const *)parts, last)) : NULL;
    }
    GRAD(0, gz);
    DONE();
}
