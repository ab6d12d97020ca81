/* Backward formulas of the shape family (data movement: joins, reordering,
 * repeating, triangles, diagonals, diff), written with Ember ops (DESIGN
 * principle 4). The params they read are the ones the op layer puts in the
 * call's i[] (src/ops/shape*.c); list lengths and repeats come back from
 * the node's input and output geometries. */
#include "autograd.h"
#include "ember/ember.h"

#define P(k) (n->call.i[k])
#define IN_NDIM(i) (n->in_geom[i].ndim)
#define IN_SIZES(i) (n->in_geom[i].sizes)

/* The dims set in a bit mask, in order; returns how many. */
static int dims_of_mask(uint64_t mask, int *dims)
{
    int k = 0;
    for (int d = 0; d < 64; d++)
        if (mask >> d & 1) dims[k++] = d;
    return k;
}

/* ---- reordering ------------------------------------------------------------ */
/* flip, fliplr, flipud: i[0] the mask of flipped dims; flipping back */
static em_status flip_backward(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    int dims[EM_MAX_DIMS], nd = dims_of_mask((uint64_t)P(0), dims);
    GRAD(0, X(em_flip(G, nd, dims)));
    DONE();
}
EM_BACKWARD(flip, 0) { return flip_backward(n, go, gi); }
EM_BACKWARD(fliplr, 0) { return flip_backward(n, go, gi); }
EM_BACKWARD(flipud, 0) { return flip_backward(n, go, gi); }

/* rot90: i = {k, dim0, dim1}; turning back is 4 - k turns */
EM_BACKWARD(rot90, 0)
{
    em_arena a = {0};
    int dims[2] = {(int)P(1), (int)P(2)};
    GRAD(0, X(em_rot90(G, 4 - P(0), 2, dims)));
    DONE();
}

/* roll: i = {flattened, mask of shifted dims, their shifts...}; rolling back */
EM_BACKWARD(roll, 0)
{
    em_arena a = {0};
    int dims[EM_MAX_DIMS], nd = dims_of_mask((uint64_t)P(1), dims);
    int64_t back[EM_MAX_DIMS];
    for (int j = 0; j < nd; j++) back[j] = -P(2 + j);
    if (nd == 0) GRAD(0, G);
    else if (P(0)) GRAD(0, X(em_roll(G, 1, back, 0, NULL)));
    else GRAD(0, X(em_roll(G, nd, back, nd, dims)));
    DONE();
}

/* ---- repeating --------------------------------------------------------------- */
/* repeat, tile: out dim d is r_d copies of x's (padded) dim d; each dim's
 * copies are summed: g viewed as (.., r_d, s_d, ..) summed over r_d. */
static em_status repeat_backward(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    const em_geometry *out = &n->out_geom[0];
    int nd = out->ndim, lead = nd - IN_NDIM(0);
    em_tensor *g = G;
    if (em_numel(g) == 0) {
        GRAD(0, X(em_zeros(IN_NDIM(0), IN_SIZES(0), (em_dtype)g->dtype)));
        DONE();
    }
    int64_t cur[EM_MAX_DIMS + 1];
    memcpy(cur, out->sizes, nd * sizeof *cur);
    for (int d = 0; d < nd; d++) {
        int64_t s = d < lead ? 1 : IN_SIZES(0)[d - lead], r = cur[d] / s;
        if (r == 1) continue;
        int64_t split[EM_MAX_DIMS + 1];
        memcpy(split, cur, d * sizeof *split);
        split[d] = r, split[d + 1] = s;
        memcpy(split + d + 2, cur + d + 1, (nd - d - 1) * sizeof *split);
        g = X(em_sum(X(em_reshape(g, nd + 1, split)), 1, &d, false, EM_DTYPE_NONE));
        cur[d] = s;
        if (!g) break;
    }
    /* the leading dims are 1 now: the input's shape */
    GRAD(0, g ? X(em_reshape(g, IN_NDIM(0), IN_SIZES(0))) : NULL);
    DONE();
}
EM_BACKWARD(repeat, 0) { return repeat_backward(n, go, gi); }
EM_BACKWARD(tile, 0) { return repeat_backward(n, go, gi); }

/* ---- joins ---------------------------------------------------------------------- */
/* cat, hstack, vstack, dstack (their inputs are the atleast_nd views): input
 * k's slice of g along dim i[0]; a skipped 1-d empty input gets an empty one. */
static em_status cat_backward(const em_node *n, em_tensor *const *go, em_tensor **gi)
{
    em_arena a = {0};
    int dim = (int)P(0);
    int64_t at = 0;
    for (int k = 0; k < n->nin; k++) {
        bool skipped = IN_NDIM(k) == 1 && IN_SIZES(k)[0] == 0;
        int64_t len = skipped ? 0 : IN_SIZES(k)[dim];
        if (skipped) GRAD(k, X(em_zeros(1, IN_SIZES(k), (em_dtype)G->dtype)));
        else GRAD(k, X(em_narrow(G, dim, at, len)));
        at += len;
    }
    DONE();
}
EM_BACKWARD(cat, 0) { return cat_backward(n, go, gi); }
EM_BACKWARD(hstack, 0) { return cat_backward(n, go, gi); }
EM_BACKWARD(vstack, 0) { return cat_backward(n, go, gi); }
EM_BACKWARD(dstack, 0) { return cat_backward(n, go, gi); }

/* stack: input k's slice g[.., k, ..] at the new dim i[0] */
EM_BACKWARD(stack, 0)
{
    em_arena a = {0};
    for (int k = 0; k < n->nin; k++) GRAD(k, X(em_select(G, (int)P(0), k)));
    DONE();
}

/* ---- triangles and diagonals ------------------------------------------------------ */
/* tril, triu (i[0]: the diagonal): the kept elements' gradient */
EM_BACKWARD(tril, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_tril(G, P(0))));
    DONE();
}
EM_BACKWARD(triu, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_triu(G, P(0))));
    DONE();
}

/* g placed on diagonal `offset` of a zero (rows, cols) matrix: a put at the
 * diagonal's flat positions (no in-place write into a view, so create_graph
 * records it). */
static em_tensor *embed_in_matrix(em_arena *ap, const em_tensor *g, int64_t rows, int64_t cols, int64_t offset)
{
#define A(e) em_arena_add(ap, (e))
    int64_t len = em_numel(g), start = offset >= 0 ? offset : -offset * cols;
    em_tensor *pos = A(em_arange_int(start, start + len * (cols + 1), cols + 1, EM_I64));
    em_tensor *z = A(em_zeros(2, (const int64_t[]){rows, cols}, (em_dtype)g->dtype));
    return pos && z ? A(em_put(z, pos, g, false)) : NULL;
#undef A
}

/* diag (i[0]: the diagonal): a vector's was embedded (read it back), a
 * matrix's was read (embed the gradient) */
EM_BACKWARD(diag, 0)
{
    em_arena a = {0};
    if (IN_NDIM(0) == 1) GRAD(0, X(em_diagonal(G, P(0), 0, 1)));
    else GRAD(0, embed_in_matrix(&a, G, IN_SIZES(0)[0], IN_SIZES(0)[1], P(0)));
    DONE();
}

/* diag_embed: i = {offset, dim1, dim2}; the diagonal comes back as the last dim */
EM_BACKWARD(diag_embed, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_diagonal(G, P(0), (int)P(1), (int)P(2))));
    DONE();
}

/* diagflat (i[0]: offset): the diagonal, in the input's shape */
EM_BACKWARD(diagflat, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_reshape(X(em_diagonal(G, P(0), 0, 1)), IN_NDIM(0), IN_SIZES(0))));
    DONE();
}

/* ---- diff --------------------------------------------------------------------------- */
/* diff: in = {x, prepend, append} (NULL when absent), i = {order, dim}; x
 * joined with them (J) was differenced `order` times. One difference's
 * adjoint maps g to -(diff of g padded with a zero at both ends); applied
 * `order` times it gives J's gradient, cut back into the three parts. */
EM_BACKWARD(diff, 0)
{
    em_arena a = {0};
    int dim = (int)P(1);
    em_tensor *g = G;
    for (int64_t step = 0; step < P(0) && g; step++) {
        int64_t pad[EM_MAX_DIMS];
        memcpy(pad, g->sizes, g->ndim * sizeof *pad);
        pad[dim] = 1;
        em_tensor *z = X(em_zeros(g->ndim, pad, (em_dtype)g->dtype));
        g = z ? X(em_neg(X(em_diff(g, 1, dim, z, z)))) : NULL;
    }
    /* prepend (input 1), x (input 0), append (input 2) along dim; an absent
     * one (NULL input: no geometry) takes no room */
    static const int order[3] = {1, 0, 2};
    int64_t at = 0;
    for (int j = 0; j < 3 && g; j++) {
        int k = order[j];
        if (n->in_geom[k].ndim == 0) continue;
        int64_t len = n->in_geom[k].sizes[dim];
        GRAD(k, X(em_narrow(g, dim, at, len)));
        at += len;
    }
    if (!g) a.failed = true;
    DONE();
}
