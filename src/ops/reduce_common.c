/* Shared op-layer plumbing of the reduce family (see reduce_common.h). */
#include "reduce_common.h"

em_status em_reduce_mask(const em_tensor *x, int ndims, const int *dims, const char *name, uint32_t *mask)
{
    if (!x) return em_fail(EM_ERR_VALUE, "%s: input tensor is NULL", name);
    if (ndims < 0 || ndims > EM_MAX_DIMS || (ndims && !dims))
        return em_fail(EM_ERR_VALUE, "%s: invalid list of %d dims", name, ndims);
    if (ndims == 0) {
        *mask = em_reduce_all_dims(x);
        return EM_OK;
    }
    uint32_t m = 0;
    for (int k = 0; k < ndims; k++) {
        int d = em_wrap_dim(dims[k], x->ndim, name);
        if (d < 0) return em_error_code();
        if (m >> d & 1)
            return em_fail(EM_ERR_RUNTIME, "%s: dim %d appears multiple times in the list of dims", name, d);
        m |= 1u << d;
    }
    *mask = m & em_reduce_all_dims(x);
    return EM_OK;
}

em_status em_reduce_dim_mask(const em_tensor *x, int dim, const char *name, uint32_t *mask)
{
    return em_reduce_mask(x, 1, &dim, name, mask);
}

const char *em_reduce_type_name(em_dtype dt) { return em_dtype_scalar_name(dt); }

em_status em_reduce_dtype_error(const char *kernel, em_dtype dt)
{
    return em_fail(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", kernel, em_reduce_type_name(dt));
}

em_status em_reduce_check_dtype_arg(em_dtype dt, const char *name)
{
    if (dt != EM_DTYPE_NONE && !em_dtype_valid(dt)) return em_fail(EM_ERR_DTYPE, "%s: invalid dtype %d", name, (int)dt);
    return EM_OK;
}

em_status em_reduce_check_nonempty(const em_tensor *x, uint32_t mask, bool all_dims, const char *name,
                                   em_status all_code)
{
    if (all_dims && em_numel(x) == 0)
        return em_fail(all_code, "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                       "reduction dim with the 'dim' argument.", name);
    for (int d = 0; d < x->ndim; d++)
        if ((mask >> d & 1) && x->sizes[d] == 0)
            return em_fail(EM_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", name, d);
    return EM_OK;
}

/* r without its masked dims (a view); consumes r. */
static em_tensor *drop_dims(em_tensor *r, uint32_t mask)
{
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    int n = 0;
    for (int d = 0; d < r->ndim; d++)
        if (!(mask >> d & 1)) {
            sizes[n] = r->sizes[d];
            strides[n++] = r->strides[d];
        }
    em_tensor *v = em_tensor_view(r, n, sizes, strides, r->offset);
    em_release(r);
    return v;
}

/* x converted to `via` then `compute` (new reference). */
static em_tensor *convert_input(const em_tensor *x, em_dtype via, em_dtype compute)
{
    if (via == EM_DTYPE_NONE || via == x->dtype || via == compute) return em_to_dtype(x, compute);
    em_tensor *t = em_to_dtype(x, via);
    if (!t) return NULL;
    em_tensor *r = em_to_dtype(t, compute);
    em_release(t);
    return r;
}

em_status em_reduce_run(const em_reduce_plan *p, const em_tensor *x, em_tensor **res)
{
    int64_t shape[EM_MAX_DIMS];
    bool drop = !p->keepdim && !p->same_shape, kernel_drops = drop && p->kernel_drops;
    int nd = 0;
    for (int d = 0; d < x->ndim; d++) {
        bool reduced = (p->mask >> d & 1) && !p->same_shape;
        if (!(reduced && kernel_drops)) shape[nd++] = reduced ? 1 : x->sizes[d];
    }
    em_tensor *in = convert_input(x, p->via, p->compute), *out[2] = {NULL, NULL};
    em_status st = in ? EM_OK : em_error_code();
    for (int k = 0; k < p->nout && st == EM_OK; k++) {
        out[k] = em_tensor_new(nd, shape, p->kout[k], x->storage->device);
        if (!out[k]) st = em_error_code();
    }
    if (st == EM_OK) {
        em_call c = {.op = p->op, .nin = 1, .nout = p->nout, .dtype = p->compute};
        c.in[0] = in;
        c.operand_dtypes[p->nout] = (int8_t)p->compute;
        for (int k = 0; k < p->nout; k++) {
            c.out[k] = out[k];
            c.operand_dtypes[k] = (int8_t)p->kout[k];
        }
        memcpy(c.f, p->f, sizeof c.f);
        c.i[0] = p->mask;
        memcpy(c.i + 1, p->i, sizeof p->i);
        st = em_dispatch(&c);
    }
    em_release(in);
    for (int k = 0; k < p->nout; k++) {
        res[k] = NULL;
        if (st == EM_OK) {
            res[k] = em_to_dtype(out[k], p->result[k]);
            if (res[k] && drop && !kernel_drops) res[k] = drop_dims(res[k], p->mask);
            if (!res[k]) st = em_error_code();
        }
        em_release(out[k]);
    }
    if (st != EM_OK)
        for (int k = 0; k < p->nout; k++) {
            em_release(res[k]);
            res[k] = NULL;
        }
    return st;
}

em_tensor *em_reduce_run1(const em_reduce_plan *p, const em_tensor *x)
{
    em_tensor *r;
    return em_reduce_run(p, x, &r) ? NULL : r;
}

em_status em_reduce_check_out(int n, em_tensor *const *outs, const em_dtype *want, const char *name)
{
    for (int k = 0; k < n; k++) {
        if (!outs[k]) return em_fail(EM_ERR_VALUE, "%s: out is NULL", name);
        if (want && outs[k]->dtype != want[k])
            return em_fail(EM_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", name,
                           em_dtype_name(want[k]), em_dtype_name((em_dtype)outs[k]->dtype));
    }
    return EM_OK;
}

em_status em_reduce_into(int n, em_tensor *const *outs, em_tensor **res, const char *name)
{
    em_status st = em_reduce_check_out(n, outs, NULL, name);
    for (int k = 0; k < n && st == EM_OK; k++) st = em_check_overlap(outs[k], NULL, name);
    for (int k = 0; k < n && st == EM_OK; k++) {
        em_tensor *o = outs[k], *r = res[k];
        if (o->ndim != r->ndim || memcmp(o->sizes, r->sizes, r->ndim * sizeof *r->sizes))
            st = em_resize_(o, r->ndim, r->sizes);
    }
    for (int k = 0; k < n && st == EM_OK; k++) st = em_copy_(outs[k], res[k]);
    for (int k = 0; k < n; k++) em_release(res[k]);
    return st;
}
