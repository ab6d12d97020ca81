/* Ember's reverse-mode automatic differentiation (the paper's §4.3): while
 * grad mode is on, every differentiable op whose inputs require grad records
 * a node of the graph; em_backward() walks it once from the outputs.
 *
 * Conventions as core.h: tensor results are new references, arguments are
 * borrowed, failures return NULL / nonzero and change nothing. */
#ifndef EMBER_AUTOGRAD_H
#define EMBER_AUTOGRAD_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct em_node em_node;

/* ---- grad mode (thread-local, on by default) ---------------------------- */
bool em_is_grad_enabled(void);
void em_set_grad_enabled(bool enabled);

/* ---- inference mode (thread-local, off by default) ----------------------- */
/* Like entering torch.inference_mode(enabled): sets inference mode and sets
 * grad mode to !enabled. To leave, restore both previous states. While it is
 * on nothing is recorded (even if grad mode is switched back on), and every
 * tensor made is an inference tensor (views inherit their base's state). */
void em_set_inference_mode(bool enabled);
bool em_is_inference_mode_enabled(void);
/* An inference tensor can never be saved for backward, nor made to require
 * grad outside inference mode (RuntimeError). */
bool em_is_inference(const em_tensor *t);

/* ---- a tensor's autograd state ------------------------------------------ */
/* requires_grad_: only leaves may change it (PyTorch's rule), and only
 * floating-point tensors may require grad. */
em_status em_set_requires_grad(em_tensor *t, bool requires_grad);
bool em_requires_grad(const em_tensor *t);
/* A leaf: made by the user, not by a recorded op (every tensor that does not
 * require grad is a leaf too). */
bool em_is_leaf(const em_tensor *t);
/* .grad: a new reference, or NULL (without an error) when there is none. */
em_tensor *em_get_grad(const em_tensor *t);
/* Sets .grad (NULL clears it); grad must match t's shape and dtype. */
em_status em_set_grad(em_tensor *t, const em_tensor *grad);
/* Keep .grad of a non-leaf tensor after backward (no-op for leaves). */
em_status em_retain_grad(em_tensor *t);
/* Whether retain_grad() holds for t now (false for leaves, as PyTorch's .retains_grad). */
bool em_retains_grad(const em_tensor *t);
/* Which output of its grad_fn t is (0 for leaves; -1 for a NULL t). */
int em_output_nr(const em_tensor *t);
/* .grad_fn: borrowed, NULL for leaves. */
em_node *em_grad_fn(const em_tensor *t);
/* A new tensor sharing t's storage, cut from the graph. */
em_tensor *em_detach(const em_tensor *t);

/* ---- graph nodes ---------------------------------------------------------- */
const char *em_node_name(const em_node *n); /* "MulBackward0", "AccumulateGrad" */
int em_node_num_next(const em_node *n);     /* -1 with an error for a NULL n */
/* The node that receives input i's gradient (borrowed; NULL when input i
 * does not require grad), and which of its inputs it is (*input_nr, when
 * input_nr is not NULL). */
em_node *em_node_next(const em_node *n, int i, int *input_nr);
/* An AccumulateGrad node's leaf (borrowed); NULL for other nodes. */
em_tensor *em_node_variable(const em_node *n);
/* The tensor node n saved for backward (grad_fn._saved_self...): its input i
 * (output false) or output i (output true) into *out as a new reference,
 * unpacked through its saved-tensor hooks if it was packed (a saved output
 * carries history, grad_fn n, in grad mode); *out NULL when n did not save
 * it. An error when the graph was freed or an unpack hook failed. */
em_status em_node_saved(const em_node *n, bool output, int i, em_tensor **out);
/* Whether n saved that tensor, without unpacking it (true for a node whose
 * graph was freed: em_node_saved and em_node_pack_saved then say so). */
bool em_node_has_saved(const em_node *n, bool output, int i);
/* Packs that saved tensor now through the current saved-tensor hooks
 * (SavedTensor.register_hooks); an error if it was packed already, was not
 * saved, or the graph was freed. */
em_status em_node_pack_saved(em_node *n, bool output, int i);
/* A binding's own reference to a node (keeps it and the graph behind it);
 * both NULL-safe. */
void em_node_retain(em_node *n);
void em_node_release(em_node *n);

/* ---- hooks ----------------------------------------------------------------- */
/* Called with the gradient flowing into t before it is used; may return a
 * new reference to replace it, or NULL to keep it (an error set by the hook
 * fails the backward). free_ctx (may be NULL) is called with ctx once, when
 * the hook is removed or freed with the graph or tensor holding it. Returns a
 * handle > 0, or -1 on error (then free_ctx is not called). */
typedef em_tensor *(*em_grad_hook_fn)(const em_tensor *grad, void *ctx);
int em_register_hook(em_tensor *t, em_grad_hook_fn fn, void *ctx, void (*free_ctx)(void *ctx));
/* Called after a leaf's .grad was accumulated by em_backward (not by
 * em_autograd_grad), with the leaf, in registration order; an error set by
 * the hook fails the backward. Leaves only. Returns a handle > 0 (removed by
 * em_remove_hook), or -1 on error. */
typedef void (*em_post_accumulate_hook_fn)(em_tensor *leaf, void *ctx);
int em_register_post_accumulate_grad_hook(em_tensor *leaf, em_post_accumulate_hook_fn fn, void *ctx,
                                          void (*free_ctx)(void *ctx));
/* Removes a hook of either kind registered on t. */
em_status em_remove_hook(em_tensor *t, int handle);

/* ---- custom functions (torch.autograd.Function) --------------------------- */
/* A differentiable function with user callbacks. em_function_apply runs
 * forward with grad mode off; when grad mode is on and an input requires
 * grad, the outputs get a node "<name>Backward" as grad_fn whose backward
 * turns the outputs' gradients into the inputs'. */
typedef struct em_function_ctx em_function_ctx;
typedef struct em_function {
    const char *name;
    /* Reads in[0..nin) (NULL entries allowed: non-tensor arguments), sets
     * *nout (<= EM_FUNCTION_MAX_OUT) and out[k] to new references; may return
     * an input itself (as a new reference): marked dirty it was written in
     * place, otherwise its output is an alias of it. */
    em_status (*forward)(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out);
    /* From grad_out[k] (NULL for a missing gradient only when materialize
     * grads is off; zeros otherwise) sets grad_in[i] to a new reference or
     * NULL (no gradient) for each input; grads for inputs that need none are
     * dropped. A gradient must have its input's shape or one that sums to it
     * (broadcast). Runs with grad mode on under create_graph. */
    em_status (*backward)(em_function_ctx *ctx, int nout, em_tensor *const *grad_out, int nin, em_tensor **grad_in);
    /* Frees the `user` data given to em_function_apply (may be NULL). */
    void (*free_user)(void *user);
} em_function;
#define EM_FUNCTION_MAX_IN 6
#define EM_FUNCTION_MAX_OUT 4
/* Applies f to in[0..nin) (nin <= EM_FUNCTION_MAX_IN); out must have room
 * for EM_FUNCTION_MAX_OUT. Takes ownership of `user`: f->free_user(user) is
 * called exactly once, when the node is freed, or before returning when no
 * node is made or on failure. On failure *nout = 0 and nothing is returned. */
em_status em_function_apply(const em_function *f, void *user, int nin, const em_tensor *const *in, int *nout,
                            em_tensor **out);
/* The ctx API, callable from forward (the save/mark functions) and from
 * backward (the rest). Tensors given are borrowed. */
em_status em_ctx_save_for_backward(em_function_ctx *ctx, int n, const em_tensor *const *tensors);
/* Saved tensor i as a new reference (NULL with an error when it was modified
 * in place since, or freed by an earlier backward); NULL without an error
 * for a saved NULL. */
em_tensor *em_ctx_saved_tensor(em_function_ctx *ctx, int i);
int em_ctx_num_saved(const em_function_ctx *ctx);
void *em_ctx_user(const em_function_ctx *ctx);
bool em_ctx_needs_input_grad(const em_function_ctx *ctx, int i);
/* Input `t` was modified in place by forward and is returned as an output. */
em_status em_ctx_mark_dirty(em_function_ctx *ctx, const em_tensor *t);
/* Output `t` gets no gradient (its grad_out is zeros, or NULL). */
em_status em_ctx_mark_non_differentiable(em_function_ctx *ctx, const em_tensor *t);
void em_ctx_set_materialize_grads(em_function_ctx *ctx, bool materialize);

/* ---- the engine -------------------------------------------------------------- */
/* Accumulates d(sum of tensors[i] * grad_tensors[i]) / d(leaf) into every
 * leaf's .grad (only into `inputs` when ninputs > 0). Counts are >= 0
 * (EM_ERR_VALUE); tensors and inputs hold no NULL. grad_tensors may be
 * NULL, or hold NULL entries, for tensors of one element (the gradient is 1).
 * The graph's saved tensors are freed unless retain_graph; create_graph
 * records the backward pass itself (for higher derivatives). */
em_status em_backward(int n, em_tensor *const *tensors, em_tensor *const *grad_tensors, bool retain_graph,
                      bool create_graph, int ninputs, em_tensor *const *inputs);
/* The gradients of outputs w.r.t. inputs, returned in grads[ninputs] (new
 * references) instead of accumulated into .grad. An input the outputs do not
 * depend on is an error unless allow_unused (then its grad is NULL). */
em_status em_autograd_grad(int noutputs, em_tensor *const *outputs, em_tensor *const *grad_outputs, int ninputs,
                           em_tensor *const *inputs, bool retain_graph, bool create_graph, bool allow_unused,
                           em_tensor **grads);

#ifdef __cplusplus
}
#endif
#endif
