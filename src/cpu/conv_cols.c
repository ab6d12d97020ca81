/* im2col / col2im over the regular geometry (Note [Regular geometry] in
 * conv_cols.h), and the unfold/fold kernels built on them. */
#include "conv_cols.h"

conv_geom conv_geom_make(const em_conv_params *p, int64_t N, int64_t C_in, int64_t C_out, const int64_t *in,
                         const int64_t *out, const int64_t *k)
{
    conv_geom g = {.N = N, .groups = p->groups, .C_in = C_in, .C_out = C_out, .L_in = 1, .L_out = 1, .K = 1};
    const int lead = 3 - p->nd;
    for (int d = 0; d < 3; d++) {
        const int s = d - lead; /* the params' dim, < 0 for a padded one */
        g.in[d] = s < 0 ? 1 : in[s];
        g.out[d] = s < 0 ? 1 : out[s];
        g.k[d] = s < 0 ? 1 : k[s];
        g.stride[d] = s < 0 ? 1 : p->stride[s];
        g.pad[d] = s < 0 ? 0 : p->padding[s];
        g.dil[d] = s < 0 ? 1 : p->dilation[s];
        g.L_in *= g.in[d];
        g.L_out *= g.out[d];
        g.K *= g.k[d];
    }
    return g;
}

bool conv_cols_identity(const conv_geom *g)
{
    for (int d = 0; d < 3; d++)
        if (g->k[d] != 1 || g->stride[d] != 1 || g->pad[d] != 0) return false;
    return true;
}

int64_t conv_chunks(int64_t n, int64_t work)
{
    int64_t k = n > 1 ? em_parallel_chunks(n * work, EM_GRAIN_WINDOW) : 1, most = 2 * (int64_t)em_get_num_threads();
    if (k > most) k = most;
    return k < n ? k : n;
}

typedef struct chunks_job {
    int64_t n, nchunks;
    conv_chunk_fn fn;
    void *ctx;
} chunks_job;

static void run_chunk(void *ctx, int64_t k)
{
    const chunks_job *j = ctx;
    int64_t b, e;
    em_parallel_range(j->n, j->nchunks, 1, k, &b, &e);
    j->fn(j->ctx, k, b, e);
}

void conv_run_chunks(int64_t n, int64_t nchunks, conv_chunk_fn fn, void *ctx)
{
    chunks_job j = {.n = n, .nchunks = nchunks, .fn = fn, .ctx = ctx};
    em_parallel_run(nchunks, run_chunk, &j);
}

/* The outputs o in [0, n_out) whose tap o * stride + off falls in [0, n_in):
 * [*lo, *hi). */
static void tap_range(int64_t n_out, int64_t n_in, int64_t stride, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t l = off < 0 ? (-off + stride - 1) / stride : 0;
    int64_t h = n_in - off > 0 ? (n_in - off + stride - 1) / stride : 0;
    *lo = l < n_out ? l : n_out;
    *hi = h < *lo ? *lo : h < n_out ? h : n_out;
}

/* One loop nest for both directions: IM2COL copies image taps into a
 * column row (zeros outside the image); COL2IM adds a row back. */
#define COLS_LOOP(T, NAME, ROW_OUTSIDE, ROW_SPAN)                                                           \
    __attribute__((optimize("no-tree-loop-distribute-patterns"))) static void NAME##_##T(const conv_geom *g, T *restrict col, T *restrict x, int64_t c0, int64_t c1)      \
    {                                                                                                       \
        const int64_t L = g->L_out, o1n = g->out[1], o2n = g->out[2];                                       \
        for (int64_t c = c0; c < c1; c++)                                                                   \
            for (int64_t k0 = 0; k0 < g->k[0]; k0++)                                                        \
                for (int64_t k1 = 0; k1 < g->k[1]; k1++)                                                    \
                    for (int64_t k2 = 0; k2 < g->k[2]; k2++) {                                              \
                        T *row = col + (c * g->K + (k0 * g->k[1] + k1) * g->k[2] + k2) * L;                 \
                        T *xc = x + c * g->L_in;                                                            \
                        const int64_t off2 = k2 * g->dil[2] - g->pad[2], s2 = g->stride[2];                 \
                        int64_t lo, hi;                                                                     \
                        tap_range(o2n, g->in[2], s2, off2, &lo, &hi);                                       \
                        for (int64_t o0 = 0; o0 < g->out[0]; o0++) {                                        \
                            const int64_t i0 = o0 * g->stride[0] + k0 * g->dil[0] - g->pad[0];              \
                            for (int64_t o1 = 0; o1 < o1n; o1++) {                                          \
                                const int64_t i1 = o1 * g->stride[1] + k1 * g->dil[1] - g->pad[1];          \
                                T *r = row + (o0 * o1n + o1) * o2n;                                         \
                                if (i0 < 0 || i0 >= g->in[0] || i1 < 0 || i1 >= g->in[1]) {                 \
                                    ROW_OUTSIDE(r, 0, o2n);                                                 \
                                    continue;                                                               \
                                }                                                                           \
                                T *xr = xc + (i0 * g->in[1] + i1) * g->in[2];                        \
                                ROW_OUTSIDE(r, 0, lo);                                                      \
                                ROW_SPAN(r, xr, lo, hi, s2, off2);                                                \
                                ROW_OUTSIDE(r, hi, o2n);                                                    \
                            }                                                                               \
                        }                                                                                   \
                    }                                                                                       \
    }

/* Rows are often short (a LeNet row is 10 elements): plain loops, which the
 * compiler vectorizes, cost less than a memset/memcpy call per row. */
#define ZERO_SPAN(r, a, b)                                   \
    do {                                                     \
        for (int64_t o = (a); o < (b); o++) (r)[o] = 0;      \
    } while (0)
#define NOTHING(r, a, b) ((void)0)
/* row[o] <-> xr[o * s + off] for o in [lo, hi) (all taps inside the image) */
#define GATHER(r, xr, lo, hi, s, off)                                                \
    do {                                                                             \
        if ((s) == 1) {                                                              \
            for (int64_t o = (lo); o < (hi); o++) (r)[o] = (xr)[o + (off)];          \
        } else {                                                                     \
            for (int64_t o = (lo); o < (hi); o++) (r)[o] = (xr)[o * (s) + (off)];    \
        }                                                                            \
    } while (0)
#define SCATTER_ADD(r, xr, lo, hi, s, off)                                           \
    do {                                                                             \
        if ((s) == 1)                                                                \
            for (int64_t o = (lo); o < (hi); o++) (xr)[o + (off)] += (r)[o];         \
        else                                                                         \
            for (int64_t o = (lo); o < (hi); o++) (xr)[o * (s) + (off)] += (r)[o];   \
    } while (0)

COLS_LOOP(float, im2col, ZERO_SPAN, GATHER)
COLS_LOOP(double, im2col, ZERO_SPAN, GATHER)
COLS_LOOP(float, col2im, NOTHING, SCATTER_ADD)
COLS_LOOP(double, col2im, NOTHING, SCATTER_ADD)

void conv_im2col(em_dtype dt, const conv_geom *g, const void *x, void *col, int64_t c0, int64_t c1)
{
    if (dt == EM_F32)
        im2col_float(g, col, (float *)x, c0, c1);
    else
        im2col_double(g, col, (double *)x, c0, c1);
}

void conv_col2im(em_dtype dt, const conv_geom *g, const void *col, void *x, int64_t c0, int64_t c1)
{
    if (dt == EM_F32)
        col2im_float(g, (float *)col, x, c0, c1);
    else
        col2im_double(g, (double *)col, x, c0, c1);
}

/* ---- unfold / fold kernels ---------------------------------------------------
 * im2col: in[0] the image (N, C, H, W), out[0] the columns (N, C * kh * kw, L);
 * col2im: in[0] the columns, out[0] the image; the kernel size is the params' `extra`.
 * Both contiguous, float32 or float64 (the op layer converts half types). */
static conv_geom fold_geom(const em_call *c, const em_tensor *image, const em_tensor *cols)
{
    const em_conv_params p = em_conv_unpack(c->i);
    int64_t out[2];
    for (int d = 0; d < 2; d++) /* block positions per dim */
        out[d] = (image->sizes[2 + d] + 2 * p.padding[d] - p.dilation[d] * (p.extra[d] - 1) - 1) / p.stride[d] + 1;
    EM_UNUSED(cols);
    return conv_geom_make(&p, image->sizes[0], image->sizes[1], 0, image->sizes + 2, out, p.extra);
}

typedef struct fold_job {
    const em_call *c;
    conv_geom g;
    bool to_cols; /* im2col, else col2im */
    const char *from;
    char *to;
} fold_job;

static void fold_samples(void *ctx, int64_t k, int64_t begin, int64_t end)
{
    const fold_job *j = ctx;
    const size_t esz = em_dtypes[j->c->dtype].size;
    const int64_t image = j->g.C_in * j->g.L_in * (int64_t)esz, cols = j->g.C_in * j->g.K * j->g.L_out * (int64_t)esz;
    for (int64_t n = begin; n < end; n++) {
        if (j->to_cols)
            conv_im2col(j->c->dtype, &j->g, j->from + n * image, j->to + n * cols, 0, j->g.C_in);
        else
            conv_col2im(j->c->dtype, &j->g, j->from + n * cols, j->to + n * image, 0, j->g.C_in);
    }
}

em_status cpu_im2col(const em_call *c)
{
    fold_job j = {.c = c, .g = fold_geom(c, c->in[0], c->out[0]), .to_cols = true, .from = em_tensor_data(c->in[0]),
                  .to = em_tensor_data(c->out[0])};
    conv_run_chunks(j.g.N, conv_chunks(j.g.N, j.g.C_in * j.g.K * j.g.L_out), fold_samples, &j);
    return EM_OK;
}

em_status cpu_col2im(const em_call *c)
{
    fold_job j = {.c = c, .g = fold_geom(c, c->out[0], c->in[0]), .from = em_tensor_data(c->in[0]),
                  .to = em_tensor_data(c->out[0])};
    memset(j.to, 0, (size_t)(j.g.N * j.g.C_in * j.g.L_in) * em_dtypes[c->dtype].size);
    conv_run_chunks(j.g.N, conv_chunks(j.g.N, j.g.C_in * j.g.K * j.g.L_out), fold_samples, &j);
    return EM_OK;
}
