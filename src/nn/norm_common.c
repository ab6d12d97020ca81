/* Helpers shared by the normalization op layer (see norm_common.h). */
#include "norm_common.h"

em_dtype norm_compute_dtype(const em_tensor *x, const char *kernel)
{
    switch (x->dtype) {
    case EM_F32:
    case EM_F64: return (em_dtype)x->dtype;
    case EM_BF16: return EM_F32;
    default:
        em_error(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", kernel, em_dtype_scalar_name((em_dtype)x->dtype));
        return EM_DTYPE_NONE;
    }
}

em_status norm_check_param_dtype(const em_tensor *p, const em_tensor *x, const char *message)
{
    if (!p || p->dtype == x->dtype || (x->dtype == EM_BF16 && p->dtype == EM_F32)) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "%s", message);
}

em_tensor *norm_param(const em_tensor *p, em_dtype dt, int ndim, const int64_t *sizes, double fill)
{
    if (!p) return em_full(ndim, sizes, fill, dt);
    /* contiguous first: a view of an expanded parameter that requires grad is refused */
    em_tensor *c = em_to_dtype(p, dt), *k = c ? em_contiguous(c) : NULL, *r = NULL;
    if (k) r = k->ndim == ndim && !memcmp(k->sizes, sizes, ndim * sizeof *sizes) ? em_retain(k)
                                                                                  : em_reshape(k, ndim, sizes);
    em_release(c);
    em_release(k);
    return r;
}

em_tensor *norm_input(const em_tensor *x, em_dtype dt)
{
    em_tensor *c = em_to_dtype(x, dt), *r = c ? em_contiguous(c) : NULL;
    em_release(c);
    return r;
}

em_status norm_fail(em_tensor **out, int n)
{
    em_status st = em_error_code() ? em_error_code() : EM_ERR_RUNTIME;
    for (int k = 0; k < n; k++) em_release(out[k]), out[k] = NULL;
    return st;
}
