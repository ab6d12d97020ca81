/* Autograd internals: a tensor's metadata, graph nodes, and the contract of
 * backward formulas (src/autograd/formulas_*.c). */
#ifndef EMBER_AUTOGRAD_INTERNAL_H
#define EMBER_AUTOGRAD_INTERNAL_H

#include "../ops/dispatch.h"
#include "ember/autograd.h"
#include "ember/autograd_hooks.h"
#include <stdio.h>

#define EM_NODE_MAX_IN (EM_CALL_MAX_IN)
#define EM_NODE_MAX_OUT (EM_CALL_MAX_OUT)

typedef struct em_hook {
    int id;
    em_grad_hook_fn fn;
    em_post_accumulate_hook_fn post; /* post-accumulate-grad hooks (em_meta.post_hooks) */
    void *ctx;
    void (*free_ctx)(void *ctx); /* called once when the hook is freed (may be NULL) */
    struct em_meta *retain; /* retain_grad: store the gradient into this tensor's meta */
    struct em_hook *next;
} em_hook;

/* A tensor's autograd state (tensor->autograd). */
typedef struct em_meta {
    bool requires_grad; /* a leaf's flag; for non-leaves, grad_fn != NULL */
    bool retains_grad;
    em_tensor *grad;
    em_node *grad_fn; /* strong; NULL for leaves */
    int output_nr;
    em_node *acc;     /* a leaf's AccumulateGrad node while one lives (weak) */
    em_hook *hooks;   /* a leaf's hooks (a non-leaf's live on its grad_fn) */
    em_hook *post_hooks; /* a leaf's post-accumulate-grad hooks */
} em_meta;

typedef struct em_edge {
    em_node *node; /* strong; NULL: that input needs no gradient */
    int input_nr;
} em_edge;

/* What a formula reads: the forward call's params, its inputs as they were,
 * its outputs (both only when saved, see em_formula.saves). */
typedef struct em_packed em_packed;
typedef struct em_saved {
    em_tensor *t;
    uint64_t version;
    em_packed *packed; /* saved through saved-tensor hooks (saved.c): t is NULL until unpacked */
} em_saved;

/* Note [Complex gradients]: floating and complex tensors carry gradients.
 * A complex tensor's gradient is PyTorch's: dL/d(conj z) of the real loss L
 * (conjugate Wirtinger), so a holomorphic f gets g * conj(f'(z)) and a
 * formula conjugates (em_conj_if_complex) what multiplies the incoming
 * gradient. A complex gradient reaching a real input is cast to its real
 * part by the engine (em_grad_to_geometry), as PyTorch does. */
static inline bool em_dtype_differentiable(int dt)
{
    return em_dtype_is_float((em_dtype)dt) || em_dtype_is_complex((em_dtype)dt);
}

typedef struct em_geometry {
    int ndim;
    int8_t dtype;
    int64_t sizes[EM_MAX_DIMS];
} em_geometry;
/* Only sizes[0..ndim) are meaningful (the rest is left unwritten). */
static inline void em_geometry_of(em_geometry *g, const em_tensor *t)
{
    g->ndim = t->ndim;
    g->dtype = t->dtype;
    memcpy(g->sizes, t->sizes, t->ndim * sizeof *t->sizes);
}

/* A backward formula: from grad_out[k] (the gradient of forward output k, never
 * NULL: missing ones are zeros) compute grad_in[i] for each input i whose
 * em_node_needs_grad(n, i); the result may have the broadcast shape and any
 * float dtype (the engine sums it to the input's shape and casts it).
 * Written with Ember ops, so create_graph records it (DESIGN principle 4). */
typedef em_status (*em_backward_fn)(const em_node *n, em_tensor *const *grad_out, em_tensor **grad_in);

/* A view node's geometries in their shared storage (ViewBackward0,
 * AsStridedBackward0, CopySlices: inplace_view.c, formulas_view.c). */
typedef struct em_view_geom {
    int ndim;
    int8_t dtype; /* the view's; its base's is in_geom[0].dtype (Note [Retyped views]) */
    uint8_t bits; /* the lazy bits the view has and its base has not (Note [Conjugate bit]) */
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS], offset; /* the view */
    int64_t base_strides[EM_MAX_DIMS], base_offset;          /* its base (sizes: in_geom[0]) */
} em_view_geom;

/* Note [Node layout]: a node is one allocation, its per-input and
 * per-output arrays sized by the op's real counts and laid out after the
 * struct (em_node_new), so that recording a 1-element op touches a few
 * hundred bytes, not the worst case of every op. Hot fields come first. */
struct em_node {
    int64_t refcount;
    em_backward_fn apply; /* NULL for AccumulateGrad */
    int nin, nout;        /* nout <= nout_cap (a custom function learns its count after forward) */
    int nout_cap;
    /* engine scratch, valid during one backward */
    int deps;
    bool queued;
    bool released;           /* saved tensors freed by a backward without retain_graph */
    bool keep_missing_grads; /* missing grad_out reach apply as NULL, not zeros */
    em_edge *next;           /* [nin] */
    em_tensor **buf;         /* [nout_cap] engine scratch: the gradients arriving for each output */
    em_saved *in;            /* [nin] saved inputs (t NULL when not saved) */
    em_saved *out;           /* [nout_cap] saved outputs, detached aliases (no cycle) */
    em_geometry *in_geom;    /* [nin] (ndim 0 for an absent input) */
    em_geometry *out_geom;   /* [nout_cap] */
    em_hook **hooks;         /* [nout_cap] hooks of non-leaf output k */
    const char *name;        /* static, the op-name table's, or the fn_ctx's: outlives the node */
    em_tensor *leaf;         /* AccumulateGrad: the leaf (strong) */
    em_function_ctx *fn_ctx; /* custom functions: their ctx (owned) */
    em_view_geom *view;      /* view nodes only, else NULL */
    void *anomaly;           /* anomaly mode: where the node was made (anomaly.c), else NULL */
    em_call call;            /* the forward call's op, dtype and params (tensor pointers cleared) */
};

/* An op's formula and what it reads (bit i of *saves: input i, bit 8+k:
 * output k); both NULL when the op has no formula (yet). The table is built
 * from ops.def in formulas.c; a formula file defines an op's pair with
 * EM_BACKWARD(op, saves) { ... body using n, go, gi ... }. */
typedef struct em_formula {
    em_backward_fn fn;
    const uint32_t *saves;
} em_formula;
#define EM_SAVE_IN(i) (1u << (i))
#define EM_SAVE_OUT(k) (1u << (8 + (k)))
#define EM_SAVE_INPUTS 0xffu
/* Not a save: the formula takes a missing grad_out as NULL rather than
 * zeros (an op with big outputs that rarely get gradients). */
#define EM_KEEP_MISSING_GRADS (1u << 31)
/* Not a save: output k gets no history, as PyTorch's non-differentiable
 * outputs (a norm's saved statistics); the formula may still save it. */
#define EM_NONDIFF_OUT(k) (1u << (16 + (k)))
#define EM_BACKWARD(op, save_mask)                                                                   \
    const uint32_t em_saves_##op = (save_mask);                                                      \
    em_status em_bw_##op(const em_node *n, em_tensor *const *go, em_tensor **gi)

extern const em_formula em_formulas[EM_OP_COUNT];

/* A formula's scratch: every tensor made through em_arena_add() is
 * released by em_arena_end(), and adding a NULL marks the arena failed, so a
 * formula is a straight sequence of ops with one error check at the end.
 * The first failure's error is kept and restored by em_arena_end(): the ops
 * that ran after it on its NULL result overwrote it with "argument is NULL". */
typedef struct em_arena {
    em_tensor *t[32];
    int n;
    bool failed;
    em_status code;
    char msg[256];
} em_arena;
static inline em_tensor *em_arena_add(em_arena *a, em_tensor *t)
{
    if (t && a->n == 32) {
        em_release(t);
        t = NULL;
        em_fail(EM_ERR_RUNTIME, "autograd formula: more than 32 temporaries");
    }
    if (!t) {
        if (!a->failed) {
            a->code = em_error_code() ? em_error_code() : EM_ERR_RUNTIME;
            snprintf(a->msg, sizeof a->msg, "%s", em_last_error());
        }
        a->failed = true;
        return NULL;
    }
    return a->t[a->n++] = t;
}
/* A new reference to a formula's result, or NULL if anything failed. */
static inline em_tensor *em_arena_result(const em_arena *a, const em_tensor *r)
{
    return a->failed || !r ? NULL : em_retain((em_tensor *)r);
}
static inline em_status em_arena_end(em_arena *a)
{
    for (int i = 0; i < a->n; i++) em_release(a->t[i]);
    a->n = 0;
    return a->failed ? em_fail(a->code, "%s", a->msg) : EM_OK;
}

/* The shorthands of the formula files. */
#define X(e) em_arena_add(&a, (e))
#define G (go[0])
/* gi[i] = expr when input i needs a gradient */
#define GRAD(i, expr)                                                       \
    do {                                                                    \
        if (em_node_needs_grad(n, i)) gi[i] = em_arena_result(&a, (expr));  \
    } while (0)
#define DONE() return em_arena_end(&a)

/* ---- helpers for formulas and the engine ---------------------------------- */
em_meta *em_meta_of(em_tensor *t); /* creates it (and installs the hooks) */
static inline em_meta *em_meta_get(const em_tensor *t) { return (em_meta *)t->autograd; }
bool em_node_needs_grad(const em_node *n, int i);
/* Saved input i / output k, checked against its version at save time;
 * NULL with an error if it was modified in place or freed. Borrowed. */
const em_tensor *em_node_input(const em_node *n, int i);
/* The same check for any tensor n saved (`what` names it in the message). */
const em_tensor *em_saved_unpack(const em_node *n, const em_saved *s, const char *what);
/* Refuses an inference tensor (em_is_inference) as a tensor to save. */
em_status em_check_savable(const em_tensor *t);
const em_tensor *em_node_output(const em_node *n, int k);
/* Saved output k as a new reference, which in grad mode (create_graph)
 * carries history (grad_fn n): formulas that read their output use it to be
 * differentiable twice. Release it before the formula returns (Note
 * [Unpacking a saved output] in graph.c). NULL with an error as above. */
em_tensor *em_node_unpack_output(const em_node *n, int k);
/* A node with nin inputs and room for nout outputs (n->nout = nout), its
 * arrays zeroed, geometries 0-d, a view geometry when `view`. `name` must
 * outlive the node (a literal, em_node_op_name's, or the fn_ctx's). */
em_node *em_node_new(const char *name, em_backward_fn fn, int nin, int nout, bool view);
/* "log_softmax" -> "LogSoftmaxBackward0", built once per op. */
const char *em_node_op_name(em_op op);
void em_node_retain(em_node *n);
void em_node_release(em_node *n);
void em_node_release_saved(em_node *n);
/* A custom function's ctx (function.c): its saved tensors, and all of it
 * (calling the user data's destructor). */
void em_function_ctx_release_saved(em_function_ctx *ctx);
void em_function_ctx_free(em_function_ctx *ctx);
/* The node that receives gradients for t: its grad_fn or its leaf's
 * AccumulateGrad (created on demand); NULL when t needs no grad. Strong. */
em_node *em_gradient_edge(em_tensor *t, int *input_nr);
/* Makes `out` the k-th output of node n (out's meta gets grad_fn = n). */
em_status em_set_history(em_tensor *out, em_node *n, int k);
void em_autograd_install(void);
/* Does a geometry reach a storage element twice (stride 0, interleaving)? */
bool em_geometry_overlaps(int ndim, const int64_t *sizes, const int64_t *strides);
em_status em_view_backward(const em_node *n, em_tensor *const *grad_out, em_tensor **grad_in);
em_status em_copy_slices_backward(const em_node *n, em_tensor *const *grad_out, em_tensor **grad_in);
/* A geometry in a storage (borrowed arrays). */
typedef struct em_strided {
    int ndim;
    const int64_t *sizes, *strides;
    int64_t offset;
} em_strided;
/* grad (shaped like `from`) moved onto geometry `to` of the same storage,
 * summed where `from` reaches an element twice, zero where it does not
 * reach; `to` must not overlap itself. Recorded ops: a new reference. */
em_tensor *em_restride(const em_tensor *grad, const em_strided *from, const em_strided *to);

/* ---- views (Note [In-place on views] in inplace_view.c) ------------------- */
/* Regenerates view t's history when its storage was written since it was
 * made (t->view_version): a view of its root's current history. */
em_status em_view_refresh(em_tensor *t);
/* Records view `view` of `base` (the core's record_view hook). */
em_status em_record_view(const em_tensor *base, em_tensor *view);
/* After an in-place op wrote view v: v's root gets history CopySlices(its
 * old history, output k of n) (n NULL: the write recorded nothing) and v a
 * view of that. */
em_status em_rebase_view(em_tensor *v, em_node *n, int k);
/* What a node saves of input t: t itself, or for a view an alias with t's
 * history but without its base, so that the graph never holds a root
 * through a view of it (the root's history may come to hold the node:
 * a cycle). A new reference, NULL on error. */
em_tensor *em_saved_ref(const em_tensor *t);

/* ---- anomaly mode (anomaly.c) --------------------------------------------- */
/* Keeps the front end's record of where n is made, when anomaly mode is on. */
void em_anomaly_record(em_node *n);
void em_anomaly_free(em_node *n);
/* After n's formula ran with status st and input gradients grads[n->nin]:
 * in anomaly mode, a NaN gradient fails, and a failure is reported. */
em_status em_anomaly_check(const em_node *n, em_status st, em_tensor *const *grads);

/* ---- saved-tensor hooks (saved.c) ----------------------------------------- */
/* After s->t is set (and its version taken): hands it to this thread's pack
 * hook, when one is set. */
em_status em_saved_pack(em_saved *s);
/* A packed save's tensor, unpacked on first use (borrowed; NULL with an error). */
const em_tensor *em_saved_unpack_packed(em_saved *s);
/* Drops what s holds (the tensor, the packed handle); whether it held anything. */
bool em_saved_release(em_saved *s);

/* Sums g over broadcast dims down to `geom`'s shape and casts it to its dtype.
 * Consumes g; returns a new reference. */
em_tensor *em_grad_to_geometry(em_tensor *g, const em_geometry *geom);

#endif
