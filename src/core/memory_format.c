/* Memory-format geometry (Note [Memory formats] in core.h): the strides of
 * each format, whether a tensor is laid out in one, and the format its
 * strides suggest. No data is touched here; the copies are in
 * src/ops/copy_format.c. */
#include "internal.h"

/* Dims from innermost to outermost in memory, for 4-d and 5-d tensors. */
static const int channels_last_order[] = {1, 3, 2, 0};
static const int channels_last_3d_order[] = {1, 4, 3, 2, 0};

static const int *format_order(em_memory_format f, int *ndim)
{
    *ndim = f == EM_CHANNELS_LAST ? 4 : 5;
    return f == EM_CHANNELS_LAST ? channels_last_order : channels_last_3d_order;
}

bool em_is_contiguous_as(const em_tensor *t, em_memory_format f)
{
    if (EM_NULL(t)) return false;
    if (f != EM_CHANNELS_LAST && f != EM_CHANNELS_LAST_3D) return em_is_contiguous(t);
    int n;
    const int *order = format_order(f, &n);
    if (t->ndim != n) return false;
    int64_t expected = 1;
    for (int k = 0; k < n; k++) {
        int d = order[k];
        if (t->sizes[d] == 1) continue;
        if (t->strides[d] != expected) return false;
        expected *= t->sizes[d];
    }
    return true;
}

/* Do t's strides grow along `order` (channels innermost)? Ambiguous layouts
 * answer no, so that they stay contiguous: a zero channel stride, an empty
 * dim, and a batch dim whose stride equals the channels' (an N,1,1,1 tensor
 * is both NCHW and NHWC). A size-1 dim does not widen the next minimum, so
 * N,1,H,1 with strides H,1,1,1 is channels_last and H,H,1,1 is not. */
static bool strides_follow(const em_tensor *t, const int *order, int n)
{
    if (t->ndim != n || t->strides[1] == 0) return false;
    int64_t min = 0;
    for (int k = 0; k < n; k++) {
        int d = order[k];
        if (t->sizes[d] == 0 || t->strides[d] < min) return false;
        if (d == 0 && min == t->strides[1]) return false;
        min = t->strides[d] * (t->sizes[d] > 1 ? t->sizes[d] : 1);
    }
    return true;
}

em_memory_format em_suggest_memory_format(const em_tensor *t)
{
    if (EM_NULL(t)) return EM_CONTIGUOUS_FORMAT;
    if (strides_follow(t, channels_last_order, 4)) return EM_CHANNELS_LAST;
    if (strides_follow(t, channels_last_3d_order, 5)) return EM_CHANNELS_LAST_3D;
    return EM_CONTIGUOUS_FORMAT;
}

int em_format_strides(int ndim, const int64_t *sizes, em_memory_format f, int64_t *strides)
{
    if (f == EM_CONTIGUOUS_FORMAT) {
        em_contiguous_strides(ndim, sizes, strides);
        return 0;
    }
    if (f != EM_CHANNELS_LAST && f != EM_CHANNELS_LAST_3D) {
        em_error(EM_ERR_RUNTIME, "unsupported memory format Preserve");
        return -1;
    }
    int n;
    const int *order = format_order(f, &n);
    if (ndim != n) {
        em_error(EM_ERR_RUNTIME, "required rank %d tensor to use %s format", n,
                 f == EM_CHANNELS_LAST ? "channels_last" : "channels_last_3d");
        return -1;
    }
    /* PyTorch multiplies the sizes as they are: an empty dim zeroes the strides outside it */
    int64_t s = 1;
    for (int k = 0; k < n; k++) {
        strides[order[k]] = s;
        s *= sizes[order[k]];
    }
    return 0;
}

/* Which of dims a and b lies further out: > 0 when a does (it has the larger
 * stride, or an equal stride and a larger size), < 0 when b does, 0 when
 * unordered (equal, or a zero stride: a broadcast dim). */
static int outer_of(const int64_t *sizes, const int64_t *strides, int a, int b)
{
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] > strides[b] ? 1 : -1;
    return sizes[a] > sizes[b];
}

void em_dense_strides_like(int ndim, const int64_t *sizes, const int64_t *strides, int64_t *out)
{
    /* perm: dims from innermost to outermost, starting from the contiguous
     * order. Each dim in turn moves inwards, swapping with every earlier dim
     * that lies further out and stopping at one that lies further in;
     * unordered dims are stepped over (PyTorch's order, which pointwise
     * results follow too). */
    int perm[EM_MAX_DIMS];
    for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
    for (int i = 1; i < ndim; i++) {
        int cur = i;
        for (int j = i - 1; j >= 0; j--) {
            int c = outer_of(sizes, strides, perm[j], perm[cur]);
            if (c < 0) break;
            if (c > 0) {
                int tmp = perm[j];
                perm[j] = perm[cur];
                perm[cur] = tmp;
                cur = j;
            }
        }
    }
    int64_t s = 1;
    for (int i = 0; i < ndim; i++) {
        out[perm[i]] = s;
        if (sizes[perm[i]] > 1) s *= sizes[perm[i]];
    }
}
