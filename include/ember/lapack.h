/* Ember's LAPACK-backed factorizations (OpenBLAS's LAPACK through LAPACKE),
 * the primitives torch.linalg is built from: LU, triangular solve,
 * Cholesky, QR, Householder products, SVD, symmetric eigendecomposition and
 * least squares. The Python package composes det, inv, solve, pinv,
 * matrix_exp, ... from them, as PyTorch 1.13 defines those.
 *
 * Conventions (as core.h): results are NEW references through the pointers
 * given (set to NULL on failure); tensor arguments are borrowed. Inputs are
 * float32, float64, complex64 or complex128 (others: a dtype error; a real
 * input's eig results are complex; singular values, eigh's eigenvalues and
 * lstsq's residuals and singular values are real), (..., m, n) with any batch dims, any
 * strides. Results are fresh tensors, contiguous except where said: LU, X,
 * L, Q and R have PyTorch's strides, each matrix column-major (LAPACK's
 * layout, so that no result is transposed back). A singular or
 * non-positive-definite input is no error
 * here: the `info` results say which batch entries failed (LAPACK's info, 0:
 * success), for the caller to raise torch.linalg.LinAlgError or not.
 *
 * Autograd: lu_factor_ex (square inputs), solve_ex (src/autograd/formulas_solve.c),
 * solve_triangular, cholesky_ex, qr
 * (modes reduced, and complete for m <= n), svd and eigh (with their vectors)
 * have backward formulas (src/autograd/formulas_lapack.c); the other ops'
 * results do not require grad. */
#ifndef EMBER_LAPACK_H
#define EMBER_LAPACK_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LU with partial pivoting, A = P L U: LU (..., m, n), column-major
 * matrices, holds L (unit lower, below the diagonal) and U; pivots (..., min(m, n)) int32, LAPACK's
 * 1-based row swaps; info (...) int32, > 0 when U has an exact zero on the
 * diagonal (the factorization is still complete). */
em_status em_linalg_lu_factor_ex(const em_tensor *A, em_tensor **LU, em_tensor **pivots, em_tensor **info);

/* X (..., n, k) with A X = B for A (..., n, n) and B (..., n, k), batch dims
 * broadcast, by LU with partial pivoting of A^T (LAPACK's getrf and getrs,
 * as PyTorch): LU (..., n, n) and pivots (..., n) are A^T's factorization
 * (lu_factor_ex's form), info (...) > 0 where A is singular (X then holds
 * inf/nan). X and LU are column-major matrices. Autograd: X in A and B. */
em_status em_linalg_solve_ex(const em_tensor *A, const em_tensor *B, em_tensor **X, em_tensor **LU,
                             em_tensor **pivots, em_tensor **info);

/* X (..., n, k), column-major matrices, with M X = B (M^T X = B when
 * adjoint) for M = P L U given by lu_factor_ex's LU (..., n, n) and pivots
 * (..., n) (each in [1, n]); B (..., n, k), batch dims broadcast. Not
 * differentiable. */
em_tensor *em_linalg_lu_solve(const em_tensor *LU, const em_tensor *pivots, const em_tensor *B, bool adjoint);

/* The permutation matrix P (..., m, m) of dtype `dtype` (float32/float64) of
 * LU pivots (..., k) int32 with k <= m, each in [1, m]. */
em_tensor *em_lu_pivots_to_permutation(const em_tensor *pivots, int64_t m, em_dtype dtype);

/* X with A X = B (left) or X A = B (right) for triangular A (..., n, n),
 * upper or lower, reading only that triangle (and not the diagonal when
 * unitriangular: it is taken as ones). B is (..., n, k) (left) or (..., k, n)
 * (right); batch dims broadcast. A zero on the diagonal gives inf/nan, no
 * error (as PyTorch). */
em_tensor *em_linalg_solve_triangular(const em_tensor *A, const em_tensor *B, bool upper, bool left,
                                      bool unitriangular);

/* Cholesky factor of the symmetric positive-definite A (..., n, n), read from
 * its lower triangle: L lower with A = L L^T, or (upper) U = L^T read from
 * the upper triangle. info (...) int32: k > 0 when the leading minor of
 * order k is not positive-definite. */
em_status em_linalg_cholesky_ex(const em_tensor *A, bool upper, em_tensor **L, em_tensor **info);

typedef enum em_qr_mode { EM_QR_REDUCED, EM_QR_COMPLETE, EM_QR_R } em_qr_mode;
/* A (..., m, n) = Q R, k = min(m, n): reduced: Q (..., m, k), R (..., k, n);
 * complete: Q (..., m, m), R (..., m, n); r: R (..., k, n) and Q an empty
 * tensor (0 elements). */
em_status em_linalg_qr(const em_tensor *A, em_qr_mode mode, em_tensor **Q, em_tensor **R);

/* LAPACK's geqrf: a (..., m, n) with R on and above the diagonal and the
 * Householder vectors below it; tau (..., min(m, n)) their scales. */
em_status em_geqrf(const em_tensor *A, em_tensor **a, em_tensor **tau);

/* The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the
 * i-th column of A (..., m, n) below the diagonal with a 1 on it;
 * tau (..., k), k <= n <= m. */
em_tensor *em_linalg_householder_product(const em_tensor *A, const em_tensor *tau);

/* Q other (left) or other Q, Q^T when transpose, Q (..., mq, mq) the product
 * H_1 ... H_k of the reflectors in the first k columns of input (..., mq, n)
 * with scales tau (..., k), k <= n, as geqrf leaves them (LAPACK's ormqr);
 * other (..., mq, p) (left) or (..., p, mq), the same batch dims as input.
 * Not differentiable (as PyTorch 1.13). */
em_tensor *em_ormqr(const em_tensor *input, const em_tensor *tau, const em_tensor *other, bool left, bool transpose);

/* A (..., m, n) = U diag(S) Vh, S (..., k) descending, k = min(m, n);
 * full_matrices: U (..., m, m), Vh (..., n, n), else (..., m, k), (..., k, n).
 * Without compute_uv, U and Vh are empty tensors. info (...) int32: > 0
 * when LAPACK did not converge, -1 for a non-finite input. */
em_status em_linalg_svd(const em_tensor *A, bool full_matrices, bool compute_uv, em_tensor **U, em_tensor **S,
                        em_tensor **Vh, em_tensor **info);

/* Eigenvalues L (..., n) and right eigenvectors V (..., n, n) (columns of
 * norm 1, the largest component real; an empty tensor without compute_v) of
 * the general square A (LAPACK's geev), complex64 for float32 A, complex128
 * for float64. info (...) int32: > 0 when LAPACK did not converge, -1 for a
 * non-finite input. Not differentiable (the gradient needs complex autograd). */
em_status em_linalg_eig(const em_tensor *A, bool compute_v, em_tensor **L, em_tensor **V, em_tensor **info);

/* Eigenvalues L (..., n) ascending and eigenvectors Q (..., n, n) (columns;
 * an empty tensor without compute_v) of the symmetric A, read from its lower
 * (upper) triangle. info (...) int32: > 0 when LAPACK did not converge; a
 * non-finite input gives NaN results, no error (as PyTorch). */
em_status em_linalg_eigh(const em_tensor *A, bool upper, bool compute_v, em_tensor **L, em_tensor **Q,
                         em_tensor **info);

typedef enum em_lstsq_driver { EM_LSTSQ_GELS, EM_LSTSQ_GELSY, EM_LSTSQ_GELSD, EM_LSTSQ_GELSS } em_lstsq_driver;
/* The least-squares solution X (..., n, k) of A (..., m, n) X = B (..., m, k)
 * (batch dims broadcast) by the LAPACK driver: gels (QR; full rank
 * assumed), gelsy (pivoted QR), gelsd (SVD, divide and conquer), gelss (SVD).
 * residuals (..., k): the squared norms of the rows of the transformed B past
 * n (meaningful for m > n and full rank); rank (...) int64, from gelsy,
 * gelsd, gelss (for gels: LAPACK's info, > 0 if A is rank deficient);
 * sv (..., min(m, n)): singular values from gelsd and gelss, else zeros.
 * rcond: singular values below rcond * the largest count as zero. */
em_status em_linalg_lstsq(const em_tensor *A, const em_tensor *B, double rcond, em_lstsq_driver driver,
                          em_tensor **X, em_tensor **residuals, em_tensor **rank, em_tensor **sv);

/* LDL^T with Bunch-Kaufman pivoting (LAPACK's sytrf) of the symmetric A
 * (..., n, n), read from its lower triangle: LD (..., n, n) holds L (unit
 * lower, below the diagonal) and the 1x1 and 2x2 blocks of D, its upper
 * triangle zeroed; pivots (..., n) int32 as LAPACK's ipiv (negative for 2x2
 * blocks); info (...) int32, > 0 when D is singular. ldl_solve solves A X = B
 * (..., n, k) from them (sytrs); its batch dims broadcast.
 * hermitian: A is Hermitian, A = L D L^H (hetrf, hetrs; no change for a
 * real A), else symmetric, A = L D L^T (sytrf, sytrs). */
em_status em_linalg_ldl_factor_ex(const em_tensor *A, bool hermitian, em_tensor **LD, em_tensor **pivots,
                                  em_tensor **info);
em_tensor *em_linalg_ldl_solve(const em_tensor *LD, const em_tensor *pivots, const em_tensor *B, bool hermitian);

#ifdef __cplusplus
}
#endif
#endif
