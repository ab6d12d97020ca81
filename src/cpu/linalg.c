/* CPU kernels of the linear algebra ops (include/ember/ops/linalg.def): one
 * batched GEMM driver behind every matrix product (OpenBLAS for float32 and
 * float64, float32 OpenBLAS through conversion for float16 and bfloat16,
 * plain loops for the integer dtypes), and trace.
 *
 * Note [GEMM call]
 * Every product op (mm, bmm, addmm, baddbmm, addbmm, mv, addmv, dot) reaches
 * this driver with its operands as the user gave them, so that the call is a
 * pure function of its inputs (autograd records it as such):
 *   in[0] = A  (batch..., M, K), or a vector (K) read as the row (1, K)
 *   in[1] = B  (batch..., K, N), or a vector (K) read as the column (K, 1)
 *   in[2] = input (the add* ops only; nin == 3): broadcasts to C, any dtype
 *   out[0] = C (batch..., M, N), without M when A is a vector and without N
 *            when B is one; (M, N) when i[0] != 0 (addbmm: sum over batches)
 *   f[0] = beta, f[1] = alpha:   C = beta * input + alpha * A @ B
 * The batch dims of A and B broadcast (matmul's rule: right-aligned, size 1
 * against any size); the matrix views are built here from the strides.
 * A, B and C have c->dtype; C does not overlap A, B or input (input may be C
 * itself: in place) and has no internal overlap. beta == 0 ignores input
 * (nan included). Vectors reach BLAS as gemv or dot. */
#include "gemm.h"
#include <cblas.h>
#include <limits.h>
#include <stdlib.h>

/* One matrix of a product: its first element and element strides. */
typedef struct mat {
    char *p;
    int64_t rs, cs;
} mat;

/* Scratch buffers, grown on demand and freed at the end of a call. */
typedef struct scratch {
    void *buf[4];
    size_t size[4];
} scratch;
enum { SCR_A, SCR_B, SCR_C, SCR_X };

static void *scratch_get(scratch *s, int slot, size_t bytes)
{
    if (bytes > s->size[slot]) {
        void *p = realloc(s->buf[slot], bytes);
        if (!p) return em_error(EM_ERR_MEMORY, "out of memory: failed to allocate %zu bytes of GEMM scratch", bytes);
        s->buf[slot] = p;
        s->size[slot] = bytes;
    }
    return s->buf[slot] ? s->buf[slot] : s; /* any non-NULL pointer for 0 bytes */
}

static void scratch_free(scratch *s)
{
    for (int k = 0; k < 4; k++) free(s->buf[k]);
}

/* Copies a rows x cols matrix row by row through the cast table (also a
 * plain strided copy when the dtypes agree). Strides in elements. */
static void copy_mat(em_dtype dt_dst, char *dst, int64_t drs, int64_t dcs, em_dtype dt_src, const char *src,
                     int64_t srs, int64_t scs, int64_t rows, int64_t cols)
{
    int64_t dsz = (int64_t)em_dtypes[dt_dst].size, ssz = (int64_t)em_dtypes[dt_src].size;
    const bool rows_contiguous = dt_dst == dt_src && (cols == 1 || (dcs == 1 && scs == 1));
    for (int64_t i = 0; i < rows; i++) {
        if (rows_contiguous) /* the common case (a bias row, packing): a plain copy */
            memcpy(dst + i * drs * dsz, src + i * srs * ssz, (size_t)(cols * dsz));
        else
            em_cast_table[dt_dst][dt_src](dst + i * drs * dsz, dcs * dsz, src + i * srs * ssz, scs * ssz, cols);
    }
}

/* ---- plain loops: integers, and floats too large for BLAS's int sizes ---- */
/* alpha and beta become the integer type first, as PyTorch's Scalar.to<T>(). */
static int64_t to_i64(double v) { return v >= -9.2e18 && v <= 9.2e18 ? (int64_t)v : 0; }

/* Integer products wrap: they accumulate in an unsigned type at least as wide
 * as T (uint32_t up to int32, which vectorizes; uint64_t for int64), whose low
 * bits are those of T's own wrapping arithmetic. Floats accumulate in double.
 * C's row is built in chunks of NAIVE_CHUNK accumulators, so that the inner
 * loop runs along a row of B. */
#define NAIVE_CHUNK 256
#define NAIVE_GEMM(DT, ACC, SCALAR)                                                                         \
    EM_SIMD static void naive_##DT(int64_t M, int64_t N, int64_t K, double alpha_d, mat A, mat B,           \
                                   double beta_d, mat C)                                                    \
    {                                                                                                       \
        typedef em_##DT##_t T;                                                                              \
        typedef ACC acc_t;                                                                                  \
        const acc_t alpha = SCALAR(alpha_d), beta = SCALAR(beta_d);                                         \
        acc_t acc[NAIVE_CHUNK];                                                                             \
        for (int64_t i = 0; i < M; i++)                                                                     \
            for (int64_t j0 = 0; j0 < N; j0 += NAIVE_CHUNK) {                                               \
                const int64_t n = N - j0 < NAIVE_CHUNK ? N - j0 : NAIVE_CHUNK;                              \
                for (int64_t j = 0; j < n; j++) acc[j] = 0;                                                 \
                for (int64_t k = 0; k < K; k++) {                                                           \
                    const acc_t a = (acc_t)((const T *)A.p)[i * A.rs + k * A.cs];                           \
                    const T *b = (const T *)B.p + k * B.rs + j0 * B.cs;                                     \
                    if (B.cs == 1)                                                                          \
                        for (int64_t j = 0; j < n; j++) acc[j] += a * (acc_t)b[j];                          \
                    else                                                                                    \
                        for (int64_t j = 0; j < n; j++) acc[j] += a * (acc_t)b[j * B.cs];                   \
                }                                                                                           \
                T *c = (T *)C.p + i * C.rs + j0 * C.cs;                                                     \
                for (int64_t j = 0; j < n; j++)                                                             \
                    c[j * C.cs] = (T)(beta_d == 0 ? alpha * acc[j] : beta * (acc_t)c[j * C.cs] + alpha * acc[j]); \
            }                                                                                               \
    }
#define INT_SCALAR(v) ((acc_t)(T)to_i64(v))
#define FLOAT_SCALAR(v) (v)
NAIVE_GEMM(U8, uint32_t, INT_SCALAR)
NAIVE_GEMM(I8, uint32_t, INT_SCALAR)
NAIVE_GEMM(I16, uint32_t, INT_SCALAR)
NAIVE_GEMM(I32, uint32_t, INT_SCALAR)
NAIVE_GEMM(I64, uint64_t, INT_SCALAR)
NAIVE_GEMM(F32, double, FLOAT_SCALAR)
NAIVE_GEMM(F64, double, FLOAT_SCALAR)
NAIVE_GEMM(C64, double _Complex, FLOAT_SCALAR)
NAIVE_GEMM(C128, double _Complex, FLOAT_SCALAR)

typedef void (*naive_fn)(int64_t, int64_t, int64_t, double, mat, mat, double, mat);
#define NAIVE_ENTRY(DT) [EM_##DT] = naive_##DT,
static const naive_fn naive_gemm[EM_DTYPE_COUNT] = {EM_FOR_NUMERIC(NAIVE_ENTRY) EM_FOR_COMPLEX(NAIVE_ENTRY)};

/* ---- BLAS path (float32, float64) ---------------------------------------- */
static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Can a rows x cols matrix with these strides go to BLAS as is? Row-major
 * (cs == 1) or column-major (rs == 1) with a leading dimension at least the
 * row (column) length; the stride of a size-1 dim is irrelevant. */
static bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *colmajor, int *ld)
{
    int64_t l;
    if ((cols == 1 || cs == 1) && (rows == 1 || rs >= cols)) {
        *colmajor = false;
        l = rows == 1 ? cols : rs;
    } else if ((rows == 1 || rs == 1) && (cols == 1 || cs >= rows)) {
        *colmajor = true;
        l = cols == 1 ? rows : cs;
    } else {
        return false;
    }
    if (l < 1) l = 1;
    if (!fits_int(l)) return false;
    *ld = (int)l;
    return true;
}

/* A BLAS-ready operand: packs `m` into scratch `slot` (contiguous row-major)
 * when its layout is not one BLAS takes. */
static em_status blas_operand(em_dtype dt, int64_t rows, int64_t cols, mat *m, bool *colmajor, int *ld,
                              scratch *s, int slot)
{
    if (blas_layout(rows, cols, m->rs, m->cs, colmajor, ld)) return EM_OK;
    char *p = scratch_get(s, slot, (size_t)(rows * cols) * em_dtypes[dt].size);
    if (!p) return EM_ERR_MEMORY;
    copy_mat(dt, p, cols, 1, dt, m->p, m->rs, m->cs, rows, cols);
    *m = (mat){p, cols, 1};
    return blas_layout(rows, cols, m->rs, m->cs, colmajor, ld) ? EM_OK
                                                                : em_fail(EM_ERR_RUNTIME, "matmul: matrix too large for BLAS");
}

/* A BLAS-ready vector of n elements with stride `inc`: packed when the
 * stride is 0 (broadcast) or too large for BLAS's int. */
static em_status blas_vector(em_dtype dt, int64_t n, char **p, int64_t *inc, scratch *s, int slot)
{
    if (n <= 1) *inc = 1;
    if (*inc >= 1 && fits_int(*inc)) return EM_OK;
    size_t sz = em_dtypes[dt].size;
    char *q = scratch_get(s, slot, (size_t)n * sz);
    if (!q) return EM_ERR_MEMORY;
    em_cast_table[dt][dt](q, (int64_t)sz, *p, *inc * (int64_t)sz, n);
    *p = q;
    *inc = 1;
    return EM_OK;
}

/* C = beta * C for the K == 0 product (beta == 0 writes zeros). */
static void scale_c(em_dtype dt, int64_t M, int64_t N, double beta, mat C)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t o = i * C.rs + j * C.cs;
            if (dt == EM_F32)
                ((float *)C.p)[o] = beta == 0 ? 0.0f : (float)beta * ((float *)C.p)[o];
            else
                ((double *)C.p)[o] = beta == 0 ? 0.0 : beta * ((double *)C.p)[o];
        }
}

/* C (1x1) = alpha * x.y + beta * C. */
static em_status blas_dot(em_dtype dt, int64_t K, double alpha, mat A, mat B, double beta, mat C, scratch *s)
{
    int64_t incx = A.cs, incy = B.rs;
    if (blas_vector(dt, K, &A.p, &incx, s, SCR_A) || blas_vector(dt, K, &B.p, &incy, s, SCR_B)) return EM_ERR_MEMORY;
    const int omp = cpu_blas_begin();
    if (dt == EM_F32) {
        float d = cblas_sdot((int)K, (const float *)A.p, (int)incx, (const float *)B.p, (int)incy), *c = (float *)C.p;
        *c = beta == 0 ? (float)alpha * d : (float)beta * *c + (float)alpha * d;
    } else {
        double d = cblas_ddot((int)K, (const double *)A.p, (int)incx, (const double *)B.p, (int)incy), *c = (double *)C.p;
        *c = beta == 0 ? alpha * d : beta * *c + alpha * d;
    }
    cpu_blas_end(omp);
    return EM_OK;
}

/* y = alpha * op(M) x + beta * y, M rows x cols; op transposes when `trans`.
 * incy fits BLAS's int (blas_gemm checked C's strides). */
static em_status blas_gemv(em_dtype dt, bool trans, int64_t rows, int64_t cols, double alpha, mat Mt, char *x,
                           int64_t incx, double beta, char *y, int64_t incy, scratch *s)
{
    bool colmajor = false;
    int ld = 1; /* set by blas_operand; initialized for the compiler's flow analysis */
    int64_t nx = trans ? rows : cols, ny = trans ? cols : rows;
    if (blas_operand(dt, rows, cols, &Mt, &colmajor, &ld, s, SCR_A) || blas_vector(dt, nx, &x, &incx, s, SCR_X))
        return em_error_code();
    if (ny <= 1) incy = 1; /* else >= 1: C has no internal overlap */
    /* a column-major matrix is the row-major storage of its transpose */
    enum CBLAS_TRANSPOSE t = trans != colmajor ? CblasTrans : CblasNoTrans;
    int sr = (int)(colmajor ? cols : rows), sc = (int)(colmajor ? rows : cols);
    const int omp = cpu_blas_begin();
    if (dt == EM_F32)
        cblas_sgemv(CblasRowMajor, t, sr, sc, (float)alpha, (const float *)Mt.p, ld, (const float *)x, (int)incx,
                    (float)beta, (float *)y, (int)incy);
    else
        cblas_dgemv(CblasRowMajor, t, sr, sc, alpha, (const double *)Mt.p, ld, (const double *)x, (int)incx, beta,
                    (double *)y, (int)incy);
    cpu_blas_end(omp);
    return EM_OK;
}

/* One float32/float64/complex product through BLAS (complex products take
 * GEMM for vectors too: the dot and gemv shortcuts are real-only). */
static em_status blas_gemm(em_dtype dt, int64_t M, int64_t N, int64_t K, double alpha, mat A, mat B, double beta,
                           mat C, scratch *s)
{
    const bool real = !em_dtype_is_complex(dt);
    if (K == 0 && real) {
        scale_c(dt, M, N, beta, C);
        return EM_OK;
    }
    if (K == 0 || !fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(C.rs) || !fits_int(C.cs)) {
        naive_gemm[dt](M, N, K, alpha, A, B, beta, C);
        return EM_OK;
    }
    if (real && M == 1 && N == 1) return blas_dot(dt, K, alpha, A, B, beta, C, s);
    if (real && N == 1) return blas_gemv(dt, false, M, K, alpha, A, B.p, B.rs, beta, C.p, C.rs, s);
    if (real && M == 1) return blas_gemv(dt, true, K, N, alpha, B, A.p, A.cs, beta, C.p, C.cs, s);

    bool ccol, acol, bcol;
    int ldc, lda, ldb;
    mat Cw = C; /* where BLAS writes: C itself, or a packed copy */
    if (!blas_layout(M, N, C.rs, C.cs, &ccol, &ldc)) {
        char *p = scratch_get(s, SCR_C, (size_t)(M * N) * em_dtypes[dt].size);
        if (!p) return EM_ERR_MEMORY;
        Cw = (mat){p, N, 1};
        if (beta != 0) copy_mat(dt, p, N, 1, dt, C.p, C.rs, C.cs, M, N);
        ccol = false;
        ldc = (int)N;
    }
    if (blas_operand(dt, M, K, &A, &acol, &lda, s, SCR_A) || blas_operand(dt, K, N, &B, &bcol, &ldb, s, SCR_B))
        return em_error_code();
    /* In C's order, an operand stored in the other order is transposed; a
     * column-major C is the row-major storage of C^T = op(B)^T op(A)^T. */
    const bool ta = acol != ccol, tb = bcol != ccol;
    if (ccol)
        cpu_gemm(dt, tb, ta, N, M, K, alpha, B.p, ldb, A.p, lda, beta, Cw.p, ldc);
    else
        cpu_gemm(dt, ta, tb, M, N, K, alpha, A.p, lda, B.p, ldb, beta, Cw.p, ldc);
    if (Cw.p != C.p) copy_mat(dt, C.p, C.rs, C.cs, dt, Cw.p, Cw.rs, Cw.cs, M, N);
    return EM_OK;
}

/* ---- float16 / bfloat16: float32 BLAS on converted copies ---------------- */
/* One product whose C is already float32 (Cf): A and B are converted. */
static em_status half_gemm(em_dtype dt, int64_t M, int64_t N, int64_t K, double alpha, mat A, mat B, double beta,
                           mat Cf, scratch *s)
{
    float *a = scratch_get(s, SCR_A, (size_t)(M * K) * sizeof(float));
    float *b = a ? scratch_get(s, SCR_B, (size_t)(K * N) * sizeof(float)) : NULL;
    if (!b) return EM_ERR_MEMORY;
    copy_mat(EM_F32, (char *)a, K, 1, dt, A.p, A.rs, A.cs, M, K);
    copy_mat(EM_F32, (char *)b, N, 1, dt, B.p, B.rs, B.cs, K, N);
    return blas_gemm(EM_F32, M, N, K, alpha, (mat){(char *)a, K, 1}, (mat){(char *)b, N, 1}, beta, Cf, s);
}

/* ---- the batched driver ---------------------------------------------------- */
enum { OP_C, OP_A, OP_B, OP_IN }; /* the operands of a product */

typedef struct gemm_ctx {
    em_dtype dt, in_dt; /* of C, A, B; of the input term */
    bool half;
    bool from_input; /* C starts as the input term (beta != 0 and input is not C itself) */
    int nb;          /* batch dims iterated */
    int64_t bsizes[EM_MAX_DIMS];
    int64_t bstride[4][EM_MAX_DIMS]; /* byte strides per batch dim, per operand */
    char *base[4];
    int64_t M, N, K;
    mat m[4]; /* element strides of one matrix per operand (p unused) */
    double alpha;
} gemm_ctx;

/* Stride of t's dim i when t is right-aligned on n dims: 0 where t lacks the
 * dim, or (`broadcast`) has size 1 there. */
static int64_t dim_stride(const em_tensor *t, int n, int i, bool broadcast)
{
    int td = i - (n - t->ndim);
    if (td < 0) return 0;
    return broadcast && t->sizes[td] == 1 ? 0 : t->strides[td];
}

/* Operand k's strides on the product's dims (batch..., rows, cols): t is
 * right-aligned on n dims, the last of which are its row and column dims
 * (a vector lacks one: stride 0). Size-1 batch dims broadcast; so do the
 * matrix dims of the input term (`input`). */
static void operand_layout(gemm_ctx *g, int k, const em_tensor *t, int n, bool has_row, bool has_col, bool input)
{
    const int tb = n - has_row - has_col, nb = g->nb;
    const int64_t esz = (int64_t)em_dtypes[t->dtype].size;
    for (int d = 0; d < nb; d++) g->bstride[k][d] = d < nb - tb ? 0 : dim_stride(t, n, d - (nb - tb), true) * esz;
    g->m[k].rs = has_row ? dim_stride(t, n, tb, input) : 0;
    g->m[k].cs = has_col ? dim_stride(t, n, n - 1, input) : 0;
    g->base[k] = em_tensor_data(t);
}

/* One batch's product C_b = beta * C_b + alpha * A_b @ B_b, C_b first set to
 * the input term when `first` and g->from_input. A half-type C is read into
 * a float32 accumulator (scratch SCR_C) when `first`, written back when
 * `last`: addbmm accumulates all its batches there. */
static em_status gemm_batch(const gemm_ctx *g, int64_t b, double beta, bool first, bool last, scratch *s)
{
    char *p[4] = {g->base[0], g->base[1], g->base[2], g->base[3]};
    for (int d = g->nb - 1; d >= 0; d--) {
        int64_t i = b % g->bsizes[d];
        b /= g->bsizes[d];
        for (int k = 0; k < 4; k++) p[k] += i * g->bstride[k][d];
    }
    const int64_t M = g->M, N = g->N, K = g->K;
    mat C = {p[OP_C], g->m[OP_C].rs, g->m[OP_C].cs}, A = {p[OP_A], g->m[OP_A].rs, g->m[OP_A].cs};
    mat B = {p[OP_B], g->m[OP_B].rs, g->m[OP_B].cs}, In = {p[OP_IN], g->m[OP_IN].rs, g->m[OP_IN].cs};
    const bool load = first && g->from_input;
    if (!g->half) {
        if (load) copy_mat(g->dt, C.p, C.rs, C.cs, g->in_dt, In.p, In.rs, In.cs, M, N);
        if (g->dt == EM_F32 || g->dt == EM_F64 || em_dtype_is_complex(g->dt))
            return blas_gemm(g->dt, M, N, K, g->alpha, A, B, beta, C, s);
        naive_gemm[g->dt](M, N, K, g->alpha, A, B, beta, C);
        return EM_OK;
    }
    float *cf = scratch_get(s, SCR_C, (size_t)(M * N) * sizeof(float));
    if (!cf) return EM_ERR_MEMORY;
    mat Cf = {(char *)cf, N, 1};
    if (load) copy_mat(EM_F32, Cf.p, N, 1, g->in_dt, In.p, In.rs, In.cs, M, N);
    else if (first && beta != 0) copy_mat(EM_F32, Cf.p, N, 1, g->dt, C.p, C.rs, C.cs, M, N);
    em_status st = half_gemm(g->dt, M, N, K, g->alpha, A, B, beta, Cf, s);
    if (last) copy_mat(g->dt, C.p, C.rs, C.cs, EM_F32, Cf.p, N, 1, M, N);
    return st;
}

/* When B is the same matrix for every batch and the batch dims of A and C
 * (and of the input term) continue their row dim (as in a (b, n, k) x
 * (k, m) matmul), the whole batch is one (b*n, k) x (k, m) product. Returns
 * the folded row count, or 0. */
static int64_t fold_rows(const gemm_ctx *g)
{
    int64_t rows = g->M;
    const int64_t esz = (int64_t)em_dtypes[g->dt].size, isz = (int64_t)em_dtypes[g->in_dt].size;
    for (int d = g->nb - 1; d >= 0; d--) {
        if (g->bsizes[d] == 1) continue;
        if (g->bstride[OP_B][d] != 0 || g->bstride[OP_A][d] != rows * g->m[OP_A].rs * esz ||
            g->bstride[OP_C][d] != rows * g->m[OP_C].rs * esz)
            return 0;
        if (g->from_input && g->bstride[OP_IN][d] != rows * g->m[OP_IN].rs * isz) return 0;
        rows *= g->bsizes[d];
    }
    return rows;
}

/* Note [Small batched products]
 * Batches run one after the other, each GEMM threaded by OpenBLAS itself.
 * Splitting a batch of small products over the OpenMP threads (single-threaded
 * BLAS each) was measured on 2 threads with 128 32x32 and 37 48x48 float32
 * products: 2x faster with OpenBLAS's SkylakeX kernels, but 100x slower
 * (0.1 ms -> 20-40 ms) with OPENBLAS_CORETYPE=Haswell, whose concurrent calls
 * contend on OpenBLAS's buffer lock; so it is not done. */
static em_status gemm_run(const em_call *c)
{
    em_tensor *Ct = c->out[0];
    const em_tensor *At = c->in[0], *Bt = c->in[1], *It = c->nin > 2 ? c->in[2] : NULL;
    const bool reduce = c->i[0] != 0, a_mat = At->ndim >= 2, b_mat = Bt->ndim >= 2;
    const int na = a_mat ? At->ndim - 2 : 0, nbb = b_mat ? Bt->ndim - 2 : 0;
    double beta = It ? c->f[0] : 0;
    gemm_ctx g = {.dt = c->dtype, .in_dt = c->dtype, .half = c->dtype == EM_F16 || c->dtype == EM_BF16,
                  .from_input = beta != 0 && It != Ct, .nb = na > nbb ? na : nbb, .alpha = c->f[1],
                  .M = a_mat ? At->sizes[At->ndim - 2] : 1, .K = At->sizes[At->ndim - 1],
                  .N = b_mat ? Bt->sizes[Bt->ndim - 1] : 1};
    int64_t nbatch = 1;
    for (int d = 0; d < g.nb; d++) {
        int64_t sa = d < g.nb - na ? 1 : At->sizes[d - (g.nb - na)], sb = d < g.nb - nbb ? 1 : Bt->sizes[d - (g.nb - nbb)];
        g.bsizes[d] = sa == 1 ? sb : sa;
        nbatch *= g.bsizes[d];
    }
    operand_layout(&g, OP_A, At, At->ndim, a_mat, true, false);
    operand_layout(&g, OP_B, Bt, Bt->ndim, true, b_mat, false);
    operand_layout(&g, OP_C, Ct, Ct->ndim, a_mat, b_mat, false); /* addbmm's C: no batch dims, stride 0 */
    if (g.from_input) {
        g.in_dt = (em_dtype)It->dtype;
        operand_layout(&g, OP_IN, It, Ct->ndim, a_mat, b_mat, true); /* broadcast to C's shape */
    }
    if (g.M == 0 || g.N == 0 || (nbatch == 0 && !reduce)) return EM_OK;
    if (nbatch == 0) { /* addbmm over no batches: C = beta * input, a product with K = 0 */
        g.K = g.nb = 0;
        g.base[OP_A] = g.base[OP_B] = g.base[OP_C];
        nbatch = 1;
    }
    int64_t folded = reduce || g.nb == 0 ? 0 : fold_rows(&g);
    if (folded) {
        g.M = folded;
        g.nb = 0;
        nbatch = 1;
    }

    em_status st = EM_OK;
    scratch s = {0};
    for (int64_t b = 0; b < nbatch && st == EM_OK; b++) {
        st = gemm_batch(&g, b, beta, !reduce || b == 0, !reduce || b == nbatch - 1, &s);
        if (reduce) beta = 1; /* later batches add to the first's result */
    }
    scratch_free(&s);
    return st;
}

#define GEMM_KERNEL(op) \
    em_status cpu_##op(const em_call *c) { return gemm_run(c); }
GEMM_KERNEL(mm)
GEMM_KERNEL(bmm)
GEMM_KERNEL(addmm)
GEMM_KERNEL(baddbmm)
GEMM_KERNEL(addbmm)
GEMM_KERNEL(mv)
GEMM_KERNEL(addmv)
GEMM_KERNEL(dot)

/* ---- trace: out[0] (0-d) = sum of in[0]'s diagonal ------------------------ */
/* Accumulates in double for floats and in int64 for integers (PyTorch's CPU
 * acc_type); the result dtype is the input's, int64 for integers. */
#define TRACE(DT, ACC, OUT)                                                                        \
    static void trace_##DT(const em_tensor *t, em_tensor *out)                                     \
    {                                                                                              \
        const em_##DT##_t *p = (const em_##DT##_t *)em_tensor_data(t);                             \
        int64_t n = t->sizes[0] < t->sizes[1] ? t->sizes[0] : t->sizes[1];                         \
        int64_t step = t->strides[0] + t->strides[1];                                              \
        ACC acc = 0;                                                                               \
        for (int64_t i = 0; i < n; i++) acc += (ACC)p[i * step];                                   \
        *(OUT *)em_tensor_data(out) = (OUT)acc;                                                    \
    }
#define TRACE_INT(DT) TRACE(DT, uint64_t, int64_t)
TRACE_INT(U8)
TRACE_INT(I8)
TRACE_INT(I16)
TRACE_INT(I32)
TRACE_INT(I64)
TRACE(F32, double, float)
TRACE(F64, double, double)
TRACE(C64, double _Complex, float _Complex)
TRACE(C128, double _Complex, double _Complex)

typedef void (*trace_fn)(const em_tensor *, em_tensor *);
#define TRACE_ENTRY(DT) [EM_##DT] = trace_##DT,
static const trace_fn trace_fns[EM_DTYPE_COUNT] = {EM_FOR_NUMERIC(TRACE_ENTRY) EM_FOR_COMPLEX(TRACE_ENTRY)};

em_status cpu_trace(const em_call *c)
{
    trace_fns[c->dtype](c->in[0], c->out[0]);
    return EM_OK;
}
