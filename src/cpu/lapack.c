/* CPU kernels of the LAPACK-backed factorizations (include/ember/lapack.h):
 * LU, linear solves, Cholesky, QR, Householder products, SVD, symmetric
 * eigendecomposition, LDL^T, least squares (LAPACKE, OpenBLAS's LAPACK) and
 * triangular solves (BLAS trsm), float32, float64, complex64 and complex128;
 * the per-dtype bodies are lapack_impl.h.
 *
 * The op layer hands each kernel contiguous inputs and fresh outputs (some
 * with column-major matrices, as lapack_impl.h says), the batch as c->i[0]
 * matrices of c->i[1] x c->i[2], no empty matrix.
 *
 * Note [LAPACK threads]
 * LAPACK runs on one OpenBLAS thread (cpu_blas_begin, as GEMM) and a batch
 * is split over Ember's pool, a chunk of matrices per task, when its work is
 * above EM_GRAIN_LAPACK. A single matrix stays on one thread: OpenBLAS's
 * OpenMP threads wait at barriers for each other, and with a core taken by
 * another process they made a 512 x 512 eigh 2-25x slower than one thread
 * (PyTorch's default here is one thread too). */
#include "gemm.h"
#include "ember/lapack.h"
#include <cblas.h>
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define T float
#define R float
#define SFX f32
#define LP(name) LAPACKE_s##name
#define LPU(name) LAPACKE_sor##name
#define LPH(name) LAPACKE_ssy##name
#define TRSM cblas_strsm
#define ONE 1
#define FINITE(x) isfinite(x)
#define ABS2(x) ((double)(x) * (x))
#define TRANS_H 'T'
#include "lapack_impl.h" /* (it undefines T, R, SFX, LP, LPU, LPH and TRSM) */

#define T double
#define R double
#define SFX f64
#define LP(name) LAPACKE_d##name
#define LPU(name) LAPACKE_dor##name
#define LPH(name) LAPACKE_dsy##name
#define TRSM cblas_dtrsm
#include "lapack_impl.h"
#undef ONE
#undef FINITE
#undef ABS2
#undef TRANS_H

/* complex: lapacke.h's lapack_complex_float/double are C99's _Complex types */
#define ONE (&(const T){1}) /* cblas's complex alpha is a pointer */
#define FINITE(x) (isfinite(creal(x)) && isfinite(cimag(x)))
#define ABS2(x) (creal(x) * creal(x) + cimag(x) * cimag(x))
#define TRANS_H 'C'
#define T float _Complex
#define R float
#define SFX c64
#define LP(name) LAPACKE_c##name
#define LPU(name) LAPACKE_cun##name
#define LPH(name) LAPACKE_che##name
#define TRSM cblas_ctrsm
#include "lapack_impl.h"

#define T double _Complex
#define R double
#define SFX c128
#define LP(name) LAPACKE_z##name
#define LPU(name) LAPACKE_zun##name
#define LPH(name) LAPACKE_zhe##name
#define TRSM cblas_ztrsm
#include "lapack_impl.h"
#undef ONE
#undef FINITE
#undef ABS2
#undef TRANS_H

/* One matrix of the batch (lapack_impl.h's one_*): 0 or a failure's info. */
typedef int (*one_fn)(const em_call *c, int64_t b, void *work);

typedef struct batch_job {
    const em_call *c;
    one_fn fn;
    size_t work_bytes;
    pthread_mutex_t lock; /* guards the two below */
    int64_t failed_at;    /* the first matrix that failed (c->i[0]: none) */
    int failed_info;
    _Atomic bool out_of_memory;
} batch_job;

static void run_range(void *ctx, int64_t begin, int64_t end)
{
    batch_job *j = ctx;
    void *work = malloc(j->work_bytes);
    if (!work) {
        j->out_of_memory = true;
        return;
    }
    const int omp = cpu_blas_begin();
    for (int64_t b = begin; b < end; b++) {
        int info = j->fn(j->c, b, work);
        if (info) {
            pthread_mutex_lock(&j->lock);
            if (b < j->failed_at) j->failed_at = b, j->failed_info = info;
            pthread_mutex_unlock(&j->lock);
            break;
        }
    }
    cpu_blas_end(omp);
    free(work);
}

/* The slot of the dtype in a {f32, f64, c64, c128} table (the op layer lets
 * no other dtype through). */
static int dtype_slot(em_dtype dt)
{
    return dt == EM_F32 ? 0 : dt == EM_F64 ? 1 : dt == EM_C64 ? 2 : 3;
}

#define FNS(name) ((const one_fn[4]){(one_fn)name##_f32, (one_fn)name##_f64, (one_fn)name##_c64, (one_fn)name##_c128})

/* Runs the dtype's one_* over the batch with `words` elements of scratch
 * per thread, `cost` (about the flops / 2 of one matrix) sizing the split
 * (Note [LAPACK threads]). A failure that has no info output is reported
 * as "<what> (error code: info)". LAPACKE's NaN check is off: a NaN input is
 * LAPACK's to handle (svd and eigh reject non-finite input themselves), as
 * in PyTorch. */
static em_status run(const em_call *c, const one_fn fns[4], int64_t words, int64_t cost, const char *what)
{
    static bool nancheck_off;
    if (!nancheck_off) {
        LAPACKE_set_nancheck(0);
        nancheck_off = true;
    }
    batch_job j = {.c = c, .fn = fns[dtype_slot(c->dtype)], .lock = PTHREAD_MUTEX_INITIALIZER,
                   .work_bytes = (size_t)(words > 0 ? words : 1) * em_dtypes[c->dtype].size, .failed_at = c->i[0]};
    em_parallel_for(c->i[0], cost > 0 ? cost : 1, EM_GRAIN_LAPACK, run_range, &j);
    if (j.out_of_memory) return em_fail(EM_ERR_MEMORY, "%s: out of memory for LAPACK's workspace", em_ops[c->op].name);
    if (j.failed_at < c->i[0]) return em_fail(EM_ERR_RUNTIME, "%s (error code: %d)", what, j.failed_info);
    return EM_OK;
}
#define RUN(name, words, cost) \
    run(c, FNS(one_##name), (words), (cost), "linalg." #name ": LAPACK failed")
#define M c->i[1]
#define N c->i[2]
#define K (M < N ? M : N)
#define MAX(a, b) ((a) > (b) ? (a) : (b))

em_status cpu_linalg_lu_factor_ex(const em_call *c) { return RUN(lu, 0, M * N * K); }
em_status cpu_linalg_solve_ex(const em_call *c) { return RUN(solve, 0, N * N * MAX(N, c->i[3])); }
em_status cpu_linalg_lu_solve(const em_call *c) { return RUN(lu_solve, 0, M * M * N); }
em_status cpu_linalg_cholesky_ex(const em_call *c) { return RUN(cholesky, 0, N * N * N); }
em_status cpu_linalg_qr(const em_call *c) { return RUN(qr, M * MAX(N, c->i[4]) + MAX(M, N), 2 * M * N * K); }
em_status cpu_geqrf(const em_call *c) { return RUN(geqrf, M * N, M * N * K); }
em_status cpu_linalg_householder_product(const em_call *c) { return RUN(householder, M * N, M * N * K); }
em_status cpu_linalg_svd(const em_call *c) { return RUN(svd, M * N, 8 * M * N * K); }
em_status cpu_linalg_eigh(const em_call *c) { return RUN(eigh, N * N, 8 * N * N * N); }
em_status cpu_linalg_solve_triangular(const em_call *c) { return RUN(trsm, 0, M * N * c->i[3]); }
em_status cpu_linalg_ldl_factor_ex(const em_call *c) { return RUN(ldl, N * N, N * N * N); }
em_status cpu_linalg_ldl_solve(const em_call *c) { return RUN(ldl_solve, M * M + M * N, M * M * N); }
em_status cpu_linalg_lstsq(const em_call *c)
{
    return run(c, FNS(one_lstsq), M * N + MAX(M, N) * c->i[3] + N,
               4 * M * N * K, "linalg.lstsq: the algorithm failed to converge");
}

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
            switch (c->dtype) {
            case EM_F32: *(float *)e = 1; break;
            case EM_F64: *(double *)e = 1; break;
            case EM_C64: *(float _Complex *)e = 1; break;
            default: *(double _Complex *)e = 1; break;
            }
        }
    }
    free(perm);
    return EM_OK;
}
