/* nn.functional.linear as a composite of recorded ops (addmm, or matmul
 * then add): its gradients come from those ops' formulas. */
#include <ember/ember.h>

#include <string.h>

#include "../ops/autocast.h"

em_tensor *em_linear(const em_tensor *input, const em_tensor *weight, const em_tensor *bias)
{
    if (!input || !weight) return em_fail(EM_ERR_VALUE, "linear: input and weight must not be NULL"), NULL;
    EM_AUTOCAST(EM_AUTOCAST_LOWER, em_linear(input, weight, bias), &input, &weight, &bias);
    /* (..., in) folded to (rows, in), as PyTorch does for a contiguous input:
     * one GEMM per pass, and the weight's gradient one GEMM instead of a
     * batch of them summed afterwards */
    if (em_ndim(input) > 2 && em_ndim(weight) == 2 && (!bias || em_ndim(bias) == 1) && em_is_contiguous(input) &&
        input->sizes[input->ndim - 1] == weight->sizes[1]) {
        int64_t rows[2] = {-1, input->sizes[input->ndim - 1]}, shape[EM_MAX_DIMS];
        memcpy(shape, input->sizes, input->ndim * sizeof *shape);
        shape[input->ndim - 1] = weight->sizes[0];
        em_tensor *x2 = em_numel(input) ? em_reshape(input, 2, rows) : NULL;
        em_tensor *y2 = x2 ? em_linear(x2, weight, bias) : NULL;
        em_tensor *y = y2 ? em_reshape(y2, input->ndim, shape) : NULL;
        em_release(x2), em_release(y2);
        if (y || em_numel(input)) return y;
    }
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
