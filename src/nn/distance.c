/* Distances between tensors, as recorded composites (PyTorch's are
 * composites too): cosine_similarity and pairwise_distance. */
#include "../ops/dispatch.h"
#include <math.h>

/* The common floating dtype of x1 and x2, or the PyTorch error. */
static em_status common_float(const em_tensor *x1, const em_tensor *x2, em_dtype *dt)
{
    const em_tensor *both[2] = {x1, x2};
    *dt = em_result_type(2, both);
    if (!em_dtype_is_float(*dt))
        return em_fail(EM_ERR_DTYPE, "expected common dtype to be floating point, yet common dtype is %s",
                       em_dtypes[*dt].scalar_name);
    return EM_OK;
}

/* x / max(||x||_2 along dim, eps), keeping dim. */
static em_tensor *unit(const em_tensor *x, int dim, double eps)
{
    em_tensor *norm = em_norm(x, 2, 1, &dim, true, EM_DTYPE_NONE);
    em_tensor *clamped = norm ? em_clamp(norm, eps, NAN) : NULL;
    em_tensor *u = clamped ? em_div(x, clamped) : NULL;
    em_release(norm), em_release(clamped);
    return u;
}

em_tensor *em_cosine_similarity(const em_tensor *x1, const em_tensor *x2, int dim, double eps)
{
    if (!x1 || !x2) return em_error(EM_ERR_VALUE, "cosine_similarity: argument is NULL");
    em_dtype dt;
    int64_t shape[EM_MAX_DIMS];
    if (common_float(x1, x2, &dt)) return NULL;
    int ndim = em_broadcast_shapes(x1->ndim, x1->sizes, x2->ndim, x2->sizes, shape, "cosine_similarity");
    if (ndim < 0) return NULL;
    int d = em_wrap_dim(dim, ndim, "cosine_similarity");
    if (d < 0) return NULL;
    em_tensor *c1 = em_to_dtype(x1, dt), *c2 = c1 ? em_to_dtype(x2, dt) : NULL;
    em_tensor *e1 = c2 ? em_expand(c1, ndim, shape) : NULL, *e2 = e1 ? em_expand(c2, ndim, shape) : NULL;
    em_tensor *u1 = e2 ? unit(e1, d, eps) : NULL, *u2 = u1 ? unit(e2, d, eps) : NULL;
    em_tensor *prod = u2 ? em_mul(u1, u2) : NULL;
    em_tensor *r = prod ? em_sum(prod, 1, &d, false, EM_DTYPE_NONE) : NULL;
    em_release(c1), em_release(c2), em_release(e1), em_release(e2), em_release(u1), em_release(u2);
    em_release(prod);
    return r;
}

em_tensor *em_pairwise_distance(const em_tensor *x1, const em_tensor *x2, double p, double eps, bool keepdim)
{
    if (!x1 || !x2) return em_error(EM_ERR_VALUE, "pairwise_distance: argument is NULL");
    int ndim = x1->ndim > x2->ndim ? x1->ndim : x2->ndim, last = ndim - 1;
    em_tensor *e = em_scalar_float(eps), *diff = e ? em_sub(x1, x2, 1) : NULL;
    em_tensor *shifted = diff ? em_add(diff, e, 1) : NULL;
    em_tensor *r = shifted ? em_norm(shifted, p, ndim ? 1 : 0, &last, keepdim, EM_DTYPE_NONE) : NULL;
    em_release(e), em_release(diff), em_release(shifted);
    return r;
}
