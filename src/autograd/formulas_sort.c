/* Backward formulas of the sort family's selecting ops (sort, topk,
 * kthvalue) and of advanced indexing (index, index_put), written with Ember
 * ops (DESIGN principle 4).
 *
 * sort, topk, kthvalue (src/ops/sort.c): in[0] = x (at least 1-d), out =
 * {indices, values}, i = {dim, p1, p2}; the kernel writes keepdim rows. The
 * int64 indices output has no history and cannot be saved, so the formula
 * recomputes them from the saved x (the kernels are deterministic and
 * stable: the same indices, ties included) and scatters the values'
 * gradient into zeros at them. */
#include "autograd.h"
#include "ember/ember.h"

#define P(k) (n->call.i[k])
#define GV (go[1])

/* The forward's indices, recomputed from x with grad mode off. */
static em_tensor *selected_indices(const em_node *n, const em_tensor *x)
{
    bool grad = em_is_grad_enabled();
    em_set_grad_enabled(false);
    em_tensor *values = NULL, *indices = NULL;
    int dim = (int)P(0);
    switch (n->call.op) {
    case EM_OP_sort: indices = em_argsort(x, dim, P(1), true); break;
    case EM_OP_topk: em_topk(x, P(1), dim, P(2), true, &values, &indices); break;
    default: em_kthvalue(x, P(1), dim, true, &values, &indices); break;
    }
    em_release(values);
    em_set_grad_enabled(grad);
    return indices;
}

static em_status select_backward(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    const em_tensor *x = em_node_input(n, 0);
    if (!x) return em_error_code();
    em_tensor *idx = X(selected_indices(n, x));
    em_tensor *z = X(em_zeros(x->ndim, x->sizes, (em_dtype)GV->dtype));
    GRAD(0, idx && z ? X(em_scatter(z, (int)P(0), idx, GV, NULL)) : NULL);
    DONE();
}
EM_BACKWARD(sort, EM_SAVE_IN(0)) { return select_backward(n, go, gi); }
EM_BACKWARD(topk, EM_SAVE_IN(0)) { return select_backward(n, go, gi); }
EM_BACKWARD(kthvalue, EM_SAVE_IN(0)) { return select_backward(n, go, gi); }

/* ---- advanced indexing (Note [Recorded index calls] in src/ops/index_adv.c) ----
 * index: in = {loop view, self, idx...}; index_put: in = {loop view, self,
 * values, idx...}, i[1] = accumulate; i[0] = the mask of self's indexed dims.
 * The result's gradient is the last output's. */
#define R (go[n->nout - 1])

/* The index list of the forward call (NULL: a full slice) from the saved
 * index tensors starting at input `first`; returns its length, -1 on error. */
static int index_list(const em_node *n, int first, const em_tensor **list)
{
    int len = 0, k = first;
    for (int d = 0; d < EM_MAX_DIMS; d++) {
        if (!(n->call.i[0] >> d & 1)) {
            list[d] = NULL;
            continue;
        }
        if (!(list[d] = em_node_input(n, k++))) return -1;
        len = d + 1;
    }
    return len;
}

EM_BACKWARD(index, EM_SAVE_INPUTS & ~EM_SAVE_IN(0) & ~EM_SAVE_IN(1))
{
    em_arena a = {0};
    const em_tensor *list[EM_MAX_DIMS];
    int len = index_list(n, 2, list);
    if (len < 0) return em_error_code();
    em_tensor *z = X(em_zeros(n->in_geom[1].ndim, n->in_geom[1].sizes, (em_dtype)R->dtype));
    GRAD(1, z ? X(em_index_put(z, len, list, R, true)) : NULL);
    DONE();
}

/* overwritten elements of self get no gradient (accumulated ones do);
 * values get the result's gradient at their places, summed over broadcasting
 * by the engine (and over duplicate indices, as PyTorch) */
EM_BACKWARD(index_put, EM_SAVE_INPUTS & ~EM_SAVE_IN(0) & ~EM_SAVE_IN(1) & ~EM_SAVE_IN(2))
{
    em_arena a = {0};
    const em_tensor *list[EM_MAX_DIMS];
    int len = index_list(n, 3, list);
    if (len < 0) return em_error_code();
    if (n->call.i[1]) GRAD(1, R);
    else GRAD(1, X(em_index_put(R, len, list, X(em_zeros(0, NULL, (em_dtype)R->dtype)), false)));
    GRAD(2, X(em_index(R, len, list)));
    DONE();
}
