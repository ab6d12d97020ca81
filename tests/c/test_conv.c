/* Convolutions: em_convolution (regular and transposed, 1-3 spatial dims,
 * stride, padding, dilation, groups, bias) against a direct loop computed
 * here in double; the unbatched and 'same' forms; the gradient functions;
 * im2col/col2im; dtypes; non-contiguous inputs; PyTorch's error cases. */
#include "test.h"

/* ---- reference ---------------------------------------------------------------- */
typedef struct conv_case {
    int nd;
    int64_t N, C_in, C_out, groups;
    int64_t in[3], k[3], stride[3], pad[3], dil[3], outpad[3];
    bool transposed, bias;
} conv_case;

/* spatial sizes padded to 3 with leading 1s */
static void pad3(int nd, const int64_t *v, int64_t fill, int64_t *out)
{
    for (int d = 0; d < 3; d++) out[d] = d < 3 - nd ? fill : v[d - (3 - nd)];
}

/* Output spatial sizes of case c. */
static void out_sizes(const conv_case *c, int64_t *out)
{
    for (int d = 0; d < c->nd; d++) {
        int64_t span = c->dil[d] * (c->k[d] - 1) + 1;
        out[d] = c->transposed ? (c->in[d] - 1) * c->stride[d] - 2 * c->pad[d] + span + c->outpad[d]
                               : (c->in[d] + 2 * c->pad[d] - span) / c->stride[d] + 1;
    }
}

/* y = conv(x, w) + b in double; the transposed case scatters each input
 * element through the kernel (the definition, not the adjoint trick). */
static double *ref_conv(const conv_case *c, const double *x, const double *w, const double *b, int64_t *ysz)
{
    int64_t o[3], in3[3], k3[3], s3[3], p3[3], d3[3], o3[3];
    out_sizes(c, o);
    pad3(c->nd, c->in, 1, in3), pad3(c->nd, c->k, 1, k3), pad3(c->nd, c->stride, 1, s3);
    pad3(c->nd, c->pad, 0, p3), pad3(c->nd, c->dil, 1, d3), pad3(c->nd, o, 1, o3);
    const int64_t Lin = in3[0] * in3[1] * in3[2], Lout = o3[0] * o3[1] * o3[2], K = k3[0] * k3[1] * k3[2];
    const int64_t G = c->groups, Cig = c->C_in / G, Cog = c->C_out / G;
    double *y = calloc((size_t)(c->N * c->C_out * Lout) + 1, sizeof *y);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t co = 0; co < c->C_out; co++)
            for (int64_t l = 0; l < Lout; l++) y[(n * c->C_out + co) * Lout + l] = b ? b[co] : 0;
    /* a tap: input position a = o * s - p + k * d (regular), or output position o from input a (transposed) */
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t g = 0; g < G; g++)
            for (int64_t ci = 0; ci < Cig; ci++)
                for (int64_t co = 0; co < Cog; co++)
                    for (int64_t kk = 0; kk < K; kk++) {
                        int64_t kc[3] = {kk / (k3[1] * k3[2]), kk / k3[2] % k3[1], kk % k3[2]};
                        const int64_t *grid = c->transposed ? in3 : o3;
                        for (int64_t q = 0; q < grid[0] * grid[1] * grid[2]; q++) {
                            int64_t qc[3] = {q / (grid[1] * grid[2]), q / grid[2] % grid[1], q % grid[2]}, t[3];
                            bool inside = true;
                            const int64_t *lim = c->transposed ? o3 : in3;
                            for (int d = 0; d < 3; d++) {
                                t[d] = qc[d] * s3[d] - p3[d] + kc[d] * d3[d];
                                inside &= t[d] >= 0 && t[d] < lim[d];
                            }
                            if (!inside) continue;
                            int64_t tl = (t[0] * lim[1] + t[1]) * lim[2] + t[2];
                            if (c->transposed) { /* x (N, C_in, in) -> y (N, C_out, out); w (C_in, Cog, k) */
                                double wv = w[((g * Cig + ci) * Cog + co) * K + kk];
                                y[(n * c->C_out + g * Cog + co) * Lout + tl] += wv * x[(n * c->C_in + g * Cig + ci) * Lin + q];
                            } else { /* w (C_out, Cig, k) */
                                double wv = w[((g * Cog + co) * Cig + ci) * K + kk];
                                y[(n * c->C_out + g * Cog + co) * Lout + q] += wv * x[(n * c->C_in + g * Cig + ci) * Lin + tl];
                            }
                        }
                    }
    ysz[0] = c->N, ysz[1] = c->C_out;
    for (int d = 0; d < c->nd; d++) ysz[2 + d] = o[d];
    return y;
}

static void case_shapes(const conv_case *c, int64_t *xs, int64_t *ws)
{
    xs[0] = c->N, xs[1] = c->C_in;
    ws[0] = c->transposed ? c->C_in : c->C_out;
    ws[1] = c->transposed ? c->C_out / c->groups : c->C_in / c->groups;
    for (int d = 0; d < c->nd; d++) xs[2 + d] = c->in[d], ws[2 + d] = c->k[d];
}

/* Runs case c in dtype dt (layout 1: non-contiguous inputs) against ref_conv. */
static bool run_case(const conv_case *c, em_dtype dt, int layout)
{
    int64_t xs[5], ws[5], ysz[5], bs[1] = {c->C_out};
    case_shapes(c, xs, ws);
    em_tensor *x = tlayout(dt, c->nd + 2, xs, layout, -1, 1), *w = tlayout(dt, c->nd + 2, ws, layout, -1, 1);
    em_tensor *b = c->bias ? trand(dt, 1, bs, -1, 1) : NULL;
    double *xv = tvals(x), *wv = tvals(w), *bv = b ? tvals(b) : NULL;
    double *want = ref_conv(c, xv, wv, bv, ysz);
    em_tensor *y = em_convolution(x, w, b, c->nd, c->stride, c->pad, c->dil, c->transposed, c->outpad, c->groups);
    bool ok = y && tshape_is(y, c->nd + 2, ysz) && em_dtype_of(y) == dt &&
              tclose(y, want, dt == EM_BF16 ? 2e-2 : trtol(dt), dt == EM_BF16 ? 5e-2 : 1e-4);
    if (!ok) fprintf(stderr, "  conv case nd=%d transposed=%d groups=%lld dtype %s: %s\n", c->nd, c->transposed,
                     (long long)c->groups, em_dtype_name(dt), y ? "mismatch" : em_last_error());
    free(xv), free(wv), free(bv), free(want);
    RELEASE(x, w, b, y);
    return ok;
}

static const conv_case cases[] = {
    /* nd, N, Cin, Cout, groups, in, k, stride, pad, dil, outpad, transposed, bias */
    {2, 2, 3, 4, 1, {5, 6}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, {0}, false, true},
    {2, 3, 4, 6, 2, {7, 5}, {3, 2}, {2, 1}, {1, 0}, {1, 2}, {0}, false, true},
    {2, 2, 4, 4, 4, {6, 6}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, {0}, false, false}, /* depthwise */
    {2, 2, 3, 5, 1, {4, 4}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, false, true},  /* 1x1: a GEMM */
    {2, 1, 2, 3, 1, {5, 5}, {5, 5}, {1, 1}, {0, 0}, {1, 1}, {0}, false, false}, /* kernel = image */
    {1, 3, 2, 4, 2, {9}, {3}, {2}, {2}, {2}, {0}, false, true},
    {1, 2, 3, 2, 1, {5}, {1}, {1}, {0}, {1}, {0}, false, false},
    {3, 2, 2, 3, 1, {4, 5, 3}, {2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {0}, false, true},
    {2, 130, 2, 3, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, false, true}, /* chunks of samples, threads */
    {2, 2, 3, 4, 1, {4, 5}, {3, 3}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, true, true},
    {2, 2, 4, 6, 2, {3, 4}, {3, 2}, {2, 3}, {1, 0}, {1, 2}, {1, 2}, true, true},
    {2, 2, 3, 3, 3, {4, 4}, {2, 2}, {2, 2}, {0, 1}, {1, 1}, {0, 1}, true, false},
    {2, 2, 3, 2, 1, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, true, true}, /* 1x1 transposed */
    {1, 2, 2, 4, 1, {5}, {3}, {3}, {1}, {2}, {2}, true, true},
    {3, 1, 2, 2, 2, {2, 3, 2}, {2, 2, 3}, {2, 1, 2}, {0, 1, 1}, {1, 2, 1}, {1, 0, 0}, true, true},
    {2, 130, 2, 2, 1, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true, true}, /* chunks */
    {2, 3, 2, 3, 1, {50, 50}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, false, true}, /* one sample a GEMM */
};

TEST(conv_values_against_reference)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        CHECK_MSG(run_case(&cases[k], EM_F64, 0), "case %zu f64", k);
        CHECK_MSG(run_case(&cases[k], EM_F32, k % 2), "case %zu f32", k);
    }
    CHECK(run_case(&cases[1], EM_BF16, 0));
    CHECK(run_case(&cases[10], EM_BF16, 1));
    COVER(EM_OP_convolution);
}

/* ---- forms --------------------------------------------------------------------- */
TEST(conv_unbatched_and_same)
{
    em_tensor *x = trand(EM_F64, SHAPE(3, 6, 7), -1, 1), *w = trand(EM_F64, SHAPE(4, 3, 2, 3), -1, 1);
    em_tensor *xb = em_unsqueeze(x, 0);
    const int64_t pad[2] = {1, 1}, dil[2] = {2, 1};
    em_tensor *y = em_conv(x, w, NULL, 2, NULL, pad, NULL, 1), *yb = em_conv(xb, w, NULL, 2, NULL, pad, NULL, 1);
    CHECK(y && yb && tshape_is(y, SHAPE(4, 7, 7)) && tshape_is(yb, SHAPE(1, 4, 7, 7)));
    double *want = tvals(yb);
    CHECK(tclose(y, want, 1e-12, 1e-12));
    free(want);
    /* 'same' with an even kernel (dil * (k - 1) odd): PyTorch pads the extra zero after the input */
    em_tensor *s = em_conv_same(x, w, NULL, 2, NULL, dil, 1);
    CHECK(s && tshape_is(s, SHAPE(4, 6, 7)));
    for (int64_t co = 0; co < 4; co++)
        for (int64_t i = 0; i < 6; i++)
            for (int64_t j = 0; j < 7; j++) {
                double acc = 0, v, wv;
                for (int64_t ci = 0; ci < 3; ci++)
                    for (int64_t a = 0; a < 2; a++)
                        for (int64_t b = 0; b < 3; b++) {
                            int64_t ii = i - 1 + a * 2, jj = j - 1 + b; /* total (2, 2): left 1 each */
                            if (ii < 0 || ii >= 6 || jj < 0 || jj >= 7) continue;
                            em_get(x, (int64_t[]){ci, ii, jj}, &v);
                            em_get(w, (int64_t[]){co, ci, a, b}, &wv);
                            acc += v * wv;
                        }
                em_get(s, (int64_t[]){co, i, j}, &v);
                CHECK_MSG(fabs(v - acc) < 1e-12, "same [%lld %lld %lld]: %g vs %g", (long long)co, (long long)i,
                          (long long)j, v, acc);
            }
    em_tensor *w2 = trand(EM_F64, SHAPE(4, 3, 2, 2), -1, 1), *s2 = em_conv_same(x, w2, NULL, 2, NULL, NULL, 1);
    CHECK(s2 && tshape_is(s2, SHAPE(4, 6, 7)));
    double v, acc = 0, xv, wv; /* out [0, 5, 6]: taps (5..6, 6..7) with the zero after */
    for (int64_t ci = 0; ci < 3; ci++)
        for (int64_t a = 0; a < 2; a++)
            for (int64_t b = 0; b < 2; b++) {
                if (5 + a >= 6 || 6 + b >= 7) continue;
                em_get(x, (int64_t[]){ci, 5 + a, 6 + b}, &xv);
                em_get(w2, (int64_t[]){0, ci, a, b}, &wv);
                acc += xv * wv;
            }
    em_get(s2, (int64_t[]){0, 5, 6}, &v);
    CHECK(fabs(v - acc) < 1e-12);
    const int64_t st2[2] = {2, 1};
    CHECK_ERR(em_conv_same(x, w, NULL, 2, st2, NULL, 1), EM_ERR_RUNTIME);
    em_tensor *wt = trand(EM_F64, SHAPE(3, 2, 3, 3), -1, 1), *t = em_conv_transpose(x, wt, NULL, 2, NULL, NULL, NULL, 1, NULL);
    CHECK(t && tshape_is(t, SHAPE(2, 8, 9)));
    RELEASE(x, w, xb, y, yb, s, w2, s2, wt, t);
}

/* ---- gradient functions --------------------------------------------------------- */
/* <conv(x, w), g> == <x, input_grad(g)> == <w, weight_grad(x, g)> */
TEST(conv_gradient_functions_are_adjoints)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const conv_case *c = &cases[k];
        int64_t xs[5], ws[5];
        case_shapes(c, xs, ws);
        em_tensor *x = trand(EM_F64, c->nd + 2, xs, -1, 1), *w = trand(EM_F64, c->nd + 2, ws, -1, 1);
        em_tensor *y = em_convolution(x, w, NULL, c->nd, c->stride, c->pad, c->dil, c->transposed, c->outpad, c->groups);
        CHECK(y);
        em_tensor *g = trand(EM_F64, em_ndim(y), em_sizes(y), -1, 1);
        em_tensor *gx = em_convolution_input_grad(g, w, c->nd + 2, xs, c->nd, c->stride, c->pad, c->dil,
                                                  c->transposed, c->groups);
        em_tensor *gw = em_convolution_weight_grad(x, g, c->k, c->nd, c->stride, c->pad, c->dil, c->transposed,
                                                   c->groups);
        CHECK_MSG(gx && gw && tshape_is(gx, c->nd + 2, xs) && tshape_is(gw, c->nd + 2, ws), "case %zu: %s", k,
                  em_last_error());
        double yg = 0, xgx = 0, wgw = 0;
        for (int64_t i = 0; i < em_numel(y); i++) yg += tval(y, i) * tval(g, i);
        for (int64_t i = 0; i < em_numel(x); i++) xgx += tval(x, i) * tval(gx, i);
        for (int64_t i = 0; i < em_numel(w); i++) wgw += tval(w, i) * tval(gw, i);
        CHECK_MSG(fabs(yg - xgx) < 1e-9 * (1 + fabs(yg)) && fabs(yg - wgw) < 1e-9 * (1 + fabs(yg)),
                  "case %zu: %g %g %g", k, yg, xgx, wgw);
        RELEASE(x, w, y, g, gx, gw);
    }
    COVER(EM_OP_convolution_weight_grad);
}

/* ---- im2col / col2im --------------------------------------------------------------- */
TEST(conv_im2col_col2im)
{
    const int64_t k[2] = {2, 3}, dil[2] = {2, 1}, pad[2] = {1, 0}, st[2] = {1, 2};
    em_tensor *x = trand(EM_F64, SHAPE(2, 3, 5, 7), -1, 1);
    em_tensor *cols = em_im2col(x, k, dil, pad, st);
    /* blocks: (5 + 2 - 3) / 1 + 1 = 5, (7 - 3) / 2 + 1 = 3 */
    CHECK(cols && tshape_is(cols, SHAPE(2, 18, 15)));
    for (int64_t i = 0; i < em_numel(cols); i++) {
        int64_t idx[3], n, row, l, c, ki, kj, bi, bj;
        tunravel(i, 3, em_sizes(cols), idx);
        n = idx[0], row = idx[1], l = idx[2];
        c = row / 6, ki = row / 3 % 2, kj = row % 3, bi = l / 3, bj = l % 3;
        int64_t hi = bi - 1 + ki * 2, wi = bj * 2 + kj;
        double want = 0;
        if (hi >= 0 && hi < 5 && wi >= 0 && wi < 7) em_get(x, (int64_t[]){n, c, hi, wi}, &want);
        CHECK_MSG(tval(cols, i) == want, "im2col [%lld]", (long long)i);
    }
    /* fold is unfold's adjoint */
    em_tensor *g = trand(EM_F64, SHAPE(2, 18, 15), -1, 1);
    em_tensor *img = em_col2im(g, (int64_t[]){5, 7}, k, dil, pad, st);
    CHECK(img && tshape_is(img, SHAPE(2, 3, 5, 7)));
    double a = 0, b = 0;
    for (int64_t i = 0; i < em_numel(g); i++) a += tval(g, i) * tval(cols, i);
    for (int64_t i = 0; i < em_numel(x); i++) b += tval(x, i) * tval(img, i);
    CHECK(fabs(a - b) < 1e-10);
    /* unbatched, float32 and float16 (through float32), non-contiguous */
    em_tensor *x3 = em_select(x, 0, 1), *u = em_im2col(x3, k, dil, pad, st);
    em_tensor *uh_in = em_to_dtype(x3, EM_F16), *uh = em_im2col(uh_in, k, dil, pad, st);
    CHECK(u && tshape_is(u, SHAPE(18, 15)) && uh && em_dtype_of(uh) == EM_F16);
    em_tensor *c1 = em_select(cols, 0, 1);
    double *want = tvals(c1);
    CHECK(tclose(u, want, 1e-12, 0) && tclose(uh, want, 1e-2, 1e-2));
    free(want);
    em_tensor *xn = tnoncontig(x), *cn = em_im2col(xn, k, dil, pad, st);
    want = tvals(cols);
    CHECK(cn && tclose(cn, want, 1e-12, 0));
    free(want);
    em_tensor *f2 = em_col2im(c1, (int64_t[]){5, 7}, k, dil, pad, st);
    CHECK(f2 && tshape_is(f2, SHAPE(3, 5, 7)));
    COVER(EM_OP_im2col, EM_OP_col2im);
    /* errors */
    const int64_t k0[2] = {0, 2}, big[2] = {6, 6}, neg[2] = {-1, 0};
    CHECK_ERR(em_im2col(x, k0, NULL, NULL, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_im2col(x, k, NULL, neg, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_im2col(x, big, NULL, NULL, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_im2col(c1, k, NULL, NULL, NULL), EM_ERR_SHAPE); /* 2-d */
    em_tensor *xi = tints(EM_I32, SHAPE(1, 1, 4, 4), 0, 5);
    CHECK_ERR(em_im2col(xi, k, NULL, NULL, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_col2im(g, (int64_t[]){5, 9}, k, dil, pad, st), EM_ERR_SHAPE);
    CHECK_ERR(em_col2im(x, (int64_t[]){5, 7}, k, dil, pad, st), EM_ERR_SHAPE);
    em_tensor *g17 = trand(EM_F64, SHAPE(2, 17, 15), -1, 1);
    CHECK_ERR(em_col2im(g17, (int64_t[]){5, 7}, k, dil, pad, st), EM_ERR_SHAPE);
    RELEASE(x, cols, g, img, x3, u, uh_in, uh, c1, xn, cn, f2, xi, g17);
}

/* ---- errors -------------------------------------------------------------------------- */
static bool msg_has(const char *s) { return strstr(em_last_error(), s) != NULL; }

TEST(conv_errors)
{
    em_tensor *x = trand(EM_F32, SHAPE(2, 3, 5, 5), -1, 1), *w = trand(EM_F32, SHAPE(4, 3, 3, 3), -1, 1);
    em_tensor *x4 = trand(EM_F32, SHAPE(2, 4, 5, 5), -1, 1), *xs = trand(EM_F32, SHAPE(2, 3, 2, 2), -1, 1);
    em_tensor *wd = trand(EM_F64, SHAPE(4, 3, 3, 3), -1, 1), *b3 = trand(EM_F32, SHAPE(3), -1, 1);
    em_tensor *wg = trand(EM_F32, SHAPE(4, 1, 3, 3), -1, 1), *x5 = trand(EM_F32, SHAPE(2, 2, 3, 5, 5), -1, 1);
    em_tensor *xh = em_to_dtype(x, EM_F16), *wh = em_to_dtype(w, EM_F16);
    em_tensor *xi = tints(EM_I64, SHAPE(2, 3, 5, 5), 0, 3), *wi = tints(EM_I64, SHAPE(4, 3, 3, 3), 0, 3);
    CHECK_ERR(em_conv(x4, w, NULL, 2, NULL, NULL, NULL, 1), EM_ERR_SHAPE);
    CHECK(msg_has("Given groups=1, weight of size [4, 3, 3, 3], expected input[2, 4, 5, 5] to have 3 channels, "
                  "but got 4 channels instead"));
    CHECK_ERR(em_conv(xs, w, NULL, 2, NULL, NULL, NULL, 1), EM_ERR_SHAPE);
    CHECK(msg_has("Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be "
                  "greater than actual input size"));
    CHECK_ERR(em_conv(x, wg, NULL, 2, NULL, NULL, NULL, 3), EM_ERR_SHAPE);
    CHECK(msg_has("expected weight to be divisible by 3 at dimension 0, but got weight of size [[4, 1, 3, 3]]"));
    CHECK_ERR(em_conv(x, w, NULL, 2, NULL, NULL, NULL, 0), EM_ERR_RUNTIME);
    CHECK_ERR(em_conv(x, w, NULL, 2, NULL, (int64_t[]){-1, 0}, NULL, 1), EM_ERR_RUNTIME);
    CHECK(msg_has("negative padding is not supported"));
    CHECK_ERR(em_conv(x, w, NULL, 2, (int64_t[]){0, 1}, NULL, NULL, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_conv(x, w, NULL, 2, NULL, NULL, (int64_t[]){1, 0}, 1), EM_ERR_RUNTIME);
    CHECK_ERR(em_conv(x5, w, NULL, 2, NULL, NULL, NULL, 1), EM_ERR_SHAPE);
    CHECK(msg_has("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 2, 3, 5, 5]"));
    CHECK_ERR(em_convolution(x, w, NULL, 3, NULL, NULL, NULL, false, NULL, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_conv(x, wd, NULL, 2, NULL, NULL, NULL, 1), EM_ERR_DTYPE);
    CHECK(msg_has("Input type (torch.FloatTensor) and weight type (torch.DoubleTensor) should be the same"));
    CHECK_ERR(em_conv(x, w, b3, 2, NULL, NULL, NULL, 1), EM_ERR_SHAPE);
    CHECK(msg_has("expected bias to be 1-dimensional with 4 elements, but got bias of size [3] instead"));
    CHECK_ERR(em_conv(xh, wh, NULL, 2, NULL, NULL, NULL, 1), EM_ERR_DTYPE);
    CHECK(msg_has("\"slow_conv2d_cpu\" not implemented for 'Half'"));
    CHECK_ERR(em_conv(xi, wi, NULL, 2, NULL, NULL, NULL, 1), EM_ERR_DTYPE);
    CHECK_ERR(em_conv(NULL, w, NULL, 2, NULL, NULL, NULL, 1), EM_ERR_VALUE);
    /* transposed */
    em_tensor *wt = trand(EM_F32, SHAPE(3, 4, 3, 3), -1, 1);
    CHECK_ERR(em_conv_transpose(x, w, NULL, 2, NULL, NULL, NULL, 1, NULL), EM_ERR_SHAPE);
    CHECK(msg_has("Given transposed=1, weight of size [4, 3, 3, 3], expected input[2, 3, 5, 5] to have 4 channels"));
    CHECK_ERR(em_conv_transpose(x, wt, NULL, 2, (int64_t[]){2, 2}, NULL, (int64_t[]){2, 2}, 1, NULL), EM_ERR_RUNTIME);
    CHECK(msg_has("output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
                  "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1"));
    CHECK_ERR(em_conv_transpose(x, wt, NULL, 2, NULL, (int64_t[]){4, 4}, NULL, 1, NULL), EM_ERR_SHAPE);
    CHECK(msg_has("Given input size per channel: (5 x 5). Calculated output size per channel: (-1 x -1). Output "
                  "size is too small"));
    CHECK_ERR(em_conv_transpose(x, wt, NULL, 2, NULL, NULL, NULL, 2, NULL), EM_ERR_SHAPE);
    RELEASE(x, w, x4, xs, wd, b3, wg, x5, xh, wh, xi, wi, wt);
}

TEST(conv_empty)
{
    em_tensor *x = trand(EM_F32, SHAPE(0, 3, 5, 5), -1, 1), *w = trand(EM_F32, SHAPE(4, 3, 3, 3), -1, 1);
    em_tensor *b = trand(EM_F32, SHAPE(4), -1, 1), *y = em_conv(x, w, b, 2, NULL, NULL, NULL, 1);
    CHECK(y && tshape_is(y, SHAPE(0, 4, 3, 3)));
    em_tensor *x0 = trand(EM_F32, SHAPE(2, 0, 5, 5), -1, 1), *w0 = trand(EM_F32, SHAPE(4, 0, 3, 3), -1, 1);
    em_tensor *y0 = em_conv(x0, w0, b, 2, NULL, NULL, NULL, 1);
    CHECK(y0 && tshape_is(y0, SHAPE(2, 4, 3, 3)));
    CHECK(tval(y0, 9) == tval(b, 1)); /* no channels: the bias alone */
    RELEASE(x, w, b, y, x0, w0, y0);
}
