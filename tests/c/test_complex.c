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
