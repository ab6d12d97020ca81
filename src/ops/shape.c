/* The op layer of the shape family's joining (cat, stack, hstack, vstack,
 * dstack, meshgrid, cartesian_prod), reordering (flip, roll, rot90),
 * repeating (repeat, tile) and diff, and the helpers every file of the
 * family shares (src/ops/shape.h): checks, result shapes and dtypes, out=
 * handling, dispatch. */
#include "shape.h"
#include <stdlib.h>

/* ---- helpers (shape.h) ------------------------------------------------- */
int em_shape_wrap_dim_strict(int dim, int ndim, const char *op)
{
    if (ndim == 0) {
        em_error(EM_ERR_INDEX, "%s: Dimension specified as %d but tensor has no dimensions", op, dim);
        return -1;
    }
    return em_wrap_dim(dim, ndim, op);
}

static em_device call_device(const em_call *c) { return c->nin && c->in[0] ? c->in[0]->storage->device : EM_DEVICE_CPU; }

em_tensor *em_shape_new(em_call *c, int ndim, const int64_t *shape, em_dtype dt)
{
    if (em_check_sizes(ndim, shape, dt, em_ops[c->op].name)) return NULL;
    em_tensor *r = em_tensor_new(ndim, shape, dt, call_device(c));
    if (!r) return NULL;
    c->out[0] = r;
    c->nout = 1;
    if (em_dispatch(c)) {
        em_release(r);
        return NULL;
    }
    return r;
}

em_status em_shape_out(em_call *c, em_tensor *out, int ndim, const int64_t *shape, em_dtype dt,
                       em_out_dtype_rule rule, bool strict, int nin, const em_tensor *const *ins)
{
    const char *op = em_ops[c->op].name;
    if (!out) return em_fail(EM_ERR_VALUE, "%s: out is NULL", op);
    if (em_check_sizes(ndim, shape, dt, op)) return em_error_code();
    if (rule == EM_OUT_SAME_DTYPE && out->dtype != dt)
        return em_fail(EM_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                       em_dtypes[dt].name, em_dtypes[out->dtype].name);
    if (rule == EM_OUT_CAST && !em_can_cast(dt, (em_dtype)out->dtype))
        return em_fail(EM_ERR_DTYPE, "%s: result type %s can't be cast to the desired output type %s", op,
                       em_dtypes[dt].name, em_dtypes[out->dtype].name);
    if (em_check_overlap(out, NULL, op)) return em_error_code();
    for (int k = 0; k < nin; k++) {
        const em_tensor *in = ins[k];
        if (!in) continue;
        if (em_check_overlap(out, in, op)) return em_error_code();
        /* em_check_overlap lets an input that IS out through (elementwise in place) */
        if (strict && in->storage == out->storage && in->offset == out->offset && em_numel(in) && em_numel(out))
            return em_fail(EM_ERR_RUNTIME, "%s: unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() the tensor "
                           "before performing the operation.", op);
    }
    if ((out->ndim != ndim || memcmp(out->sizes, shape, ndim * sizeof *shape)) && em_resize_(out, ndim, shape))
        return em_error_code();
    c->out[0] = out;
    c->nout = 1;
    em_status st = em_dispatch(c);
    return st;
}

/* A list of n tensors: none NULL, all on one device. */
static em_status check_list(int n, const em_tensor *const *ts, const char *op)
{
    for (int k = 0; k < n; k++) {
        if (!ts[k]) return em_fail(EM_ERR_VALUE, "%s: tensor %d of the list is NULL", op, k);
        em_device a = ts[0]->storage->device, b = ts[k]->storage->device;
        if (a.type != b.type || a.index != b.index)
            return em_fail(EM_ERR_DEVICE, "%s: Expected all tensors to be on the same device, but tensor %d is "
                           "on another device than tensor 0", op, k);
    }
    return EM_OK;
}

/* ---- cat and stack -------------------------------------------------------- */
/* PyTorch 1.13's legacy rule: 1-d empty tensors are skipped by cat's checks. */
static bool cat_skipped(const em_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* Checks a cat of the n tensors along *dim (wrapped in place) and computes
 * its (ndim, shape) and dtype (the promotion of all inputs, skipped ones too). */
static em_status cat_shape(int n, const em_tensor *const *ts, int *dim, int *ndim, int64_t *shape, em_dtype *dt,
                           const char *op)
{
    if (n <= 0 || !ts) return em_fail(EM_ERR_RUNTIME, "torch.cat(): expected a non-empty list of Tensors");
    if (check_list(n, ts, op)) return em_error_code();
    const em_tensor *ref = NULL;
    *dt = EM_DTYPE_NONE;
    for (int k = 0; k < n; k++) {
        if (ts[k]->ndim == 0)
            return em_fail(EM_ERR_SHAPE, "%s: zero-dimensional tensor (at position %d) cannot be concatenated", op, k);
        *dt = em_promote_types(*dt, (em_dtype)ts[k]->dtype);
        if (!ref && !cat_skipped(ts[k])) ref = ts[k];
    }
    if (!ref) { /* all skipped: the result is empty, and dim is not checked */
        *ndim = 1;
        shape[0] = 0;
        return EM_OK;
    }
    int d = em_wrap_dim(*dim, ref->ndim, op);
    if (d < 0) return em_error_code();
    memcpy(shape, ref->sizes, ref->ndim * sizeof *shape);
    shape[d] = 0;
    for (int k = 0; k < n; k++) {
        const em_tensor *t = ts[k];
        if (cat_skipped(t)) continue;
        if (t->ndim != ref->ndim)
            return em_fail(EM_ERR_SHAPE, "%s: Tensors must have same number of dimensions: got %d and %d", op,
                           ref->ndim, t->ndim);
        for (int i = 0; i < t->ndim; i++)
            if (i != d && t->sizes[i] != ref->sizes[i])
                return em_fail(EM_ERR_SHAPE, "%s: Sizes of tensors must match except in dimension %d. Expected size "
                               "%lld but got size %lld for tensor number %d in the list.", op, d,
                               (long long)ref->sizes[i], (long long)t->sizes[i], k);
        if (__builtin_add_overflow(shape[d], t->sizes[d], &shape[d]))
            return em_fail(EM_ERR_MEMORY, "%s: the result's size along dim %d overflows", op, d);
    }
    *dim = d;
    *ndim = ref->ndim;
    return EM_OK;
}

/* Checks a stack of the n tensors along the new dim *dim (wrapped in place):
 * equal shapes; the dtype is their promotion. */
static em_status stack_shape(int n, const em_tensor *const *ts, int *dim, int *ndim, int64_t *shape, em_dtype *dt)
{
    if (n <= 0 || !ts) return em_fail(EM_ERR_RUNTIME, "stack expects a non-empty TensorList");
    if (check_list(n, ts, "stack")) return em_error_code();
    const em_tensor *t0 = ts[0];
    if (t0->ndim >= EM_MAX_DIMS) return em_fail(EM_ERR_SHAPE, "stack: at most %d dims", EM_MAX_DIMS);
    int d = em_wrap_dim(*dim, t0->ndim + 1, "stack");
    if (d < 0) return em_error_code();
    *dt = EM_DTYPE_NONE;
    for (int k = 0; k < n; k++) {
        const em_tensor *t = ts[k];
        if (t->ndim != t0->ndim || memcmp(t->sizes, t0->sizes, t0->ndim * sizeof *t0->sizes))
            return em_fail(EM_ERR_SHAPE, "stack expects each tensor to be equal size, but got %s at entry 0 and %s "
                           "at entry %d", em_shape_str(t0->ndim, t0->sizes), em_shape_str(t->ndim, t->sizes), k);
        *dt = em_promote_types(*dt, (em_dtype)t->dtype);
    }
    for (int i = 0, j = 0; i <= t0->ndim; i++) shape[i] = i == d ? n : t0->sizes[j++];
    *dim = d;
    *ndim = t0->ndim + 1;
    return EM_OK;
}

/* Might a call on these tensors be recorded by autograd (grad mode on and
 * one of them has autograd state)? Conservative: a false "yes" only costs
 * the composite path. */
static bool may_record(int n, const em_tensor *const *ts)
{
    if (!em_grad_mode()) return false;
    for (int k = 0; k < n; k++)
        if (ts[k]->autograd) return true;
    return false;
}

static em_tensor *join(em_op op, em_tensor *out, int n, const em_tensor *const *ts, int dim);

/* Note [Recorded joins]
 * The recorder sees only c->in[0..EM_CALL_MAX_IN): a join puts its list
 * there (the kernel still reads it from arg). A longer list that autograd
 * may record is joined as a composite of recorded joins instead: cat of
 * the cats of runs of EM_CALL_MAX_IN tensors (stack: of the unsqueezed
 * tensors), a tree, so each element is copied O(log n) times. */
static em_tensor *join_composite(em_op op, em_tensor *out, int n, const em_tensor *const *ts, int dim)
{
    if (out)
        return em_error(EM_ERR_NOT_IMPLEMENTED, "%s: out= with more than %d tensors that require grad is not "
                        "implemented", em_ops[op].name, EM_CALL_MAX_IN);
    if (op == EM_OP_stack) { /* stack = cat of the tensors unsqueezed at dim (checked first) */
        int64_t shape[EM_MAX_DIMS];
        em_dtype dt;
        int nd, d = dim;
        if (stack_shape(n, ts, &d, &nd, shape, &dt)) return NULL;
        em_tensor **u = calloc((size_t)n, sizeof *u), *r = NULL;
        if (!u) return em_error(EM_ERR_MEMORY, "stack: out of memory");
        int k = 0;
        while (k < n && (u[k] = em_unsqueeze(ts[k], d))) k++;
        if (k == n) r = join(EM_OP_cat, NULL, n, (const em_tensor *const *)u, d);
        for (int i = 0; i < k; i++) em_release(u[i]);
        free(u);
        return r;
    }
    int runs = (n + EM_CALL_MAX_IN - 1) / EM_CALL_MAX_IN, k = 0;
    em_tensor **parts = calloc((size_t)runs, sizeof *parts), *r = NULL;
    if (!parts) return em_error(EM_ERR_MEMORY, "%s: out of memory", em_ops[op].name);
    for (; k < runs; k++) {
        int len = n - k * EM_CALL_MAX_IN < EM_CALL_MAX_IN ? n - k * EM_CALL_MAX_IN : EM_CALL_MAX_IN;
        if (!(parts[k] = join(EM_OP_cat, NULL, len, ts + k * EM_CALL_MAX_IN, dim))) break;
    }
    if (k == runs) r = join(op, NULL, runs, (const em_tensor *const *)parts, dim);
    for (int i = 0; i < k; i++) em_release(parts[i]);
    free(parts);
    return r;
}

/* Runs a join (cat, stack, and h/v/dstack on their atleast_nd views) into
 * a new tensor, or into out when it is not NULL (then returns out). */
static em_tensor *join(em_op op, em_tensor *out, int n, const em_tensor *const *ts, int dim)
{
    int64_t shape[EM_MAX_DIMS];
    em_dtype dt = EM_DTYPE_NONE;
    int nd = 0;
    if (op == EM_OP_stack ? stack_shape(n, ts, &dim, &nd, shape, &dt)
                          : cat_shape(n, ts, &dim, &nd, shape, &dt, em_ops[op].name))
        return NULL;
    if (n > EM_CALL_MAX_IN && may_record(n, ts)) return join_composite(op, out, n, ts, dim);
    em_tensor **plain; /* (the kernel reads ts: Note [Conjugate bit]) */
    if (em_resolve_list(n, ts, &plain)) return NULL;
    if (plain) {
        em_tensor *r = join(op, out, n, (const em_tensor *const *)plain, dim);
        em_release_list(n, plain);
        return r;
    }
    em_shape_args a = {.n = n, .tensors = ts};
    em_call c = {.op = op, .nin = n <= EM_CALL_MAX_IN ? n : 1, .dtype = dt, .i = {dim}, .arg = &a};
    for (int k = 0; k < c.nin; k++) c.in[k] = ts[k];
    if (!out) return em_shape_new(&c, nd, shape, dt);
    return em_shape_out(&c, out, nd, shape, dt, EM_OUT_CAST, true, n, ts) ? NULL : out;
}

/* PyTorch's atleast_1d / 2d / 3d as a view: 0-d -> [1] / [1, 1] / [1, 1, 1],
 * [n] -> [1, n] / [1, n, 1], [m, n] -> [m, n, 1]; more dims are kept. */
static em_tensor *atleast(const em_tensor *t, int nd)
{
    if (t->ndim >= nd) return em_tensor_view(t, t->ndim, t->sizes, t->strides, t->offset);
    int64_t shape[3] = {1, 1, 1};
    if (t->ndim == 1) shape[nd == 1 ? 0 : 1] = t->sizes[0];
    if (t->ndim == 2) shape[0] = t->sizes[0], shape[1] = t->sizes[1];
    return em_view(t, nd, shape);
}

/* hstack, vstack, dstack: cat of the inputs made atleast 1-d / 2-d / 3-d,
 * along dim 1 (0 for 1-d inputs) / 0 / 2. */
static em_tensor *join_atleast(em_op op, em_tensor *out, int n, const em_tensor *const *ts)
{
    const char *name = em_ops[op].name;
    if (n <= 0 || !ts) return em_error(EM_ERR_RUNTIME, "%s expects a non-empty TensorList", name);
    if (check_list(n, ts, name)) return NULL;
    int nd = op == EM_OP_hstack ? 1 : op == EM_OP_vstack ? 2 : 3, k = 0;
    em_tensor **views = calloc((size_t)n, sizeof *views), *r = NULL;
    if (!views) return em_error(EM_ERR_MEMORY, "%s: out of memory", name);
    while (k < n && (views[k] = atleast(ts[k], nd))) k++;
    if (k == n) {
        int dim = op == EM_OP_hstack ? (views[0]->ndim == 1 ? 0 : 1) : op == EM_OP_vstack ? 0 : 2;
        r = join(op, out, n, (const em_tensor *const *)views, dim);
    }
    for (int i = 0; i < k; i++) em_release(views[i]);
    free(views);
    return r;
}

em_tensor *em_cat(int n, const em_tensor *const *ts, int dim) { return join(EM_OP_cat, NULL, n, ts, dim); }
em_tensor *em_stack(int n, const em_tensor *const *ts, int dim) { return join(EM_OP_stack, NULL, n, ts, dim); }
em_tensor *em_hstack(int n, const em_tensor *const *ts) { return join_atleast(EM_OP_hstack, NULL, n, ts); }
em_tensor *em_vstack(int n, const em_tensor *const *ts) { return join_atleast(EM_OP_vstack, NULL, n, ts); }
em_tensor *em_dstack(int n, const em_tensor *const *ts) { return join_atleast(EM_OP_dstack, NULL, n, ts); }

/* The out= forms: join() returns out itself on success. A NULL out would
 * mean "a new tensor" there, so it is refused here. */
static em_status join_into(em_op op, em_tensor *out, int n, const em_tensor *const *ts, int dim)
{
    if (!out) return em_fail(EM_ERR_VALUE, "%s: out is NULL", em_ops[op].name);
    bool plain = op == EM_OP_cat || op == EM_OP_stack;
    return (plain ? join(op, out, n, ts, dim) : join_atleast(op, out, n, ts)) ? EM_OK : em_error_code();
}
em_status em_cat_out(em_tensor *out, int n, const em_tensor *const *ts, int dim)
{
    return join_into(EM_OP_cat, out, n, ts, dim);
}
em_status em_stack_out(em_tensor *out, int n, const em_tensor *const *ts, int dim)
{
    return join_into(EM_OP_stack, out, n, ts, dim);
}
em_status em_hstack_out(em_tensor *out, int n, const em_tensor *const *ts) { return join_into(EM_OP_hstack, out, n, ts, 0); }
em_status em_vstack_out(em_tensor *out, int n, const em_tensor *const *ts) { return join_into(EM_OP_vstack, out, n, ts, 0); }
em_status em_dstack_out(em_tensor *out, int n, const em_tensor *const *ts) { return join_into(EM_OP_dstack, out, n, ts, 0); }

/* ---- grids ------------------------------------------------------------------ */
/* meshgrid's checks, shared by cartesian_prod: a non-empty list of one dtype
 * and device, each tensor 0-d or 1-d, at most EM_MAX_DIMS of them. */
static em_status check_grid(int n, const em_tensor *const *ts, const char *op)
{
    if (n <= 0 || !ts) return em_fail(EM_ERR_RUNTIME, "%s: meshgrid expects a non-empty TensorList", op);
    if (check_list(n, ts, op)) return em_error_code();
    for (int k = 0; k < n; k++)
        if (ts[k]->dtype != ts[0]->dtype)
            return em_fail(EM_ERR_DTYPE, "%s: meshgrid expects all tensors to have the same dtype", op);
    for (int k = 0; k < n; k++)
        if (ts[k]->ndim > 1)
            return em_fail(EM_ERR_SHAPE, "%s: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                           "shape %s", op, em_shape_str(ts[k]->ndim, ts[k]->sizes));
    if (n > EM_MAX_DIMS) return em_fail(EM_ERR_SHAPE, "%s: at most %d tensors (the grid's dims)", op, EM_MAX_DIMS);
    return EM_OK;
}

/* Does autograd record a grid of ts? */
static bool grid_needs_grad(int n, const em_tensor *const *ts)
{
    bool any = false;
    for (int k = 0; k < n; k++) any |= em_requires_grad(ts[k]);
    return any && em_is_grad_enabled();
}

/* meshgrid's views made here, with grad mode on, so they are recorded views
 * of the inputs (the kernel's views, made with grad mode off, would carry no
 * history): input k viewed along its grid axis, expanded to the grid. */
static em_status recorded_grid(int n, const em_tensor *const *ts, bool xy, em_tensor **out)
{
    int64_t grid[EM_MAX_DIMS], axis_shape[EM_MAX_DIMS];
    for (int k = 0; k < n; k++) grid[xy && n >= 2 && k < 2 ? 1 - k : k] = em_numel(ts[k]);
    for (int k = 0; k < n; k++) {
        int at = xy && n >= 2 && k < 2 ? 1 - k : k;
        for (int d = 0; d < n; d++) axis_shape[d] = d == at ? grid[d] : 1;
        em_tensor *v = em_view(ts[k], n, axis_shape);
        out[k] = v ? em_expand(v, n, grid) : NULL;
        em_release(v);
        if (!out[k]) {
            for (int j = 0; j < k; j++) em_release(out[j]), out[j] = NULL;
            return em_error_code();
        }
    }
    return EM_OK;
}

/* cartesian_prod as recorded ops: the flattened ij grids stacked as columns. */
static em_tensor *recorded_cartesian_prod(int n, const em_tensor *const *ts, int64_t rows)
{
    em_tensor *grid[EM_MAX_DIMS] = {0}, *cols[EM_MAX_DIMS] = {0}, *r = NULL;
    if (recorded_grid(n, ts, false, grid)) return NULL;
    bool ok = true;
    for (int k = 0; k < n; k++) ok &= (cols[k] = em_reshape(grid[k], 1, &rows)) != NULL;
    if (ok) r = em_stack(n, (const em_tensor *const *)cols, 1);
    for (int k = 0; k < n; k++) em_release(grid[k]), em_release(cols[k]);
    return r;
}

em_status em_meshgrid(int n, const em_tensor *const *ts, const char *indexing, em_tensor **out)
{
    if (!out) return em_fail(EM_ERR_VALUE, "meshgrid: out is NULL");
    if (check_grid(n, ts, "meshgrid")) return em_error_code();
    if (!indexing) indexing = "ij";
    bool xy = !strcmp(indexing, "xy");
    if (!xy && strcmp(indexing, "ij"))
        return em_fail(EM_ERR_RUNTIME, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s",
                       indexing);
    for (int k = 0; k < n; k++) out[k] = NULL;
    if (grid_needs_grad(n, ts)) return recorded_grid(n, ts, xy, out);
    em_tensor **plain; /* (the kernel reads ts: Note [Conjugate bit]) */
    if (em_resolve_list(n, ts, &plain)) return em_error_code();
    if (plain) {
        em_status st = em_meshgrid(n, (const em_tensor *const *)plain, indexing, out);
        em_release_list(n, plain);
        return st;
    }
    em_shape_args a = {.n = n, .tensors = ts, .results = out};
    em_call c = {.op = EM_OP_meshgrid, .nin = 1, .in = {ts[0]}, .dtype = (em_dtype)ts[0]->dtype, .i = {xy}, .arg = &a};
    return em_dispatch(&c);
}

em_tensor *em_cartesian_prod(int n, const em_tensor *const *ts)
{
    if (EM_NULL_LIST(n, ts)) return NULL;
    for (int k = 0; k < n && ts; k++) {
        if (!ts[k]) return em_error(EM_ERR_VALUE, "cartesian_prod: tensor %d of the list is NULL", k);
        if (ts[k]->ndim != 1)
            return em_error(EM_ERR_SHAPE, "cartesian_prod: Expect a 1D vector, but got shape %s",
                            em_shape_str(ts[k]->ndim, ts[k]->sizes));
    }
    if (n == 1) return em_retain((em_tensor *)ts[0]);
    if (check_grid(n, ts, "cartesian_prod")) return NULL;
    int64_t shape[2] = {1, n};
    for (int k = 0; k < n; k++)
        if (em_mul_overflow(shape[0], ts[k]->sizes[0], &shape[0]))
            return em_error(EM_ERR_MEMORY, "cartesian_prod: the number of combinations overflows");
    if (grid_needs_grad(n, ts)) return recorded_cartesian_prod(n, ts, shape[0]);
    em_tensor **plain; /* (the kernel reads ts: Note [Conjugate bit]) */
    if (em_resolve_list(n, ts, &plain)) return NULL;
    if (plain) {
        em_tensor *r = em_cartesian_prod(n, (const em_tensor *const *)plain);
        em_release_list(n, plain);
        return r;
    }
    em_shape_args a = {.n = n, .tensors = ts};
    em_call c = {.op = EM_OP_cartesian_prod, .nin = 1, .in = {ts[0]}, .dtype = (em_dtype)ts[0]->dtype, .arg = &a};
    return em_shape_new(&c, 2, shape, (em_dtype)ts[0]->dtype);
}

/* ---- reordering ------------------------------------------------------------ */
/* flip family: x copied with the dims of `mask` reversed. */
static em_tensor *flip_mask(em_op op, const em_tensor *x, uint32_t mask)
{
    em_call c = {.op = op, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .i = {mask}};
    return em_shape_new(&c, x->ndim, x->sizes, (em_dtype)x->dtype);
}

em_tensor *em_flip(const em_tensor *x, int ndims, const int *dims)
{
    if (EM_NULL(x) || EM_NULL_N(ndims, dims)) return NULL;
    uint32_t mask = 0;
    for (int i = 0; i < ndims; i++) {
        int d = em_wrap_dim(dims[i], x->ndim, "flip");
        if (d < 0) return NULL;
        if (mask >> d & 1) return em_error(EM_ERR_SHAPE, "flip: dim %d appears multiple times in the list of dims", d);
        mask |= 1u << d;
    }
    return flip_mask(EM_OP_flip, x, mask);
}

em_tensor *em_fliplr(const em_tensor *x)
{
    if (!x) return em_error(EM_ERR_VALUE, "fliplr: input is NULL");
    if (x->ndim < 2) return em_error(EM_ERR_SHAPE, "fliplr: Input must be >= 2-d.");
    return flip_mask(EM_OP_fliplr, x, 1u << 1);
}

em_tensor *em_flipud(const em_tensor *x)
{
    if (!x) return em_error(EM_ERR_VALUE, "flipud: input is NULL");
    if (x->ndim < 1) return em_error(EM_ERR_SHAPE, "flipud: Input must be >= 1-d.");
    return flip_mask(EM_OP_flipud, x, 1u << 0);
}

/* s modulo n (n > 0), in [0, n). */
static int64_t modulo(int64_t s, int64_t n) { return (s % n + n) % n; }

em_tensor *em_roll(const em_tensor *x, int nshifts, const int64_t *shifts, int ndims, const int *dims)
{
    if (EM_NULL(x) || EM_NULL_N(nshifts, shifts) || EM_NULL_N(ndims, dims)) return NULL;
    if (nshifts <= 0) return em_error(EM_ERR_SHAPE, "roll: `shifts` required");
    if (ndims ? ndims != nshifts : nshifts != 1)
        return em_error(EM_ERR_SHAPE, "roll: shifts and dimensions must align. shifts: %d, dims:%d", nshifts, ndims);
    int64_t shift[EM_MAX_DIMS] = {0}, numel = em_numel(x);
    if (!ndims && numel) shift[0] = modulo(shifts[0], numel); /* of the flattened x */
    for (int i = 0; i < ndims; i++) {
        int d = em_shape_wrap_dim_strict(dims[i], x->ndim, "roll");
        if (d < 0) return NULL;
        if (x->sizes[d]) shift[d] = (shift[d] + modulo(shifts[i], x->sizes[d])) % x->sizes[d];
    }
    /* the node keeps i[], not arg: i[1] = the mask of shifted dims, i[2..] their
     * shifts (a flattened roll: dim 0); more shifted dims than fit roll twice */
    enum { FIT = 6 };
    em_shape_args a = {.n = x->ndim, .counts = shift};
    em_call c = {.op = EM_OP_roll, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .i = {!ndims}, .arg = &a};
    int nshifted = 0;
    for (int d = 0; d < x->ndim || (!ndims && d == 0); d++) {
        if (!shift[d]) continue;
        if (nshifted == FIT) { /* roll the first FIT dims, then the rest */
            int64_t first[FIT];
            int dims_first[FIT];
            for (int j = 0, e = 0; j < FIT; e++)
                if (c.i[1] >> e & 1) dims_first[j] = e, first[j++] = shift[e];
            em_tensor *r1 = em_roll(x, FIT, first, FIT, dims_first), *r = NULL;
            int64_t rest[EM_MAX_DIMS];
            int dims_rest[EM_MAX_DIMS], m = 0;
            for (int e = d; e < x->ndim; e++)
                if (shift[e]) dims_rest[m] = e, rest[m++] = shift[e];
            if (r1) r = em_roll(r1, m, rest, m, dims_rest);
            em_release(r1);
            return r;
        }
        c.i[1] |= (int64_t)1 << d;
        c.i[2 + nshifted++] = shift[d];
    }
    return em_shape_new(&c, x->ndim, x->sizes, (em_dtype)x->dtype);
}

em_tensor *em_rot90(const em_tensor *x, int64_t k, int ndims, const int *dims)
{
    if (!x) return em_error(EM_ERR_VALUE, "rot90: input is NULL");
    if (ndims != 2) return em_error(EM_ERR_SHAPE, "rot90: expected total rotation dims == 2, but got dims = %d", ndims);
    int n = x->ndim;
    if (n < 2) return em_error(EM_ERR_SHAPE, "rot90: expected total dims >= 2, but got total dims = %d", n);
    if (dims[0] == dims[1] || llabs((long long)dims[0] - dims[1]) == n)
        return em_error(EM_ERR_SHAPE, "rot90: expected rotation dims to be different, but got dim0 = %d and dim1 = %d",
                        dims[0], dims[1]);
    for (int i = 0; i < 2; i++)
        if (dims[i] < -n || dims[i] >= n)
            return em_error(EM_ERR_SHAPE, "rot90: Rotation dim%d out of range, dim%d = %d", i, i, dims[i]);
    int d0 = em_wrap_dim(dims[0], n, "rot90"), d1 = em_wrap_dim(dims[1], n, "rot90");
    int64_t shape[EM_MAX_DIMS];
    memcpy(shape, x->sizes, n * sizeof *shape);
    k = modulo(k, 4);
    if (k % 2) shape[d0] = x->sizes[d1], shape[d1] = x->sizes[d0];
    em_call c = {.op = EM_OP_rot90, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .i = {k, d0, d1}};
    return em_shape_new(&c, n, shape, (em_dtype)x->dtype);
}

/* ---- repeating ---------------------------------------------------------------- */
/* repeat and tile, once the repeats cover all n >= x->ndim dims of the result. */
static em_tensor *repeat_dims(em_op op, const em_tensor *x, int n, const int64_t *repeats)
{
    const char *name = em_ops[op].name;
    if (n > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "%s: %d repeats given, at most %d dims", name, n, EM_MAX_DIMS);
    int64_t shape[EM_MAX_DIMS];
    for (int i = 0, lead = n - x->ndim; i < n; i++)
        if (em_mul_overflow(repeats[i], i < lead ? 1 : x->sizes[i - lead], &shape[i]))
            return em_error(EM_ERR_MEMORY, "%s: Storage size calculation overflowed with sizes=%s", name,
                            em_shape_str(n, repeats));
    for (int i = 0; i < n; i++)
        if (shape[i] < 0)
            return em_error(EM_ERR_SHAPE, "%s: Trying to create tensor with negative dimension %lld: %s", name,
                            (long long)shape[i], em_shape_str(n, shape));
    em_shape_args a = {.n = n, .counts = repeats};
    em_call c = {.op = op, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .arg = &a};
    return em_shape_new(&c, n, shape, (em_dtype)x->dtype);
}

em_tensor *em_repeat(const em_tensor *x, int n, const int64_t *repeats)
{
    if (EM_NULL(x) || EM_NULL_N(n, repeats)) return NULL;
    if (n < x->ndim)
        return em_error(EM_ERR_SHAPE, "repeat: Number of dimensions of repeat dims can not be smaller than number "
                        "of dimensions of tensor");
    return repeat_dims(EM_OP_repeat, x, n, repeats);
}

em_tensor *em_tile(const em_tensor *x, int n, const int64_t *repeats)
{
    if (EM_NULL(x) || EM_NULL_N(n, repeats)) return NULL;
    if (n < 0 || n > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "tile: %d repeats given, at most %d dims", n, EM_MAX_DIMS);
    int64_t padded[EM_MAX_DIMS];
    int lead = n < x->ndim ? x->ndim - n : 0; /* missing leading repeats are 1 */
    for (int i = 0; i < lead + n; i++) padded[i] = i < lead ? 1 : repeats[i - lead];
    return repeat_dims(EM_OP_tile, x, lead + n, padded);
}

/* ---- diff ----------------------------------------------------------------------- */
/* A complex diff (dt, the promoted dtype): the real diff of view_as_real's
 * (re, im) pairs, along the same (non-negative) dim d. */
static em_tensor *diff_complex(const em_tensor *x, int64_t n, int d, const em_tensor *prepend, const em_tensor *append,
                               em_dtype dt)
{
    const em_tensor *parts[3] = {x, prepend, append};
    em_tensor *wide[3] = {NULL}, *pairs[3] = {NULL}, *r = NULL, *y = NULL;
    bool ok = true;
    for (int k = 0; k < 3 && ok; k++) {
        if (!parts[k]) continue;
        wide[k] = em_to_dtype(parts[k], dt);
        pairs[k] = wide[k] ? em_view_as_real(wide[k]) : NULL;
        ok = pairs[k] != NULL;
    }
    if (ok) r = em_diff(pairs[0], n, d, pairs[1], pairs[2]);
    if (r) y = em_view_as_complex(r);
    for (int k = 0; k < 3; k++) em_release(wide[k]), em_release(pairs[k]);
    em_release(r);
    return y;
}

static em_tensor *diff(em_tensor *out, const em_tensor *x, int64_t n, int dim, const em_tensor *prepend,
                       const em_tensor *append)
{
    if (!x) return em_error(EM_ERR_VALUE, "diff: input is NULL");
    if (x->ndim == 0) return em_error(EM_ERR_SHAPE, "diff expects input to be at least one-dimensional");
    if (n < 0) return em_error(EM_ERR_RUNTIME, "diff: order must be non-negative but got %lld", (long long)n);
    int d = em_wrap_dim(dim, x->ndim, "diff");
    if (d < 0) return NULL;
    const em_tensor *ends[] = {prepend, append};
    for (int k = 0; k < 2; k++) {
        const em_tensor *t = ends[k];
        if (!t) continue;
        if (t->ndim != x->ndim) return em_error(EM_ERR_SHAPE, "diff expects prepend or append to be the same dimension as input");
        for (int i = 0; i < x->ndim; i++)
            if (i != d && t->sizes[i] != x->sizes[i])
                return em_error(EM_ERR_SHAPE, "diff expects the shape of tensor to prepend or append to match that of "
                                "input except along the differencing dimension; input.size(%d) = %lld, but got "
                                "tensor.size(%d) = %lld", i, (long long)x->sizes[i], i, (long long)t->sizes[i]);
    }
    if (n == 0) prepend = append = NULL; /* order 0 is x itself, unjoined (PyTorch, NumPy) */
    em_dtype dt = (em_dtype)x->dtype;
    int64_t shape[EM_MAX_DIMS];
    memcpy(shape, x->sizes, x->ndim * sizeof *shape);
    for (int k = 0; k < 2; k++) {
        const em_tensor *t = k ? append : prepend;
        if (!t) continue;
        dt = em_promote_types(dt, (em_dtype)t->dtype);
        if (__builtin_add_overflow(shape[d], t->sizes[d], &shape[d]))
            return em_error(EM_ERR_MEMORY, "diff: the joined size along dim %d overflows", d);
    }
    if (n > shape[d]) n = shape[d];
    shape[d] -= n;
    if (em_dtype_is_complex(dt)) {
        em_tensor *y = diff_complex(x, n, d, prepend, append, dt);
        if (!y || !out) return y;
        em_status st = em_can_cast(dt, (em_dtype)out->dtype) ? EM_OK
                       : em_fail(EM_ERR_DTYPE, "diff: result type %s can't be cast to the desired output type %s",
                                 em_dtypes[dt].name, em_dtypes[out->dtype].name);
        if (!st && (out->ndim != y->ndim || memcmp(out->sizes, y->sizes, y->ndim * sizeof *y->sizes)))
            st = em_resize_(out, y->ndim, y->sizes);
        if (!st) st = em_copy_(out, y);
        em_release(y);
        return st ? NULL : out;
    }
    em_call c = {.op = EM_OP_diff, .nin = 3, .in = {x, prepend, append}, .dtype = dt, .i = {n, d}};
    if (!out) return em_shape_new(&c, x->ndim, shape, dt);
    return em_shape_out(&c, out, x->ndim, shape, dt, EM_OUT_CAST, true, 3, c.in) ? NULL : out;
}

em_tensor *em_diff(const em_tensor *x, int64_t n, int dim, const em_tensor *prepend, const em_tensor *append)
{
    return diff(NULL, x, n, dim, prepend, append);
}

em_status em_diff_out(em_tensor *out, const em_tensor *x, int64_t n, int dim, const em_tensor *prepend,
                      const em_tensor *append)
{
    if (!out) return em_fail(EM_ERR_VALUE, "diff: out is NULL");
    return diff(out, x, n, dim, prepend, append) ? EM_OK : em_error_code();
}
