/* CPU kernels of the shape family's pure data movement: joining (cat,
 * stack, h/v/dstack, cartesian_prod), meshgrid's views, reordering (flip,
 * rot90, roll) and repeating (repeat, tile); and the copy helpers every
 * shape kernel uses (src/cpu/shape.h).
 *
 * Every kernel here is a few strided copies through the copy kernel, so
 * dtype conversion (out=), threads and vectorized inner loops come from
 * cpu_pointwise_run. Ops that PyTorch composes from others (stack from cat,
 * tile from repeat, rot90 from flip and transpose) run their composition
 * here, behind their own table entry, so autograd will see one node. */
#include "shape.h"

/* ---- helpers (shape.h) ------------------------------------------------- */
em_status cpu_copy_into(em_tensor *dst, const em_tensor *src)
{
    em_call c = {.op = EM_OP_copy, .nin = 1, .nout = 1, .dtype = (em_dtype)dst->dtype};
    c.out[0] = dst;
    c.in[0] = src;
    c.operand_dtypes[0] = c.operand_dtypes[1] = dst->dtype;
    return cpu_copy(&c);
}

em_status cpu_zero(em_tensor *t)
{
    em_call c = {.op = EM_OP_fill, .nout = 1, .dtype = (em_dtype)t->dtype};
    c.out[0] = t;
    c.operand_dtypes[0] = t->dtype;
    return cpu_fill(&c);
}

em_status cpu_copy_strided(em_tensor *dst, const em_tensor *src, int ndim, const int64_t *sizes,
                           const int64_t *dst_strides, int64_t dst_offset, const int64_t *src_strides,
                           int64_t src_offset)
{
    /* views that never leave this function, so negative strides are fine:
     * the copy's iteration only adds coordinate * stride */
    em_tensor *d = em_tensor_view(dst, ndim, sizes, dst_strides, dst_offset);
    em_tensor *s = em_tensor_view(src, ndim, sizes, src_strides, src_offset);
    em_status st = d && s ? cpu_copy_into(d, s) : em_error_code();
    em_release(d);
    em_release(s);
    return st;
}

em_tensor *cpu_contiguous_as(const em_tensor *t, em_dtype dt)
{
    if (em_is_contiguous(t) && t->dtype == dt) return em_retain((em_tensor *)t);
    em_tensor *r = em_tensor_new(t->ndim, t->sizes, dt, t->storage->device);
    if (r && cpu_copy_into(r, t)) {
        em_release(r);
        return NULL;
    }
    return r;
}

em_status cpu_join(em_tensor *out, const em_shape_args *a, int dim, bool stack)
{
    if (em_numel(out) == 0) return EM_OK;
    int64_t at = 0;
    for (int k = 0; k < a->n; k++) {
        const em_tensor *t = a->tensors[k];
        /* With out non-empty, an empty input adds nothing along dim (its zero
         * can only be there), and the legacy 1-d [0] inputs are skipped. */
        if (!stack && em_numel(t) == 0) continue;
        em_tensor *slot = stack ? em_select(out, dim, k) : em_narrow(out, dim, at, t->sizes[dim]);
        em_status st = slot ? cpu_copy_into(slot, t) : em_error_code();
        em_release(slot);
        if (st) return st;
        if (!stack) at += t->sizes[dim];
    }
    return EM_OK;
}

/* ---- joining ------------------------------------------------------------
 * i[0]: the dim; arg: the inputs. hstack, vstack and dstack got their inputs
 * as atleast_1d/2d/3d views and their dim from the op layer. */
#define CPU_JOIN(op, stack) \
    em_status cpu_##op(const em_call *c) { return cpu_join(c->out[0], c->arg, (int)c->i[0], stack); }
CPU_JOIN(cat, false)
CPU_JOIN(hstack, false)
CPU_JOIN(vstack, false)
CPU_JOIN(dstack, false)
CPU_JOIN(stack, true)

/* Input t (0-d or 1-d, its values along grid dim `at`) viewed with the n
 * dims of a grid: size 1 everywhere else. */
static em_tensor *grid_axis_view(const em_tensor *t, int n, int at)
{
    int64_t shape[EM_MAX_DIMS];
    for (int d = 0; d < n; d++) shape[d] = d == at ? em_numel(t) : 1;
    return em_view(t, n, shape);
}

/* meshgrid: results[k] = input k broadcast over the grid (a view, no copy).
 * i[0]: "xy" indexing, which swaps the first two grid dims. */
em_status cpu_meshgrid(const em_call *c)
{
    const em_shape_args *a = c->arg;
    int n = a->n;
    bool xy = c->i[0] && n >= 2;
    int64_t grid[EM_MAX_DIMS];
    for (int k = 0; k < n; k++) grid[xy && k < 2 ? 1 - k : k] = em_numel(a->tensors[k]);
    for (int k = 0; k < n; k++) {
        em_tensor *v = grid_axis_view(a->tensors[k], n, xy && k < 2 ? 1 - k : k);
        a->results[k] = v ? em_expand(v, n, grid) : NULL;
        em_release(v);
        if (!a->results[k]) {
            for (int j = 0; j < k; j++) em_release(a->results[j]), a->results[j] = NULL;
            return em_error_code();
        }
    }
    return EM_OK;
}

/* cartesian_prod: column k of out (N, n), viewed as the grid, is input k
 * broadcast along the other grid dims. */
em_status cpu_cartesian_prod(const em_call *c)
{
    const em_shape_args *a = c->arg;
    em_tensor *out = c->out[0];
    if (em_numel(out) == 0) return EM_OK;
    int64_t grid[EM_MAX_DIMS];
    for (int k = 0; k < a->n; k++) grid[k] = a->tensors[k]->sizes[0];
    for (int k = 0; k < a->n; k++) {
        em_tensor *col = em_select(out, 1, k), *dst = col ? em_view(col, a->n, grid) : NULL;
        em_tensor *src = grid_axis_view(a->tensors[k], a->n, k);
        em_status st = dst && src ? cpu_copy_into(dst, src) : em_error_code();
        em_release(col);
        em_release(dst);
        em_release(src);
        if (st) return st;
    }
    return EM_OK;
}

/* ---- reordering --------------------------------------------------------- */
/* out = x read with its dims reordered (out dim i walks x dim perm[i]) and
 * the out dims in the bit mask `reversed` walked backwards: one copy
 * through a negative-stride view (see cpu_copy_strided). */
static em_status copy_reoriented(em_tensor *out, const em_tensor *x, const int *perm, uint32_t reversed)
{
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS], offset = x->offset;
    for (int i = 0; i < x->ndim; i++) {
        sizes[i] = x->sizes[perm[i]];
        strides[i] = x->strides[perm[i]];
        if (reversed >> i & 1) {
            if (sizes[i] > 0) offset += (sizes[i] - 1) * strides[i];
            strides[i] = -strides[i];
        }
    }
    return cpu_copy_strided(out, x, x->ndim, sizes, out->strides, out->offset, strides, offset);
}

static void identity_perm(int *perm)
{
    for (int i = 0; i < EM_MAX_DIMS; i++) perm[i] = i;
}

/* flip, fliplr, flipud: i[0] is the mask of dims to reverse. */
static em_status flip_dims(const em_call *c)
{
    int perm[EM_MAX_DIMS];
    identity_perm(perm);
    return copy_reoriented(c->out[0], c->in[0], perm, (uint32_t)c->i[0]);
}
em_status cpu_flip(const em_call *c) { return flip_dims(c); }
em_status cpu_fliplr(const em_call *c) { return flip_dims(c); }
em_status cpu_flipud(const em_call *c) { return flip_dims(c); }

/* rot90: i[0] = k in [0, 4), i[1], i[2] = the two dims d0, d1. As PyTorch:
 * k = 1 is x.flip(d1).transpose(d0, d1): out's d0 walks x's d1 backwards;
 * k = 2 is x.flip(d0, d1); k = 3 is x.flip(d0).transpose(d0, d1). */
em_status cpu_rot90(const em_call *c)
{
    int k = (int)c->i[0], d0 = (int)c->i[1], d1 = (int)c->i[2], perm[EM_MAX_DIMS];
    identity_perm(perm);
    if (k % 2) perm[d0] = d1, perm[d1] = d0;
    uint32_t reversed = k == 1 ? 1u << d0 : k == 2 ? (1u << d0) | (1u << d1) : k == 3 ? 1u << d1 : 0;
    return copy_reoriented(c->out[0], c->in[0], perm, reversed);
}

/* x rolled into out (same shape) by shift[d] in [0, size) along each dim.
 * Along a dim of size n rolled by s, out[s:] = x[:n-s] and out[:s] = x[n-s:];
 * each combination of those halves over the rolled dims is one copy. */
static em_status roll_blocks(em_tensor *out, const em_tensor *x, const int64_t *shift)
{
    int rolled[EM_MAX_DIMS], k = 0;
    for (int d = 0; d < x->ndim; d++)
        if (shift[d]) rolled[k++] = d;
    for (uint32_t halves = 0; halves < 1u << k; halves++) {
        int64_t sizes[EM_MAX_DIMS], out_off = out->offset, x_off = x->offset;
        memcpy(sizes, x->sizes, x->ndim * sizeof *sizes);
        for (int j = 0; j < k; j++) {
            int d = rolled[j];
            int64_t n = x->sizes[d], s = shift[d];
            bool head = halves >> j & 1; /* out[:s] = x[n-s:] */
            sizes[d] = head ? s : n - s;
            out_off += (head ? 0 : s) * out->strides[d];
            x_off += (head ? n - s : 0) * x->strides[d];
        }
        em_status st = cpu_copy_strided(out, x, x->ndim, sizes, out->strides, out_off, x->strides, x_off);
        if (st) return st;
    }
    return EM_OK;
}

/* roll: arg->counts = the shift of each dim, normalized; i[0] set: roll the
 * flattened x (out is contiguous; x is read through a contiguous copy if
 * it is not one). */
em_status cpu_roll(const em_call *c)
{
    const em_shape_args *a = c->arg;
    em_tensor *out = c->out[0];
    const em_tensor *x = c->in[0];
    if (!c->i[0]) return roll_blocks(out, x, a->counts);
    int64_t n = em_numel(x);
    em_tensor *xc = cpu_contiguous_as(x, (em_dtype)x->dtype);
    em_tensor *flat_x = xc ? em_view(xc, 1, &n) : NULL, *flat_out = em_view(out, 1, &n);
    em_status st = flat_x && flat_out ? roll_blocks(flat_out, flat_x, a->counts) : em_error_code();
    em_release(xc);
    em_release(flat_x);
    em_release(flat_out);
    return st;
}

/* ---- repeating ----------------------------------------------------------
 * repeat and tile: arg->counts = the repeats of each of out's n dims; x's
 * shape, padded with leading 1s to n dims, times them is out's shape. x is
 * copied into out's corner; then, last dim first, that filled block is
 * doubled along each dim until it spans out there. Each element is written
 * once, and after the last dim the copied rows are whole rows of out (a
 * single copy with stride-0 reads would move short rows of x's last dim). */
static em_status repeat_copy(const em_call *c)
{
    const em_shape_args *a = c->arg;
    em_tensor *out = c->out[0];
    const em_tensor *x = c->in[0];
    int n = a->n, lead = n - x->ndim;
    int64_t filled[EM_MAX_DIMS], x_strides[EM_MAX_DIMS], block[EM_MAX_DIMS];
    if (em_numel(out) == 0) return EM_OK;
    for (int i = 0; i < n; i++) {
        filled[i] = i < lead ? 1 : x->sizes[i - lead];
        x_strides[i] = i < lead ? 0 : x->strides[i - lead];
    }
    em_status st = cpu_copy_strided(out, x, n, filled, out->strides, out->offset, x_strides, x->offset);
    for (int i = n - 1; i >= 0; i--) {
        while (st == EM_OK && filled[i] < out->sizes[i]) {
            memcpy(block, filled, n * sizeof *block);
            block[i] = filled[i] < out->sizes[i] - filled[i] ? filled[i] : out->sizes[i] - filled[i];
            st = cpu_copy_strided(out, out, n, block, out->strides, out->offset + filled[i] * out->strides[i],
                                  out->strides, out->offset);
            filled[i] += block[i];
        }
    }
    return st;
}
em_status cpu_repeat(const em_call *c) { return repeat_copy(c); }
em_status cpu_tile(const em_call *c) { return repeat_copy(c); }

/* ---- diff ----------------------------------------------------------------
 * The loops of one forward difference, out = hi - lo (xor for bool), with
 * integers wrapping as PyTorch's (computed unsigned: no signed overflow). */
#define DIFF_FLOAT(DT) EM_BINARY_LOOP(diff_##DT, em_##DT##_t, em_##DT##_t, a - b)
#define DIFF_INT(DT) EM_BINARY_LOOP(diff_##DT, em_##DT##_t, em_##DT##_t, (em_##DT##_t)((uint64_t)a - (uint64_t)b))
EM_FOR_FLOATS(DIFF_FLOAT)
EM_FOR_INTS(DIFF_INT)
EM_BINARY_LOOP(diff_BOOL, bool, bool, a != b)
#define DIFF_L(DT) L(diff, DT)
static const em_loop_fn diff_loops[EM_DTYPE_COUNT] = {EM_FOR_ALL(DIFF_L)};

/* dst = cur[1:] - cur[:-1] along dim, in c->dtype. */
static em_status diff_step(const em_call *c, em_tensor *dst, const em_tensor *cur, int dim)
{
    int64_t len = cur->sizes[dim] - 1;
    em_tensor *hi = em_narrow(cur, dim, 1, len), *lo = em_narrow(cur, dim, 0, len);
    em_call step = {.op = c->op, .nin = 2, .nout = 1, .dtype = c->dtype,
                    .operand_dtypes = {c->dtype, c->dtype, c->dtype}};
    const em_tensor *ops[] = {dst, hi, lo};
    em_status st = hi && lo ? cpu_pointwise_run(&step, diff_loops, 3, ops, dst->ndim, dst->sizes) : em_error_code();
    em_release(hi);
    em_release(lo);
    return st;
}

/* diff: in[0] = x, in[1] / in[2] = prepend / append (or NULL); i[0] = the
 * order n, i[1] = the dim; c->dtype the promoted dtype. x joined with
 * prepend and append (in c->dtype) is differenced n times, the last time
 * into out. */
em_status cpu_diff(const em_call *c)
{
    em_tensor *out = c->out[0];
    const em_tensor *x = c->in[0];
    int64_t n = c->i[0];
    int dim = (int)c->i[1];
    if (em_numel(out) == 0) return EM_OK;
    if (n == 0) return cpu_copy_into(out, x);
    const em_tensor *parts[3];
    em_shape_args joined = {.tensors = parts};
    int64_t shape[EM_MAX_DIMS];
    memcpy(shape, x->sizes, x->ndim * sizeof *shape);
    shape[dim] = 0;
    const em_tensor *in_order[] = {c->in[1], x, c->in[2]};
    for (int k = 0; k < 3; k++)
        if (in_order[k]) parts[joined.n++] = in_order[k], shape[dim] += in_order[k]->sizes[dim];
    em_tensor *cur;
    if (joined.n == 1 && x->dtype == c->dtype) {
        cur = em_retain((em_tensor *)x);
    } else {
        cur = em_tensor_new(x->ndim, shape, c->dtype, out->storage->device);
        if (cur && cpu_join(cur, &joined, dim, false)) em_release(cur), cur = NULL;
    }
    for (int64_t step = 1; cur && step <= n; step++) {
        shape[dim] = cur->sizes[dim] - 1;
        em_tensor *dst = step == n ? em_retain(out) : em_tensor_new(x->ndim, shape, c->dtype, out->storage->device);
        if (dst && diff_step(c, dst, cur, dim)) em_release(dst), dst = NULL;
        em_release(cur);
        cur = dst;
    }
    if (!cur) return em_error_code();
    em_release(cur);
    return EM_OK;
}
