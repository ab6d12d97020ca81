/* The op layer of histc, histogram and bincount: PyTorch's checks, the bin
 * range (from the data when not given: a first kernel call measures it),
 * then the counting kernel (src/cpu/sort_hist.c) on contiguous inputs. */
#include "sort_ops.h"
#include <math.h>

/* One dispatch of a counting op: inputs are made contiguous (NULL stays
 * NULL), outputs must be fresh contiguous tensors. */
static em_status run_hist(em_op op, enum em_hist_mode mode, em_tensor *out0, em_tensor *out1,
                          const em_tensor *in0, const em_tensor *in1, const em_tensor *in2, int64_t bins,
                          int64_t flag, double lo, double hi)
{
    const em_tensor *ins[] = {in0, in1, in2};
    em_call c = {.op = op, .nin = 3, .nout = out1 ? 2 : 1, .dtype = (em_dtype)in0->dtype};
    em_status st = EM_OK;
    for (int k = 0; k < 3 && !st; k++)
        if (ins[k] && !(c.in[k] = em_contiguous(ins[k]))) st = em_error_code();
    c.out[0] = out0;
    c.out[1] = out1;
    c.i[0] = mode;
    c.i[1] = bins;
    c.i[2] = flag;
    c.f[0] = lo;
    c.f[1] = hi;
    if (!st) st = em_dispatch(&c);
    for (int k = 0; k < 3; k++) em_release((em_tensor *)c.in[k]);
    return st;
}

/* [min, max] of t's elements (NaN if t holds one) through op's range mode. */
static em_status data_range(em_op op, const em_tensor *t, double *lo, double *hi)
{
    int64_t two = 2, at = 0;
    em_tensor *r = em_tensor_new(1, &two, EM_F64, t->storage->device);
    em_status st = r ? run_hist(op, EM_HIST_RANGE, r, NULL, t, NULL, NULL, 0, 0, 0, 0) : em_error_code();
    if (!st) st = em_get(r, &at, lo);
    at = 1;
    if (!st) st = em_get(r, &at, hi);
    em_release(r);
    return st;
}

/* ---- histc ---------------------------------------------------------------------- */
static em_tensor *histc(const em_tensor *t, int64_t bins, double lo, double hi)
{
    if (!t) return em_error(EM_ERR_VALUE, "histc: input is NULL");
    if (t->dtype != EM_F32 && t->dtype != EM_F64 && t->dtype != EM_BF16)
        return em_error(EM_ERR_DTYPE, "\"histogram_cpu\" not implemented for '%s'", em_dtypes[t->dtype].name);
    if (bins <= 0)
        return em_error(EM_ERR_RUNTIME, "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                        (long long)bins);
    if (lo == hi && em_numel(t) > 0 && data_range(EM_OP_histc, t, &lo, &hi)) return NULL;
    if (lo == hi) lo -= 1, hi += 1;
    if (!isfinite(lo) || !isfinite(hi))
        return em_error(EM_ERR_RUNTIME, "torch.histc: range of [%g, %g] is not finite", lo, hi);
    if (!(lo < hi)) return em_error(EM_ERR_RUNTIME, "torch.histc: max must be larger than min");
    em_tensor *out = em_tensor_new(1, &bins, (em_dtype)t->dtype, t->storage->device);
    if (out && run_hist(EM_OP_histc, EM_HIST_LINEAR, out, NULL, t, NULL, NULL, bins, 0, lo, hi)) {
        em_release(out);
        return NULL;
    }
    return out;
}

em_tensor *em_histc(const em_tensor *t, int64_t bins, double min, double max) { return histc(t, bins, min, max); }

em_status em_histc_out(em_tensor *out, const em_tensor *t, int64_t bins, double min, double max)
{
    if (!out || !t) return em_fail(EM_ERR_VALUE, "histc: out or input is NULL");
    if (out->dtype != t->dtype)
        return em_fail(EM_ERR_DTYPE, "torch.histogram: input tensor and hist tensor should have the same dtype, but "
                       "got input %s and hist %s", em_dtypes[t->dtype].name, em_dtypes[out->dtype].name);
    if (em_check_overlap(out, t, "histc")) return em_error_code();
    em_tensor *r = histc(t, bins, min, max);
    return r ? em_sort_deliver(out, r) : em_error_code();
}

/* ---- histogram ---------------------------------------------------------------------- */
#define HD "torch.histogramdd"

static em_status histogram_checks(const em_tensor *t, const em_tensor *weight, em_tensor **hist,
                                  em_tensor **bin_edges)
{
    em_sort_results_init(hist, bin_edges, NULL);
    if (!t || !hist || !bin_edges) return em_fail(EM_ERR_VALUE, "histogram: input or result pointer is NULL");
    if (t->dtype != EM_F32 && t->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "\"histogramdd\" not implemented for '%s'", em_dtypes[t->dtype].name);
    if (weight && weight->dtype != t->dtype)
        return em_fail(EM_ERR_DTYPE, HD ": if weight tensor is provided, input tensor and weight tensor should have "
                       "the same dtype, but got input(%s), and weight(%s)", em_dtypes[t->dtype].name,
                       em_dtypes[weight->dtype].name);
    if (weight && em_numel(weight) != em_numel(t))
        return em_fail(EM_ERR_SHAPE, HD ": if weight tensor is provided it should have the same shape as the input "
                       "tensor excluding its innermost dimension, but got input with shape [%lld, 1] and weight "
                       "with shape %s", (long long)em_numel(t), em_shape_str(weight->ndim, weight->sizes));
    return EM_OK;
}

static em_status check_bins(int64_t bins)
{
    if (bins > 0) return EM_OK;
    return em_fail(EM_ERR_RUNTIME, "torch.histogram(): bins must be > 0, but got %lld for dimension 0",
                   (long long)bins);
}

/* Allocates hist (bins) and bin_edges (bins + 1) and runs the kernel. */
static em_status histogram_run(const em_tensor *t, int64_t bins, enum em_hist_mode mode, const em_tensor *edges,
                               const em_tensor *weight, bool density, double lo, double hi, em_tensor **hist,
                               em_tensor **bin_edges)
{
    int64_t ne = bins + 1;
    *hist = em_tensor_new(1, &bins, (em_dtype)t->dtype, t->storage->device);
    *bin_edges = em_tensor_new(1, &ne, (em_dtype)t->dtype, t->storage->device);
    if (!*hist || !*bin_edges ||
        run_hist(EM_OP_histogram, mode, *hist, *bin_edges, t, weight, edges, bins, density, lo, hi))
        return em_sort_results_drop(hist, bin_edges, NULL);
    return EM_OK;
}

em_status em_histogram(const em_tensor *t, int64_t bins, const double *range, const em_tensor *weight,
                       bool density, em_tensor **hist, em_tensor **bin_edges)
{
    if (histogram_checks(t, weight, hist, bin_edges) || check_bins(bins)) return em_error_code();
    double lo = 0, hi = 1; /* an empty input without a range: numpy's [0, 1] */
    if (range)
        lo = range[0], hi = range[1];
    else if (em_numel(t) > 0 && data_range(EM_OP_histogram, t, &lo, &hi))
        return em_error_code();
    if (!isfinite(lo) || !isfinite(hi))
        return em_fail(EM_ERR_RUNTIME, HD ": dimension 0's range [%g, %g] is not finite", lo, hi);
    if (lo > hi)
        return em_fail(EM_ERR_RUNTIME, HD ": min should not exceed max, but got min %g max %g for dimension 0", lo, hi);
    if (lo == hi) lo -= 0.5, hi += 0.5;
    return histogram_run(t, bins, EM_HIST_LINEAR, NULL, weight, density, lo, hi, hist, bin_edges);
}

em_status em_histogram_edges(const em_tensor *t, const em_tensor *edges, const em_tensor *weight, bool density,
                             em_tensor **hist, em_tensor **bin_edges)
{
    if (histogram_checks(t, weight, hist, bin_edges)) return em_error_code();
    if (!edges) return em_fail(EM_ERR_VALUE, "histogram: bins is NULL");
    if (edges->dtype != t->dtype)
        return em_fail(EM_ERR_DTYPE, HD ": input tensor and bins tensors should have the same dtype, but got input "
                       "with dtype %s and bins for dimension 0 with dtype %s", em_dtypes[t->dtype].name,
                       em_dtypes[edges->dtype].name);
    if (edges->ndim != 1)
        return em_fail(EM_ERR_SHAPE, HD ": bins tensor should have one dimension, but got %d dimensions in the bins "
                       "tensor for dimension 0", edges->ndim);
    if (edges->sizes[0] == 0)
        return em_fail(EM_ERR_SHAPE, HD ": bins tensor should have at least 1 element, but got 0 elements in the "
                       "bins tensor for dimension 0");
    if (check_bins(edges->sizes[0] - 1)) return em_error_code();
    return histogram_run(t, edges->sizes[0] - 1, EM_HIST_EDGES, edges, weight, density, 0, 0, hist, bin_edges);
}

/* ---- bincount ------------------------------------------------------------------------ */
#define BINCOUNT_INPUT "bincount only supports 1-d non-negative integral inputs."

em_tensor *em_bincount(const em_tensor *t, const em_tensor *weights, int64_t minlength)
{
    if (!t) return em_error(EM_ERR_VALUE, "bincount: input is NULL");
    if (!em_dtype_is_int((em_dtype)t->dtype))
        return em_error(EM_ERR_DTYPE, "\"bincount_cpu\" not implemented for '%s'", em_dtypes[t->dtype].name);
    if (minlength < 0) return em_error(EM_ERR_RUNTIME, "bincount: minlength should be >= 0");
    em_device dev = t->storage->device;
    if (t->ndim == 1 && t->sizes[0] == 0) return em_zeros(1, &minlength, EM_I64); /* weights or not: PyTorch's */
    if (t->ndim != 1) return em_error(EM_ERR_RUNTIME, "bincount: " BINCOUNT_INPUT);
    if (weights && (weights->ndim != 1 || weights->sizes[0] != t->sizes[0]))
        return em_error(EM_ERR_SHAPE, "bincount: weights should be 1-d and have the same length as input");
    int64_t two = 2, at = 0;
    double lo, hi;
    em_tensor *bounds = em_tensor_new(1, &two, EM_I64, dev);
    em_status st = bounds ? run_hist(EM_OP_bincount, EM_HIST_RANGE, bounds, NULL, t, NULL, NULL, 0, 0, 0, 0)
                          : em_error_code();
    if (!st) st = em_get(bounds, &at, &lo);
    at = 1;
    if (!st) st = em_get(bounds, &at, &hi);
    em_release(bounds);
    if (st) return NULL;
    if (lo < 0) return em_error(EM_ERR_RUNTIME, "bincount: " BINCOUNT_INPUT);
    int64_t len = (int64_t)hi + 1 > minlength ? (int64_t)hi + 1 : minlength;
    /* float32 weights sum in float32; any other weights in float64 (PyTorch's rule) */
    em_dtype rdt = !weights ? EM_I64 : weights->dtype == EM_F32 ? EM_F32 : EM_F64;
    em_tensor *w = weights ? em_to_dtype(weights, rdt) : NULL;
    em_tensor *out = (w || !weights) ? em_tensor_new(1, &len, rdt, dev) : NULL;
    if (!out || run_hist(EM_OP_bincount, EM_HIST_LINEAR, out, NULL, t, w, NULL, len, 0, 0, 0)) {
        em_release(out);
        out = NULL;
    }
    em_release(w);
    return out;
}
