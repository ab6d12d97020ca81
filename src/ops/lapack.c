/* The op layer of the LAPACK-backed factorizations (include/ember/lapack.h):
 * PyTorch 1.13's argument checks and messages, result shapes, then one
 * dispatch per op on a contiguous input (the kernels' contract is at the top
 * of src/cpu/lapack.c). */
#include "dispatch.h"
#include "ember/lapack.h"

/* ---- checks --------------------------------------------------------------- */
/* A float32/float64/complex64/complex128 tensor of at least 2 dims (square ones when `square`);
 * `what` names it in the messages, as PyTorch's ("A", "input"). */
static em_status check_matrix(const em_tensor *A, const char *op, const char *what, bool square)
{
    if (A->ndim < 2)
        return em_fail(EM_ERR_SHAPE, "%s: The input tensor %s must have at least 2 dimensions.", op, what);
    if (A->dtype != EM_F32 && A->dtype != EM_F64 && A->dtype != EM_C64 && A->dtype != EM_C128)
        /* float16/bfloat16/complex32: LAPACK has no such routines */
        return em_fail(EM_ERR_DTYPE, em_dtype_is_float((em_dtype)A->dtype) || A->dtype == EM_C32
                                         ? "%s: Low precision dtypes not supported. Got %s"
                                         : "%s: Expected a floating point or complex tensor as input. Got %s",
                       op, em_dtype_scalar_name((em_dtype)A->dtype));
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
    if (square && m != n)
        return em_fail(EM_ERR_SHAPE, "%s: %s must be batches of square matrices, but they are %lld by %lld matrices",
                       op, what, (long long)m, (long long)n);
    if (m > INT32_MAX || n > INT32_MAX)
        return em_fail(EM_ERR_SHAPE, "%s: matrices of %lld by %lld are too large for LAPACK", op, (long long)m,
                       (long long)n);
    return EM_OK;
}

static em_status check_same_dtype(const em_tensor *A, const em_tensor *B, const char *op)
{
    if (A->dtype == B->dtype) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "%s: Expected A and B to have the same dtype, but found A of type %s and B of "
                   "type %s instead", op, em_dtype_scalar_name((em_dtype)A->dtype),
                   em_dtype_scalar_name((em_dtype)B->dtype));
}

/* Finds a pivot (1-based; never 0) outside [lo, hi], read on the host (Note
 * [Host reads]): 1 with it in *bad, 0 when all are in range, -1 with an
 * error when they cannot be read (meta). */
static int find_bad_pivot(const em_tensor *piv, int64_t lo, int64_t hi, int32_t *bad)
{
    em_tensor *h = em_host_tensor(piv);
    if (!h) return -1;
    const int32_t *p = (const int32_t *)em_tensor_data(h);
    int found = 0;
    for (int64_t i = 0, n = em_numel(h); i < n && !found; i++)
        if (p[i] == 0 || p[i] < lo || p[i] > hi) *bad = p[i], found = 1;
    em_release(h);
    return found;
}

/* ---- results -------------------------------------------------------------- */
/* A zero tensor of t's first `nbatch` dims followed by `nextra` sizes. */
static em_tensor *batch_zeros(const em_tensor *t, int nbatch, int nextra, int64_t e0, int64_t e1, em_dtype dt)
{
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, t->sizes, nbatch * sizeof *sizes);
    sizes[nbatch] = e0;
    sizes[nbatch + 1] = e1;
    return em_zeros(nbatch + nextra, sizes, dt);
}

/* A tensor of t's first `nbatch` dims followed by rows x cols, each matrix
 * column-major (PyTorch's strides for LAPACK's results), left for the
 * kernel to write in full. */
static em_tensor *batch_colmajor(const em_tensor *t, int nbatch, int64_t rows, int64_t cols, em_dtype dt)
{
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    memcpy(sizes, t->sizes, nbatch * sizeof *sizes);
    sizes[nbatch] = rows;
    sizes[nbatch + 1] = cols;
    strides[nbatch] = 1;
    strides[nbatch + 1] = rows > 1 ? rows : 1;
    for (int d = nbatch - 1, s = rows * cols; d >= 0; s *= sizes[d], d--) strides[d] = s > 1 ? s : 1;
    return em_empty_strided(nbatch + 2, sizes, strides, dt);
}

static int64_t batch_count(const em_tensor *t, int nbatch)
{
    return em_shape_numel(nbatch, t->sizes);
}

/* Results pointers set to NULL on entry, released on failure. */
static void results_init(int n, em_tensor **const *r)
{
    for (int k = 0; k < n; k++)
        if (r[k]) *r[k] = NULL;
}
static em_status results_drop(int n, em_tensor **const *r)
{
    for (int k = 0; k < n; k++)
        if (r[k]) {
            em_release(*r[k]);
            *r[k] = NULL;
        }
    return em_error_code();
}
#define RESULTS(...) (int)(sizeof((em_tensor **const[]){__VA_ARGS__}) / sizeof(em_tensor **)), \
                     (em_tensor **const[]){__VA_ARGS__}

/* Dispatches c (inputs in[0..nin) made contiguous here, outputs set) with
 * the batch of `batch` matrices of m x n; an empty batch or matrix runs no
 * kernel (the outputs keep their zeros) but still records the call. */
static em_status run(em_call *c, int64_t batch, int64_t m, int64_t n)
{
    const em_tensor *orig[EM_CALL_MAX_IN];
    memcpy(orig, c->in, sizeof orig);
    em_status st = EM_OK;
    for (int k = 0; k < c->nin; k++) {
        c->in[k] = em_contiguous(orig[k]);
        if (!c->in[k]) st = em_error_code();
    }
    c->i[0] = m && n ? batch : 0;
    c->i[1] = m;
    c->i[2] = n;
    for (int k = 0; k < c->nin + c->nout && !st; k++)
        c->operand_dtypes[k] = (int8_t)(k < c->nout ? c->out[k]->dtype : c->in[k - c->nout]->dtype);
    if (!st) st = em_dispatch(c);
    for (int k = 0; k < c->nin; k++) em_release((em_tensor *)c->in[k]);
    return st;
}

/* ---- LU ------------------------------------------------------------------- */
em_status em_linalg_lu_factor_ex(const em_tensor *A, em_tensor **LU, em_tensor **pivots, em_tensor **info)
{
    results_init(RESULTS(LU, pivots, info));
    if (EM_NULL(A) || EM_NULL(LU) || EM_NULL(pivots) || EM_NULL(info)) return em_error_code();
    if (check_matrix(A, "torch.lu_factor", "A", false)) return em_error_code();
    const int nb = A->ndim - 2;
    const int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n;
    *LU = batch_colmajor(A, nb, m, n, (em_dtype)A->dtype);
    *pivots = batch_zeros(A, nb, 1, k, 0, EM_I32);
    *info = batch_zeros(A, nb, 0, 0, 0, EM_I32);
    em_call c = {.op = EM_OP_linalg_lu_factor_ex, .nin = 1, .nout = 3, .dtype = (em_dtype)A->dtype,
                 .in = {A}, .out = {*LU, *pivots, *info}};
    if (!*LU || !*pivots || !*info || run(&c, batch_count(A, nb), m, n)) return results_drop(RESULTS(LU, pivots, info));
    return EM_OK;
}

em_tensor *em_lu_pivots_to_permutation(const em_tensor *pivots, int64_t m, em_dtype dtype)
{
    if (EM_NULL(pivots)) return NULL;
    if (pivots->dtype != EM_I32 || pivots->ndim < 1)
        return em_fail(EM_ERR_DTYPE, "lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                       "dtype. Note: this function is intended to be used with the output produced by "
                       "torch.linalg.lu_factor"), NULL;
    if (dtype != EM_F32 && dtype != EM_F64 && dtype != EM_C64 && dtype != EM_C128)
        return em_fail(EM_ERR_DTYPE, "lu_unpack: the permutation's dtype must be float32, float64, complex64 or "
                       "complex128"), NULL;
    const int nb = pivots->ndim - 1;
    const int64_t k = pivots->sizes[nb];
    if (m < k)
        return em_fail(EM_ERR_SHAPE, "lu_unpack: %lld pivots for matrices of %lld rows", (long long)k, (long long)m),
               NULL;
    em_tensor *piv = em_contiguous(pivots);
    if (!piv) return NULL;
    int32_t bad;
    int found = find_bad_pivot(piv, 1, m, &bad);
    if (found) {
        em_release(piv);
        return found < 0 ? NULL : em_error(EM_ERR_RUNTIME, "lu_unpack: pivot %d is out of range [1, %lld]", bad, (long long)m);
    }
    em_tensor *P = batch_zeros(pivots, nb, 2, m, m, dtype);
    em_call c = {.op = EM_OP_lu_pivots_to_permutation, .nin = 1, .nout = 1, .dtype = dtype, .in = {piv}, .out = {P}};
    c.i[3] = k;
    em_status st = P ? run(&c, batch_count(pivots, nb), m, m) : em_error_code();
    em_release(piv);
    if (st) em_release(P);
    return st ? NULL : P;
}

/* The broadcast batch dims of A (..., m, n) and B (..., p, q) into `batch`;
 * their count, or -1 (error set) when they do not broadcast. */
static int broadcast_batch(const em_tensor *A, const em_tensor *B, int64_t *batch)
{
    const int nb = (A->ndim > B->ndim ? A->ndim : B->ndim) - 2;
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - (A->ndim - 2)), db = d - (nb - (B->ndim - 2));
        int64_t x = da >= 0 ? A->sizes[da] : 1, y = db >= 0 ? B->sizes[db] : 1;
        if (x != y && x != 1 && y != 1)
            return em_fail(EM_ERR_SHAPE, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                           "non-singleton dimension %d", (long long)x, (long long)y, d), -1;
        batch[d] = x == 1 ? y : x;
    }
    return nb;
}

/* A at the batch dims `batch` (nb of them) with its own last two sizes. */
static em_tensor *expand_batch(const em_tensor *A, int nb, const int64_t *batch)
{
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, batch, nb * sizeof *sizes);
    sizes[nb] = A->sizes[A->ndim - 2];
    sizes[nb + 1] = A->sizes[A->ndim - 1];
    return em_expand(A, nb + 2, sizes);
}

/* ---- linear solves from LU ------------------------------------------------ */
static em_status check_solve_shapes(const em_tensor *B, int64_t n, const char *op)
{
    if (B->sizes[B->ndim - 2] == n) return EM_OK;
    return em_fail(EM_ERR_SHAPE, "%s: Incompatible shapes of A and B for the equation AX = B (%lldx%lld and "
                   "%lldx%lld)", op, (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                   (long long)B->sizes[B->ndim - 1]);
}

em_status em_linalg_solve_ex(const em_tensor *A, const em_tensor *B, em_tensor **X, em_tensor **LU,
                             em_tensor **pivots, em_tensor **info)
{
    static const char op[] = "linalg.solve";
    results_init(RESULTS(X, LU, pivots, info));
    if (EM_NULL(A) || EM_NULL(B) || EM_NULL(X) || EM_NULL(LU) || EM_NULL(pivots) || EM_NULL(info))
        return em_error_code();
    if (check_matrix(A, op, "A", true) || check_matrix(B, op, "B", false) || check_same_dtype(A, B, op))
        return em_error_code();
    const int64_t n = A->sizes[A->ndim - 1], nrhs = B->sizes[B->ndim - 1];
    int64_t batch[EM_MAX_DIMS];
    const int nb = check_solve_shapes(B, n, op) ? -1 : broadcast_batch(A, B, batch);
    if (nb < 0) return em_error_code();
    const em_dtype dt = (em_dtype)A->dtype;
    em_tensor *Ae = expand_batch(A, nb, batch), *Be = Ae ? expand_batch(B, nb, batch) : NULL;
    if (Be) {
        *X = batch_colmajor(Be, nb, n, nrhs, dt);
        *LU = batch_colmajor(Ae, nb, n, n, dt);
        *pivots = batch_zeros(Ae, nb, 1, n, 0, EM_I32);
        *info = batch_zeros(Ae, nb, 0, 0, 0, EM_I32);
    }
    em_call c = {.op = EM_OP_linalg_solve_ex, .nin = 2, .nout = 4, .dtype = dt, .in = {Ae, Be},
                 .out = {*X, *LU, *pivots, *info}};
    c.i[3] = nrhs;
    em_status st = Be && *X && *LU && *pivots && *info ? run(&c, em_shape_numel(nb, batch), n, n) : em_error_code();
    em_release(Ae);
    em_release(Be);
    return st ? results_drop(RESULTS(X, LU, pivots, info)) : EM_OK;
}

em_tensor *em_linalg_lu_solve(const em_tensor *LU, const em_tensor *pivots, const em_tensor *B, bool adjoint)
{
    static const char op[] = "linalg.lu_solve";
    if (EM_NULL(LU) || EM_NULL(pivots) || EM_NULL(B)) return NULL;
    if (check_matrix(LU, op, "LU", true) || check_matrix(B, op, "B", false) || check_same_dtype(LU, B, op))
        return NULL;
    const int64_t n = LU->sizes[LU->ndim - 1], nrhs = B->sizes[B->ndim - 1];
    if (pivots->dtype != EM_I32)
        return em_fail(EM_ERR_DTYPE, "%s: Expected pivots to be int32, but got %s", op,
                       em_dtype_scalar_name((em_dtype)pivots->dtype)), NULL;
    if (pivots->ndim != LU->ndim - 1 || pivots->sizes[pivots->ndim - 1] != n)
        return em_fail(EM_ERR_SHAPE, "%s: pivots must be an int32 tensor of shape LU.shape[:-1]", op), NULL;
    for (int d = 0; d < pivots->ndim - 1; d++)
        if (pivots->sizes[d] != LU->sizes[d])
            return em_fail(EM_ERR_SHAPE, "%s: pivots must be an int32 tensor of shape LU.shape[:-1]", op), NULL;
    int64_t batch[EM_MAX_DIMS];
    const int nb = check_solve_shapes(B, n, op) ? -1 : broadcast_batch(LU, B, batch);
    if (nb < 0) return NULL;
    /* LAPACK reads every pivot as a row index: check them (a bad one would read out of bounds) */
    em_tensor *piv = em_contiguous(pivots);
    if (!piv) return NULL;
    int32_t bad;
    int found = find_bad_pivot(piv, 1, n, &bad);
    if (found) {
        em_release(piv);
        return found < 0 ? NULL : em_error(EM_ERR_RUNTIME, "%s: pivot %d is out of range [1, %lld]", op, bad, (long long)n);
    }
    int64_t psizes[EM_MAX_DIMS];
    memcpy(psizes, batch, nb * sizeof *psizes);
    psizes[nb] = n;
    /* the kernel reads LU column-major: LU^T's row-major buffer (lu_factor's LU as it is) */
    em_tensor *LUt = em_transpose(LU, -2, -1), *F = LUt ? expand_batch(LUt, nb, batch) : NULL;
    em_tensor *Pe = F ? em_expand(piv, nb + 1, psizes) : NULL, *Be = Pe ? expand_batch(B, nb, batch) : NULL;
    em_tensor *X = Be ? batch_colmajor(Be, nb, n, nrhs, (em_dtype)LU->dtype) : NULL;
    em_call c = {.op = EM_OP_linalg_lu_solve, .nin = 3, .nout = 1, .dtype = (em_dtype)LU->dtype,
                 .in = {F, Pe, Be}, .out = {X}};
    c.i[3] = adjoint;
    em_status st = X ? run(&c, em_shape_numel(nb, batch), n, nrhs) : em_error_code();
    em_release(piv);
    em_release(LUt);
    em_release(F);
    em_release(Pe);
    em_release(Be);
    if (st) em_release(X);
    return st ? NULL : X;
}

/* ---- triangular solve ----------------------------------------------------- */
em_tensor *em_linalg_solve_triangular(const em_tensor *A, const em_tensor *B, bool upper, bool left,
                                      bool unitriangular)
{
    static const char op[] = "linalg.solve_triangular";
    if (EM_NULL(A) || EM_NULL(B)) return NULL;
    if (check_matrix(A, op, "A", true) || check_matrix(B, op, "B", false) || check_same_dtype(A, B, op)) return NULL;
    const int64_t n = A->sizes[A->ndim - 1];
    const int64_t bn = left ? B->sizes[B->ndim - 2] : B->sizes[B->ndim - 1];
    if (bn != n)
        return em_fail(EM_ERR_SHAPE, "%s: Incompatible shapes of A and B for the equation %s (%lldx%lld and %lldx%lld)",
                       op, left ? "AX = B" : "XA = B", (long long)n, (long long)n,
                       (long long)B->sizes[B->ndim - 2], (long long)B->sizes[B->ndim - 1]), NULL;
    /* broadcast the batch dims */
    const int nb = (A->ndim > B->ndim ? A->ndim : B->ndim) - 2;
    int64_t sa[EM_MAX_DIMS], sb[EM_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - (A->ndim - 2)), db = d - (nb - (B->ndim - 2));
        int64_t x = da >= 0 ? A->sizes[da] : 1, y = db >= 0 ? B->sizes[db] : 1;
        if (x != y && x != 1 && y != 1)
            return em_fail(EM_ERR_SHAPE, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                           "non-singleton dimension %d", (long long)x, (long long)y, d), NULL;
        sa[d] = sb[d] = x == 1 ? y : x;
    }
    sa[nb] = sa[nb + 1] = n;
    sb[nb] = B->sizes[B->ndim - 2];
    sb[nb + 1] = B->sizes[B->ndim - 1];
    em_tensor *Ae = em_expand(A, nb + 2, sa), *Be = Ae ? em_expand(B, nb + 2, sb) : NULL;
    em_tensor *X = Be ? em_zeros(nb + 2, sb, (em_dtype)A->dtype) : NULL;
    em_call c = {.op = EM_OP_linalg_solve_triangular, .nin = 2, .nout = 1, .dtype = (em_dtype)A->dtype,
                 .in = {Ae, Be}, .out = {X}};
    c.i[3] = n;
    c.i[4] = upper;
    c.i[5] = left;
    c.i[6] = unitriangular;
    em_status st = X ? run(&c, em_shape_numel(nb, sb), sb[nb], sb[nb + 1]) : em_error_code();
    em_release(Ae);
    em_release(Be);
    if (st) em_release(X);
    return st ? NULL : X;
}

/* ---- Cholesky ------------------------------------------------------------- */
em_status em_linalg_cholesky_ex(const em_tensor *A, bool upper, em_tensor **L, em_tensor **info)
{
    results_init(RESULTS(L, info));
    if (EM_NULL(A) || EM_NULL(L) || EM_NULL(info)) return em_error_code();
    if (check_matrix(A, "linalg.cholesky", "A", true)) return em_error_code();
    const int nb = A->ndim - 2;
    const int64_t n = A->sizes[nb];
    *L = batch_colmajor(A, nb, n, n, (em_dtype)A->dtype);
    *info = batch_zeros(A, nb, 0, 0, 0, EM_I32);
    em_call c = {.op = EM_OP_linalg_cholesky_ex, .nin = 1, .nout = 2, .dtype = (em_dtype)A->dtype, .in = {A},
                 .out = {*L, *info}};
    c.i[3] = upper;
    if (!*L || !*info || run(&c, batch_count(A, nb), n, n)) return results_drop(RESULTS(L, info));
    return EM_OK;
}

/* ---- QR ------------------------------------------------------------------- */
em_status em_linalg_qr(const em_tensor *A, em_qr_mode mode, em_tensor **Q, em_tensor **R)
{
    results_init(RESULTS(Q, R));
    if (EM_NULL(A) || EM_NULL(Q) || EM_NULL(R)) return em_error_code();
    if (check_matrix(A, "linalg.qr", "A", false)) return em_error_code();
    if (mode != EM_QR_REDUCED && mode != EM_QR_COMPLETE && mode != EM_QR_R)
        return em_fail(EM_ERR_VALUE, "qr received unrecognized mode %d but expected one of 'reduced' (default), "
                       "'r', or 'complete'", (int)mode);
    const int nb = A->ndim - 2;
    const int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n;
    const int64_t rrows = mode == EM_QR_COMPLETE ? m : k, qcols = mode == EM_QR_R ? 0 : mode == EM_QR_COMPLETE ? m : k;
    *Q = mode == EM_QR_R ? em_zeros(1, (int64_t[]){0}, (em_dtype)A->dtype)
                         : batch_colmajor(A, nb, m, qcols, (em_dtype)A->dtype);
    *R = batch_colmajor(A, nb, rrows, n, (em_dtype)A->dtype);
    if (!*Q || !*R) return results_drop(RESULTS(Q, R));
    /* an empty A still has Q = I in complete mode */
    if (mode == EM_QR_COMPLETE && n == 0 && m) {
        em_tensor *eye = em_eye(m, m, (em_dtype)A->dtype);
        em_status st = eye ? em_copy_(*Q, eye) : em_error_code();
        em_release(eye);
        if (st) return results_drop(RESULTS(Q, R));
    }
    em_call c = {.op = EM_OP_linalg_qr, .nin = 1, .nout = 2, .dtype = (em_dtype)A->dtype, .in = {A}, .out = {*Q, *R}};
    c.i[3] = rrows;
    c.i[4] = qcols;
    c.i[5] = mode;
    if (run(&c, batch_count(A, nb), m, n)) return results_drop(RESULTS(Q, R));
    return EM_OK;
}

em_status em_geqrf(const em_tensor *A, em_tensor **a, em_tensor **tau)
{
    results_init(RESULTS(a, tau));
    if (EM_NULL(A) || EM_NULL(a) || EM_NULL(tau)) return em_error_code();
    if (check_matrix(A, "geqrf", "input", false)) return em_error_code();
    const int nb = A->ndim - 2;
    const int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n;
    *a = batch_zeros(A, nb, 2, m, n, (em_dtype)A->dtype);
    *tau = batch_zeros(A, nb, 1, k, 0, (em_dtype)A->dtype);
    em_call c = {.op = EM_OP_geqrf, .nin = 1, .nout = 2, .dtype = (em_dtype)A->dtype, .in = {A}, .out = {*a, *tau}};
    if (!*a || !*tau || run(&c, batch_count(A, nb), m, n)) return results_drop(RESULTS(a, tau));
    return EM_OK;
}

em_tensor *em_linalg_householder_product(const em_tensor *A, const em_tensor *tau)
{
    static const char op[] = "torch.linalg.householder_product";
    if (EM_NULL(A) || EM_NULL(tau)) return NULL;
    if (check_matrix(A, op, "input", false) || check_same_dtype(A, tau, op)) return NULL;
    const int nb = A->ndim - 2;
    const int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = tau->ndim ? tau->sizes[tau->ndim - 1] : 0;
    if (m < n)
        return em_fail(EM_ERR_SHAPE, "%s: input.shape[-2] must be greater than or equal to input.shape[-1]", op), NULL;
    if (tau->ndim != A->ndim - 1)
        return em_fail(EM_ERR_SHAPE, "%s: input.dim() must be greater than or equal to 2 and tau.dim() must be "
                       "input.dim() - 1", op), NULL;
    if (k > n)
        return em_fail(EM_ERR_SHAPE, "%s: input.shape[-1] must be greater than or equal to tau.shape[-1]", op), NULL;
    for (int d = 0; d < nb; d++)
        if (tau->sizes[d] != A->sizes[d])
            return em_fail(EM_ERR_SHAPE, "%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
                           "got %s", op, em_shape_str(tau->ndim - 1, tau->sizes)), NULL;
    em_tensor *Q = batch_zeros(A, nb, 2, m, n, (em_dtype)A->dtype);
    em_call c = {.op = EM_OP_linalg_householder_product, .nin = 2, .nout = 1, .dtype = (em_dtype)A->dtype,
                 .in = {A, tau}, .out = {Q}};
    c.i[3] = k;
    em_status st = Q ? run(&c, batch_count(A, nb), m, n) : em_error_code();
    if (st) em_release(Q);
    return st ? NULL : Q;
}

em_tensor *em_ormqr(const em_tensor *input, const em_tensor *tau, const em_tensor *other, bool left, bool transpose)
{
    static const char op[] = "torch.ormqr";
    if (EM_NULL(input) || EM_NULL(tau) || EM_NULL(other)) return NULL;
    if (input->ndim < 2) return em_fail(EM_ERR_SHAPE, "%s: input must have at least 2 dimensions.", op), NULL;
    if (other->ndim < 2) return em_fail(EM_ERR_SHAPE, "%s: other must have at least 2 dimensions.", op), NULL;
    const int nb = input->ndim - 2, side = left ? -2 : -1;
    const int64_t mq = input->sizes[nb], nref = input->sizes[nb + 1], k = tau->ndim ? tau->sizes[tau->ndim - 1] : 0;
    const int64_t oside = other->sizes[other->ndim + side];
    if (oside < k)
        return em_fail(EM_ERR_SHAPE, "%s: other.shape[%d] must be greater than or equal to tau.shape[-1]", op, side),
               NULL;
    if (oside != mq)
        return em_fail(EM_ERR_SHAPE, "%s: other.shape[%d] must be equal to input.shape[-2]", op, side), NULL;
    if (k > nref)
        return em_fail(EM_ERR_SHAPE, "%s: tau.shape[-1] must be less than or equal to input.shape[-1]", op), NULL;
    if (tau->ndim != input->ndim - 1)
        return em_fail(EM_ERR_SHAPE, "%s: Expected tau to have one dimension less than input, but got tau.ndim equal "
                       "to %d and input.ndim is equal to %d", op, tau->ndim, input->ndim), NULL;
    if (other->ndim != input->ndim)
        return em_fail(EM_ERR_SHAPE, "%s: Expected other to have the same number of dimensions as input, but got "
                       "other.ndim equal to %d and input.ndim is equal to %d", op, other->ndim, input->ndim), NULL;
    for (int d = 0; d < nb; d++)
        if (tau->sizes[d] != input->sizes[d] || other->sizes[d] != input->sizes[d])
            return em_fail(EM_ERR_SHAPE, "%s: Expected batch dimensions of %s to be equal to input.shape[:-2], but "
                           "got %s", op, tau->sizes[d] != input->sizes[d] ? "tau" : "other",
                           tau->sizes[d] != input->sizes[d] ? em_shape_str(tau->ndim - 1, tau->sizes)
                                                            : em_shape_str(other->ndim - 2, other->sizes)), NULL;
    if (check_matrix(input, op, "input", false) || check_same_dtype(input, tau, op) ||
        check_same_dtype(input, other, op))
        return NULL;
    const int64_t rows = other->sizes[nb], cols = other->sizes[nb + 1];
    em_tensor *R = batch_zeros(other, nb, 2, rows, cols, (em_dtype)input->dtype);
    em_call c = {.op = EM_OP_ormqr, .nin = 3, .nout = 1, .dtype = (em_dtype)input->dtype, .in = {input, tau, other},
                 .out = {R}};
    c.i[3] = nref;
    c.i[4] = k;
    c.i[5] = left;
    c.i[6] = transpose;
    em_status st = R ? run(&c, batch_count(other, nb), rows, cols) : em_error_code();
    if (st) em_release(R);
    return st ? NULL : R;
}

/* ---- SVD and eigh --------------------------------------------------------- */
em_status em_linalg_svd(const em_tensor *A, bool full_matrices, bool compute_uv, em_tensor **U, em_tensor **S,
                        em_tensor **Vh, em_tensor **info)
{
    results_init(RESULTS(U, S, Vh, info));
    if (EM_NULL(A) || EM_NULL(U) || EM_NULL(S) || EM_NULL(Vh) || EM_NULL(info)) return em_error_code();
    if (check_matrix(A, "linalg.svd", "A", false)) return em_error_code();
    const int nb = A->ndim - 2;
    const int64_t m = A->sizes[nb], n = A->sizes[nb + 1], k = m < n ? m : n;
    const em_dtype dt = (em_dtype)A->dtype;
    if (compute_uv) {
        *U = batch_zeros(A, nb, 2, m, full_matrices ? m : k, dt);
        *Vh = batch_zeros(A, nb, 2, full_matrices ? n : k, n, dt);
    } else {
        *U = em_zeros(1, (int64_t[]){0}, dt);
        *Vh = em_zeros(1, (int64_t[]){0}, dt);
    }
    *S = batch_zeros(A, nb, 1, k, 0, em_dtype_to_real(dt)); /* real, also for a complex A */
    *info = batch_zeros(A, nb, 0, 0, 0, EM_I32);
    em_call c = {.op = EM_OP_linalg_svd, .nin = 1, .nout = 4, .dtype = dt, .in = {A}, .out = {*U, *S, *Vh, *info}};
    c.i[3] = full_matrices;
    c.i[4] = compute_uv;
    if (!*U || !*S || !*Vh || !*info || run(&c, batch_count(A, nb), m, n)) return results_drop(RESULTS(U, S, Vh, info));
    return EM_OK;
}

em_status em_linalg_eigh(const em_tensor *A, bool upper, bool compute_v, em_tensor **L, em_tensor **Q,
                         em_tensor **info)
{
    results_init(RESULTS(L, Q, info));
    if (EM_NULL(A) || EM_NULL(L) || EM_NULL(Q) || EM_NULL(info)) return em_error_code();
    if (check_matrix(A, "linalg.eigh", "A", true)) return em_error_code();
    const int nb = A->ndim - 2;
    const int64_t n = A->sizes[nb];
    const em_dtype dt = (em_dtype)A->dtype;
    *L = batch_zeros(A, nb, 1, n, 0, em_dtype_to_real(dt)); /* real, also for a complex A */
    *Q = compute_v ? batch_zeros(A, nb, 2, n, n, dt) : em_zeros(1, (int64_t[]){0}, dt);
    *info = batch_zeros(A, nb, 0, 0, 0, EM_I32);
    em_call c = {.op = EM_OP_linalg_eigh, .nin = 1, .nout = 3, .dtype = dt, .in = {A}, .out = {*L, *Q, *info}};
    c.i[3] = upper;
    c.i[4] = compute_v;
    if (!*L || !*Q || !*info || run(&c, batch_count(A, nb), n, n)) return results_drop(RESULTS(L, Q, info));
    return EM_OK;
}

/* For a real A the kernel writes (re, im) pairs into real tensors with a
 * last dim of 2; the results are their complex views. A complex A's results
 * are written as they are. */
em_status em_linalg_eig(const em_tensor *A, bool compute_v, em_tensor **L, em_tensor **V, em_tensor **info)
{
    results_init(RESULTS(L, V, info));
    if (EM_NULL(A) || EM_NULL(L) || EM_NULL(V) || EM_NULL(info)) return em_error_code();
    if (check_matrix(A, "linalg.eig", "A", true)) return em_error_code();
    const int nb = A->ndim - 2;
    if (A->ndim + 1 > EM_MAX_DIMS)
        return em_fail(EM_ERR_SHAPE, "linalg.eig: at most %d dims are supported", EM_MAX_DIMS - 1);
    const int64_t n = A->sizes[nb];
    const em_dtype dt = (em_dtype)A->dtype;
    if (em_dtype_is_complex(dt)) {
        *L = batch_zeros(A, nb, 1, n, 0, dt);
        *V = compute_v ? batch_zeros(A, nb, 2, n, n, dt) : em_zeros(1, (int64_t[]){0}, dt);
        *info = batch_zeros(A, nb, 0, 0, 0, EM_I32);
        em_call c = {.op = EM_OP_linalg_eig, .nin = 1, .nout = 3, .dtype = dt, .in = {A}, .out = {*L, *V, *info}};
        c.i[3] = compute_v;
        if (!*L || !*V || !*info || run(&c, batch_count(A, nb), n, n)) return results_drop(RESULTS(L, V, info));
        return EM_OK;
    }
    int64_t ws[EM_MAX_DIMS], vs[EM_MAX_DIMS];
    memcpy(ws, A->sizes, nb * sizeof *ws);
    memcpy(vs, A->sizes, nb * sizeof *vs);
    ws[nb] = n, ws[nb + 1] = 2;
    vs[nb] = n, vs[nb + 1] = n, vs[nb + 2] = 2;
    em_tensor *w = em_zeros(nb + 2, ws, dt), *v = compute_v ? em_zeros(nb + 3, vs, dt) : em_zeros(2, (int64_t[]){0, 2}, dt);
    *info = batch_zeros(A, nb, 0, 0, 0, EM_I32);
    em_call c = {.op = EM_OP_linalg_eig, .nin = 1, .nout = 3, .dtype = dt, .in = {A}, .out = {w, v, *info}};
    c.i[3] = compute_v;
    em_status st = w && v && *info ? run(&c, batch_count(A, nb), n, n) : em_error_code();
    if (!st) {
        *L = em_view_as_complex(w);
        *V = *L ? em_view_as_complex(v) : NULL;
        if (!*V) st = em_error_code();
    }
    em_release(w);
    em_release(v);
    return st ? results_drop(RESULTS(L, V, info)) : EM_OK;
}

/* ---- LDL ------------------------------------------------------------------ */
em_status em_linalg_ldl_factor_ex(const em_tensor *A, bool hermitian, em_tensor **LD, em_tensor **pivots,
                                  em_tensor **info)
{
    results_init(RESULTS(LD, pivots, info));
    if (EM_NULL(A) || EM_NULL(LD) || EM_NULL(pivots) || EM_NULL(info)) return em_error_code();
    if (check_matrix(A, "torch.linalg.ldl_factor_ex", "A", true)) return em_error_code();
    const int nb = A->ndim - 2;
    const int64_t n = A->sizes[nb];
    *LD = batch_zeros(A, nb, 2, n, n, (em_dtype)A->dtype);
    *pivots = batch_zeros(A, nb, 1, n, 0, EM_I32);
    *info = batch_zeros(A, nb, 0, 0, 0, EM_I32);
    em_call c = {.op = EM_OP_linalg_ldl_factor_ex, .nin = 1, .nout = 3, .dtype = (em_dtype)A->dtype, .in = {A},
                 .out = {*LD, *pivots, *info}};
    c.i[3] = hermitian;
    if (!*LD || !*pivots || !*info || run(&c, batch_count(A, nb), n, n)) return results_drop(RESULTS(LD, pivots, info));
    return EM_OK;
}

em_tensor *em_linalg_ldl_solve(const em_tensor *LD, const em_tensor *pivots, const em_tensor *B, bool hermitian)
{
    static const char op[] = "torch.linalg.ldl_solve";
    if (EM_NULL(LD) || EM_NULL(pivots) || EM_NULL(B)) return NULL;
    if (check_matrix(LD, op, "LD", true) || check_matrix(B, op, "B", false) || check_same_dtype(LD, B, op)) return NULL;
    const int nb = LD->ndim - 2;
    const int64_t n = LD->sizes[nb], nrhs = B->sizes[B->ndim - 1];
    if (pivots->dtype != EM_I32 || pivots->ndim != LD->ndim - 1 || pivots->sizes[nb] != n)
        return em_fail(EM_ERR_SHAPE, "%s: pivots must be an int32 tensor of shape LD.shape[:-1]", op), NULL;
    for (int d = 0; d < nb; d++)
        if (pivots->sizes[d] != LD->sizes[d])
            return em_fail(EM_ERR_SHAPE, "%s: pivots must be an int32 tensor of shape LD.shape[:-1]", op), NULL;
    if (B->sizes[B->ndim - 2] != n)
        return em_fail(EM_ERR_SHAPE, "%s: Incompatible shapes of A and B for the equation AX = B (%lldx%lld and "
                       "%lldx%lld)", op, (long long)n, (long long)n, (long long)B->sizes[B->ndim - 2],
                       (long long)nrhs), NULL;
    /* LAPACK reads every pivot as a row index: check them (a bad one would read out of bounds) */
    em_tensor *piv = em_contiguous(pivots);
    if (!piv) return NULL;
    int32_t bad;
    int found = find_bad_pivot(piv, -n, n, &bad);
    if (found) {
        em_release(piv);
        return found < 0 ? NULL : em_error(EM_ERR_RUNTIME, "%s: pivot %d is out of range", op, bad);
    }
    /* B's batch dims must be LD's (broadcast to them) */
    int64_t sb[EM_MAX_DIMS];
    memcpy(sb, LD->sizes, nb * sizeof *sb);
    sb[nb] = n, sb[nb + 1] = nrhs;
    em_tensor *Be = em_expand(B, nb + 2, sb), *X = Be ? em_zeros(nb + 2, sb, (em_dtype)LD->dtype) : NULL;
    em_call c = {.op = EM_OP_linalg_ldl_solve, .nin = 3, .nout = 1, .dtype = (em_dtype)LD->dtype,
                 .in = {LD, piv, Be}, .out = {X}};
    c.i[3] = hermitian;
    em_status st = X ? run(&c, batch_count(LD, nb), n, nrhs) : em_error_code();
    em_release(piv);
    em_release(Be);
    if (st) em_release(X);
    return st ? NULL : X;
}

/* ---- least squares -------------------------------------------------------- */
em_status em_linalg_lstsq(const em_tensor *A, const em_tensor *B, double rcond, em_lstsq_driver driver,
                          em_tensor **X, em_tensor **residuals, em_tensor **rank, em_tensor **sv)
{
    static const char op[] = "torch.linalg.lstsq";
    results_init(RESULTS(X, residuals, rank, sv));
    if (EM_NULL(A) || EM_NULL(B) || EM_NULL(X) || EM_NULL(residuals) || EM_NULL(rank) || EM_NULL(sv))
        return em_error_code();
    if (check_matrix(A, op, "input", false) || check_matrix(B, op, "other", false) || check_same_dtype(A, B, op))
        return em_error_code();
    if ((unsigned)driver > EM_LSTSQ_GELSS) return em_fail(EM_ERR_VALUE, "%s: unknown driver %d", op, (int)driver);
    const int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n;
    const int64_t nrhs = B->sizes[B->ndim - 1];
    if (B->sizes[B->ndim - 2] != m)
        return em_fail(EM_ERR_SHAPE, "%s: input.size(-2) should match other.size(-2)", op);
    const int nb = (A->ndim > B->ndim ? A->ndim : B->ndim) - 2;
    int64_t sa[EM_MAX_DIMS], sb[EM_MAX_DIMS];
    for (int d = 0; d < nb; d++) {
        int da = d - (nb - (A->ndim - 2)), db = d - (nb - (B->ndim - 2));
        int64_t x = da >= 0 ? A->sizes[da] : 1, y = db >= 0 ? B->sizes[db] : 1;
        if (x != y && x != 1 && y != 1)
            return em_fail(EM_ERR_SHAPE, "The size of tensor a (%lld) must match the size of tensor b (%lld) at "
                           "non-singleton dimension %d", (long long)x, (long long)y, d);
        sa[d] = sb[d] = x == 1 ? y : x;
    }
    sa[nb] = m, sa[nb + 1] = n, sb[nb] = m, sb[nb + 1] = nrhs;
    const em_dtype dt = (em_dtype)A->dtype;
    em_tensor *Ae = em_expand(A, nb + 2, sa), *Be = Ae ? em_expand(B, nb + 2, sb) : NULL;
    if (Be) {
        *X = batch_zeros(Ae, nb, 2, n, nrhs, dt);
        *residuals = batch_zeros(Ae, nb, 1, nrhs, 0, em_dtype_to_real(dt));
        *rank = batch_zeros(Ae, nb, 0, 0, 0, EM_I64);
        *sv = batch_zeros(Ae, nb, 1, k, 0, em_dtype_to_real(dt));
    }
    em_call c = {.op = EM_OP_linalg_lstsq, .nin = 2, .nout = 4, .dtype = dt, .in = {Ae, Be},
                 .out = {*X, *residuals, *rank, *sv}};
    c.i[3] = nrhs;
    c.i[4] = driver;
    c.f[0] = rcond;
    em_status st = Be && *X && *residuals && *rank && *sv ? run(&c, em_shape_numel(nb, sa), m, n) : em_error_code();
    em_release(Ae);
    em_release(Be);
    return st ? results_drop(RESULTS(X, residuals, rank, sv)) : EM_OK;
}
