#include <ember/ember.h>
#include <stdio.h>

int main(void) /* d/dw of sum(x @ w) is x's column sums */
{
    const float data[] = {1, 2, 3, 4, 5, 6};
    em_tensor *x = em_from_data(data, 2, (const int64_t[]){2, 3}, EM_F32);  /* (2, 3) */
    em_tensor *w = em_ones(2, (const int64_t[]){3, 1}, EM_F32);              /* (3, 1) */
    em_set_requires_grad(w, true);
    em_tensor *y = em_matmul(x, w), *loss = em_sum(y, 0, NULL, false, EM_DTYPE_NONE);
    if (!loss || em_backward(1, &loss, NULL, false, false, 0, NULL) != EM_OK)
        return fprintf(stderr, "ember: %s\n", em_last_error()), 1;
    em_tensor *g = em_get_grad(w);                                  /* new reference */
    double g0;
    em_get(g, (const int64_t[]){0, 0}, &g0);
    printf("loss grad w.r.t. w[0]: %g\n", g0);                         /* 1 + 4 = 5 */
    em_release(g), em_release(loss), em_release(y), em_release(w), em_release(x);
    return 0;
}
