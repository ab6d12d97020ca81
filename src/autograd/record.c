/* Recording the graph: the dispatcher's autograd stage (Note [Autograd
 * stage] in src/ops/dispatch.c) wraps a kernel call in a graph node; writes
 * into views rebase their root's history (inplace_view.c). */
#include "autograd.h"

static bool needs_grad(const em_tensor *t) { return t && em_requires_grad(t); }

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
static em_tensor *alias(const em_tensor *t) { return em_tensor_alias(t); }

/* Writing into t (`any`: an input requires grad): a leaf that requires
 * grad, a view of one, or an output of split/chunk/unbind is refused
 * (PyTorch's check_inplace). */
static em_status check_writable(em_tensor *t, bool any, const char *op)
{
    if (!t || em_view_refresh(t)) return t ? em_error_code() : EM_OK;
    bool grad = em_requires_grad(t);
    if (!grad && !any) return EM_OK;
    const em_tensor *root = em_view_root(t);
    if (root != t && (t->flags & EM_FLAG_MULTI_VIEW))
        return em_fail(EM_ERR_RUNTIME, "%s: Output of a function that returns multiple views (split, chunk, unbind) "
                       "is a view and is being modified inplace. This view is the output of a function that returns "
                       "multiple views. Such functions do not allow the output views to be modified inplace. You "
                       "should replace the inplace operation by an out-of-place one.", op);
    if (grad && root != t && em_is_leaf(root))
        return em_fail(EM_ERR_RUNTIME, "%s: a view of a leaf Variable that requires grad is being used in an "
                       "in-place operation.", op);
    if (grad && em_is_leaf(t))
        return em_fail(EM_ERR_RUNTIME, "%s: a leaf Variable that requires grad is being used in an in-place "
                       "operation.", op);
    return EM_OK;
}

/* Output j is an op layer's internal view of a later output (the tensor the
 * user gets, Note [Recorded index calls]): that one carries the history. */
static bool internal_alias(const em_call *c, int j)
{
    for (int k = j + 1; k < c->nout; k++)
        if (c->out[k] && c->out[k] != c->out[j] && c->out[k]->storage == c->out[j]->storage) return true;
    return false;
}

/* A write into a view of a root (other than an internal alias): its root's
 * history is rebased (Note [In-place on views]). */
static bool writes_view(const em_call *c, int j)
{
    const em_tensor *o = c->out[j];
    return o && em_view_root(o) != o && em_dtype_differentiable(o->dtype) && !internal_alias(c, j);
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
 * a tensor without any (x.mul_(w), w requiring grad) reaches every view of
 * x's root and the root itself (Note [In-place on views]), but not another
 * tensor object over the same memory that is no view of that root (a
 * detached alias, what a node saved): that one's gradients would be
 * silently wrong, so such a write is refused. Each tensor over a storage
 * holds it once, and a root counts its live views. */
static bool shared_without_history(const em_tensor *o)
{
    const em_tensor *root = em_view_root(o);
    if (em_requires_grad(root) || em_requires_grad(o)) return false;
    int64_t family = 1 + __atomic_load_n(&root->nviews, __ATOMIC_RELAXED);
    return __atomic_load_n(&o->storage->refcount, __ATOMIC_RELAXED) > family;
}

/* A write that records nothing: a view of a root with history leaves those
 * elements without gradient (CopySlices without a node); any other output
 * loses its history (it was overwritten). */
static em_status unrecorded_write(const em_call *c, int j)
{
    em_tensor *o = c->out[j];
    if (writes_view(c, j) && em_requires_grad(em_view_root(o))) return em_rebase_view(o, NULL, 0);
    cut_history(o);
    return EM_OK;
}

em_status em_autograd_run(const em_call *c, em_kernel k)
{
    const char *op = em_ops[c->op].name;
    bool any = false;
    for (int i = 0; i < c->nin; i++) any |= needs_grad(c->in[i]);
    for (int j = 0; j < c->nout; j++)
        if (!(c->out[j] && internal_alias(c, j)) && check_writable(c->out[j], any, op)) return em_error_code();
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
        for (int j = 0; j < c->nout && st == EM_OK; j++) st = unrecorded_write(c, j);
        return st;
    }
    for (int j = 0; j < c->nout; j++)
        if (c->out[j] && !internal_alias(c, j) && shared_without_history(c->out[j]))
            return em_fail(EM_ERR_NOT_IMPLEMENTED, "%s: an in-place operation that gives history to memory another "
                           "tensor (not a view of it: a detached alias, a saved tensor) also sees is not "
                           "implemented; clone() it first", op);
    const em_formula *f = &em_formulas[c->op];
    uint32_t saves = f->saves ? *f->saves : 0;
    if (!f->fn) return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' is not implemented", op);

    em_node *n = em_node_new(em_node_op_name(c->op), f->fn, c->nin, c->nout, false);
    if (!n) return em_error_code();
    n->call = *c;
    n->keep_missing_grads = (saves & EM_KEEP_MISSING_GRADS) != 0;
    memset(n->call.in, 0, sizeof n->call.in);
    memset(n->call.out, 0, sizeof n->call.out);
    n->call.arg = NULL;
    em_status st = EM_OK;
    for (int i = 0; i < c->nin && st == EM_OK; i++) {
        const em_tensor *in = c->in[i];
        if (!in) continue;
        em_geometry_of(&n->in_geom[i], in);
        n->next[i].node = em_gradient_edge((em_tensor *)in, &n->next[i].input_nr);
        if (!(saves & EM_SAVE_IN(i))) continue;
        bool written = false; /* an input the kernel overwrites (in place) is saved as it was */
        for (int j = 0; j < c->nout; j++) written |= c->out[j] && c->out[j]->storage == in->storage;
        /* the input itself (it cannot lead back to this node), or a copy of it
         * as it was when the kernel overwrites it (in place): a recorded copy,
         * whose history (the input's) a double backward follows */
        if ((st = em_check_savable(in))) break;
        n->in[i].t = written ? em_clone(in) : em_saved_ref(in);
        if (!n->in[i].t) st = em_error_code();
        else n->in[i].version = em_version(n->in[i].t), st = em_saved_pack(&n->in[i]);
    }
    if (st == EM_OK) st = run_kernel(c, k);
    if (st == EM_OK) em_bump_outputs(c);
    for (int j = 0; j < c->nout && st == EM_OK; j++) {
        em_tensor *out = c->out[j];
        if (!out) continue;
        em_geometry_of(&n->out_geom[j], out);
        bool differentiable = em_dtype_differentiable(out->dtype) && !(saves & EM_NONDIFF_OUT(j));
        if (!differentiable) cut_history(out); /* (a formula may still save it: dropout's mask) */
        else if ((st = writes_view(c, j) ? em_rebase_view(out, n, j) : em_set_history(out, n, j))) break;
        if (saves & EM_SAVE_OUT(j)) {
            if (!(n->out[j].t = alias(out))) {
                st = em_error_code();
                break;
            }
            n->out[j].version = em_version(out);
            if ((st = em_saved_pack(&n->out[j]))) break;
        }
    }
    em_node_release(n); /* the outputs hold it */
    return st;
}

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
