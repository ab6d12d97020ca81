/* The per-dtype bodies of the LAPACK kernels (src/cpu/lapack.c includes this
 * once per dtype with T, R (T's real part), SFX, LP(name) -> LAPACKE_<s|d|c|z>
 * name, LPU(name) -> the orthogonal/unitary routine (sor<name>, cun<name>),
 * LPH(name) -> the symmetric/Hermitian one (ssy<name>, che<name>), TRSM and
 * its ONE (alpha), FINITE, ABS2 (|x|^2) and TRANS_H ('T' for reals, 'C' for
 * complex: the adjoint) set; it undefines T, R, SFX, LP, LPU, LPH and TRSM
 * at its end, for the next dtype).
 *
 * Every input reaches these contiguous, as (batch, rows, cols) row-major.
 * LAPACK is column-major: a row-major m x n buffer read column-major is the
 * n x m transpose. Each kernel either works on that transpose (solve:
 * A^T's LU serves A X = B as in PyTorch), copies through a transposing
 * buffer (qr's input, lstsq, ldl), writes a column-major result (lu,
 * cholesky, qr, solve, lu_solve: the op layer gives those outputs PyTorch's
 * column-major strides, so that no result is transposed back), or lets
 * LAPACKE's row-major interface transpose (svd, eigh: PyTorch's calls, for
 * its signs of the vectors). Each function handles one matrix of the batch. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* dst (cols x rows, column-major of the row-major src rows x cols) = src^T:
 * the copy in and out of LAPACK's layout; ld* are the leading dims. */
static void FN(transpose)(T *dst, int64_t ldd, const T *src, int64_t lds, int64_t rows, int64_t cols)
{
    enum { BLOCK = 32 }; /* tiles that stay in L1 on both sides */
    for (int64_t r0 = 0; r0 < rows; r0 += BLOCK)
        for (int64_t c0 = 0; c0 < cols; c0 += BLOCK) {
            const int64_t r1 = r0 + BLOCK < rows ? r0 + BLOCK : rows, c1 = c0 + BLOCK < cols ? c0 + BLOCK : cols;
            for (int64_t c = c0; c < c1; c++)
                for (int64_t r = r0; r < r1; r++) dst[c * ldd + r] = src[r * lds + c];
        }
}

static bool FN(all_finite)(const T *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!FINITE(a[i])) return false;
    return true;
}

/* LU with partial pivoting: lu (m x n column-major, L unit lower below, U
 * on and above the diagonal), 1-based pivots (min(m, n)); returns LAPACK's
 * info (> 0: U has an exact zero on the diagonal). */
static int FN(lu)(T *lu, int32_t *piv, const T *a, int64_t m, int64_t n)
{
    FN(transpose)(lu, m, a, n, m, n);
    return LP(getrf)(LAPACK_COL_MAJOR, (int)m, (int)n, lu, (int)m, piv);
}

/* x (n x nrhs column-major) = op(M)^-1 b, op by getrs's trans ('N', 'T' or
 * 'C'), for M = P L U given by getrf (lu column-major, pivots) and the
 * row-major b. A zero on U's diagonal gives inf/nan, no error (as PyTorch). */
static void FN(lu_solve)(T *x, const T *lu, const int32_t *piv, const T *b, int64_t n, int64_t nrhs, char trans)
{
    FN(transpose)(x, n, b, nrhs, n, nrhs);
    LP(getrs_work)(LAPACK_COL_MAJOR, trans, (int)n, (int)nrhs, lu, (int)n, piv, x, (int)n);
}

/* A X = B for a (n x n) and b (n x nrhs): the row-major a is the
 * column-major a^T, factored in place in lu (its copy) as PyTorch does, and
 * X = (a^T)^-T b; x column-major. Returns getrf's info. */
static int FN(solve)(T *x, T *lu, int32_t *piv, const T *a, const T *b, int64_t n, int64_t nrhs)
{
    memcpy(lu, a, n * n * sizeof(T));
    int info = LP(getrf)(LAPACK_COL_MAJOR, (int)n, (int)n, lu, (int)n, piv);
    FN(lu_solve)(x, lu, piv, b, n, nrhs, 'T'); /* the plain transpose, also for complex */
    return info;
}

/* Cholesky of the symmetric (Hermitian) a (n x n) from its lower triangle
 * (upper: its upper one; copied, not read transposed, which would conjugate
 * a complex one) into l (column-major, as PyTorch's), the other triangle zeroed. */
static int FN(cholesky)(T *l, const T *a, int64_t n, bool upper)
{
    FN(transpose)(l, n, a, n, n, n);
    int info = LP(potrf)(LAPACK_COL_MAJOR, upper ? 'U' : 'L', (int)n, l, (int)n);
    for (int64_t j = 0; j < n; j++) /* column j: rows (j, n) or [0, j) */
        memset(upper ? l + j * n + j + 1 : l + j * n, 0, (upper ? n - j - 1 : j) * sizeof(T));
    return info;
}

/* QR of a (m x n), column-major results: r gets the first `rrows` rows of
 * R (rrows x n), q (when not NULL) the first `qcols` columns of Q
 * (m x qcols). `work` holds m * max(n, qcols) + min(m, n). */
static int FN(qr)(T *q, T *r, const T *a, int64_t m, int64_t n, int64_t rrows, int64_t qcols, T *work)
{
    const int64_t k = m < n ? m : n, w = n > qcols ? n : qcols;
    T *tau = work + m * w;
    FN(transpose)(work, m, a, n, m, n);
    int info = LP(geqrf)(LAPACK_COL_MAJOR, (int)m, (int)n, work, (int)m, tau);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < rrows; i++) r[j * rrows + i] = j >= i ? work[j * m + i] : 0;
    if (q && !info) {
        info = LPU(gqr)(LAPACK_COL_MAJOR, (int)m, (int)qcols, (int)k, work, (int)m, tau);
        memcpy(q, work, m * qcols * sizeof(T));
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
    int info = LPU(gqr)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)k, work, (int)m, tau);
    FN(transpose)(q, n, work, m, n, m);
    return info;
}

/* SVD of a (m x n) = u diag(s) vh, by divide and conquer (gesdd) on the
 * column-major a, as PyTorch calls it, so that the singular vectors come
 * with its signs (LAPACKE's row-major interface transposes in and out).
 * full: u is m x m and vh n x n, else m x k and k x n; u NULL: values only.
 * Non-finite input makes LAPACK loop or fail: reported as info -1. */
static int FN(svd)(T *u, R *s, T *vh, const T *a, int64_t m, int64_t n, bool full, T *work)
{
    if (!FN(all_finite)(a, m * n)) return -1;
    const int64_t k = m < n ? m : n;
    memcpy(work, a, m * n * sizeof(T));
    const char job = !u ? 'N' : full ? 'A' : 'S';
    return LP(gesdd)(LAPACK_ROW_MAJOR, job, (int)m, (int)n, work, (int)n, s, u, (int)(full ? m : k), vh, (int)n);
}

/* Eigenvalues (ascending) of the symmetric (Hermitian) a (n x n) from its
 * lower (upper) triangle into w, eigenvectors as the columns of v (NULL:
 * values only), by syevd (heevd) on the column-major a, as PyTorch calls it
 * (the same eigenvector signs and phases; LAPACKE's row-major interface
 * copies the triangle, without conjugating). `work` holds n * n. A
 * non-finite input gives NaNs. */
static int FN(eigh)(R *w, T *v, const T *a, int64_t n, bool upper, T *work)
{
    if (!FN(all_finite)(a, n * n)) { /* NaN results, no error (as PyTorch) */
        for (int64_t i = 0; i < n; i++) w[i] = NAN;
        for (int64_t i = 0; v && i < n * n; i++) v[i] = NAN;
        return 0;
    }
    T *z = v ? v : work;
    memcpy(z, a, n * n * sizeof(T));
    return LPH(evd)(LAPACK_ROW_MAJOR, v ? 'V' : 'N', upper ? 'U' : 'L', (int)n, z, (int)n, w);
}

/* Least squares min ||a x - b|| for a (m x n), b (m x nrhs): x (n x nrhs);
 * res (nrhs) the squared residuals of the rows past n (m > n), rank and the
 * singular values sv (min(m, n)) where the driver gives them. `work` holds
 * m * n + max(m, n) * nrhs + n. */
static int FN(lstsq)(T *x, R *res, int64_t *rank, R *sv, const T *a, const T *b, int64_t m, int64_t n,
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
        info = LP(gelsy)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)nrhs, wa, (int)m, wb, (int)ldb, jpvt, (R)rcond, &r);
    } else if (driver == EM_LSTSQ_GELSD) {
        info = LP(gelsd)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)nrhs, wa, (int)m, wb, (int)ldb, sv, (R)rcond, &r);
    } else {
        info = LP(gelss)(LAPACK_COL_MAJOR, (int)m, (int)n, (int)nrhs, wa, (int)m, wb, (int)ldb, sv, (R)rcond, &r);
    }
    *rank = r;
    FN(transpose)(x, nrhs, wb, ldb, nrhs, n);
    for (int64_t j = 0; j < nrhs; j++) {
        double acc = 0;
        for (int64_t i = n; i < m; i++) acc += ABS2(wb[j * ldb + i]);
        res[j] = (R)acc;
    }
    return info;
}

/* LDL^T (LDL^H when hermitian: hetrf) of the symmetric (Hermitian) a
 * (n x n) from its lower triangle: ld (L and D, the upper triangle zeroed),
 * LAPACK's pivots. `work` holds n * n. */
static int FN(ldl)(T *ld, int32_t *piv, const T *a, int64_t n, bool hermitian, T *work)
{
    FN(transpose)(work, n, a, n, n, n);
    int info = (hermitian ? LPH(trf) : LP(sytrf))(LAPACK_COL_MAJOR, 'L', (int)n, work, (int)n, piv);
    FN(transpose)(ld, n, work, n, n, n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) ld[i * n + j] = 0;
    return info;
}

/* x (n x nrhs) = A^-1 b from ldl's ld and pivots. `work` holds n * n + n * nrhs. */
static int FN(ldl_solve)(T *x, const T *ld, const int32_t *piv, const T *b, int64_t n, int64_t nrhs,
                         bool hermitian, T *work)
{
    T *wb = work + n * n;
    FN(transpose)(work, n, ld, n, n, n);
    FN(transpose)(wb, n, b, nrhs, n, nrhs);
    int info = (hermitian ? LPH(trs) : LP(sytrs))(LAPACK_COL_MAJOR, 'L', (int)n, (int)nrhs, work, (int)n, piv, wb, (int)n);
    FN(transpose)(x, nrhs, wb, n, nrhs, n);
    return info;
}

/* x = op(a)^-1 b (left) or b op(a)^-1 (right) for triangular a (n x n) and
 * b (rows x cols), in place in x (which holds b). BLAS trsm: no check for a
 * zero diagonal (the result then has inf/nan, as PyTorch). */
static void FN(trsm)(T *x, const T *a, int64_t n, int64_t rows, int64_t cols, bool upper, bool left, bool unit)
{
    TRSM(CblasRowMajor, left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower, CblasNoTrans,
         unit ? CblasUnit : CblasNonUnit, (int)rows, (int)cols, ONE, a, (int)n, x, (int)cols);
}

/* ---- one matrix of the batch: matrix b of c->i[0], each m x n = c->i[1] x
 * c->i[2] (see lapack.c). Each returns 0, or the LAPACK info of a failure
 * that the op reports as an error; the factorizations with an info output
 * store it there instead. Matrices are independent: the batch may be split
 * over threads, each with its own `work`. */
#define M_ c->i[1]
#define N_ c->i[2]
#define OUT(k) ((T *)em_tensor_data(c->out[k]))
#define ROUT(k) ((R *)em_tensor_data(c->out[k])) /* a real result (singular values, eigenvalues) */
#define IN(k) ((const T *)em_tensor_data(c->in[k]))
#define INFO(k) ((int32_t *)em_tensor_data(c->out[k]))

/* out = {LU (column-major), pivots, info} */
static int FN(one_lu)(const em_call *c, int64_t b, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n;
    (void)work;
    INFO(2)[b] = FN(lu)(OUT(0) + b * m * n, INFO(1) + b * k, IN(0) + b * m * n, m, n);
    return 0;
}

/* in = {A (n x n), B (n x nrhs)}, out = {X (column-major), LU (of A^T,
 * column-major), pivots, info}; i[1] = i[2] = n, i[3] = nrhs */
static int FN(one_solve)(const em_call *c, int64_t b, T *work)
{
    const int64_t n = N_, nrhs = c->i[3];
    (void)work;
    INFO(3)[b] = FN(solve)(OUT(0) + b * n * nrhs, OUT(1) + b * n * n, INFO(2) + b * n, IN(0) + b * n * n,
                           IN(1) + b * n * nrhs, n, nrhs);
    return 0;
}

/* in = {LU (column-major), pivots, B (n x nrhs)}, out[0] = X (column-major);
 * i[1] = n, i[2] = nrhs, i[3]: solve with M^H (M^T for reals) */
static int FN(one_lu_solve)(const em_call *c, int64_t b, T *work)
{
    const int64_t n = M_, nrhs = N_;
    const int32_t *piv = (const int32_t *)em_tensor_data(c->in[1]);
    (void)work;
    FN(lu_solve)(OUT(0) + b * n * nrhs, IN(0) + b * n * n, piv + b * n, IN(2) + b * n * nrhs, n, nrhs, c->i[3] ? TRANS_H : 'N');
    return 0;
}

/* out = {L (column-major), info} */
static int FN(one_cholesky)(const em_call *c, int64_t b, T *work)
{
    const int64_t n = N_;
    (void)work;
    INFO(1)[b] = FN(cholesky)(OUT(0) + b * n * n, IN(0) + b * n * n, n, c->i[3]);
    return 0;
}

/* i[3]: rows of R, i[4]: columns of Q (0: no Q, out[0] unused); both column-major */
static int FN(one_qr)(const em_call *c, int64_t b, T *work)
{
    const int64_t m = M_, n = N_, rr = c->i[3], qc = c->i[4];
    return FN(qr)(qc ? OUT(0) + b * m * qc : NULL, OUT(1) + b * rr * n, IN(0) + b * m * n, m, n, rr, qc, work);
}

static int FN(one_geqrf)(const em_call *c, int64_t b, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n;
    return FN(geqrf)(OUT(0) + b * m * n, OUT(1) + b * k, IN(0) + b * m * n, m, n, work);
}

/* i[3]: the number of reflectors k (tau's last size) */
static int FN(one_householder)(const em_call *c, int64_t b, T *work)
{
    const int64_t m = M_, n = N_, k = c->i[3];
    return FN(householder)(OUT(0) + b * m * n, IN(0) + b * m * n, IN(1) + b * k, m, n, k, work);
}

/* i[3]: full_matrices, i[4]: compute_uv; out = {U, S, Vh, info} */
static int FN(one_svd)(const em_call *c, int64_t b, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n, full = c->i[3], uv = c->i[4];
    const int64_t usz = m * (full ? m : k), vsz = n * (full ? n : k);
    INFO(3)[b] = FN(svd)(uv ? OUT(0) + b * usz : NULL, ROUT(1) + b * k, uv ? OUT(2) + b * vsz : NULL,
                         IN(0) + b * m * n, m, n, full, work);
    return 0;
}

/* i[3]: upper, i[4]: compute_v; out = {L, Q, info} */
static int FN(one_eigh)(const em_call *c, int64_t b, T *work)
{
    const int64_t n = N_;
    INFO(2)[b] = FN(eigh)(ROUT(0) + b * n, c->i[4] ? OUT(1) + b * n * n : NULL, IN(0) + b * n * n, n, c->i[3], work);
    return 0;
}

/* i[3]: nrhs, i[4]: driver, f[0]: rcond; out = {X, residuals, rank, sv} */
static int FN(one_lstsq)(const em_call *c, int64_t b, T *work)
{
    const int64_t m = M_, n = N_, k = m < n ? m : n, nrhs = c->i[3];
    int64_t *rank = (int64_t *)em_tensor_data(c->out[2]);
    int info = FN(lstsq)(OUT(0) + b * n * nrhs, ROUT(1) + b * nrhs, rank + b, ROUT(3) + b * k, IN(0) + b * m * n,
                         IN(1) + b * m * nrhs, m, n, nrhs, (int)c->i[4], c->f[0], work);
    if (c->i[4] != EM_LSTSQ_GELS) return info;
    rank[b] = info; /* gels has no rank: its info instead (> 0: rank deficient) */
    return 0;
}

/* i[3]: hermitian */
static int FN(one_ldl)(const em_call *c, int64_t b, T *work)
{
    const int64_t n = N_;
    INFO(2)[b] = FN(ldl)(OUT(0) + b * n * n, INFO(1) + b * n, IN(0) + b * n * n, n, c->i[3], work);
    return 0;
}

/* in = {LD, pivots, B (n x nrhs)}, out[0] = X; i[1] = n, i[2] = nrhs, i[3]: hermitian */
static int FN(one_ldl_solve)(const em_call *c, int64_t b, T *work)
{
    const int64_t n = M_, nrhs = N_;
    const int32_t *piv = (const int32_t *)em_tensor_data(c->in[1]);
    return FN(ldl_solve)(OUT(0) + b * n * nrhs, IN(0) + b * n * n, piv + b * n, IN(2) + b * n * nrhs, n, nrhs, c->i[3],
                          work);
}

/* in = {A (n x n), B (rows x cols)}, out[0] = X; i[1] = rows, i[2] = cols,
 * i[3] = n, i[4..6] = upper, left, unitriangular */
static int FN(one_trsm)(const em_call *c, int64_t b, T *work)
{
    const int64_t rows = M_, cols = N_, n = c->i[3];
    T *x = OUT(0) + b * rows * cols;
    (void)work;
    memcpy(x, IN(1) + b * rows * cols, rows * cols * sizeof(T));
    FN(trsm)(x, IN(0) + b * n * n, n, rows, cols, c->i[4], c->i[5], c->i[6]);
    return 0;
}

#undef M_
#undef N_
#undef OUT
#undef ROUT
#undef IN
#undef INFO

#undef FN
#undef CAT
#undef CAT_
#undef T
#undef R
#undef SFX
#undef LP
#undef LPU
#undef LPH
#undef TRSM
