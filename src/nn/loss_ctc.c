/* The op layer of the CTC loss: argument checks, the batched op
 * (em_ctc_loss_raw: per-sample NLL and log alpha) and its backward op, and
 * em_ctc_loss, which adds the unbatched form, zero_infinity and the
 * reduction as recorded ops on the per-sample losses. */
#include "../ops/autocast.h"
#include "loss_common.h"
#include <math.h>

#define CTC_CALL(c, lp, S, W, blank, zero_inf)                                                     \
    do {                                                                                           \
        (c).dtype = (em_dtype)(lp)->dtype;                                                         \
        (c).i[0] = (blank), (c).i[1] = (zero_inf), (c).i[2] = (lp)->sizes[1];                      \
        (c).i[3] = (lp)->sizes[0], (c).i[4] = (lp)->sizes[2], (c).i[5] = (W), (c).i[6] = (S);      \
    } while (0)

static em_status check_raw(const em_tensor *lp, const em_tensor *targets, const em_tensor *lengths, int64_t blank)
{
    if (!lp || !targets || !lengths) return em_fail(EM_ERR_VALUE, "ctc_loss: a tensor argument is NULL");
    if (lp->dtype != EM_F32 && lp->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "\"ctc_loss_cpu\" not implemented for '%s'",
                       em_dtype_scalar_name((em_dtype)lp->dtype));
    if (lp->ndim != 3) return em_fail(EM_ERR_SHAPE, "ctc_loss: log_probs must be 3-d (T, N, C), got %d-d", lp->ndim);
    int64_t N = lp->sizes[1], C = lp->sizes[2];
    if (!em_dtype_is_int((em_dtype)targets->dtype))
        return em_fail(EM_ERR_DTYPE, "ctc_loss: targets must be integral, got %s", em_dtype_name((em_dtype)targets->dtype));
    if (!(targets->ndim == 1 || (targets->ndim == 2 && targets->sizes[0] == N)))
        return em_fail(EM_ERR_SHAPE, "ctc_loss: targets must be (N, S) padded or 1-d concatenated, got %s for batch %lld",
                       em_shape_str(targets->ndim, targets->sizes), (long long)N);
    if (lengths->dtype != EM_I64 || lengths->ndim != 2 || lengths->sizes[0] != 2 || lengths->sizes[1] != N)
        return em_fail(EM_ERR_SHAPE, "ctc_loss: lengths must be (2, %lld) int64", (long long)N);
    if (blank < 0 || blank >= C) return em_fail(EM_ERR_RUNTIME, "blank must be in label range");
    return EM_OK;
}

/* The padded width (-1: concatenated) and the alpha width from the longest target. */
static em_status ctc_widths(const em_tensor *targets, const em_tensor *lengths, int64_t *S, int64_t *W)
{
    *S = targets->ndim == 2 ? targets->sizes[1] : -1;
    double mx = 0;
    if (lengths->sizes[1] > 0) {
        em_tensor *tl = em_select(lengths, 0, 1), *m = tl ? em_max(tl) : NULL;
        em_status st = m ? (em_status)em_item(m, &mx) : em_error_code();
        em_release(tl);
        em_release(m);
        if (st) return st;
    }
    *W = 2 * (int64_t)(mx > 0 ? mx : 0) + 1;
    return EM_OK;
}

em_status em_ctc_loss_raw(const em_tensor *lp, const em_tensor *targets, const em_tensor *lengths, int64_t blank,
                          bool zero_infinity, em_tensor **nll, em_tensor **log_alpha)
{
    if (EM_NULL(nll) || EM_NULL(log_alpha) || EM_NULL(lp) || EM_NULL(targets) || EM_NULL(lengths)) return em_error_code();
    *nll = *log_alpha = NULL;
    int64_t S, W;
    if (check_raw(lp, targets, lengths, blank) || ctc_widths(targets, lengths, &S, &W)) return em_error_code();
    em_call c = {.op = EM_OP_ctc_loss, .nin = 3, .nout = 2};
    CTC_CALL(c, lp, S, W, blank, zero_infinity);
    em_tensor *lpc = em_contiguous(lp), *tc = em_loss_operand(targets, EM_I64, targets->ndim, targets->sizes);
    em_tensor *lc = em_contiguous(lengths);
    em_tensor *a = em_tensor_new(1, (int64_t[]){lp->sizes[1]}, c.dtype, lp->storage->device);
    em_tensor *b = em_tensor_new(3, (int64_t[]){lp->sizes[1], lp->sizes[0], W}, c.dtype, lp->storage->device);
    em_status st = lpc && tc && lc && a && b ? EM_OK : em_error_code();
    if (st == EM_OK) {
        c.in[0] = lpc, c.in[1] = tc, c.in[2] = lc, c.out[0] = a, c.out[1] = b;
        st = em_dispatch(&c);
    }
    em_release(lpc), em_release(tc), em_release(lc);
    if (st) {
        em_release(a), em_release(b);
        return st;
    }
    *nll = a, *log_alpha = b;
    return EM_OK;
}

em_tensor *em_ctc_loss_backward(const em_tensor *grad, const em_tensor *lp, const em_tensor *targets,
                                const em_tensor *lengths, const em_tensor *nll, const em_tensor *log_alpha,
                                int64_t blank, bool zero_infinity)
{
    int64_t S, W;
    if (check_raw(lp, targets, lengths, blank) || ctc_widths(targets, lengths, &S, &W)) return NULL;
    int64_t N = lp->sizes[1];
    if (!grad || !nll || !log_alpha || em_numel(grad) != N || em_numel(nll) != N ||
        em_numel(log_alpha) != N * lp->sizes[0] * W)
        return em_error(EM_ERR_SHAPE, "ctc_loss_backward: grad, nll or log_alpha do not fit log_probs %s",
                        lp ? em_shape_str(lp->ndim, lp->sizes) : "");
    em_call c = {.op = EM_OP_ctc_loss_backward, .nin = 6, .nout = 1};
    CTC_CALL(c, lp, S, W, blank, zero_infinity);
    em_dtype dt = c.dtype;
    em_tensor *in[6] = {em_loss_operand(grad, dt, 1, (int64_t[]){N}), em_contiguous(lp),
                        em_loss_operand(targets, EM_I64, targets->ndim, targets->sizes), em_contiguous(lengths),
                        em_loss_operand(nll, dt, 1, (int64_t[]){N}),
                        em_loss_operand(log_alpha, dt, log_alpha->ndim, log_alpha->sizes)};
    em_tensor *gx = em_tensor_new(3, lp->sizes, dt, lp->storage->device), *result = NULL;
    bool ok = gx != NULL;
    for (int k = 0; k < 6; k++) ok = ok && in[k], c.in[k] = in[k];
    c.out[0] = gx;
    if (ok && em_dispatch(&c) == EM_OK) result = em_retain(gx);
    for (int k = 0; k < 6; k++) em_release(in[k]);
    em_release(gx);
    return result;
}

/* lengths as an (N) int64 tensor: an (N) or (for the unbatched form) 0-d/1-element integral tensor */
static em_tensor *lengths_of(const em_tensor *l, int64_t N, const char *what)
{
    if (!l || !(em_dtype_is_int((em_dtype)l->dtype)) || em_numel(l) != N || l->ndim > 1)
        return em_error(EM_ERR_RUNTIME, "ctc_loss: %s must be %lld integral lengths%s%s", what, (long long)N,
                        l ? ", got " : "", l ? em_shape_str(l->ndim, l->sizes) : "");
    em_tensor *r = em_reshape(l, 1, (int64_t[]){N});
    em_tensor *c = r ? em_to_dtype(r, EM_I64) : NULL;
    em_release(r);
    return c;
}

em_tensor *em_ctc_loss(const em_tensor *log_probs, const em_tensor *targets, const em_tensor *input_lengths,
                       const em_tensor *target_lengths, int64_t blank, em_reduction reduction, bool zero_infinity)
{
    if (!log_probs || !targets) return em_error(EM_ERR_VALUE, "ctc_loss: a tensor argument is NULL");
    EM_AUTOCAST(EM_AUTOCAST_FP32, em_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                                              zero_infinity), &log_probs);
    if (em_loss_check_reduction(reduction, "ctc_loss")) return NULL;
    bool unbatched = log_probs->ndim == 2;
    if (log_probs->ndim != 2 && log_probs->ndim != 3)
        return em_error(EM_ERR_SHAPE, "ctc_loss: log_probs must be (T, N, C) or (T, C), got %s",
                        em_shape_str(log_probs->ndim, log_probs->sizes));
    int64_t N = unbatched ? 1 : log_probs->sizes[1];
    em_tensor *lp = unbatched ? em_unsqueeze(log_probs, 1) : em_retain((em_tensor *)log_probs);
    em_tensor *tg = unbatched && targets->ndim == 1 ? em_unsqueeze(targets, 0) : em_retain((em_tensor *)targets);
    em_tensor *il = lengths_of(input_lengths, N, "input_lengths");
    em_tensor *tl = il ? lengths_of(target_lengths, N, "target_lengths") : NULL;
    em_tensor *lengths = tl ? em_stack(2, (const em_tensor *[]){il, tl}, 0) : NULL;
    em_tensor *nll = NULL, *alpha = NULL, *r = NULL;
    if (lp && tg && lengths && em_ctc_loss_raw(lp, tg, lengths, blank, zero_infinity, &nll, &alpha) == EM_OK) {
        if (zero_infinity) { /* inf -> 0, so their gradient is 0 too */
            em_tensor *inf = em_isinf(nll), *zero = inf ? em_scalar_float(0) : NULL;
            em_tensor *z = zero ? em_where(inf, zero, nll) : NULL;
            em_release(inf), em_release(zero), em_release(nll);
            nll = z;
        }
        if (!nll) r = NULL;
        else if (reduction == EM_REDUCTION_SUM) r = em_sum(nll, 0, NULL, false, EM_DTYPE_NONE);
        else if (reduction == EM_REDUCTION_NONE) r = unbatched ? em_squeeze_dim(nll, 0) : em_retain(nll);
        else {
            em_tensor *d = em_clamp(tl, 1, NAN), *q = d ? em_div(nll, d) : NULL;
            r = q ? em_mean(q, 0, NULL, false, EM_DTYPE_NONE) : NULL;
            em_release(d), em_release(q);
        }
    }
    em_release(lp), em_release(tg), em_release(il), em_release(tl), em_release(lengths);
    em_release(nll), em_release(alpha);
    return r;
}
