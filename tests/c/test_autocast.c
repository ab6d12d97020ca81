/* CPU autocast from C (include/ember/autocast.h): products in bfloat16,
 * losses in float32, float64 left alone, gradients back in float32. */
#include "test.h"

TEST(autocast_casts_products_and_losses)
{
    em_tensor *a = trand(EM_F32, SHAPE(4, 8), -1, 1), *b = trand(EM_F32, SHAPE(8, 3), -1, 1);
    em_tensor *d = trand(EM_F64, SHAPE(3, 3), -1, 1);
    CHECK(a && b && d && em_set_requires_grad(b, true) == EM_OK);
    CHECK_ERR(em_autocast_set_dtype(EM_CPU, EM_F16), EM_ERR_VALUE);
    CHECK(em_autocast_set_enabled(EM_CPU, true) == EM_OK && em_autocast_is_enabled(EM_CPU));
    em_tensor *y = em_mm(a, b), *dd = em_mm(d, d);
    em_tensor *loss = y ? em_mse_loss(y, y, EM_REDUCTION_MEAN) : NULL;
    em_tensor *s = y ? em_sum(y, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    em_autocast_set_enabled(EM_CPU, false);
    em_autocast_clear_cache();
    bool ok = y && dd && loss && s && em_dtype_of(y) == EM_BF16 && em_dtype_of(dd) == EM_F64 &&
              em_dtype_of(loss) == EM_F32 && em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK;
    em_tensor *g = ok ? em_get_grad(b) : NULL;
    ok = ok && g && em_dtype_of(g) == EM_F32;
    em_release(g), em_release(s), em_release(loss), em_release(dd), em_release(y);
    em_release(d), em_release(b), em_release(a);
    CHECK(ok && !em_autocast_is_enabled(EM_CPU));
}
