/* em_linear (include/ember/nn.h): values against a loop reference in double
 * for 2-d/3-d/1-d inputs, with and without bias, non-contiguous operands and
 * float64/float32; gradients (float64 gradcheck); the error cases. */
#include "test.h"

/* out[r, o] = sum_i x[r, i] * w[o, i] + b[o] over the rows r of x (*, in). */
static double *linear_ref(const em_tensor *x, const em_tensor *w, const em_tensor *b, int64_t rows, int64_t in,
                          int64_t outf)
{
    double *xv = tvals(x), *wv = tvals(w), *bv = b ? tvals(b) : NULL;
    double *ref = malloc((size_t)(rows * outf) * sizeof *ref);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t o = 0; o < outf; o++) {
            double acc = bv ? bv[o] : 0;
            for (int64_t i = 0; i < in; i++) acc += xv[r * in + i] * wv[o * in + i];
            ref[r * outf + o] = acc;
        }
    free(xv), free(wv), free(bv);
    return ref;
}

TEST(nn_linear_values)
{
    static const struct { int ndim; int64_t sizes[3]; } inputs[] = {{2, {5, 7}}, {3, {2, 3, 7}}, {1, {7}}, {2, {0, 7}}};
    const em_dtype dtypes[] = {EM_F64, EM_F32};
    for (int d = 0; d < 2; d++)
        for (size_t k = 0; k < sizeof inputs / sizeof *inputs; k++)
            for (int layout = 0; layout < 3; layout++)
                for (int with_bias = 0; with_bias < 2; with_bias++) {
                    em_dtype dt = dtypes[d];
                    em_tensor *x = tlayout(dt, inputs[k].ndim, inputs[k].sizes, layout % 2, -1, 1);
                    em_tensor *w = tlayout(dt, 2, (int64_t[]){4, 7}, layout == 2 ? 2 : 0, -1, 1);
                    em_tensor *b = with_bias ? trand(dt, 1, (int64_t[]){4}, -1, 1) : NULL;
                    em_tensor *y = em_linear(x, w, b);
                    CHECK(y);
                    int64_t rows = em_numel(x) / 7;
                    int64_t want[3];
                    memcpy(want, inputs[k].sizes, sizeof want);
                    want[inputs[k].ndim - 1] = 4;
                    CHECK(tshape_is(y, inputs[k].ndim, want) && em_dtype_of(y) == dt);
                    double *ref = linear_ref(x, w, b, rows, 7, 4);
                    CHECK(tclose(y, ref, trtol(dt), trtol(dt)));
                    free(ref);
                    RELEASE(x, w, y);
                    em_release(b);
                }
    COVER(EM_OP_addmm, EM_OP_matmul);
}

TEST(nn_linear_vector_weight)
{
    /* a 1-d weight reduces the last dim: (3, 5) x (5) -> (3) */
    em_tensor *x = trand(EM_F64, 2, (int64_t[]){3, 5}, -1, 1), *w = trand(EM_F64, 1, (int64_t[]){5}, -1, 1);
    em_tensor *y = em_linear(x, w, NULL);
    CHECK(y && tshape_is(y, 1, (int64_t[]){3}));
    double *ref = linear_ref(x, w, NULL, 3, 5, 1);
    CHECK(tclose(y, ref, 1e-12, 1e-12));
    free(ref);
    RELEASE(x, w, y);
}

TEST(nn_linear_errors)
{
    em_tensor *x = trand(EM_F32, 2, (int64_t[]){2, 3}, -1, 1), *w = trand(EM_F32, 2, (int64_t[]){4, 5}, -1, 1);
    em_tensor *w3 = trand(EM_F32, 3, (int64_t[]){4, 3, 1}, -1, 1), *wd = trand(EM_F64, 2, (int64_t[]){4, 3}, -1, 1);
    em_tensor *w43 = trand(EM_F32, 2, (int64_t[]){4, 3}, -1, 1), *b5 = trand(EM_F32, 1, (int64_t[]){5}, -1, 1);
    em_tensor *x1 = trand(EM_F32, 1, (int64_t[]){3}, -1, 1), *w1 = trand(EM_F32, 1, (int64_t[]){3}, -1, 1);
    em_tensor *b4 = trand(EM_F32, 1, (int64_t[]){4}, -1, 1);
    CHECK_ERR(em_linear(x, w, NULL), EM_ERR_SHAPE);   /* 3 vs 5 inner sizes */
    CHECK_ERR(em_linear(x, w3, NULL), EM_ERR_SHAPE);  /* weight of 3 dims */
    CHECK_ERR(em_linear(x, wd, NULL), EM_ERR_DTYPE);  /* float32 input, float64 weight */
    CHECK_ERR(em_linear(x, w43, b5), EM_ERR_SHAPE);   /* bias of 5 for 4 outputs */
    CHECK_ERR(em_linear(x1, w1, b4), EM_ERR_SHAPE);   /* the bias would grow a 0-d result */
    CHECK_ERR(em_linear(NULL, w, NULL), EM_ERR_VALUE);
    RELEASE(x, w, w3, wd, w43, b5, x1, w1, b4);
}

static em_tensor *f_linear(em_tensor *const *in, const void *c) { return em_linear(in[0], in[1], c ? in[2] : NULL); }
static em_tensor *f_linear_3d(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_reshape(in[0], 3, (int64_t[]){2, 2, 3});
    em_tensor *y = x ? em_linear(x, in[1], in[2]) : NULL;
    em_release(x);
    return y;
}

TEST(nn_linear_grad)
{
    em_tensor *in[3] = {leaf(2, (int64_t[]){4, 3}, -1, 1), leaf(2, (int64_t[]){5, 3}, -1, 1),
                        leaf(1, (int64_t[]){5}, -1, 1)};
    CHECK(gradcheck("linear", f_linear, 3, in, ""));
    CHECK(gradcheck("linear_nobias", f_linear, 2, in, NULL));
    CHECK(gradcheck("linear_3d", f_linear_3d, 3, in, NULL));
    CHECK(gradgradcheck("linear", f_linear, 3, in, ""));
    RELEASE(in[0], in[1], in[2]);
}

/* Both operands of mm as transposed views: their gradients are computed in
 * their layout (col_major in formulas_linalg.c) and move through the views'
 * backward without a copy (formulas_view.c's permutation path). */
static em_tensor *f_mm_both_t(em_tensor *const *in, const void *c)
{
    em_tensor *a = em_t(in[0]), *b = em_t(in[1]), *r = em_mm(a, b);
    RELEASE(a, b);
    return r;
}
/* linear of an input whose last dim was transposed in: not folded (not contiguous) */
static em_tensor *f_linear_3d_noncontig(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_reshape(in[0], 3, (int64_t[]){2, 3, 2}), *xt = x ? em_transpose(x, 1, 2) : NULL;
    em_tensor *y = xt ? em_linear(xt, in[1], in[2]) : NULL;
    RELEASE(x, xt);
    return y;
}

TEST(nn_linear_transposed_grads)
{
    em_tensor *ab[2] = {leaf(2, (int64_t[]){4, 3}, -1, 1), leaf(2, (int64_t[]){5, 4}, -1, 1)};
    CHECK(gradcheck("mm of two transposes", f_mm_both_t, 2, ab, NULL));
    CHECK(gradgradcheck("mm of two transposes", f_mm_both_t, 2, ab, NULL));
    em_tensor *in[3] = {leaf(2, (int64_t[]){4, 3}, -1, 1), leaf(2, (int64_t[]){5, 3}, -1, 1),
                        leaf(1, (int64_t[]){5}, -1, 1)};
    CHECK(gradcheck("linear_3d_noncontig", f_linear_3d_noncontig, 3, in, NULL));
    /* the weight's gradient is dense in the weight's own layout:
     * d sum(x w^T + b) / dw[o, i] = sum_r x[r, i] */
    em_tensor *x = trand(EM_F64, 2, (int64_t[]){4, 3}, -1, 1), *w = leaf(2, (int64_t[]){5, 3}, -1, 1);
    em_tensor *y = em_linear(x, w, NULL), *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    CHECK(s && em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    em_tensor *g = em_get_grad(w);
    CHECK(g && em_is_contiguous(g) && em_size(g, 0) == 5 && em_size(g, 1) == 3);
    for (int64_t o = 0; g && o < 5; o++)
        for (int64_t i = 0; i < 3; i++) {
            double want = 0;
            for (int64_t r = 0; r < 4; r++) want += tval(x, r * 3 + i);
            CHECK(fabs(tval(g, o * 3 + i) - want) < 1e-12);
        }
    RELEASE(ab[0], ab[1], in[0], in[1], in[2], x, w, y, s, g);
}
