/* The op layer of unique and unique_consecutive (flattened or along a dim).
 * The number of groups is known only after the kernel ran: outputs get room
 * for every slice, the kernel reports the count, and they are shrunk to it
 * (src/cpu/sort_unique.c). */
#include "sort_ops.h"

/* A result of n entries that holds g: trimmed in place, or copied when most
 * of its storage would be dead weight. Takes over *t. */
static em_status shrink(em_tensor **t, int ndim, const int64_t *shape, int64_t n, int64_t g)
{
    if (em_resize_(*t, ndim, shape)) return em_error_code();
    if (g * 2 >= n) return EM_OK;
    em_tensor *c = em_clone(*t);
    em_release(*t);
    *t = c;
    return c ? EM_OK : em_error_code();
}

/* The values buffer has dim first; the result has it back in place. */
static em_tensor *dim_back(em_tensor *buf, int dim)
{
    if (dim <= 0) return buf;
    int src = 0;
    em_tensor *moved = em_movedim(buf, 1, &src, &dim), *r = moved ? em_contiguous(moved) : NULL;
    em_release(moved);
    em_release(buf);
    return r;
}

static em_status unique_impl(em_op op, const em_tensor *t, bool has_dim, int dim, em_tensor **values,
                             em_tensor **inverse, em_tensor **counts)
{
    const char *name = em_ops[op].name;
    em_sort_results_init(values, inverse, counts);
    if (!t || !values) return em_fail(EM_ERR_VALUE, "%s: input or values pointer is NULL", name);
    if (t->dtype == EM_F16) return em_fail(EM_ERR_DTYPE, "\"%s\" not implemented for 'float16'", name);
    int64_t n = em_numel(t), shape[EM_MAX_DIMS];
    int ndim = 1;
    if (has_dim) {
        if (t->ndim == 0)
            return em_fail(EM_ERR_INDEX, "%s: Dimension specified as %d but tensor has no dimensions", name, dim);
        if ((dim = em_wrap_dim(dim, t->ndim, name)) < 0) return em_error_code();
        n = t->sizes[dim];
        if (n > 0 && em_numel(t) == 0)
            return em_fail(EM_ERR_RUNTIME, "%s: There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied", name);
        /* the values buffer: t's shape with dim moved first */
        ndim = t->ndim;
        shape[0] = n;
        for (int d = 0, k = 1; d < t->ndim; d++)
            if (d != dim) shape[k++] = t->sizes[d];
    } else {
        shape[0] = n;
    }
    em_device dev = t->storage->device;
    em_tensor *tc = em_contiguous(t), *count = em_tensor_new(0, NULL, EM_I64, dev);
    *values = em_tensor_new(ndim, shape, (em_dtype)t->dtype, dev);
    if (inverse) *inverse = has_dim ? em_tensor_new(1, &n, EM_I64, dev) : em_tensor_new(t->ndim, t->sizes, EM_I64, dev);
    if (counts) *counts = em_tensor_new(1, &n, EM_I64, dev);
    em_status st = EM_ERR_MEMORY;
    double groups = 0;
    if (tc && count && *values && (!inverse || *inverse) && (!counts || *counts)) {
        em_call c = {.op = op, .nin = 1, .nout = 4, .dtype = (em_dtype)t->dtype};
        c.in[0] = tc;
        c.out[0] = *values;
        c.out[1] = inverse ? *inverse : NULL;
        c.out[2] = counts ? *counts : NULL;
        c.out[3] = count;
        c.i[0] = has_dim ? dim : -1;
        st = em_dispatch(&c);
        if (!st) st = em_item(count, &groups);
    }
    em_release(tc);
    em_release(count);
    if (st) return em_sort_results_drop(values, inverse, counts);
    int64_t g = (int64_t)groups;
    shape[0] = g;
    if (shrink(values, ndim, shape, n, g) || (counts && shrink(counts, 1, &g, n, g)) ||
        !(*values = dim_back(*values, has_dim ? dim : 0)))
        return em_sort_results_drop(values, inverse, counts);
    return EM_OK;
}

em_status em_unique(const em_tensor *t, bool sorted, em_tensor **values, em_tensor **inverse, em_tensor **counts)
{
    EM_UNUSED(sorted); /* results are sorted either way */
    return unique_impl(EM_OP_unique, t, false, 0, values, inverse, counts);
}

em_status em_unique_dim(const em_tensor *t, int dim, bool sorted, em_tensor **values, em_tensor **inverse,
                        em_tensor **counts)
{
    EM_UNUSED(sorted);
    return unique_impl(EM_OP_unique, t, true, dim, values, inverse, counts);
}

em_status em_unique_consecutive(const em_tensor *t, em_tensor **values, em_tensor **inverse, em_tensor **counts)
{
    return unique_impl(EM_OP_unique_consecutive, t, false, 0, values, inverse, counts);
}

em_status em_unique_consecutive_dim(const em_tensor *t, int dim, em_tensor **values, em_tensor **inverse,
                                    em_tensor **counts)
{
    return unique_impl(EM_OP_unique_consecutive, t, true, dim, values, inverse, counts);
}
