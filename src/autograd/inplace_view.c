/* The history of views: recording a view, rebasing a root's history when a
 * view of it is written in place (CopySlices), and regenerating a view's
 * history after its root or another view of it was written.
 *
 * Note [In-place on views]
 * Every view holds its root base (em_tensor.base: the tensor that is no
 * view) and the storage version its history was made at (view_version);
 * views share the root's storage and so its version counter. An in-place op
 * that writes view v of root R (PyTorch's rebase_history):
 *   - records its node n as usual, n's output being v's elements, with v's
 *     old history (a view of R's old history) as the edge of `self`;
 *   - R's history becomes CopySlices(R's old history, n): backward hands R's
 *     old history the gradient with v's elements zeroed (the write replaced
 *     them) and n the gradient at v's elements (formulas_view.c);
 *   - v's history becomes a view (AsStridedBackward0) of R's new history.
 * A write that records nothing (no input requires grad: zero_, fill_, a
 * random fill) is CopySlices without n: v's elements get no gradient. Any
 * other view of R (and every view, when R itself is written) finds the
 * storage version past its view_version: em_view_refresh regenerates its
 * history, as a view of R's current history, the next time it is asked for
 * (em_grad_fn, em_requires_grad, em_gradient_edge, ...).
 * Writing a view of a leaf that requires grad is refused, as in PyTorch. */
#include "autograd.h"

/* A node that reads geometry `view` of `base`'s storage. */
static em_node *view_node(const char *name, em_backward_fn fn, int nin, const em_tensor *base, const em_tensor *view)
{
    em_node *n = em_node_new(name, fn, nin, 1, true);
    if (!n) return NULL;
    em_geometry_of(&n->in_geom[0], base);
    em_geometry_of(&n->out_geom[0], base);
    em_view_geom *v = n->view;
    memcpy(v->base_strides, base->strides, base->ndim * sizeof *base->strides);
    v->base_offset = base->offset;
    v->ndim = view->ndim;
    v->dtype = view->dtype;
    memcpy(v->sizes, view->sizes, view->ndim * sizeof *view->sizes);
    memcpy(v->strides, view->strides, view->ndim * sizeof *view->strides);
    v->offset = view->offset;
    v->bits = (view->flags ^ base->flags) & EM_LAZY_BITS;
    return n;
}

/* Gives view t the history "view of base's history" (base requires grad). */
static em_status set_view_history(em_tensor *t, const em_tensor *base, const char *name)
{
    if (em_geometry_overlaps(base->ndim, base->sizes, base->strides))
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "taking a view of an expanded (self-overlapping) tensor that requires "
                       "grad is not implemented yet; call contiguous() first");
    em_node *n = view_node(name, em_view_backward, 1, base, t);
    if (!n) return em_error_code();
    em_geometry_of(&n->out_geom[0], t);
    n->next[0].node = em_gradient_edge((em_tensor *)base, &n->next[0].input_nr);
    em_status st = n->next[0].node ? em_set_history(t, n, 0) : em_error_code();
    em_node_release(n);
    return st;
}

/* View t of a self-overlapping view (an expand) whose history is the view
 * node bn: recorded against bn's own base, a geometry the backward can map
 * (the overlapping one it cannot). */
static em_status set_view_history_via(em_tensor *t, const em_tensor *base, const em_node *bn, const char *name)
{
    em_node *n = em_node_new(name, em_view_backward, 1, 1, true);
    if (!n) return em_error_code();
    n->in_geom[0] = bn->in_geom[0];
    *n->view = *bn->view;
    n->view->ndim = t->ndim;
    memcpy(n->view->sizes, t->sizes, t->ndim * sizeof *t->sizes);
    memcpy(n->view->strides, t->strides, t->ndim * sizeof *t->strides);
    n->view->offset = t->offset;
    n->view->bits ^= (t->flags ^ base->flags) & EM_LAZY_BITS;
    em_geometry_of(&n->out_geom[0], t);
    n->next[0] = bn->next[0];
    if (n->next[0].node) em_node_retain(n->next[0].node);
    em_status st = em_set_history(t, n, 0);
    em_node_release(n);
    return st;
}

em_status em_record_view(const em_tensor *base, em_tensor *view)
{
    if (!em_dtype_differentiable(base->dtype) || !em_requires_grad(base)) return EM_OK;
    const em_node *bn = em_grad_fn(base);
    if (bn && bn->apply == em_view_backward && em_geometry_overlaps(base->ndim, base->sizes, base->strides) &&
        !em_geometry_overlaps(bn->in_geom[0].ndim, bn->in_geom[0].sizes, bn->view->base_strides))
        return set_view_history_via(view, base, bn, "AsStridedBackward0");
    uint8_t bits = (view->flags ^ base->flags) & EM_LAZY_BITS;
    const char *name = bits & EM_FLAG_CONJ ? "ConjBackward0" : bits ? "NegViewBackward0" : "ViewBackward0";
    return set_view_history(view, base, name);
}

em_status em_view_refresh(em_tensor *t)
{
    em_tensor *root = em_view_root(t);
    uint64_t version = em_version(t);
    if (root == t || version == t->view_version || !em_dtype_differentiable(t->dtype)) return EM_OK;
    em_meta *m = em_meta_get(t);
    bool root_grad = em_requires_grad(root);
    if (!root_grad && !(m && m->grad_fn)) return EM_OK; /* nothing to follow (PyTorch keeps the version too) */
    em_status st = EM_OK;
    if (root_grad) {
        st = set_view_history(t, root, "AsStridedBackward0");
    } else { /* the root was overwritten without history: so was t */
        em_node_release(m->grad_fn);
        m->grad_fn = NULL;
        m->requires_grad = false;
    }
    if (st == EM_OK) t->view_version = version;
    return st;
}

em_status em_rebase_view(em_tensor *v, em_node *n, int k)
{
    em_tensor *root = em_view_root(v);
    if (em_geometry_overlaps(root->ndim, root->sizes, root->strides))
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "an in-place operation on a view of an expanded (self-overlapping) "
                       "tensor that requires grad is not implemented; call contiguous() first");
    em_node *cs = view_node("CopySlices", em_copy_slices_backward, n ? 2 : 1, root, v);
    if (!cs) return em_error_code();
    if (n) {
        em_geometry_of(&cs->in_geom[1], v);
        em_node_retain(n);
        cs->next[1].node = n;
        cs->next[1].input_nr = k;
    }
    em_clear_error();
    cs->next[0].node = em_gradient_edge(root, &cs->next[0].input_nr); /* NULL: the root needed no grad */
    em_status st = em_error_code();
    if (st == EM_OK) st = em_set_history(root, cs, 0);
    em_node_release(cs);
    if (st == EM_OK) st = set_view_history(v, root, "AsStridedBackward0");
    if (st == EM_OK) v->view_version = em_version(v);
    return st;
}

em_tensor *em_saved_ref(const em_tensor *t)
{
    if (!t->base) return em_retain((em_tensor *)t);
    em_node *fn = em_grad_fn(t);
    if (!fn && em_requires_grad(t)) return em_retain((em_tensor *)t); /* a leaf view: it is its own edge */
    em_tensor *a = em_tensor_alias(t);
    if (a && fn && em_set_history(a, fn, em_meta_get(t)->output_nr)) {
        em_release(a);
        return NULL;
    }
    return a;
}
