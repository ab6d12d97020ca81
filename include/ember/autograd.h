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
/* .grad_fn: borrowed, NULL for leaves. */
em_node *em_grad_fn(const em_tensor *t);
/* A new tensor sharing t's storage, cut from the graph. */
em_tensor *em_detach(const em_tensor *t);

/* ---- graph nodes ---------------------------------------------------------- */
const char *em_node_name(const em_node *n); /* "MulBackward0", "AccumulateGrad" */
int em_node_num_next(const em_node *n);
/* The node that receives input i's gradient (borrowed; NULL when input i
 * does not require grad), and which of its inputs it is. */
em_node *em_node_next(const em_node *n, int i, int *input_nr);

/* ---- hooks ----------------------------------------------------------------- */
/* Called with the gradient flowing into t before it is used; may return a
 * new reference to replace it, or NULL to keep it (an error set by the hook
 * fails the backward). Returns a handle > 0, or -1 on error. */
typedef em_tensor *(*em_grad_hook_fn)(const em_tensor *grad, void *ctx);
int em_register_hook(em_tensor *t, em_grad_hook_fn fn, void *ctx);
em_status em_remove_hook(em_tensor *t, int handle);

/* ---- the engine -------------------------------------------------------------- */
/* Accumulates d(sum of tensors[i] * grad_tensors[i]) / d(leaf) into every
 * leaf's .grad (only into `inputs` when ninputs > 0). grad_tensors may be
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
