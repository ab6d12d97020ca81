/* The row-major walk of the index kernels (see index_walk.h). */
#include "index_walk.h"
#include <omp.h>

void cpu_walk_init(cpu_walk *w, int nops, const em_tensor *const *ops)
{
    const em_tensor *t0 = ops[0];
    w->nops = nops;
    w->numel = em_numel(t0);
    for (int k = 0; k < nops; k++) w->data[k] = em_tensor_data(ops[k]);
    int n = 0;
    for (int d = 0; d < t0->ndim; d++) {
        if (t0->sizes[d] == 1) continue; /* never moves */
        int64_t size = t0->sizes[d];
        bool merge = n > 0;
        for (int k = 0; k < nops && merge; k++) {
            int64_t s = ops[k]->strides[d] * (int64_t)em_dtypes[ops[k]->dtype].size;
            merge = w->strides[n - 1][k] == s * size;
        }
        if (merge) { /* dim d continues dim n-1 for every operand */
            w->shape[n - 1] *= size;
            for (int k = 0; k < nops; k++) w->strides[n - 1][k] = ops[k]->strides[d] * (int64_t)em_dtypes[ops[k]->dtype].size;
            continue;
        }
        w->shape[n] = size;
        for (int k = 0; k < nops; k++) w->strides[n][k] = ops[k]->strides[d] * (int64_t)em_dtypes[ops[k]->dtype].size;
        n++;
    }
    if (n == 0) { /* one element (or none: numel says) */
        w->shape[0] = 1;
        for (int k = 0; k < nops; k++) w->strides[0][k] = 0;
        n = 1;
    }
    w->ndim = n;
}

void cpu_walk_range(const cpu_walk *w, int64_t begin, int64_t end, cpu_walk_fn fn, void *ctx)
{
    if (begin >= end) return;
    int inner = w->ndim - 1;
    int64_t coord[EM_MAX_DIMS], idx = begin;
    for (int d = inner; d >= 0; d--) {
        coord[d] = idx % w->shape[d];
        idx /= w->shape[d];
    }
    char *ptrs[CPU_WALK_MAX_OPS];
    while (begin < end) {
        int64_t n = w->shape[inner] - coord[inner];
        if (n > end - begin) n = end - begin;
        for (int k = 0; k < w->nops; k++) {
            int64_t off = 0;
            for (int d = 0; d <= inner; d++) off += coord[d] * w->strides[d][k];
            ptrs[k] = w->data[k] + off;
        }
        fn(ctx, ptrs, w->strides[inner], n);
        begin += n;
        coord[inner] += n;
        for (int d = inner; d > 0 && coord[d] == w->shape[d]; d--) {
            coord[d] = 0;
            coord[d - 1]++;
        }
    }
}

void cpu_walk_run(const cpu_walk *w, bool parallel, cpu_walk_fn fn, void *ctx)
{
    int threads = omp_get_max_threads();
    if (!parallel || w->numel < EM_GRAIN || threads <= 1 || omp_in_parallel()) {
        cpu_walk_range(w, 0, w->numel, fn, ctx);
        return;
    }
    int64_t chunks = w->numel / (EM_GRAIN / 2);
    if (chunks > threads) chunks = threads;
#pragma omp parallel num_threads((int)chunks)
    {
        int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t per = ((w->numel + nt - 1) / nt + 63) & ~(int64_t)63; /* whole cache lines of dst per thread */
        int64_t b = t * per, e = b + per < w->numel ? b + per : w->numel;
        if (b < e) cpu_walk_range(w, b, e, fn, ctx);
    }
}
