/* The CPU pointwise runner: walks an em_iter calling a kernel's 1-d loop on
 * each inner row, splits large work over the thread pool, and converts
 * operands stored in another dtype than the loop's through small buffers.
 * Also the range check of op params kernels convert (cpu_check_param). */
#include "cpu.h"
#include <float.h>

#define CAST_CHUNK 256 /* elements per conversion buffer: fits L1 for 10 operands */

typedef struct runner {
    const em_iter *it;
    em_loop_fn fn;
    const em_call *call;
    bool cast;                          /* some operand needs conversion */
    em_dtype want[EM_ITER_MAX_OPS];     /* dtype the loop reads/writes per operand */
    em_dtype round[EM_ITER_MAX_OPS];    /* output computed via float32 for a half type: rounded to
                                           it before being stored in a wider dtype (else NONE) */
    int nout;
} runner;

/* One row segment with conversion: inputs are converted into buffers,
 * the loop writes outputs into buffers that are converted back. */
static void run_cast(const runner *r, char **ptrs, const int64_t *strides, int64_t n)
{
    _Alignas(64) char buf[EM_ITER_MAX_OPS][CAST_CHUNK * 16]; /* 16: complex128's size */
    const em_iter *it = r->it;
    char *data[EM_ITER_MAX_OPS];
    int64_t st[EM_ITER_MAX_OPS];
    for (int64_t done = 0; done < n; done += CAST_CHUNK) {
        int64_t m = n - done < CAST_CHUNK ? n - done : CAST_CHUNK;
        for (int k = 0; k < it->nops; k++) {
            char *p = ptrs[k] + done * strides[k];
            if (it->dtypes[k] == r->want[k]) {
                data[k] = p;
                st[k] = strides[k];
                continue;
            }
            data[k] = buf[k];
            st[k] = (int64_t)em_dtypes[r->want[k]].size;
            if (k >= r->nout) em_cast_table[r->want[k]][it->dtypes[k]](buf[k], st[k], p, strides[k], m);
        }
        r->fn(data, st, m, r->call);
        for (int k = 0; k < r->nout; k++) {
            if (it->dtypes[k] == r->want[k]) continue;
            em_dtype from = r->want[k];
            if (r->round[k] != EM_DTYPE_NONE) { /* float32 -> half, in place in the buffer (it shrinks) */
                em_cast_table[r->round[k]][from](buf[k], (int64_t)em_dtypes[r->round[k]].size, buf[k], st[k], m);
                from = r->round[k];
            }
            em_cast_table[it->dtypes[k]][from](ptrs[k] + done * strides[k], strides[k], buf[k],
                                               (int64_t)em_dtypes[from].size, m);
        }
    }
}

/* Elements [begin, end) in the iteration's linear order. */
static void run_range(const runner *r, int64_t begin, int64_t end)
{
    const em_iter *it = r->it;
    int64_t coord[EM_MAX_DIMS], idx = begin;
    for (int d = 0; d < it->ndim; d++) {
        coord[d] = idx % it->shape[d];
        idx /= it->shape[d];
    }
    char *ptrs[EM_ITER_MAX_OPS];
    while (begin < end) {
        int64_t n = it->shape[0] - coord[0];
        if (n > end - begin) n = end - begin;
        for (int k = 0; k < it->nops; k++) {
            int64_t off = 0;
            for (int d = 0; d < it->ndim; d++) off += coord[d] * it->strides[d][k];
            ptrs[k] = it->data[k] + off;
        }
        if (r->cast)
            run_cast(r, ptrs, it->strides[0], n);
        else
            r->fn(ptrs, it->strides[0], n, r->call);
        begin += n;
        coord[0] += n;
        for (int d = 0; d < it->ndim - 1 && coord[d] == it->shape[d]; d++) {
            coord[d] = 0;
            coord[d + 1]++;
        }
    }
}

/* Blocks [begin, end) of 64 elements: threads never share a cache line. */
static void block_chunk(void *p, int64_t begin, int64_t end)
{
    const runner *r = p;
    int64_t e = end * 64 < r->it->numel ? end * 64 : r->it->numel;
    run_range(r, begin * 64, e);
}

/* Is operand k one value broadcast over the whole iteration? */
static bool is_one_value(const em_iter *it, int k)
{
    for (int d = 0; d < it->ndim; d++)
        if (it->strides[d][k] != 0 && it->shape[d] != 1) return false;
    return true;
}

em_status cpu_pointwise_run(const em_call *c, const em_loop_fn loops[EM_DTYPE_COUNT], int nops,
                            const em_tensor *const *ops, int ndim, const int64_t *shape)
{
    em_dtype dt = c->dtype;
    em_loop_fn fn = loops[dt];
    bool via_f32 = false;
    em_dtype wide = dt == EM_C32 ? EM_C64 : EM_F32; /* what a half type computes in */
    if (!fn && (dt == EM_F16 || dt == EM_BF16 || dt == EM_C32) && loops[wide]) {
        fn = loops[wide];
        via_f32 = true;
    }
    if (!fn)
        return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", em_ops[c->op].name, em_dtypes[dt].scalar_name);
    em_iter it;
    em_iter_init(&it, nops, ops, ndim, shape);
    if (it.numel == 0) return EM_OK;
    runner r = {.it = &it, .fn = fn, .call = c, .cast = false, .nout = c->nout};
    _Alignas(16) char single[EM_ITER_MAX_OPS][16];
    for (int k = 0; k < nops; k++) {
        em_dtype w = (em_dtype)c->operand_dtypes[k];
        r.round[k] = EM_DTYPE_NONE;
        if (via_f32 && w == dt) {
            w = wide;
            if (k < c->nout && it.dtypes[k] != dt) r.round[k] = dt;
        }
        r.want[k] = w;
        if (k >= c->nout && w != it.dtypes[k] && is_one_value(&it, k)) {
            /* a single value seen everywhere (a Python number: float64), converted once
             * here rather than per element (x * 2 ran at a third of its speed) */
            em_cast_table[w][it.dtypes[k]](single[k], 0, it.data[k], 0, 1);
            it.data[k] = single[k];
            it.dtypes[k] = w;
        }
        r.cast |= w != it.dtypes[k];
    }
    em_parallel_for((it.numel + 63) / 64, 64, EM_GRAIN, block_chunk, &r);
    return EM_OK;
}

em_status cpu_pointwise(const em_call *c, const em_loop_fn loops[EM_DTYPE_COUNT])
{
    const em_tensor *ops[EM_ITER_MAX_OPS];
    int n = 0;
    for (int k = 0; k < c->nout; k++) ops[n++] = c->out[k];
    for (int k = 0; k < c->nin; k++) ops[n++] = c->in[k];
    const em_tensor *o = c->out[0];
    return cpu_pointwise_run(c, loops, n, ops, o->ndim, o->sizes);
}

em_status cpu_check_param(double v, em_dtype dt)
{
    double lo, hi; /* representable range */
    switch (dt) {
    case EM_BOOL: return EM_OK;
    case EM_F16: lo = -65504, hi = 65504; break;
    case EM_BF16: lo = -3.3895313892515355e38, hi = 3.3895313892515355e38; break;
    case EM_F32: case EM_C64: lo = -FLT_MAX, hi = FLT_MAX; break;
    case EM_C32: lo = -65504, hi = 65504; break;
    case EM_F64: case EM_C128: return EM_OK;
    case EM_I64: lo = -9223372036854775808.0, hi = nextafter(9223372036854775808.0, 0); break;
    default: /* the 32-bit and smaller integers */
        hi = (double)((UINT64_C(1) << (8 * em_dtypes[dt].size - em_dtype_is_signed(dt))) - 1);
        lo = em_dtype_is_signed(dt) ? -hi - 1 : v == floor(v) ? -hi : 0;
    }
    if ((em_dtype_is_float(dt) || em_dtype_is_complex(dt)) && (isinf(v) || isnan(v))) return EM_OK;
    if (!(v >= lo && v <= hi))
        return em_fail(EM_ERR_RUNTIME, "value cannot be converted to type %s without overflow", em_dtypes[dt].name);
    return EM_OK;
}
