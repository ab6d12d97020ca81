/* cpu_gemm (gemm.h): one BLAS GEMM, split over the thread pool when large. */
#include <complex.h>
#include "gemm.h"
#include <cblas.h>

typedef struct gemm_job {
    em_dtype dt;
    bool ta, tb, by_rows; /* split C's rows (else its columns) */
    int64_t M, N, K, lda, ldb, ldc, nchunks;
    double alpha, beta;
    const char *A, *B;
    char *C;
} gemm_job;

static void blas(const gemm_job *g, int64_t M, int64_t N, const char *A, const char *B, char *C)
{
    const enum CBLAS_TRANSPOSE ta = g->ta ? CblasTrans : CblasNoTrans, tb = g->tb ? CblasTrans : CblasNoTrans;
    const int omp = cpu_blas_begin();
    if (g->dt == EM_F32) {
        cblas_sgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)g->K, (float)g->alpha, (const float *)A, (int)g->lda,
                    (const float *)B, (int)g->ldb, (float)g->beta, (float *)C, (int)g->ldc);
    } else if (g->dt == EM_F64) {
        cblas_dgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)g->K, g->alpha, (const double *)A, (int)g->lda,
                    (const double *)B, (int)g->ldb, g->beta, (double *)C, (int)g->ldc);
    } else if (g->dt == EM_C64) { /* complex scalars are passed by pointer */
        const float _Complex alpha = (float)g->alpha, beta = (float)g->beta;
        cblas_cgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)g->K, &alpha, A, (int)g->lda, B, (int)g->ldb, &beta,
                    C, (int)g->ldc);
    } else {
        const double _Complex alpha = g->alpha, beta = g->beta;
        cblas_zgemm(CblasRowMajor, ta, tb, (int)M, (int)N, (int)g->K, &alpha, A, (int)g->lda, B, (int)g->ldb, &beta,
                    C, (int)g->ldc);
    }
    cpu_blas_end(omp);
}

/* Block k: rows [b, e) of C with A's rows (columns of A when ta), or
 * columns [b, e) of C with B's columns (rows of B when tb). */
static void gemm_chunk(void *p, int64_t k)
{
    const gemm_job *g = p;
    const int64_t es = (int64_t)em_dtypes[g->dt].size;
    int64_t b, e;
    em_parallel_range(g->by_rows ? g->M : g->N, g->nchunks, 16, k, &b, &e);
    if (b >= e) return;
    if (g->by_rows)
        blas(g, e - b, g->N, g->A + (g->ta ? b : b * g->lda) * es, g->B, g->C + b * g->ldc * es);
    else
        blas(g, g->M, e - b, g->A, g->B + (g->tb ? b * g->ldb : b) * es, g->C + b * es);
}

void cpu_gemm(em_dtype dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void *A,
              int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc)
{
    gemm_job g = {.dt = dt, .ta = ta, .tb = tb, .by_rows = M >= N, .M = M, .N = N, .K = K, .lda = lda,
                  .ldb = ldb, .ldc = ldc, .alpha = alpha, .beta = beta, .A = A, .B = B, .C = C};
    const int64_t side = g.by_rows ? M : N;
    g.nchunks = em_parallel_chunks(M * N * K, EM_GRAIN_GEMM);
    if (g.nchunks > side / 16) g.nchunks = side / 16; /* blocks of at least 16 rows/columns */
    if (g.nchunks < 2) {
        blas(&g, M, N, g.A, g.B, g.C);
        return;
    }
    em_parallel_run(g.nchunks, gemm_chunk, &g);
}
