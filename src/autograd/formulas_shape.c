/* Backward formulas of the shape family (data movement: joins, reordering,
 * repeating, triangles, diagonals, diff) and of the index and mask ops,
 * written with Ember ops (DESIGN principle 4). The params they read are the
 * ones the op layer puts in the call's i[] and f[] (src/ops/shape*.c,
 * index.c, scatter.c, mask.c); list lengths and repeats come back from the
 * node's input and output geometries. */
#include "autograd.h"
#include "../ops/index_plan.h"
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

/* ---- index ops (Note [Recorded index calls] in src/ops/index_plan.h) --------------
 * in[0] is the loop's private view (no history); in[1] = self, in[2] = the
 * index, in[3] = src / source / value; the result's gradient is the last
 * output's. */
#define R (go[n->nout - 1])
#define INDEX(v)                                       \
    const em_tensor *v = em_node_input(n, 2);          \
    if (!v) return em_error_code()
#define ZEROS_OF(i) X(em_zeros(IN_NDIM(i), IN_SIZES(i), (em_dtype)R->dtype))

/* gather(g, dim, index) grown with zeros to src's shape (the part of src
 * that a scatter reads is index's shape, at src's corner) */
static em_tensor *gathered_for_src(em_arena *ap, const em_node *n, em_tensor *const *go, const em_tensor *index)
{
#define A(e) em_arena_add(ap, (e))
    em_tensor *g = A(em_gather(R, (int)P(0), index));
    for (int d = 0; d < IN_NDIM(3) && g; d++) {
        int64_t missing = IN_SIZES(3)[d] - g->sizes[d], shape[EM_MAX_DIMS];
        if (missing <= 0) continue;
        memcpy(shape, g->sizes, g->ndim * sizeof *shape);
        shape[d] = missing;
        em_tensor *z = A(em_zeros(g->ndim, shape, (em_dtype)g->dtype));
        g = z ? A(em_cat(2, (const em_tensor *[]){g, z}, d)) : NULL;
    }
    return g;
#undef A
}

EM_BACKWARD(gather, EM_SAVE_IN(2))
{
    em_arena a = {0};
    INDEX(index);
    GRAD(1, X(em_scatter_add(ZEROS_OF(1), (int)P(0), index, R)));
    DONE();
}

EM_BACKWARD(index_select, EM_SAVE_IN(2))
{
    em_arena a = {0};
    INDEX(index);
    GRAD(1, X(em_index_add(ZEROS_OF(1), (int)P(0), index, R, 1)));
    DONE();
}

EM_BACKWARD(take, EM_SAVE_IN(2))
{
    em_arena a = {0};
    INDEX(index);
    GRAD(1, X(em_put(ZEROS_OF(1), index, R, true)));
    DONE();
}

/* put (i[0]: accumulate): overwritten elements get no gradient */
EM_BACKWARD(put, EM_SAVE_IN(2))
{
    em_arena a = {0};
    INDEX(index);
    if (P(0)) GRAD(1, R);
    else GRAD(1, X(em_put(R, index, X(em_zeros(index->ndim, index->sizes, (em_dtype)R->dtype)), false)));
    GRAD(3, X(em_reshape(X(em_take(R, index)), IN_NDIM(3), IN_SIZES(3))));
    DONE();
}

/* the scatter family: i[0] = dim, i[1] = 2 * mode + include_self */
static em_status scatter_backward(const em_node *n, em_tensor *const *go, em_tensor **gi, em_index_mode want)
{
    em_index_mode mode = (em_index_mode)(P(1) >> 1);
    bool include_self = P(1) & 1;
    if (mode != want)
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' with this reduction is not implemented",
                       em_ops[n->call.op].name);
    em_arena a = {0};
    INDEX(index);
    /* assigned elements, and summed ones without include_self, drop self's value */
    if (mode == EM_INDEX_ASSIGN || !include_self) GRAD(1, X(em_scatter_value(R, (int)P(0), index, 0, NULL)));
    else GRAD(1, R);
    GRAD(3, gathered_for_src(&a, n, go, index));
    DONE();
}
EM_BACKWARD(scatter, EM_SAVE_IN(2)) { return scatter_backward(n, go, gi, EM_INDEX_ASSIGN); }
EM_BACKWARD(scatter_add, EM_SAVE_IN(2)) { return scatter_backward(n, go, gi, EM_INDEX_SUM); }
EM_BACKWARD(scatter_reduce, EM_SAVE_IN(2)) { return scatter_backward(n, go, gi, EM_INDEX_SUM); }

/* index_add: i[0] = dim, f[0] = alpha */
EM_BACKWARD(index_add, EM_SAVE_IN(2))
{
    em_arena a = {0};
    INDEX(index);
    GRAD(1, R);
    em_tensor *rows = X(em_index_select(R, (int)P(0), index));
    GRAD(3, n->call.f[0] == 1 ? rows : X(em_mul(rows, X(em_scalar_float(n->call.f[0])))));
    DONE();
}

/* index_copy, index_fill: the written rows drop self's value */
EM_BACKWARD(index_copy, EM_SAVE_IN(2))
{
    em_arena a = {0};
    INDEX(index);
    GRAD(1, X(em_index_fill(R, (int)P(0), index, 0)));
    GRAD(3, X(em_index_select(R, (int)P(0), index)));
    DONE();
}
EM_BACKWARD(index_fill, EM_SAVE_IN(2))
{
    em_arena a = {0};
    INDEX(index);
    GRAD(1, X(em_index_fill(R, (int)P(0), index, 0)));
    GRAD(3, X(em_sum(X(em_index_select(R, (int)P(0), index)), 0, NULL, false, EM_DTYPE_NONE)));
    DONE();
}

/* ---- mask ops (Note [Recorded in-place mask ops] in src/ops/mask.c) ------------------
 * masked_fill: in = {mask, value (0-d), self}; masked_scatter: in = {mask
 * (expanded), source (contiguous), self}; masked_select: in = {self
 * (expanded), mask (expanded)}. */
EM_BACKWARD(masked_fill, EM_SAVE_IN(0))
{
    em_arena a = {0};
    const em_tensor *mask = em_node_input(n, 0);
    if (!mask) return em_error_code();
    GRAD(2, X(em_masked_fill(G, mask, 0)));
    GRAD(1, X(em_sum(X(em_mul(G, mask)), 0, NULL, false, EM_DTYPE_NONE)));
    DONE();
}

/* source's first count(mask) elements were written, in order */
EM_BACKWARD(masked_scatter, EM_SAVE_IN(0))
{
    em_arena a = {0};
    const em_tensor *mask = em_node_input(n, 0);
    if (!mask) return em_error_code();
    GRAD(2, X(em_masked_fill(G, mask, 0)));
    if (em_node_needs_grad(n, 1)) {
        em_tensor *used = X(em_masked_select(G, mask));
        int64_t total = em_shape_numel(IN_NDIM(1), IN_SIZES(1)), rest = used ? total - em_numel(used) : 0;
        em_tensor *z = X(em_zeros(1, &rest, (em_dtype)G->dtype));
        em_tensor *flat = used && z ? X(em_cat(2, (const em_tensor *[]){used, z}, 0)) : NULL;
        GRAD(1, flat ? X(em_reshape(flat, IN_NDIM(1), IN_SIZES(1))) : NULL);
    }
    DONE();
}

EM_BACKWARD(masked_select, EM_SAVE_IN(1))
{
    em_arena a = {0};
    const em_tensor *mask = em_node_input(n, 1);
    if (!mask) return em_error_code();
    GRAD(0, X(em_masked_scatter(ZEROS_OF(0), mask, G)));
    DONE();
}

/* fill_ / zero_ overwrite every element: nothing flows to the old values */
EM_BACKWARD(fill, 0)
{
    em_arena a = {0};
    GRAD(0, X(em_zeros_like(G, EM_DTYPE_NONE)));
    DONE();
}
