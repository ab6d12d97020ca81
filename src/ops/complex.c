/* The conjugate and negative bits (Note [Conjugate bit] in
 * src/core/internal.h): conj() and _neg_view() as views, their resolved
 * (materialized) forms, and the dispatcher's resolve step that keeps the
 * bits away from kernels. */
#include "dispatch.h"
#include "ember/ember.h"
#include <stdlib.h>

em_tensor *em_conj(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    if (!em_dtype_is_complex((em_dtype)t->dtype)) return em_retain((em_tensor *)t);
    return em_tensor_toggle_view(t, EM_FLAG_CONJ);
}

em_tensor *em_neg_view(const em_tensor *t) { return EM_NULL(t) ? NULL : em_tensor_toggle_view(t, EM_FLAG_NEG); }
bool em_is_conj(const em_tensor *t) { return !EM_NULL(t) && (t->flags & EM_FLAG_CONJ); }
bool em_is_neg(const em_tensor *t) { return !EM_NULL(t) && (t->flags & EM_FLAG_NEG); }

/* t itself without `bit`, else a clone (which has no bits: it holds the values). */
static em_tensor *resolve(const em_tensor *t, uint8_t bit)
{
    if (EM_NULL(t)) return NULL;
    return t->flags & bit ? em_clone(t) : em_retain((em_tensor *)t);
}
em_tensor *em_resolve_conj(const em_tensor *t) { return resolve(t, EM_FLAG_CONJ); }
em_tensor *em_resolve_neg(const em_tensor *t) { return resolve(t, EM_FLAG_NEG); }

em_tensor *em_conj_physical(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    if (!em_dtype_is_complex((em_dtype)t->dtype)) return em_clone(t);
    bool expanded = false; /* (a recorded view of an expanded tensor is refused: a copy first) */
    for (int d = 0; d < t->ndim; d++) expanded |= t->sizes[d] > 1 && t->strides[d] == 0;
    em_tensor *dense = expanded ? em_contiguous(t) : em_retain((em_tensor *)t);
    em_tensor *v = dense ? em_conj(dense) : NULL, *r = v ? em_clone(v) : NULL;
    em_release(dense), em_release(v);
    return r;
}

em_tensor *em_conj_if_complex(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    return em_dtype_is_complex((em_dtype)t->dtype) ? em_conj_physical(t) : em_retain((em_tensor *)t);
}

em_status em_resolve_list(int n, const em_tensor *const *ts, em_tensor ***plain)
{
    bool any = false;
    for (int k = 0; k < n; k++) any |= ts[k] && em_has_lazy_bits(ts[k]);
    *plain = NULL;
    if (!any) return EM_OK;
    em_tensor **r = calloc((size_t)n, sizeof *r);
    if (!r) return em_fail(EM_ERR_MEMORY, "out of memory");
    for (int k = 0; k < n; k++) {
        r[k] = !ts[k] ? NULL : em_has_lazy_bits(ts[k]) ? em_clone(ts[k]) : em_retain((em_tensor *)ts[k]);
        if (ts[k] && !r[k]) {
            em_release_list(k, r);
            return em_error_code();
        }
    }
    *plain = r;
    return EM_OK;
}

void em_release_list(int n, em_tensor **ts)
{
    for (int k = 0; k < n && ts; k++) em_release(ts[k]);
    free(ts);
}

/* ---- the resolve step ---------------------------------------------------
 * Below, tensors are plain and without history: the storage is read and
 * written through aliases whose bits are cleared, and the bits applied to
 * copies this file owns. */
static em_tensor *raw_alias(const em_tensor *t)
{
    em_tensor *a = em_tensor_alias(t);
    if (a) a->flags &= (uint8_t)~EM_LAZY_BITS;
    return a;
}

/* Applies `bits` to plain t in place: t's values become their conjugate
 * (negation). Both are their own inverse, so this maps values to the storage
 * a tensor with these bits holds and back. */
static em_status apply_bits(em_tensor *t, uint8_t bits)
{
    em_status st = EM_OK;
    if ((bits & EM_FLAG_CONJ) && em_dtype_is_complex((em_dtype)t->dtype)) {
        em_tensor *parts = em_view_as_real(t), *im = parts ? em_select(parts, -1, 1) : NULL;
        st = im ? em_neg_(im) : em_error_code();
        em_release(parts), em_release(im);
    }
    if (st == EM_OK && (bits & EM_FLAG_NEG)) st = em_neg_(t);
    return st;
}

/* A new plain tensor of t's shape holding t's values (`read`: else
 * uninitialized, for an output the kernel only writes). */
static em_tensor *materialize(const em_tensor *t, bool read)
{
    em_tensor *r = em_tensor_new(t->ndim, t->sizes, (em_dtype)t->dtype, t->storage->device);
    if (!r || !read) return r;
    em_tensor *raw = raw_alias(t);
    em_status st = raw ? em_copy_(r, raw) : em_error_code();
    if (st == EM_OK) st = apply_bits(r, t->flags);
    em_release(raw);
    if (st != EM_OK) em_release(r), r = NULL;
    return r;
}

/* Stores values v (plain, consumed as scratch) into dst through dst's bits. */
static em_status write_back(em_tensor *dst, em_tensor *v)
{
    em_status st = apply_bits(v, dst->flags);
    em_tensor *raw = st == EM_OK ? raw_alias(dst) : NULL;
    if (st == EM_OK) st = raw ? em_copy_(raw, v) : em_error_code();
    em_release(raw);
    return st;
}

/* Does the kernel of c read output j (in place, accumulation) or only write it? */
static bool reads_output(const em_call *c, int j)
{
    if (c->op != EM_OP_copy && c->op != EM_OP_fill) return true;
    for (int i = 0; i < c->nin; i++)
        if (c->in[i] == c->out[j] && c->op == EM_OP_copy) return true; /* (fill's in[0] is its out) */
    return false;
}

/* A copy from a tensor with lazy bits into a plain one, in two passes and
 * no scratch: the storage copied, then the bits applied to the destination
 * (elementwise, so dst may be src itself: x.copy_(x.conj())). */
static em_status copy_resolving(const em_call *c, em_kernel k)
{
    em_call r = *c;
    em_tensor *src = raw_alias(c->in[0]), *dst = src ? raw_alias(c->out[0]) : NULL;
    r.in[0] = src;
    em_status st = dst ? k(&r) : em_error_code();
    if (st == EM_OK) st = apply_bits(dst, c->in[0]->flags);
    em_release(src), em_release(dst);
    return st;
}

em_status em_resolving_kernel(const em_call *c)
{
    em_kernel k = em_call_kernel(c);
    if (c->op == EM_OP_copy && !em_has_lazy_bits(c->out[0])) return copy_resolving(c, k);
    em_call r = *c;
    em_tensor *outs[EM_CALL_MAX_OUT] = {0}, *ins[EM_CALL_MAX_IN] = {0};
    em_status st = EM_OK;
    for (int j = 0; j < c->nout && st == EM_OK; j++)
        if (c->out[j] && em_has_lazy_bits(c->out[j]))
            st = (r.out[j] = outs[j] = materialize(c->out[j], reads_output(c, j))) ? EM_OK : em_error_code();
    for (int i = 0; i < c->nin && st == EM_OK; i++) {
        const em_tensor *t = c->in[i];
        if (!t || !em_has_lazy_bits(t)) continue;
        int j = 0;
        while (j < c->nout && c->out[j] != t) j++;
        if (j < c->nout) r.in[i] = outs[j]; /* in place: the kernel reads and writes the copy */
        else st = (r.in[i] = ins[i] = materialize(t, true)) ? EM_OK : em_error_code();
    }
    if (st == EM_OK) st = k(&r);
    for (int j = 0; j < c->nout && st == EM_OK; j++)
        if (outs[j]) st = write_back(c->out[j], outs[j]);
    for (int j = 0; j < EM_CALL_MAX_OUT; j++) em_release(outs[j]);
    for (int i = 0; i < EM_CALL_MAX_IN; i++) em_release(ins[i]);
    return st;
}
