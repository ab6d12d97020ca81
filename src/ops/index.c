/* The index ops' shared op-layer plumbing (plans, restrided views, overlap
 * and out= checks; see src/ops/index_plan.h) and the ops that index one
 * vector: index_select, take, put. */
#include "index_plan.h"

/* ---- plans ------------------------------------------------------------ */
void em_index_plan_init(em_index_plan *p)
{
    memset(p, 0, sizeof *p);
    p->mode = EM_INDEX_ASSIGN;
    p->include_self = true;
    p->alpha = 1;
    p->alpha_int = 1;
    p->code = EM_ERR_RUNTIME;
    p->msg = EM_INDEX_MSG_BOUNDS;
    p->prefix = "";
}

em_status em_index_plan_add(em_index_plan *p, em_tensor *view, const em_tensor *check, int64_t bound,
                            int64_t stride, int dim)
{
    if (!view) return em_error_code();
    if (p->nindex == EM_MAX_DIMS) {
        em_release(view);
        return em_fail(EM_ERR_SHAPE, "index: at most %d index tensors are supported", EM_MAX_DIMS);
    }
    int k = p->nindex++;
    p->index[k] = view;
    p->check[k] = check;
    p->bound[k] = bound;
    p->stride[k] = stride;
    p->dim[k] = dim;
    return EM_OK;
}

void em_index_plan_clear(em_index_plan *p)
{
    for (int k = 0; k < p->nindex; k++) em_release(p->index[k]);
    p->nindex = 0;
}

em_status em_index_run(em_op op, em_tensor *dst, const em_tensor *src, const em_index_plan *p)
{
    const em_tensor *idx[EM_MAX_DIMS];
    for (int k = 0; k < p->nindex; k++) idx[k] = p->index[k];
    if (em_index_same_device(dst, p->nindex, idx, em_ops[op].name)) return em_error_code();
    /* The plan walks dst (a scatter) or src (a read) through self's own strides, so no copy may stand in for
     * it when it has lazy bits (Note [Conjugate bit]): the callers that take conjugate views resolve self
     * before (em_index, index_select, take, gather, em_index_put_). A scatter's source is read elementwise:
     * its values (a clone) stand in. */
    bool lazy = em_has_lazy_bits(dst) || (!p->scatter && src && em_has_lazy_bits(src)) ||
                (p->result && em_has_lazy_bits(p->result));
    if (lazy)
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "%s of a tensor with the conjugate or negative bit set is not "
                       "implemented; call resolve_conj() / resolve_neg() first", em_ops[op].name);
    em_tensor *plain = p->scatter && src && em_has_lazy_bits(src) ? em_clone(src) : NULL;
    if (p->scatter && src && em_has_lazy_bits(src) && !plain) return em_error_code();
    em_call c = {.op = op, .nin = 1, .nout = 1, .dtype = (em_dtype)dst->dtype, .arg = p};
    c.out[0] = dst;
    c.in[0] = plain ? plain : src;
    c.operand_dtypes[0] = c.operand_dtypes[1] = dst->dtype;
    /* Note [Recorded index calls] */
    for (int k = 0; k < p->noperands; k++) {
        c.in[1 + k] = p->operands[k];
        c.operand_dtypes[c.nout + 1 + k] = p->operands[k] ? p->operands[k]->dtype : 0;
    }
    c.nin += p->noperands;
    if (p->result && p->result != dst) c.out[c.nout++] = p->result;
    c.i[0] = p->iparams[0];
    c.i[1] = p->iparams[1];
    c.f[0] = p->fparam;
    em_status st = em_dispatch(&c);
    em_release(plain);
    return st;
}

em_tensor *em_index_view(const em_tensor *t, int nd, const int64_t *sizes, const int64_t *strides, int64_t offset)
{
    bool grad = em_grad_mode();
    em_set_grad_enabled(false);
    em_tensor *v = em_tensor_view(t, nd, sizes, strides, offset);
    em_set_grad_enabled(grad);
    return v;
}

/* ---- views and checks ------------------------------------------------- */
int64_t em_index_size_at(const em_tensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }

em_tensor *em_index_restride(const em_tensor *t, int nd, const int64_t *sizes, int zero_dim)
{
    int64_t strides[EM_MAX_DIMS];
    for (int d = 0; d < nd; d++) strides[d] = t->ndim && d != zero_dim ? t->strides[d] : 0;
    return em_index_view(t, nd, sizes, strides, t->offset);
}

em_tensor *em_index_along(const em_tensor *index, int nd, const int64_t *sizes, int dim)
{
    int64_t strides[EM_MAX_DIMS] = {0};
    if (index->ndim) strides[dim] = index->strides[0];
    return em_index_view(index, nd, sizes, strides, index->offset);
}

em_status em_index_same_device(const em_tensor *self, int n, const em_tensor *const *ts, const char *op)
{
    em_device a = self->storage->device;
    for (int k = 0; k < n; k++) {
        if (!ts[k]) continue;
        em_device b = ts[k]->storage->device;
        if (a.type != b.type || a.index != b.index)
            return em_fail(EM_ERR_DEVICE, "%s: Expected all tensors to be on the same device, but found at least "
                           "two devices", op);
    }
    return EM_OK;
}

em_status em_index_write_out(em_tensor *out, em_tensor *r, int n, const em_tensor *const *inputs, const char *op)
{
    em_status st = EM_OK;
    if (!r) return em_error_code();
    if (!out) {
        st = em_fail(EM_ERR_VALUE, "%s: out is NULL", op);
    } else if (out->dtype != r->dtype) {
        st = em_fail(EM_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                     em_dtypes[r->dtype].name, em_dtypes[out->dtype].name);
    } else {
        st = em_index_same_device(out, n, inputs, op);
        if (!st) st = em_check_overlap(out, NULL, op);
        for (int k = 0; k < n && !st; k++) st = em_check_no_overlap(out, inputs[k], op);
        bool fits = out->ndim == r->ndim && !memcmp(out->sizes, r->sizes, r->ndim * sizeof *r->sizes);
        if (!st && !fits) st = em_resize_(out, r->ndim, r->sizes);
        if (!st) st = em_copy_(out, r);
    }
    em_release(r);
    return st;
}

em_tensor *em_index_clone(const em_tensor *self, const char *op)
{
    return self ? em_clone(self) : em_error(EM_ERR_VALUE, "%s: self is NULL", op);
}

em_tensor *em_index_finish(em_tensor *clone, em_status inplace_status)
{
    if (clone && inplace_status) {
        em_release(clone);
        return NULL;
    }
    return clone;
}

em_tensor *em_index_scalar_value(const em_tensor *value, em_dtype dt, const char *op)
{
    if (!value) return em_error(EM_ERR_VALUE, "%s: value is NULL", op);
    if (value->ndim != 0)
        return em_error(EM_ERR_RUNTIME, "%s only supports a 0-dimensional value tensor, but got tensor with %d "
                        "dimension(s).", op, value->ndim);
    double re, im = 0;
    if (em_dtype_is_complex((em_dtype)value->dtype) && !em_dtype_is_complex(dt) && !em_item_complex(value, &re, &im) &&
        im != 0) /* as PyTorch's checked scalar conversion */
        return em_error(EM_ERR_RUNTIME, "value cannot be converted to type %s without overflow",
                        em_dtypes[dt].name);
    em_tensor *v = em_tensor_new(0, NULL, dt, value->storage->device);
    if (v && em_copy_(v, value)) {
        em_release(v);
        return NULL;
    }
    return v;
}

/* ---- index_select ----------------------------------------------------- */
/* The int64 vector (or scalar) form of an index_select/index_add index. */
static em_tensor *index_vector(const em_tensor *index, const char *op)
{
    if (!index) return em_error(EM_ERR_VALUE, "%s: index is NULL", op);
    if (index->dtype != EM_I64 && index->dtype != EM_I32)
        return em_error(EM_ERR_DTYPE, "%s: Expected dtype int32 or int64 for index, but got %s", op,
                        em_dtypes[index->dtype].name);
    if (index->ndim > 1)
        return em_error(EM_ERR_INDEX, "%s: Index is supposed to be a vector, but got dim: %d with size: %s", op,
                        index->ndim, em_shape_str(index->ndim, index->sizes));
    return em_to_dtype(index, EM_I64);
}

/* The value of index_select (op name in messages: `op`). */
static em_tensor *index_select(const em_tensor *self, int dim, const em_tensor *index, const char *op)
{
    if (!self) return em_error(EM_ERR_VALUE, "%s: self is NULL", op);
    if (em_has_lazy_bits(self)) { /* the plan walks self's storage: read its values (Note [Conjugate bit]) */
        em_tensor *plain = em_clone(self), *r = plain ? index_select(plain, dim, index, op) : NULL;
        em_release(plain);
        return r;
    }
    int d = em_wrap_dim(dim, self->ndim, op);
    if (d < 0) return NULL;
    em_tensor *idx = index_vector(index, op);
    if (!idx) return NULL;
    int64_t n = em_numel(idx), shape[EM_MAX_DIMS];
    int nd = self->ndim ? self->ndim : 1;
    for (int i = 0; i < nd; i++) shape[i] = em_index_size_at(self, i);
    em_tensor *out = NULL, *src = NULL;
    em_index_plan p;
    em_index_plan_init(&p);
    p.code = EM_ERR_INDEX;
    p.msg = EM_INDEX_MSG_RANGE;
    p.check_empty = true;
    if (self->ndim == 0 && n == 0) {
        em_error(EM_ERR_INDEX, "%s: the index of a 0-d tensor must not be empty", op);
    } else if (shape[d] == 0 && n > 0 && self->ndim > 1) { /* 1-d: the IndexError of any bad index */
        em_error(EM_ERR_RUNTIME, "%s: self indexing axis dim should be positive", op);
    } else {
        int64_t bound = shape[d];
        shape[d] = self->ndim ? n : 1; /* 0-d self: a 0-d result; every index is still checked */
        out = em_tensor_new(self->ndim, shape, (em_dtype)self->dtype, self->storage->device);
        src = em_index_restride(self, nd, shape, d);
        if (out && src && !em_index_plan_add(&p, em_index_along(idx, nd, shape, d), idx, bound,
                                             self->ndim ? self->strides[d] : 0, d)) {
            em_tensor *dst = self->ndim ? em_retain(out) : em_index_view(out, nd, shape, (const int64_t[]){1}, 0);
            p.result = out;
            p.operands[0] = self, p.operands[1] = idx, p.noperands = 2;
            p.iparams[0] = d;
            if (!dst || em_index_run(EM_OP_index_select, dst, src, &p)) em_release(out), out = NULL;
            em_release(dst);
        } else {
            em_release(out), out = NULL;
        }
    }
    em_index_plan_clear(&p);
    em_release(src);
    em_release(idx);
    return out;
}

em_tensor *em_index_select(const em_tensor *self, int dim, const em_tensor *index)
{
    return index_select(self, dim, index, "index_select()");
}

em_status em_index_select_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index)
{
    const em_tensor *in[] = {self, index};
    return em_index_write_out(out, index_select(self, dim, index, "index_select_out()"), 2, in, "index_select_out()");
}

/* ---- take / put ------------------------------------------------------- */
static em_status check_long_index(const em_tensor *index, const char *op)
{
    if (!index) return em_fail(EM_ERR_VALUE, "%s: index is NULL", op);
    if (index->dtype != EM_I64)
        return em_fail(EM_ERR_DTYPE, "%s: Expected a long tensor for index, but got %s", op,
                       em_dtypes[index->dtype].name);
    return EM_OK;
}

/* A plan indexing a contiguous tensor of `numel` elements with `index`
 * (any shape) in row-major order, iterated at `index`'s own shape. */
static em_status flat_plan(em_index_plan *p, const em_tensor *index, int64_t numel)
{
    em_index_plan_init(p);
    p->wrap = true;
    p->code = EM_ERR_INDEX;
    p->msg = EM_INDEX_MSG_FLAT;
    return em_index_plan_add(p, em_retain((em_tensor *)index), index, numel, 1, 0);
}

static em_tensor *take(const em_tensor *self, const em_tensor *index, const char *op)
{
    if (!self) return em_error(EM_ERR_VALUE, "%s: self is NULL", op);
    if (em_has_lazy_bits(self)) { /* the plan walks self's storage: read its values (Note [Conjugate bit]) */
        em_tensor *plain = em_clone(self), *r = plain ? take(plain, index, op) : NULL;
        em_release(plain);
        return r;
    }
    if (check_long_index(index, op)) return NULL;
    int64_t numel = em_numel(self);
    if (numel == 0 && em_numel(index) > 0) return em_error(EM_ERR_INDEX, "%s: tried to take from an empty tensor", op);
    bool grad = em_grad_mode(); /* the loop's view of self: no history (Note [Recorded index calls]) */
    em_set_grad_enabled(false);
    em_tensor *flat = em_contiguous(self);
    em_set_grad_enabled(grad);
    em_tensor *out = em_tensor_new(index->ndim, index->sizes, (em_dtype)self->dtype, self->storage->device);
    const int64_t zeros[EM_MAX_DIMS] = {0}; /* every element starts at flat[0]; the index moves it */
    em_tensor *src = flat ? em_index_view(flat, index->ndim, index->sizes, zeros, flat->offset) : NULL;
    em_index_plan p;
    em_status st = out && src ? flat_plan(&p, index, numel) : em_error_code();
    if (!st) {
        p.result = out;
        p.operands[0] = self, p.operands[1] = index, p.noperands = 2;
        st = em_index_run(EM_OP_take, out, src, &p);
        em_index_plan_clear(&p);
    }
    em_release(src);
    em_release(flat);
    return em_index_finish(out, st);
}

em_tensor *em_take(const em_tensor *self, const em_tensor *index) { return take(self, index, "take()"); }

em_status em_take_out(em_tensor *out, const em_tensor *self, const em_tensor *index)
{
    const em_tensor *in[] = {self, index};
    return em_index_write_out(out, take(self, index, "take_out()"), 2, in, "take_out()");
}

/* put_ into a contiguous self; index and source flattened to vectors. */
static em_status put_contiguous(em_tensor *self, const em_tensor *index, const em_tensor *source, bool accumulate)
{
    int64_t n = em_numel(index);
    bool grad = em_grad_mode(); /* the loop's views: no history (Note [Recorded index calls]) */
    em_set_grad_enabled(false);
    em_tensor *idx = em_reshape(index, 1, &n), *src = em_reshape(source, 1, &n);
    em_set_grad_enabled(grad);
    em_tensor *dst = em_index_view(self, 1, &n, (const int64_t[]){0}, self->offset);
    em_index_plan p;
    em_status st = idx && src && dst ? flat_plan(&p, idx, em_numel(self)) : em_error_code();
    if (!st) {
        p.result = self;
        p.operands[0] = self, p.operands[1] = index, p.operands[2] = source, p.noperands = 3;
        p.iparams[0] = accumulate;
        p.scatter = true;
        p.mode = accumulate ? EM_INDEX_SUM : EM_INDEX_ASSIGN;
        st = em_index_run(EM_OP_put, dst, src, &p);
        em_index_plan_clear(&p);
    }
    em_release(idx), em_release(src), em_release(dst);
    return st;
}

em_status em_put_(em_tensor *self, const em_tensor *index, const em_tensor *source, bool accumulate)
{
    const char *op = "put_()";
    if (!self || !source) return em_fail(EM_ERR_VALUE, "%s: argument is NULL", op);
    if (check_long_index(index, op)) return em_error_code();
    if (self->dtype != source->dtype)
        return em_fail(EM_ERR_DTYPE, "%s: self and source expected to have the same dtype, but got self.dtype = %s "
                       "and source.dtype = %s", op, em_dtypes[self->dtype].name, em_dtypes[source->dtype].name);
    if (em_numel(index) != em_numel(source))
        return em_fail(EM_ERR_INDEX, "%s: Expected source and index to have the same number of elements, but got "
                       "source.numel() = %lld, index.numel() = %lld", op, (long long)em_numel(source),
                       (long long)em_numel(index));
    if (em_numel(self) == 0 && em_numel(index) > 0) return em_fail(EM_ERR_INDEX, "%s: tried to put into an empty tensor", op);
    if (em_check_overlap(self, NULL, op) || em_check_no_overlap(self, source, op) ||
        em_check_no_overlap(self, index, op))
        return em_error_code();
    em_status st;
    if (em_is_contiguous(self)) {
        st = put_contiguous(self, index, source, accumulate);
    } else { /* flat positions follow row-major order: work on a contiguous copy */
        em_tensor *tmp = em_clone(self);
        st = tmp ? put_contiguous(tmp, index, source, accumulate) : em_error_code();
        if (!st) st = em_copy_(self, tmp);
        em_release(tmp);
        return st; /* em_copy_ bumped the version */
    }
    return st;
}

em_tensor *em_put(const em_tensor *self, const em_tensor *index, const em_tensor *source, bool accumulate)
{
    em_tensor *r = em_index_clone(self, "put()");
    return em_index_finish(r, r ? em_put_(r, index, source, accumulate) : em_error_code());
}
