/* CPU kernel that applies a factorization to a right-hand side, with the
 * LAPACK call PyTorch makes (the same rounding): ormqr, the product with the
 * Q of geqrf's reflectors, float32 and float64 through LAPACKE's row-major
 * interface (it transposes in and out); contract in src/ops/lapack.c. (getrs,
 * the solve with an LU, is src/cpu/lapack.c's lu_solve.) */
#include "gemm.h"
#include "ember/lapack.h"
#include <lapacke.h>
#include <string.h>

/* in = {reflectors (mq x nref), tau (k), other}, out[0] = Q other (other Q
 * when not left; Q^T when transpose), other's shape rows x cols; i[0] the
 * batch, i[1] = rows, i[2] = cols, i[3] = nref, i[4] = k, i[5] = left,
 * i[6] = transpose. Q is mq x mq, mq = rows (left) or cols. */
em_status cpu_ormqr(const em_call *c)
{
    const int64_t rows = c->i[1], cols = c->i[2], nref = c->i[3], k = c->i[4], mq = c->i[5] ? rows : cols;
    const size_t es = em_dtypes[c->dtype].size;
    const char *a = em_tensor_data(c->in[0]), *tau = em_tensor_data(c->in[1]);
    char *out = em_tensor_data(c->out[0]);
    memcpy(out, em_tensor_data(c->in[2]), (size_t)(c->i[0] * rows * cols) * es);
    if (k == 0) return EM_OK; /* Q = I */
    const char side = c->i[5] ? 'L' : 'R', trans = c->i[6] ? 'T' : 'N';
    LAPACKE_set_nancheck(0); /* NaNs propagate, as PyTorch's (see lapack.c) */
    const int omp = cpu_blas_begin();
    int info = 0;
    for (int64_t b = 0; b < c->i[0] && !info; b++) {
        const char *ab = a + (size_t)(b * mq * nref) * es, *tb = tau + (size_t)(b * k) * es;
        char *cb = out + (size_t)(b * rows * cols) * es;
        info = c->dtype == EM_F32
                   ? LAPACKE_sormqr(LAPACK_ROW_MAJOR, side, trans, (int)rows, (int)cols, (int)k, (const float *)ab,
                                    (int)nref, (const float *)tb, (float *)cb, (int)cols)
                   : LAPACKE_dormqr(LAPACK_ROW_MAJOR, side, trans, (int)rows, (int)cols, (int)k, (const double *)ab,
                                    (int)nref, (const double *)tb, (double *)cb, (int)cols);
    }
    cpu_blas_end(omp);
    return info ? em_fail(info == LAPACK_WORK_MEMORY_ERROR ? EM_ERR_MEMORY : EM_ERR_RUNTIME,
                          "torch.ormqr: LAPACK failed (info %d)", info)
                : EM_OK;
}
