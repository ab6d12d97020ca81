/* Op layer of advanced indexing: em_index (self[indices]) and
 * em_index_put_ (self[indices] = values), the base of the Python front end's
 * __getitem__/__setitem__ with tensors.
 *
 * Note [Advanced indexing]
 * 1. Masks become int64 index tensors: an m-dim bool/uint8 mask at self dim
 *    d checks its sizes against self's dims d..d+m-1 and stands for the m
 *    columns of its nonzero() (one index tensor per dim). A 0-d mask first
 *    unsqueezes self at d and then indexes that new dim with [0] (true) or
 *    [] (false), as NumPy does.
 * 2. The index tensors broadcast together to shape B.
 * 3. Placement (PyTorch/NumPy): when the indexed dims are adjacent, B takes
 *    their place in the result; otherwise B comes first and the remaining
 *    dims follow in order. x (2,3,4,5): x[:, i, j] with i, j of shape (7,)
 *    is (2, 7, 5); x[i, :, j] is (7, 3, 5).
 * 4. The indexed loop (Note [Indexed loop]) then runs at the result shape:
 *    self is viewed with stride 0 in B's dims and each index tensor adds
 *    index * self.stride(dim). Negative indices count from the end. */
#include "index_plan.h"
#include <stdio.h>

typedef struct adv_index {
    em_tensor *self;               /* self, or a view with the dims of 0-d masks added */
    int n;                         /* int64 index tensors after mask expansion */
    int pos[EM_MAX_DIMS];          /* the dim of self each indexes (increasing) */
    em_tensor *idx[EM_MAX_DIMS];   /* owned */
    int bdim;
    int64_t bshape[EM_MAX_DIMS];   /* B */
    int ndim;
    int64_t shape[EM_MAX_DIMS];    /* the result's shape */
    int bstart;                    /* the result dim where B starts */
} adv_index;

static void adv_clear(adv_index *a)
{
    for (int k = 0; k < a->n; k++) em_release(a->idx[k]);
    em_release(a->self);
}

static em_status adv_add(adv_index *a, int pos, em_tensor *t)
{
    if (!t) return em_error_code();
    a->pos[a->n] = pos;
    a->idx[a->n++] = t;
    return EM_OK;
}

/* Step 1 for one mask at self dim d; *d moves past the dims it covers. */
static em_status add_mask(adv_index *a, const em_tensor *mask, int *d, const char *op)
{
    if (mask->ndim == 0) {
        em_tensor *u = em_unsqueeze(a->self, *d);
        if (!u) return em_error_code();
        em_release(a->self);
        a->self = u;
    }
    int m = mask->ndim ? mask->ndim : 1;
    if (*d + m > a->self->ndim)
        return em_fail(EM_ERR_INDEX, "%s: too many indices for tensor of dimension %d (got %d)", op, a->self->ndim,
                       *d + m);
    for (int j = 0; j < mask->ndim; j++)
        if (mask->sizes[j] != a->self->sizes[*d + j])
            return em_fail(EM_ERR_INDEX, "%s: The shape of the mask %s at index %d does not match the shape of the "
                           "indexed tensor %s at index %d", op, em_shape_str(mask->ndim, mask->sizes), j,
                           em_shape_str(a->self->ndim, a->self->sizes), *d + j);
    em_tensor *nz = em_nonzero(mask); /* (count, mask.ndim) */
    if (!nz) return em_error_code();
    em_status st = EM_OK;
    if (mask->ndim == 0)
        st = adv_add(a, *d, em_zeros(1, nz->sizes, EM_I64));
    for (int j = 0; j < mask->ndim && !st; j++) st = adv_add(a, *d + j, em_select(nz, 1, j));
    em_release(nz);
    *d += m;
    return st;
}

/* Steps 1-3: fills a (cleared by adv_clear, also on error). */
static em_status adv_prepare(adv_index *a, const em_tensor *self, int n, const em_tensor *const *indices,
                             const char *op)
{
    memset(a, 0, sizeof *a);
    if (!self) return em_fail(EM_ERR_VALUE, "%s: self is NULL", op);
    if (n < 0 || (n && !indices)) return em_fail(EM_ERR_VALUE, "%s: bad index list", op);
    a->self = em_retain((em_tensor *)self);
    int d = 0;
    for (int k = 0; k < n; k++) {
        const em_tensor *t = indices[k];
        if (t && t->dtype != EM_I64 && t->dtype != EM_BOOL && t->dtype != EM_U8)
            return em_fail(EM_ERR_INDEX, "%s: tensors used as indices must be long, byte or bool tensors (index %d "
                           "is %s)", op, k, em_dtypes[t->dtype].name);
        if (t && t->dtype != EM_I64) {
            if (add_mask(a, t, &d, op)) return em_error_code();
            continue;
        }
        if (d >= a->self->ndim)
            return em_fail(EM_ERR_INDEX, "%s: too many indices for tensor of dimension %d (got %d)", op,
                           a->self->ndim, d + 1);
        if (t && adv_add(a, d, em_retain((em_tensor *)t))) return em_error_code();
        d++;
    }
    if (a->n == 0) return em_fail(EM_ERR_RUNTIME, "%s: at least one index must be a tensor, got only full slices", op);
    for (int k = 0; k < a->n; k++) {
        int64_t b[EM_MAX_DIMS];
        int nd = em_broadcast_shapes(a->bdim, a->bshape, a->idx[k]->ndim, a->idx[k]->sizes, b, op);
        if (nd < 0) {
            char shapes[EM_MAX_DIMS * 64] = "";
            for (int j = 0, len = 0; j < a->n && len < (int)sizeof shapes; j++)
                len += snprintf(shapes + len, sizeof shapes - len, "%s%s", j ? ", " : "",
                                em_shape_str(a->idx[j]->ndim, a->idx[j]->sizes));
            return em_fail(EM_ERR_INDEX, "%s: shape mismatch: indexing tensors could not be broadcast together with "
                           "shapes %s", op, shapes);
        }
        a->bdim = nd;
        memcpy(a->bshape, b, nd * sizeof *b);
    }
    /* no index fits a dim of size 0: PyTorch refuses it even when the result is empty */
    bool b_empty = em_shape_numel(a->bdim, a->bshape) == 0;
    for (int k = 0; k < a->n && !b_empty; k++)
        if (a->self->sizes[a->pos[k]] == 0)
            return em_fail(EM_ERR_INDEX, "%s: index is out of bounds for dimension with size 0", op);
    bool adjacent = true;
    for (int k = 1; k < a->n; k++) adjacent &= a->pos[k] == a->pos[0] + k;
    int rest = a->self->ndim - a->n;
    if (a->bdim + rest > EM_MAX_DIMS) return em_fail(EM_ERR_SHAPE, "%s: the result would have too many dims", op);
    a->bstart = adjacent ? a->pos[0] : 0;
    a->ndim = 0;
    for (int i = 0; i < a->bstart; i++) a->shape[a->ndim++] = a->self->sizes[i];
    for (int j = 0; j < a->bdim; j++) a->shape[a->ndim++] = a->bshape[j];
    for (int i = a->bstart, k = 0; i < a->self->ndim; i++) {
        if (k < a->n && a->pos[k] == i) k++;
        else a->shape[a->ndim++] = a->self->sizes[i];
    }
    return EM_OK;
}

/* Step 4: the view of self at the result shape and the plan's index views. */
static em_status adv_plan(const adv_index *a, em_index_plan *p, em_tensor **self_view)
{
    const em_tensor *s = a->self;
    int64_t strides[EM_MAX_DIMS] = {0};
    for (int i = 0, k = 0, r = 0; i < s->ndim; i++) {
        if (k < a->n && a->pos[k] == i) {
            k++;
            continue;
        }
        if (r == a->bstart) r += a->bdim; /* skip B's dims */
        strides[r++] = s->strides[i];
    }
    *self_view = em_index_view(s, a->ndim, a->shape, strides, s->offset); /* no history: Note [Recorded index calls] */
    if (!*self_view) return em_error_code();
    em_index_plan_init(p);
    p->wrap = true;
    p->code = EM_ERR_INDEX;
    for (int k = 0; k < a->n; k++) {
        em_tensor *b = em_expand(a->idx[k], a->bdim, a->bshape);
        if (!b) return em_error_code();
        int64_t st[EM_MAX_DIMS] = {0};
        memcpy(st + a->bstart, b->strides, a->bdim * sizeof *st);
        em_tensor *v = em_tensor_view(b, a->ndim, a->shape, st, b->offset);
        em_release(b);
        if (em_index_plan_add(p, v, a->idx[k], s->sizes[a->pos[k]], s->strides[a->pos[k]], a->pos[k]))
            return em_error_code();
    }
    return EM_OK;
}

/* Note [Recorded index calls] for index and index_put: c->in[1..] = self,
 * (values,) then the int64 index tensors; i[0] = the bit mask of the dims of
 * a->self they index (a formula rebuilds the index list from it, full
 * slices where a bit is clear), i[1] = accumulate. A call has room for
 * EM_CALL_MAX_IN - 1 operands: more index tensors than fit are refused when
 * autograd would record the call (never recorded without them). */
static em_status adv_operands(const adv_index *a, em_index_plan *p, const em_tensor *values, bool record,
                              const char *op)
{
    int first = values ? 2 : 1, room = EM_CALL_MAX_IN - 1 - first;
    if (!record) return EM_OK;
    if (a->n > room)
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' with more than %d index tensors is not "
                       "implemented", op, room);
    p->operands[0] = a->self;
    if (values) p->operands[1] = values;
    for (int k = 0; k < a->n; k++) {
        p->operands[first + k] = a->idx[k];
        p->iparams[0] |= (int64_t)1 << a->pos[k];
    }
    p->noperands = first + a->n;
    return EM_OK;
}

em_tensor *em_index(const em_tensor *self, int n, const em_tensor *const *indices)
{
    const char *op = "index";
    if (self && em_has_lazy_bits(self)) { /* the values (Note [Conjugate bit] and em_index_run) */
        em_tensor *plain = em_clone(self), *r = plain ? em_index(plain, n, indices) : NULL;
        em_release(plain);
        return r;
    }
    adv_index a;
    em_index_plan p;
    em_index_plan_init(&p);
    em_tensor *view = NULL, *out = NULL;
    em_status st = adv_prepare(&a, self, n, indices, op);
    if (!st) st = adv_plan(&a, &p, &view);
    if (!st) st = adv_operands(&a, &p, NULL, em_is_grad_enabled() && em_requires_grad(self), op);
    if (!st) {
        out = em_tensor_new(a.ndim, a.shape, (em_dtype)self->dtype, self->storage->device);
        p.result = out;
        st = out ? em_index_run(EM_OP_index, out, view, &p) : em_error_code();
    }
    em_index_plan_clear(&p);
    em_release(view);
    adv_clear(&a);
    return em_index_finish(out, st);
}

/* index_put_ where self or values has lazy bits: on plain values, self's written back through its bits. */
static em_status put_resolved(em_tensor *self, int n, const em_tensor *const *indices, const em_tensor *values,
                              bool accumulate)
{
    em_tensor *v = em_has_lazy_bits(values) ? em_clone(values) : em_retain((em_tensor *)values);
    if (self && !em_has_lazy_bits(self)) {
        em_status st = v ? em_index_put_(self, n, indices, v, accumulate) : em_error_code();
        em_release(v);
        return st;
    }
    em_tensor *plain = v && self ? em_clone(self) : NULL;
    em_status st = plain ? em_index_put_(plain, n, indices, v, accumulate) : em_error_code();
    if (st == EM_OK) st = em_copy_(self, plain);
    em_release(v), em_release(plain);
    return st;
}

em_status em_index_put_(em_tensor *self, int n, const em_tensor *const *indices, const em_tensor *values,
                        bool accumulate)
{
    const char *op = "index_put_";
    if (!values) return em_fail(EM_ERR_VALUE, "%s: values is NULL", op);
    if ((self && em_has_lazy_bits(self)) || em_has_lazy_bits(values)) /* Note [Conjugate bit] and em_index_run */
        return put_resolved(self, n, indices, values, accumulate);
    bool record = em_is_grad_enabled() && (em_requires_grad(values) || (self && em_requires_grad(self)));
    adv_index a;
    em_index_plan p;
    em_index_plan_init(&p);
    em_tensor *view = NULL, *src = NULL;
    em_status st = adv_prepare(&a, self, n, indices, op);
    if (!st) st = em_check_overlap(self, NULL, op);
    if (!st) st = em_check_no_overlap(self, values, op);
    for (int k = 0; k < n && !st; k++) st = em_check_no_overlap(self, indices[k], op);
    /* a 0-d mask indexes a dim self lacks: the formula's index list would not fit self */
    if (!st && record && a.self->ndim != self->ndim)
        st = em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' with a 0-dim mask index is not implemented", op);
    if (!st) {
        bool grad = em_is_grad_enabled(); /* the loop's view of values: no history (Note [Recorded index calls]) */
        em_set_grad_enabled(false);
        src = em_expand(values, a.ndim, a.shape);
        em_set_grad_enabled(grad);
    }
    if (!st && !src)
        st = em_fail(EM_ERR_SHAPE, "%s: shape mismatch: value tensor of shape %s cannot be broadcast to indexing "
                     "result of shape %s", op, em_shape_str(values->ndim, values->sizes), em_shape_str(a.ndim, a.shape));
    if (!st && self->dtype != values->dtype) /* after the index and shape checks, as PyTorch */
        st = em_fail(EM_ERR_DTYPE, "Index put requires the source and destination dtypes match, got %s for the "
                     "destination and %s for the source.", em_dtypes[self->dtype].name, em_dtypes[values->dtype].name);
    if (!st) st = adv_plan(&a, &p, &view);
    if (!st) st = adv_operands(&a, &p, values, record, op);
    if (!st) {
        p.result = self;
        p.iparams[1] = accumulate;
        p.scatter = true;
        p.mode = accumulate ? EM_INDEX_SUM : EM_INDEX_ASSIGN;
        st = em_index_run(EM_OP_index_put, view, src, &p);
    }
    em_index_plan_clear(&p);
    em_release(view), em_release(src);
    adv_clear(&a);
    return st;
}

em_tensor *em_index_put(const em_tensor *self, int n, const em_tensor *const *indices, const em_tensor *values,
                        bool accumulate)
{
    em_tensor *r = em_index_clone(self, "index_put");
    return em_index_finish(r, r ? em_index_put_(r, n, indices, values, accumulate) : em_error_code());
}
