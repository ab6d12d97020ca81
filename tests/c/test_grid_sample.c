/* grid_sample, its backward op and affine_grid (include/ember/pool.h): (tri)linear and nearest
 * values against a naive double reference for every padding mode (the reflection written as
 * repeated mirroring), bicubic against values from PyTorch, empty shapes, errors; float64
 * gradchecks of input, grid and theta, and the refused double backward. Comparisons with
 * PyTorch over many configurations are in tests/python/test_nn_grid.py. */
#include "test.h"

/* the pixel coordinate of grid value g along a dim of n, padded as `pad` says */
static double ref_coord(double g, int64_t n, int pad, bool align)
{
    double x = align ? (g + 1) / 2 * (double)(n - 1) : ((g + 1) * (double)n - 1) / 2;
    if (pad == EM_GRID_REFLECTION) {
        double lo = align ? 0 : -0.5, hi = align ? (double)(n - 1) : (double)n - 0.5;
        if (lo == hi) return 0;
        while (x < lo || x > hi) x = x < lo ? 2 * lo - x : 2 * hi - x;
    }
    if (pad != EM_GRID_ZEROS) x = fmin(fmax(x, 0), (double)(n - 1));
    return x;
}

/* out[n][c][p] of a contiguous-read (N, C, *sp) input at grid (N, P, nd), linear or nearest */
static double *ref_sample(const em_tensor *x, const em_tensor *grid, int mode, int pad, bool align)
{
    int nd = em_ndim(x) - 2;
    const int64_t *xs = em_sizes(x);
    int64_t N = xs[0], C = xs[1], plane = 1, P = em_numel(grid) / (N * nd), sz[3], st[3];
    for (int j = 0; j < nd; j++) sz[j] = xs[em_ndim(x) - 1 - j], st[j] = plane, plane *= sz[j];
    double *xv = tvals(x), *gv = tvals(grid), *out = calloc((size_t)(N * C * P) + 1, sizeof *out);
    for (int64_t n = 0; n < N; n++)
        for (int64_t p = 0; p < P; p++) {
            double c[3];
            for (int j = 0; j < nd; j++) c[j] = ref_coord(gv[(n * P + p) * nd + j], sz[j], pad, align);
            for (int corner = 0; corner < (mode == EM_GRID_NEAREST ? 1 : 1 << nd); corner++) {
                double w = 1;
                int64_t off = 0;
                bool in = true;
                for (int j = 0; j < nd; j++) {
                    double f = mode == EM_GRID_NEAREST ? nearbyint(c[j]) : floor(c[j]) + (corner >> j & 1);
                    if (mode != EM_GRID_NEAREST) w *= 1 - fabs(c[j] - f);
                    in &= f >= 0 && f < (double)sz[j];
                    off += (int64_t)f * st[j];
                }
                for (int64_t ch = 0; ch < C && in; ch++) out[(n * C + ch) * P + p] += w * xv[(n * C + ch) * plane + off];
            }
        }
    free(xv), free(gv);
    return out;
}

TEST(grid_sample_linear_nearest_values)
{
    for (int nd = 2; nd <= 3; nd++)
        for (int dt = 0; dt < 2; dt++) {
            em_dtype d = dt ? EM_F32 : EM_F64;
            em_tensor *x = nd == 2 ? trand(d, SHAPE(2, 3, 4, 5), -1, 1) : trand(d, SHAPE(2, 2, 3, 4, 2), -1, 1);
            em_tensor *g = nd == 2 ? trand(d, SHAPE(2, 3, 4, 2), -1.6, 1.6) : trand(d, SHAPE(2, 2, 3, 2, 3), -1.6, 1.6);
            em_tensor *xn = tnoncontig(x), *gn = tnoncontig(g);
            for (int mode = 0; mode < 2; mode++)
                for (int pad = 0; pad < 3; pad++)
                    for (int al = 0; al < 2; al++) {
                        double *want = ref_sample(x, g, mode, pad, al);
                        em_tensor *y = em_grid_sample(xn, gn, (em_grid_mode)mode, (em_grid_padding)pad, al);
                        CHECK_MSG(y && em_dtype_of(y) == d && tclose(y, want, trtol(d), trtol(d)),
                                  "nd %d dtype %d mode %d pad %d align %d", nd, dt, mode, pad, al);
                        free(want);
                        em_release(y);
                    }
            RELEASE(x, g, xn, gn);
        }
    COVER(EM_OP_grid_sample);
}

TEST(grid_sample_bicubic_values)
{
    em_tensor *x = em_arange(0, 16, 1, EM_F32), *x4 = em_reshape(x, 4, (int64_t[]){1, 1, 4, 4});
    em_tensor *g = tt(EM_F32, SHAPE(1, 1, 2, 2), (double[]){0.1, -0.3, 0.9, 1.05});
    const double want[3][2] = {{5.09819221, 4.44664812}, {5.08700085, 15.39824963}, {5.08700085, 15.87750053}};
    for (int pad = 0; pad < 3; pad++) { /* PyTorch 1.13's values */
        em_tensor *y = em_grid_sample(x4, g, EM_GRID_BICUBIC, (em_grid_padding)pad, false);
        CHECK_MSG(y && tclose(y, want[pad], 1e-5, 1e-5), "padding %d", pad);
        em_release(y);
    }
    /* at pixel centres (align_corners) the cubic weights pick the pixel */
    em_tensor *gc = tt(EM_F32, SHAPE(1, 1, 2, 2), (double[]){-1, -1, 1.0 / 3, 1});
    em_tensor *y = em_grid_sample(x4, gc, EM_GRID_BICUBIC, EM_GRID_ZEROS, true);
    CHECK(y && tclose(y, (double[]){0, 14}, 1e-6, 1e-5));
    RELEASE(x, x4, g, gc, y);
}

TEST(grid_sample_empty_and_backward_shapes)
{
    em_tensor *x = trand(EM_F64, SHAPE(0, 2, 3, 3), -1, 1), *g = trand(EM_F64, SHAPE(0, 4, 4, 2), -1, 1);
    em_tensor *y = em_grid_sample(x, g, EM_GRID_BILINEAR, EM_GRID_ZEROS, false);
    CHECK(y && tshape_is(y, SHAPE(0, 2, 4, 4)));
    em_tensor *x2 = trand(EM_F64, SHAPE(1, 2, 3, 3), -1, 1), *g2 = trand(EM_F64, SHAPE(1, 0, 4, 2), -1, 1);
    em_tensor *y2 = em_grid_sample(x2, g2, EM_GRID_NEAREST, EM_GRID_BORDER, true);
    CHECK(y2 && tshape_is(y2, SHAPE(1, 2, 0, 4)));
    /* an empty grid: the input's gradient is zeros */
    em_tensor *gi = NULL, *gg = NULL;
    CHECK(em_grid_sample_backward(y2, x2, g2, EM_GRID_BILINEAR, EM_GRID_ZEROS, false, &gi, &gg) == EM_OK);
    CHECK(gi && gg && tshape_is(gi, SHAPE(1, 2, 3, 3)) && tshape_is(gg, SHAPE(1, 0, 4, 2)));
    CHECK(tclose(gi, (double[18]){0}, 0, 0));
    RELEASE(gi, gg);
    /* a gradient that does not fit, or of another dtype */
    em_tensor *bad = trand(EM_F64, SHAPE(1, 2, 1, 4), -1, 1), *badf = trand(EM_F32, SHAPE(1, 2, 0, 4), -1, 1);
    CHECK_ERR(em_grid_sample_backward(bad, x2, g2, EM_GRID_BILINEAR, EM_GRID_ZEROS, false, &gi, &gg), EM_ERR_SHAPE);
    CHECK(!gi && !gg);
    CHECK_ERR(em_grid_sample_backward(badf, x2, g2, EM_GRID_BILINEAR, EM_GRID_ZEROS, false, &gi, &gg), EM_ERR_DTYPE);
    RELEASE(x, g, y, x2, g2, y2, bad, badf);
    COVER(EM_OP_grid_sample_backward);
}

TEST(grid_sample_errors)
{
    em_tensor *x = trand(EM_F32, SHAPE(2, 3, 4, 5), -1, 1), *g = trand(EM_F32, SHAPE(2, 6, 7, 2), -1, 1);
    em_tensor *g1 = trand(EM_F32, SHAPE(1, 6, 7, 2), -1, 1), *g3 = trand(EM_F32, SHAPE(2, 6, 7, 3), -1, 1);
    em_tensor *xe = trand(EM_F32, SHAPE(2, 3, 0, 5), -1, 1), *gd = trand(EM_F64, SHAPE(2, 6, 7, 2), -1, 1);
    em_tensor *xi = tints(EM_I32, SHAPE(2, 3, 4, 5), 0, 3), *gi = tints(EM_I32, SHAPE(2, 6, 7, 2), 0, 3);
    em_tensor *x5 = trand(EM_F32, SHAPE(2, 3, 4, 5, 6), -1, 1), *g5 = trand(EM_F32, SHAPE(2, 3, 4, 5, 3), -1, 1);
    em_tensor *g5b = trand(EM_F32, SHAPE(2, 3, 4, 3), -1, 1), *x3 = trand(EM_F32, SHAPE(3, 4, 5), -1, 1);
    CHECK_ERR(em_grid_sample(x, g1, 0, 0, false), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "same batch size"));
    CHECK_ERR(em_grid_sample(x, g3, 0, 0, false), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "size 2 in last dimension"));
    CHECK_ERR(em_grid_sample(xe, g, 0, 0, false), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "dimension 2 being empty"));
    CHECK_ERR(em_grid_sample(x5, g5, EM_GRID_BICUBIC, 0, false), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "bicubic interpolation only supports 4D input"));
    CHECK_ERR(em_grid_sample(x5, g5b, 0, 0, false), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "expected 5D input and grid"));
    CHECK_ERR(em_grid_sample(x3, g5b, 0, 0, false), EM_ERR_SHAPE);
    CHECK_ERR(em_grid_sample(xi, gi, 0, 0, false), EM_ERR_DTYPE);
    CHECK(strstr(em_last_error(), "grid_sampler_2d_cpu not implemented for Int"));
    CHECK_ERR(em_grid_sample(x, gd, 0, 0, false), EM_ERR_DTYPE);
    CHECK(strstr(em_last_error(), "expected scalar type Float but found Double"));
    CHECK_ERR(em_grid_sample(x, g, (em_grid_mode)3, 0, false), EM_ERR_RUNTIME);
    CHECK_ERR(em_grid_sample(NULL, g, 0, 0, false), EM_ERR_VALUE);
    RELEASE(x, g, g1, g3, xe, gd, xi, gi, x5, g5, g5b, x3);
}

TEST(affine_grid_values_and_errors)
{
    em_tensor *th = tt(EM_F32, SHAPE(1, 2, 3), (double[]){1, 0, 0, 0, 1, 0});
    em_tensor *y = em_affine_grid(th, 4, (int64_t[]){1, 1, 2, 3}, false);
    const double want[] = {-2. / 3, -.5, 0, -.5, 2. / 3, -.5, -2. / 3, .5, 0, .5, 2. / 3, .5};
    CHECK(y && tshape_is(y, SHAPE(1, 2, 3, 2)) && tclose(y, want, 1e-6, 1e-6));
    em_release(y);
    /* a 3-D theta (scale and shift) with align_corners; a single-point dim sits at 0 */
    em_tensor *t3 = tt(EM_F64, SHAPE(1, 3, 4), (double[]){2, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, -1});
    y = em_affine_grid(t3, 5, (int64_t[]){1, 1, 1, 2, 2}, true);
    CHECK(y && tshape_is(y, SHAPE(1, 1, 2, 2, 3)));
    CHECK(tclose(y, (double[]){-1.5, -1, -1, 2.5, -1, -1, -1.5, 1, -1, 2.5, 1, -1}, 1e-12, 1e-12));
    em_release(y);
    CHECK_ERR(em_affine_grid(th, 3, (int64_t[]){1, 1, 2}, false), EM_ERR_RUNTIME);
    CHECK_ERR(em_affine_grid(th, 5, (int64_t[]){1, 1, 2, 2, 2}, false), EM_ERR_SHAPE);
    CHECK_ERR(em_affine_grid(th, 4, (int64_t[]){2, 1, 2, 2}, false), EM_ERR_SHAPE);
    em_tensor *ti = tints(EM_I64, SHAPE(1, 2, 3), 0, 2);
    CHECK_ERR(em_affine_grid(ti, 4, (int64_t[]){1, 1, 2, 2}, false), EM_ERR_DTYPE);
    RELEASE(th, t3, ti);
}

/* ---- autograd ---------------------------------------------------------------------------- */
typedef struct grid_case {
    int mode, pad;
    bool align, transposed;
} grid_case;

static em_tensor *f_grid(em_tensor *const *in, const void *ctx)
{
    const grid_case *c = ctx;
    em_tensor *x = c->transposed ? em_transpose(in[0], -1, -2) : em_retain(in[0]);
    em_tensor *r = x ? em_grid_sample(x, in[1], (em_grid_mode)c->mode, (em_grid_padding)c->pad, c->align) : NULL;
    em_release(x);
    return r;
}

/* Grid points drawn at random (also outside [-1, 1]) are almost surely away from the kinks
 * (pixel coordinates at integers, reflections at the borders) that finite differences see. */
TEST(gradcheck_grid_sample)
{
    em_tensor *in2[2] = {leaf(SHAPE(2, 2, 3, 4), -1, 1), leaf(SHAPE(2, 3, 2, 2), -1.4, 1.4)};
    em_tensor *in3[2] = {leaf(SHAPE(1, 2, 2, 3, 3), -1, 1), leaf(SHAPE(1, 2, 2, 2, 3), -1.4, 1.4)};
    for (int mode = 0; mode < 3; mode++)
        for (int pad = 0; pad < 3; pad++)
            for (int al = 0; al < 2; al++) {
                grid_case c = {mode, pad, al, (mode + pad + al) % 2 == 1};
                CHECK_MSG(gradcheck("grid_sample 2d", f_grid, 2, in2, &c), "2d mode %d pad %d align %d", mode, pad, al);
                if (mode == EM_GRID_BICUBIC) continue;
                c.transposed = false;
                CHECK_MSG(gradcheck("grid_sample 3d", f_grid, 2, in3, &c), "3d mode %d pad %d align %d", mode, pad, al);
            }
    RELEASE(in2[0], in2[1], in3[0], in3[1]);
    GRAD_COVER(EM_OP_grid_sample);
}

/* PyTorch does not differentiate grid_sampler's backward: the first create_graph pass works,
 * a gradient through its result is NotImplemented. */
TEST(grid_sample_backward_not_differentiable)
{
    em_tensor *x = leaf(SHAPE(1, 2, 3, 3), -1, 1), *g = leaf(SHAPE(1, 2, 2, 2), -1, 1), *gx = NULL, *gg = NULL;
    em_tensor *y = em_grid_sample(x, g, EM_GRID_BILINEAR, EM_GRID_ZEROS, false);
    em_tensor *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    CHECK(s && em_autograd_grad(1, &s, NULL, 1, &x, true, true, false, &gx) == EM_OK);
    em_tensor *s2 = em_sum(gx, 0, NULL, false, EM_DTYPE_NONE);
    CHECK_ERR(em_autograd_grad(1, &s2, NULL, 1, &g, false, false, true, &gg), EM_ERR_NOT_IMPLEMENTED);
    CHECK(strstr(em_last_error(), "the derivative for 'grid_sample_backward' is not implemented"));
    RELEASE(x, g, y, s, gx, s2, gg);
    GRAD_COVER(EM_OP_grid_sample_backward);
}

static em_tensor *f_affine(em_tensor *const *in, const void *ctx)
{
    const int64_t *size = ctx;
    em_tensor *grid = em_affine_grid(in[0], (int)size[0], size + 1, size[6] != 0);
    if (size[0] == 5 || !grid) return grid;
    /* a spatial transformer: sample an image at the grid */
    em_tensor *img = em_arange(0, 2 * 2 * 3 * 4, 1, EM_F64), *x = img ? em_reshape(img, 4, (int64_t[]){2, 2, 3, 4}) : NULL;
    em_tensor *r = x ? em_grid_sample(x, grid, EM_GRID_BILINEAR, EM_GRID_BORDER, false) : NULL;
    RELEASE(grid, img, x);
    return r;
}

TEST(gradcheck_affine_grid)
{
    const int64_t s2[7] = {4, 2, 1, 3, 4, 0, 0}, s2a[7] = {4, 2, 1, 2, 5, 0, 1}, s3[7] = {5, 2, 1, 2, 3, 2, 1};
    em_tensor *t2 = leaf(SHAPE(2, 2, 3), -0.8, 0.8), *t3 = leaf(SHAPE(2, 3, 4), -1, 1);
    CHECK(gradcheck("affine_grid 2d -> grid_sample", f_affine, 1, &t2, s2));
    CHECK(gradcheck("affine_grid 2d -> grid_sample (align)", f_affine, 1, &t2, s2a));
    CHECK(gradcheck("affine_grid 3d", f_affine, 1, &t3, s3));
    RELEASE(t2, t3);
}
