/* A tour of Ember's C API: create tensors, run broadcasting ops, take views,
 * and handle an error. Build: make; run: build/examples/tensor_basics */
#include "ember/ember.h"
#include <stdio.h>

static void print_tensor(const char *name, const em_tensor *t)
{
    printf("%s: %s %s [", name, em_dtype_name(em_dtype_of(t)), em_ndim(t) ? "" : "(0-d)");
    int64_t n = em_numel(t), idx[EM_MAX_DIMS] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i; /* row-major position -> index */
        for (int d = em_ndim(t) - 1; d >= 0; d--) idx[d] = r % em_sizes(t)[d], r /= em_sizes(t)[d];
        double v;
        em_get(t, idx, &v);
        printf(i ? ", %g" : "%g", v);
    }
    printf("]\n");
}

int main(void)
{
    const float data[] = {1, 2, 3, 4, 5, 6};
    em_tensor *x = em_from_data(data, 2, (const int64_t[]){2, 3}, EM_F32); /* (2, 3) */
    em_tensor *bias = em_full(1, (const int64_t[]){3}, 0.5, EM_F32);       /* (3,) broadcasts */
    em_tensor *y = em_add(x, bias, 1.0);                                    /* x + bias */
    em_tensor *z = em_mul(y, y);                                            /* y * y */
    em_tensor *zt = em_t(z);                                                /* a view: no copy */
    em_tensor *two = em_scalar_int(2);                                      /* a weak scalar like Python's 2 */
    em_tensor *h = em_div(x, two);                                          /* float32 / int -> float32 */
    print_tensor("x", x);
    print_tensor("y = x + 0.5", y);
    print_tensor("z = y * y, transposed", zt);
    print_tensor("x / 2", h);

    /* Errors: NULL result, a message and a code; nothing is changed. */
    em_tensor *bad = em_add(x, zt, 1.0); /* (2, 3) + (3, 2) */
    if (!bad) printf("error (code %d): %s\n", (int)em_error_code(), em_last_error());

    em_tensor *all[] = {x, bias, y, z, zt, two, h};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) em_release(all[i]);
    return 0;
}
