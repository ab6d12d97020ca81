/* Normalizations written with other ops: instance norm (batch norm of a
 * (1, N*C, *) view, as PyTorch does it) and local response norm. Autograd
 * differentiates them through their parts. */
#include "norm_common.h"

/* r repeated N times (C -> N*C), or NULL for NULL: a new reference. */
static em_tensor *repeat_or_null(const em_tensor *r, int64_t N, bool *failed)
{
    if (!r) return NULL;
    em_tensor *t = em_repeat(r, 1, &N);
    *failed |= !t;
    return t;
}

/* running = mean over the batch of the per-sample running stats `per` (N*C). */
static em_status fold_running(em_tensor *running, const em_tensor *per, int64_t N, int64_t C)
{
    if (!running) return EM_OK;
    bool grad = em_is_grad_enabled();
    em_set_grad_enabled(false);
    int64_t shape[2] = {N, C};
    int zero = 0;
    em_tensor *v = em_reshape(per, 2, shape), *m = v ? em_mean(v, 1, &zero, false, EM_DTYPE_NONE) : NULL;
    em_status st = m ? em_copy_(running, m) : em_error_code();
    em_release(v), em_release(m);
    em_set_grad_enabled(grad);
    return st;
}

em_tensor *em_instance_norm(const em_tensor *x, const em_tensor *weight, const em_tensor *bias,
                            em_tensor *running_mean, em_tensor *running_var, bool use_input_stats,
                            double momentum, double eps)
{
    if (!x) return em_error(EM_ERR_VALUE, "instance_norm: input is NULL");
    if (x->ndim < 2)
        return em_error(EM_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got 1)",
                        x->ndim ? -x->ndim : -1, x->ndim ? x->ndim - 1 : 0);
    int64_t N = x->sizes[0], C = x->sizes[1], shape[EM_MAX_DIMS];
    const em_tensor *ps[4] = {weight, bias, running_mean, running_var};
    static const char *names[4] = {"weight", "bias", "running_mean", "running_var"};
    for (int k = 0; k < 4; k++)
        if (ps[k] && em_numel(ps[k]) != C)
            return em_error(EM_ERR_RUNTIME, "%s should contain %lld elements not %lld", names[k], (long long)C,
                            (long long)em_numel(ps[k]));
    shape[0] = 1, shape[1] = N * C;
    memcpy(shape + 2, x->sizes + 2, (x->ndim - 2) * sizeof *shape);
    bool failed = false;
    em_tensor *w = repeat_or_null(weight, N, &failed), *b = repeat_or_null(bias, N, &failed);
    em_tensor *rm = repeat_or_null(running_mean, N, &failed), *rv = repeat_or_null(running_var, N, &failed);
    em_tensor *xr = failed ? NULL : em_reshape(x, x->ndim, shape);
    em_tensor *yr = xr ? em_batch_norm(xr, w, b, rm, rv, use_input_stats, momentum, eps) : NULL;
    em_tensor *y = yr ? em_reshape(yr, x->ndim, x->sizes) : NULL;
    if (y && use_input_stats && (fold_running(running_mean, rm, N, C) || fold_running(running_var, rv, N, C))) {
        em_release(y);
        y = NULL;
    }
    em_release(w), em_release(b), em_release(rm), em_release(rv), em_release(xr), em_release(yr);
    return y;
}

em_tensor *em_local_response_norm(const em_tensor *x, int64_t size, double alpha, double beta, double k)
{
    if (!x) return em_error(EM_ERR_VALUE, "local_response_norm: input is NULL");
    if (x->ndim < 3)
        return em_error(EM_ERR_VALUE, "Expected 3D or higher dimensionality input (got %d dimensions)", x->ndim);
    if (size < 1) return em_error(EM_ERR_VALUE, "local_response_norm: size must be positive, got %lld", (long long)size);
    if (em_numel(x) == 0) return em_retain((em_tensor *)x);
    /* the channel window of x^2: zero-padded by size / 2 before and
     * (size - 1) / 2 after, summed as `size` shifted slices */
    int64_t C = x->sizes[1], pad[EM_MAX_DIMS];
    memcpy(pad, x->sizes, x->ndim * sizeof *pad);
    em_tensor *sq = em_mul(x, x), *parts[3] = {NULL, sq, NULL};
    pad[1] = size / 2;
    parts[0] = sq ? em_zeros(x->ndim, pad, (em_dtype)sq->dtype) : NULL;
    pad[1] = (size - 1) / 2;
    parts[2] = parts[0] ? em_zeros(x->ndim, pad, (em_dtype)sq->dtype) : NULL;
    em_tensor *padded = parts[2] ? em_cat(3, (const em_tensor *const *)parts, 1) : NULL;
    em_tensor *sum = padded ? em_narrow(padded, 1, 0, C) : NULL;
    for (int64_t j = 1; j < size && sum; j++) {
        em_tensor *s = em_narrow(padded, 1, j, C), *t = s ? em_add(sum, s, 1) : NULL;
        em_release(s), em_release(sum);
        sum = t;
    }
    em_tensor *ka = em_scalar_float(alpha / (double)size), *kk = em_scalar_float(k), *kb = em_scalar_float(beta);
    em_tensor *scaled = sum ? em_mul(sum, ka) : NULL, *div = scaled ? em_add(scaled, kk, 1) : NULL;
    em_tensor *p = div ? em_pow(div, kb) : NULL, *y = p ? em_div(x, p) : NULL;
    em_release(sq), em_release(parts[0]), em_release(parts[2]), em_release(padded), em_release(sum);
    em_release(ka), em_release(kk), em_release(kb), em_release(scaled), em_release(div), em_release(p);
    return y;
}
