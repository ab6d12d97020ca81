/* The op layer of the nn activations that are not plain pointwise ops:
 * prelu, glu, rrelu (its slopes are an op of their own), and the
 * composites softsign and tanhshrink. Kernels: src/cpu/nnact.c. */
#include "../core/rng.h"
#include "run_new.h"

/* A floating dtype the activation kernels take, or the PyTorch-style error. */
static em_status check_float(const em_tensor *x, const char *kernel)
{
    if (!em_dtype_is_float((em_dtype)x->dtype))
        return em_fail(EM_ERR_DTYPE, "\"%s\" not implemented for '%s'", kernel, em_dtypes[x->dtype].scalar_name);
    return EM_OK;
}

em_tensor *em_prelu(const em_tensor *x, const em_tensor *weight)
{
    if (!x || !weight) return em_error(EM_ERR_VALUE, "prelu: argument is NULL");
    if (weight->ndim > 1)
        return em_error(EM_ERR_SHAPE, "prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = %d",
                        weight->ndim);
    int64_t channels = x->ndim >= 2 ? x->sizes[1] : 1, nw = em_numel(weight);
    if (nw != 1 && nw != channels)
        return em_error(EM_ERR_SHAPE, "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                        "= %lld and channel size = %lld.", (long long)nw, (long long)channels);
    if (check_float(x, "prelu_cpu")) return NULL;
    if (weight->dtype != x->dtype)
        return em_error(EM_ERR_DTYPE, "Found dtype %s but expected %s",
                        em_dtypes[weight->dtype].scalar_name, em_dtypes[x->dtype].scalar_name);
    em_call c = {.op = EM_OP_prelu, .nin = 2, .in = {x, weight}, .dtype = (em_dtype)x->dtype,
                 .operand_dtypes = {0, x->dtype, x->dtype}};
    return em_nn_run_new(&c, x->ndim, x->sizes, (em_dtype)x->dtype);
}

em_tensor *em_glu(const em_tensor *x, int dim)
{
    if (!x) return em_error(EM_ERR_VALUE, "glu: input is NULL");
    if (x->ndim == 0) return em_error(EM_ERR_SHAPE, "glu does not support scalars because halving size must be even");
    int d = em_wrap_dim(dim, x->ndim, "glu");
    if (d < 0) return NULL;
    if (x->sizes[d] % 2)
        return em_error(EM_ERR_SHAPE, "Halving dimension must be even, but dimension %d is size %lld", d,
                        (long long)x->sizes[d]);
    if (check_float(x, "glu_cpu")) return NULL;
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, x->sizes, sizeof sizes);
    sizes[d] /= 2;
    /* the kernel reads x as two operands, its halves */
    em_call c = {.op = EM_OP_glu, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .i = {d},
                 .operand_dtypes = {0, x->dtype, x->dtype}};
    return em_nn_run_new(&c, x->ndim, sizes, (em_dtype)x->dtype);
}

/* ---- rrelu ------------------------------------------------------------------- */
em_tensor *em_rrelu_noise(const em_tensor *x, double lower, double upper, em_generator *g)
{
    if (!x) return em_error(EM_ERR_VALUE, "rrelu: input is NULL");
    if (!(lower <= upper)) return em_error(EM_ERR_RUNTIME, "Lower bound should be less than or equal to the upper bound");
    if (check_float(x, "rrelu_with_noise_cpu")) return NULL;
    int wpe = x->dtype == EM_F64 ? 2 : 1; /* words per element: 53 or 24 random bits */
    uint64_t key, offset;
    em_generator *locked = em_rng_begin(g, &key, &offset);
    em_call c = {.op = EM_OP_rrelu_noise, .nin = 1, .in = {x}, .dtype = (em_dtype)x->dtype, .f = {lower, upper},
                 .i = {(int64_t)key, (int64_t)offset, wpe}, .operand_dtypes = {0, x->dtype}};
    em_tensor *noise = em_nn_run_new(&c, x->ndim, x->sizes, (em_dtype)x->dtype);
    em_rng_end(locked, noise ? em_rng_counters(em_numel(x), wpe) : 0);
    return noise;
}

/* Eval mode is leaky_relu with the mean slope; training multiplies by drawn
 * slopes (a recorded mul: its backward reuses them, and differentiates twice). */
static em_tensor *rrelu_slopes(const em_tensor *x, double lower, double upper, bool training, em_generator *g)
{
    if (!training) return NULL;
    bool grad = em_is_grad_enabled();
    em_set_grad_enabled(false);
    em_tensor *noise = em_rrelu_noise(x, lower, upper, g);
    em_set_grad_enabled(grad);
    return noise;
}

em_tensor *em_rrelu(const em_tensor *x, double lower, double upper, bool training, em_generator *g)
{
    if (!x) return em_error(EM_ERR_VALUE, "rrelu: input is NULL");
    if (!(lower <= upper)) return em_error(EM_ERR_RUNTIME, "Lower bound should be less than or equal to the upper bound");
    if (!training) return em_leaky_relu(x, (lower + upper) / 2);
    em_tensor *noise = rrelu_slopes(x, lower, upper, training, g);
    em_tensor *y = noise ? em_mul(x, noise) : NULL;
    em_release(noise);
    return y;
}

em_status em_rrelu_(em_tensor *x, double lower, double upper, bool training, em_generator *g)
{
    if (!x) return em_fail(EM_ERR_VALUE, "rrelu_: input is NULL");
    if (!(lower <= upper)) return em_fail(EM_ERR_RUNTIME, "Lower bound should be less than or equal to the upper bound");
    if (!training) return em_leaky_relu_(x, (lower + upper) / 2);
    em_tensor *noise = rrelu_slopes(x, lower, upper, training, g);
    em_status st = noise ? em_mul_(x, noise) : em_error_code();
    em_release(noise);
    return st;
}

/* ---- composites ----------------------------------------------------------------- */
em_tensor *em_softsign(const em_tensor *x)
{
    em_tensor *ax = em_abs(x), *one = em_scalar_int(1);
    em_tensor *den = ax && one ? em_add(ax, one, 1) : NULL;
    em_tensor *y = den ? em_div(x, den) : NULL;
    em_release(ax), em_release(one), em_release(den);
    return y;
}

em_tensor *em_tanhshrink(const em_tensor *x)
{
    em_tensor *t = em_tanh(x);
    em_tensor *y = t ? em_sub(x, t, 1) : NULL;
    em_release(t);
    return y;
}
