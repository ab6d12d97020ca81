/* The backward of every view (Note [View backward]).
 *
 * Note [View backward]
 * A view is recorded with its geometry and its base's geometry in their
 * shared storage, not with the op that made it, so one formula serves
 * select, slice, transpose, expand, unfold, as_strided and the rest: the
 * gradient is written into a zero buffer shaped like the storage span through
 * the view's geometry (summing where the view reaches an element twice) and
 * read back through the base's geometry. The base must not overlap itself
 * (record.c refuses views of expanded tensors), so that read is exact. Every
 * step is an Ember op, so with create_graph the backward is recorded too.
 * CopySlices, the node of an in-place write through a view, moves gradients
 * between the same two geometries the other way.
 *
 * Note [Retyped views]
 * view_as_real / view_as_complex make a view whose dtype is not its base's
 * (one complex element is two real ones), each geometry counting its own
 * elements. Gradients cross such a pair in real units: the complex side's
 * geometry gains a last dim of 2 (strides and offset doubled, as
 * view_as_real), a complex gradient is read through view_as_real, and a
 * result for the complex side is viewed back with view_as_complex. Masks
 * (CopySlices' written elements) are real, in real units, so that writing
 * one part of a complex element keeps the other part's gradient. */
#include "autograd.h"
#include "ember/ember.h"

/* int64 offsets (shape `sizes`) of a geometry's elements from `start`. */
static em_tensor *offsets(int ndim, const int64_t *sizes, const int64_t *strides, int64_t start)
{
    em_tensor *acc = em_full(0, NULL, (double)start, EM_I64);
    for (int d = 0; d < ndim && acc; d++) {
        int64_t shape[EM_MAX_DIMS];
        for (int e = 0; e < ndim; e++) shape[e] = e == d ? sizes[d] : 1;
        em_tensor *r = em_arange_int(0, sizes[d], 1, EM_I64), *rv = r ? em_view(r, ndim, shape) : NULL;
        em_tensor *s = em_scalar_int(strides[d]), *term = rv && s ? em_mul(rv, s) : NULL;
        em_tensor *next = term ? em_add(acc, term, 1) : NULL;
        em_release(r), em_release(rv), em_release(s), em_release(term), em_release(acc);
        acc = next;
    }
    return acc;
}

/* Is `from` a permutation of the elements of `to`, which is contiguous: the
 * same count, each reached once, none outside `to`'s span (a transpose,
 * permute or reshape of a whole tensor)? Then the gradient needs no zeros. */
static bool permutes_contiguous(const em_strided *from, const em_strided *to)
{
    int64_t n = 1, expect = 1, nfrom = 1, lo = from->offset, hi = from->offset;
    for (int d = to->ndim - 1; d >= 0; d--) {
        if (to->sizes[d] != 1 && to->strides[d] != expect) return false;
        expect *= to->sizes[d];
        n *= to->sizes[d];
    }
    for (int d = 0; d < from->ndim; d++) {
        nfrom *= from->sizes[d];
        if (from->sizes[d] <= 1) continue;
        if (from->strides[d] <= 0) return false;
        hi += (from->sizes[d] - 1) * from->strides[d];
    }
    return n > 0 && nfrom == n && lo == to->offset && hi == to->offset + n - 1 &&
           !em_geometry_overlaps(from->ndim, from->sizes, from->strides);
}

static bool laid_out_as(const em_tensor *g, const em_strided *from)
{
    for (int d = 0; d < from->ndim; d++)
        if (from->sizes[d] > 1 && g->strides[d] != from->strides[d]) return false;
    return true;
}

/* em_restride's fast path for permutes_contiguous geometries: g itself
 * reinterpreted when it is laid out as `from` (no copy), else one copy into
 * an uninitialized buffer (a copy_ into a view: not for create_graph). */
static em_tensor *restride_permutation(const em_tensor *g, const em_strided *from, const em_strided *to)
{
    if (laid_out_as(g, from))
        return em_as_strided(g, to->ndim, to->sizes, to->strides, em_storage_offset(g) + to->offset - from->offset);
    em_tensor *r = em_empty(to->ndim, to->sizes, (em_dtype)g->dtype);
    em_tensor *rv = r ? em_as_strided(r, from->ndim, from->sizes, from->strides, from->offset - to->offset) : NULL;
    em_status st = rv ? em_copy_(rv, g) : em_error_code();
    em_release(rv);
    if (st != EM_OK) em_release(r), r = NULL;
    return r;
}

/* Moves g, shaped like geometry `from`, onto geometry `to` of the same
 * storage: the result (contiguous, shaped like `to`) holds at each element
 * the sum of g's elements at the same storage element, zero where `from`
 * does not reach. `to` must not overlap itself. A new reference. */
em_tensor *em_restride(const em_tensor *grad, const em_strided *from, const em_strided *to)
{
    int nd = from->ndim;
    bool recording = em_grad_mode() && em_requires_grad(grad);
    if (permutes_contiguous(from, to) && (!recording || laid_out_as(grad, from)))
        return restride_permutation(grad, from, to);
    int64_t vs[EM_MAX_DIMS], vt[EM_MAX_DIMS];
    memcpy(vs, from->sizes, nd * sizeof *vs);
    memcpy(vt, from->strides, nd * sizeof *vt);
    em_tensor *g = em_retain((em_tensor *)grad);
    /* a broadcast (stride-0) dim reaches one element: sum it first */
    for (int d = 0; d < nd && g; d++) {
        if (vt[d] != 0 || vs[d] <= 1) continue;
        em_tensor *s = em_sum(g, 1, &d, true, EM_DTYPE_NONE);
        em_release(g);
        g = s;
        vs[d] = 1;
    }
    if (g && recording && em_geometry_overlaps(g->ndim, g->sizes, g->strides)) {
        em_tensor *c = em_contiguous(g); /* an expanded gradient (sum's): no view of it is recorded */
        em_release(g);
        g = c;
    }
    if (!g) return NULL;
    bool empty = false; /* either side empty: nothing moves, the result is zeros shaped like `to` */
    for (int d = 0; d < to->ndim; d++) empty |= to->sizes[d] == 0;
    for (int d = 0; d < nd; d++) empty |= vs[d] == 0;
    if (empty) {
        em_tensor *r = em_zeros(to->ndim, to->sizes, (em_dtype)g->dtype);
        em_release(g);
        return r;
    }
    /* the storage span both geometries reach */
    int64_t lo = to->offset < from->offset ? to->offset : from->offset, hi;
    int64_t bend = to->offset, vend = from->offset;
    for (int d = 0; d < to->ndim; d++) bend += (to->sizes[d] - 1) * to->strides[d];
    for (int d = 0; d < nd; d++) vend += (vs[d] - 1) * vt[d];
    hi = bend > vend ? bend : vend;
    int64_t len = hi - lo + 1;
    em_tensor *z = em_zeros(1, &len, (em_dtype)g->dtype);
    em_status st = z ? EM_OK : em_error_code();
    /* scattering through put (a recorded op) also serves create_graph, with
     * one node instead of copy_'s CopySlices and view nodes */
    if (st == EM_OK) {
        if (recording || em_geometry_overlaps(nd, vs, vt)) {
            em_tensor *idx = offsets(nd, vs, vt, from->offset - lo), *fi = idx ? em_reshape(idx, 1, &(int64_t){-1}) : NULL;
            em_tensor *fg = fi ? em_reshape(g, 1, &(int64_t){-1}) : NULL;
            st = fg ? em_put_(z, fi, fg, true) : em_error_code();
            em_release(idx), em_release(fi), em_release(fg);
        } else {
            em_tensor *gv = em_as_strided(z, nd, vs, vt, from->offset - lo);
            st = gv ? em_copy_(gv, g) : em_error_code();
            em_release(gv);
        }
    }
    em_tensor *r = NULL;
    if (st == EM_OK) {
        em_tensor *bv = em_as_strided(z, to->ndim, to->sizes, to->strides, to->offset - lo);
        r = bv ? em_contiguous(bv) : NULL;
        em_release(bv);
    }
    em_release(z);
    em_release(g);
    return r;
}

static bool is_complex(int dt) { return em_dtype_is_complex((em_dtype)dt); }

/* A geometry in real units (Note [Retyped views]): a complex one gains the
 * (real, imag) dim; a real one is unchanged. */
typedef struct real_geom {
    em_strided s;
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
} real_geom;

static void real_units(real_geom *r, const em_strided *s, bool is_cplx)
{
    r->s = *s;
    if (!is_cplx) return;
    for (int d = 0; d < s->ndim; d++) r->sizes[d] = s->sizes[d], r->strides[d] = 2 * s->strides[d];
    r->sizes[s->ndim] = 2, r->strides[s->ndim] = 1;
    r->s = (em_strided){s->ndim + 1, r->sizes, r->strides, 2 * s->offset};
}

/* A real tensor with a last dim of 2 seen as complex (copied first when its
 * layout does not allow the view). Borrows r. */
static em_tensor *as_complex(const em_tensor *r)
{
    if (!r) return NULL;
    bool viewable = r->strides[r->ndim - 1] == 1 && r->offset % 2 == 0;
    for (int d = 0; d < r->ndim - 1; d++) viewable &= r->strides[d] % 2 == 0;
    em_tensor *c = viewable ? em_retain((em_tensor *)r) : em_clone(r), *v = c ? em_view_as_complex(c) : NULL;
    em_release(c);
    return v;
}

/* A complex gradient seen as (real, imag) pairs (view_as_real), copied first
 * when it is real (a hook may hand one) or overlaps itself (an expanded
 * gradient: no view of it is recorded). */
static em_tensor *real_pairs(const em_tensor *g)
{
    em_tensor *c = !is_complex(g->dtype) ? em_to_dtype(g, em_dtype_to_complex((em_dtype)g->dtype))
                   : em_geometry_overlaps(g->ndim, g->sizes, g->strides) ? em_contiguous(g)
                                                                         : em_retain((em_tensor *)g);
    em_tensor *r = c ? em_view_as_real(c) : NULL;
    em_release(c);
    return r;
}

/* em_restride across a retyped view: g (a gradient of dtype-kind
 * `from_complex`) moved onto `to`, in `to`'s kind. */
static em_tensor *move(const em_tensor *g, const em_strided *from, bool from_complex, const em_strided *to,
                       bool to_complex)
{
    if (from_complex == to_complex) return em_restride(g, from, to);
    real_geom f, t;
    real_units(&f, from, from_complex);
    real_units(&t, to, to_complex);
    em_tensor *gr = from_complex ? real_pairs(g) : (em_tensor *)g;
    if (!gr) return NULL;
    em_tensor *r = em_restride(gr, &f.s, &t.s), *out = to_complex ? as_complex(r) : r;
    if (from_complex) em_release(gr);
    if (to_complex) em_release(r);
    return out;
}

/* g (consumed) conjugated / negated as `bits` say: the gradient across a
 * view whose lazy bits differ from its base's (Note [Conjugate bit]). */
static em_tensor *through_bits(em_tensor *g, uint8_t bits)
{
    if (g && (bits & EM_FLAG_CONJ)) {
        em_tensor *c = em_conj_physical(g);
        em_release(g);
        g = c;
    }
    if (g && (bits & EM_FLAG_NEG)) {
        em_tensor *c = em_neg(g);
        em_release(g);
        g = c;
    }
    return g;
}

em_status em_view_backward(const em_node *n, em_tensor *const *grad_out, em_tensor **grad_in)
{
    const em_view_geom *v = n->view;
    em_strided view = {v->ndim, v->sizes, v->strides, v->offset};
    em_strided base = {n->in_geom[0].ndim, n->in_geom[0].sizes, v->base_strides, v->base_offset};
    grad_in[0] = through_bits(move(grad_out[0], &view, is_complex(v->dtype), &base, is_complex(n->in_geom[0].dtype)),
                              v->bits);
    return grad_in[0] ? EM_OK : em_error_code();
}

/* CopySlices (Note [In-place on views]): the root's gradient G passes on to
 * the root's history with the written elements zeroed (the write replaced
 * them), and the written elements' part goes to the in-place op's node. */
em_status em_copy_slices_backward(const em_node *n, em_tensor *const *grad_out, em_tensor **grad_in)
{
    const em_view_geom *v = n->view;
    em_strided view = {v->ndim, v->sizes, v->strides, v->offset};
    em_strided base = {n->in_geom[0].ndim, n->in_geom[0].sizes, v->base_strides, v->base_offset};
    bool view_complex = is_complex(v->dtype), base_complex = is_complex(n->in_geom[0].dtype);
    em_arena a = {0};
    em_tensor *const *go = grad_out, **gi = grad_in;
    if (em_node_needs_grad(n, 0)) {
        /* 1 where the root was not written: a constant, made without history,
         * in real units when the view is retyped (Note [Retyped views]) */
        bool retyped = view_complex != base_complex;
        real_geom vr, br;
        real_units(&vr, &view, retyped && view_complex);
        real_units(&br, &base, retyped && base_complex);
        bool was = em_is_grad_enabled();
        em_set_grad_enabled(false);
        em_dtype mask_dt = retyped ? em_dtype_to_real((em_dtype)G->dtype) : (em_dtype)G->dtype;
        em_tensor *ones = X(em_ones(vr.s.ndim, vr.s.sizes, mask_dt));
        em_tensor *written = ones ? X(em_restride(ones, &vr.s, &br.s)) : NULL;
        em_tensor *one = X(em_scalar_float(1)), *kept = written ? X(em_sub(one, written, 1)) : NULL;
        em_set_grad_enabled(was);
        if (retyped && base_complex) GRAD(0, X(as_complex(X(em_mul(X(real_pairs(G)), kept)))));
        else GRAD(0, X(em_mul(G, kept)));
    }
    GRAD(1, X(through_bits(move(G, &base, base_complex, &view, view_complex), v->bits)));
    DONE();
}
