/* The op layer of batch_norm and batch_norm_backward (layout in
 * norm_call.h). Running statistics travel in the call's `arg`, so autograd
 * neither records their in-place update nor saves them; the eval-mode
 * statistics the backward needs come back as the op's outputs 1 and 2. */
#include "norm_common.h"

/* Sizes and dtypes of batch norm's arguments, as PyTorch checks them. */
static em_status check_batch_norm(const em_tensor *x, const em_tensor *const *params, bool training)
{
    static const char *names[4] = {"weight", "bias", "running_mean", "running_var"};
    if (!x) return em_fail(EM_ERR_VALUE, "batch_norm: input is NULL");
    if (x->ndim < 2)
        return em_fail(EM_ERR_INDEX, "Dimension out of range (expected to be in range of [%d, %d], but got 1)",
                       x->ndim ? -x->ndim : -1, x->ndim ? x->ndim - 1 : 0);
    if (norm_compute_dtype(x, "batch_norm") == EM_DTYPE_NONE) return em_error_code();
    for (int k = 0; k < 4; k++) {
        const em_tensor *p = params[k];
        if (!p) {
            if (k >= 2 && !training) return em_fail(EM_ERR_RUNTIME, "%s must be defined in evaluation mode", names[k]);
            continue;
        }
        if (em_numel(p) != x->sizes[1])
            return em_fail(EM_ERR_RUNTIME, "%s should contain %lld elements not %lld", names[k],
                           (long long)x->sizes[1], (long long)em_numel(p));
        char msg[96];
        snprintf(msg, sizeof msg, "mixed dtype (CPU): expect parameter to have scalar type of %s",
                 em_dtype_scalar_name((em_dtype)x->dtype));
        if (norm_check_param_dtype(p, x, msg)) return em_error_code();
    }
    return EM_OK;
}

static int64_t spatial_size(const em_tensor *x) { return em_shape_numel(x->ndim - 2, x->sizes + 2); }

/* A running stat the kernel can write as dt: r itself, or a copy (copied
 * back by running_done). A new reference; NULL with r NULL. */
static em_tensor *running_as(em_tensor *r, em_dtype dt) { return r ? em_to_dtype(r, dt) : NULL; }
static em_status running_done(em_tensor *r, em_tensor *work, bool written)
{
    em_status st = EM_OK;
    if (r && written) {
        if (work != r) st = em_copy_(r, work);
        else em_bump_version(r);
    }
    em_release(work);
    return st;
}

em_status em_native_batch_norm(em_tensor **out, const em_tensor *x, const em_tensor *weight,
                               const em_tensor *bias, em_tensor *running_mean, em_tensor *running_var,
                               bool training, double momentum, double eps)
{
    if (EM_NULL(out) || EM_NULL(x)) return em_error_code();
    out[0] = out[1] = out[2] = NULL;
    const em_tensor *params[4] = {weight, bias, running_mean, running_var};
    if (check_batch_norm(x, params, training)) return em_error_code();
    em_dtype dt = norm_compute_dtype(x, "batch_norm");
    int64_t N = x->sizes[0], C = x->sizes[1], S = spatial_size(x);
    em_tensor *xc = norm_input(x, dt), *w = norm_param(weight, dt, 1, &C, 1), *b = norm_param(bias, dt, 1, &C, 0);
    norm_running run = {running_as(running_mean, dt), running_as(running_var, dt)};
    em_device dev = x->storage->device;
    out[0] = em_tensor_new(x->ndim, x->sizes, dt, dev);
    out[1] = em_tensor_new(1, &C, dt, dev);
    out[2] = em_tensor_new(1, &C, dt, dev);
    em_status st = EM_OK;
    if (!xc || !w || !b || (running_mean && !run.mean) || (running_var && !run.var) || !out[0] || !out[1] || !out[2])
        st = em_error_code() ? em_error_code() : EM_ERR_MEMORY;
    if (st == EM_OK) {
        em_call c = {.op = EM_OP_batch_norm, .nin = 3, .nout = 3, .dtype = dt, .arg = &run,
                     .in = {xc, w, b}, .out = {out[0], out[1], out[2]},
                     .i = {N, C, S, training}, .f = {momentum, eps}};
        for (int k = 0; k < 6; k++) c.operand_dtypes[k] = dt;
        st = em_dispatch(&c);
    }
    bool wrote = st == EM_OK && training && N * S > 0;
    em_status st2 = running_done(running_mean, run.mean, wrote);
    em_status st3 = running_done(running_var, run.var, wrote);
    st = st ? st : st2 ? st2 : st3;
    em_release(xc), em_release(w), em_release(b);
    if (st == EM_OK && dt != x->dtype) { /* bfloat16: the result in x's dtype (recorded) */
        em_tensor *y = em_to_dtype(out[0], (em_dtype)x->dtype);
        em_release(out[0]);
        out[0] = y;
        if (!y) st = em_error_code();
    }
    return st ? norm_fail(out, 3) : EM_OK;
}

em_tensor *em_batch_norm(const em_tensor *x, const em_tensor *weight, const em_tensor *bias,
                         em_tensor *running_mean, em_tensor *running_var, bool training, double momentum,
                         double eps)
{
    em_tensor *out[3];
    if (x && em_numel(x) == 0) return em_clone(x); /* PyTorch checks nothing else on an empty input */
    if (em_native_batch_norm(out, x, weight, bias, running_mean, running_var, training, momentum, eps)) return NULL;
    em_release(out[1]);
    em_release(out[2]);
    return em_in_format(out[0], em_suggest_memory_format(x)); /* keeps channels_last(_3d), as PyTorch */
}

em_status em_batch_norm_backward(em_tensor **grads, const bool *mask, const em_tensor *grad_out,
                                 const em_tensor *x, const em_tensor *weight, const em_tensor *save_mean,
                                 const em_tensor *save_invstd, bool training)
{
    if (EM_NULL(grads) || EM_NULL(mask) || EM_NULL(grad_out) || EM_NULL(x)) return em_error_code();
    grads[0] = grads[1] = grads[2] = NULL;
    const em_tensor *params[4] = {weight, NULL, save_mean, save_invstd};
    if (!grad_out || !save_mean || !save_invstd) return em_fail(EM_ERR_VALUE, "batch_norm_backward: argument is NULL");
    if (check_batch_norm(x, params, true)) return em_error_code();
    if (grad_out->ndim != x->ndim || memcmp(grad_out->sizes, x->sizes, x->ndim * sizeof *x->sizes))
        return em_fail(EM_ERR_SHAPE, "batch_norm_backward: grad_out of size %s does not match input of size %s",
                       em_shape_str(grad_out->ndim, grad_out->sizes), em_shape_str(x->ndim, x->sizes));
    em_dtype dt = norm_compute_dtype(x, "batch_norm_backward");
    int64_t N = x->sizes[0], C = x->sizes[1], S = spatial_size(x);
    em_tensor *in[5] = {norm_input(grad_out, dt), norm_input(x, dt), norm_param(weight, dt, 1, &C, 1),
                        norm_param(save_mean, dt, 1, &C, 0), norm_param(save_invstd, dt, 1, &C, 0)};
    em_status st = EM_OK;
    for (int k = 0; k < 5; k++)
        if (!in[k]) st = em_error_code() ? em_error_code() : EM_ERR_MEMORY;
    for (int k = 0; k < 3 && st == EM_OK; k++)
        if (mask[k] && !(grads[k] = k ? em_tensor_new(1, &C, dt, x->storage->device)
                                       : em_tensor_new(x->ndim, x->sizes, dt, x->storage->device)))
            st = em_error_code();
    if (st == EM_OK) {
        em_call c = {.op = EM_OP_batch_norm_backward, .nin = 5, .nout = 3, .dtype = dt,
                     .in = {in[0], in[1], in[2], in[3], in[4]}, .out = {grads[0], grads[1], grads[2]},
                     .i = {N, C, S, training}};
        for (int k = 0; k < 8; k++) c.operand_dtypes[k] = dt;
        st = em_dispatch(&c);
    }
    for (int k = 0; k < 5; k++) em_release(in[k]);
    return st ? norm_fail(grads, 3) : EM_OK;
}
