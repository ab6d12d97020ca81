/* CPU kernels of the shape family's matrix-structure ops: tril / triu,
 * tril_indices / triu_indices, and the diagonal ops (diag, diag_embed,
 * diagflat). */
#include "shape.h"

/* ---- tril / triu --------------------------------------------------------
 * Zeroes, in every matrix (last two dims) of t, the elements tril / triu
 * drops. Only the element size matters: every dtype's zero is all zero bits. */
static void zero_dropped(em_tensor *t, int64_t k, bool upper)
{
    int nd = t->ndim;
    int64_t rows = t->sizes[nd - 2], cols = t->sizes[nd - 1], numel = em_numel(t);
    if (numel == 0) return;
    int64_t es = (int64_t)em_dtypes[t->dtype].size, row_step = t->strides[nd - 2] * es, col_step = t->strides[nd - 1] * es;
    int64_t index[EM_MAX_DIMS] = {0};
    for (int64_t m = 0, count = numel / (rows * cols); m < count; m++) {
        char *base = em_tensor_data(t);
        for (int d = 0; d < nd - 2; d++) base += index[d] * t->strides[d] * es;
        for (int64_t i = 0; i < rows; i++) {
            int64_t keep_lo, keep_hi;
            em_tri_kept_cols(i, k, cols, upper, &keep_lo, &keep_hi);
            /* the dropped columns: [keep_hi, cols) for tril, [0, keep_lo) for triu */
            int64_t lo = upper ? 0 : keep_hi, hi = upper ? keep_lo : cols;
            char *row = base + i * row_step;
            if (col_step == es)
                memset(row + lo * es, 0, (size_t)((hi - lo) * es));
            else
                for (int64_t j = lo; j < hi; j++) memset(row + j * col_step, 0, (size_t)es);
        }
        for (int d = nd - 3; d >= 0 && ++index[d] == t->sizes[d]; d--) index[d] = 0;
    }
}

/* out = tril/triu(in[0]) with diagonal i[0]: a copy (skipped in place),
 * then the dropped elements zeroed. */
static em_status tri(const em_call *c, bool upper)
{
    em_tensor *out = c->out[0];
    if (out != c->in[0]) {
        em_status st = cpu_copy_into(out, c->in[0]);
        if (st) return st;
    }
    zero_dropped(out, c->i[0], upper);
    return EM_OK;
}
em_status cpu_tril(const em_call *c) { return tri(c, false); }
em_status cpu_triu(const em_call *c) { return tri(c, true); }

/* tril_indices / triu_indices: out (2, N), int64 or int32, gets the kept
 * (row, col) pairs of a i[0] x i[1] matrix with diagonal i[2], row-major. */
static em_status tri_indices(const em_call *c, bool upper)
{
    em_tensor *out = c->out[0];
    int64_t rows = c->i[0], cols = c->i[1], k = c->i[2], n = out->sizes[1], at = 0;
    bool wide = out->dtype == EM_I64;
    char *p = em_tensor_data(out);
    /* rows keep a run that shrinks (triu) or grows (tril) with i: start at
     * the first non-empty row and stop when all N are written, so that a
     * huge matrix with a tiny triangle costs only its triangle */
    int64_t i = upper || k >= 0 ? 0 : k <= -rows ? rows : -k;
    for (; i < rows && at < n; i++) {
        int64_t lo, hi;
        em_tri_kept_cols(i, k, cols, upper, &lo, &hi);
        for (int64_t j = lo; j < hi; j++, at++) {
            if (wide) {
                ((int64_t *)p)[at] = i;
                ((int64_t *)p)[n + at] = j;
            } else {
                ((int32_t *)p)[at] = (int32_t)i;
                ((int32_t *)p)[n + at] = (int32_t)j;
            }
        }
    }
    return EM_OK;
}
em_status cpu_tril_indices(const em_call *c) { return tri_indices(c, false); }
em_status cpu_triu_indices(const em_call *c) { return tri_indices(c, true); }

/* ---- diagonals ------------------------------------------------------------
 * out = 0 with x's values on its `offset` diagonal of dims d1, d2. That
 * diagonal (out's other dims, then the diagonal) is viewed as x's shape:
 * the same for diag and diag_embed, the flattening for diagflat. */
static em_status embed_diagonal(em_tensor *out, const em_tensor *x, int64_t offset, int d1, int d2)
{
    em_status st = cpu_zero(out);
    if (st || em_numel(x) == 0) return st;
    em_tensor *diagonal = em_diagonal(out, offset, d1, d2);
    em_tensor *slot = diagonal ? em_view(diagonal, x->ndim, x->sizes) : NULL;
    st = slot ? cpu_copy_into(slot, x) : em_error_code();
    em_release(diagonal);
    em_release(slot);
    return st;
}

/* diag: i[0] = the diagonal; a 1-d x is embedded, a 2-d x's diagonal read. */
em_status cpu_diag(const em_call *c)
{
    em_tensor *out = c->out[0];
    const em_tensor *x = c->in[0];
    if (x->ndim == 1) return embed_diagonal(out, x, c->i[0], 0, 1);
    if (em_numel(out) == 0) return EM_OK; /* also keeps a huge offset away from em_diagonal */
    em_tensor *diagonal = em_diagonal(x, c->i[0], 0, 1);
    em_status st = diagonal ? cpu_copy_into(out, diagonal) : em_error_code();
    em_release(diagonal);
    return st;
}

/* diag_embed: i[0] = offset, i[1], i[2] = the two new dims (wrapped). */
em_status cpu_diag_embed(const em_call *c)
{
    return embed_diagonal(c->out[0], c->in[0], c->i[0], (int)c->i[1], (int)c->i[2]);
}

/* diagflat: i[0] = offset. */
em_status cpu_diagflat(const em_call *c) { return embed_diagonal(c->out[0], c->in[0], c->i[0], 0, 1); }
