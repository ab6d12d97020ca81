/* One recurrent layer over a whole sequence, one direction (include/ember/
 * rnn.h): the op layer of the fused recurrence (rnn_recurrence) and of its
 * backward (rnn_recurrence_backward), and em_rnn_layer, which is the input
 * projection of every step (one recorded addmm) followed by the recurrence
 * (one recorded op, whose backward is backpropagation through time in one
 * kernel). */
#include "../ops/dispatch.h"
#include "ember/ember.h"
#include "rnn_internal.h"
#include <stdlib.h>

static const char *const layer_name = "rnn_layer";

/* T >= 1 steps of non-increasing positive batch sizes summing to n_rows. */
static em_status check_batch_sizes(const char *op, int64_t n_rows, int64_t T, const int64_t *bs)
{
    if (T < 1) return em_fail(EM_ERR_VALUE, "%s: expected at least one step, got %lld", op, (long long)T);
    if (!bs) return EM_OK;
    int64_t sum = 0;
    for (int64_t t = 0; t < T; t++) {
        if (bs[t] < 1 || (t && bs[t] > bs[t - 1]))
            return em_fail(EM_ERR_VALUE, "%s: batch_sizes must be positive and non-increasing, got %lld at step "
                           "%lld", op, (long long)bs[t], (long long)t);
        sum += bs[t];
    }
    if (n_rows != sum)
        return em_fail(EM_ERR_SHAPE, "%s: expected packed data of %lld rows (the sum of batch_sizes), but got %lld",
                       op, (long long)sum, (long long)n_rows);
    return EM_OK;
}

/* t is NULL (when !want), or a float tensor of ref's dtype and size (d0, d1)
 * (d1 < 0: 1-d). */
static em_status check_operand(const char *op, const char *name, const em_tensor *t, bool want, const em_tensor *ref,
                               int64_t d0, int64_t d1)
{
    if (!t) return want ? em_fail(EM_ERR_VALUE, "%s: %s is NULL", op, name) : EM_OK;
    if (!want) return em_fail(EM_ERR_VALUE, "%s: %s is not taken in this mode (pass NULL)", op, name);
    if (t->dtype != EM_F32 && t->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", op,
                       em_dtype_scalar_name((em_dtype)t->dtype));
    if (t->dtype != ref->dtype)
        return em_fail(EM_ERR_DTYPE, "%s: expected %s to have dtype %s, but got %s", op, name,
                       em_dtype_scalar_name((em_dtype)ref->dtype), em_dtype_scalar_name((em_dtype)t->dtype));
    if (d1 < 0 && (t->ndim != 1 || t->sizes[0] != d0))
        return em_fail(EM_ERR_SHAPE, "%s: expected %s of size [%lld], but got %s", op, name, (long long)d0,
                       em_shape_str(t->ndim, t->sizes));
    if (d1 >= 0 && (t->ndim != 2 || t->sizes[0] != d0 || t->sizes[1] != d1))
        return em_fail(EM_ERR_SHAPE, "%s: expected %s of size [%lld, %lld], but got %s", op, name, (long long)d0,
                       (long long)d1, em_shape_str(t->ndim, t->sizes));
    return EM_OK;
}

/* The geometry of a recurrence: N rows, B = hx's, state width P, hidden H. */
typedef struct geom {
    int64_t N, B, P, H, GH;
} geom;

/* The checks shared by the recurrence and its backward: mode, hx (B, P),
 * w_hh (G*H, P), w_hr (P, H) for an LSTM with projection (else P == H), cx
 * (B, H) exactly for an LSTM, the steps over N rows. */
static em_status check_recurrence(const char *op, em_rnn_mode mode, int64_t N, int64_t T, const int64_t *bs,
                                  const em_tensor *hx, const em_tensor *cx, const em_tensor *w_hh,
                                  const em_tensor *w_hr, geom *g)
{
    if (mode < EM_RNN_TANH || mode > EM_RNN_GRU) return em_fail(EM_ERR_VALUE, "%s: unknown mode %d", op, mode);
    if (!hx || !w_hh) return em_fail(EM_ERR_VALUE, "%s: hx and w_hh are required", op);
    const int G = em_rnn_gates_of[mode];
    if (hx->ndim != 2 || w_hh->ndim != 2 || w_hh->sizes[0] % G || w_hh->sizes[0] < G)
        return em_fail(EM_ERR_SHAPE, "%s: expected hx (batch, P) and w_hh (%d * hidden_size, P), but got %s and %s",
                       op, G, em_shape_str(hx->ndim, hx->sizes), em_shape_str(w_hh->ndim, w_hh->sizes));
    *g = (geom){.N = N, .B = hx->sizes[0], .P = hx->sizes[1], .H = w_hh->sizes[0] / G, .GH = w_hh->sizes[0]};
    if (check_operand(op, "w_hh", w_hh, true, hx, g->GH, g->P) || check_operand(op, "hx", hx, true, hx, g->B, g->P) ||
        check_operand(op, "w_hr", w_hr, w_hr != NULL && mode == EM_RNN_LSTM, hx, g->P, g->H) ||
        check_operand(op, "cx", cx, mode == EM_RNN_LSTM, hx, g->B, g->H))
        return em_error_code();
    if (!w_hr && g->P != g->H)
        return em_fail(EM_ERR_SHAPE, "%s: expected hx of width hidden_size %lld (no projection), but got %lld", op,
                       (long long)g->H, (long long)g->P);
    if (check_batch_sizes(op, N, T, bs)) return em_error_code();
    if (bs ? bs[0] != g->B : N != T * g->B)
        return em_fail(EM_ERR_SHAPE, "%s: %lld rows over %lld steps do not match hx's batch size %lld", op,
                       (long long)N, (long long)T, (long long)g->B);
    return EM_OK;
}

/* Contiguous versions of c's operands (new references in tmp[]), which the
 * kernels need; the call's in[] point to them. */
static em_status make_contiguous(em_call *c, em_tensor **tmp)
{
    for (int k = 0; k < c->nin; k++) {
        if (!c->in[k]) continue;
        if (!(tmp[k] = em_contiguous(c->in[k]))) return em_error_code();
        c->in[k] = tmp[k];
    }
    return EM_OK;
}
static void release_all(em_tensor **t, int n)
{
    for (int k = 0; k < n; k++) em_release(t[k]), t[k] = NULL;
}

em_status em_rnn_recurrence(em_rnn_mode mode, const em_tensor *igates, int64_t nsteps, const int64_t *batch_sizes,
                            const em_tensor *hx, const em_tensor *cx, const em_tensor *w_hh, const em_tensor *b_hh,
                            const em_tensor *w_hr, bool reverse, em_tensor **output, em_tensor **hy, em_tensor **cy,
                            em_tensor **workspace)
{
    const char *op = "rnn_recurrence";
    geom g;
    if (!igates) return em_fail(EM_ERR_VALUE, "%s: igates is NULL", op);
    if (igates->ndim != 2)
        return em_fail(EM_ERR_SHAPE, "%s: expected igates to be 2-d (rows, gates), but got %s", op,
                       em_shape_str(igates->ndim, igates->sizes));
    if (check_recurrence(op, mode, igates->sizes[0], nsteps, batch_sizes, hx, cx, w_hh, w_hr, &g) ||
        check_operand(op, "igates", igates, true, hx, g.N, g.GH) ||
        check_operand(op, "b_hh", b_hh, b_hh && mode == EM_RNN_GRU, hx, g.GH, -1))
        return em_error_code();
    const em_device dev = hx->storage->device;
    const em_dtype dt = (em_dtype)hx->dtype;
    em_tensor *tmp[EM_CALL_MAX_IN] = {0}, *bs = NULL;
    if (batch_sizes && !(bs = em_from_data(batch_sizes, 1, &nsteps, EM_I64))) return em_error_code();
    em_call c = {.op = EM_OP_rnn_recurrence, .nin = 6, .nout = 4, .dtype = dt,
                 .in = {igates, hx, w_hh, bs, mode == EM_RNN_LSTM ? cx : b_hh, w_hr},
                 .i = {mode, reverse, nsteps}};
    const int64_t W = em_rnn_workspace_of[mode] * g.H;
    em_status st = make_contiguous(&c, tmp);
    if (st == EM_OK) {
        c.out[0] = em_tensor_new(2, (const int64_t[]){g.N, g.P}, dt, dev);
        c.out[1] = em_tensor_new(2, (const int64_t[]){g.B, g.P}, dt, dev);
        if (mode == EM_RNN_LSTM) c.out[2] = em_tensor_new(2, (const int64_t[]){g.B, g.H}, dt, dev);
        if (W) c.out[3] = em_tensor_new(2, (const int64_t[]){g.N, W}, dt, dev);
        if (!c.out[0] || !c.out[1] || (mode == EM_RNN_LSTM && !c.out[2]) || (W && !c.out[3])) st = em_error_code();
    }
    if (st == EM_OK) st = em_dispatch(&c);
    release_all(tmp, EM_CALL_MAX_IN);
    em_release(bs);
    if (st) {
        release_all(c.out, 4);
        return st;
    }
    *output = c.out[0], *hy = c.out[1];
    if (cy) *cy = c.out[2];
    else em_release(c.out[2]);
    if (workspace) *workspace = c.out[3];
    else em_release(c.out[3]);
    return EM_OK;
}

/* Any operand requiring grad while grad mode is on: this op has no
 * derivative (double backward through the fused layer), refused loudly. */
static em_status refuse_recording(const em_tensor *const *ts, int n)
{
    if (!em_is_grad_enabled()) return EM_OK;
    for (int k = 0; k < n; k++)
        if (ts[k] && em_requires_grad(ts[k]))
            return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for 'rnn_recurrence_backward' is not implemented "
                           "(double backward through the fused recurrent layer)");
    return EM_OK;
}

em_status em_rnn_recurrence_backward(em_rnn_mode mode, const em_tensor *grad_output, const em_tensor *grad_hy,
                                     const em_tensor *grad_cy, const em_tensor *output, const em_tensor *workspace,
                                     int64_t nsteps, const int64_t *batch_sizes, const em_tensor *hx,
                                     const em_tensor *cx, const em_tensor *w_hh, bool with_b_hh,
                                     const em_tensor *w_hr, bool reverse, em_rnn_grads *grads)
{
    const char *op = "rnn_recurrence_backward";
    geom g;
    if (!output || !grads) return em_fail(EM_ERR_VALUE, "%s: output and grads are required", op);
    if (output->ndim != 2)
        return em_fail(EM_ERR_SHAPE, "%s: expected output to be 2-d (rows, P), but got %s", op,
                       em_shape_str(output->ndim, output->sizes));
    const int64_t W = mode >= EM_RNN_TANH && mode <= EM_RNN_GRU ? em_rnn_workspace_of[mode] : 0;
    if (check_recurrence(op, mode, output->sizes[0], nsteps, batch_sizes, hx, cx, w_hh, w_hr, &g) ||
        check_operand(op, "output", output, true, hx, g.N, g.P) ||
        check_operand(op, "grad_output", grad_output, grad_output != NULL, hx, g.N, g.P) ||
        check_operand(op, "grad_hy", grad_hy, grad_hy != NULL, hx, g.B, g.P) ||
        check_operand(op, "grad_cy", grad_cy, grad_cy && mode == EM_RNN_LSTM, hx, g.B, g.H) ||
        check_operand(op, "workspace", workspace, W != 0, hx, g.N, W * g.H) ||
        refuse_recording((const em_tensor *[]){grad_output, grad_hy, grad_cy, output, workspace, hx, cx, w_hh, w_hr},
                         9))
        return em_error_code();
    const em_device dev = hx->storage->device;
    const em_dtype dt = (em_dtype)hx->dtype;
    em_tensor *tmp[EM_CALL_MAX_IN] = {0}, *extra[3] = {0};
    em_call c = {.op = EM_OP_rnn_recurrence_backward, .nin = 6, .nout = 4, .dtype = dt,
                 .in = {grad_output, grad_hy, grad_cy, output, workspace, w_hh}, .i = {mode, reverse, nsteps}};
    em_status st = make_contiguous(&c, tmp);
    /* hx, cx, w_hr travel in the arg: contiguous too */
    const em_tensor *xs[3] = {hx, cx, w_hr};
    for (int k = 0; k < 3 && st == EM_OK; k++)
        if (xs[k] && !(extra[k] = em_contiguous(xs[k]))) st = em_error_code();
    em_rnn_backward_arg arg = {.hx = extra[0], .cx = extra[1], .w_hr = extra[2], .batch_sizes = batch_sizes};
    em_tensor *more[2] = {0};
    if (st == EM_OK) {
        c.out[0] = em_tensor_new(2, (const int64_t[]){g.N, g.GH}, dt, dev);
        c.out[1] = em_tensor_new(2, (const int64_t[]){g.B, g.P}, dt, dev);
        if (mode == EM_RNN_LSTM) c.out[2] = em_tensor_new(2, (const int64_t[]){g.B, g.H}, dt, dev);
        c.out[3] = em_tensor_new(2, (const int64_t[]){g.GH, g.P}, dt, dev);
        if (with_b_hh && mode == EM_RNN_GRU) more[0] = em_tensor_new(1, &g.GH, dt, dev);
        if (w_hr) more[1] = em_tensor_new(2, (const int64_t[]){g.P, g.H}, dt, dev);
        if (!c.out[0] || !c.out[1] || (mode == EM_RNN_LSTM && !c.out[2]) || !c.out[3] ||
            (with_b_hh && mode == EM_RNN_GRU && !more[0]) || (w_hr && !more[1]))
            st = em_error_code();
        arg.grad_b_hh = more[0], arg.grad_w_hr = more[1];
        c.arg = &arg;
    }
    if (st == EM_OK) st = em_dispatch(&c);
    if (st == EM_OK) { /* the arg's results were written too */
        for (int k = 0; k < 2; k++)
            if (more[k]) em_bump_version(more[k]);
    }
    release_all(tmp, EM_CALL_MAX_IN);
    release_all(extra, 3);
    if (st) {
        release_all(c.out, 4);
        release_all(more, 2);
        return st;
    }
    *grads = (em_rnn_grads){c.out[0], c.out[1], c.out[2], c.out[3], more[0], more[1]};
    return EM_OK;
}

/* ---- the layer --------------------------------------------------------------- */
/* The argument checks: the layout, then the cell's checks on the first
 * step's rows with the initial states. *x2 gets x as (N, I) rows. */
static em_status check_layer(em_rnn_mode mode, const em_tensor *x, int64_t T, const int64_t *bs,
                             const em_tensor *hx, const em_tensor *cx, const em_rnn_weights *w, em_tensor **x2)
{
    if (mode < EM_RNN_TANH || mode > EM_RNN_GRU) return em_fail(EM_ERR_VALUE, "%s: unknown mode %d", layer_name, mode);
    if (!x || !w || !hx || (mode == EM_RNN_LSTM) != (cx != NULL) || (w->w_hr && mode != EM_RNN_LSTM))
        return em_fail(EM_ERR_VALUE, "%s: expected x, weights, hx, and cx (and w_hr) exactly for an LSTM",
                       layer_name);
    if (bs) {
        if (x->ndim != 2)
            return em_fail(EM_ERR_SHAPE, "%s: expected packed data (rows, input_size), but got %s", layer_name,
                           em_shape_str(x->ndim, x->sizes));
        if (check_batch_sizes(layer_name, x->sizes[0], T, bs)) return em_error_code();
    } else if (x->ndim != 3 || x->sizes[0] < 1) {
        return em_fail(EM_ERR_SHAPE, "%s: expected input of size (seq_len >= 1, batch, input_size), but got %s",
                       layer_name, em_shape_str(x->ndim, x->sizes));
    }
    *x2 = bs ? em_retain((em_tensor *)x) : em_reshape(x, 2, (const int64_t[]){x->sizes[0] * x->sizes[1], -1});
    em_tensor *first = *x2 ? em_narrow(*x2, 0, 0, bs ? bs[0] : x->sizes[1]) : NULL;
    em_status st = first ? em_rnn_check_cell(layer_name, em_rnn_gates_of[mode], first, hx, cx, w) : em_error_code();
    em_release(first);
    if (st) em_release(*x2), *x2 = NULL;
    return st;
}

em_status em_rnn_layer(em_rnn_mode mode, const em_tensor *x, int64_t nsteps, const int64_t *batch_sizes,
                       const em_tensor *hx, const em_tensor *cx, const em_rnn_weights *w, bool reverse,
                       em_tensor **output, em_tensor **hy, em_tensor **cy)
{
    em_tensor *x2 = NULL;
    if (check_layer(mode, x, nsteps, batch_sizes, hx, cx, w, &x2)) return em_error_code();
    const int64_t T = batch_sizes ? nsteps : x->sizes[0];
    /* b_hh of an LSTM or Elman layer adds to the same pre-activations as
     * b_ih: it joins the input projection (the GRU's stays inside r (.)) */
    const bool gru = mode == EM_RNN_GRU;
    em_tensor *bias = NULL, *wih_t = em_t(w->w_ih), *ig = NULL, *out = NULL, *h = NULL, *c = NULL;
    const em_tensor *b = gru                    ? w->b_ih
                       : w->b_ih && w->b_hh ? (bias = em_add(w->b_ih, w->b_hh, 1))
                       : w->b_ih            ? w->b_ih
                                            : w->b_hh;
    em_status st = wih_t && (b || !(w->b_ih || w->b_hh)) ? EM_OK : em_error_code();
    if (st == EM_OK && !(ig = em_rnn_project(x2, wih_t, b))) st = em_error_code();
    if (st == EM_OK)
        st = em_rnn_recurrence(mode, ig, T, batch_sizes, hx, cx, w->w_hh, gru ? w->b_hh : NULL, w->w_hr, reverse,
                               &out, &h, &c, NULL);
    if (st == EM_OK && !batch_sizes) {
        em_tensor *o3 = em_view(out, 3, (const int64_t[]){T, x->sizes[1], -1});
        em_release(out);
        if (!(out = o3)) st = em_error_code();
    }
    em_release(x2), em_release(wih_t), em_release(bias), em_release(ig);
    if (st) {
        em_release(out), em_release(h), em_release(c);
        return st;
    }
    *output = out, *hy = h;
    if (cy) *cy = c;
    else em_release(c);
    return EM_OK;
}
