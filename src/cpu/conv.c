/* CPU kernels of convolution and convolution_weight_grad: im2col + GEMM per
 * sample and group, on the regular geometry (Note [Regular geometry] in
 * conv_cols.h).
 *
 * Per sample n and group g (W_g: (C_out/G, C_in/G * K) row-major; cols_g:
 * rows of the sample's im2col columns, (C_in/G * K, L_out)):
 *   convolution            Y_n,g = W_g @ cols_g(X_n)             (+ bias first)
 *   transposed             Y_n   = col2im(W_g^T @ X_n,g)         (+ bias)
 *   weight grad            dW_g += G_n,g @ cols_g(X_n)^T
 * The GEMMs write straight into the NCHW result (a sample's (C, L) block is
 * a row-major matrix), so no layout copies are needed; a 1x1 stride-1
 * unpadded geometry skips im2col altogether.
 *
 * Threads: samples are split into chunks over Ember's pool (each chunk
 * with its own column buffer) when there are several and enough work; BLAS
 * runs single-threaded inside each. With one sample the loop is serial and
 * cpu_gemm splits large products over the pool. Operands are contiguous, float32 or float64 (the op layer
 * converts); c->i holds em_conv_params.
 *
 * float32 calls first try oneDNN (conv_dnnl.h): its direct convolutions in
 * blocked layouts run about twice as fast as im2col + sgemm (bench/bench_conv.py). */
#include "conv_cols.h"
#include "conv_dnnl.h"
#include "gemm.h"

/* C = A' @ B' + beta * C, row-major, A' = A or A^T (ta), B' likewise. */
static void gemm(em_dtype dt, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const char *A, int64_t lda,
                 const char *B, int64_t ldb, double beta, char *C, int64_t ldc)
{
    cpu_gemm(dt, ta, tb, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc);
}

/* rows (C, L) of one sample: row c = bias[c] (`add`: += bias[c]). */
static void apply_bias(em_dtype dt, char *y, const char *bias, int64_t C, int64_t L, bool add)
{
    for (int64_t c = 0; c < C; c++) {
        if (dt == EM_F32) {
            float *r = (float *)y + c * L, b = ((const float *)bias)[c];
            if (add)
                for (int64_t l = 0; l < L; l++) r[l] += b;
            else
                for (int64_t l = 0; l < L; l++) r[l] = b;
        } else {
            double *r = (double *)y + c * L, b = ((const double *)bias)[c];
            if (add)
                for (int64_t l = 0; l < L; l++) r[l] += b;
            else
                for (int64_t l = 0; l < L; l++) r[l] = b;
        }
    }
}

/* One column buffer per chunk (size 0 when im2col is the identity), from
 * Ember's allocator, which keeps large freed blocks: a call does not fault
 * in fresh pages for its columns. Free with em_cpu_free(p, *total). */
static char *col_buffers(const conv_geom *g, size_t esz, int64_t nchunks, size_t *each, size_t *total)
{
    *each = conv_cols_identity(g) ? 0 : (size_t)(g->C_in * g->K * g->L_out) * esz;
    *total = *each * (size_t)nchunks + 64;
    char *p = em_cpu_alloc(*total);
    if (!p) em_fail(EM_ERR_MEMORY, "convolution: out of memory allocating %zu bytes of columns", *total);
    return p;
}

/* The columns of sample xs: xs itself, or im2col into buf. */
static const char *columns(em_dtype dt, const conv_geom *g, const char *xs, char *buf)
{
    if (conv_cols_identity(g)) return xs;
    conv_im2col(dt, g, xs, buf, 0, g->C_in);
    return buf;
}

/* The regular geometry of a convolution call: the input side is x for a
 * convolution, y for a transposed one. */
static conv_geom call_geom(const em_call *c, const em_conv_params *p)
{
    const em_tensor *x = c->in[0], *w = c->in[1], *y = c->out[0];
    const em_tensor *in_side = p->transposed ? y : x, *out_side = p->transposed ? x : y;
    return conv_geom_make(p, x->sizes[0], in_side->sizes[1], out_side->sizes[1], in_side->sizes + 2,
                          out_side->sizes + 2, w->sizes + 2);
}

static void forward_sample(em_dtype dt, const conv_geom *g, const char *xs, const char *w, const char *bias,
                           char *ys, char *buf)
{
    const size_t esz = em_dtypes[dt].size;
    const int64_t Cog = g->C_out / g->groups, CigK = g->C_in / g->groups * g->K, L = g->L_out;
    if (bias) apply_bias(dt, ys, bias, g->C_out, L, false);
    if (CigK == 0) {
        if (!bias) memset(ys, 0, (size_t)(g->C_out * L) * esz);
        return;
    }
    const char *cols = columns(dt, g, xs, buf);
    for (int64_t G = 0; G < g->groups; G++)
        gemm(dt, false, false, Cog, L, CigK, w + G * Cog * CigK * esz, CigK, cols + G * CigK * L * esz, L,
             bias ? 1.0 : 0.0, ys + G * Cog * L * esz, L);
}

/* Transposed: xs is an output-side sample (C_out, L_out), ys input-side. */
static void transposed_sample(em_dtype dt, const conv_geom *g, const char *xs, const char *w, const char *bias,
                              char *ys, char *buf)
{
    const size_t esz = em_dtypes[dt].size;
    const int64_t Cog = g->C_out / g->groups, CigK = g->C_in / g->groups * g->K, L = g->L_out;
    const bool identity = conv_cols_identity(g);
    char *cols = identity ? ys : buf; /* identity: the columns are the result */
    for (int64_t G = 0; G < g->groups; G++)
        gemm(dt, true, false, CigK, L, Cog, w + G * Cog * CigK * esz, CigK, xs + G * Cog * L * esz, L, 0.0,
             cols + G * CigK * L * esz, L);
    if (!identity) {
        memset(ys, 0, (size_t)(g->C_in * g->L_in) * esz);
        conv_col2im(dt, g, cols, ys, 0, g->C_in);
    }
    if (bias) apply_bias(dt, ys, bias, g->C_in, g->L_in, true);
}

typedef struct conv_job {
    em_dtype dt;
    const conv_geom *g;
    bool transposed;
    const char *x, *w, *bias;
    char *y;
    char *buf; /* `each` bytes of columns per chunk */
    size_t each;
} conv_job;

static void convolve_samples(void *ctx, int64_t k, int64_t begin, int64_t end)
{
    const conv_job *j = ctx;
    const conv_geom *g = j->g;
    const int64_t esz = (int64_t)em_dtypes[j->dt].size, in_side = g->C_in * g->L_in * esz,
                  out_side = g->C_out * g->L_out * esz;
    char *mine = j->buf + j->each * (size_t)k;
    for (int64_t n = begin; n < end; n++) {
        if (j->transposed)
            transposed_sample(j->dt, g, j->x + n * out_side, j->w, j->bias, j->y + n * in_side, mine);
        else
            forward_sample(j->dt, g, j->x + n * in_side, j->w, j->bias, j->y + n * out_side, mine);
    }
}

em_status cpu_convolution(const em_call *c)
{
    const em_conv_params p = em_conv_unpack(c->i);
    const conv_geom g = call_geom(c, &p);
    const em_dtype dt = c->dtype;
    const size_t esz = em_dtypes[dt].size;
    const char *x = em_tensor_data(c->in[0]), *w = em_tensor_data(c->in[1]);
    const char *bias = c->nin > 2 && c->in[2] ? em_tensor_data(c->in[2]) : NULL;
    char *y = em_tensor_data(c->out[0]);
    if (dt == EM_F32 && conv_dnnl_run(p.transposed ? CONV_DNNL_BACKWARD_DATA : CONV_DNNL_FORWARD, &g, p.nd,
                                      (const float *)x, (const float *)w, p.transposed ? NULL : (const float *)bias,
                                      (float *)y)) {
        if (p.transposed && bias)
            for (int64_t n = 0; n < g.N; n++)
                apply_bias(dt, y + n * g.C_in * g.L_in * (int64_t)esz, bias, g.C_in, g.L_in, true);
        return EM_OK;
    }
    const int64_t nchunks = conv_chunks(g.N, g.C_in * g.K * g.L_out);
    size_t total;
    conv_job j = {.dt = dt, .g = &g, .transposed = p.transposed, .x = x, .w = w, .bias = bias, .y = y};
    if (!(j.buf = col_buffers(&g, esz, nchunks, &j.each, &total))) return EM_ERR_MEMORY;
    conv_run_chunks(g.N, nchunks, convolve_samples, &j);
    em_cpu_free(j.buf, total);
    return EM_OK;
}

typedef struct wgrad_job {
    em_dtype dt;
    const conv_geom *g;
    const char *x, *go;
    char *dw, *partial; /* chunk 0 sums into dw, chunk k > 0 into partial's (k - 1)th */
    char *buf;          /* `each` bytes of columns per chunk */
    size_t each;
} wgrad_job;

static void weight_grad_samples(void *ctx, int64_t k, int64_t begin, int64_t end)
{
    const wgrad_job *j = ctx;
    const conv_geom *g = j->g;
    const em_dtype dt = j->dt;
    const int64_t esz = (int64_t)em_dtypes[dt].size, Cog = g->C_out / g->groups, CigK = g->C_in / g->groups * g->K,
                  L = g->L_out;
    char *acc = k == 0 ? j->dw : j->partial + (size_t)(k - 1) * (size_t)(g->C_out * CigK * esz);
    if (begin == end) memset(acc, 0, (size_t)(g->C_out * CigK * esz)); /* a chunk past the last sample */
    for (int64_t n = begin; n < end; n++) {
        const char *cols = columns(dt, g, j->x + n * g->C_in * g->L_in * esz, j->buf + j->each * (size_t)k);
        const char *gs = j->go + n * g->C_out * L * esz;
        for (int64_t G = 0; G < g->groups; G++)
            gemm(dt, false, true, Cog, CigK, L, gs + G * Cog * L * esz, L, cols + G * CigK * L * esz, L,
                 n == begin ? 0.0 : 1.0, acc + G * Cog * CigK * esz, CigK);
    }
}

/* in[0] X (input side), in[1] G (output side), out[0] dW; each chunk of
 * samples sums into its own dW (chunk 0: the result), then they are added. */
em_status cpu_convolution_weight_grad(const em_call *c)
{
    const em_conv_params p = em_conv_unpack(c->i);
    const em_tensor *X = c->in[0], *Gr = c->in[1];
    em_tensor *dW = c->out[0];
    const conv_geom g = conv_geom_make(&p, X->sizes[0], X->sizes[1], Gr->sizes[1], X->sizes + 2, Gr->sizes + 2,
                                       p.extra);
    const em_dtype dt = c->dtype;
    const size_t esz = em_dtypes[dt].size;
    const int64_t wnum = g.C_out * (g.C_in / g.groups * g.K);
    char *dw = em_tensor_data(dW);
    if (g.N == 0 || g.L_out == 0 || wnum == 0) {
        memset(dw, 0, (size_t)wnum * esz);
        return EM_OK;
    }
    const char *x = em_tensor_data(X), *go = em_tensor_data(Gr);
    if (dt == EM_F32 &&
        conv_dnnl_run(CONV_DNNL_BACKWARD_WEIGHTS, &g, p.nd, (const float *)x, (const float *)go, NULL, (float *)dw))
        return EM_OK;
    const int64_t nchunks = conv_chunks(g.N, g.C_in * g.K * g.L_out);
    size_t total;
    const size_t pbytes = (size_t)(nchunks - 1) * (size_t)wnum * esz;
    wgrad_job j = {.dt = dt, .g = &g, .x = x, .go = go, .dw = dw};
    j.buf = col_buffers(&g, esz, nchunks, &j.each, &total);
    j.partial = j.buf && nchunks > 1 ? em_cpu_alloc(pbytes) : NULL;
    if (!j.buf || (nchunks > 1 && !j.partial)) {
        if (j.buf) em_cpu_free(j.buf, total);
        return em_fail(EM_ERR_MEMORY, "convolution: out of memory for the weight gradient");
    }
    conv_run_chunks(g.N, nchunks, weight_grad_samples, &j);
    for (int64_t k = 1; k < nchunks; k++) {
        const char *q = j.partial + (size_t)(k - 1) * (size_t)wnum * esz;
        for (int64_t i = 0; i < wnum; i++) {
            if (dt == EM_F32)
                ((float *)dw)[i] += ((const float *)q)[i];
            else
                ((double *)dw)[i] += ((const double *)q)[i];
        }
    }
    if (j.partial) em_cpu_free(j.partial, pbytes);
    em_cpu_free(j.buf, total);
    return EM_OK;
}
