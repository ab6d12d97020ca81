/* The op layer of the shape family's matrix-structure ops: tril / triu
 * (new, in place, out=), tril_indices / triu_indices, diag, diag_embed,
 * diagflat. */
#include "shape.h"

/* ---- tril / triu ---------------------------------------------------------- */
/* Into a new tensor (out NULL), into out (out=), or in place (out == x).
 * Returns the result (new, or out), NULL on error. */
static em_tensor *tri(em_op op, em_tensor *out, const em_tensor *x, int64_t diagonal)
{
    const char *name = em_ops[op].name;
    if (!x) return em_error(EM_ERR_VALUE, "%s: input is NULL", name);
    /* at least 2 dims, with PyTorch's message for fewer */
    if (em_shape_wrap_dim_strict(-2, x->ndim, name) < 0) return NULL;
    em_dtype dt = (em_dtype)x->dtype;
    em_call c = {.op = op, .nin = 1, .in = {x}, .dtype = dt, .i = {diagonal}};
    if (!out) return em_shape_new(&c, x->ndim, x->sizes, dt);
    if (out != x) return em_shape_out(&c, out, x->ndim, x->sizes, dt, EM_OUT_SAME_DTYPE, false, 1, &x) ? NULL : out;
    if (em_check_overlap(out, NULL, name)) return NULL;
    c.out[0] = out;
    c.nout = 1;
    if (em_dispatch(&c)) return NULL;
    return out;
}

static em_status tri_status(em_op op, em_tensor *out, const em_tensor *x, int64_t diagonal)
{
    if (!out) return em_fail(EM_ERR_VALUE, "%s: out is NULL", em_ops[op].name);
    return tri(op, out, x, diagonal) ? EM_OK : em_error_code();
}

em_tensor *em_tril(const em_tensor *x, int64_t diagonal) { return tri(EM_OP_tril, NULL, x, diagonal); }
em_tensor *em_triu(const em_tensor *x, int64_t diagonal) { return tri(EM_OP_triu, NULL, x, diagonal); }
em_status em_tril_(em_tensor *self, int64_t diagonal) { return tri_status(EM_OP_tril, self, self, diagonal); }
em_status em_triu_(em_tensor *self, int64_t diagonal) { return tri_status(EM_OP_triu, self, self, diagonal); }
em_status em_tril_out(em_tensor *out, const em_tensor *x, int64_t diagonal)
{
    return tri_status(EM_OP_tril, out, x, diagonal);
}
em_status em_triu_out(em_tensor *out, const em_tensor *x, int64_t diagonal)
{
    return tri_status(EM_OP_triu, out, x, diagonal);
}

/* ---- tril_indices / triu_indices -------------------------------------------- */
/* Elements tril keeps in a rows x cols matrix with diagonal k: row i keeps
 * clamp(i + k + 1, 0, cols) of them, which is 0 before row a = -k, grows by
 * one per row up to row b = cols - k - 1, then stays cols. */
static __int128 tril_count(int64_t rows, int64_t cols, __int128 k)
{
    __int128 a = -k < 0 ? 0 : -k > rows ? rows : -k;
    __int128 b = cols - k - 1 < a ? a : cols - k - 1 > rows ? rows : cols - k - 1;
    return (a + k + 1 + b + k) * (b - a) / 2 + (rows - b) * cols;
}

static em_tensor *tri_indices(em_op op, int64_t rows, int64_t cols, int64_t offset, em_dtype dt)
{
    const char *name = em_ops[op].name;
    if (rows < 0) return em_error(EM_ERR_SHAPE, "%s: row must be non-negative, got %lld", name, (long long)rows);
    if (cols < 0) return em_error(EM_ERR_SHAPE, "%s: col must be non-negative, got %lld", name, (long long)cols);
    if (dt != EM_I64 && dt != EM_I32)
        return em_error(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", name, em_dtype_name(dt));
    /* triu with diagonal k keeps what tril with diagonal k - 1 drops */
    __int128 n = op == EM_OP_tril_indices ? tril_count(rows, cols, offset)
                                          : (__int128)rows * cols - tril_count(rows, cols, (__int128)offset - 1);
    if (n > INT64_MAX) return em_error(EM_ERR_MEMORY, "%s: %lld x %lld is too large", name, (long long)rows, (long long)cols);
    int64_t shape[2] = {2, (int64_t)n};
    em_call c = {.op = op, .dtype = dt, .i = {rows, cols, offset}};
    return em_shape_new(&c, 2, shape, dt);
}

em_tensor *em_tril_indices(int64_t row, int64_t col, int64_t offset, em_dtype dt)
{
    return tri_indices(EM_OP_tril_indices, row, col, offset, dt);
}
em_tensor *em_triu_indices(int64_t row, int64_t col, int64_t offset, em_dtype dt)
{
    return tri_indices(EM_OP_triu_indices, row, col, offset, dt);
}

/* ---- diagonals ------------------------------------------------------------------ */
/* n + |offset|: the side of a square matrix with n elements on that diagonal. */
static bool embedded_side(int64_t n, int64_t offset, int64_t *side, const char *op)
{
    if (offset == INT64_MIN || __builtin_add_overflow(n, offset < 0 ? -offset : offset, side)) {
        em_error(EM_ERR_MEMORY, "%s: offset %lld is too large", op, (long long)offset);
        return false;
    }
    return true;
}

static em_tensor *diag(em_tensor *out, const em_tensor *x, int64_t diagonal)
{
    if (!x) return em_error(EM_ERR_VALUE, "diag: input is NULL");
    if (x->ndim != 1 && x->ndim != 2) return em_error(EM_ERR_SHAPE, "diag: matrix or a vector expected");
    int64_t shape[2];
    int nd = 3 - x->ndim;
    if (x->ndim == 1) {
        if (!embedded_side(x->sizes[0], diagonal, &shape[0], "diag")) return NULL;
        shape[1] = shape[0];
    } else { /* the length of that diagonal; 0 when it lies outside (PyTorch errors then) */
        int64_t rows = x->sizes[0], cols = x->sizes[1];
        if (diagonal >= cols || diagonal <= -rows)
            shape[0] = 0;
        else
            shape[0] = diagonal >= 0 ? (rows < cols - diagonal ? rows : cols - diagonal)
                                     : (rows + diagonal < cols ? rows + diagonal : cols);
    }
    em_call c = {.op = EM_OP_diag, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .i = {diagonal}};
    if (!out) return em_shape_new(&c, nd, shape, (em_dtype)x->dtype);
    return em_shape_out(&c, out, nd, shape, (em_dtype)x->dtype, EM_OUT_SAME_DTYPE, false, 1, &x) ? NULL : out;
}

em_tensor *em_diag(const em_tensor *x, int64_t diagonal) { return diag(NULL, x, diagonal); }
em_status em_diag_out(em_tensor *out, const em_tensor *x, int64_t diagonal)
{
    if (!out) return em_fail(EM_ERR_VALUE, "diag: out is NULL");
    return diag(out, x, diagonal) ? EM_OK : em_error_code();
}

em_tensor *em_diag_embed(const em_tensor *x, int64_t offset, int dim1, int dim2)
{
    if (!x) return em_error(EM_ERR_VALUE, "diag_embed: input is NULL");
    int nd = x->ndim + 1;
    if (nd > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "diag_embed: the result would have more than %d dims", EM_MAX_DIMS);
    int d1 = em_wrap_dim(dim1, nd, "diag_embed"), d2 = em_wrap_dim(dim2, nd, "diag_embed");
    if (d1 < 0 || d2 < 0) return NULL;
    if (d1 == d2) return em_error(EM_ERR_SHAPE, "diag_embed: diagonal dimensions cannot be identical %d, %d", dim1, dim2);
    /* x has >= 1 dim here: a 0-d x leaves one dim for both */
    int64_t side, shape[EM_MAX_DIMS];
    if (!embedded_side(x->sizes[x->ndim - 1], offset, &side, "diag_embed")) return NULL;
    for (int i = 0, j = 0; i < nd; i++) shape[i] = i == d1 || i == d2 ? side : x->sizes[j++];
    em_call c = {.op = EM_OP_diag_embed, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .i = {offset, d1, d2}};
    return em_shape_new(&c, nd, shape, (em_dtype)x->dtype);
}

em_tensor *em_diagflat(const em_tensor *x, int64_t offset)
{
    if (!x) return em_error(EM_ERR_VALUE, "diagflat: input is NULL");
    int64_t shape[2];
    if (!embedded_side(em_numel(x), offset, &shape[0], "diagflat")) return NULL;
    shape[1] = shape[0];
    em_call c = {.op = EM_OP_diagflat, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .i = {offset}};
    return em_shape_new(&c, 2, shape, (em_dtype)x->dtype);
}
