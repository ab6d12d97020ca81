/* nn.functional.linear as a composite of recorded ops (addmm, or matmul
 * then add): its gradients come from those ops' formulas. */
#include <ember/ember.h>

#include <string.h>

#include "../core/internal.h"

em_tensor *em_linear(const em_tensor *input, const em_tensor *weight, const em_tensor *bias)
{
    if (!input || !weight) return em_fail(EM_ERR_VALUE, "linear: input and weight must not be NULL"), NULL;
    em_tensor *wt = em_t(weight);
    if (!wt) return NULL;
    em_tensor *out;
    if (em_ndim(input) == 2 && bias) {
        out = em_addmm(bias, input, wt, 1.0, 1.0);
        em_release(wt);
        return out;
    }
    out = em_matmul(input, wt);
    em_release(wt);
    if (!out || !bias) return out;
    em_tensor *sum = em_add(out, bias, 1.0);
    /* PyTorch adds the bias in place: it may broadcast, not grow the result */
    if (sum && (sum->ndim != out->ndim || memcmp(sum->sizes, out->sizes, out->ndim * sizeof *out->sizes))) {
        em_error(EM_ERR_SHAPE, "linear: output with shape %s doesn't match the broadcast shape %s",
                 em_shape_str(out->ndim, out->sizes), em_shape_str(sum->ndim, sum->sizes));
        em_release(sum);
        sum = NULL;
    }
    em_release(out);
    return sum;
}
