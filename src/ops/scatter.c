/* Op layer of the ops along one dim: gather, take_along_dim, the scatter
 * family (scatter, scatter_add, scatter_reduce) and index_add, index_copy,
 * index_fill. All run the indexed loop (Note [Indexed loop] in index_plan.h). */
#include "index_plan.h"

/* Dims of t where a 0-d tensor counts as 1-d (PyTorch's ensure_nonempty_dim). */
static int nonempty_dim(const em_tensor *t) { return t->ndim ? t->ndim : 1; }

/* t, or a (1,) view of a 0-d t (new reference). */
static em_tensor *nonempty_view(const em_tensor *t)
{
    return t->ndim ? em_retain((em_tensor *)t) : em_index_view(t, 1, (const int64_t[]){1}, (const int64_t[]){1}, t->offset);
}

/* ---- gather ----------------------------------------------------------- */
static em_tensor *gather(const em_tensor *self, int dim, const em_tensor *index, const char *op)
{
    if (!self || !index) return em_error(EM_ERR_VALUE, "%s: argument is NULL", op);
    if (em_has_lazy_bits(self)) { /* the plan walks self's storage: read its values (Note [Conjugate bit]) */
        em_tensor *plain = em_clone(self), *r = plain ? gather(plain, dim, index, op) : NULL;
        em_release(plain);
        return r;
    }
    int d = em_wrap_dim(dim, self->ndim, op);
    if (d < 0) return NULL;
    /* PyTorch checks nothing of an empty index, not even its dtype; the empty
     * result is still recorded, so that it has self's history */
    const bool empty = em_numel(index) == 0;
    if (!empty && index->dtype != EM_I64)
        return em_error(EM_ERR_DTYPE, "%s: Expected dtype int64 for index, but got %s", op, em_dtypes[index->dtype].name);
    if (!empty && nonempty_dim(index) != nonempty_dim(self))
        return em_error(EM_ERR_RUNTIME, "%s: Index tensor must have the same number of dimensions as input tensor", op);
    for (int i = 0; !empty && i < nonempty_dim(self); i++) {
        if (i != d && em_index_size_at(index, i) > em_index_size_at(self, i))
            return em_error(EM_ERR_RUNTIME, "%s: Size does not match at dimension %d expected index %s to be smaller "
                            "than self %s apart from dimension %d", op, i, em_shape_str(index->ndim, index->sizes),
                            em_shape_str(self->ndim, self->sizes), d);
    }
    em_tensor *out = em_tensor_new(index->ndim, index->sizes, (em_dtype)self->dtype, self->storage->device);
    em_tensor *idx = index->dtype == EM_I64 ? em_retain((em_tensor *)index)
                                             : em_tensor_new(index->ndim, index->sizes, EM_I64, index->storage->device);
    /* (an empty index may have another rank than self: its view of self reads nothing, all strides 0) */
    static const int64_t none[EM_MAX_DIMS];
    em_tensor *src = !out || !idx ? NULL
                     : empty      ? em_index_view(self, index->ndim, index->sizes, none, self->offset)
                                  : em_index_restride(self, index->ndim, index->sizes, d);
    em_index_plan p;
    em_index_plan_init(&p);
    em_status st = src ? em_index_plan_add(&p, em_retain(idx), idx, em_index_size_at(self, d),
                                           self->ndim && !empty ? self->strides[d] : 0, d)
                       : em_error_code();
    p.result = out;
    p.operands[0] = self, p.operands[1] = idx, p.noperands = 2;
    p.iparams[0] = d;
    if (!st) st = em_index_run(EM_OP_gather, out, src, &p);
    em_index_plan_clear(&p);
    em_release(src), em_release(idx);
    return em_index_finish(out, st);
}

em_tensor *em_gather(const em_tensor *self, int dim, const em_tensor *index) { return gather(self, dim, index, "gather()"); }

em_status em_gather_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index)
{
    const em_tensor *in[] = {self, index};
    return em_index_write_out(out, gather(self, dim, index, "gather_out()"), 2, in, "gather_out()");
}

/* ---- take_along_dim: broadcast, then gather --------------------------- */
static em_tensor *take_along_dim(const em_tensor *self, const em_tensor *indices, int dim)
{
    const char *op = "torch.take_along_dim()";
    if (!self || !indices) return em_error(EM_ERR_VALUE, "%s: argument is NULL", op);
    if (indices->dtype != EM_I64)
        return em_error(EM_ERR_DTYPE, "%s: dtype of indices should be int64 but got %s", op, em_dtypes[indices->dtype].name);
    if (self->ndim != indices->ndim)
        return em_error(EM_ERR_SHAPE, "%s: input and indices should have the same number of dimensions, but got %d "
                        "dimensions for input, and %d dimensions for indices", op, self->ndim, indices->ndim);
    if (self->ndim == 0) return em_error(EM_ERR_INDEX, "%s: Dimension specified as %d but tensor has no dimensions", op, dim);
    int d = em_wrap_dim(dim, self->ndim, op);
    if (d < 0) return NULL;
    /* every dim but d broadcasts; along d each keeps its own size */
    int64_t want[EM_MAX_DIMS], shape[EM_MAX_DIMS];
    memcpy(want, self->sizes, self->ndim * sizeof *want);
    want[d] = indices->sizes[d];
    if (em_broadcast_shapes(self->ndim, want, indices->ndim, indices->sizes, shape, op) < 0) return NULL;
    em_tensor *bi = em_expand(indices, self->ndim, shape);
    shape[d] = self->sizes[d];
    em_tensor *bs = bi ? em_expand(self, self->ndim, shape) : NULL;
    em_tensor *r = bs ? gather(bs, d, bi, op) : NULL;
    em_release(bi), em_release(bs);
    return r;
}

static em_tensor *take_along_flat(const em_tensor *self, const em_tensor *indices)
{
    if (!self || !indices) return em_error(EM_ERR_VALUE, "torch.take_along_dim(): argument is NULL");
    int64_t n = em_numel(self), m = em_numel(indices);
    em_tensor *fs = em_reshape(self, 1, &n), *fi = em_reshape(indices, 1, &m);
    em_tensor *r = fs && fi ? take_along_dim(fs, fi, 0) : NULL;
    em_release(fs), em_release(fi);
    return r;
}

em_tensor *em_take_along_dim(const em_tensor *self, const em_tensor *indices, int dim)
{
    return take_along_dim(self, indices, dim);
}
em_tensor *em_take_along_dim_flat(const em_tensor *self, const em_tensor *indices)
{
    return take_along_flat(self, indices);
}
em_status em_take_along_dim_out(em_tensor *out, const em_tensor *self, const em_tensor *indices, int dim)
{
    const em_tensor *in[] = {self, indices};
    return em_index_write_out(out, take_along_dim(self, indices, dim), 2, in, "take_along_dim_out()");
}
em_status em_take_along_dim_flat_out(em_tensor *out, const em_tensor *self, const em_tensor *indices)
{
    const em_tensor *in[] = {self, indices};
    return em_index_write_out(out, take_along_flat(self, indices), 2, in, "take_along_dim_out()");
}

/* ---- the scatter family ----------------------------------------------- */
typedef struct scatter_kind {
    em_op op;
    em_index_mode mode;
    bool include_self;
    const char *name; /* in messages */
} scatter_kind;

/* The shape rules of scatter (PyTorch's scatter_shape_check); src NULL: a scalar. */
static em_status scatter_shapes(const em_tensor *self, int d, const em_tensor *index, const em_tensor *src,
                                const char *op)
{
    if (nonempty_dim(index) != nonempty_dim(self))
        return em_fail(EM_ERR_RUNTIME, "%s: Index tensor must have the same number of dimensions as self tensor", op);
    if (src && nonempty_dim(index) != nonempty_dim(src))
        return em_fail(EM_ERR_RUNTIME, "%s: Index tensor must have the same number of dimensions as src tensor", op);
    for (int i = 0; i < nonempty_dim(self); i++) {
        int64_t n = em_index_size_at(index, i);
        if ((i != d && n > em_index_size_at(self, i)) || (src && n > em_index_size_at(src, i)))
            return em_fail(EM_ERR_RUNTIME, "%s: Expected index %s to be smaller than self %s apart from dimension %d%s%s",
                           op, em_shape_str(index->ndim, index->sizes), em_shape_str(self->ndim, self->sizes), d,
                           src ? " and to be smaller size than src " : "",
                           src ? em_shape_str(src->ndim, src->sizes) : "");
    }
    return EM_OK;
}

/* Runs the scatter on `target` (self, or a contiguous copy of it for mean). */
static em_status scatter_run(em_tensor *target, int d, const em_tensor *index, const em_tensor *src,
                             const scatter_kind *k)
{
    em_tensor *dst = em_index_restride(target, index->ndim, index->sizes, d);
    em_tensor *srcv = em_index_restride(src, index->ndim, index->sizes, -1);
    em_tensor *count = k->mode == EM_INDEX_MEAN ? em_zeros_like(target, EM_I64) : NULL;
    em_index_plan p;
    em_index_plan_init(&p);
    p.scatter = true;
    p.mode = k->mode;
    p.include_self = k->include_self;
    p.count = count;
    p.base = target;
    p.result = target;
    p.operands[0] = target, p.operands[1] = index, p.operands[2] = src, p.noperands = 3;
    p.iparams[0] = d;
    p.iparams[1] = 2 * k->mode + k->include_self; /* what the formula reads back */
    em_status st = dst && srcv && (count || k->mode != EM_INDEX_MEAN)
                       ? em_index_plan_add(&p, em_retain((em_tensor *)index), index, em_index_size_at(target, d),
                                           target->ndim ? target->strides[d] : 0, d)
                       : em_error_code();
    if (!st) st = em_index_run(k->op, dst, srcv, &p);
    em_index_plan_clear(&p);
    em_release(dst), em_release(srcv), em_release(count);
    return st;
}

/* scatter_ in every form; src is a tensor, or (src_is_value) a 0-d value. */
static em_status scatter_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *src, bool src_is_value,
                          const scatter_kind *k)
{
    const char *op = k->name;
    if (!self || !index || !src) return em_fail(EM_ERR_VALUE, "%s: argument is NULL", op);
    int d = em_wrap_dim(dim, self->ndim, op);
    if (d < 0) return em_error_code();
    if (index->dtype != EM_I64)
        return em_fail(EM_ERR_DTYPE, "%s: Expected dtype int64 for index, but got %s", op, em_dtypes[index->dtype].name);
    if (src->dtype != self->dtype)
        return em_fail(EM_ERR_DTYPE, "%s: Expected self.dtype to be equal to src.dtype (got %s and %s)", op,
                       em_dtypes[self->dtype].name, em_dtypes[src->dtype].name);
    if (k->mode == EM_INDEX_MEAN && self->dtype == EM_BOOL)
        return em_fail(EM_ERR_DTYPE, "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
    if (em_numel(index) == 0) return EM_OK;
    if (scatter_shapes(self, d, index, src_is_value ? NULL : src, op)) return em_error_code();
    if (em_check_overlap(self, NULL, op) || em_check_no_overlap(self, src, op) ||
        em_check_no_overlap(self, index, op))
        return em_error_code();
    em_status st;
    if (k->mode == EM_INDEX_MEAN && !em_is_contiguous(self)) { /* the mean's counts need a contiguous target */
        em_tensor *tmp = em_clone(self);
        st = tmp ? scatter_run(tmp, d, index, src, k) : em_error_code();
        if (!st) st = em_copy_(self, tmp);
        em_release(tmp);
        return st;
    }
    st = scatter_run(self, d, index, src, k);
    return st;
}

/* PyTorch's older scatter(reduce=...) argument. */
static em_status legacy_kind(const char *reduce, scatter_kind *k)
{
    *k = (scatter_kind){EM_OP_scatter, EM_INDEX_ASSIGN, true, "scatter()"};
    if (!reduce) return EM_OK;
    if (!strcmp(reduce, "add")) k->mode = EM_INDEX_SUM;
    else if (!strcmp(reduce, "multiply")) k->mode = EM_INDEX_PROD;
    else return em_fail(EM_ERR_RUNTIME, "scatter(): reduce argument must be either add or multiply.");
    return EM_OK;
}

static em_status reduce_kind(const char *reduce, bool include_self, scatter_kind *k)
{
    static const struct { const char *name; em_index_mode mode; } modes[] = {
        {"sum", EM_INDEX_SUM}, {"prod", EM_INDEX_PROD}, {"mean", EM_INDEX_MEAN},
        {"amax", EM_INDEX_AMAX}, {"amin", EM_INDEX_AMIN},
    };
    for (size_t i = 0; reduce && i < sizeof modes / sizeof *modes; i++) {
        if (!strcmp(reduce, modes[i].name)) {
            *k = (scatter_kind){EM_OP_scatter_reduce, modes[i].mode, include_self, "scatter_reduce()"};
            return EM_OK;
        }
    }
    return em_fail(EM_ERR_RUNTIME, "scatter_reduce(): reduce argument must be either sum, prod, mean, amax or amin, "
                   "got %s", reduce ? reduce : "NULL");
}

static const scatter_kind add_kind = {EM_OP_scatter_add, EM_INDEX_SUM, true, "scatter_add()"};

em_status em_scatter_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *src, const char *reduce)
{
    scatter_kind k;
    return legacy_kind(reduce, &k) ? em_error_code() : scatter_(self, dim, index, src, false, &k);
}

em_status em_scatter_value_(em_tensor *self, int dim, const em_tensor *index, double value, const char *reduce)
{
    scatter_kind k;
    if (!self) return em_fail(EM_ERR_VALUE, "scatter(): self is NULL");
    if (legacy_kind(reduce, &k)) return em_error_code();
    em_tensor *v = em_tensor_scalar(value, (em_dtype)self->dtype);
    em_status st = v ? scatter_(self, dim, index, v, true, &k) : em_error_code();
    em_release(v);
    return st;
}

em_status em_scatter_add_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *src)
{
    return scatter_(self, dim, index, src, false, &add_kind);
}

em_status em_scatter_reduce_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *src,
                             const char *reduce, bool include_self)
{
    scatter_kind k;
    return reduce_kind(reduce, include_self, &k) ? em_error_code() : scatter_(self, dim, index, src, false, &k);
}

em_tensor *em_scatter(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *src, const char *reduce)
{
    em_tensor *r = em_index_clone(self, "scatter()");
    return em_index_finish(r, r ? em_scatter_(r, dim, index, src, reduce) : em_error_code());
}
em_tensor *em_scatter_value(const em_tensor *self, int dim, const em_tensor *index, double value, const char *reduce)
{
    em_tensor *r = em_index_clone(self, "scatter()");
    return em_index_finish(r, r ? em_scatter_value_(r, dim, index, value, reduce) : em_error_code());
}
em_tensor *em_scatter_add(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *src)
{
    em_tensor *r = em_index_clone(self, "scatter_add()");
    return em_index_finish(r, r ? em_scatter_add_(r, dim, index, src) : em_error_code());
}
em_tensor *em_scatter_reduce(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *src,
                             const char *reduce, bool include_self)
{
    em_tensor *r = em_index_clone(self, "scatter_reduce()");
    return em_index_finish(r, r ? em_scatter_reduce_(r, dim, index, src, reduce, include_self) : em_error_code());
}

em_status em_scatter_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index, const em_tensor *src,
                         const char *reduce)
{
    const em_tensor *in[] = {self, index, src};
    return em_index_write_out(out, em_scatter(self, dim, index, src, reduce), 3, in, "scatter_out()");
}
em_status em_scatter_value_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index, double value,
                               const char *reduce)
{
    const em_tensor *in[] = {self, index};
    return em_index_write_out(out, em_scatter_value(self, dim, index, value, reduce), 2, in, "scatter_out()");
}
em_status em_scatter_add_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                             const em_tensor *src)
{
    const em_tensor *in[] = {self, index, src};
    return em_index_write_out(out, em_scatter_add(self, dim, index, src), 3, in, "scatter_add_out()");
}
em_status em_scatter_reduce_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                                const em_tensor *src, const char *reduce, bool include_self)
{
    const em_tensor *in[] = {self, index, src};
    return em_index_write_out(out, em_scatter_reduce(self, dim, index, src, reduce, include_self), 3, in,
                              "scatter_reduce_out()");
}

/* ---- index_add / index_copy / index_fill ------------------------------ */
/* Writes src (a view at S = self's shape with n at dim d) into self along d
 * at the positions of the int64 vector idx. */
static em_status index_scatter(em_tensor *self, int d, const em_tensor *idx, const em_tensor *src,
                               const em_tensor *source, em_index_plan *p, em_op op)
{
    p->result = self;
    p->operands[0] = self, p->operands[1] = idx, p->operands[2] = source, p->noperands = 3;
    p->iparams[0] = d;
    em_tensor *s = nonempty_view(self);
    em_tensor *dst = s ? em_index_restride(s, s->ndim, src->sizes, d) : NULL;
    em_status st = dst ? em_index_plan_add(p, em_index_along(idx, s->ndim, src->sizes, d), idx, s->sizes[d],
                                           s->strides[d], d)
                       : em_error_code();
    p->scatter = true;
    if (!st) st = em_index_run(op, dst, src, p);
    em_index_plan_clear(p);
    em_release(dst), em_release(s);
    return st;
}

/* The checks every in-place index_* op shares (`read`: the tensor read while
 * writing self, or NULL); *idx: the int64 index. */
static em_status index_prologue(em_tensor *self, int dim, const em_tensor *index, const em_tensor *read,
                                bool writes_overlap_ok, const char *op, int *d, em_tensor **idx)
{
    if (!self || !index) return em_fail(EM_ERR_VALUE, "%s: argument is NULL", op);
    if ((*d = em_wrap_dim(dim, self->ndim, op)) < 0) return em_error_code();
    if (!writes_overlap_ok && em_check_overlap(self, NULL, op)) return em_error_code();
    if (em_check_no_overlap(self, read, op) || em_check_no_overlap(self, index, op)) return em_error_code();
    *idx = em_to_dtype(index, EM_I64);
    return *idx ? EM_OK : em_error_code();
}

em_status em_index_add_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *source, double alpha)
{
    const char *op = "index_add_()";
    if (index && index->dtype != EM_I64 && index->dtype != EM_I32)
        return em_fail(EM_ERR_DTYPE, "%s: Expected dtype int32/int64 for index but got: %s", op,
                       em_dtypes[index->dtype].name);
    if (index && index->ndim > 1)
        return em_fail(EM_ERR_INDEX, "%s: Index is supposed to be a vector, but got dim: %d with size: %s", op,
                       index->ndim, em_shape_str(index->ndim, index->sizes));
    if (self && source && self->dtype != source->dtype)
        return em_fail(EM_ERR_DTYPE, "%s: self (%s) and source (%s) must have the same scalar type", op,
                       em_dtypes[self->dtype].name, em_dtypes[source->dtype].name);
    if (!source) return em_fail(EM_ERR_VALUE, "%s: source is NULL", op);
    int d;
    em_tensor *idx = NULL;
    if (index_prologue(self, dim, index, source, false, op, &d, &idx)) return em_error_code();
    /* source's dim d holds the n entries; its other dims broadcast to self's */
    int64_t n = em_numel(idx), shape[EM_MAX_DIMS];
    em_tensor *s = nonempty_view(source), *moved = NULL, *wide = NULL, *src = NULL;
    em_status st = EM_OK;
    if (!s || s->ndim <= d) {
        st = s ? em_fail(EM_ERR_INDEX, "%s: source has %d dims, no dim %d", op, source->ndim, d) : em_error_code();
    } else if (s->sizes[d] != n) {
        st = em_fail(EM_ERR_RUNTIME, "%s: Number of indices (%lld) should be equal to source.size(dim): (%lld), for "
                     "dim: %d", op, (long long)n, (long long)s->sizes[d], d);
    } else {
        int nd = nonempty_dim(self), order[] = {d}, front[] = {0};
        shape[0] = n;
        for (int i = 0, j = 1; i < nd; i++)
            if (i != d) shape[j++] = em_index_size_at(self, i);
        bool grad = em_grad_mode(); /* the loop's view of source: no history (Note [Recorded index calls]) */
        em_set_grad_enabled(false);
        moved = em_movedim(s, 1, order, front); /* (n, rest...): rest lines up with self's last dims */
        while (moved && moved->ndim < nd) {
            em_tensor *u = em_unsqueeze(moved, 1);
            em_release(moved);
            moved = u;
        }
        wide = moved ? em_expand(moved, nd, shape) : NULL;
        src = wide ? em_movedim(wide, 1, front, order) : NULL;
        em_set_grad_enabled(grad);
        if (!src) st = em_error_code();
    }
    if (!st) {
        em_index_plan p;
        em_index_plan_init(&p);
        p.code = EM_ERR_INDEX;
        p.msg = EM_INDEX_MSG_RANGE;
        p.check_empty = true;
        p.mode = EM_INDEX_SUM;
        p.alpha = alpha;
        p.alpha_int = alpha != alpha ? 0 : alpha >= 0x1p63 ? INT64_MAX : alpha <= -0x1p63 ? INT64_MIN : (int64_t)alpha;
        p.fparam = alpha;
        st = index_scatter(self, d, idx, src, source, &p, EM_OP_index_add);
    }
    em_release(s), em_release(moved), em_release(wide), em_release(src), em_release(idx);
    return st;
}

em_status em_index_copy_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *source)
{
    const char *op = "index_copy_()";
    if (index && index->dtype != EM_I64)
        return em_fail(EM_ERR_DTYPE, "%s: Expected a long tensor for index, but got %s", op, em_dtypes[index->dtype].name);
    if (index && index->ndim > 1)
        return em_fail(EM_ERR_INDEX, "%s: Index should have dimension 1 or 0 (got %d)", op, index->ndim);
    if (self && source && self->dtype != source->dtype)
        return em_fail(EM_ERR_DTYPE, "%s: self and source expected to have the same dtype, but got (self) %s and "
                       "(source) %s", op, em_dtypes[self->dtype].name, em_dtypes[source->dtype].name);
    if (self && source && self->ndim && source->ndim && self->ndim != source->ndim)
        return em_fail(EM_ERR_INDEX, "%s: When source and destination are not scalars, their dimensionality must "
                       "match. Source dimensionality (%d), destination dimensionality (%d)", op, source->ndim,
                       self->ndim);
    if (!source) return em_fail(EM_ERR_VALUE, "%s: source is NULL", op);
    int d;
    em_tensor *idx = NULL;
    if (index_prologue(self, dim, index, source, false, op, &d, &idx)) return em_error_code();
    em_tensor *src = nonempty_view(source);
    em_status st = src ? EM_OK : em_error_code();
    int nd = nonempty_dim(self);
    if (!st && src->ndim != nd)
        st = em_fail(EM_ERR_INDEX, "%s: source has %d dims, self %d", op, src->ndim, nd);
    for (int i = 0; i < nd && !st; i++) {
        if (i == d && src->sizes[i] != em_numel(idx))
            st = em_fail(EM_ERR_INDEX, "%s: Number of indices (%lld) should be equal to source.size(dim) (%lld)", op,
                         (long long)em_numel(idx), (long long)src->sizes[i]);
        else if (i != d && src->sizes[i] != em_index_size_at(self, i))
            st = em_fail(EM_ERR_RUNTIME, "%s: Source/destination tensor must have same slice shapes. Destination "
                         "slice shape: %lld at dimension %d and source slice shape: %lld at dimension %d.", op,
                         (long long)em_index_size_at(self, i), i, (long long)src->sizes[i], i);
    }
    if (!st) {
        em_index_plan p;
        em_index_plan_init(&p);
        p.code = EM_ERR_INDEX;
        p.prefix = "index_copy_(): ";
        st = index_scatter(self, d, idx, src, source, &p, EM_OP_index_copy);
    }
    em_release(src), em_release(idx);
    return st;
}

em_status em_index_fill_tensor_(em_tensor *self, int dim, const em_tensor *index, const em_tensor *value)
{
    const char *op = "index_fill_()";
    if (index && index->dtype != EM_I64) return em_fail(EM_ERR_INDEX, "%s: Expected dtype int64 for index.", op);
    if (index && index->ndim > 1) return em_fail(EM_ERR_RUNTIME, "%s: Index has to be a vector/scalar", op);
    if (!value) return em_fail(EM_ERR_VALUE, "%s: value is NULL", op);
    int d;
    em_tensor *idx = NULL;
    /* a fill writes one value, read before the loop: self's elements may overlap
     * each other or the value (as in PyTorch) */
    if (index_prologue(self, dim, index, NULL, true, op, &d, &idx)) return em_error_code();
    em_tensor *v = em_index_scalar_value(value, (em_dtype)self->dtype, op), *src = NULL;
    int64_t shape[EM_MAX_DIMS];
    const int64_t zeros[EM_MAX_DIMS] = {0};
    int nd = nonempty_dim(self);
    for (int i = 0; i < nd; i++) shape[i] = i == d ? em_numel(idx) : em_index_size_at(self, i);
    if (v) src = em_index_view(v, nd, shape, zeros, v->offset);
    em_status st = src ? EM_OK : em_error_code();
    if (!st) {
        em_index_plan p;
        em_index_plan_init(&p);
        p.code = EM_ERR_INDEX;
        p.wrap = true;
        st = index_scatter(self, d, idx, src, v, &p, EM_OP_index_fill);
    }
    em_release(v), em_release(src), em_release(idx);
    return st;
}

em_status em_index_fill_(em_tensor *self, int dim, const em_tensor *index, double value)
{
    em_tensor *v = em_scalar_float(value);
    em_status st = v ? em_index_fill_tensor_(self, dim, index, v) : em_error_code();
    em_release(v);
    return st;
}

em_tensor *em_index_add(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *source, double alpha)
{
    em_tensor *r = em_index_clone(self, "index_add()");
    return em_index_finish(r, r ? em_index_add_(r, dim, index, source, alpha) : em_error_code());
}
em_tensor *em_index_copy(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *source)
{
    em_tensor *r = em_index_clone(self, "index_copy()");
    return em_index_finish(r, r ? em_index_copy_(r, dim, index, source) : em_error_code());
}
em_tensor *em_index_fill(const em_tensor *self, int dim, const em_tensor *index, double value)
{
    em_tensor *r = em_index_clone(self, "index_fill()");
    return em_index_finish(r, r ? em_index_fill_(r, dim, index, value) : em_error_code());
}
em_tensor *em_index_fill_tensor(const em_tensor *self, int dim, const em_tensor *index, const em_tensor *value)
{
    em_tensor *r = em_index_clone(self, "index_fill()");
    return em_index_finish(r, r ? em_index_fill_tensor_(r, dim, index, value) : em_error_code());
}

em_status em_index_add_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                           const em_tensor *source, double alpha)
{
    const em_tensor *in[] = {self, index, source};
    return em_index_write_out(out, em_index_add(self, dim, index, source, alpha), 3, in, "index_add_out()");
}
em_status em_index_copy_out(em_tensor *out, const em_tensor *self, int dim, const em_tensor *index,
                            const em_tensor *source)
{
    const em_tensor *in[] = {self, index, source};
    return em_index_write_out(out, em_index_copy(self, dim, index, source), 3, in, "index_copy_out()");
}
