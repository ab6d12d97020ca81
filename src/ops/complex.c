/* The complex conjugate, written with differentiable ops so that it needs
 * no kernel and no backward formula of its own: the parts seen as a real
 * tensor (view_as_real), the imaginary ones negated by a multiply with
 * (1, -1), seen back as complex. */
#include "dispatch.h"
#include "ember/ember.h"

em_tensor *em_conj_physical(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    if (!em_dtype_is_complex((em_dtype)t->dtype)) return em_clone(t);
    bool expanded = false; /* (a recorded view of an expanded tensor is refused: a copy first) */
    for (int d = 0; d < t->ndim; d++) expanded |= t->sizes[d] > 1 && t->strides[d] == 0;
    em_tensor *dense = expanded ? em_contiguous(t) : em_retain((em_tensor *)t);
    static const double signs[2] = {1, -1};
    em_tensor *parts = dense ? em_view_as_real(dense) : NULL, *s = em_from_data(signs, 1, (int64_t[]){2}, EM_F64);
    em_tensor *sp = s ? em_to_dtype(s, (em_dtype)(parts ? parts->dtype : EM_F64)) : NULL;
    em_tensor *flipped = parts && sp ? em_mul(parts, sp) : NULL, *r = flipped ? em_view_as_complex(flipped) : NULL;
    em_release(dense), em_release(parts), em_release(s), em_release(sp), em_release(flipped);
    return r;
}

em_tensor *em_conj_if_complex(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    return em_dtype_is_complex((em_dtype)t->dtype) ? em_conj_physical(t) : em_retain((em_tensor *)t);
}
