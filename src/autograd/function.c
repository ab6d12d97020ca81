/* Custom autograd functions (torch.autograd.Function from C): a graph node
 * whose backward is a user callback, and the ctx through which the user's
 * forward and backward share state.
 *
 * Note [Custom function lifetime]: the ctx lives as long as the node (the
 * node owns it, and em_node_release frees it with the user data), or, when
 * no node is made (nothing requires grad), until em_function_apply returns.
 * So the user data's destructor runs exactly once in every case. While
 * forward runs the ctx collects strong references (marks, save_for_backward);
 * once the outputs have their history, the tensors to save are packed into
 * version-checked saved tensors, an output as an alias without history (the
 * output holds the node: a reference back would be a cycle). */
#include "autograd.h"
#include <stdlib.h>

_Static_assert(EM_FUNCTION_MAX_IN == EM_NODE_MAX_IN && EM_FUNCTION_MAX_OUT == EM_NODE_MAX_OUT,
               "the public limits of custom functions are the node limits");

enum { SAVED_NULL = -2, SAVED_TENSOR = -1 }; /* out_nr of a saved entry; k >= 0: output k */

struct em_function_ctx {
    const em_function *f;
    char name[64]; /* its node's name */
    void *user;
    em_node *node; /* weak (the node owns the ctx); NULL when nothing is recorded */
    int nin;
    bool needs[EM_NODE_MAX_IN];
    bool materialize;
    bool in_forward;
    /* collected during forward (strong) */
    em_tensor *dirty[EM_NODE_MAX_IN], *nondiff[EM_NODE_MAX_OUT];
    int ndirty, nnondiff;
    em_tensor **to_save;
    int nsave;
    /* packed after forward */
    em_saved *saved;
    int *out_nr;
    int nsaved;
};

static void release_all(em_tensor **t, int n)
{
    for (int i = 0; i < n; i++) em_release(t[i]), t[i] = NULL;
}

/* Drops what forward collected. */
static void clear_forward_state(em_function_ctx *ctx)
{
    release_all(ctx->dirty, ctx->ndirty);
    release_all(ctx->nondiff, ctx->nnondiff);
    if (ctx->to_save) release_all(ctx->to_save, ctx->nsave);
    free(ctx->to_save);
    ctx->to_save = NULL;
    ctx->ndirty = ctx->nnondiff = ctx->nsave = 0;
}

void em_function_ctx_release_saved(em_function_ctx *ctx)
{
    for (int i = 0; i < ctx->nsaved; i++) em_saved_release(&ctx->saved[i]);
}

void em_function_ctx_free(em_function_ctx *ctx)
{
    clear_forward_state(ctx);
    em_function_ctx_release_saved(ctx);
    free(ctx->saved);
    free(ctx->out_nr);
    if (ctx->f->free_user) ctx->f->free_user(ctx->user);
    free(ctx);
}

/* ---- the ctx API ------------------------------------------------------------ */
static em_status check_forward(const em_function_ctx *ctx, const char *what)
{
    if (!ctx || !ctx->in_forward) return em_fail(EM_ERR_RUNTIME, "%s can only be called from forward", what);
    return EM_OK;
}

static bool contains(em_tensor *const *list, int n, const em_tensor *t)
{
    for (int i = 0; i < n; i++)
        if (list[i] == t) return true;
    return false;
}

em_status em_ctx_save_for_backward(em_function_ctx *ctx, int n, const em_tensor *const *tensors)
{
    if (check_forward(ctx, "save_for_backward")) return em_error_code();
    if (n < 0 || (n > 0 && !tensors)) return em_fail(EM_ERR_VALUE, "save_for_backward: invalid tensor list");
    em_tensor **copy = calloc(n ? n : 1, sizeof *copy);
    if (!copy) return em_fail(EM_ERR_MEMORY, "out of memory in save_for_backward");
    for (int i = 0; i < n; i++) copy[i] = em_retain((em_tensor *)tensors[i]);
    if (ctx->to_save) release_all(ctx->to_save, ctx->nsave);
    free(ctx->to_save); /* a second call replaces the first, as in PyTorch */
    ctx->to_save = copy;
    ctx->nsave = n;
    return EM_OK;
}

int em_ctx_num_saved(const em_function_ctx *ctx) { return ctx->node ? ctx->nsaved : ctx->nsave; }

em_tensor *em_ctx_saved_tensor(em_function_ctx *ctx, int i)
{
    if (!ctx->node || ctx->in_forward)
        return em_error(EM_ERR_RUNTIME, "saved tensors can only be read in backward");
    if (i < 0 || i >= ctx->nsaved)
        return em_error(EM_ERR_INDEX, "saved tensor index %d out of range (%d saved)", i, ctx->nsaved);
    if (ctx->out_nr[i] == SAVED_NULL && !ctx->node->released) {
        em_clear_error();
        return NULL;
    }
    const em_tensor *t = em_saved_unpack(ctx->node, &ctx->saved[i], "saved tensor");
    if (!t) return NULL;
    int k = ctx->out_nr[i];
    if (k < 0 || !em_grad_mode()) return em_retain((em_tensor *)t);
    /* create_graph: an output comes back with its history (Note [Unpacking a
     * saved output] in graph.c) */
    em_tensor *r = em_detach(t);
    if (r && em_set_history(r, ctx->node, k)) em_release(r), r = NULL;
    return r;
}

void *em_ctx_user(const em_function_ctx *ctx) { return ctx->user; }

bool em_ctx_needs_input_grad(const em_function_ctx *ctx, int i) { return i >= 0 && i < ctx->nin && ctx->needs[i]; }

em_status em_ctx_mark_dirty(em_function_ctx *ctx, const em_tensor *t)
{
    if (check_forward(ctx, "mark_dirty")) return em_error_code();
    if (!t) return em_fail(EM_ERR_VALUE, "mark_dirty: tensor is NULL");
    if (contains(ctx->dirty, ctx->ndirty, t)) return EM_OK;
    if (ctx->ndirty == EM_NODE_MAX_IN) return em_fail(EM_ERR_VALUE, "mark_dirty: more tensors than inputs");
    ctx->dirty[ctx->ndirty++] = em_retain((em_tensor *)t);
    return EM_OK;
}

em_status em_ctx_mark_non_differentiable(em_function_ctx *ctx, const em_tensor *t)
{
    if (check_forward(ctx, "mark_non_differentiable")) return em_error_code();
    if (!t) return em_fail(EM_ERR_VALUE, "mark_non_differentiable: tensor is NULL");
    if (contains(ctx->nondiff, ctx->nnondiff, t)) return EM_OK;
    if (ctx->nnondiff == EM_NODE_MAX_OUT)
        return em_fail(EM_ERR_VALUE, "mark_non_differentiable: more tensors than outputs");
    ctx->nondiff[ctx->nnondiff++] = em_retain((em_tensor *)t);
    return EM_OK;
}

void em_ctx_set_materialize_grads(em_function_ctx *ctx, bool materialize)
{
    ctx->materialize = materialize;
    if (ctx->node) ctx->node->keep_missing_grads = !materialize;
}

/* ---- the node's backward ---------------------------------------------------- */
/* PyTorch's is_expandable_to: can `shape` broadcast to g's shape? */
static bool expandable(const em_geometry *shape, const em_tensor *g)
{
    int extra = g->ndim - shape->ndim;
    if (extra < 0) return false;
    for (int d = 0; d < shape->ndim; d++)
        if (shape->sizes[d] != 1 && shape->sizes[d] != g->sizes[d + extra]) return false;
    return true;
}

static em_status custom_backward(const em_node *n, em_tensor *const *grad_out, em_tensor **grad_in)
{
    em_function_ctx *ctx = n->fn_ctx;
    em_tensor *g[EM_NODE_MAX_IN] = {0};
    em_clear_error();
    em_status st = ctx->f->backward(ctx, n->nout, grad_out, n->nin, g);
    if (st != EM_OK && !em_error_code()) em_fail(st, "%s: backward failed", n->name);
    for (int i = 0; i < n->nin; i++) {
        if (st != EM_OK || !g[i] || !em_node_needs_grad(n, i)) {
            em_release(g[i]);
            continue;
        }
        if (!expandable(&n->in_geom[i], g[i])) {
            st = em_fail(EM_ERR_RUNTIME, "Function %s returned an invalid gradient at index %d - got %s but "
                         "expected shape compatible with %s", n->name, i, em_shape_str(g[i]->ndim, g[i]->sizes),
                         em_shape_str(n->in_geom[i].ndim, n->in_geom[i].sizes));
            em_release(g[i]);
            continue;
        }
        grad_in[i] = g[i];
    }
    if (st != EM_OK)
        for (int i = 0; i < n->nin; i++) em_release(grad_in[i]), grad_in[i] = NULL;
    return st;
}

/* ---- apply ------------------------------------------------------------------ */
/* The node for ctx with edges to the inputs that need grad, made before
 * forward runs (forward may rewrite an input's history: mark_dirty). On
 * failure ctx is freed. */
static em_node *make_node(em_function_ctx *ctx, const em_tensor *const *in)
{
    snprintf(ctx->name, sizeof ctx->name, "%sBackward", ctx->f->name ? ctx->f->name : "Function");
    /* room for every output: their count is known after forward (nout 0 until then) */
    em_node *n = em_node_new(ctx->name, custom_backward, ctx->nin, EM_NODE_MAX_OUT, false);
    if (!n) {
        em_function_ctx_free(ctx);
        return NULL;
    }
    n->nout = 0;
    n->fn_ctx = ctx;
    ctx->node = n;
    for (int i = 0; i < ctx->nin; i++) {
        if (!in[i]) continue;
        em_geometry_of(&n->in_geom[i], in[i]);
        if (ctx->needs[i] && !(n->next[i].node = em_gradient_edge((em_tensor *)in[i], &n->next[i].input_nr))) {
            em_node_release(n); /* frees ctx too */
            return NULL;
        }
    }
    return n;
}

/* Refuses, before any history changes, an in-place (dirty) output that
 * autograd cannot rewrite and a tensor it cannot save. */
static em_status check_outputs(em_function_ctx *ctx, int nout, em_tensor *const *out)
{
    for (int i = 0; ctx->node && i < ctx->nsave; i++)
        if (em_check_savable(ctx->to_save[i])) return em_error_code();
    for (int d = 0; d < ctx->ndirty; d++) {
        const em_tensor *t = ctx->dirty[d];
        if (!contains(out, nout, t))
            return em_fail(EM_ERR_RUNTIME, "Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all be outputs of the "
                           "Function.");
        const em_meta *m = em_meta_get(t);
        if (!ctx->node || !m || contains(ctx->nondiff, ctx->nnondiff, t)) continue;
        if (!m->grad_fn && m->requires_grad)
            return em_fail(EM_ERR_RUNTIME, "a leaf Variable that requires grad has been used in an in-place "
                           "operation.");
        if (em_view_root(t) != t && em_requires_grad(t))
            return em_fail(EM_ERR_NOT_IMPLEMENTED, "%s: in-place operations on a view of a tensor that requires "
                           "grad are not implemented yet; clone() the view first", ctx->node->name);
    }
    return EM_OK;
}

/* Replaces *t by an alias of it without history. */
static em_status alias_in_place(em_tensor **t)
{
    em_tensor *a = em_detach(*t);
    if (!a) return em_error_code();
    em_release(*t);
    *t = a;
    return EM_OK;
}

/* Gives output k its history (PyTorch's _wrap_outputs): non-differentiable
 * outputs get none, an input returned unmodified becomes an alias of it,
 * a dirty input is rebased onto the node. */
static em_status wrap_output(em_function_ctx *ctx, const em_tensor *const *in, em_tensor **out, int k)
{
    em_tensor *t = out[k];
    em_node *n = ctx->node;
    bool is_input = contains((em_tensor *const *)in, ctx->nin, t), dirty = contains(ctx->dirty, ctx->ndirty, t);
    if (n) em_geometry_of(&n->out_geom[k], t);
    if (!n || contains(ctx->nondiff, ctx->nnondiff, t) || !em_dtype_differentiable(t->dtype)) {
        if ((is_input && !dirty) || em_requires_grad(t)) return alias_in_place(&out[k]);
        return EM_OK;
    }
    if (is_input && !dirty && alias_in_place(&out[k])) return em_error_code();
    return em_set_history(out[k], n, k);
}

/* Packs what save_for_backward got (Note [Custom function lifetime]). */
static em_status pack_saved(em_function_ctx *ctx, int nout, em_tensor *const *out)
{
    int n = ctx->nsave;
    if (!n) return EM_OK;
    ctx->saved = calloc(n, sizeof *ctx->saved);
    ctx->out_nr = calloc(n, sizeof *ctx->out_nr);
    if (!ctx->saved || !ctx->out_nr) return em_fail(EM_ERR_MEMORY, "out of memory saving tensors for backward");
    ctx->nsaved = n;
    for (int i = 0; i < n; i++) {
        const em_tensor *t = ctx->to_save[i];
        ctx->out_nr[i] = t ? SAVED_TENSOR : SAVED_NULL;
        if (!t) continue;
        for (int k = 0; k < nout; k++)
            if (out[k] == t) ctx->out_nr[i] = k;
        ctx->saved[i].t = ctx->out_nr[i] >= 0 ? em_detach(t) : em_saved_ref(t);
        if (!ctx->saved[i].t) return em_error_code();
        ctx->saved[i].version = em_version(t);
        em_status st = em_saved_pack(&ctx->saved[i]);
        if (st) return st;
    }
    return EM_OK;
}

/* Runs forward with grad mode off and checks what it returned. */
static em_status run_forward(em_function_ctx *ctx, const em_tensor *const *in, int *nout, em_tensor **out)
{
    bool was = em_is_grad_enabled();
    em_set_grad_enabled(false);
    em_clear_error();
    ctx->in_forward = true;
    em_status st = ctx->f->forward(ctx, ctx->nin, in, nout, out);
    ctx->in_forward = false;
    em_set_grad_enabled(was);
    if (st != EM_OK) return em_error_code() ? em_error_code() : em_fail(st, "%s: forward failed", ctx->f->name);
    if (*nout < 0 || *nout > EM_NODE_MAX_OUT)
        return em_fail(EM_ERR_VALUE, "%s: forward returned %d outputs (at most %d)", ctx->f->name, *nout,
                       EM_NODE_MAX_OUT);
    for (int k = 0; k < *nout; k++)
        if (!out[k]) return em_fail(EM_ERR_VALUE, "%s: forward returned NULL as output %d", ctx->f->name, k);
    return EM_OK;
}

em_status em_function_apply(const em_function *f, void *user, int nin, const em_tensor *const *in, int *nout,
                            em_tensor **out)
{
    if (nout) *nout = 0;
    if (!f || !f->forward || !f->backward || !nout || !out || nin < 0 || nin > EM_NODE_MAX_IN || (nin && !in)) {
        if (f && f->free_user) f->free_user(user);
        return em_fail(EM_ERR_VALUE, "em_function_apply: invalid arguments (a function with forward and backward, "
                       "at most %d inputs, and room for the outputs are required)", EM_NODE_MAX_IN);
    }
    em_function_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        if (f->free_user) f->free_user(user);
        return em_fail(EM_ERR_MEMORY, "out of memory applying a function");
    }
    *ctx = (em_function_ctx){.f = f, .user = user, .nin = nin, .materialize = true};
    bool record = false;
    for (int i = 0; i < nin; i++) {
        ctx->needs[i] = em_grad_mode() && in[i] && em_requires_grad(in[i]);
        record |= ctx->needs[i];
    }
    if (record && !make_node(ctx, in)) return em_error_code();

    em_tensor *res[EM_NODE_MAX_OUT] = {0};
    int k_out = 0;
    em_status st = run_forward(ctx, in, &k_out, res);
    if (st == EM_OK) st = check_outputs(ctx, k_out, res);
    for (int k = 0; k < k_out && st == EM_OK; k++) st = wrap_output(ctx, in, res, k);
    if (st == EM_OK && ctx->node) {
        ctx->node->nout = k_out;
        st = pack_saved(ctx, k_out, res);
    }
    clear_forward_state(ctx);
    if (st != EM_OK) {
        for (int k = 0; k < EM_NODE_MAX_OUT; k++) em_release(res[k]);
        k_out = 0;
    }
    for (int k = 0; k < k_out; k++) out[k] = res[k];
    *nout = k_out;
    if (ctx->node)
        em_node_release(ctx->node); /* the outputs hold it (and it the ctx) */
    else
        em_function_ctx_free(ctx);
    return st;
}
