/* The conjugate bit from C (Note [Conjugate bit]): em_conj is a view, ops
 * and element reads see the conjugate, writes through the view store it,
 * em_resolve_conj materializes, and gradients cross the view conjugated. */
#include "test.h"
#include <complex.h>

static const double _Complex V[3] = {1 + 2 * I, -3 + 0.5 * I, 4 - 1 * I};

static em_tensor *vector(void) { return em_from_data(V, 1, (const int64_t[]){3}, EM_C128); }

static double _Complex at(const em_tensor *t, int64_t i)
{
    em_tensor *e = em_select(t, 0, i);
    double re = NAN, im = NAN;
    if (!e || em_item_complex(e, &re, &im)) re = im = NAN;
    em_release(e);
    return re + im * I;
}

TEST(conj_is_a_view_with_the_bit)
{
    em_tensor *x = vector(), *y = x ? em_conj(x) : NULL, *yy = y ? em_conj(y) : NULL;
    CHECK(y && em_is_conj(y) && !em_is_conj(x) && em_is_same_storage(x, y) && em_data_ptr(x) == em_data_ptr(y));
    CHECK(yy && !em_is_conj(yy) && at(yy, 1) == V[1]);
    CHECK(at(y, 0) == conj(V[0]) && at(y, 2) == conj(V[2]));
    em_tensor *r = y ? em_resolve_conj(y) : NULL, *same = x ? em_resolve_conj(x) : NULL;
    CHECK(r && !em_is_conj(r) && !em_is_same_storage(r, x) && ((const double _Complex *)em_data_ptr(r))[1] == conj(V[1]));
    CHECK(same == x);
    em_tensor *f = em_ones(1, (const int64_t[]){2}, EM_F32), *fc = f ? em_conj(f) : NULL;
    CHECK(fc == f && !em_is_conj(fc)); /* a real tensor is its own conjugate */
    CHECK(y && em_view_as_real(y) == NULL && em_error_code() == EM_ERR_RUNTIME);
    em_release(fc), em_release(f), em_release(same), em_release(r), em_release(yy), em_release(y), em_release(x);
}

TEST(conj_ops_and_writes)
{
    em_tensor *x = vector(), *y = x ? em_conj(x) : NULL, *s = y ? em_add(x, y, 1) : NULL; /* 2 Re x */
    CHECK(s && !em_is_conj(s) && at(s, 0) == 2 && at(s, 1) == -6);
    em_tensor *d = y ? em_dot(y, x) : NULL; /* sum |x|^2 */
    double re, im;
    CHECK(d && em_item_complex(d, &re, &im) == EM_OK && re == 5 + 9.25 + 17 && im == 0);
    em_tensor *i = em_scalar_complex(0, 1);
    CHECK(y && em_add_(y, i, 1) == EM_OK); /* y += i: x gets conj(i) = -i */
    CHECK(at(x, 0) == 1 + 1 * I && at(y, 0) == 1 - 1 * I && em_is_conj(y));
    CHECK(y && em_fill_complex_(y, 2, 3) == EM_OK && at(x, 2) == 2 - 3 * I);
    em_tensor *n = x ? em_neg_view(x) : NULL; /* a negative view: reads and writes negate */
    CHECK(n && em_is_neg(n) && at(n, 0) == -(2 - 3 * I));
    double v;
    CHECK(n && em_set(n, (const int64_t[]){1}, 7) == EM_OK && at(x, 1) == -7);
    CHECK(n && em_get(n, (const int64_t[]){1}, &v) == EM_OK && v == 7);
    em_release(n), em_release(i), em_release(d), em_release(s), em_release(y), em_release(x);
}

TEST(conj_gradient)
{
    em_tensor *z = vector();
    CHECK(z && em_set_requires_grad(z, true) == EM_OK);
    em_tensor *w = em_scalar_complex(0, 2), *c = z ? em_conj(z) : NULL, *m = c ? em_mul(c, w) : NULL;
    em_tensor *pairs = m ? em_view_as_real(m) : NULL, *re = pairs ? em_select(pairs, -1, 0) : NULL;
    em_tensor *loss = re ? em_sum(re, 0, NULL, false, EM_DTYPE_NONE) : NULL; /* sum Re(2i conj z) = sum 2 Im z */
    CHECK(loss && em_backward(1, &loss, NULL, false, false, 0, NULL) == EM_OK);
    em_tensor *g = em_get_grad(z);
    CHECK(g && !em_is_conj(g) && at(g, 0) == 2 * I && at(g, 2) == 2 * I);
    em_release(g), em_release(loss), em_release(re), em_release(pairs), em_release(m), em_release(c), em_release(w);
    em_release(z);
}
