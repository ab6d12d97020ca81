/* The backward engine: walks the recorded graph once from the outputs, in
 * dependency order, running each node's formula and accumulating gradients
 * into the leaves' .grad (or returning them, for em_autograd_grad). */
#include "autograd.h"
#include "../ops/autocast.h"
#include "ember/ember.h"
#include <stdlib.h>

em_tensor *em_grad_to_geometry(em_tensor *g, const em_geometry *geom)
{
    if (!g) return NULL;
    int extra = g->ndim - geom->ndim;
    if (extra < 0) {
        em_release(g);
        return em_error(EM_ERR_SHAPE, "autograd: gradient of shape %s for an input of shape %s",
                        em_shape_str(g->ndim, g->sizes), em_shape_str(geom->ndim, geom->sizes));
    }
    int dims[EM_MAX_DIMS], n = 0;
    for (int d = 0; d < g->ndim; d++)
        if (d < extra || (geom->sizes[d - extra] == 1 && g->sizes[d] != 1)) dims[n++] = d;
    em_tensor *r = g;
    if (n) {
        em_tensor *s = em_sum(g, n, dims, true, EM_DTYPE_NONE);
        em_release(g);
        r = s ? em_reshape(s, geom->ndim, geom->sizes) : NULL;
        em_release(s);
    }
    if (r && r->dtype != geom->dtype) {
        em_tensor *c = em_to_dtype(r, (em_dtype)geom->dtype);
        em_release(r);
        r = c;
    }
    return r;
}

/* dst += g (dst NULL: takes g). Consumes g. */
static em_status accumulate(em_tensor **dst, em_tensor *g)
{
    if (!*dst) {
        *dst = g;
        return EM_OK;
    }
    em_tensor *s = em_add(*dst, g, 1);
    em_release(g);
    if (!s) return em_error_code();
    em_release(*dst);
    *dst = s;
    return EM_OK;
}

/* A list of nodes: on the stack up to GRAPH_INLINE, then on the heap. */
#define GRAPH_INLINE 64
typedef struct graph {
    em_node **nodes;
    int n, cap;
    em_node *inline_nodes[GRAPH_INLINE];
} graph;

static void graph_init(graph *g)
{
    g->nodes = g->inline_nodes;
    g->n = 0;
    g->cap = GRAPH_INLINE;
}

static void graph_free(graph *g)
{
    if (g->nodes != g->inline_nodes) free(g->nodes);
}

static em_status push(graph *g, em_node *n)
{
    if (g->n == g->cap) {
        int cap = 2 * g->cap;
        em_node **v = g->nodes == g->inline_nodes ? malloc(cap * sizeof *v) : realloc(g->nodes, cap * sizeof *v);
        if (!v) return em_fail(EM_ERR_MEMORY, "out of memory walking the graph");
        if (g->nodes == g->inline_nodes) memcpy(v, g->inline_nodes, sizeof g->inline_nodes);
        g->nodes = v;
        g->cap = cap;
    }
    g->nodes[g->n++] = n;
    return EM_OK;
}

/* Every node reachable from the roots, with deps = the number of edges into
 * it from reachable nodes. `queued` marks membership during the walk. */
static em_status collect(graph *all, em_node *const *roots, int nroots)
{
    graph stack;
    graph_init(&stack);
    em_status st = EM_OK;
    for (int r = 0; r < nroots && st == EM_OK; r++) {
        if (!roots[r] || roots[r]->queued) continue;
        roots[r]->queued = true;
        st = push(all, roots[r]);
        if (st == EM_OK) st = push(&stack, roots[r]);
        while (st == EM_OK && stack.n) {
            em_node *n = stack.nodes[--stack.n];
            for (int i = 0; i < n->nin && st == EM_OK; i++) {
                em_node *m = n->next[i].node;
                if (!m) continue;
                m->deps++;
                if (m->queued) continue;
                m->queued = true;
                st = push(all, m);
                if (st == EM_OK) st = push(&stack, m);
            }
        }
    }
    graph_free(&stack);
    return st;
}

/* Where a requested input's gradient is taken from: output nr of node. */
typedef struct capture {
    em_node *node;
    int nr;
    em_tensor *grad;
    em_tensor *tensor; /* backward(inputs=): accumulate into its .grad */
} capture;

typedef struct run {
    bool retain, create, accumulate_leaves; /* accumulate_leaves: every leaf, else only the captures */
    capture *caps;
    int ncaps;
} run;

static em_status run_hooks(em_hook *h, em_tensor **g)
{
    for (; h && *g; h = h->next) {
        if (h->retain) {
            em_release(h->retain->grad);
            h->retain->grad = em_detach(*g);
            if (!h->retain->grad) return em_error_code();
        } else if (h->fn) {
            em_clear_error();
            em_tensor *r = h->fn(*g, h->ctx);
            if (!r && em_error_code()) return em_error_code();
            if (r) em_release(*g), *g = r;
        }
    }
    return EM_OK;
}

/* Runs a leaf's post-accumulate-grad hooks. They may remove hooks, so the
 * list is copied first. */
static em_status run_post_hooks(em_tensor *leaf)
{
    em_meta *m = em_meta_get(leaf);
    int n = 0;
    for (em_hook *h = m->post_hooks; h; h = h->next) n++;
    if (!n) return EM_OK;
    em_hook *copy = malloc(n * sizeof *copy);
    if (!copy) return em_fail(EM_ERR_MEMORY, "out of memory running hooks");
    n = 0;
    for (em_hook *h = m->post_hooks; h; h = h->next) copy[n++] = *h;
    em_status st = EM_OK;
    for (int i = 0; i < n && st == EM_OK; i++) {
        em_clear_error();
        copy[i].post(leaf, copy[i].ctx);
        st = em_error_code();
    }
    free(copy);
    return st;
}

/* Does g have the layout a leaf's first .grad must have: the leaf's strides
 * (size-1 dims aside) when the leaf is dense, else contiguous? (PyTorch's
 * gradient layout contract: a channels_last parameter gets a channels_last
 * .grad whatever layout backward produced.) */
static bool grad_layout_fits(const em_tensor *leaf, const em_tensor *g)
{
    if (!em_tensor_is_dense(leaf)) return em_is_contiguous(g);
    if (g->ndim != leaf->ndim) return false;
    for (int i = 0; i < g->ndim; i++)
        if (g->sizes[i] != 1 ? g->strides[i] != leaf->strides[i] : g->strides[i] == 0) return false;
    return true;
}

/* g copied into the leaf's layout (recorded when grad mode is on). */
static em_tensor *copy_laid_out_as(const em_tensor *leaf, const em_tensor *g)
{
    if (!em_tensor_is_dense(leaf)) return em_contiguous(g);
    em_tensor *r = em_tensor_new_strided(leaf->ndim, leaf->sizes, leaf->strides, (em_dtype)g->dtype, g->storage->device);
    if (r && em_copy_(r, g)) {
        em_release(r);
        return NULL;
    }
    return r;
}

static em_status accumulate_grad(const em_tensor *leaf, em_meta *m, em_tensor *g, bool create)
{
    if (!m->grad) { /* stored in the leaf's layout: later steps add into it */
        if (!grad_layout_fits(leaf, g)) m->grad = copy_laid_out_as(leaf, g);
        else m->grad = create ? em_retain(g) : em_detach(g);
        return m->grad ? EM_OK : em_error_code();
    }
    if (create) return accumulate(&m->grad, em_retain(g));
    return em_add_(m->grad, g, 1);
}

/* t.grad += g, then a leaf's post-accumulate-grad hooks. */
static em_status accumulate_leaf(em_tensor *t, em_tensor *g, bool create)
{
    em_meta *m = em_meta_get(t);
    em_status st = accumulate_grad(t, m, g, create);
    if (st == EM_OK && !m->grad_fn) st = run_post_hooks(t);
    return st;
}

static em_status execute(em_node *n, const run *rn, graph *ready)
{
    em_status st = EM_OK;
    for (int k = 0; k < n->nout && st == EM_OK; k++) st = run_hooks(n->hooks[k], &n->buf[k]);
    for (int c = 0; c < rn->ncaps && st == EM_OK; c++) {
        capture *cp = &rn->caps[c];
        if (cp->node != n || !n->buf[cp->nr]) continue;
        if (n->leaf) st = run_hooks(em_meta_get(n->leaf)->hooks, &n->buf[0]);
        if (st == EM_OK) st = accumulate(&cp->grad, em_retain(n->buf[cp->nr]));
    }
    if (st) return st;
    if (n->leaf) { /* AccumulateGrad */
        if (rn->accumulate_leaves && n->buf[0]) {
            st = run_hooks(em_meta_get(n->leaf)->hooks, &n->buf[0]);
            if (st == EM_OK) st = accumulate_leaf(n->leaf, n->buf[0], rn->create);
        }
        return st;
    }
    bool any = false;
    for (int k = 0; k < n->nout; k++) any |= n->buf[k] != NULL;
    em_tensor *gin[EM_NODE_MAX_IN] = {0};
    if (any) {
        if (n->released) {
            return em_fail(EM_ERR_RUNTIME, "Trying to backward through the graph a second time (or directly access "
                           "saved tensors after they have already been freed). Saved intermediate values of the "
                           "graph are freed when you call .backward() or autograd.grad(). Specify "
                           "retain_graph=True if you need to backward through the graph a second time or if you "
                           "need to access saved tensors after calling backward.");
        }
        for (int k = 0; k < n->nout && st == EM_OK; k++)
            if (!n->buf[k] && !n->keep_missing_grads && !(n->buf[k] = em_zeros(n->out_geom[k].ndim, n->out_geom[k].sizes,
                                                      (em_dtype)n->out_geom[k].dtype)))
                st = em_error_code();
        if (st == EM_OK) {
            bool was = em_is_grad_enabled();
            em_set_grad_enabled(rn->create);
            int64_t span = em_profiler_on() ? em_profile_begin(n->name, EM_PROFILE_BACKWARD, n->nout,
                                                               (const em_tensor *const *)n->buf) : -1;
            em_autocast_pause();
            st = n->apply(n, n->buf, gin);
            em_autocast_resume();
            em_profile_end(span);
            em_set_grad_enabled(was);
            if (em_is_anomaly_enabled()) st = em_anomaly_check(n, st, gin);
        }
    }
    for (int k = 0; k < n->nout; k++) em_release(n->buf[k]), n->buf[k] = NULL;
    if (!rn->retain) em_node_release_saved(n);
    for (int i = 0; i < n->nin; i++) {
        em_node *m = n->next[i].node;
        if (!m) {
            em_release(gin[i]);
            continue;
        }
        if (gin[i] && st == EM_OK) {
            em_tensor *g = em_grad_to_geometry(gin[i], &n->in_geom[i]);
            st = g ? accumulate(&m->buf[n->next[i].input_nr], g) : em_error_code();
        } else {
            em_release(gin[i]);
        }
        if (--m->deps == 0 && st == EM_OK) st = push(ready, m);
    }
    return st;
}

/* Seeds the roots' gradients and runs the graph. */
static em_status backward(int n, em_tensor *const *tensors, em_tensor *const *grads, run *rn)
{
    em_node **roots = calloc(n ? n : 1, sizeof *roots); /* counts are the caller's: not on the stack */
    int *nrs = calloc(n ? n : 1, sizeof *nrs);
    em_status st = roots && nrs ? EM_OK : em_fail(EM_ERR_MEMORY, "backward: out of memory");
    for (int i = 0; i < n && st == EM_OK; i++) {
        const em_tensor *t = tensors[i];
        if (!em_requires_grad(t)) {
            st = em_fail(EM_ERR_RUNTIME, "element %d of tensors does not require grad and does not have a grad_fn", i);
            break;
        }
        const em_tensor *g = grads ? grads[i] : NULL;
        if (!g && em_numel(t) != 1) {
            st = em_fail(EM_ERR_RUNTIME, "grad can be implicitly created only for scalar outputs");
            break;
        }
        if (g && (g->ndim != t->ndim || memcmp(g->sizes, t->sizes, t->ndim * sizeof *t->sizes))) {
            st = em_fail(EM_ERR_SHAPE, "Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a "
                         "shape of %s.", i, em_shape_str(g->ndim, g->sizes), i, em_shape_str(t->ndim, t->sizes));
            break;
        }
        if (g && em_dtype_is_complex((em_dtype)g->dtype) != em_dtype_is_complex((em_dtype)t->dtype)) {
            st = em_fail(EM_ERR_RUNTIME, "For complex Tensors, both grad_output and output are required to have the "
                         "same dtype. Mismatch in dtype: grad_output[%d] has a dtype of %s and output[%d] has a "
                         "dtype of %s.", i, em_dtypes[g->dtype].name, i, em_dtypes[t->dtype].name);
            break;
        }
        roots[i] = em_gradient_edge((em_tensor *)t, &nrs[i]);
        if (!roots[i]) st = em_error_code();
    }
    graph all, ready;
    graph_init(&all);
    graph_init(&ready);
    if (st == EM_OK) st = collect(&all, roots, n);
    for (int i = 0; i < n && st == EM_OK; i++) {
        em_tensor *g = grads && grads[i] ? em_retain(grads[i]) : em_ones_like(tensors[i], EM_DTYPE_NONE);
        st = g ? accumulate(&roots[i]->buf[nrs[i]], g) : em_error_code();
    }
    for (int i = 0; i < all.n && st == EM_OK; i++)
        if (all.nodes[i]->deps == 0) st = push(&ready, all.nodes[i]);
    while (st == EM_OK && ready.n) st = execute(ready.nodes[--ready.n], rn, &ready);
    for (int i = 0; i < all.n; i++) { /* reset the scratch, also after a failure */
        em_node *m = all.nodes[i];
        m->deps = 0;
        m->queued = false;
        for (int k = 0; k < m->nout_cap; k++) em_release(m->buf[k]), m->buf[k] = NULL;
    }
    graph_free(&all);
    graph_free(&ready);
    for (int i = 0; i < n && roots; i++)
        if (roots[i]) em_node_release(roots[i]);
    free(roots);
    free(nrs);
    return st;
}

/* The captures for `inputs`: where each one's gradient arrives. */
static em_status make_captures(int ninputs, em_tensor *const *inputs, capture *caps)
{
    for (int i = 0; i < ninputs; i++) {
        caps[i] = (capture){0};
        if (!em_requires_grad(inputs[i]))
            return em_fail(EM_ERR_RUNTIME, "One of the differentiated Tensors does not require grad");
        caps[i].node = em_gradient_edge(inputs[i], &caps[i].nr);
        caps[i].tensor = inputs[i];
        if (!caps[i].node) return em_error_code();
    }
    return EM_OK;
}

static void free_captures(int n, capture *caps)
{
    for (int i = 0; i < n; i++) {
        if (caps[i].node) em_node_release(caps[i].node);
        em_release(caps[i].grad);
    }
}

/* backward() with the factory device set to the roots' device while it
 * runs, so that what formulas make for themselves (em_zeros, em_ones) lands
 * on the graph's device: a device guard, as PyTorch's engine sets. */
static em_status guarded_backward(int n, em_tensor *const *roots, em_tensor *const *grads, run *rn)
{
    em_device prev = em_set_factory_device(n ? em_device_of(roots[0]) : em_factory_device());
    em_status st = backward(n, roots, grads, rn);
    em_set_factory_device(prev);
    return st;
}

em_status em_backward(int n, em_tensor *const *tensors, em_tensor *const *grad_tensors, bool retain_graph,
                      bool create_graph, int ninputs, em_tensor *const *inputs)
{
    if (n < 0 || ninputs < 0)
        return em_fail(EM_ERR_VALUE, "em_backward: negative count (n %d, ninputs %d)", n, ninputs);
    if (EM_NULL_LIST(n, tensors) || EM_NULL_LIST(ninputs, inputs)) return em_error_code();
    capture *caps = calloc(ninputs ? ninputs : 1, sizeof *caps);
    if (!caps) return em_fail(EM_ERR_MEMORY, "backward: out of memory");
    run rn = {.retain = retain_graph, .create = create_graph, .accumulate_leaves = ninputs == 0,
              .caps = caps, .ncaps = ninputs};
    em_status st = make_captures(ninputs, inputs, caps);
    if (st == EM_OK) st = guarded_backward(n, tensors, grad_tensors, &rn);
    for (int i = 0; i < ninputs && st == EM_OK; i++) { /* backward(inputs=): into their .grad */
        if (!caps[i].grad) continue;
        em_meta *m = em_meta_get(inputs[i]);
        if (m->grad_fn && !m->retains_grad) continue; /* a non-leaf keeps no .grad unless retained */
        st = accumulate_leaf(inputs[i], caps[i].grad, create_graph);
    }
    free_captures(ninputs, caps);
    free(caps);
    return st;
}

em_status em_autograd_grad(int noutputs, em_tensor *const *outputs, em_tensor *const *grad_outputs, int ninputs,
                           em_tensor *const *inputs, bool retain_graph, bool create_graph, bool allow_unused,
                           em_tensor **grads)
{
    if (noutputs < 0 || ninputs < 0)
        return em_fail(EM_ERR_VALUE, "em_autograd_grad: negative count (noutputs %d, ninputs %d)", noutputs, ninputs);
    if (EM_NULL_LIST(noutputs, outputs) || EM_NULL_LIST(ninputs, inputs) || (ninputs && EM_NULL(grads)))
        return em_error_code();
    capture *caps = calloc(ninputs ? ninputs : 1, sizeof *caps);
    if (!caps) return em_fail(EM_ERR_MEMORY, "autograd.grad: out of memory");
    run rn = {.retain = retain_graph, .create = create_graph, .caps = caps, .ncaps = ninputs};
    for (int i = 0; i < ninputs; i++) grads[i] = NULL;
    em_status st = make_captures(ninputs, inputs, caps);
    if (st == EM_OK) st = guarded_backward(noutputs, outputs, grad_outputs, &rn);
    for (int i = 0; i < ninputs && st == EM_OK; i++) {
        if (!caps[i].grad && !allow_unused)
            st = em_fail(EM_ERR_RUNTIME, "One of the differentiated Tensors appears to not have been used in the "
                         "graph. Set allow_unused=True if this is the desired behavior.");
        grads[i] = caps[i].grad ? em_retain(caps[i].grad) : NULL;
    }
    if (st != EM_OK)
        for (int i = 0; i < ninputs; i++) em_release(grads[i]), grads[i] = NULL;
    free_captures(ninputs, caps);
    free(caps);
    return st;
}
