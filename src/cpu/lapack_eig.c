/* CPU kernel of the general (non-symmetric) eigendecomposition: LAPACK's
 * geev on the column-major matrix with right eigenvectors only, as PyTorch
 * calls it (its eigenvector normalization and signs), float32, float64,
 * complex64 and complex128. A real input's complex results are (re, im)
 * pairs in real tensors with a last dim of 2, which the op layer views as
 * complex (src/ops/lapack.c). */
#include "gemm.h"
#include "ember/lapack.h"
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PARTS 2
#define FINITE(x) isfinite(x)
#define T float
#define SFX f32
#define GEEV LAPACKE_sgeev
#include "lapack_eig_impl.h"
#undef T
#undef SFX
#undef GEEV

#define T double
#define SFX f64
#define GEEV LAPACKE_dgeev
#include "lapack_eig_impl.h"
#undef T
#undef SFX
#undef GEEV
#undef PARTS
#undef FINITE

#define PARTS 1
#define FINITE(x) (isfinite(creal(x)) && isfinite(cimag(x)))
#define T float _Complex
#define SFX c64
#define GEEV LAPACKE_cgeev
#include "lapack_eig_impl.h"
#undef T
#undef SFX
#undef GEEV

#define T double _Complex
#define SFX c128
#define GEEV LAPACKE_zgeev
#include "lapack_eig_impl.h"
#undef T
#undef SFX
#undef GEEV
#undef PARTS
#undef FINITE

em_status cpu_linalg_eig(const em_call *c)
{
    const int64_t n = c->i[2];
    void *work = malloc((size_t)(2 * n * n + 2 * n) * em_dtypes[c->dtype].size);
    if (!work) return em_fail(EM_ERR_MEMORY, "linalg.eig: out of memory for LAPACK's workspace");
    LAPACKE_set_nancheck(0);
    const int omp = cpu_blas_begin();
    em_status st = c->dtype == EM_F32   ? run_eig_f32(c, work)
                   : c->dtype == EM_F64 ? run_eig_f64(c, work)
                   : c->dtype == EM_C64 ? run_eig_c64(c, work)
                                        : run_eig_c128(c, work);
    cpu_blas_end(omp);
    free(work);
    return st;
}
