/* The pool family's C API (include/ember/pool.h): hand-computed values of every op, the
 * max pools' indices, the adjoint identity <f(x), g> == <x, f_backward(g)> of each linear
 * op and its backward op (which is what their formulas rely on), non-contiguous inputs,
 * bfloat16 through float32, and argument errors. Comparisons with PyTorch over many
 * configurations are in tests/python/test_nn_pool.py. */
#include "test.h"

static em_tensor *arange4(int ndim, const int64_t *sizes, em_dtype dt)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++) n *= sizes[k];
    double *v = malloc(n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = (double)i;
    em_tensor *t = tt(dt, ndim, sizes, v);
    free(v);
    return t;
}

static double dot(const em_tensor *a, const em_tensor *b)
{
    em_tensor *m = em_mul(a, b), *s = m ? em_sum(m, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    double v = NAN;
    if (s) em_item(s, &v);
    RELEASE(m, s);
    return v;
}

TEST(pool_max_values_and_indices)
{
    em_tensor *x = arange4(SHAPE(1, 1, 4, 4), EM_F32), *idx = NULL;
    em_pool_params p = {.nd = 2, .kernel = {2, 2}};
    em_tensor *y = em_max_pool(x, &p, &idx);
    CHECK(y && idx && tshape_is(y, SHAPE(1, 1, 2, 2)) && em_dtype_of(idx) == EM_I64);
    CHECK(tclose(y, (double[]){5, 7, 13, 15}, 0, 0) && tclose(idx, (double[]){5, 7, 13, 15}, 0, 0));
    RELEASE(y, idx);
    /* padding 1, stride 2, ceil_mode, no batch dim; a non-contiguous input */
    em_tensor *xt = em_transpose(x, 2, 3), *x3 = em_squeeze_dim(xt, 0);
    em_pool_params q = {.nd = 2, .kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}};
    idx = NULL;
    y = em_max_pool(x3, &q, &idx);
    CHECK(y && tshape_is(y, SHAPE(1, 2, 2)));
    CHECK(tclose(y, (double[]){5, 13, 7, 15}, 0, 0) && tclose(idx, (double[]){5, 7, 13, 15}, 0, 0));
    RELEASE(y, idx, xt, x3);
    /* 1-d with dilation; 3-d; adaptive */
    em_tensor *v = tt(EM_F64, SHAPE(1, 6), (double[]){3, 1, 4, 1, 5, 9});
    em_pool_params d = {.nd = 1, .kernel = {2}, .stride = {1}, .dilation = {2}};
    y = em_max_pool(v, &d, NULL);
    CHECK(y && tclose(y, (double[]){4, 1, 5, 9}, 0, 0));
    em_release(y);
    em_tensor *cube = arange4(SHAPE(1, 2, 2, 2), EM_F64);
    em_pool_params c3 = {.nd = 3, .kernel = {2, 2, 2}};
    y = em_max_pool(cube, &c3, NULL);
    CHECK(y && tshape_is(y, SHAPE(1, 1, 1, 1)) && tval(y, 0) == 7);
    em_release(y);
    idx = NULL;
    y = em_adaptive_max_pool(v, 1, (int64_t[]){4}, &idx);
    CHECK(y && tclose(y, (double[]){3, 4, 5, 9}, 0, 0) && tclose(idx, (double[]){0, 2, 4, 5}, 0, 0));
    /* max_unpool puts them back */
    em_tensor *u = em_max_unpool(y, idx, &(em_pool_params){.nd = 1, .kernel = {2}}, (int64_t[]){6});
    CHECK(u && tclose(u, (double[]){3, 0, 4, 0, 5, 9}, 0, 0));
    RELEASE(y, idx, u, v, cube, x);
    COVER(EM_OP_max_pool, EM_OP_adaptive_max_pool);
}

/* Windows from the samples as PyTorch places them (2-d: u[0] steps the width, u[1] the height). */
TEST(pool_fractional_max_values_and_indices)
{
    COVER(EM_OP_fractional_max_pool);
    em_tensor *x = arange4(SHAPE(1, 2, 7, 6), EM_F64), *idx = NULL;
    em_tensor *u = tt(EM_F64, SHAPE(1, 2, 2), (double[]){0.3, 0.8, 0.55, 0.1});
    em_tensor *y = em_fractional_max_pool(x, 2, (int64_t[]){2, 2}, (int64_t[]){3, 4}, u, &idx);
    CHECK(y && idx && tshape_is(y, SHAPE(1, 2, 3, 4)));
    double want[24], wanti[24];
    const int64_t H = 7, W = 6, oh = 3, ow = 4, k = 2;
    for (int c = 0; c < 2; c++) {
        double uw = tval(u, 2 * c), uh = tval(u, 2 * c + 1);
        int64_t hs[3], ws[4];
        for (int i = 0; i < oh - 1; i++) hs[i] = (int)((i + uh) * ((double)(H - k) / (oh - 1))) - (int)(uh * ((double)(H - k) / (oh - 1)));
        for (int i = 0; i < ow - 1; i++) ws[i] = (int)((i + uw) * ((double)(W - k) / (ow - 1))) - (int)(uw * ((double)(W - k) / (ow - 1)));
        hs[oh - 1] = H - k, ws[ow - 1] = W - k;
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) { /* increasing values: the window's last element wins */
                int64_t at = (hs[i] + k - 1) * W + ws[j] + k - 1;
                wanti[(c * oh + i) * ow + j] = (double)at;
                want[(c * oh + i) * ow + j] = (double)(c * H * W + at);
            }
    }
    CHECK(tclose(y, want, 0, 0) && tclose(idx, wanti, 0, 0));
    RELEASE(y, idx);
    /* errors: a window that would leave the input (3-d is strict, as PyTorch), samples of the wrong shape */
    CHECK_ERR(em_fractional_max_pool(x, 2, (int64_t[]){2, 2}, (int64_t[]){7, 4}, u, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "too large relative to input height"));
    em_tensor *x3 = arange4(SHAPE(1, 1, 4, 4, 4), EM_F64), *u3 = tt(EM_F64, SHAPE(1, 1, 3), (double[]){0.5, 0.5, 0.5});
    CHECK_ERR(em_fractional_max_pool(x3, 3, (int64_t[]){2, 2, 2}, (int64_t[]){3, 2, 2}, u3, NULL), EM_ERR_RUNTIME);
    em_tensor *y3 = em_fractional_max_pool(x3, 3, (int64_t[]){2, 2, 2}, (int64_t[]){2, 2, 2}, u3, NULL);
    CHECK(y3 && tshape_is(y3, SHAPE(1, 1, 2, 2, 2)));
    CHECK_ERR(em_fractional_max_pool(x, 2, (int64_t[]){2, 2}, (int64_t[]){3, 4}, u3, NULL), EM_ERR_RUNTIME);
    em_tensor *uf = em_to_dtype(u, EM_F32);
    CHECK_ERR(em_fractional_max_pool(x, 2, (int64_t[]){2, 2}, (int64_t[]){3, 4}, uf, NULL), EM_ERR_RUNTIME);
    CHECK_ERR(em_fractional_max_pool(x, 2, (int64_t[]){0, 2}, (int64_t[]){3, 4}, u, NULL), EM_ERR_RUNTIME);
    RELEASE(x, u, x3, u3, y3, uf);
}

TEST(pool_avg_values)
{
    em_tensor *x = arange4(SHAPE(1, 1, 4, 4), EM_F64);
    em_pool_params p = {.nd = 2, .kernel = {2, 2}};
    em_tensor *y = em_avg_pool(x, &p);
    CHECK(y && tclose(y, (double[]){2.5, 4.5, 10.5, 12.5}, 1e-12, 0));
    em_release(y);
    em_tensor *v = tt(EM_F32, SHAPE(1, 4), (double[]){1, 2, 3, 4});
    em_pool_params q = {.nd = 1, .kernel = {3}, .stride = {2}, .padding = {1}, .count_include_pad = true};
    y = em_avg_pool(v, &q); /* windows [-1, 1], [1, 3]: pads counted */
    CHECK(y && tclose(y, (double[]){1, 3}, 1e-6, 0));
    em_release(y);
    q.count_include_pad = false;
    y = em_avg_pool(v, &q);
    CHECK(y && tclose(y, (double[]){1.5, 3}, 1e-6, 0));
    em_release(y);
    q.divisor_override = 2;
    y = em_avg_pool(v, &q);
    CHECK(y && tclose(y, (double[]){1.5, 4.5}, 1e-6, 0));
    em_release(y);
    y = em_adaptive_avg_pool(v, 1, (int64_t[]){3}); /* windows [0,2) [1,3) [2,4) */
    CHECK(y && tclose(y, (double[]){1.5, 2.5, 3.5}, 1e-6, 0));
    RELEASE(y, v, x);
    COVER(EM_OP_avg_pool, EM_OP_adaptive_avg_pool);
}

TEST(pool_pad_and_upsample_values)
{
    em_tensor *v = tt(EM_F32, SHAPE(1, 1, 4), (double[]){0, 1, 2, 3});
    const int64_t pads[2] = {2, 1};
    struct { em_pad_mode mode; double want[7]; } cases[] = {
        {EM_PAD_CONSTANT, {9, 9, 0, 1, 2, 3, 9}},
        {EM_PAD_REFLECT, {2, 1, 0, 1, 2, 3, 2}},
        {EM_PAD_REPLICATE, {0, 0, 0, 1, 2, 3, 3}},
        {EM_PAD_CIRCULAR, {2, 3, 0, 1, 2, 3, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        em_tensor *y = em_pad(v, 2, pads, cases[k].mode, cases[k].mode == EM_PAD_CONSTANT ? 9 : 0);
        CHECK_MSG(y && tshape_is(y, SHAPE(1, 1, 7)) && tclose(y, cases[k].want, 0, 0), "mode %zu", k);
        em_release(y);
    }
    em_tensor *y = em_pad(v, 2, (int64_t[]){-1, -2}, EM_PAD_CONSTANT, 0); /* cropping */
    CHECK(y && tclose(y, (double[]){1}, 0, 0));
    em_release(y);
    y = em_upsample_nearest(v, (int64_t[]){8}, NULL);
    CHECK(y && tclose(y, (double[]){0, 0, 1, 1, 2, 2, 3, 3}, 0, 0));
    em_release(y);
    y = em_upsample_linear(v, (int64_t[]){7}, true, NULL);
    CHECK(y && tclose(y, (double[]){0, 0.5, 1, 1.5, 2, 2.5, 3}, 1e-6, 0));
    em_release(y);
    y = em_upsample_linear(v, (int64_t[]){2}, false, NULL); /* source 0.5 and 2.5 */
    CHECK(y && tclose(y, (double[]){0.5, 2.5}, 1e-6, 0));
    em_release(y);
    em_tensor *c = arange4(SHAPE(1, 4, 1, 1), EM_F64);
    y = em_pixel_shuffle(c, 2);
    em_tensor *back = y ? em_pixel_unshuffle(y, 2) : NULL, *cs = em_channel_shuffle(c, 2);
    CHECK(y && tshape_is(y, SHAPE(1, 1, 2, 2)) && tclose(y, (double[]){0, 1, 2, 3}, 0, 0));
    CHECK(back && em_equal(back, c) && cs && tclose(cs, (double[]){0, 2, 1, 3}, 0, 0));
    RELEASE(y, back, cs, c, v);
    COVER(EM_OP_pad, EM_OP_upsample_nearest, EM_OP_upsample_linear);
}

/* PyTorch's bicubic upsampling, naively in double: the source coordinate per dim (the
 * align_corners ratio, 1/scale when given, else in/out), 4 taps clamped to the border, each
 * weighted by the cubic convolution kernel (A = -0.75) of its distance. */
static double cubic_weight(double d)
{
    const double A = -0.75;
    d = fabs(d);
    if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
    return d < 2 ? ((A * d - 5 * A) * d + 8 * A) * d - 4 * A : 0;
}
static double bicubic_source(int64_t o, int64_t in, int64_t out, bool align_corners, double scale)
{
    if (align_corners) return out > 1 ? (double)(in - 1) / (double)(out - 1) * (double)o : 0;
    double ratio = scale > 0 ? 1 / scale : (double)in / (double)out;
    return ratio * ((double)o + 0.5) - 0.5;
}
static double *bicubic_reference(const em_tensor *x, int64_t oh, int64_t ow, bool align_corners,
                                 const double *scales)
{
    const int64_t *s = em_sizes(x);
    int64_t planes = s[0] * s[1], H = s[2], W = s[3];
    double *v = tvals(x), *r = malloc((size_t)(planes * oh * ow) * sizeof *r);
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double sy = bicubic_source(i, H, oh, align_corners, scales ? scales[0] : 0);
                double sx = bicubic_source(j, W, ow, align_corners, scales ? scales[1] : 0), acc = 0;
                for (int a = -1; a <= 2; a++)
                    for (int b = -1; b <= 2; b++) {
                        double ty = floor(sy) + a, tx = floor(sx) + b;
                        int64_t yi = (int64_t)fmin(fmax(ty, 0), (double)(H - 1));
                        int64_t xi = (int64_t)fmin(fmax(tx, 0), (double)(W - 1));
                        acc += cubic_weight(sy - ty) * cubic_weight(sx - tx) * v[(p * H + yi) * W + xi];
                    }
                r[(p * oh + i) * ow + j] = acc;
            }
    free(v);
    return r;
}

TEST(pool_upsample_bicubic_values)
{
    struct { int64_t in[4], out[2]; bool align_corners; double scales[2]; } cases[] = {
        {{2, 3, 5, 4}, {9, 7}, false, {0, 0}},
        {{2, 3, 5, 4}, {9, 7}, true, {0, 0}},
        {{1, 2, 8, 9}, {3, 4}, false, {0, 0}}, /* downsampling */
        {{1, 2, 8, 9}, {3, 4}, true, {0, 0}},
        {{1, 2, 6, 5}, {10, 3}, false, {1.7, 0.6}}, /* the user's scales: 1/scale */
        {{1, 1, 3, 3}, {1, 1}, true, {0, 0}},
        {{1, 1, 1, 1}, {3, 2}, false, {0, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const double *scales = cases[k].scales[0] > 0 ? cases[k].scales : NULL;
        for (int dt = 0; dt < 2; dt++) {
            em_tensor *x = trand(dt ? EM_F64 : EM_F32, 4, cases[k].in, -2, 2), *xn = tnoncontig(x);
            double *want = bicubic_reference(x, cases[k].out[0], cases[k].out[1], cases[k].align_corners, scales);
            em_tensor *y = em_upsample_bicubic(xn, cases[k].out, cases[k].align_corners, scales);
            const int64_t *s = cases[k].in;
            CHECK_MSG(y && tshape_is(y, SHAPE(s[0], s[1], cases[k].out[0], cases[k].out[1])) &&
                          em_dtype_of(y) == em_dtype_of(x) && tclose(y, want, dt ? 1e-12 : 1e-5, dt ? 1e-12 : 1e-5),
                      "case %zu dtype %d: %s", k, dt, y ? "values" : em_last_error());
            free(want);
            RELEASE(x, xn, y);
        }
    }
    /* bfloat16 computes through float32; an empty batch gives an empty result */
    em_tensor *x = trand(EM_F32, SHAPE(1, 2, 4, 4), -1, 1), *xb = em_to_dtype(x, EM_BF16);
    em_tensor *y = em_upsample_bicubic(x, (int64_t[]){6, 5}, false, NULL);
    em_tensor *yb = xb ? em_upsample_bicubic(xb, (int64_t[]){6, 5}, false, NULL) : NULL;
    double *vy = y ? tvals(y) : NULL;
    CHECK(yb && em_dtype_of(yb) == EM_BF16 && vy && tclose(yb, vy, 3e-2, 3e-2));
    free(vy);
    em_tensor *e = em_zeros(4, (int64_t[]){0, 2, 3, 3}, EM_F32), *ye = em_upsample_bicubic(e, (int64_t[]){5, 5}, true, NULL);
    CHECK(ye && tshape_is(ye, SHAPE(0, 2, 5, 5)));
    RELEASE(x, xb, y, yb, e, ye);
    COVER(EM_OP_upsample_bicubic);
}

/* <f(x), g> == <x, b(g)> for each op f and its backward op b */
TEST(pool_backward_ops_are_adjoints)
{
    em_tensor *x = trand(EM_F64, SHAPE(2, 3, 7, 6), -1, 1), *x5 = trand(EM_F64, SHAPE(1, 2, 3, 4, 5), -1, 1);
    em_pool_params ap = {.nd = 2, .kernel = {3, 2}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true};
    em_pool_params ap3 = {.nd = 3, .kernel = {2, 2, 3}, .padding = {1, 0, 1}, .count_include_pad = false};
    const double scales[3] = {1.5, 2.25, 0};
    for (int k = 0; k < 12; k++) {
        const em_tensor *in = k == 1 || k == 8 ? x5 : x;
        int nd = em_ndim(in) - 2;
        const int64_t *s = em_sizes(in);
        em_tensor *y = NULL;
        const int64_t pads[6] = {1, 2, 2, 1, 1, 1};
        switch (k) {
        case 0: y = em_avg_pool(in, &ap); break;
        case 1: y = em_avg_pool(in, &ap3); break;
        case 2: y = em_adaptive_avg_pool(in, 2, (int64_t[]){4, 9}); break;
        case 3: case 4: case 5: y = em_pad(in, 4, pads, (em_pad_mode)(k - 2), 0); break;
        case 6: y = em_upsample_nearest(in, (int64_t[]){10, 13}, scales); break;
        case 7: y = em_upsample_linear(in, (int64_t[]){5, 13}, false, scales); break;
        case 9: y = em_upsample_bicubic(in, (int64_t[]){10, 13}, false, scales); break;
        case 10: y = em_upsample_bicubic(in, (int64_t[]){4, 3}, true, NULL); break; /* downsampling */
        case 11: y = em_upsample_bicubic(in, (int64_t[]){9, 11}, false, NULL); break;
        default: y = em_upsample_linear(in, (int64_t[]){4, 3, 7}, true, NULL); break;
        }
        CHECK_MSG(y, "case %d: %s", k, em_last_error());
        em_tensor *g = trand(EM_F64, em_ndim(y), em_sizes(y), -1, 1), *b = NULL;
        switch (k) {
        case 0: b = em_avg_pool_backward(g, &ap, 4, s); break;
        case 1: b = em_avg_pool_backward(g, &ap3, 5, s); break;
        case 2: b = em_adaptive_avg_pool_backward(g, nd, 4, s); break;
        case 3: case 4: case 5: b = em_pad_backward(g, 4, pads, (em_pad_mode)(k - 2), 4, s); break;
        case 6: b = em_upsample_nearest_backward(g, 4, s, scales); break;
        case 7: b = em_upsample_linear_backward(g, 4, s, false, scales); break;
        case 9: b = em_upsample_bicubic_backward(g, 4, s, false, scales); break;
        case 10: b = em_upsample_bicubic_backward(g, 4, s, true, NULL); break;
        case 11: b = em_upsample_bicubic_backward(g, 4, s, false, NULL); break;
        default: b = em_upsample_linear_backward(g, 5, s, true, NULL); break;
        }
        CHECK_MSG(b && tshape_is(b, em_ndim(in), s), "case %d: %s", k, em_last_error());
        double lhs = dot(y, g), rhs = dot(in, b);
        CHECK_MSG(fabs(lhs - rhs) < 1e-9 * (1 + fabs(lhs)), "case %d: %g vs %g", k, lhs, rhs);
        RELEASE(y, g, b);
    }
    /* the max pools gather x at their indices: max_pool_backward is that gather's adjoint */
    em_pool_params mp = {.nd = 2, .kernel = {3, 2}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true};
    for (int k = 0; k < 2; k++) {
        em_tensor *idx = NULL;
        em_tensor *y = k ? em_adaptive_max_pool(x, 2, (int64_t[]){3, 4}, &idx) : em_max_pool(x, &mp, &idx);
        em_tensor *g = y ? trand(EM_F64, em_ndim(y), em_sizes(y), -1, 1) : NULL;
        em_tensor *b = g ? em_max_pool_backward(g, idx, 2, 4, em_sizes(x)) : NULL;
        CHECK_MSG(b && tshape_is(b, 4, em_sizes(x)), "max case %d: %s", k, em_last_error());
        double lhs = dot(y, g), rhs = dot(x, b);
        CHECK_MSG(fabs(lhs - rhs) < 1e-9 * (1 + fabs(lhs)), "max case %d: %g vs %g", k, lhs, rhs);
        RELEASE(y, idx, g, b);
    }
    RELEASE(x, x5);
    COVER(EM_OP_avg_pool_backward, EM_OP_adaptive_avg_pool_backward, EM_OP_pad_backward,
          EM_OP_upsample_nearest_backward, EM_OP_upsample_linear_backward, EM_OP_upsample_bicubic_backward,
          EM_OP_max_pool_backward);
}

TEST(pool_dtypes_and_layouts)
{
    em_tensor *x = trand(EM_F32, SHAPE(2, 3, 6, 8), -2, 2), *xn = tnoncontig(x);
    em_tensor *xb = em_to_dtype(x, EM_BF16), *xd = em_to_dtype(x, EM_F64);
    em_pool_params p = {.nd = 2, .kernel = {2, 2}};
    em_tensor *a = em_max_pool(x, &p, NULL), *b = em_max_pool(xn, &p, NULL), *c = em_max_pool(xb, &p, NULL);
    em_tensor *d = em_max_pool(xd, &p, NULL), *cf = c ? em_to_dtype(c, EM_F32) : NULL, *df = d ? em_to_dtype(d, EM_F32) : NULL;
    CHECK(a && b && em_equal(a, b) && c && em_dtype_of(c) == EM_BF16 && df && em_equal(a, df));
    double *va = tvals(a);
    CHECK(tclose(cf, va, 1e-2, 1e-2));
    free(va);
    RELEASE(a, b, c, d, cf, df, x, xn, xb, xd);
    /* empty batch */
    em_tensor *e = em_zeros(4, (int64_t[]){0, 3, 4, 4}, EM_F32), *r = em_max_pool(e, &p, NULL);
    CHECK(r && tshape_is(r, SHAPE(0, 3, 2, 2)));
    RELEASE(e, r);
}

TEST(pool_errors)
{
    em_tensor *x = em_zeros(3, (int64_t[]){3, 2, 2}, EM_F32), *i = em_zeros(4, (int64_t[]){1, 1, 4, 4}, EM_I64);
    em_tensor *flat = em_zeros(2, (int64_t[]){8, 8}, EM_F32), *img = em_zeros(4, (int64_t[]){1, 1, 4, 4}, EM_F32);
    em_pool_params k3 = {.nd = 2, .kernel = {3, 3}}, k2p2 = {.nd = 2, .kernel = {2, 2}, .padding = {2, 2}};
    CHECK_ERR(em_max_pool(x, &k3, NULL), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small"));
    CHECK_ERR(em_avg_pool(x, &k3), EM_ERR_SHAPE);
    CHECK_ERR(em_max_pool(img, &k2p2, NULL), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "pad should be at most half of kernel size"));
    CHECK_ERR(em_max_pool(flat, &(em_pool_params){.nd = 2, .kernel = {2, 2}}, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_max_pool(i, &(em_pool_params){.nd = 2, .kernel = {2, 2}}, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_max_pool(img, &(em_pool_params){.nd = 4, .kernel = {2, 2}}, NULL), EM_ERR_VALUE);
    CHECK_ERR(em_max_pool(img, &(em_pool_params){.nd = 2, .kernel = {2, -1}}, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_adaptive_avg_pool(img, 2, (int64_t[]){-1, 2}), EM_ERR_SHAPE);
    CHECK_ERR(em_adaptive_max_pool(flat, 2, (int64_t[]){2, 2}, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_pad(img, 3, (int64_t[]){1, 1, 1}, EM_PAD_CONSTANT, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_pad(x, 2, (int64_t[]){2, 0}, EM_PAD_REFLECT, 0), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "Padding size should be less than the corresponding input dimension"));
    CHECK_ERR(em_pad(img, 2, (int64_t[]){1, 1}, EM_PAD_REFLECT, 1), EM_ERR_SHAPE);
    CHECK_ERR(em_pad(x, 2, (int64_t[]){3, 0}, EM_PAD_CIRCULAR, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_pad(flat, 2, (int64_t[]){-5, -4}, EM_PAD_CONSTANT, 0), EM_ERR_SHAPE);
    CHECK_ERR(em_pad(img, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1}, EM_PAD_REPLICATE, 0), EM_ERR_NOT_IMPLEMENTED);
    CHECK_ERR(em_upsample_nearest(img, (int64_t[]){0, 3}, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_upsample_linear(flat, (int64_t[]){3}, false, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_upsample_bicubic(x, (int64_t[]){3}, false, NULL), EM_ERR_SHAPE); /* 2-d only */
    CHECK(strstr(em_last_error(), "It is expected input_size equals to 4, but got size 3"));
    CHECK_ERR(em_upsample_bicubic(img, (int64_t[]){0, 3}, true, NULL), EM_ERR_SHAPE);
    CHECK(strstr(em_last_error(), "Input and output sizes should be greater than 0"));
    CHECK_ERR(em_upsample_bicubic(i, (int64_t[]){3, 3}, false, NULL), EM_ERR_DTYPE);
    CHECK_ERR(em_upsample_bicubic_backward(img, 4, (int64_t[]){1, 2, 3, 3}, false, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_upsample_bicubic_backward(img, 5, (int64_t[]){1, 1, 2, 2, 2}, false, NULL), EM_ERR_SHAPE);
    CHECK_ERR(em_pixel_shuffle(img, 2), EM_ERR_SHAPE);
    CHECK_ERR(em_channel_shuffle(x, 3), EM_ERR_SHAPE);
    em_tensor *y = em_avg_pool(img, &(em_pool_params){.nd = 2, .kernel = {2, 2}});
    CHECK_ERR(em_avg_pool_backward(img, &(em_pool_params){.nd = 2, .kernel = {2, 2}}, 4, em_sizes(img)), EM_ERR_SHAPE);
    CHECK_ERR(em_max_unpool(y, i, &(em_pool_params){.nd = 2, .kernel = {2, 2}}, NULL), EM_ERR_SHAPE);
    /* max_pool_backward: indices int64 of grad's shape, inside their plane; sizes that fit */
    em_tensor *g = em_ones(4, (int64_t[]){1, 1, 2, 2}, EM_F32), *gi = em_zeros(4, (int64_t[]){1, 1, 2, 2}, EM_I64);
    em_tensor *gf = em_zeros(4, (int64_t[]){1, 1, 2, 2}, EM_F32), *far = em_full(4, (int64_t[]){1, 1, 2, 2}, 16, EM_I64);
    em_tensor *neg = em_full(4, (int64_t[]){1, 1, 2, 2}, -1, EM_I64), *ok = em_max_pool_backward(g, gi, 2, 4, em_sizes(img));
    CHECK(ok && tclose(ok, (double[]){4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0));
    CHECK_ERR(em_max_pool_backward(g, far, 2, 4, em_sizes(img)), EM_ERR_INDEX);
    CHECK_ERR(em_max_pool_backward(g, neg, 2, 4, em_sizes(img)), EM_ERR_INDEX);
    CHECK_ERR(em_max_pool_backward(g, gf, 2, 4, em_sizes(img)), EM_ERR_SHAPE);
    CHECK_ERR(em_max_pool_backward(g, i, 2, 4, em_sizes(img)), EM_ERR_SHAPE);
    CHECK_ERR(em_max_pool_backward(g, gi, 2, 4, (int64_t[]){2, 1, 4, 4}), EM_ERR_SHAPE);
    CHECK_ERR(em_max_pool_backward(g, gi, 2, 3, em_sizes(img) + 1), EM_ERR_SHAPE);
    CHECK_ERR(em_max_pool_backward(gi, gi, 2, 4, em_sizes(img)), EM_ERR_DTYPE);
    RELEASE(x, i, flat, img, y, g, gi, gf, far, neg, ok);
}
