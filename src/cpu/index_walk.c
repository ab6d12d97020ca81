/* The row-major walk of the index kernels (see index_walk.h). */
#include "index_walk.h"

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

typedef struct walk_job {
    const cpu_walk *w;
    cpu_walk_fn fn;
    void *ctx;
} walk_job;

/* Blocks [begin, end) of 64 elements: whole cache lines of dst per thread. */
static void walk_chunk(void *p, int64_t begin, int64_t end)
{
    const walk_job *j = p;
    int64_t e = end * 64 < j->w->numel ? end * 64 : j->w->numel;
    cpu_walk_range(j->w, begin * 64, e, j->fn, j->ctx);
}

void cpu_walk_run(const cpu_walk *w, bool parallel, cpu_walk_fn fn, void *ctx)
{
    if (!parallel) {
        cpu_walk_range(w, 0, w->numel, fn, ctx);
        return;
    }
    walk_job j = {w, fn, ctx};
    em_parallel_for((w->numel + 63) / 64, 64, EM_GRAIN_GATHER, walk_chunk, &j);
}
