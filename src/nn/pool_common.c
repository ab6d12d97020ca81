/* Shared checks and plumbing of the pool family's op layer (see pool_common.h). */
#include "pool_common.h"
#include <stdio.h>

em_status em_pool_check_input(const em_tensor *x, int nd, const char *name, bool allow_empty_batch)
{
    bool ok = x->ndim == nd + 1 || x->ndim == nd + 2;
    for (int k = x->ndim == nd + 2 ? 1 : 0; ok && k < x->ndim; k++) ok = x->sizes[k] > 0;
    if (ok && !allow_empty_batch && x->sizes[0] == 0) ok = false;
    if (ok) return EM_OK;
    return em_fail(EM_ERR_SHAPE, "%s: Expected %dD or %dD (batch mode) tensor with optional 0 dim batch size for "
                   "input, but got: %s", name, nd + 1, nd + 2, em_shape_str(x->ndim, x->sizes));
}

void em_pool_geom_init(em_pool_geom *g, const em_tensor *x, int nd)
{
    *g = (em_pool_geom){.planes = 1};
    for (int k = 0; k < x->ndim - nd; k++) g->planes *= x->sizes[k];
    for (int j = 0; j < 3; j++) {
        int k = x->ndim - 3 + j;
        g->in[j] = g->out[j] = j >= 3 - nd ? x->sizes[k] : 1;
        g->k[j] = g->s[j] = g->d[j] = 1;
    }
}

void em_pool_out_sizes(const em_tensor *x, int nd, const int64_t *out3, int64_t *sizes)
{
    memcpy(sizes, x->sizes, (x->ndim - nd) * sizeof *sizes);
    for (int k = 0; k < nd; k++) sizes[x->ndim - nd + k] = out3[3 - nd + k];
}

const char *em_pool_dims_str(int n, const int64_t *v)
{
    static _Thread_local char buf[4][96];
    static _Thread_local int next;
    char *s = buf[next++ & 3];
    int len = 0;
    for (int k = 0; k < n && len < 80; k++) len += snprintf(s + len, 96 - len, k ? "x%lld" : "%lld", (long long)v[k]);
    return s;
}

em_tensor *em_pool_compute_input(const em_tensor *x, const char *name)
{
    if (x->dtype == EM_F32 || x->dtype == EM_F64) return em_contiguous(x);
    if (x->dtype == EM_BF16) {
        em_tensor *f = em_to_dtype(x, EM_F32), *c = f ? em_contiguous(f) : NULL;
        em_release(f);
        return c;
    }
    return em_error(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", name, em_dtype_scalar_name((em_dtype)x->dtype));
}

/* 2-d pooling keeps a channels_last input's layout, for the indices too
 * (PyTorch's CPU kernels do; its 1-d and 3-d ones give contiguous). */
em_tensor *em_pool_layout(em_tensor *r, const em_tensor *like, int nd, em_tensor **indices)
{
    if (!r || nd != 2 || like->ndim != 4 || em_suggest_memory_format(like) != EM_CHANNELS_LAST) return r;
    if (indices && *indices && !(*indices = em_in_format(*indices, EM_CHANNELS_LAST))) {
        em_release(r);
        return NULL;
    }
    return em_in_format(r, EM_CHANNELS_LAST);
}

em_tensor *em_pool_result_dtype(em_tensor *r, const em_tensor *like, em_tensor **indices)
{
    if (!r || r->dtype == like->dtype) return r;
    em_tensor *c = em_to_dtype(r, (em_dtype)like->dtype);
    em_release(r);
    if (!c && indices) {
        em_release(*indices);
        *indices = NULL;
    }
    return c;
}

em_tensor *em_pool_run1(em_call *c, int ndim, const int64_t *sizes)
{
    em_tensor *out = em_empty(ndim, sizes, c->dtype);
    if (!out) return NULL;
    c->nout = 1;
    c->out[0] = out;
    if (em_dispatch(c)) {
        em_release(out);
        return NULL;
    }
    return out;
}
