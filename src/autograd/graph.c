/* A tensor's autograd metadata and the lifetime of graph nodes: creation,
 * saved tensors and their version checks, edges to the inputs' nodes. */
#include "autograd.h"
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- nodes ------------------------------------------------------------- */
/* Note [Node layout]: the zeroed arrays first, then the geometries, which
 * the recorder writes (only their ndim is set here). */
em_node *em_node_new(const char *name, em_backward_fn fn, int nin, int nout, bool view)
{
    size_t zeroed = nin * (sizeof(em_edge) + sizeof(em_saved)) + nout * (sizeof(em_saved) + 2 * sizeof(void *));
    size_t size = sizeof(em_node) + zeroed + (nin + nout) * sizeof(em_geometry) + (view ? sizeof(em_view_geom) : 0);
    em_node *n = malloc(size);
    if (!n) return em_error(EM_ERR_MEMORY, "out of memory allocating a graph node");
    char *p = (char *)(n + 1);
    memset(p, 0, zeroed);
    *n = (em_node){.refcount = 1, .apply = fn, .nin = nin, .nout = nout, .nout_cap = nout, .name = name};
    n->next = (em_edge *)p, p += nin * sizeof(em_edge);
    n->in = (em_saved *)p, p += nin * sizeof(em_saved);
    n->out = (em_saved *)p, p += nout * sizeof(em_saved);
    n->hooks = (em_hook **)p, p += nout * sizeof(em_hook *);
    n->buf = (em_tensor **)p, p += nout * sizeof(em_tensor *);
    n->in_geom = (em_geometry *)p, p += nin * sizeof(em_geometry);
    n->out_geom = (em_geometry *)p, p += nout * sizeof(em_geometry);
    for (int i = 0; i < nin; i++) n->in_geom[i].ndim = 0, n->in_geom[i].dtype = 0;
    for (int k = 0; k < nout; k++) n->out_geom[k].ndim = 0, n->out_geom[k].dtype = 0;
    if (view) n->view = (em_view_geom *)p;
    if (fn) em_anomaly_record(n); /* (not AccumulateGrad: no formula to fail) */
    return n;
}

/* "log_softmax" -> "LogSoftmaxBackward0" */
static void make_op_name(char *buf, size_t size, const char *op)
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

static char op_names[EM_OP_COUNT][40];
static pthread_once_t op_names_once = PTHREAD_ONCE_INIT;
static void make_op_names(void)
{
    for (int op = 0; op < EM_OP_COUNT; op++) make_op_name(op_names[op], sizeof op_names[op], em_ops[op].name);
}

const char *em_node_op_name(em_op op)
{
    pthread_once(&op_names_once, make_op_names);
    return op_names[op];
}

void em_node_retain(em_node *n)
{
    if (n) __atomic_add_fetch(&n->refcount, 1, __ATOMIC_RELAXED);
}

static void free_hook(em_hook *h)
{
    if (h->retain) h->retain->retains_grad = false;
    if (h->free_ctx) h->free_ctx(h->ctx);
    free(h);
}

static void free_hooks(em_hook *h)
{
    while (h) {
        em_hook *next = h->next;
        free_hook(h);
        h = next;
    }
}

/* A node that saved no tensor can run again after a backward without
 * retain_graph (PyTorch's rule: only freed saved values stop it). */
void em_node_release_saved(em_node *n)
{
    bool saved = n->fn_ctx != NULL;
    for (int i = 0; i < n->nin; i++) saved |= em_saved_release(&n->in[i]);
    for (int k = 0; k < n->nout_cap; k++) saved |= em_saved_release(&n->out[k]);
    if (n->fn_ctx) em_function_ctx_release_saved(n->fn_ctx);
    n->released |= saved;
}

void em_node_release(em_node *n)
{
    /* iterative, so that releasing a long chain does not recurse per node */
    em_node *stack[256];
    int top = 0;
    if (!n) return; /* NULL-safe, as free */
    stack[top++] = n;
    while (top) {
        em_node *m = stack[--top];
        if (__atomic_sub_fetch(&m->refcount, 1, __ATOMIC_ACQ_REL) != 0) continue;
        em_node_release_saved(m);
        if (m->fn_ctx) em_function_ctx_free(m->fn_ctx);
        if (m->anomaly) em_anomaly_free(m);
        for (int k = 0; k < m->nout_cap; k++) free_hooks(m->hooks[k]), em_release(m->buf[k]);
        if (m->leaf) {
            em_meta *lm = em_meta_get(m->leaf);
            if (lm && lm->acc == m) lm->acc = NULL;
            em_release(m->leaf);
        }
        for (int i = 0; i < m->nin; i++) {
            em_node *next = m->next[i].node;
            if (!next) continue;
            if (top < 256)
                stack[top++] = next;
            else
                em_node_release(next); /* rare: a node with very many pending inputs */
        }
        free(m);
    }
}

bool em_node_needs_grad(const em_node *n, int i) { return i < n->nin && n->next[i].node != NULL; }

const em_tensor *em_saved_unpack(const em_node *n, const em_saved *s, const char *what)
{
    if (n->released || !(s->t || s->packed))
        return em_error(EM_ERR_RUNTIME, "Trying to backward through the graph a second time (or directly access "
                        "saved tensors after they have already been freed). Saved intermediate values of the graph "
                        "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you "
                        "need to backward through the graph a second time or if you need to access saved tensors "
                        "after calling backward.");
    if (s->packed) return em_saved_unpack_packed((em_saved *)s); /* the node's own cache of it */
    uint64_t v = em_version(s->t);
    if (v != s->version)
        return em_error(EM_ERR_RUNTIME, "one of the variables needed for gradient computation has been modified by "
                        "an inplace operation: [%s, %s %s %s] is at version %llu; expected version %llu instead.",
                        n->name, what, em_dtypes[s->t->dtype].name, em_shape_str(s->t->ndim, s->t->sizes),
                        (unsigned long long)v, (unsigned long long)s->version);
    return s->t;
}

const em_tensor *em_node_input(const em_node *n, int i) { return em_saved_unpack(n, &n->in[i], "input"); }
/* A saved output is an alias without history (the output holds this node:
 * a reference back would be a cycle), so what a formula computes from the
 * borrowed alias cannot be differentiated again: refused while recording
 * (create_graph). em_node_unpack_output() is the form that can. */
const em_tensor *em_node_output(const em_node *n, int k)
{
    if (em_grad_mode())
        return em_error(EM_ERR_NOT_IMPLEMENTED, "double backward through %s (which saves its output) is not "
                        "implemented yet", n->name);
    return em_saved_unpack(n, &n->out[k], "output");
}

/* Note [Unpacking a saved output]: while recording (create_graph), the
 * formula gets a fresh alias whose grad_fn is n itself, output k, so that
 * what it computes from the output differentiates through n again. The
 * alias is the caller's until the formula returns: n never holds it (that
 * would be the cycle n -> alias -> n); the nodes the formula records hold n
 * through their edges, and nothing reachable from n holds them. */
em_tensor *em_node_unpack_output(const em_node *n, int k)
{
    const em_tensor *y = em_saved_unpack(n, &n->out[k], "output");
    if (!y) return NULL;
    if (!em_grad_mode() || !em_dtype_differentiable(em_dtype_of(y))) return em_retain((em_tensor *)y); /* no history */
    em_tensor *r = em_detach(y);
    if (r && em_set_history(r, (em_node *)n, k)) {
        em_release(r);
        return NULL;
    }
    return r;
}

/* ---- metadata ----------------------------------------------------------- */
static void free_meta(void *p)
{
    em_meta *m = p;
    if (m->grad_fn) {
        /* this tensor's retain_grad hook must not write into freed memory */
        for (em_hook *h = m->grad_fn->hooks[m->output_nr]; h; h = h->next)
            if (h->retain == m) h->retain = NULL, h->fn = NULL;
        em_node_release(m->grad_fn);
    }
    em_release(m->grad);
    free_hooks(m->hooks);
    free_hooks(m->post_hooks);
    free(m);
}

static bool is_grad_leaf(const em_tensor *t) { return em_requires_grad(t) && em_is_leaf(t); }

static const em_autograd_hooks hooks = {.free_meta = free_meta, .record_view = em_record_view,
                                        .is_grad_leaf = is_grad_leaf};
extern em_status (*em_autograd_stage)(const em_call *c, em_kernel k);
em_status em_autograd_run(const em_call *c, em_kernel k); /* record.c */

void em_autograd_install(void)
{
    em_autograd_stage = em_autograd_run;
    __atomic_store_n(&em_autograd, &hooks, __ATOMIC_RELEASE);
}

em_meta *em_meta_of(em_tensor *t)
{
    if (t->autograd) return t->autograd;
    if (!em_autograd) em_autograd_install();
    em_meta *m = calloc(1, sizeof *m);
    if (!m) return em_error(EM_ERR_MEMORY, "out of memory allocating autograd metadata");
    t->autograd = m;
    return m;
}

em_status em_set_history(em_tensor *out, em_node *n, int k)
{
    em_meta *m = em_meta_of(out);
    if (!m) return em_error_code();
    em_node_retain(n);
    if (m->grad_fn) em_node_release(m->grad_fn);
    m->grad_fn = n;
    m->output_nr = k;
    m->requires_grad = true;
    return EM_OK;
}

em_node *em_gradient_edge(em_tensor *t, int *input_nr)
{
    *input_nr = 0;
    if (em_view_refresh(t)) return NULL;
    em_meta *m = em_meta_get(t);
    if (!m) return NULL;
    if (m->grad_fn) {
        *input_nr = m->output_nr;
        em_node_retain(m->grad_fn);
        return m->grad_fn;
    }
    if (!m->requires_grad) return NULL;
    if (m->acc) {
        em_node_retain(m->acc);
        return m->acc;
    }
    em_node *acc = em_node_new("AccumulateGrad", NULL, 0, 1, false);
    if (!acc) return NULL;
    acc->leaf = em_retain(t);
    em_geometry_of(&acc->out_geom[0], t);
    m->acc = acc; /* weak: the graph holds it */
    return acc;
}

/* ---- the public tensor-level API --------------------------------------- */
em_status em_set_requires_grad(em_tensor *t, bool requires_grad)
{
    if (EM_NULL(t)) return em_error_code();
    if (em_view_refresh(t)) return em_error_code();
    em_meta *m = em_meta_get(t);
    if (m && m->grad_fn) {
        if (requires_grad) return EM_OK;
        return em_fail(EM_ERR_RUNTIME, "you can only change requires_grad flags of leaf variables. If you want to "
                       "use a computed variable in a subgraph that doesn't require differentiation use "
                       "var_no_grad = var.detach().");
    }
    if (requires_grad && !em_dtype_differentiable(t->dtype))
        return em_fail(EM_ERR_RUNTIME, "only Tensors of floating point dtype can require gradients");
    if (requires_grad && em_is_inference(t) && !em_inference_mode())
        return em_fail(EM_ERR_RUNTIME, "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                       "allowed.");
    if (!requires_grad && !m) return EM_OK;
    if (!(m = em_meta_of(t))) return em_error_code();
    m->requires_grad = requires_grad;
    return EM_OK;
}

/* The queries below see a view's current history (em_view_refresh); if it
 * cannot be made (out of memory) they answer from the old one. */
bool em_requires_grad(const em_tensor *t)
{
    if (EM_NULL(t)) return false;
    em_view_refresh((em_tensor *)t);
    const em_meta *m = em_meta_get(t);
    return m && (m->requires_grad || m->grad_fn);
}

bool em_is_leaf(const em_tensor *t)
{
    if (EM_NULL(t)) return false;
    em_view_refresh((em_tensor *)t);
    const em_meta *m = em_meta_get(t);
    return !m || !m->grad_fn;
}

em_tensor *em_get_grad(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    const em_meta *m = em_meta_get(t);
    return m && m->grad ? em_retain(m->grad) : NULL;
}

em_status em_set_grad(em_tensor *t, const em_tensor *grad)
{
    if (EM_NULL(t)) return em_error_code();
    if (grad && (grad->ndim != t->ndim || memcmp(grad->sizes, t->sizes, t->ndim * sizeof *t->sizes)))
        return em_fail(EM_ERR_SHAPE, "assigned grad has data of a different size");
    if (grad && grad->dtype != t->dtype) return em_fail(EM_ERR_DTYPE, "assigned grad has data of a different type");
    if (!grad && !t->autograd) return EM_OK;
    em_meta *m = em_meta_of(t);
    if (!m) return em_error_code();
    em_release(m->grad);
    m->grad = grad ? em_retain((em_tensor *)grad) : NULL;
    return EM_OK;
}

em_node *em_grad_fn(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    em_view_refresh((em_tensor *)t);
    const em_meta *m = em_meta_get(t);
    return m ? m->grad_fn : NULL;
}

em_tensor *em_detach(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    return em_tensor_alias(t); /* no view: it follows no history */
}

static int next_hook_id;

static em_hook **hook_list(em_tensor *t)
{
    em_view_refresh(t);
    em_meta *m = em_meta_get(t);
    if (!m || (!m->requires_grad && !m->grad_fn)) {
        em_error(EM_ERR_RUNTIME, "cannot register a hook on a tensor that doesn't require gradient");
        return NULL;
    }
    return m->grad_fn ? &m->grad_fn->hooks[m->output_nr] : &m->hooks;
}

static em_hook *add_hook(em_hook **list)
{
    em_hook *h = calloc(1, sizeof *h), **end = list;
    if (!h) return em_error(EM_ERR_MEMORY, "out of memory registering a hook");
    h->id = __atomic_add_fetch(&next_hook_id, 1, __ATOMIC_RELAXED);
    while (*end) end = &(*end)->next; /* hooks run in registration order */
    *end = h;
    return h;
}

int em_register_hook(em_tensor *t, em_grad_hook_fn fn, void *ctx, void (*free_ctx)(void *ctx))
{
    if (EM_NULL(t) || EM_NULL(fn)) return -1;
    em_hook **list = hook_list(t), *h;
    if (!list || !(h = add_hook(list))) return -1;
    h->fn = fn;
    h->ctx = ctx;
    h->free_ctx = free_ctx;
    return h->id;
}

int em_register_post_accumulate_grad_hook(em_tensor *leaf, em_post_accumulate_hook_fn fn, void *ctx,
                                          void (*free_ctx)(void *ctx))
{
    if (EM_NULL(leaf) || EM_NULL(fn)) return -1;
    em_hook **list = hook_list(leaf), *h;
    if (!list) return -1;
    if (em_meta_get(leaf)->grad_fn) {
        em_fail(EM_ERR_RUNTIME, "post accumulate grad hooks cannot be registered on non-leaf tensors");
        return -1;
    }
    if (!(h = add_hook(&em_meta_get(leaf)->post_hooks))) return -1;
    h->post = fn;
    h->ctx = ctx;
    h->free_ctx = free_ctx;
    return h->id;
}

/* Unlinks and frees the hook `handle` from list; false when absent. */
static bool unlink_hook(em_hook **list, int handle)
{
    for (em_hook **p = list; *p; p = &(*p)->next)
        if ((*p)->id == handle) {
            em_hook *h = *p;
            *p = h->next;
            free_hook(h);
            return true;
        }
    return false;
}

em_status em_remove_hook(em_tensor *t, int handle)
{
    if (EM_NULL(t)) return em_error_code();
    em_hook **list = hook_list(t);
    if (!list) return em_error_code();
    if (unlink_hook(list, handle) || unlink_hook(&em_meta_get(t)->post_hooks, handle)) return EM_OK;
    return em_fail(EM_ERR_VALUE, "remove_hook: no hook with handle %d", handle);
}

em_status em_retain_grad(em_tensor *t)
{
    if (EM_NULL(t)) return em_error_code();
    if (em_view_refresh(t)) return em_error_code();
    em_meta *m = em_meta_get(t);
    if (!m || (!m->requires_grad && !m->grad_fn))
        return em_fail(EM_ERR_RUNTIME, "can't retain_grad on Tensor that has requires_grad=False");
    if (!m->grad_fn || m->retains_grad) return EM_OK;
    em_hook *h = add_hook(&m->grad_fn->hooks[m->output_nr]);
    if (!h) return em_error_code();
    h->retain = m;
    m->retains_grad = true;
    return EM_OK;
}

bool em_retains_grad(const em_tensor *t)
{
    if (EM_NULL(t)) return false;
    em_view_refresh((em_tensor *)t);
    const em_meta *m = em_meta_get(t);
    return m && m->grad_fn && m->retains_grad;
}

int em_output_nr(const em_tensor *t)
{
    if (EM_NULL(t)) return -1;
    em_view_refresh((em_tensor *)t);
    const em_meta *m = em_meta_get(t);
    return m && m->grad_fn ? m->output_nr : 0;
}

bool em_is_inference(const em_tensor *t) { return !EM_NULL(t) && (t->flags & EM_FLAG_INFERENCE); }

em_status em_check_savable(const em_tensor *t)
{
    if (t && em_is_inference(t))
        return em_fail(EM_ERR_RUNTIME, "Inference tensors cannot be saved for backward. To work around you can make "
                       "a clone to get a normal tensor and use it in autograd.");
    return EM_OK;
}

const char *em_node_name(const em_node *n) { return EM_NULL(n) ? NULL : n->name; }
int em_node_num_next(const em_node *n) { return EM_NULL(n) ? -1 : n->nin; }
em_tensor *em_node_variable(const em_node *n) { return EM_NULL(n) ? NULL : n->leaf; }

/* n's slot for its input or output i, or NULL when there is none (custom
 * functions keep their saves in their ctx). */
static em_saved *saved_slot(const em_node *n, bool output, int i)
{
    if (n->fn_ctx || i < 0 || i >= (output ? n->nout : n->nin)) return NULL;
    em_saved *slots = output ? n->out : n->in;
    return slots ? &slots[i] : NULL;
}

static const char FREED[] = "saved tensors after they have already been freed. Saved intermediate values of the "
                            "graph are freed when you call .backward() or autograd.grad(). Specify "
                            "retain_graph=True if you need to backward through the graph a second time or if "
                            "you need to access saved tensors after calling backward.";

em_status em_node_saved(const em_node *n, bool output, int i, em_tensor **out)
{
    if (EM_NULL(n) || EM_NULL(out)) return em_error_code();
    *out = NULL;
    em_saved *s = saved_slot(n, output, i);
    if (!s) return EM_OK;
    if (n->released)
        return em_fail(EM_ERR_RUNTIME, "Trying to backward through the graph a second time (or directly access %s",
                       FREED);
    if (!s->t && !s->packed) return EM_OK;
    if (output) {
        *out = em_node_unpack_output(n, i);
    } else {
        const em_tensor *t = em_saved_unpack(n, s, "input");
        *out = t ? em_retain((em_tensor *)t) : NULL;
    }
    return *out ? EM_OK : em_error_code();
}

bool em_node_has_saved(const em_node *n, bool output, int i)
{
    if (EM_NULL(n)) return false;
    const em_saved *s = saved_slot(n, output, i);
    return s && (n->released || s->t || s->packed);
}

em_status em_node_pack_saved(em_node *n, bool output, int i)
{
    if (EM_NULL(n)) return em_error_code();
    em_saved *s = saved_slot(n, output, i);
    if (n->released) return em_fail(EM_ERR_RUNTIME, "Calling register_hooks on a saved tensor after it has been "
                                    "freed. %s", FREED);
    if (!s || (!s->t && !s->packed)) return em_fail(EM_ERR_VALUE, "register_hooks: %s saved no such tensor", n->name);
    if (s->packed)
        return em_fail(EM_ERR_RUNTIME, "Calling register_hooks on a saved tensor whose hooks have already been set. "
                       "Hint: only one pair of hooks is allowed at a time.");
    em_status st = em_saved_pack(s);
    if (st == EM_OK && !s->packed) return em_fail(EM_ERR_RUNTIME, "register_hooks: no hooks to pack with");
    return st;
}
em_node *em_node_next(const em_node *n, int i, int *input_nr)
{
    if (EM_NULL(n)) return NULL;
    if (i < 0 || i >= n->nin) return em_error(EM_ERR_INDEX, "next_functions: index %d out of range", i);
    if (input_nr) *input_nr = n->next[i].input_nr;
    return n->next[i].node;
}
