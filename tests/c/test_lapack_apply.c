/* The LAPACK kernels added for PyTorch's calls: lu_solve (getrs), ormqr and
 * eig (geev), on matrices known by hand, with their errors. PyTorch
 * comparisons are tests/python/test_linalg_grads.py's and test_linalg_lapack.py's. */
#include "test.h"
#include <math.h>

static em_tensor *mat(em_dtype dt, int64_t m, int64_t n, const double *v)
{
    return tt(dt, 2, (const int64_t[]){m, n}, v);
}

TEST(lapack_lu_solve_getrs)
{
    /* A = [[0, 1], [2, 3]]: A x = [1, 5] and A^T x = [2, 4] both have x = [1, 1] */
    em_tensor *A = mat(EM_F64, 2, 2, (const double[]){0, 1, 2, 3}), *LU, *piv, *info;
    CHECK(em_linalg_lu_factor_ex(A, &LU, &piv, &info) == EM_OK);
    em_tensor *b = mat(EM_F64, 2, 1, (const double[]){1, 5}), *bt = mat(EM_F64, 2, 1, (const double[]){2, 4});
    em_tensor *x = em_linalg_lu_solve(LU, piv, b, false), *xt = em_linalg_lu_solve(LU, piv, bt, true);
    CHECK(x && tclose(x, (const double[]){1, 1}, 0, 1e-12));
    CHECK(xt && tclose(xt, (const double[]){1, 1}, 0, 1e-12));
    em_tensor *bad = tt(EM_I32, 1, (const int64_t[]){2}, (const double[]){1, 3});
    CHECK_ERR(em_linalg_lu_solve(LU, bad, b, false), EM_ERR_RUNTIME);
    em_tensor *b3 = mat(EM_F64, 3, 1, (const double[]){1, 2, 3});
    CHECK_ERR(em_linalg_lu_solve(LU, piv, b3, false), EM_ERR_SHAPE);
    RELEASE(A, LU, piv, info, b, bt, x, xt, bad, b3);
    COVER(EM_OP_linalg_lu_solve);
}

TEST(lapack_ormqr)
{
    /* one reflector v = [1, 1], tau = 1: H = I - v v^T = [[0, -1], [-1, 0]] on either side */
    em_tensor *a = mat(EM_F32, 2, 2, (const double[]){7, 9, 1, 9}), *tau = tt(EM_F32, 1, (const int64_t[]){1},
                                                                              (const double[]){1});
    em_tensor *C = mat(EM_F32, 2, 2, (const double[]){1, 2, 3, 4});
    em_tensor *L = em_ormqr(a, tau, C, true, false), *R = em_ormqr(a, tau, C, false, true);
    CHECK(L && tclose(L, (const double[]){-3, -4, -1, -2}, 0, 1e-6));
    CHECK(R && tclose(R, (const double[]){-2, -1, -4, -3}, 0, 1e-6));
    em_tensor *tau3 = tt(EM_F32, 1, (const int64_t[]){3}, (const double[]){1, 1, 1});
    CHECK_ERR(em_ormqr(a, tau3, C, true, false), EM_ERR_SHAPE);
    RELEASE(a, tau, C, L, R, tau3);
    COVER(EM_OP_ormqr);
}

TEST(lapack_eig_geev)
{
    /* a diagonal matrix: its diagonal and the identity; a rotation: +-i */
    em_tensor *D = mat(EM_F64, 2, 2, (const double[]){2, 0, 0, 3}), *L, *V, *info;
    CHECK(em_linalg_eig(D, true, &L, &V, &info) == EM_OK && tval(info, 0) == 0);
    CHECK(em_dtype_of(L) == EM_C128 && em_dtype_of(V) == EM_C128);
    em_tensor *Lr = em_view_as_real(L), *Vr = em_view_as_real(V);
    CHECK(Lr && tclose(Lr, (const double[]){2, 0, 3, 0}, 0, 1e-12));
    CHECK(Vr && tclose(Vr, (const double[]){1, 0, 0, 0, 0, 0, 1, 0}, 0, 1e-12));
    em_tensor *rot = mat(EM_F32, 2, 2, (const double[]){0, -1, 1, 0}), *L2, *V2, *info2;
    CHECK(em_linalg_eig(rot, false, &L2, &V2, &info2) == EM_OK && em_dtype_of(L2) == EM_C64);
    em_tensor *L2r = em_view_as_real(L2);
    CHECK(L2r && tclose(L2r, (const double[]){0, 1, 0, -1}, 0, 1e-6) && em_numel(V2) == 0);
    em_tensor *nan = mat(EM_F64, 2, 2, (const double[]){NAN, 0, 0, 1}), *L3, *V3, *info3;
    CHECK(em_linalg_eig(nan, true, &L3, &V3, &info3) == EM_OK && tval(info3, 0) == -1);
    em_tensor *wide = mat(EM_F64, 2, 3, (const double[]){1, 2, 3, 4, 5, 6}), *L4, *V4, *info4;
    CHECK(em_linalg_eig(wide, true, &L4, &V4, &info4) == EM_ERR_SHAPE && !L4 && !V4 && !info4);
    RELEASE(D, L, V, info, Lr, Vr, rot, L2, V2, info2, L2r, nan, L3, V3, info3, wide);
    COVER(EM_OP_linalg_eig);
}
