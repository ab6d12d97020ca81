/* The per-dtype bodies of the LAPACK kernels (src/cpu/lapack.c includes this
 * once per real dtype with T, SFX, LP(name) -> LAPACKE_<s|d>name and TRSM set).
 *
 * Every input reaches these contiguous, as (batch, rows, cols) row-major.
 * LAPACK is column-major: a row-major m x n buffer read column-major is the
 * n x m transpose, and each kernel either works on that transpose
 * (cholesky), copies through a transposing buffer (lu, qr, lstsq), or lets
 * LAPACKE's row-major interface do so (svd, eigh: PyTorch's calls, for its
 * signs of the vectors). Each function handles one matrix of the batch. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* dst (cols x rows, column-major of the row-major src rows x cols) = src^T:
 * the copy in and out of LAPACK's layout; ld* are the leading dims. */
static void FN(transpose)(T *dst, int64_t ldd, const T *src, int64_t lds, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[c * ldd + r] = src[r * lds + c];
}

static bool FN(all_finite)(const T *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(a[i])) return false;
    return true;
}

/* LU with partial pivoting: lu (m x n, L unit lower below, U on and above
 * the diagonal), 1-based pivots (min(m, n)); returns LAPACK's info (> 0: U
 * has an exact zero on the diagonal). `work` holds m * n. */
static int FN(lu)(T *lu, int32_t *piv, const T *a, int64_t m, int64_t n, T *work)
{
    FN(transpose)(work, m, a, n, m, n);
    int info = LP(getrf)(LAPACK_COL_MAJOR, (int)m, (int)n, work, (int)m, piv);
    FN(transpose)(lu, n, work, m, n, m);
    return info;
}

/* Cholesky of the symmetric a (n x n) from its lower triangle (upper: its
 * upper one) into l, the other triangle zeroed. Column-major, the row-major
 * buffer is a^T = a, and LAPACK's upper triangle is our lower one. */
static int FN(cholesky)(T *l, const T *a, int64_t n, bool upper)
{
    memcpy(l, a, n * n * sizeof(T));
    int info = LP(potrf)(LAPACK_COL_MAJOR, upper ? 'L' : 'U', (int)n, l, (int)n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            if (upper ? j < i : j > i) l[i * n + j] = 0;
    return info;
}

/* QR of a (m x n): r gets the first `rrows` rows of R (rrows x n), q (when
 * not NULL) the first `qcols` columns of Q (m x qcols). `work` holds
 * m * max(n, qcols) + min(m, n). */
static int FN(qr)(T *q, T *r, const T *a, int64_t m, int64_t n, int64_t rrows, int64_t qcols, T *work)
{
    const int64_t k = m < n ? m : n, w = n > qcols ? n : qcols;
    T *tau = work + m * w;
    FN(transpose)(work, m, a, n, m, n);
    int info = LP(geqrf)(LAPACK_COL_MAJOR, (int)m, (int)n, work, (int)m, tau);
    for (int64_t i = 0; i < rrows; i++)
        for (int64_t j = 0; j < n; j++) r[i * n + j] = j >= i ? work[j * m + i] : 0;
    if (q && !info) {
        info = LP(orgqr)(LAPACK_COL_MAJOR, (int)m, (int)qcols, (int)k, work, (int)m, tau);
        FN(transpose)(q, qcols, work, m, qcols, m);
    }
    return info;
}

/* geqrf's packed result: reflectors below R in out (m x n), their scales in
 * tau (min(m, n)). `work` holds m * n. */
static int FN(geqrf)(T *out, T *tau, const T *a, int64_t m, int64_t n, T *work)
{
    FN(transpose)(work, m, a, n, m, n);
    int info = LP(geqrf)(LAPACK_COL_MAJOR, (int)m, (int)n, work, (int)m, tau);
    FN(transpose)(out, n, work, m, n, m);
    return info;
}

/* The first n columns of the product of the k reflectors stored below the
 * diagonal of a (m x n) with scales tau: orgqr. `work` holds m * n. */
static int FN(householder)(T *q, const T *a, const T *tau, int64_t m, int64_t n, int64_t k, T *work)
{
    FN(transpose)(work, m, a, n, m, n);
    int info = LP(orgqr)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)k, work, (int)m, tau);
    FN(transpose)(q, n, work, m, n, m);
    return info;
}

/* SVD of a (m x n) = u diag(s) vh, by divide and conquer (gesdd) on the
 * column-major a, as PyTorch calls it, so that the singular vectors come
 * with its signs (LAPACKE's row-major interface transposes in and out).
 * full: u is m x m and vh n x n, else m x k and k x n; u NULL: values only.
 * Non-finite input makes LAPACK loop or fail: reported as info -1. */
static int FN(svd)(T *u, T *s, T *vh, const T *a, int64_t m, int64_t n, bool full, T *work)
{
    if (!FN(all_finite)(a, m * n)) return -1;
    const int64_t k = m < n ? m : n;
    memcpy(work, a, m * n * sizeof(T));
    const char job = !u ? 'N' : full ? 'A' : 'S';
    return LP(gesdd)(LAPACK_ROW_MAJOR, job, (int)m, (int)n, work, (int)n, s, u, (int)(full ? m : k), vh, (int)n);
}

/* Eigenvalues (ascending) of the symmetric a (n x n) from its lower (upper)
 * triangle into w, eigenvectors as the columns of v (NULL: values only), by
 * syevd on the column-major a, as PyTorch calls it (the same eigenvector
 * signs). `work` holds n * n. A non-finite input gives NaNs. */
static int FN(eigh)(T *w, T *v, const T *a, int64_t n, bool upper, T *work)
{
    if (!FN(all_finite)(a, n * n)) { /* NaN results, no error (as PyTorch) */
        for (int64_t i = 0; i < n; i++) w[i] = NAN;
        for (int64_t i = 0; v && i < n * n; i++) v[i] = NAN;
        return 0;
    }
    T *z = v ? v : work;
    memcpy(z, a, n * n * sizeof(T));
    return LP(syevd)(LAPACK_ROW_MAJOR, v ? 'V' : 'N', upper ? 'U' : 'L', (int)n, z, (int)n, w);
}

/* Least squares min ||a x - b|| for a (m x n), b (m x nrhs): x (n x nrhs);
 * res (nrhs) the squared residuals of the rows past n (m > n), rank and the
 * singular values sv (min(m, n)) where the driver gives them. `work` holds
 * m * n + max(m, n) * nrhs + n. */
static int FN(lstsq)(T *x, T *res, int64_t *rank, T *sv, const T *a, const T *b, int64_t m, int64_t n,
                     int64_t nrhs, int driver, double rcond, T *work)
{
    const int64_t ldb = m > n ? m : n;
    T *wa = work, *wb = work + m * n;
    FN(transpose)(wa, m, a, n, m, n);
    FN(transpose)(wb, ldb, b, nrhs, m, nrhs);
    int info = 0, r = 0;
    if (driver == EM_LSTSQ_GELS) {
        info = LP(gels)(LAPACK_COL_MAJOR, 'N', (int)m, (int)n, (int)nrhs, wa, (int)m, wb, (int)ldb);
    } else if (driver == EM_LSTSQ_GELSY) {
        int *jpvt = (int *)(wb + ldb * nrhs);
        memset(jpvt, 0, n * sizeof *jpvt);
        info = LP(gelsy)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)nrhs, wa, (int)m, wb, (int)ldb, jpvt, (T)rcond, &r);
    } else if (driver == EM_LSTSQ_GELSD) {
        info = LP(gelsd)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)nrhs, wa, (int)m, wb, (int)ldb, sv, (T)rcond, &r);
    } else {
        info = LP(gelss)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)nrhs, wa, (int)m, wb, (int)ldb, sv, (T)rcond, &r);
    }
    *rank = r;
    FN(transpose)(x, nrhs, wb, ldb, nrhs, n);
    for (int64_t j = 0; j < nrhs; j++) {
        double acc = 0;
        for (int64_t i = n; i < m; i++) acc += (double)wb[j * ldb + i] * wb[j * ldb + i];
        res[j] = (T)acc;
    }
    return info;
}

/* LDL^T of the symmetric a (n x n) from its lower triangle: ld (L and D, the
 * upper triangle zeroed), LAPACK's pivots. `work` holds n * n. */
static int FN(ldl)(T *ld, int32_t *piv, const T *a, int64_t n, T *work)
{
    FN(transpose)(work, n, a, n, n, n);
    int info = LP(sytrf)(LAPACK_COL_MAJOR, 'L', (int)n, work, (int)n, piv);
    FN(transpose)(ld, n, work, n, n, n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) ld[i * n + j] = 0;
    return info;
}

/* x (n x nrhs) = A^-1 b from ldl's ld and pivots. `work` holds n * n + n * nrhs. */
static int FN(ldl_solve)(T *x, const T *ld, const int32_t *piv, const T *b, int64_t n, int64_t nrhs, T *work)
{
    T *wb = work + n * n;
    FN(transpose)(work, n, ld, n, n, n);
    FN(transpose)(wb, n, b, nrhs, n, nrhs);
    int info = LP(sytrs)(LAPACK_COL_MAJOR, 'L', (int)n, (int)nrhs, work, (int)n, piv, wb, (int)n);
    FN(transpose)(x, nrhs, wb, n, nrhs, n);
    return info;
}

/* x = op(a)^-1 b (left) or b op(a)^-1 (right) for triangular a (n x n) and
 * b (rows x cols), in place in x (which holds b). BLAS trsm: no check for a
 * zero diagonal (the result then has inf/nan, as PyTorch). */
static void FN(trsm)(T *x, const T *a, int64_t n, int64_t rows, int64_t cols, bool upper, bool left, bool unit)
{
    TRSM(CblasRowMajor, left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower, CblasNoTrans,
         unit ? CblasUnit : CblasNonUnit, (int)rows, (int)cols, 1, a, (int)n, x, (int)cols);
}

/* ---- the batch loops: c->i[0] matrices of c->i[1] x c->i[2] (see lapack.c) */
#define M_ c->i[1]
#define N_ c->i[2]
#define OUT(k) ((T *)em_tensor_data(c->out[k]))
#define IN(k) ((const T *)em_tensor_data(c->in[k]))
#define INFO(k) ((int32_t *)em_tensor_data(c->out[k]))

static em_status FN(run_lu)(const em_call *c, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n;
    for (int64_t b = 0; b < c->i[0]; b++)
        INFO(2)[b] = FN(lu)(OUT(0) + b * m * n, INFO(1) + b * k, IN(0) + b * m * n, m, n, work);
    return EM_OK;
}

static em_status FN(run_cholesky)(const em_call *c, T *work)
{
    const int64_t n = N_;
    for (int64_t b = 0; b < c->i[0]; b++) INFO(1)[b] = FN(cholesky)(OUT(0) + b * n * n, IN(0) + b * n * n, n, c->i[3]);
    return EM_OK;
}

/* i[3]: rows of R, i[4]: columns of Q (0: no Q, out[0] unused) */
static em_status FN(run_qr)(const em_call *c, T *work)
{
    const int64_t m = M_, n = N_, rr = c->i[3], qc = c->i[4];
    for (int64_t b = 0; b < c->i[0]; b++)
        if (FN(qr)(qc ? OUT(0) + b * m * qc : NULL, OUT(1) + b * rr * n, IN(0) + b * m * n, m, n, rr, qc, work))
            return em_fail(EM_ERR_RUNTIME, "linalg.qr: LAPACK failed");
    return EM_OK;
}

static em_status FN(run_geqrf)(const em_call *c, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n;
    for (int64_t b = 0; b < c->i[0]; b++)
        if (FN(geqrf)(OUT(0) + b * m * n, OUT(1) + b * k, IN(0) + b * m * n, m, n, work))
            return em_fail(EM_ERR_RUNTIME, "geqrf: LAPACK failed");
    return EM_OK;
}

/* i[3]: the number of reflectors k (tau's last size) */
static em_status FN(run_householder)(const em_call *c, T *work)
{
    const int64_t m = M_, n = N_, k = c->i[3];
    for (int64_t b = 0; b < c->i[0]; b++)
        if (FN(householder)(OUT(0) + b * m * n, IN(0) + b * m * n, IN(1) + b * k, m, n, k, work))
            return em_fail(EM_ERR_RUNTIME, "linalg.householder_product: LAPACK failed");
    return EM_OK;
}

/* i[3]: full_matrices, i[4]: compute_uv; out = {U, S, Vh, info} */
static em_status FN(run_svd)(const em_call *c, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n, full = c->i[3], uv = c->i[4];
    const int64_t usz = m * (full ? m : k), vsz = n * (full ? n : k);
    for (int64_t b = 0; b < c->i[0]; b++)
        INFO(3)[b] = FN(svd)(uv ? OUT(0) + b * usz : NULL, OUT(1) + b * k, uv ? OUT(2) + b * vsz : NULL,
                             IN(0) + b * m * n, m, n, full, work);
    return EM_OK;
}

/* i[3]: upper, i[4]: compute_v; out = {L, Q, info} */
static em_status FN(run_eigh)(const em_call *c, T *work)
{
    const int64_t n = N_;
    for (int64_t b = 0; b < c->i[0]; b++)
        INFO(2)[b] = FN(eigh)(OUT(0) + b * n, c->i[4] ? OUT(1) + b * n * n : NULL, IN(0) + b * n * n, n, c->i[3], work);
    return EM_OK;
}

/* i[3]: nrhs, i[4]: driver, f[0]: rcond; out = {X, residuals, rank, sv} */
static em_status FN(run_lstsq)(const em_call *c, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n, nrhs = c->i[3];
    int64_t *rank = (int64_t *)em_tensor_data(c->out[2]);
    for (int64_t b = 0; b < c->i[0]; b++) {
        int info = FN(lstsq)(OUT(0) + b * n * nrhs, OUT(1) + b * nrhs, rank + b, OUT(3) + b * k, IN(0) + b * m * n,
                             IN(1) + b * m * nrhs, m, n, nrhs, (int)c->i[4], c->f[0], work);
        if (c->i[4] == EM_LSTSQ_GELS) rank[b] = info; /* gels has no rank: its info instead (> 0: rank deficient) */
        else if (info)
            return em_fail(EM_ERR_RUNTIME, "linalg.lstsq: the algorithm failed to converge (error code: %d)", info);
    }
    return EM_OK;
}

static em_status FN(run_ldl)(const em_call *c, T *work)
{
    const int64_t n = N_;
    for (int64_t b = 0; b < c->i[0]; b++)
        INFO(2)[b] = FN(ldl)(OUT(0) + b * n * n, INFO(1) + b * n, IN(0) + b * n * n, n, work);
    return EM_OK;
}

/* in = {LD, pivots, B (n x nrhs)}, out[0] = X; i[1] = n, i[2] = nrhs */
static em_status FN(run_ldl_solve)(const em_call *c, T *work)
{
    const int64_t n = M_, nrhs = N_;
    const int32_t *piv = (const int32_t *)em_tensor_data(c->in[1]);
    for (int64_t b = 0; b < c->i[0]; b++)
        if (FN(ldl_solve)(OUT(0) + b * n * nrhs, IN(0) + b * n * n, piv + b * n, IN(2) + b * n * nrhs, n, nrhs, work))
            return em_fail(EM_ERR_RUNTIME, "linalg.ldl_solve: LAPACK failed");
    return EM_OK;
}

/* in = {A (n x n), B (rows x cols)}, out[0] = X; i[1] = rows, i[2] = cols,
 * i[3] = n, i[4..6] = upper, left, unitriangular */
static em_status FN(run_trsm)(const em_call *c, T *work)
{
    const int64_t rows = M_, cols = N_, n = c->i[3];
    memcpy(OUT(0), IN(1), c->i[0] * rows * cols * sizeof(T));
    for (int64_t b = 0; b < c->i[0]; b++)
        FN(trsm)(OUT(0) + b * rows * cols, IN(0) + b * n * n, n, rows, cols, c->i[4], c->i[5], c->i[6]);
    return EM_OK;
}

#undef M_
#undef N_
#undef OUT
#undef IN
#undef INFO

#undef FN
#undef CAT
#undef CAT_
