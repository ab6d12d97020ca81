/* im2col / col2im over the regular geometry (Note [Regular geometry] in
 * conv_cols.h), and the unfold/fold kernels built on them. */
#include "conv_cols.h"
#include <omp.h>

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

int conv_threads(int64_t n, int64_t work)
{
    int nt = omp_get_max_threads();
    if (n < 2 || nt < 2 || n * work < EM_GRAIN) return 1;
    return n < nt ? (int)n : nt;
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

em_status cpu_im2col(const em_call *c)
{
    const em_tensor *x = c->in[0];
    em_tensor *cols = c->out[0];
    const conv_geom g = fold_geom(c, x, cols);
    const size_t esz = em_dtypes[c->dtype].size;
    const char *xp = em_tensor_data(x);
    char *cp = em_tensor_data(cols);
    const int nt = conv_threads(g.N, g.C_in * g.K * g.L_out);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t n = 0; n < g.N; n++)
        conv_im2col(c->dtype, &g, xp + n * g.C_in * g.L_in * esz, cp + n * g.C_in * g.K * g.L_out * esz, 0, g.C_in);
    return EM_OK;
}

em_status cpu_col2im(const em_call *c)
{
    const em_tensor *cols = c->in[0];
    em_tensor *x = c->out[0];
    const conv_geom g = fold_geom(c, x, cols);
    const size_t esz = em_dtypes[c->dtype].size;
    const char *cp = em_tensor_data(cols);
    char *xp = em_tensor_data(x);
    memset(xp, 0, (size_t)(g.N * g.C_in * g.L_in) * esz);
    const int nt = conv_threads(g.N, g.C_in * g.K * g.L_out);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t n = 0; n < g.N; n++)
        conv_col2im(c->dtype, &g, cp + n * g.C_in * g.K * g.L_out * esz, xp + n * g.C_in * g.L_in * esz, 0, g.C_in);
    return EM_OK;
}
