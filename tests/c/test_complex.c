/* Complex dtypes from C: promotion, the conversions, the (real, imag) views
 * and a complex product, without the Python layer. */
#include "test.h"
#include <complex.h>

TEST(complex_promotion)
{
    CHECK(em_promote_types(EM_C64, EM_F64) == EM_C128);
    CHECK(em_promote_types(EM_C32, EM_F32) == EM_C64);
    CHECK(em_promote_types(EM_I64, EM_C32) == EM_C32);
    CHECK(em_promote_types(EM_BF16, EM_C32) == EM_C64);
    CHECK(em_dtype_is_complex(EM_C64) && !em_dtype_is_float(EM_C64) && em_dtype_is_signed(EM_C128));
    CHECK(em_dtype_to_real(EM_C128) == EM_F64 && em_dtype_to_complex(EM_F16) == EM_C32);
}

TEST(complex_views_and_casts)
{
    const float parts[4] = {1, 2, -3, 0.5f};
    em_tensor *r = em_from_data(parts, 2, (const int64_t[]){2, 2}, EM_F32);
    em_tensor *c = r ? em_view_as_complex(r) : NULL;
    CHECK(c && em_dtype_of(c) == EM_C64 && em_ndim(c) == 1 && em_size(c, 0) == 2 && em_is_same_storage(c, r));
    double re, im;
    em_tensor *second = em_select(c, 0, 1);
    CHECK(second && em_item_complex(second, &re, &im) == EM_OK && re == -3 && im == 0.5);
    em_tensor *d = em_to_dtype(c, EM_C128), *back = d ? em_view_as_real(d) : NULL;
    CHECK(back && em_dtype_of(back) == EM_F64 && em_ndim(back) == 2);
    em_tensor *f = em_to_dtype(c, EM_F32); /* complex -> real keeps the real part */
    double v;
    CHECK(f && em_get(f, (const int64_t[]){1}, &v) == EM_OK && v == -3);
    CHECK(em_fill_complex_(c, 4, -1) == EM_OK && parts[0] == 1); /* from_data copied */
    CHECK(em_fill_complex_(f, 1, 2) != EM_OK);
    em_release(f), em_release(back), em_release(d), em_release(second), em_release(c), em_release(r);
}

TEST(complex_matmul)
{
    const double _Complex a[4] = {1 + 2 * I, 3, -1 * I, 2 - I}, b[2] = {1, I};
    em_tensor *ta = em_from_data(a, 2, (const int64_t[]){2, 2}, EM_C128);
    em_tensor *tb = em_from_data(b, 1, (const int64_t[]){2}, EM_C128);
    em_tensor *y = ta && tb ? em_mv(ta, tb) : NULL;
    CHECK(y);
    const double _Complex *p = em_data_ptr(y);
    CHECK(p[0] == (1 + 2 * I) + 3 * I && p[1] == -1 * I + (2 - I) * I);
    em_release(y), em_release(tb), em_release(ta);
}

/* The gradient of the real scalar sum(select(t, -1, part) * scale) reaches leaf
 * z: conjugate Wirtinger, so d/dz of Im(z) * s is i s (Note [Complex gradients]). */
static em_tensor *part_sum(em_tensor *pairs, int part, double scale)
{
    em_tensor *p = pairs ? em_select(pairs, -1, part) : NULL, *s = em_scalar_float(scale);
    em_tensor *m = p ? em_mul(p, s) : NULL, *r = m ? em_sum(m, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    em_release(p), em_release(s), em_release(m), em_release(pairs);
    return r;
}

static bool grad_is(em_tensor *leaf, const double _Complex *want, int n)
{
    em_tensor *g = em_get_grad(leaf), *c = g ? em_to_dtype(g, EM_C128) : NULL, *cc = c ? em_contiguous(c) : NULL;
    bool ok = cc != NULL;
    for (int i = 0; ok && i < n; i++) ok = ((const double _Complex *)em_data_ptr(cc))[i] == want[i];
    em_release(g), em_release(c), em_release(cc);
    return ok;
}

static void backward_and_release(em_tensor *loss)
{
    CHECK(loss && em_backward(1, &loss, NULL, false, false, 0, NULL) == EM_OK);
    em_release(loss);
}

TEST(complex_autograd_through_views)
{
    const double _Complex v[2] = {1 + 2 * I, -3 + 0.5 * I};
    em_tensor *z = em_from_data(v, 1, (const int64_t[]){2}, EM_C128);
    CHECK(z && em_set_requires_grad(z, true) == EM_OK);
    backward_and_release(part_sum(em_view_as_real(z), 1, 3)); /* Im(z) * 3 */
    CHECK(grad_is(z, (const double _Complex[]){3 * I, 3 * I}, 2));
    em_set_grad(z, NULL);
    em_tensor *c = em_conj_physical(z); /* Im(conj z) = -Im(z) */
    backward_and_release(part_sum(c ? em_view_as_real(c) : NULL, 1, 1));
    CHECK(grad_is(z, (const double _Complex[]){-I, -I}, 2));
    em_set_grad(z, NULL);
    /* an in-place write of the real parts through the retyped view: w = (2 Re z, Im z) */
    em_tensor *one = em_scalar_float(1), *w = em_mul(z, one), *pairs = w ? em_view_as_real(w) : NULL;
    em_tensor *re = pairs ? em_select(pairs, -1, 0) : NULL, *two = em_scalar_float(2);
    CHECK(re && em_mul_(re, two) == EM_OK);
    backward_and_release(part_sum(em_view_as_real(w), 0, 1)); /* Re(w) + ... of the real parts only */
    CHECK(grad_is(z, (const double _Complex[]){2, 2}, 2));
    em_release(re), em_release(two), em_release(pairs), em_release(w), em_release(one), em_release(c);
    /* a real leaf seen as complex: Re(i x) = -x_imag, so the gradient is (0, -1) per pair */
    const double parts[4] = {1, 2, 3, 4};
    em_tensor *x = em_from_data(parts, 2, (const int64_t[]){2, 2}, EM_F64), *i = em_scalar_complex(0, 1);
    CHECK(x && em_set_requires_grad(x, true) == EM_OK);
    em_tensor *xc = em_view_as_complex(x), *ix = xc ? em_mul(xc, i) : NULL;
    backward_and_release(part_sum(ix ? em_view_as_real(ix) : NULL, 0, 1));
    em_tensor *gx = em_get_grad(x), *gxc = gx ? em_contiguous(gx) : NULL;
    CHECK(gxc && em_dtype_of(gxc) == EM_F64);
    const double *gp = gxc ? em_data_ptr(gxc) : NULL;
    CHECK(gp && gp[0] == 0 && gp[1] == -1 && gp[2] == 0 && gp[3] == -1);
    em_release(gx), em_release(gxc), em_release(ix), em_release(xc), em_release(i), em_release(x), em_release(z);
}
