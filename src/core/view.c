/* Views: tensors that share their input's storage with new sizes, strides
 * and offset. Nothing here copies data (reshape/flatten, which may, live in
 * src/ops/copy.c). */
#include "internal.h"

/* PyTorch's computeStride: strides for viewing (sizes, strides) as `nsizes`
 * without a copy, or false when the memory layout does not allow it. */
static bool view_strides(int ndim, const int64_t *sizes, const int64_t *strides, int nn, const int64_t *nsizes,
                         int64_t *nstrides)
{
    if (ndim == 0 || em_shape_numel(ndim, sizes) == 0) {
        em_contiguous_strides(nn, nsizes, nstrides);
        if (ndim == 0) return true;
        return true;
    }
    int view_d = nn - 1;
    int64_t chunk_base_stride = strides[ndim - 1], tensor_numel = 1, view_numel = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        tensor_numel *= sizes[d];
        if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || nsizes[view_d] == 1)) {
                nstrides[view_d] = view_numel * chunk_base_stride;
                view_numel *= nsizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return false;
            if (d > 0) {
                chunk_base_stride = strides[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* Resolve one -1 in `sizes` against numel; writes the result to `out`. */
int em_infer_size(int n, const int64_t *sizes, int64_t numel, int64_t *out, const char *op)
{
    int infer = -1;
    int64_t prod = 1;
    for (int i = 0; i < n; i++) {
        if (sizes[i] == -1) {
            if (infer >= 0) return em_fail(EM_ERR_SHAPE, "%s: only one dimension can be inferred", op);
            infer = i;
        } else if (sizes[i] < 0) {
            return em_fail(EM_ERR_SHAPE, "%s: invalid shape dimension %lld", op, (long long)sizes[i]);
        } else if (em_mul_overflow(prod, sizes[i], &prod)) {
            return em_fail(EM_ERR_SHAPE, "%s: shape %s is too large", op, em_shape_str(n, sizes));
        }
        out[i] = sizes[i];
    }
    if (infer >= 0) {
        if (prod == 0)
            return em_fail(EM_ERR_SHAPE, "%s: cannot reshape tensor of %lld elements into shape %s because the "
                           "unspecified dimension size -1 can be any value and is ambiguous",
                           op, (long long)numel, em_shape_str(n, sizes));
        out[infer] = numel / prod;
        prod *= out[infer];
    }
    if (prod != numel)
        return em_fail(EM_ERR_SHAPE, "%s: shape '%s' is invalid for input of size %lld", op, em_shape_str(n, sizes),
                       (long long)numel);
    return EM_OK;
}

/* Views of the same geometry rules as their base; returns NULL on bad input. */
bool em_view_possible(const em_tensor *t, int n, const int64_t *sizes, int64_t *strides)
{
    return view_strides(t->ndim, t->sizes, t->strides, n, sizes, strides);
}

em_tensor *em_view(const em_tensor *t, int ndim, const int64_t *sizes)
{
    if (EM_NULL(t) || EM_NULL_N(ndim, sizes)) return NULL;
    int64_t ns[EM_MAX_DIMS], st[EM_MAX_DIMS];
    if (ndim < 0 || ndim > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "view: too many dims (%d)", ndim);
    if (em_infer_size(ndim, sizes, em_numel(t), ns, "view")) return NULL;
    if (!view_strides(t->ndim, t->sizes, t->strides, ndim, ns, st))
        return em_error(EM_ERR_SHAPE, "view size is not compatible with input tensor's size and stride (at least one "
                        "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
    return em_tensor_view(t, ndim, ns, st, t->offset);
}

em_tensor *em_as_strided(const em_tensor *t, int ndim, const int64_t *sizes, const int64_t *strides,
                         int64_t storage_offset)
{
    if (EM_NULL(t) || EM_NULL_N(ndim, sizes) || EM_NULL_N(ndim, strides)) return NULL;
    if (em_check_sizes(ndim, sizes, (em_dtype)t->dtype, "as_strided")) return NULL;
    if (storage_offset < 0) return em_error(EM_ERR_VALUE, "as_strided: negative storage offset %lld", (long long)storage_offset);
    int64_t bytes;
    if (em_storage_extent(ndim, sizes, strides, storage_offset, (em_dtype)t->dtype, &bytes, "as_strided")) return NULL;
    if (bytes > (int64_t)t->storage->nbytes)
        return em_error(EM_ERR_SHAPE, "as_strided: setStorage: sizes %s, strides %s, storage offset %lld require "
                        "%lld bytes, but the storage has %zu", em_shape_str(ndim, sizes), em_shape_str(ndim, strides),
                        (long long)storage_offset, (long long)bytes, t->storage->nbytes);
    return em_tensor_view(t, ndim, sizes, strides, storage_offset);
}

em_status em_set_(em_tensor *t, const em_tensor *src)
{
    if (EM_NULL(t) || EM_NULL(src)) return EM_ERR_VALUE;
    if (t->dtype != src->dtype)
        return em_fail(EM_ERR_RUNTIME, "set_: expected source of dtype %s, got %s", em_dtypes[t->dtype].name,
                       em_dtypes[src->dtype].name);
    if (t == src) return EM_OK;
    if (src->storage != t->storage) {
        /* t's base (if any) keeps the old storage: em_view_root then takes t as a root */
        __atomic_add_fetch(&src->storage->refcount, 1, __ATOMIC_RELAXED);
        em_storage_release(t->storage);
        t->storage = src->storage;
    }
    t->offset = src->offset;
    t->ndim = src->ndim;
    memcpy(t->sizes, src->sizes, src->ndim * sizeof *src->sizes);
    memcpy(t->strides, src->strides, src->ndim * sizeof *src->strides);
    return EM_OK;
}

em_tensor *em_permute(const em_tensor *t, const int *dims)
{
    if (EM_NULL(t) || EM_NULL_N(t->ndim, dims)) return NULL;
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    bool seen[EM_MAX_DIMS] = {0};
    for (int i = 0; i < t->ndim; i++) {
        int d = em_wrap_dim(dims[i], t->ndim, "permute");
        if (d < 0) return NULL;
        if (seen[d]) return em_error(EM_ERR_SHAPE, "permute: repeated dim %d in dims", d);
        seen[d] = true;
        sz[i] = t->sizes[d];
        st[i] = t->strides[d];
    }
    return em_tensor_view(t, t->ndim, sz, st, t->offset);
}

em_tensor *em_transpose(const em_tensor *t, int dim0, int dim1)
{
    if (EM_NULL(t)) return NULL;
    int a = em_wrap_dim(dim0, t->ndim, "transpose"), b = em_wrap_dim(dim1, t->ndim, "transpose");
    if (a < 0 || b < 0) return NULL;
    if (t->ndim == 0) return em_tensor_view(t, 0, NULL, NULL, t->offset);
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    memcpy(sz, t->sizes, sizeof sz);
    memcpy(st, t->strides, sizeof st);
    sz[a] = t->sizes[b], sz[b] = t->sizes[a];
    st[a] = t->strides[b], st[b] = t->strides[a];
    return em_tensor_view(t, t->ndim, sz, st, t->offset);
}

em_tensor *em_t(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    if (t->ndim > 2) return em_error(EM_ERR_SHAPE, "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
    return t->ndim < 2 ? em_tensor_view(t, t->ndim, t->sizes, t->strides, t->offset) : em_transpose(t, 0, 1);
}

em_tensor *em_expand(const em_tensor *t, int ndim, const int64_t *sizes)
{
    if (EM_NULL(t) || EM_NULL_N(ndim, sizes)) return NULL;
    if (ndim < t->ndim)
        return em_error(EM_ERR_SHAPE, "expand: the number of sizes provided (%d) must be greater or equal to the "
                        "number of dimensions in the tensor (%d)", ndim, t->ndim);
    if (ndim > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "expand: too many dims (%d)", ndim);
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - (ndim - t->ndim);
        int64_t have = j >= 0 ? t->sizes[j] : 1, want = sizes[i];
        if (j < 0 && want < 0)
            return em_error(EM_ERR_SHAPE, "expand: -1 is not allowed in a leading, non-existing dimension %d", i);
        if (want == -1) want = have;
        if (want < 0) return em_error(EM_ERR_SHAPE, "expand: invalid size %lld", (long long)want);
        if (have == want) {
            sz[i] = have;
            st[i] = j >= 0 ? t->strides[j] : 0;
        } else if (have == 1) {
            sz[i] = want;
            st[i] = 0;
        } else {
            return em_error(EM_ERR_SHAPE, "The expanded size of the tensor (%lld) must match the existing size "
                            "(%lld) at non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                            (long long)want, (long long)have, i, em_shape_str(ndim, sizes),
                            em_shape_str(t->ndim, t->sizes));
        }
    }
    int64_t numel = 1; /* stride 0 takes no memory, but the element count must fit */
    for (int i = 0; i < ndim; i++)
        if (em_mul_overflow(numel, sz[i], &numel))
            return em_error(EM_ERR_MEMORY, "expand: numel: integer multiplication overflow (sizes %s)",
                            em_shape_str(ndim, sz));
    return em_tensor_view(t, ndim, sz, st, t->offset);
}

em_tensor *em_expand_as(const em_tensor *t, const em_tensor *other)
{
    if (EM_NULL(t) || EM_NULL(other)) return NULL;
    return em_expand(t, other->ndim, other->sizes);
}

em_tensor *em_slice(const em_tensor *t, int dim, int64_t start, int64_t end, int64_t step)
{
    if (EM_NULL(t)) return NULL;
    if (t->ndim == 0) return em_error(EM_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
    int d = em_wrap_dim(dim, t->ndim, "slice");
    if (d < 0) return NULL;
    if (step <= 0) return em_error(EM_ERR_VALUE, "slice step must be positive");
    int64_t n = t->sizes[d];
    if (start < 0) start += n;
    if (end < 0) end += n;
    start = start < 0 ? 0 : start > n ? n : start;
    end = end < start ? start : end > n ? n : end;
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    memcpy(sz, t->sizes, sizeof sz);
    memcpy(st, t->strides, sizeof st);
    sz[d] = (end - start + step - 1) / step;
    st[d] = t->strides[d] * step;
    return em_tensor_view(t, t->ndim, sz, st, t->offset + start * t->strides[d]);
}

em_tensor *em_narrow(const em_tensor *t, int dim, int64_t start, int64_t length)
{
    if (EM_NULL(t)) return NULL;
    if (t->ndim == 0) return em_error(EM_ERR_INDEX, "narrow() cannot be applied to a 0-dim tensor.");
    int d = em_wrap_dim(dim, t->ndim, "narrow");
    if (d < 0) return NULL;
    int64_t n = t->sizes[d];
    if (start < -n || start > n)
        return em_error(EM_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                        (long long)-n, (long long)n, (long long)start);
    if (start < 0) start += n;
    if (length < 0 || start > n - length)
        return em_error(EM_ERR_SHAPE, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                        (long long)start, (long long)length, (long long)n);
    return em_slice(t, d, start, start + length, 1);
}

em_tensor *em_select(const em_tensor *t, int dim, int64_t index)
{
    if (EM_NULL(t)) return NULL;
    if (t->ndim == 0) return em_error(EM_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.");
    int d = em_wrap_dim(dim, t->ndim, "select");
    if (d < 0) return NULL;
    int64_t n = t->sizes[d];
    if (index < -n || index >= n)
        return em_error(EM_ERR_INDEX, "select(): index %lld out of range for tensor of size %s at dimension %d",
                        (long long)index, em_shape_str(t->ndim, t->sizes), d);
    if (index < 0) index += n;
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    for (int i = 0, j = 0; i < t->ndim; i++)
        if (i != d) sz[j] = t->sizes[i], st[j++] = t->strides[i];
    return em_tensor_view(t, t->ndim - 1, sz, st, t->offset + index * t->strides[d]);
}

static em_tensor *squeeze_mask(const em_tensor *t, const bool *drop)
{
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++)
        if (!drop[i]) sz[n] = t->sizes[i], st[n++] = t->strides[i];
    return em_tensor_view(t, n, sz, st, t->offset);
}

em_tensor *em_squeeze(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    bool drop[EM_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) drop[i] = t->sizes[i] == 1;
    return squeeze_mask(t, drop);
}

em_tensor *em_squeeze_dim(const em_tensor *t, int dim)
{
    if (EM_NULL(t)) return NULL;
    int d = em_wrap_dim(dim, t->ndim, "squeeze");
    if (d < 0) return NULL;
    bool drop[EM_MAX_DIMS] = {0};
    if (t->ndim) drop[d] = t->sizes[d] == 1;
    return squeeze_mask(t, drop);
}

em_tensor *em_unsqueeze(const em_tensor *t, int dim)
{
    if (EM_NULL(t)) return NULL;
    int d = em_wrap_dim(dim, t->ndim + 1, "unsqueeze");
    if (d < 0) return NULL;
    if (t->ndim >= EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "unsqueeze: at most %d dims", EM_MAX_DIMS);
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    for (int i = 0, j = 0; i <= t->ndim; i++) {
        if (i == d) {
            sz[i] = 1;
            st[i] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        } else {
            sz[i] = t->sizes[j];
            st[i] = t->strides[j++];
        }
    }
    return em_tensor_view(t, t->ndim + 1, sz, st, t->offset);
}

em_tensor *em_unflatten(const em_tensor *t, int dim, int nsizes, const int64_t *sizes)
{
    if (EM_NULL(t) || EM_NULL_N(nsizes, sizes)) return NULL;
    int d = em_wrap_dim(dim, t->ndim, "unflatten");
    if (d < 0) return NULL;
    if (t->ndim == 0) return em_error(EM_ERR_INDEX, "unflatten: cannot unflatten a 0-dim tensor");
    if (nsizes == 0) return em_error(EM_ERR_SHAPE, "unflatten: sizes must be non-empty");
    if (t->ndim - 1 + nsizes > EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "unflatten: too many dims");
    int64_t inner[EM_MAX_DIMS], shape[EM_MAX_DIMS];
    if (em_infer_size(nsizes, sizes, t->sizes[d], inner, "unflatten")) return NULL;
    int n = 0;
    for (int i = 0; i < d; i++) shape[n++] = t->sizes[i];
    for (int i = 0; i < nsizes; i++) shape[n++] = inner[i];
    for (int i = d + 1; i < t->ndim; i++) shape[n++] = t->sizes[i];
    return em_view(t, n, shape);
}

em_tensor *em_movedim(const em_tensor *t, int nsrc, const int *src, const int *dst)
{
    if (EM_NULL(t) || EM_NULL_N(nsrc, src) || EM_NULL_N(nsrc, dst)) return NULL;
    int perm[EM_MAX_DIMS], n = t->ndim;
    bool used_src[EM_MAX_DIMS] = {0}, used_dst[EM_MAX_DIMS] = {0};
    if (nsrc < 0 || nsrc > n) return em_error(EM_ERR_SHAPE, "movedim: Invalid source or destination dims");
    for (int i = 0; i < n; i++) perm[i] = -1;
    for (int i = 0; i < nsrc; i++) {
        int s = em_wrap_dim(src[i], n, "movedim"), d = em_wrap_dim(dst[i], n, "movedim");
        if (s < 0 || d < 0) return NULL;
        if (used_src[s] || used_dst[d]) return em_error(EM_ERR_SHAPE, "movedim: repeated dim in source or destination");
        used_src[s] = used_dst[d] = true;
        perm[d] = s;
    }
    for (int i = 0, s = 0; i < n; i++) { /* the rest keep their relative order */
        if (perm[i] >= 0) continue;
        while (used_src[s]) s++;
        perm[i] = s++;
    }
    return em_permute(t, perm);
}

em_tensor *em_diagonal(const em_tensor *t, int64_t offset, int dim1, int dim2)
{
    if (EM_NULL(t)) return NULL;
    if (t->ndim < 2) return em_error(EM_ERR_SHAPE, "diagonal: expected a tensor with at least 2 dims, got %d", t->ndim);
    int a = em_wrap_dim(dim1, t->ndim, "diagonal"), b = em_wrap_dim(dim2, t->ndim, "diagonal");
    if (a < 0 || b < 0) return NULL;
    if (a == b) return em_error(EM_ERR_SHAPE, "diagonal dimensions cannot be identical %d, %d", dim1, dim2);
    int64_t start = t->offset, len;
    if (offset >= 0) {
        len = t->sizes[b] - offset;
        if (len > t->sizes[a]) len = t->sizes[a];
        start += offset * t->strides[b];
    } else {
        len = t->sizes[a] + offset;
        if (len > t->sizes[b]) len = t->sizes[b];
        start -= offset * t->strides[a];
    }
    if (len <= 0) {
        len = 0;
        start = t->offset;
    }
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != a && i != b) sz[n] = t->sizes[i], st[n++] = t->strides[i];
    sz[n] = len;
    st[n++] = t->strides[a] + t->strides[b];
    return em_tensor_view(t, n, sz, st, start);
}

em_tensor *em_unfold(const em_tensor *t, int dim, int64_t size, int64_t step)
{
    if (EM_NULL(t)) return NULL;
    int d = em_wrap_dim(dim, t->ndim, "unfold");
    if (d < 0) return NULL;
    int64_t n = t->ndim ? t->sizes[d] : 1, s = t->ndim ? t->strides[d] : 1;
    if (t->ndim >= EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "unfold: too many dims");
    if (size < 0 || size > n)
        return em_error(EM_ERR_SHAPE, "maximum size for tensor at dimension %d is %lld but size is %lld", d,
                        (long long)n, (long long)size);
    if (step <= 0) return em_error(EM_ERR_SHAPE, "step is %lld but must be > 0", (long long)step);
    if (t->ndim == 0) /* PyTorch: a 0-d t unfolds to (size,), no window dim */
        return em_tensor_view(t, 1, (const int64_t[]){size}, (const int64_t[]){1}, t->offset);
    int64_t sz[EM_MAX_DIMS], st[EM_MAX_DIMS];
    memcpy(sz, t->sizes, sizeof sz);
    memcpy(st, t->strides, sizeof st);
    int nd = t->ndim;
    sz[d] = (n - size) / step + 1;
    st[d] = step * s;
    sz[nd] = size;
    st[nd] = s;
    return em_tensor_view(t, nd + 1, sz, st, t->offset);
}

/* ---- split family ----------------------------------------------------- */
static void release_all(em_tensor **out, int n)
{
    for (int i = 0; i < n; i++) em_release(out[i]), out[i] = NULL;
}

int em_split_sizes(const em_tensor *t, int nsizes, const int64_t *sizes, int dim, em_tensor **out)
{
    if (EM_NULL(t) || EM_NULL_N(nsizes, sizes) || EM_NULL(out)) return em_error_code();
    if (t->ndim == 0) return em_fail(EM_ERR_SHAPE, "split expects at least a 1-dimensional tensor");
    int d = em_wrap_dim(dim, t->ndim, "split");
    if (d < 0) return em_error_code();
    int64_t total = 0;
    for (int i = 0; i < nsizes; i++) {
        if (sizes[i] < 0) return em_fail(EM_ERR_SHAPE, "split_with_sizes expects split_sizes have only non-negative entries");
        total += sizes[i];
    }
    if (total != t->sizes[d])
        return em_fail(EM_ERR_SHAPE, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's "
                       "size at dimension %d), but got split_sizes=%s", (long long)t->sizes[d], d,
                       em_shape_str(nsizes, sizes));
    int64_t start = 0;
    for (int i = 0; i < nsizes; i++) {
        if (!(out[i] = em_narrow(t, d, start, sizes[i]))) {
            release_all(out, i);
            return em_error_code();
        }
        out[i]->flags |= EM_FLAG_MULTI_VIEW;
        start += sizes[i];
    }
    return EM_OK;
}

int em_split(const em_tensor *t, int64_t split_size, int dim, em_tensor **out, int *n)
{
    if (EM_NULL(t) || EM_NULL(out) || EM_NULL(n)) return em_error_code();
    if (t->ndim == 0) return em_fail(EM_ERR_SHAPE, "split expects at least a 1-dimensional tensor");
    int d = em_wrap_dim(dim, t->ndim, "split");
    if (d < 0) return em_error_code();
    int64_t len = t->sizes[d];
    if (split_size < 0) return em_fail(EM_ERR_VALUE, "split expects split_size be non-negative, but got split_size=%lld", (long long)split_size);
    if (split_size == 0 && len != 0)
        return em_fail(EM_ERR_VALUE, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld", (long long)len);
    int64_t pieces = split_size ? (len + split_size - 1) / split_size : 1;
    if (pieces == 0) pieces = 1;
    if (pieces > *n) return em_fail(EM_ERR_VALUE, "split: %lld pieces do not fit the %d output slots", (long long)pieces, *n);
    int64_t sizes[pieces];
    for (int64_t i = 0; i < pieces; i++) sizes[i] = (i + 1) * split_size <= len ? split_size : len - i * split_size;
    int rc = em_split_sizes(t, (int)pieces, sizes, d, out);
    if (rc == EM_OK) *n = (int)pieces;
    return rc;
}

int em_chunk(const em_tensor *t, int chunks, int dim, em_tensor **out, int *n)
{
    if (EM_NULL(t) || EM_NULL(out) || EM_NULL(n)) return em_error_code();
    if (t->ndim == 0) return em_fail(EM_ERR_SHAPE, "chunk expects at least a 1-dimensional tensor");
    if (chunks <= 0) return em_fail(EM_ERR_VALUE, "chunk expects `chunks` to be greater than 0, got: %d", chunks);
    int d = em_wrap_dim(dim, t->ndim, "chunk");
    if (d < 0) return em_error_code();
    int64_t split_size = (t->sizes[d] + chunks - 1) / chunks;
    if (split_size == 0 && t->sizes[d] == 0) { /* PyTorch: `chunks` empty pieces */
        if (chunks > *n) return em_fail(EM_ERR_VALUE, "chunk: %d pieces do not fit the %d output slots", chunks, *n);
        int64_t sizes[chunks];
        for (int i = 0; i < chunks; i++) sizes[i] = 0;
        int rc = em_split_sizes(t, chunks, sizes, d, out);
        if (rc == EM_OK) *n = chunks;
        return rc;
    }
    return em_split(t, split_size, d, out, n);
}

int em_unbind(const em_tensor *t, int dim, em_tensor **out, int *n)
{
    if (EM_NULL(t) || EM_NULL(out) || EM_NULL(n)) return em_error_code();
    if (t->ndim == 0) return em_fail(EM_ERR_INDEX, "unbind: dimension specified as 0 but tensor has no dimensions");
    int d = em_wrap_dim(dim, t->ndim, "unbind");
    if (d < 0) return em_error_code();
    if (t->sizes[d] > *n) return em_fail(EM_ERR_VALUE, "unbind: %lld pieces do not fit the %d output slots", (long long)t->sizes[d], *n);
    for (int64_t i = 0; i < t->sizes[d]; i++) {
        if (!(out[i] = em_select(t, d, i))) {
            release_all(out, (int)i);
            return em_error_code();
        }
        out[i]->flags |= EM_FLAG_MULTI_VIEW;
    }
    *n = (int)t->sizes[d];
    return EM_OK;
}

/* ---- complex <-> real views ---------------------------------------------
 * view_as_real shows each complex element as its (real, imag) pair: a last
 * dim of 2, strides and offset doubled, in the parts' dtype; view_as_complex
 * is its inverse. Both share the storage, and autograd crosses them (Note
 * [Retyped views] in src/autograd/formulas_view.c). */
em_tensor *em_view_as_real(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    if (!em_dtype_is_complex((em_dtype)t->dtype))
        return em_error(EM_ERR_RUNTIME, "view_as_real is only supported for complex tensors");
    if (t->flags & EM_FLAG_CONJ) /* (the parts of a conjugate are no view of the storage's parts) */
        return em_error(EM_ERR_RUNTIME, "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
                        "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be warned "
                        "that the resulting tensor will NOT alias the original.");
    if (t->ndim >= EM_MAX_DIMS) return em_error(EM_ERR_SHAPE, "view_as_real: too many dims (%d)", t->ndim);
    int64_t sizes[EM_MAX_DIMS], strides[EM_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) sizes[d] = t->sizes[d], strides[d] = 2 * t->strides[d];
    sizes[t->ndim] = 2, strides[t->ndim] = 1;
    return em_tensor_view_as(t, t->ndim + 1, sizes, strides, 2 * t->offset, em_dtype_to_real((em_dtype)t->dtype));
}

em_tensor *em_view_as_complex(const em_tensor *t)
{
    if (EM_NULL(t)) return NULL;
    em_dtype dt = (em_dtype)t->dtype;
    if (dt != EM_F16 && dt != EM_F32 && dt != EM_F64)
        return em_error(EM_ERR_RUNTIME, "view_as_complex is only supported for half, float and double tensors, but got "
                        "a tensor of scalar type: %s", em_dtypes[dt].scalar_name);
    int n = t->ndim;
    if (n == 0) return em_error(EM_ERR_RUNTIME, "Input tensor must have one or more dimensions");
    if (t->sizes[n - 1] != 2) return em_error(EM_ERR_RUNTIME, "Tensor must have a last dimension of size 2");
    if (t->strides[n - 1] != 1) return em_error(EM_ERR_RUNTIME, "Tensor must have a last dimension with stride 1");
    int64_t strides[EM_MAX_DIMS];
    for (int d = 0; d < n - 1; d++) {
        if (t->strides[d] % 2)
            return em_error(EM_ERR_RUNTIME, "Tensor must have a stride divisible by 2 for all but last dimension");
        strides[d] = t->strides[d] / 2;
    }
    if (t->offset % 2) return em_error(EM_ERR_RUNTIME, "Tensor must have a storage_offset divisible by 2");
    return em_tensor_view_as(t, n - 1, t->sizes, strides, t->offset / 2, em_dtype_to_complex(dt));
}
