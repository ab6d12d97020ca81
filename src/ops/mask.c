/* Op layer of the mask ops (masked_fill, masked_scatter, masked_select) and
 * nonzero/argwhere. Kernels: src/cpu/index_mask.c. The kernels of
 * masked_select and nonzero size their result (it depends on the data):
 * the op layer hands them an empty output that they resize. */
#include "index_plan.h"

static em_status check_mask(const em_tensor *mask, const char *op)
{
    if (!mask) return em_fail(EM_ERR_VALUE, "%s: mask is NULL", op);
    if (mask->dtype != EM_BOOL && mask->dtype != EM_U8)
        return em_fail(EM_ERR_DTYPE, "%s: expected BoolTensor or ByteTensor for mask, but got mask with dtype %s", op,
                       em_dtypes[mask->dtype].name);
    return EM_OK;
}

/* Note [Recorded in-place mask ops]
 * masked_fill_ and masked_scatter_ write self in place but do not read it,
 * so self is no kernel input; when autograd may record the call (grad mode
 * on, self with autograd state), self is also passed as c->in[2], which the
 * kernels ignore beyond the loop, so that the node links to self's history
 * (the gradient passes where the mask is false). */
static void add_self_for_autograd(em_call *c, em_tensor *self)
{
    if (!em_grad_mode() || !self->autograd) return;
    c->in[2] = self;
    c->operand_dtypes[c->nout + 2] = self->dtype;
    c->nin = 3;
}

/* Checks an in-place masked op: mask must broadcast to self's own shape. */
static em_status check_inplace(const em_tensor *self, const em_tensor *mask, const char *op)
{
    if (!self) return em_fail(EM_ERR_VALUE, "%s: self is NULL", op);
    if (check_mask(mask, op)) return em_error_code();
    int64_t shape[EM_MAX_DIMS];
    int nd = em_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes, shape, op);
    if (nd < 0) return em_error_code();
    if (nd != self->ndim || memcmp(shape, self->sizes, nd * sizeof *shape))
        return em_fail(EM_ERR_SHAPE, "%s: output with shape %s doesn't match the broadcast shape %s", op,
                       em_shape_str(self->ndim, self->sizes), em_shape_str(nd, shape));
    if (em_check_overlap(self, NULL, op) || em_check_no_overlap(self, mask, op)) return em_error_code();
    return EM_OK;
}

/* A new tensor holding self broadcast against mask (for the out-of-place forms). */
static em_tensor *broadcast_copy(const em_tensor *self, const em_tensor *mask, const char *op)
{
    if (!self) return em_error(EM_ERR_VALUE, "%s: self is NULL", op);
    if (check_mask(mask, op)) return NULL;
    int64_t shape[EM_MAX_DIMS];
    int nd = em_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes, shape, op);
    if (nd < 0) return NULL;
    em_tensor *r = em_tensor_new(nd, shape, (em_dtype)self->dtype, self->storage->device);
    return em_index_finish(r, r ? em_copy_(r, self) : em_error_code());
}

/* ---- masked_fill ------------------------------------------------------ */
em_status em_masked_fill_tensor_(em_tensor *self, const em_tensor *mask, const em_tensor *value)
{
    const char *op = "masked_fill_";
    if (check_inplace(self, mask, op)) return em_error_code();
    em_tensor *v = em_index_scalar_value(value, (em_dtype)self->dtype, op);
    if (!v) return em_error_code();
    em_call c = {.op = EM_OP_masked_fill, .nin = 2, .nout = 1, .dtype = (em_dtype)self->dtype};
    c.out[0] = self;
    c.in[0] = mask;
    c.in[1] = v;
    c.operand_dtypes[0] = c.operand_dtypes[2] = self->dtype;
    c.operand_dtypes[1] = EM_BOOL;
    add_self_for_autograd(&c, self);
    em_status st = em_dispatch(&c);
    em_release(v);
    return st;
}

em_status em_masked_fill_(em_tensor *self, const em_tensor *mask, double value)
{
    em_tensor *v = em_scalar_float(value);
    em_status st = v ? em_masked_fill_tensor_(self, mask, v) : em_error_code();
    em_release(v);
    return st;
}

em_tensor *em_masked_fill_tensor(const em_tensor *self, const em_tensor *mask, const em_tensor *value)
{
    em_tensor *r = broadcast_copy(self, mask, "masked_fill");
    return em_index_finish(r, r ? em_masked_fill_tensor_(r, mask, value) : em_error_code());
}

em_tensor *em_masked_fill(const em_tensor *self, const em_tensor *mask, double value)
{
    em_tensor *r = broadcast_copy(self, mask, "masked_fill");
    return em_index_finish(r, r ? em_masked_fill_(r, mask, value) : em_error_code());
}

/* ---- masked_scatter --------------------------------------------------- */
em_status em_masked_scatter_(em_tensor *self, const em_tensor *mask, const em_tensor *source)
{
    const char *op = "masked_scatter_";
    if (!source) return em_fail(EM_ERR_VALUE, "%s: source is NULL", op);
    if (self && self->dtype != source->dtype)
        return em_fail(EM_ERR_DTYPE, "masked_scatter: expected self and source to have same dtypes but got %s and %s",
                       em_dtypes[self->dtype].name, em_dtypes[source->dtype].name);
    if (check_inplace(self, mask, op)) return em_error_code();
    em_tensor *m = em_expand(mask, self->ndim, self->sizes);
    /* the kernel reads source in row-major order from a contiguous buffer; a
     * source sharing self's memory is copied first so it is read before written */
    em_tensor *src = source->storage == self->storage ? em_clone(source) : em_contiguous(source);
    em_status st = m && src ? EM_OK : em_error_code();
    if (!st) {
        em_call c = {.op = EM_OP_masked_scatter, .nin = 2, .nout = 1, .dtype = (em_dtype)self->dtype};
        c.out[0] = self;
        c.in[0] = m;
        c.in[1] = src;
        c.operand_dtypes[0] = c.operand_dtypes[2] = self->dtype;
        c.operand_dtypes[1] = mask->dtype;
        add_self_for_autograd(&c, self);
        st = em_dispatch(&c);
    }
    em_release(m), em_release(src);
    return st;
}

em_tensor *em_masked_scatter(const em_tensor *self, const em_tensor *mask, const em_tensor *source)
{
    em_tensor *r = broadcast_copy(self, mask, "masked_scatter");
    return em_index_finish(r, r ? em_masked_scatter_(r, mask, source) : em_error_code());
}

/* ---- masked_select ---------------------------------------------------- */
em_tensor *em_masked_select(const em_tensor *self, const em_tensor *mask)
{
    const char *op = "masked_select";
    if (!self) return em_error(EM_ERR_VALUE, "%s: self is NULL", op);
    if (check_mask(mask, op)) return NULL;
    int64_t shape[EM_MAX_DIMS], zero = 0;
    int nd = em_broadcast_shapes(self->ndim, self->sizes, mask->ndim, mask->sizes, shape, op);
    if (nd < 0) return NULL;
    em_tensor *s = em_expand(self, nd, shape), *m = em_expand(mask, nd, shape);
    em_tensor *out = em_tensor_new(1, &zero, (em_dtype)self->dtype, self->storage->device);
    em_status st = s && m && out ? EM_OK : em_error_code();
    if (!st) {
        em_call c = {.op = EM_OP_masked_select, .nin = 2, .nout = 1, .dtype = (em_dtype)self->dtype};
        c.out[0] = out;
        c.in[0] = s;
        c.in[1] = m;
        c.operand_dtypes[0] = c.operand_dtypes[1] = self->dtype;
        c.operand_dtypes[2] = mask->dtype;
        st = em_dispatch(&c);
    }
    em_release(s), em_release(m);
    return em_index_finish(out, st);
}

em_status em_masked_select_out(em_tensor *out, const em_tensor *self, const em_tensor *mask)
{
    const em_tensor *in[] = {self, mask};
    return em_index_write_out(out, em_masked_select(self, mask), 2, in, "masked_select_out");
}

/* ---- nonzero / argwhere ----------------------------------------------- */
em_tensor *em_nonzero(const em_tensor *self)
{
    if (!self) return em_error(EM_ERR_VALUE, "nonzero: self is NULL");
    if (em_dtype_is_complex((em_dtype)self->dtype)) { /* the entries with a nonzero part: of self != 0 */
        em_tensor *zero = em_tensor_scalar(0, (em_dtype)self->dtype), *nz = zero ? em_ne(self, zero) : NULL;
        em_tensor *r = nz ? em_nonzero(nz) : NULL;
        em_release(zero), em_release(nz);
        return r;
    }
    int64_t shape[2] = {0, self->ndim};
    em_tensor *out = em_tensor_new(2, shape, EM_I64, self->storage->device);
    if (!out) return NULL;
    em_call c = {.op = EM_OP_nonzero, .nin = 1, .nout = 1, .dtype = (em_dtype)self->dtype};
    c.out[0] = out;
    c.in[0] = self;
    c.operand_dtypes[0] = EM_I64;
    c.operand_dtypes[1] = self->dtype;
    return em_index_finish(out, em_dispatch(&c));
}

em_status em_nonzero_out(em_tensor *out, const em_tensor *self)
{
    if (out && out->dtype != EM_I64)
        return em_fail(EM_ERR_DTYPE, "nonzero: Expected out tensor to have scalar type int64 but got scalar type %s",
                       em_dtypes[out->dtype].name);
    const em_tensor *in[] = {self};
    return em_index_write_out(out, em_nonzero(self), 1, in, "nonzero_out");
}

em_tensor *em_argwhere(const em_tensor *self) { return em_nonzero(self); }
