/* Shape and stride arithmetic: numel, contiguity, broadcasting, dim wrapping,
 * overflow-checked sizes. */
#include "internal.h"

bool em_mul_overflow(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }

int64_t em_shape_numel(int ndim, const int64_t *sizes)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= sizes[i];
    return n;
}

void em_contiguous_strides(int ndim, const int64_t *sizes, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

em_status em_check_sizes(int ndim, const int64_t *sizes, em_dtype dt, const char *op)
{
    if (ndim < 0 || ndim > EM_MAX_DIMS)
        return em_fail(EM_ERR_SHAPE, "%s: %d dims given, at most %d are supported", op, ndim, EM_MAX_DIMS);
    if (!em_dtype_valid(dt)) return em_fail(EM_ERR_DTYPE, "%s: invalid dtype %d", op, (int)dt);
    if (ndim && !sizes) return em_fail(EM_ERR_VALUE, "em_%s: sizes is NULL", op); /* Note [NULL arguments] */
    int64_t bytes = (int64_t)em_dtypes[dt].size;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return em_fail(EM_ERR_SHAPE, "%s: negative dimension %lld in size %s", op,
                           (long long)sizes[i], em_shape_str(ndim, sizes));
        if (em_mul_overflow(bytes, sizes[i], &bytes))
            return em_fail(EM_ERR_MEMORY, "%s: size %s of %s is too large (byte count overflows)", op,
                           em_shape_str(ndim, sizes), em_dtypes[dt].name);
    }
    return EM_OK;
}

em_status em_storage_extent(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset, em_dtype dt,
                            int64_t *nbytes, const char *op)
{
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        if (strides[i] < 0) return em_fail(EM_ERR_VALUE, "%s: negative strides are not supported", op);
        empty |= sizes[i] == 0;
    }
    *nbytes = 0;
    if (empty) return EM_OK;
    int64_t last = offset, span; /* the last element's index */
    for (int i = 0; i < ndim; i++)
        if (em_mul_overflow(sizes[i] - 1, strides[i], &span) || __builtin_add_overflow(last, span, &last))
            return em_fail(EM_ERR_MEMORY, "%s: storage size calculation overflowed with sizes=%s and strides=%s", op,
                           em_shape_str(ndim, sizes), em_shape_str(ndim, strides));
    if (__builtin_add_overflow(last, 1, &last) || em_mul_overflow(last, (int64_t)em_dtypes[dt].size, nbytes))
        return em_fail(EM_ERR_MEMORY, "%s: storage size calculation overflowed with sizes=%s and strides=%s", op,
                       em_shape_str(ndim, sizes), em_shape_str(ndim, strides));
    return EM_OK;
}

bool em_is_contiguous(const em_tensor *t)
{
    if (EM_NULL(t)) return false;
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 1) continue;
        if (t->sizes[i] == 0) return true;
        if (t->strides[i] != expected) return false;
        expected *= t->sizes[i];
    }
    return true;
}

bool em_tensor_is_dense(const em_tensor *t)
{
    /* Sort dims by stride (insertion sort: ndim is small) and check that the
     * strides are exactly the running products of the sizes. */
    int order[EM_MAX_DIMS], n = 0;
    for (int i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == 0) return true;
        if (t->sizes[i] == 1) continue;
        int j = n++;
        while (j > 0 && t->strides[order[j - 1]] > t->strides[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    int64_t expected = 1;
    for (int k = 0; k < n; k++) {
        if (t->strides[order[k]] != expected) return false;
        expected *= t->sizes[order[k]];
    }
    return true;
}

int em_wrap_dim(int dim, int ndim, const char *op)
{
    int n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        em_error(EM_ERR_INDEX, "%s: Dimension out of range (expected to be in range of [%d, %d], but got %d)",
                 op, -n, n - 1, dim);
        return -1;
    }
    return dim < 0 ? dim + n : dim;
}

int em_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int64_t *out, const char *op)
{
    int n = na > nb ? na : nb;
    for (int i = n - 1; i >= 0; i--) { /* backwards: `out` may alias `a` or `b` */
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            em_error(EM_ERR_SHAPE, "%s: shapes %s and %s cannot be broadcast (size %lld vs %lld at dim %d)",
                     op, em_shape_str(na, a), em_shape_str(nb, b), (long long)sa, (long long)sb, i);
            return -1;
        }
        out[i] = sa == 1 ? sb : sa;
    }
    return n;
}
