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
 * step is an Ember op, so with create_graph the backward is recorded too. */
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

em_status em_view_backward(const em_node *n, em_tensor *const *grad_out, em_tensor **grad_in)
{
    const em_geometry *bg = &n->in_geom[0];
    int nd = n->view_ndim;
    int64_t vs[EM_MAX_DIMS], vt[EM_MAX_DIMS];
    memcpy(vs, n->view_sizes, sizeof vs);
    memcpy(vt, n->view_strides, sizeof vt);
    em_tensor *g = em_retain(grad_out[0]);
    /* a broadcast (stride-0) dim reaches one element: sum it first */
    for (int d = 0; d < nd && g; d++) {
        if (vt[d] != 0 || vs[d] <= 1) continue;
        em_tensor *s = em_sum(g, 1, &d, true, EM_DTYPE_NONE);
        em_release(g);
        g = s;
        vs[d] = 1;
    }
    if (!g) return em_error_code();
    /* the storage span both geometries reach */
    int64_t lo = n->base_offset < n->view_offset ? n->base_offset : n->view_offset, hi = lo;
    int64_t bend = n->base_offset, vend = n->view_offset;
    bool empty = false;
    for (int d = 0; d < bg->ndim; d++) bend += (bg->sizes[d] - 1) * n->base_strides[d], empty |= bg->sizes[d] == 0;
    for (int d = 0; d < nd; d++) vend += (vs[d] - 1) * vt[d], empty |= vs[d] == 0;
    hi = bend > vend ? bend : vend;
    int64_t len = empty ? 0 : hi - lo + 1;
    em_tensor *z = em_zeros(1, &len, (em_dtype)g->dtype);
    em_status st = z ? EM_OK : em_error_code();
    /* scattering through put (a recorded op) also serves create_graph: copy_
     * into a view of the buffer would leave the buffer itself without history */
    bool recording = em_grad_mode() && em_requires_grad(g);
    if (st == EM_OK && !empty) {
        if (recording || em_geometry_overlaps(nd, vs, vt)) {
            em_tensor *idx = offsets(nd, vs, vt, n->view_offset - lo), *fi = idx ? em_reshape(idx, 1, &(int64_t){-1}) : NULL;
            em_tensor *fg = fi ? em_reshape(g, 1, &(int64_t){-1}) : NULL;
            st = fg ? em_put_(z, fi, fg, true) : em_error_code();
            em_release(idx), em_release(fi), em_release(fg);
        } else {
            em_tensor *gv = em_as_strided(z, nd, vs, vt, n->view_offset - lo);
            st = gv ? em_copy_(gv, g) : em_error_code();
            em_release(gv);
        }
    }
    em_tensor *r = NULL;
    if (st == EM_OK) {
        em_tensor *bv = em_as_strided(z, bg->ndim, bg->sizes, n->base_strides, empty ? 0 : n->base_offset - lo);
        r = bv ? em_contiguous(bv) : NULL;
        em_release(bv);
        if (!r) st = em_error_code();
    }
    em_release(z);
    em_release(g);
    grad_in[0] = r;
    return st;
}
