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

/* The inf-norm of each row of d with PyTorch's pdist gradient: every entry
 * that ties for the maximum gets sign(d) in full (a norm's would share it):
 * max + sum((|d| - detach(|d|)) * [|d| == max]), whose value is the max. */
static em_tensor *inf_norm_rows(const em_tensor *d)
{
    int last = 1;
    em_tensor *ad = em_abs(d), *m = ad ? em_amax(ad, 1, &last, true) : NULL, *at = m ? em_detach(ad) : NULL;
    em_tensor *mt = at ? em_detach(m) : NULL, *tie = mt ? em_eq(at, mt) : NULL, *dev = tie ? em_sub(ad, at, 1) : NULL;
    em_tensor *part = dev ? em_mul(dev, tie) : NULL, *sum = part ? em_sum(part, 1, &last, false, EM_DTYPE_NONE) : NULL;
    em_tensor *flat = sum ? em_squeeze_dim(mt, 1) : NULL, *r = flat ? em_add(flat, sum, 1) : NULL;
    em_release(ad), em_release(m), em_release(at), em_release(mt), em_release(tie), em_release(dev);
    em_release(part), em_release(sum), em_release(flat);
    return r;
}

/* pdist: rows i < j of x gathered by triu_indices, their difference's p-norm.
 * The norm's gradient is 0 where a difference is all zeros, as PyTorch's
 * pdist backward gives. */
em_tensor *em_pdist(const em_tensor *x, double p)
{
    if (!x) return em_error(EM_ERR_VALUE, "pdist: input is NULL");
    if (x->ndim != 2) return em_error(EM_ERR_SHAPE, "pdist only supports 2D tensors, got: %dD", x->ndim);
    if (!em_dtype_is_float((em_dtype)x->dtype)) return em_error(EM_ERR_DTYPE, "pdist only supports floating-point dtypes");
    if (!(p >= 0)) return em_error(EM_ERR_SHAPE, "pdist only supports non-negative p values");
    const int64_t rows = x->sizes[0];
    em_tensor *pairs = em_triu_indices(rows, rows, 1, EM_I64);
    em_tensor *first = pairs ? em_select(pairs, 0, 0) : NULL, *second = first ? em_select(pairs, 0, 1) : NULL;
    em_tensor *a = second ? em_index_select(x, 0, first) : NULL, *b = a ? em_index_select(x, 0, second) : NULL;
    em_tensor *diff = b ? em_sub(a, b, 1) : NULL;
    int last = 1;
    em_tensor *r = !diff ? NULL : isinf(p) ? inf_norm_rows(diff) : em_norm(diff, p, 1, &last, false, EM_DTYPE_NONE);
    em_release(pairs), em_release(first), em_release(second), em_release(a), em_release(b), em_release(diff);
    return r;
}
