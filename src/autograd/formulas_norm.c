/* Backward formulas of batch_norm, layer_norm and group_norm.
 *
 * Note [Norm backward, once and twice]
 * A plain backward runs the family's fused backward op (one kernel giving the
 * input, weight and bias gradients from the saved mean and 1/std). When the
 * backward is itself recorded (create_graph), the same closed form
 *     gx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)),  gh = G * weight
 * is written with recorded ops instead, with the statistics recomputed from
 * the saved input, so that a second derivative follows them back to x. The
 * statistics outputs (1 and 2) are internal: their incoming gradients are
 * ignored (in eval mode they are constants of the running stats). */
#include "autograd.h"
#include "ember/ember.h"

#define S(v) X(em_scalar_float(v))
#define INPUT(v, i)                                    \
    const em_tensor *v = em_node_input(n, i);          \
    if (!v) return em_error_code()
#define OUTPUT(v, k)                                   \
    const em_tensor *v = em_node_output(n, k);         \
    if (!v) return em_error_code()

static void needs(const em_node *n, bool *mask)
{
    for (int k = 0; k < 3; k++) mask[k] = em_node_needs_grad(n, k);
}

/* gi[0..2] = the fused backward's results (each NULL or a new reference). */
static em_status take(em_status st, em_tensor **g, em_tensor **gi)
{
    if (st) return st;
    for (int k = 0; k < 3; k++) gi[k] = g[k];
    return EM_OK;
}

/* The composite pieces, in recorded ops (Note [Norm backward, once and twice]).
 * xr: x as the statistics see it; dims: the reduced dims of xr. */
typedef struct norm_parts {
    em_tensor *xhat, *rstd; /* arena-owned */
} norm_parts;

static bool batch_stats(em_arena *ar, const em_tensor *x, int nd, const int *dims, double eps, norm_parts *p)
{
    em_tensor *mean = em_arena_add(ar, em_mean(x, nd, dims, true, EM_DTYPE_NONE));
    em_tensor *var = mean ? em_arena_add(ar, em_var(x, nd, dims, 0, true)) : NULL;
    em_tensor *e = em_arena_add(ar, em_scalar_float(eps));
    p->rstd = var && e ? em_arena_add(ar, em_rsqrt(em_arena_add(ar, em_add(var, e, 1)))) : NULL;
    p->xhat = p->rstd ? em_arena_add(ar, em_mul(em_arena_add(ar, em_sub(x, mean, 1)), p->rstd)) : NULL;
    return p->xhat != NULL;
}

/* rstd * (gh - mean(gh) - xhat * mean(gh * xhat)) over dims: a new reference */
static em_tensor *normalized_input_grad(const em_tensor *gh, const norm_parts *p, int nd, const int *dims)
{
    em_arena a = {0};
    em_tensor *m1 = X(em_mean(gh, nd, dims, true, EM_DTYPE_NONE));
    em_tensor *m2 = X(em_mean(X(em_mul(gh, p->xhat)), nd, dims, true, EM_DTYPE_NONE));
    em_tensor *r = X(em_mul(X(em_sub(X(em_sub(gh, m1, 1)), X(em_mul(p->xhat, m2)), 1)), p->rstd));
    em_tensor *out = em_arena_result(&a, r);
    em_arena_end(&a);
    return out;
}

/* sum of t over every dim but `keep` (a bitmask of kept dims): a new reference */
static em_tensor *sum_except(const em_tensor *t, uint32_t keep)
{
    int dims[EM_MAX_DIMS], nd = 0;
    for (int d = 0; d < em_ndim(t); d++)
        if (!(keep >> d & 1)) dims[nd++] = d;
    return nd ? em_sum(t, nd, dims, false, EM_DTYPE_NONE) : em_retain((em_tensor *)t);
}

/* ---- batch norm: inputs {x, weight, bias}, i {N, C, S, training}, f {momentum, eps} */
static em_status batch_norm_recorded(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(w, 1);
    int nd = em_ndim(x), dims[EM_MAX_DIMS], nr = 0;
    int64_t bshape[EM_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        bshape[d] = d == 1 ? em_size(x, 1) : 1;
        if (d != 1) dims[nr++] = d;
    }
    norm_parts p = {0};
    em_tensor *gh = X(em_mul(G, X(em_reshape(w, nd, bshape))));
    if (n->call.i[3]) {
        batch_stats(&a, x, nr, dims, n->call.f[1], &p);
        GRAD(0, X(normalized_input_grad(gh, &p, nr, dims)));
    } else {
        em_tensor *mean = X(em_reshape(X(em_node_unpack_output(n, 1)), nd, bshape));
        p.rstd = X(em_reshape(X(em_node_unpack_output(n, 2)), nd, bshape));
        p.xhat = X(em_mul(X(em_sub(x, mean, 1)), p.rstd));
        GRAD(0, X(em_mul(gh, p.rstd)));
    }
    GRAD(1, X(sum_except(X(em_mul(G, p.xhat)), 2)));
    GRAD(2, X(sum_except(G, 2)));
    DONE();
}

EM_BACKWARD(batch_norm, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_OUT(1) | EM_SAVE_OUT(2) | EM_NONDIFF_OUT(1) | EM_NONDIFF_OUT(2))
{
    if (em_is_grad_enabled()) return batch_norm_recorded(n, go, gi);
    INPUT(x, 0);
    INPUT(w, 1);
    OUTPUT(mean, 1);
    OUTPUT(invstd, 2);
    bool mask[3];
    em_tensor *g[3];
    needs(n, mask);
    return take(em_batch_norm_backward(g, mask, G, x, w, mean, invstd, n->call.i[3]), g, gi);
}

/* ---- layer norm: inputs {x, weight (normalized_shape), bias}, f {eps} */
static em_status layer_norm_recorded(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(w, 1);
    int nd = em_ndim(x), nn = em_ndim(w), dims[EM_MAX_DIMS];
    for (int k = 0; k < nn; k++) dims[k] = nd - nn + k;
    uint32_t normalized = ((1u << nn) - 1) << (nd - nn);
    norm_parts p = {0};
    batch_stats(&a, x, nn, dims, n->call.f[0], &p);
    GRAD(0, X(normalized_input_grad(X(em_mul(G, w)), &p, nn, dims)));
    GRAD(1, X(sum_except(X(em_mul(G, p.xhat)), normalized)));
    GRAD(2, X(sum_except(G, normalized)));
    DONE();
}

EM_BACKWARD(layer_norm, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_OUT(1) | EM_SAVE_OUT(2) | EM_NONDIFF_OUT(1) | EM_NONDIFF_OUT(2))
{
    if (em_is_grad_enabled()) return layer_norm_recorded(n, go, gi);
    INPUT(x, 0);
    INPUT(w, 1);
    OUTPUT(mean, 1);
    OUTPUT(rstd, 2);
    bool mask[3];
    em_tensor *g[3];
    needs(n, mask);
    return take(em_layer_norm_backward(g, mask, G, x, em_ndim(w), em_sizes(w), mean, rstd, w), g, gi);
}

/* ---- group norm: inputs {x (N, C, *), weight (C), bias}, i {R, G, K, S}, f {eps} */
static em_status group_norm_recorded(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    INPUT(x, 0);
    INPUT(w, 1);
    int nd = em_ndim(x), two = 2;
    int64_t groups = n->call.i[1], gshape[3] = {em_size(x, 0), groups, -1}, bshape[EM_MAX_DIMS];
    for (int d = 0; d < nd; d++) bshape[d] = d == 1 ? em_size(x, 1) : 1;
    if (em_size(x, 0) * groups == 0) gshape[2] = 0;
    norm_parts p = {0};
    em_tensor *xr = X(em_reshape(x, 3, gshape));
    if (xr) batch_stats(&a, xr, 1, &two, n->call.f[0], &p);
    em_tensor *gh = X(em_reshape(X(em_mul(G, X(em_reshape(w, nd, bshape)))), 3, gshape));
    if (gh && p.xhat) GRAD(0, X(em_reshape(X(normalized_input_grad(gh, &p, 1, &two)), nd, em_sizes(x))));
    em_tensor *xhat = p.xhat ? X(em_reshape(p.xhat, nd, em_sizes(x))) : NULL;
    GRAD(1, X(sum_except(X(em_mul(G, xhat)), 2)));
    GRAD(2, X(sum_except(G, 2)));
    DONE();
}

EM_BACKWARD(group_norm, EM_SAVE_IN(0) | EM_SAVE_IN(1) | EM_SAVE_OUT(1) | EM_SAVE_OUT(2) | EM_NONDIFF_OUT(1) | EM_NONDIFF_OUT(2))
{
    if (em_is_grad_enabled()) return group_norm_recorded(n, go, gi);
    INPUT(x, 0);
    INPUT(w, 1);
    OUTPUT(mean, 1);
    OUTPUT(rstd, 2);
    bool mask[3];
    em_tensor *g[3];
    needs(n, mask);
    return take(em_group_norm_backward(g, mask, G, x, mean, rstd, w, n->call.i[1]), g, gi);
}
