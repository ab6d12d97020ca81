/* Built against an installed Ember by tests/install/test_install.sh (with
 * pkg-config, then with CMake): a matmul, a reduction and a gradient. */
#include <ember/ember.h>
#include <stdio.h>

int main(void)
{
    const double a[] = {1, 2, 3, 4, 5, 6}; /* (2, 3) */
    em_tensor *x = em_from_data(a, 2, (const int64_t[]){2, 3}, EM_F64);
    em_tensor *w = em_ones(2, (const int64_t[]){3, 1}, EM_F64);
    em_set_requires_grad(w, true);
    em_tensor *y = em_matmul(x, w), *s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE);
    double total = 0, g0 = 0;
    if (!s || em_backward(1, &s, NULL, false, false, 0, NULL) || em_item(s, &total)) {
        fprintf(stderr, "ember: %s\n", em_last_error());
        return 1;
    }
    em_tensor *g = em_get_grad(w); /* (3, 1): column sums of x */
    em_get(g, (const int64_t[]){0, 0}, &g0);
    em_tensor *bad = em_matmul(w, w); /* (3, 1) @ (3, 1): an error, not a crash */
    printf("sum %g, grad[0] %g, error: %s\n", total, g0, bad ? "none" : em_last_error());
    em_release(g), em_release(s), em_release(y), em_release(w), em_release(x);
    return total == 21 && g0 == 5 && !bad ? 0 : 1;
}
