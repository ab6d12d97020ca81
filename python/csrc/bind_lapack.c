/* The LAPACK-backed primitives (include/ember/lapack.h) as private functions
 * of ember._C; python/ember/_lapack.py builds torch.linalg on them. */
#include "emp.h"

/* A tuple of n results, or the error. */
static PyObject *results(em_status st, int n, em_tensor **r)
{
    return st ? emp_raise() : emp_wrap_tuple(n, r);
}

EMP_BIND(_linalg_lu_factor_ex, "_linalg_lu_factor_ex(Tensor A)")
{
    em_tensor *r[3];
    return results(em_linalg_lu_factor_ex(a->t[0], &r[0], &r[1], &r[2]), 3, r);
}
EMP_BIND(_linalg_solve_ex, "_linalg_solve_ex(Tensor A, Tensor B)")
{
    em_tensor *r[4];
    return results(em_linalg_solve_ex(a->t[0], a->t[1], &r[0], &r[1], &r[2], &r[3]), 4, r);
}
EMP_BIND(_linalg_lu_solve, "_linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, bool adjoint)")
{
    return emp_wrap(em_linalg_lu_solve(a->t[0], a->t[1], a->t[2], a->i[3]));
}
EMP_BIND(_lu_pivots_to_permutation, "_lu_pivots_to_permutation(Tensor pivots, int m, dtype dtype)")
{
    return emp_wrap(em_lu_pivots_to_permutation(a->t[0], a->i[1], (em_dtype)a->i[2]));
}
EMP_BIND(_linalg_solve_triangular,
         "_linalg_solve_triangular(Tensor A, Tensor B, bool upper, bool left, bool unitriangular)")
{
    return emp_wrap(em_linalg_solve_triangular(a->t[0], a->t[1], a->i[2], a->i[3], a->i[4]));
}
EMP_BIND(_linalg_cholesky_ex, "_linalg_cholesky_ex(Tensor A, bool upper)")
{
    em_tensor *r[2];
    return results(em_linalg_cholesky_ex(a->t[0], a->i[1], &r[0], &r[1]), 2, r);
}
EMP_BIND(_linalg_qr, "_linalg_qr(Tensor A, int mode)")
{
    em_tensor *r[2];
    return results(em_linalg_qr(a->t[0], (em_qr_mode)a->i[1], &r[0], &r[1]), 2, r);
}
EMP_BIND(_geqrf, "_geqrf(Tensor A)")
{
    em_tensor *r[2];
    return results(em_geqrf(a->t[0], &r[0], &r[1]), 2, r);
}
EMP_BIND(_linalg_householder_product, "_linalg_householder_product(Tensor A, Tensor tau)")
{
    return emp_wrap(em_linalg_householder_product(a->t[0], a->t[1]));
}
EMP_BIND(_ormqr, "_ormqr(Tensor input, Tensor tau, Tensor other, bool left, bool transpose)")
{
    return emp_wrap(em_ormqr(a->t[0], a->t[1], a->t[2], a->i[3], a->i[4]));
}
EMP_BIND(_linalg_eig, "_linalg_eig(Tensor A, bool compute_v)")
{
    em_tensor *r[3];
    return results(em_linalg_eig(a->t[0], a->i[1], &r[0], &r[1], &r[2]), 3, r);
}
EMP_BIND(_linalg_svd, "_linalg_svd(Tensor A, bool full_matrices, bool compute_uv)")
{
    em_tensor *r[4];
    return results(em_linalg_svd(a->t[0], a->i[1], a->i[2], &r[0], &r[1], &r[2], &r[3]), 4, r);
}
EMP_BIND(_linalg_eigh, "_linalg_eigh(Tensor A, bool upper, bool compute_v)")
{
    em_tensor *r[3];
    return results(em_linalg_eigh(a->t[0], a->i[1], a->i[2], &r[0], &r[1], &r[2]), 3, r);
}
EMP_BIND(_linalg_lstsq, "_linalg_lstsq(Tensor A, Tensor B, float rcond, int driver)")
{
    em_tensor *r[4];
    return results(em_linalg_lstsq(a->t[0], a->t[1], a->d[2], (em_lstsq_driver)a->i[3], &r[0], &r[1], &r[2], &r[3]),
                   4, r);
}

EMP_BIND(_linalg_ldl_factor_ex, "_linalg_ldl_factor_ex(Tensor A, bool hermitian)")
{
    em_tensor *r[3];
    return results(em_linalg_ldl_factor_ex(a->t[0], a->i[1], &r[0], &r[1], &r[2]), 3, r);
}
EMP_BIND(_linalg_ldl_solve, "_linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, bool hermitian)")
{
    return emp_wrap(em_linalg_ldl_solve(a->t[0], a->t[1], a->t[2], a->i[3]));
}

PyMethodDef emp_lapack_functions[] = {
    EMP_FUNCTION(_linalg_lu_factor_ex), EMP_FUNCTION(_lu_pivots_to_permutation), EMP_FUNCTION(_linalg_solve_triangular),
    EMP_FUNCTION(_linalg_cholesky_ex),  EMP_FUNCTION(_linalg_qr),                EMP_FUNCTION(_geqrf),
    EMP_FUNCTION(_linalg_householder_product), EMP_FUNCTION(_linalg_svd),        EMP_FUNCTION(_linalg_eigh),
    EMP_FUNCTION(_linalg_lstsq),        EMP_FUNCTION(_linalg_ldl_factor_ex), EMP_FUNCTION(_linalg_ldl_solve),
    EMP_FUNCTION(_ormqr),               EMP_FUNCTION(_linalg_lu_solve),      EMP_FUNCTION(_linalg_eig),
    EMP_FUNCTION(_linalg_solve_ex),
    {NULL},
};
