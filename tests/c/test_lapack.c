/* The LAPACK-backed factorizations (include/ember/lapack.h): values on small
 * matrices known by hand, batches, info for singular inputs, errors, and
 * float64 gradchecks of each differentiable one. PyTorch comparisons are
 * tests/python/test_linalg_lapack.py's. */
#include "test.h"
#include <math.h>
#include <stdlib.h>

static em_tensor *mat(em_dtype dt, int64_t m, int64_t n, const double *v)
{
    return tt(dt, 2, (const int64_t[]){m, n}, v);
}

TEST(lapack_lu_and_permutation)
{
    /* A = [[0, 1], [2, 3]]: rows swap, L = [[1, 0], [0, 1]], U = [[2, 3], [0, 1]] */
    em_tensor *A = mat(EM_F64, 2, 2, (const double[]){0, 1, 2, 3}), *LU, *piv, *info;
    CHECK(em_linalg_lu_factor_ex(A, &LU, &piv, &info) == EM_OK);
    CHECK(tclose(LU, (const double[]){2, 3, 0, 1}, 0, 1e-12));
    CHECK(tval(piv, 0) == 2 && tval(piv, 1) == 2 && tval(info, 0) == 0);
    em_tensor *P = em_lu_pivots_to_permutation(piv, 2, EM_F64);
    CHECK(P && tclose(P, (const double[]){0, 1, 1, 0}, 0, 0));
    /* singular: info names the zero of U, no error */
    em_tensor *S = mat(EM_F32, 2, 2, (const double[]){1, 2, 2, 4}), *LU2, *piv2, *info2;
    CHECK(em_linalg_lu_factor_ex(S, &LU2, &piv2, &info2) == EM_OK && tval(info2, 0) == 2);
    CHECK_ERR(em_lu_pivots_to_permutation(piv, 1, EM_F64), EM_ERR_SHAPE);
    RELEASE(A, LU, piv, info, P, S, LU2, piv2, info2);
    COVER(EM_OP_linalg_lu_factor_ex, EM_OP_lu_pivots_to_permutation);
}

TEST(lapack_solve_triangular_and_cholesky)
{
    em_tensor *A = mat(EM_F64, 2, 2, (const double[]){4, 2, 2, 3}), *L, *info;
    CHECK(em_linalg_cholesky_ex(A, false, &L, &info) == EM_OK);
    CHECK(tclose(L, (const double[]){2, 0, 1, sqrt(2)}, 0, 1e-12) && tval(info, 0) == 0);
    em_tensor *U, *info_u;
    CHECK(em_linalg_cholesky_ex(A, true, &U, &info_u) == EM_OK);
    CHECK(tclose(U, (const double[]){2, 1, 0, sqrt(2)}, 0, 1e-12));
    /* L x = b, then x L = b (right), then with a unit diagonal */
    em_tensor *b = mat(EM_F64, 2, 1, (const double[]){2, 3});
    em_tensor *x = em_linalg_solve_triangular(L, b, false, true, false);
    CHECK(x && tclose(x, (const double[]){1, 2 / sqrt(2)}, 0, 1e-12));
    em_tensor *row = mat(EM_F64, 1, 2, (const double[]){3, sqrt(2)});
    em_tensor *xr = em_linalg_solve_triangular(L, row, false, false, false);
    CHECK(xr && tclose(xr, (const double[]){1, 1}, 0, 1e-12));
    em_tensor *xu = em_linalg_solve_triangular(L, b, false, true, true);
    CHECK(xu && tclose(xu, (const double[]){2, 1}, 0, 1e-12));
    /* not positive-definite: info, no error */
    em_tensor *N = mat(EM_F64, 2, 2, (const double[]){1, 2, 2, 1}), *LN, *infoN;
    CHECK(em_linalg_cholesky_ex(N, false, &LN, &infoN) == EM_OK && tval(infoN, 0) == 2);
    em_tensor *bad = mat(EM_F64, 3, 1, (const double[]){1, 2, 3});
    CHECK_ERR(em_linalg_solve_triangular(L, bad, false, true, false), EM_ERR_SHAPE);
    RELEASE(A, L, info, U, info_u, b, x, row, xr, xu, N, LN, infoN, bad);
    COVER(EM_OP_linalg_cholesky_ex, EM_OP_linalg_solve_triangular);
}

TEST(lapack_qr_householder)
{
    em_tensor *A = trand(EM_F64, 3, (const int64_t[]){2, 4, 3}, -1, 1), *Q, *R;
    CHECK(em_linalg_qr(A, EM_QR_REDUCED, &Q, &R) == EM_OK);
    CHECK(tshape_is(Q, 3, (const int64_t[]){2, 4, 3}) && tshape_is(R, 3, (const int64_t[]){2, 3, 3}));
    em_tensor *QR = em_matmul(Q, R);
    double *a_vals = tvals(A), *q_vals = tvals(Q);
    CHECK(tclose(QR, a_vals, 1e-12, 1e-12));
    /* geqrf then householder_product gives the same Q */
    em_tensor *a, *tau;
    CHECK(em_geqrf(A, &a, &tau) == EM_OK && tshape_is(tau, 2, (const int64_t[]){2, 3}));
    em_tensor *H = em_linalg_householder_product(a, tau);
    CHECK(H && tclose(H, q_vals, 1e-12, 1e-12));
    free(a_vals);
    free(q_vals);
    em_tensor *Qc, *Rc, *Qr, *Rr;
    CHECK(em_linalg_qr(A, EM_QR_COMPLETE, &Qc, &Rc) == EM_OK && tshape_is(Qc, 3, (const int64_t[]){2, 4, 4}));
    CHECK(em_linalg_qr(A, EM_QR_R, &Qr, &Rr) == EM_OK && em_numel(Qr) == 0);
    CHECK_ERR(em_linalg_householder_product(tau, tau), EM_ERR_SHAPE);
    RELEASE(A, Q, R, QR, a, tau, H, Qc, Rc, Qr, Rr);
    COVER(EM_OP_linalg_qr, EM_OP_geqrf, EM_OP_linalg_householder_product);
}

TEST(lapack_svd_eigh_lstsq)
{
    em_tensor *A = mat(EM_F32, 2, 3, (const double[]){3, 0, 0, 0, 0, -2}), *U, *S, *Vh, *info;
    CHECK(em_linalg_svd(A, false, true, &U, &S, &Vh, &info) == EM_OK);
    CHECK(tclose(S, (const double[]){3, 2}, 1e-6, 1e-6) && tshape_is(Vh, 2, (const int64_t[]){2, 3}));
    em_tensor *U2, *S2, *V2, *info2;
    CHECK(em_linalg_svd(A, true, false, &U2, &S2, &V2, &info2) == EM_OK && em_numel(U2) == 0);
    em_tensor *B = mat(EM_F64, 2, 2, (const double[]){2, 1, 1, 2}), *L, *Q, *einfo;
    CHECK(em_linalg_eigh(B, false, true, &L, &Q, &einfo) == EM_OK && tclose(L, (const double[]){1, 3}, 0, 1e-12));
    /* A x = b exactly solvable: x = (1, 2) for every driver */
    em_tensor *M = mat(EM_F64, 3, 2, (const double[]){1, 0, 0, 1, 1, 1});
    em_tensor *b = mat(EM_F64, 3, 1, (const double[]){1, 2, 3});
    for (int d = EM_LSTSQ_GELS; d <= EM_LSTSQ_GELSS; d++) {
        em_tensor *x, *res, *rank, *sv;
        CHECK(em_linalg_lstsq(M, b, 1e-12, (em_lstsq_driver)d, &x, &res, &rank, &sv) == EM_OK);
        CHECK_MSG(tclose(x, (const double[]){1, 2}, 1e-10, 1e-10), "driver %d", d);
        RELEASE(x, res, rank, sv);
    }
    em_tensor *i = tt(EM_I64, 2, (const int64_t[]){2, 2}, (const double[]){1, 0, 0, 1}), *r1, *r2, *r3, *r4;
    CHECK_ERR(em_linalg_svd(i, false, true, &r1, &r2, &r3, &r4), EM_ERR_DTYPE);
    CHECK_ERR(em_linalg_eigh(A, false, true, &r1, &r2, &r3), EM_ERR_SHAPE);
    CHECK(r1 == NULL && r2 == NULL);
    /* LDL^T of [[2, 1], [1, 2]]: no pivoting, L = [[1, 0], [1/2, 1]], D = diag(2, 3/2); then A x = (3, 3) */
    em_tensor *LD, *lpiv, *linfo;
    CHECK(em_linalg_ldl_factor_ex(B, false, &LD, &lpiv, &linfo) == EM_OK);
    CHECK(tclose(LD, (const double[]){2, 0, 0.5, 1.5}, 0, 1e-12));
    em_tensor *rhs = mat(EM_F64, 2, 1, (const double[]){3, 3}), *x = em_linalg_ldl_solve(LD, lpiv, rhs, false);
    CHECK(x && tclose(x, (const double[]){1, 1}, 0, 1e-12));
    em_tensor *badpiv = tt(EM_I32, 1, (const int64_t[]){2}, (const double[]){1, 7});
    CHECK_ERR(em_linalg_ldl_solve(LD, badpiv, rhs, false), EM_ERR_RUNTIME);
    RELEASE(A, U, S, Vh, info, U2, S2, V2, info2, B, L, Q, einfo, M, b, i, LD, lpiv, linfo, rhs, x, badpiv);
    COVER(EM_OP_linalg_svd, EM_OP_linalg_eigh, EM_OP_linalg_lstsq, EM_OP_linalg_ldl_factor_ex, EM_OP_linalg_ldl_solve);
}

/* ---- gradchecks: inputs made well-conditioned (A + 3I), symmetric, or positive-definite */
static em_tensor *shifted(const em_tensor *A)
{
    const int64_t n = em_size(A, -1);
    em_tensor *eye = em_eye(n, n, EM_F64), *three = em_scalar_float(3);
    em_tensor *s = em_mul(eye, three), *r = em_add(A, s, 1);
    RELEASE(eye, three, s);
    return r;
}
static em_tensor *symmetric(const em_tensor *A)
{
    em_tensor *t = em_transpose(A, -2, -1), *r = em_add(A, t, 1);
    em_release(t);
    return r;
}
/* output k of a multi-output op, squared when `square` (sign-free vectors) */
static em_tensor *pick(em_tensor **outs, int n, int k, bool square)
{
    em_tensor *r = square ? em_mul(outs[k], outs[k]) : em_retain(outs[k]);
    for (int i = 0; i < n; i++) em_release(outs[i]);
    return r;
}

static em_tensor *f_lu(em_tensor *const *in, const void *c)
{
    em_tensor *A = shifted(in[0]), *o[3] = {0};
    em_linalg_lu_factor_ex(A, &o[0], &o[1], &o[2]);
    em_release(A);
    return o[0] ? pick(o, 3, 0, false) : NULL;
}
static em_tensor *f_trsv(em_tensor *const *in, const void *c)
{
    const int *mode = c; /* upper, left, unit */
    em_tensor *A = shifted(in[0]), *r = em_linalg_solve_triangular(A, in[1], mode[0], mode[1], mode[2]);
    em_release(A);
    return r;
}
static em_tensor *f_cholesky(em_tensor *const *in, const void *c)
{
    em_tensor *t = em_transpose(in[0], -2, -1), *AAt = em_matmul(in[0], t), *A = shifted(AAt), *o[2] = {0};
    em_linalg_cholesky_ex(A, *(const int *)c, &o[0], &o[1]);
    RELEASE(t, AAt, A);
    return o[0] ? pick(o, 2, 0, false) : NULL;
}
static em_tensor *f_qr(em_tensor *const *in, const void *c)
{
    em_tensor *o[2] = {0};
    em_linalg_qr(in[0], EM_QR_REDUCED, &o[0], &o[1]);
    return o[0] ? pick(o, 2, *(const int *)c, false) : NULL;
}
static em_tensor *f_svd(em_tensor *const *in, const void *c)
{
    em_tensor *o[4] = {0};
    em_linalg_svd(in[0], false, true, &o[0], &o[1], &o[2], &o[3]);
    int k = *(const int *)c;
    return o[0] ? pick(o, 4, k, k != 1) : NULL;
}
static em_tensor *f_eigh(em_tensor *const *in, const void *c)
{
    em_tensor *A = symmetric(in[0]), *o[3] = {0};
    em_linalg_eigh(A, false, true, &o[0], &o[1], &o[2]);
    em_release(A);
    int k = *(const int *)c;
    return o[0] ? pick(o, 3, k, k == 1) : NULL;
}

TEST(gradcheck_lapack)
{
    static const int zero = 0, one = 1, two = 2, lower_left[3] = {0, 1, 0}, upper_right_unit[3] = {1, 0, 1};
    const struct {
        const char *name;
        fn_t f;
        const void *ctx;
        int nin, ndim;
        int64_t sizes[2][3];
    } cases[] = {
        {"lu_factor", f_lu, NULL, 1, 3, {{2, 3, 3}}},
        {"solve_triangular lower left", f_trsv, lower_left, 2, 3, {{2, 3, 3}, {2, 3, 2}}},
        {"solve_triangular upper right unit", f_trsv, upper_right_unit, 2, 2, {{3, 3}, {2, 3}}},
        {"cholesky", f_cholesky, &zero, 1, 3, {{2, 3, 3}}},
        {"cholesky upper", f_cholesky, &one, 1, 2, {{3, 3}}},
        {"qr Q tall", f_qr, &zero, 1, 2, {{4, 3}}},
        {"qr R wide", f_qr, &one, 1, 2, {{2, 4}}},
        {"qr Q wide", f_qr, &zero, 1, 2, {{2, 4}}},
        {"svd S", f_svd, &one, 1, 2, {{4, 3}}},
        {"svd U", f_svd, &zero, 1, 2, {{4, 3}}},
        {"svd Vh wide", f_svd, &two, 1, 3, {{2, 2, 4}}},
        {"eigh values", f_eigh, &zero, 1, 2, {{3, 3}}},
        {"eigh vectors", f_eigh, &one, 1, 3, {{2, 3, 3}}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        em_tensor *in[2] = {NULL, NULL};
        for (int i = 0; i < cases[k].nin; i++) in[i] = leaf(cases[k].ndim, cases[k].sizes[i], -1, 1);
        bool ok = gradcheck(cases[k].name, cases[k].f, cases[k].nin, in, cases[k].ctx);
        RELEASE(in[0], in[1]);
        CHECK_MSG(ok, "%s", cases[k].name);
    }
    GRAD_COVER(EM_OP_linalg_lu_factor_ex, EM_OP_linalg_solve_triangular, EM_OP_linalg_cholesky_ex, EM_OP_linalg_qr,
               EM_OP_linalg_svd, EM_OP_linalg_eigh);
}

/* ---- complex: each factorization checked by rebuilding its input (PyTorch
 * comparisons are tests/python/test_linalg_complex.py's) ------------------- */
static em_tensor *crand_mat(em_dtype dt, int64_t b, int64_t m, int64_t n)
{
    em_tensor *parts = trand(em_dtype_to_real(dt), 4, (const int64_t[]){b, m, n, 2}, -1, 1);
    em_tensor *z = em_view_as_complex(parts), *r = em_contiguous(z);
    RELEASE(parts, z);
    return r;
}

static em_tensor *adjoint(const em_tensor *t)
{
    em_tensor *tr = em_transpose(t, -2, -1), *r = em_conj_physical(tr);
    em_release(tr);
    return r;
}

/* max of |re| and |im| of x - y (x, y complex of the same shape) */
static double cmaxdiff(const em_tensor *x, const em_tensor *y)
{
    em_tensor *d = em_sub(x, y, 1), *parts = d ? em_view_as_real(d) : NULL, *a = parts ? em_abs(parts) : NULL;
    em_tensor *m = a ? em_max(a) : NULL;
    double v = INFINITY;
    if (!m || em_item(m, &v)) v = INFINITY;
    RELEASE(d, parts, a, m);
    return v;
}

static void lapack_complex_one(em_dtype dt)
{
    const double tol = dt == EM_C64 ? 1e-4 : 1e-10;
    em_tensor *A = crand_mat(dt, 2, 3, 3), *B = crand_mat(dt, 2, 3, 2), *eye = em_eye(3, 3, em_dtype_to_real(dt));
    em_tensor *Ah = adjoint(A), *AAh = em_matmul(A, Ah), *H = em_add(AAh, eye, 1); /* Hermitian positive-definite */
    double worst = 0;
#define KEEP(x) worst = fmax(worst, (x))
    /* solve, lu_solve (adjoint) */
    em_tensor *X, *LU, *piv, *info;
    CHECK(em_linalg_solve_ex(A, B, &X, &LU, &piv, &info) == EM_OK);
    em_tensor *AX = em_matmul(A, X);
    KEEP(cmaxdiff(AX, B));
    em_tensor *LU2, *piv2, *info2;
    CHECK(em_linalg_lu_factor_ex(A, &LU2, &piv2, &info2) == EM_OK);
    em_tensor *Xa = em_linalg_lu_solve(LU2, piv2, B, true), *AhX = em_matmul(Ah, Xa);
    KEEP(cmaxdiff(AhX, B));
    /* cholesky: L L^H = H; ldl (Hermitian) solve */
    em_tensor *L, *cinfo;
    CHECK(em_linalg_cholesky_ex(H, false, &L, &cinfo) == EM_OK);
    em_tensor *Lh = adjoint(L), *LLh = em_matmul(L, Lh);
    KEEP(cmaxdiff(LLh, H));
    em_tensor *LD, *lpiv, *linfo;
    CHECK(em_linalg_ldl_factor_ex(H, true, &LD, &lpiv, &linfo) == EM_OK);
    em_tensor *Xl = em_linalg_ldl_solve(LD, lpiv, B, true), *HXl = em_matmul(H, Xl);
    KEEP(cmaxdiff(HXl, B));
    /* qr and ormqr: Q R = A, Q^H (Q R) = R */
    em_tensor *Q, *R;
    CHECK(em_linalg_qr(A, EM_QR_REDUCED, &Q, &R) == EM_OK);
    em_tensor *QR = em_matmul(Q, R);
    KEEP(cmaxdiff(QR, A));
    em_tensor *a, *tau;
    CHECK(em_geqrf(A, &a, &tau) == EM_OK);
    em_tensor *QhA = em_ormqr(a, tau, A, true, true), *Rt = em_triu(QhA, 0);
    KEEP(cmaxdiff(QhA, Rt));
    /* svd: U diag(S) Vh = A; eigh: Q diag(W) Q^H = H; eig: A V = V diag(w) */
    em_tensor *U, *S, *Vh, *sinfo;
    CHECK(em_linalg_svd(A, false, true, &U, &S, &Vh, &sinfo) == EM_OK);
    CHECK(em_dtype_of(S) == em_dtype_to_real(dt));
    em_tensor *S2 = em_unsqueeze(S, -2), *US = em_mul(U, S2), *USV = em_matmul(US, Vh);
    KEEP(cmaxdiff(USV, A));
    em_tensor *W, *Qe, *einfo;
    CHECK(em_linalg_eigh(H, false, true, &W, &Qe, &einfo) == EM_OK);
    em_tensor *W2 = em_unsqueeze(W, -2), *QW = em_mul(Qe, W2), *Qeh = adjoint(Qe), *QWQ = em_matmul(QW, Qeh);
    KEEP(cmaxdiff(QWQ, H));
    em_tensor *w, *V, *ginfo;
    CHECK(em_linalg_eig(A, true, &w, &V, &ginfo) == EM_OK);
    em_tensor *AV = em_matmul(A, V), *w2 = em_unsqueeze(w, -2), *Vw = em_mul(V, w2);
    KEEP(cmaxdiff(AV, Vw));
    /* lstsq (gelsd): an exact tall system; triangular solve */
    em_tensor *T = crand_mat(dt, 2, 5, 3), *TX = em_matmul(T, X), *Xs, *res, *rank, *sv;
    CHECK(em_linalg_lstsq(T, TX, 1e-7, EM_LSTSQ_GELSD, &Xs, &res, &rank, &sv) == EM_OK);
    KEEP(cmaxdiff(Xs, X));
    em_tensor *Xt = em_linalg_solve_triangular(R, B, true, true, false), *RXt = em_matmul(R, Xt);
    KEEP(cmaxdiff(RXt, B));
#undef KEEP
    RELEASE(A, B, eye, AAh, H, X, LU, piv, info, AX, LU2, piv2, info2, Xa, Ah, AhX, L, cinfo, Lh, LLh, LD, lpiv, linfo,
            Xl, HXl, Q, R, QR, a, tau, QhA, Rt, U, S, Vh, sinfo, S2, US, USV, W, Qe, einfo, W2, QW, Qeh, QWQ, w, V,
            ginfo, AV, w2, Vw, T, TX, Xs, res, rank, sv, Xt, RXt);
    CHECK(worst < tol);
}

TEST(lapack_complex)
{
    lapack_complex_one(EM_C64);
    lapack_complex_one(EM_C128);
}
