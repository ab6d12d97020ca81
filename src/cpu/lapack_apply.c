/* CPU kernel that applies a factorization to a right-hand side, with the
 * LAPACK call PyTorch makes (the same rounding): ormqr, the product with the
 * Q of geqrf's reflectors (unmqr for complex), float32, float64, complex64
 * and complex128 through LAPACKE's row-major interface (it transposes in and
 * out); contract in src/ops/lapack.c. (getrs,
 * the solve with an LU, is src/cpu/lapack.c's lu_solve.) */
#include "gemm.h"
#include "ember/lapack.h"
#include <complex.h>
#include <lapacke.h>
#include <string.h>

/* in = {reflectors (mq x nref), tau (k), other}, out[0] = Q other (other Q
 * when not left; Q^H when transpose), other's shape rows x cols; i[0] the
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
    const bool cplx = em_dtype_is_complex(c->dtype);
    const char side = c->i[5] ? 'L' : 'R', trans = c->i[6] ? (cplx ? 'C' : 'T') : 'N';
    LAPACKE_set_nancheck(0); /* NaNs propagate, as PyTorch's (see lapack.c) */
    const int omp = cpu_blas_begin();
    int info = 0;
    for (int64_t b = 0; b < c->i[0] && !info; b++) {
        const char *ab = a + (size_t)(b * mq * nref) * es, *tb = tau + (size_t)(b * k) * es;
        char *cb = out + (size_t)(b * rows * cols) * es;
        const int r = (int)rows, cl = (int)cols, kk = (int)k, la = (int)nref;
        switch (c->dtype) {
        case EM_F32:
            info = LAPACKE_sormqr(LAPACK_ROW_MAJOR, side, trans, r, cl, kk, (const float *)ab, la, (const float *)tb,
                                  (float *)cb, cl);
            break;
        case EM_F64:
            info = LAPACKE_dormqr(LAPACK_ROW_MAJOR, side, trans, r, cl, kk, (const double *)ab, la,
                                  (const double *)tb, (double *)cb, cl);
            break;
        case EM_C64:
            info = LAPACKE_cunmqr(LAPACK_ROW_MAJOR, side, trans, r, cl, kk, (const float _Complex *)ab, la,
                                  (const float _Complex *)tb, (float _Complex *)cb, cl);
            break;
        default:
            info = LAPACKE_zunmqr(LAPACK_ROW_MAJOR, side, trans, r, cl, kk, (const double _Complex *)ab, la,
                                  (const double _Complex *)tb, (double _Complex *)cb, cl);
            break;
        }
    }
    cpu_blas_end(omp);
    return info ? em_fail(info == LAPACK_WORK_MEMORY_ERROR ? EM_ERR_MEMORY : EM_ERR_RUNTIME,
                          "torch.ormqr: LAPACK failed (info %d)", info)
                : EM_OK;
}
