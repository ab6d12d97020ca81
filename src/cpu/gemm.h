/* Every float32/float64/complex64/complex128 BLAS GEMM goes through cpu_gemm: BLAS itself runs on
 * one thread (src/core/threads.c), and a product of at least EM_GRAIN_GEMM
 * multiply-adds is split into blocks of C's rows or columns over Ember's
 * pool (Note [Thread pool]). Each element of C is computed by one BLAS call
 * over the whole K, so the split does not change the result. */
#ifndef EMBER_CPU_GEMM_H
#define EMBER_CPU_GEMM_H

#include "cpu.h"
#include <omp.h>

/* OpenBLAS's OpenMP build sizes each call by the calling thread's
 * omp_get_max_threads() (openblas_set_num_threads does not stick), so every
 * BLAS call runs between these two: one BLAS thread, the caller's OpenMP
 * setting (which oneDNN and the OpenMP loops use) restored after. */
static inline int cpu_blas_begin(void)
{
    int n = omp_get_max_threads();
    if (n != 1) omp_set_num_threads(1);
    return n;
}
static inline void cpu_blas_end(int n)
{
    if (n != 1) omp_set_num_threads(n);
}

/* C (M x N) = alpha * op(A) op(B) + beta * C, row-major, op transposes when
 * ta/tb; dt is EM_F32, EM_F64, EM_C64 or EM_C128; sizes and leading dims fit
 * BLAS's int. */
void cpu_gemm(em_dtype dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void *A,
              int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc);

#endif
