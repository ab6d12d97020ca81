/* Linear solves from LU (include/ember/lapack.h: solve_ex, lu_solve) and the
 * LAPACK batch split over the thread pool (Note [LAPACK threads]): values
 * known by hand, broadcasting, info for singular inputs, errors, the
 * float64 gradcheck and gradgradcheck of solve, and a batch computed on
 * several threads equal to the one computed on one. */
#include "test.h"
#include <math.h>
#include <stdlib.h>

static em_tensor *mat(em_dtype dt, int64_t m, int64_t n, const double *v)
{
    return tt(dt, 2, (const int64_t[]){m, n}, v);
}

TEST(lapack_solve_and_lu_solve)
{
    /* A = [[0, 1], [2, 3]], b = (1, 5): x = (1, 1) */
    em_tensor *A = mat(EM_F64, 2, 2, (const double[]){0, 1, 2, 3}), *b = mat(EM_F64, 2, 1, (const double[]){1, 5});
    em_tensor *X, *LU, *piv, *info;
    CHECK(em_linalg_solve_ex(A, b, &X, &LU, &piv, &info) == EM_OK);
    CHECK(tclose(X, (const double[]){1, 1}, 0, 1e-12) && tval(info, 0) == 0);
    /* LU is A^T's: lu_solve with it solves A^T y = c (not adjoint) and A x = b (adjoint) */
    em_tensor *c = mat(EM_F64, 2, 1, (const double[]){2, 2}); /* A^T y = c: y = (-1, 1) */
    em_tensor *y = em_linalg_lu_solve(LU, piv, c, false), *x2 = em_linalg_lu_solve(LU, piv, b, true);
    CHECK(y && tclose(y, (const double[]){-1, 1}, 0, 1e-12) && x2 && tclose(x2, (const double[]){1, 1}, 0, 1e-12));
    /* lu_factor's LU of A itself */
    em_tensor *LUa, *piva, *infoa;
    CHECK(em_linalg_lu_factor_ex(A, &LUa, &piva, &infoa) == EM_OK);
    em_tensor *x3 = em_linalg_lu_solve(LUa, piva, b, false);
    CHECK(x3 && tclose(x3, (const double[]){1, 1}, 0, 1e-12));
    /* B's batch broadcasts against A's: (3, 2, 2) rhs for one A, several columns */
    em_tensor *B = tt(EM_F64, 3, (const int64_t[]){3, 2, 2}, (const double[]){1, 0, 5, 0, 0, 1, 0, 5, 1, 1, 5, 5});
    em_tensor *XB, *LUB, *pivB, *infoB;
    CHECK(em_linalg_solve_ex(A, B, &XB, &LUB, &pivB, &infoB) == EM_OK);
    CHECK(tshape_is(XB, 3, (const int64_t[]){3, 2, 2}) && tshape_is(infoB, 1, (const int64_t[]){3}));
    CHECK(tclose(XB, (const double[]){1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1}, 0, 1e-12));
    /* singular: info > 0, no error */
    em_tensor *S = mat(EM_F32, 2, 2, (const double[]){1, 2, 2, 4}), *bs = mat(EM_F32, 2, 1, (const double[]){1, 1});
    em_tensor *XS, *LUS, *pivS, *infoS;
    CHECK(em_linalg_solve_ex(S, bs, &XS, &LUS, &pivS, &infoS) == EM_OK && tval(infoS, 0) > 0);
    /* errors: shapes, dtypes, pivots out of range */
    em_tensor *r[4], *b3 = mat(EM_F64, 3, 1, (const double[]){1, 2, 3});
    CHECK_ERR(em_linalg_solve_ex(A, b3, &r[0], &r[1], &r[2], &r[3]), EM_ERR_SHAPE);
    CHECK(r[0] == NULL && r[3] == NULL);
    CHECK_ERR(em_linalg_solve_ex(A, bs, &r[0], &r[1], &r[2], &r[3]), EM_ERR_DTYPE);
    em_tensor *badpiv = tt(EM_I32, 1, (const int64_t[]){2}, (const double[]){1, 3});
    CHECK_ERR(em_linalg_lu_solve(LUa, badpiv, b, false), EM_ERR_RUNTIME);
    CHECK_ERR(em_linalg_lu_solve(LUa, piva, b3, false), EM_ERR_SHAPE);
    RELEASE(A, b, X, LU, piv, info, c, y, x2, LUa, piva, infoa, x3, B, XB, LUB, pivB, infoB, S, bs, XS, LUS, pivS,
            infoS, b3, badpiv);
    COVER(EM_OP_linalg_solve_ex, EM_OP_linalg_lu_solve);
}

/* Every LAPACK op on a batch large enough to be split (Note [LAPACK threads])
 * gives the same results on 1 and 3 threads: each matrix is one LAPACK call
 * on one thread either way. */
static void run_all(const em_tensor *A, const em_tensor *S, em_tensor **r)
{
    em_tensor *piv, *info, *LU, *t[4];
    em_linalg_solve_ex(A, S, &r[0], &LU, &piv, &info);
    RELEASE(LU, piv, info);
    em_linalg_lu_factor_ex(A, &r[1], &piv, &info);
    RELEASE(piv, info);
    em_linalg_cholesky_ex(S, false, &r[2], &info);
    em_release(info);
    em_linalg_qr(A, EM_QR_REDUCED, &r[3], &t[0]);
    em_release(t[0]);
    em_linalg_svd(A, false, false, &t[0], &r[4], &t[1], &t[2]);
    RELEASE(t[0], t[1], t[2]);
    em_linalg_eigh(S, false, true, &t[0], &r[5], &info);
    RELEASE(t[0], info);
}

TEST(lapack_batch_threads)
{
    const int64_t sizes[3] = {64, 40, 40}; /* above the split for every op */
    em_tensor *A = trand(EM_F64, 3, sizes, -1, 1), *At = em_transpose(A, -2, -1), *AAt = em_matmul(A, At);
    em_tensor *eye = em_eye(40, 40, EM_F64), *forty = em_scalar_float(40), *shift = em_mul(eye, forty);
    em_tensor *S = em_add(AAt, shift, 1); /* positive-definite */
    const int saved = em_get_num_threads();
    em_tensor *one[6] = {0}, *many[6] = {0};
    em_set_num_threads(1);
    run_all(A, S, one);
    em_set_num_threads(3);
    run_all(A, S, many);
    em_set_num_threads(saved);
    for (int k = 0; k < 6; k++) {
        double *want = one[k] ? tvals(one[k]) : NULL;
        CHECK_MSG(want && many[k] && tclose(many[k], want, 0, 0), "result %d", k);
        free(want);
    }
    trelease_n(one, 6);
    trelease_n(many, 6);
    RELEASE(A, At, AAt, eye, forty, shift, S);
}

static em_tensor *f_solve(em_tensor *const *in, const void *c)
{
    const int64_t n = em_size(in[0], -1);
    em_tensor *eye = em_eye(n, n, EM_F64), *three = em_scalar_float(3), *s = em_mul(eye, three);
    em_tensor *A = em_add(in[0], s, 1), *o[4] = {0};
    em_linalg_solve_ex(A, in[1], &o[0], &o[1], &o[2], &o[3]);
    RELEASE(eye, three, s, A, o[1], o[2], o[3]);
    return o[0];
}

TEST(gradcheck_lapack_solve)
{
    const int64_t a[3] = {2, 3, 3}, b[2] = {3, 2}; /* B broadcast over A's batch */
    em_tensor *in[2] = {leaf(3, a, -1, 1), leaf(2, b, -1, 1)};
    CHECK(gradcheck("solve", f_solve, 2, in, NULL));
    CHECK(gradgradcheck("solve", f_solve, 2, in, NULL));
    RELEASE(in[0], in[1]);
    GRAD_COVER(EM_OP_linalg_solve_ex);
}
