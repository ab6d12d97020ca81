/* CPU kernels of the LAPACK-backed factorizations (include/ember/lapack.h):
 * LU, Cholesky, QR, Householder products, SVD, symmetric eigendecomposition,
 * LDL^T, least squares (LAPACKE, OpenBLAS's LAPACK) and triangular solves (BLAS
 * trsm), float32 and float64; the per-dtype bodies are lapack_impl.h.
 *
 * The op layer hands each kernel contiguous inputs and fresh contiguous
 * outputs, the batch as c->i[0] matrices of c->i[1] x c->i[2], no empty
 * matrix. LAPACK runs on one thread (cpu_blas_begin, as GEMM); the batch is
 * walked in order. */
#include "gemm.h"
#include "ember/lapack.h"
#include <cblas.h>
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#define T float
#define SFX f32
#define LP(name) LAPACKE_s##name
#define TRSM cblas_strsm
#include "lapack_impl.h"
#undef T
#undef SFX
#undef LP
#undef TRSM

#define T double
#define SFX f64
#define LP(name) LAPACKE_d##name
#define TRSM cblas_dtrsm
#include "lapack_impl.h"
#undef T
#undef SFX
#undef LP
#undef TRSM

typedef em_status (*run_fn)(const em_call *c, void *work);

/* Runs the dtype's batch loop with `words` elements of scratch and LAPACK on
 * one thread. LAPACKE's NaN check is off: a NaN input is LAPACK's to handle
 * (svd and eigh reject non-finite input themselves), as in PyTorch. */
static em_status run(const em_call *c, run_fn f32, run_fn f64, int64_t words)
{
    static bool nancheck_off;
    if (!nancheck_off) {
        LAPACKE_set_nancheck(0);
        nancheck_off = true;
    }
    void *work = malloc((size_t)(words > 0 ? words : 1) * em_dtypes[c->dtype].size);
    if (!work) return em_fail(EM_ERR_MEMORY, "%s: out of memory for LAPACK's workspace", em_ops[c->op].name);
    const int omp = cpu_blas_begin();
    em_status st = c->dtype == EM_F32 ? f32(c, work) : f64(c, work);
    cpu_blas_end(omp);
    free(work);
    return st;
}
#define RUN(name, words) run(c, (run_fn)name##_f32, (run_fn)name##_f64, (words))
#define M c->i[1]
#define N c->i[2]
#define MAX(a, b) ((a) > (b) ? (a) : (b))

em_status cpu_linalg_lu_factor_ex(const em_call *c) { return RUN(run_lu, M * N); }
em_status cpu_linalg_cholesky_ex(const em_call *c) { return RUN(run_cholesky, 0); }
em_status cpu_linalg_qr(const em_call *c) { return RUN(run_qr, M * MAX(N, c->i[4]) + MAX(M, N)); }
em_status cpu_geqrf(const em_call *c) { return RUN(run_geqrf, M * N); }
em_status cpu_linalg_householder_product(const em_call *c) { return RUN(run_householder, M * N); }
em_status cpu_linalg_svd(const em_call *c) { return RUN(run_svd, M * N); }
em_status cpu_linalg_eigh(const em_call *c) { return RUN(run_eigh, N * N); }
em_status cpu_linalg_lstsq(const em_call *c) { return RUN(run_lstsq, M * N + MAX(M, N) * c->i[3] + N); }
em_status cpu_linalg_solve_triangular(const em_call *c) { return RUN(run_trsm, 0); }
em_status cpu_linalg_ldl_factor_ex(const em_call *c) { return RUN(run_ldl, N * N); }
em_status cpu_linalg_ldl_solve(const em_call *c) { return RUN(run_ldl_solve, M * M + M * N); }

/* The permutation matrix P (m x m, c->dtype) of LAPACK's 1-based row swaps
 * `pivots` (k each, int32): A = P L U. in[0] = pivots, out[0] = P, i[0] = the
 * batch, i[1] = i[2] = m, i[3] = k. Swaps outside [1, m] were rejected upstream. */
em_status cpu_lu_pivots_to_permutation(const em_call *c)
{
    const int64_t m = c->i[1], k = c->i[3];
    const int32_t *piv = (const int32_t *)em_tensor_data(c->in[0]);
    char *out = em_tensor_data(c->out[0]);
    const size_t es = em_dtypes[c->dtype].size;
    int64_t *perm = malloc((size_t)(m > 0 ? m : 1) * sizeof *perm);
    if (!perm) return em_fail(EM_ERR_MEMORY, "lu_unpack: out of memory");
    memset(out, 0, (size_t)(c->i[0] * m * m) * es);
    for (int64_t b = 0; b < c->i[0]; b++) {
        for (int64_t i = 0; i < m; i++) perm[i] = i;
        for (int64_t i = 0; i < k; i++) {
            int64_t j = piv[b * k + i] - 1, t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        /* row perm[i] of A is row i of L U: P[perm[i], i] = 1 */
        char *p = out + b * m * m * es;
        for (int64_t i = 0; i < m; i++) {
            char *e = p + (perm[i] * m + i) * es;
            if (c->dtype == EM_F32) *(float *)e = 1;
            else *(double *)e = 1;
        }
    }
    free(perm);
    return EM_OK;
}
