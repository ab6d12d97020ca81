/* Recording the graph: the dispatcher's autograd stage (Note [Autograd
 * stage] in src/ops/dispatch.c) wraps a kernel call in a graph node, and
 * views of tensors that require grad become view nodes. */
#include "autograd.h"
#include <ctype.h>
#include <stdio.h>

static bool needs_grad(const em_tensor *t) { return t && em_requires_grad(t); }

/* "log_softmax" -> "LogSoftmaxBackward0" */
static void node_name(char *buf, size_t size, const char *op)
{
    size_t n = 0;
    for (bool up = true; *op && n + 12 < size; op++) {
        if (*op == '_') {
            up = true;
            continue;
        }
        buf[n++] = up ? (char)toupper((unsigned char)*op) : *op;
        up = false;
    }
    snprintf(buf + n, size - n, "Backward0");
}

/* Runs the kernel with grad mode off: kernels may call public ops, which
 * must not record. */
static em_status run_kernel(const em_call *c, em_kernel k)
{
    em_set_grad_enabled(false);
    em_status st = k(c);
    em_set_grad_enabled(true);
    return st;
}

/* An alias of t sharing its storage, without autograd metadata: what a node
 * saves of an output, so that output -> node -> output is no cycle. */
static em_tensor *alias(const em_tensor *t)
{
    em_set_grad_enabled(false);
    em_tensor *r = em_tensor_view(t, t->ndim, t->sizes, t->strides, t->offset);
    em_set_grad_enabled(true);
    return r;
}

static void geometry(em_geometry *g, const em_tensor *t)
{
    g->ndim = t->ndim;
    g->dtype = t->dtype;
    memcpy(g->sizes, t->sizes, sizeof t->sizes);
}

/* Writing into t: a leaf that requires grad, or a recorded view, is refused. */
static em_status check_writable(const em_tensor *t, const char *op)
{
    const em_meta *m = t ? em_meta_get(t) : NULL;
    if (!m) return EM_OK;
    if (!m->grad_fn && m->requires_grad)
        return em_fail(EM_ERR_RUNTIME, "%s: a leaf Variable that requires grad is being used in an in-place "
                       "operation.", op);
    if (m->is_view && m->grad_fn)
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "%s: in-place operations on a view of a tensor that requires grad "
                       "are not implemented yet; clone() the view first", op);
    return EM_OK;
}

/* An output that gets no history (no input requires grad, or it is not
 * differentiable) loses any history it had: it was overwritten. */
static void cut_history(em_tensor *t)
{
    em_meta *m = t ? em_meta_get(t) : NULL;
    if (m && m->grad_fn) {
        em_node_release(m->grad_fn);
        m->grad_fn = NULL;
        m->requires_grad = false;
    }
}

/* Note [In-place into shared memory]: an in-place op that gives history to
 * a tensor without any (x.mul_(w), w requiring grad) must not leave another
 * tensor object over the same memory (a view of x, or x's base) without it:
 * that one's gradients would be silently wrong. Ember does not yet rebase a
 * base's history (PyTorch's CopySlices), so such a write is refused. A
 * tensor outside the call shares the memory when the storage has more
 * holders than the call's own tensors over it (op layers pass their internal
 * views of the written tensor in the call). */
static bool shared_without_history(const em_call *c, const em_tensor *o)
{
    if (!o || o->autograd) return false;
    bool written_in_place = false;
    for (int i = 0; i < c->nin; i++) written_in_place |= c->in[i] == o;
    if (!written_in_place) return false;
    int64_t holders = 0;
    for (int i = 0; i < c->nin; i++)
        if (c->in[i] && c->in[i]->storage == o->storage) {
            bool dup = false; /* count each tensor object once */
            for (int j = 0; j < i; j++) dup |= c->in[j] == c->in[i];
            holders += !dup;
        }
    for (int k = 0; k < c->nout; k++) {
        const em_tensor *t = c->out[k];
        if (!t || t->storage != o->storage) continue;
        bool dup = false;
        for (int i = 0; i < c->nin; i++) dup |= c->in[i] == t;
        for (int j = 0; j < k; j++) dup |= c->out[j] == t;
        holders += !dup;
    }
    return __atomic_load_n(&o->storage->refcount, __ATOMIC_RELAXED) > holders;
}

em_status em_autograd_run(const em_call *c, em_kernel k)
{
    const char *op = em_ops[c->op].name;
    bool any = false;
    for (int i = 0; i < c->nin; i++) any |= needs_grad(c->in[i]);
    for (int j = 0; j < c->nout; j++)
        if (check_writable(c->out[j], op)) return em_error_code();
    /* an output with history written by a kernel that may read it (in-place
     * accumulation into self, ...) without any input needing grad */
    if (!any && (em_ops[c->op].flags & EM_F_DIFF) && em_ops[c->op].kind == EM_KIND_OTHER && c->op != EM_OP_copy)
        for (int j = 0; j < c->nout; j++)
            if (c->out[j] && em_grad_fn(c->out[j]))
                return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' writing into a tensor that requires "
                               "grad is not implemented", op);
    if (!any || !(em_ops[c->op].flags & EM_F_DIFF)) {
        em_status st = run_kernel(c, k);
        if (st == EM_OK) em_bump_outputs(c);
        if (st == EM_OK)
            for (int j = 0; j < c->nout; j++) cut_history(c->out[j]);
        return st;
    }
    for (int j = 0; j < c->nout; j++)
        if (shared_without_history(c, c->out[j]))
            return em_fail(EM_ERR_NOT_IMPLEMENTED, "%s: an in-place operation that makes a view (or the base of a "
                           "view) require grad is not implemented yet; clone() it first", op);
    const em_formula *f = &em_formulas[c->op];
    uint32_t saves = f->saves ? *f->saves : 0;
    if (!f->fn) return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' is not implemented", op);

    char name[40];
    node_name(name, sizeof name, op);
    em_node *n = em_node_new(name, f->fn);
    if (!n) return em_error_code();
    n->call = *c;
    memset(n->call.in, 0, sizeof n->call.in);
    memset(n->call.out, 0, sizeof n->call.out);
    n->call.arg = NULL;
    n->nin = c->nin;
    n->nout = c->nout;
    em_status st = EM_OK;
    for (int i = 0; i < c->nin && st == EM_OK; i++) {
        const em_tensor *in = c->in[i];
        if (!in) continue;
        geometry(&n->in_geom[i], in);
        n->next[i].node = em_gradient_edge((em_tensor *)in, &n->next[i].input_nr);
        if (!(saves & EM_SAVE_IN(i))) continue;
        bool written = false; /* an input the kernel overwrites (in place) is saved as it was */
        for (int j = 0; j < c->nout; j++) written |= c->out[j] && c->out[j]->storage == in->storage;
        /* the input itself (it cannot lead back to this node), or a copy of it
         * as it was when the kernel overwrites it (in place): a recorded copy,
         * whose history (the input's) a double backward follows */
        if ((st = em_check_savable(in))) break;
        n->in[i].t = written ? em_clone(in) : em_retain((em_tensor *)in);
        if (!n->in[i].t) st = em_error_code();
        else n->in[i].version = em_version(n->in[i].t);
    }
    if (st == EM_OK) st = run_kernel(c, k);
    if (st == EM_OK) em_bump_outputs(c);
    for (int j = 0; j < c->nout && st == EM_OK; j++) {
        em_tensor *out = c->out[j];
        if (!out) continue;
        geometry(&n->out_geom[j], out);
        if (!em_dtype_is_float((em_dtype)out->dtype)) {
            cut_history(out);
            continue;
        }
        if ((st = em_set_history(out, n, j))) break;
        if (saves & EM_SAVE_OUT(j)) {
            if (!(n->out[j].t = alias(out))) {
                st = em_error_code();
                break;
            }
            n->out[j].version = em_version(out);
        }
    }
    em_node_release(n); /* the outputs hold it */
    return st;
}

/* ---- views -------------------------------------------------------------- */
/* Does a geometry reach any storage element twice (a stride-0 dim, or strides
 * too small for the sizes)? A sufficient check: sorted by stride, each
 * stride must exceed the extent of the dims below it. */
bool em_geometry_overlaps(int ndim, const int64_t *sizes, const int64_t *strides)
{
    int order[EM_MAX_DIMS], n = 0;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] == 0) return false;
        if (sizes[i] == 1) continue;
        int j = n++;
        while (j > 0 && strides[order[j - 1]] > strides[i]) order[j] = order[j - 1], j--;
        order[j] = i;
    }
    int64_t extent = 0;
    for (int k = 0; k < n; k++) {
        if (strides[order[k]] <= extent) return true;
        extent += (sizes[order[k]] - 1) * strides[order[k]];
    }
    return false;
}


em_status em_record_view(const em_tensor *base, em_tensor *view)
{
    em_meta *bm = em_meta_get(base);
    if (!bm || (!bm->requires_grad && !bm->grad_fn)) return EM_OK;
    if (!em_dtype_is_float((em_dtype)base->dtype)) return EM_OK;
    if (em_geometry_overlaps(base->ndim, base->sizes, base->strides))
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "taking a view of an expanded (self-overlapping) tensor that requires "
                       "grad is not implemented yet; call contiguous() first");
    em_node *n = em_node_new("ViewBackward0", em_view_backward);
    if (!n) return em_error_code();
    n->nin = n->nout = 1;
    geometry(&n->in_geom[0], base);
    geometry(&n->out_geom[0], view);
    memcpy(n->base_strides, base->strides, sizeof base->strides);
    n->base_offset = base->offset;
    n->view_ndim = view->ndim;
    memcpy(n->view_sizes, view->sizes, sizeof view->sizes);
    memcpy(n->view_strides, view->strides, sizeof view->strides);
    n->view_offset = view->offset;
    n->next[0].node = em_gradient_edge((em_tensor *)base, &n->next[0].input_nr);
    em_status st = em_set_history(view, n, 0);
    if (st == EM_OK) em_meta_get(view)->is_view = true;
    em_node_release(n);
    return st;
}
