/* Builds an em_iter: broadcast strides, dim reordering, coalescing. */
#include "iter.h"

/* Should dim a be iterated inside dim b? Decided by the first operand whose
 * strides differ there (outputs first), ignoring broadcast (0) strides. */
static bool inner_before(const em_iter *it, int a, int b)
{
    for (int k = 0; k < it->nops; k++) {
        int64_t sa = it->strides[a][k], sb = it->strides[b][k];
        if (sa == 0 || sb == 0 || sa == sb) continue;
        return sa < sb;
    }
    return a < b; /* keep the original (reversed) order */
}

void em_iter_init(em_iter *it, int nops, const em_tensor *const *ops, int ndim, const int64_t *shape)
{
    it->nops = nops;
    it->numel = em_shape_numel(ndim, shape);
    for (int k = 0; k < nops; k++) {
        it->data[k] = em_tensor_data(ops[k]);
        it->dtypes[k] = (em_dtype)ops[k]->dtype;
    }
    /* dims reversed: d indexes from the innermost */
    int n = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        if (shape[d] == 1) continue; /* size-1 dims never move */
        it->shape[n] = shape[d];
        for (int k = 0; k < nops; k++) {
            const em_tensor *t = ops[k];
            int td = d - (ndim - t->ndim);
            it->strides[n][k] = (td >= 0 && t->sizes[td] != 1) ? t->strides[td] * (int64_t)em_dtypes[t->dtype].size : 0;
        }
        n++;
    }
    /* insertion sort of dims, innermost first */
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && inner_before(it, j, j - 1); j--) {
            int64_t s = it->shape[j];
            it->shape[j] = it->shape[j - 1];
            it->shape[j - 1] = s;
            for (int k = 0; k < nops; k++) {
                int64_t t = it->strides[j][k];
                it->strides[j][k] = it->strides[j - 1][k];
                it->strides[j - 1][k] = t;
            }
        }
    }
    /* merge dim d+1 into d where every operand is contiguous across them */
    int m = 0;
    for (int d = 1; d < n; d++) {
        bool ok = true;
        for (int k = 0; k < nops && ok; k++) ok = it->strides[d][k] == it->strides[m][k] * it->shape[m];
        if (ok) {
            it->shape[m] *= it->shape[d];
        } else {
            m++;
            it->shape[m] = it->shape[d];
            for (int k = 0; k < nops; k++) it->strides[m][k] = it->strides[d][k];
        }
    }
    it->ndim = n ? m + 1 : 1;
    if (!n) { /* a single element */
        it->shape[0] = 1;
        for (int k = 0; k < nops; k++) it->strides[0][k] = 0;
    }
}
