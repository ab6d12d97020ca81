/* The op layer of the DFT primitives (include/ember/fft.h): dtype, dim and
 * length checks, result shapes, then one dispatch on a contiguous input
 * (the kernels' contract is at the top of src/cpu/fft.c). */
#include "dispatch.h"
#include "ember/fft.h"
#include <limits.h>

/* dims as a bit mask of wrapped dims, *last the wrapped last of them. */
static em_status dims_mask(const em_tensor *x, int ndims, const int64_t *dims, const char *op, uint64_t *mask,
                           int *last)
{
    if (ndims < 1 || ndims > x->ndim)
        return em_fail(EM_ERR_VALUE, "%s: expected between 1 and %d dims, got %d", op, x->ndim, ndims);
    if (EM_NULL(dims)) return em_error_code();
    *mask = 0;
    for (int k = 0; k < ndims; k++) {
        if (dims[k] < INT_MIN || dims[k] > INT_MAX)
            return em_fail(EM_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                           -x->ndim, x->ndim - 1, (long long)dims[k]);
        const int d = em_wrap_dim((int)dims[k], x->ndim, op);
        if (d < 0) return em_error_code();
        if (*mask >> d & 1) return em_fail(EM_ERR_RUNTIME, "%s: FFT dims must be unique", op);
        *mask |= 1ull << d;
        *last = d;
    }
    return EM_OK;
}

static em_status check_norm(em_fft_norm norm, const char *op)
{
    if ((unsigned)norm <= EM_FFT_NORM_N) return EM_OK;
    return em_fail(EM_ERR_VALUE, "%s: unknown normalization %d", op, (int)norm);
}

/* Every transformed length of sizes (the signal's) at least 1 and within
 * what the kernels index with an int (kissfft's lengths). */
static em_status check_lengths(const int64_t *sizes, int ndim, uint64_t mask, const char *op)
{
    for (int d = 0; d < ndim; d++) {
        if (!(mask >> d & 1)) continue;
        if (sizes[d] < 1)
            return em_fail(EM_ERR_RUNTIME, "Invalid number of data points (%lld) specified", (long long)sizes[d]);
        if (sizes[d] > INT_MAX)
            return em_fail(EM_ERR_VALUE, "%s: a transform of length %lld is longer than Ember supports", op,
                           (long long)sizes[d]);
    }
    return EM_OK;
}

static em_status check_dtype(const em_tensor *x, bool want_complex, const char *op)
{
    const em_dtype dt = (em_dtype)x->dtype;
    if (want_complex ? dt == EM_C64 || dt == EM_C128 : dt == EM_F32 || dt == EM_F64) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "%s: expected a %s input, got %s", op,
                   want_complex ? "complex64 or complex128" : "float32 or float64", em_dtypes[dt].name);
}

/* Dispatches op on contiguous x into a fresh y of (ndim, sizes, y_dtype). */
static em_tensor *run(em_op op, const em_tensor *x, int ndim, const int64_t *sizes, em_dtype y_dtype, uint64_t mask,
                      int last, em_fft_norm norm, int64_t flag, int64_t last_dim_size)
{
    em_tensor *xc = em_contiguous(x), *y = xc ? em_empty(ndim, sizes, y_dtype) : NULL;
    em_call c = {.op = op, .nin = 1, .nout = 1, .dtype = em_dtype_is_complex(y_dtype) ? y_dtype : (em_dtype)x->dtype,
                 .in = {xc}, .out = {y}};
    c.i[0] = (int64_t)mask;
    c.i[1] = last;
    c.i[2] = norm;
    c.i[3] = flag;
    c.i[4] = last_dim_size;
    c.operand_dtypes[0] = (int8_t)y_dtype;
    c.operand_dtypes[1] = (int8_t)x->dtype;
    em_status st = y ? em_dispatch(&c) : em_error_code();
    em_release(xc);
    if (st) {
        em_release(y);
        return NULL;
    }
    return y;
}

/* The checks every transform makes: x non-NULL, complex or real as `complex_in`
 * says, dims valid (their mask and the last one out), a known norm. */
static em_status check_args(const em_tensor *x, bool complex_in, int ndims, const int64_t *dims, em_fft_norm norm,
                            const char *op, uint64_t *mask, int *last)
{
    if (EM_NULL(x) || check_dtype(x, complex_in, op) || dims_mask(x, ndims, dims, op, mask, last) ||
        check_norm(norm, op))
        return em_error_code();
    return EM_OK;
}

em_tensor *em_fft_c2c(const em_tensor *x, int ndims, const int64_t *dims, em_fft_norm norm, bool forward)
{
    static const char op[] = "fft_c2c";
    uint64_t mask;
    int last;
    if (check_args(x, true, ndims, dims, norm, op, &mask, &last) || check_lengths(x->sizes, x->ndim, mask, op))
        return NULL;
    return run(EM_OP_fft_c2c, x, x->ndim, x->sizes, (em_dtype)x->dtype, mask, last, norm, forward, 0);
}

em_tensor *em_fft_r2c(const em_tensor *x, int ndims, const int64_t *dims, em_fft_norm norm, bool onesided)
{
    static const char op[] = "fft_r2c";
    uint64_t mask;
    int last;
    if (check_args(x, false, ndims, dims, norm, op, &mask, &last) || check_lengths(x->sizes, x->ndim, mask, op))
        return NULL;
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, x->sizes, x->ndim * sizeof *sizes);
    if (onesided) sizes[last] = sizes[last] / 2 + 1;
    return run(EM_OP_fft_r2c, x, x->ndim, sizes, em_dtype_to_complex((em_dtype)x->dtype), mask, last, norm, onesided,
               0);
}

em_tensor *em_fft_c2r(const em_tensor *x, int ndims, const int64_t *dims, em_fft_norm norm, int64_t last_dim_size)
{
    static const char op[] = "fft_c2r";
    uint64_t mask;
    int last;
    if (check_args(x, true, ndims, dims, norm, op, &mask, &last)) return NULL;
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, x->sizes, x->ndim * sizeof *sizes);
    sizes[last] = last_dim_size;
    if (check_lengths(sizes, x->ndim, mask, op)) return NULL;
    if (x->sizes[last] != last_dim_size / 2 + 1)
        return em_fail(EM_ERR_SHAPE, "%s: expected %lld entries in dim %d for a real signal of length %lld, got %lld",
                       op, (long long)(last_dim_size / 2 + 1), last, (long long)last_dim_size,
                       (long long)x->sizes[last]), NULL;
    return run(EM_OP_fft_c2r, x, x->ndim, sizes, em_dtype_to_real((em_dtype)x->dtype), mask, last, norm, 0,
               last_dim_size);
}
