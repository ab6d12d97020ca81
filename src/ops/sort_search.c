/* The op layer of searchsorted and bucketize: PyTorch's argument checks,
 * the promoted compute dtype, then the binary-search kernel
 * (src/cpu/sort_search.c) on contiguous copies where needed. */
#include "sort_ops.h"

#define SS "torch.searchsorted()"

/* Checks side/right against each other; *is_right gets the side searched. */
static em_status check_side(bool right, const char *side, bool *is_right)
{
    if (side && strcmp(side, "left") && strcmp(side, "right"))
        return em_fail(EM_ERR_RUNTIME, SS ": side can only be 'left' or 'right' but got %s", side);
    if (side && !strcmp(side, "left") && right)
        return em_fail(EM_ERR_RUNTIME, SS ": side and right can't be set to opposites, got side of left while right "
                       "was True");
    *is_right = right || (side && !strcmp(side, "right"));
    return EM_OK;
}

/* The shape rules: a 1-d sequence serves any values (a 0-d one too); an N-d
 * one needs values with the same leading N-1 dims. */
static em_status check_shapes(const em_tensor *seq, const em_tensor *values, const em_tensor *sorter)
{
    if (sorter && sorter->dtype != EM_I64)
        return em_fail(EM_ERR_DTYPE, SS ": sorter must be a tensor of long dtype but got dtype %s",
                       em_dtypes[sorter->dtype].name);
    if (sorter && (sorter->ndim != seq->ndim || memcmp(sorter->sizes, seq->sizes, seq->ndim * sizeof *seq->sizes)))
        return em_fail(EM_ERR_SHAPE, SS ": boundary and sorter must have the same size, but got boundary tensor %s "
                       "and got sorter tensor %s", em_shape_str(seq->ndim, seq->sizes),
                       em_shape_str(sorter->ndim, sorter->sizes));
    if (seq->ndim == 0)
        return em_fail(EM_ERR_SHAPE, SS ": boundaries tensor should have positive dimension, but got 0 dimension");
    if (seq->ndim == 1) return EM_OK;
    if (values->ndim == 0)
        return em_fail(EM_ERR_SHAPE, SS ": input value can be a scalar only when boundaries tensor dimension is 1, "
                       "but we got boundaries tensor dim(%d) and input value's dim(0) numel(1)", seq->ndim);
    if (values->ndim != seq->ndim || memcmp(values->sizes, seq->sizes, (seq->ndim - 1) * sizeof *seq->sizes))
        return em_fail(EM_ERR_SHAPE, SS ": boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                       "boundaries tensor and input value tensor must match, but we got boundaries tensor %s and "
                       "input value tensor %s", em_shape_str(seq->ndim, seq->sizes),
                       em_shape_str(values->ndim, values->sizes));
    return EM_OK;
}

/* t converted to dtype dt, contiguous (a new reference; t itself if it is). */
static em_tensor *contiguous_as(const em_tensor *t, em_dtype dt)
{
    em_tensor *c = em_to_dtype(t, dt), *r = c ? em_contiguous(c) : NULL;
    em_release(c);
    return r;
}

/* The checked search; a new int32/int64 tensor of values' shape. */
static em_tensor *search(const em_tensor *seq, const em_tensor *values, bool out_int32, bool right, const char *side,
                         const em_tensor *sorter)
{
    bool is_right = false;
    if (!seq || !values) return em_error(EM_ERR_VALUE, SS ": sorted_sequence or values is NULL");
    if (check_side(right, side, &is_right) || check_shapes(seq, values, sorter)) return NULL;
    const em_tensor *both[] = {seq, values};
    em_dtype dt = em_result_type(2, both);
    if (dt == EM_BOOL) return em_error(EM_ERR_DTYPE, "\"searchsorted_out_cpu\" not implemented for 'bool'");
    if (dt == EM_F16 || dt == EM_BF16) dt = EM_F32; /* exact, and order-preserving */
    em_tensor *s = contiguous_as(seq, dt), *v = contiguous_as(values, dt), *srt = sorter ? em_contiguous(sorter) : NULL;
    em_tensor *out = em_tensor_new(values->ndim, values->sizes, out_int32 ? EM_I32 : EM_I64, values->storage->device);
    if (s && v && (srt || !sorter) && out) {
        em_call c = {.op = EM_OP_searchsorted, .nin = 3, .nout = 1, .dtype = dt};
        c.out[0] = out;
        c.in[0] = s;
        c.in[1] = v;
        c.in[2] = srt;
        c.i[0] = is_right;
        if (em_dispatch(&c)) {
            em_release(out);
            out = NULL;
        }
    } else {
        em_release(out);
        out = NULL;
    }
    em_release(s);
    em_release(v);
    em_release(srt);
    return out;
}

/* out= forms: out must have the index dtype out_int32 asks for. */
static em_status search_out(em_tensor *out, const em_tensor *seq, const em_tensor *values, bool out_int32,
                            bool right, const char *side, const em_tensor *sorter)
{
    if (!out) return em_fail(EM_ERR_VALUE, SS ": out is NULL");
    if (out->dtype != (out_int32 ? EM_I32 : EM_I64))
        return em_fail(EM_ERR_DTYPE, SS ": output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) "
                       "depending on whether out_int32 flag is True, but we got output tensor's dtype %s and "
                       "out_int32 flag is %s", em_dtypes[out->dtype].name, out_int32 ? "True" : "False");
    if ((values && em_check_overlap(out, values, "searchsorted")) || (seq && em_check_overlap(out, seq, "searchsorted")))
        return em_error_code();
    em_tensor *r = search(seq, values, out_int32, right, side, sorter);
    return r ? em_sort_deliver(out, r) : em_error_code();
}

em_tensor *em_searchsorted(const em_tensor *sorted_sequence, const em_tensor *values, bool out_int32, bool right,
                           const char *side, const em_tensor *sorter)
{
    return search(sorted_sequence, values, out_int32, right, side, sorter);
}

em_status em_searchsorted_out(em_tensor *out, const em_tensor *sorted_sequence, const em_tensor *values,
                              bool out_int32, bool right, const char *side, const em_tensor *sorter)
{
    return search_out(out, sorted_sequence, values, out_int32, right, side, sorter);
}

static em_status check_boundaries(const em_tensor *boundaries)
{
    if (boundaries && boundaries->ndim != 1)
        return em_fail(EM_ERR_SHAPE, "bucketize: boundaries tensor must be 1 dimension, but got dim(%d)",
                       boundaries->ndim);
    return EM_OK;
}

em_tensor *em_bucketize(const em_tensor *input, const em_tensor *boundaries, bool out_int32, bool right)
{
    return check_boundaries(boundaries) ? NULL : search(boundaries, input, out_int32, right, NULL, NULL);
}

em_status em_bucketize_out(em_tensor *out, const em_tensor *input, const em_tensor *boundaries, bool out_int32,
                           bool right)
{
    if (check_boundaries(boundaries)) return em_error_code();
    return search_out(out, boundaries, input, out_int32, right, NULL, NULL);
}
