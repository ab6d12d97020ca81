/* One recurrent layer over a whole sequence, one direction (em_rnn_layer in
 * include/ember/rnn.h): a composite of recorded ops. The input projection of
 * every step is one GEMM over all the sequence's rows; a step is the hidden
 * GEMM and one fused gate op (plus the projection GEMM of an LSTM with
 * proj_size). A packed sequence's batch shrinks from step to step (forward:
 * the rows dropped are finished sequences, whose state is final) or grows
 * (reverse: sequences start with their initial state). */
#include "../ops/dispatch.h"
#include "ember/ember.h"
#include "rnn_internal.h"
#include <stdlib.h>

static const int gate_count[] = {[EM_RNN_TANH] = 1, [EM_RNN_RELU] = 1, [EM_RNN_LSTM] = 4, [EM_RNN_GRU] = 3};
static const char *const layer_name = "rnn_layer";

/* The running state of a layer: transposed weights (made once, so that the
 * graph has one view node per weight, not one per step) and the states. */
typedef struct layer {
    em_rnn_mode mode;
    const em_rnn_weights *w;
    em_tensor *whh_t, *whr_t;
    em_tensor *h, *c; /* (rows, P), (rows, H); c NULL unless LSTM */
} layer;

static void replace(em_tensor **slot, em_tensor *t)
{
    em_release(*slot);
    *slot = t;
}

/* One step on rows ig (bt, G*H) of the input projection: L's states become
 * the new ones. */
static em_status step(layer *L, const em_tensor *ig)
{
    em_tensor *hg = em_rnn_project(L->h, L->whh_t, L->w->b_hh), *hn = NULL, *cn = NULL;
    if (!hg) return em_error_code();
    if (L->mode == EM_RNN_LSTM) {
        if (em_lstm_gates(ig, hg, L->c, &hn, &cn) == EM_OK && L->whr_t) replace(&hn, em_mm(hn, L->whr_t));
    } else if (L->mode == EM_RNN_GRU) {
        hn = em_gru_gates(ig, hg, L->h);
    } else {
        hn = em_rnn_gates(ig, hg, L->mode == EM_RNN_RELU);
    }
    em_release(hg);
    if (!hn) {
        em_release(cn);
        return em_error_code();
    }
    replace(&L->h, hn);
    if (cn) replace(&L->c, cn);
    return EM_OK;
}

/* *t keeps its first `rows` rows; the rest go to *dropped (NULL if none). */
static em_status shrink(em_tensor **t, int64_t rows, em_tensor **dropped)
{
    const int64_t cur = (*t)->sizes[0];
    if (rows >= cur) return EM_OK;
    *dropped = em_narrow(*t, 0, rows, cur - rows);
    em_tensor *kept = *dropped ? em_narrow(*t, 0, 0, rows) : NULL;
    if (!kept) return em_error_code();
    replace(t, kept);
    return EM_OK;
}

/* *t grows to `rows` rows, the new ones taken from init (the same rows). */
static em_status grow(em_tensor **t, const em_tensor *init, int64_t rows)
{
    int64_t cur = (*t)->sizes[0];
    if (rows <= cur) return EM_OK;
    em_tensor *more = em_narrow(init, 0, cur, rows - cur);
    if (more) replace(t, em_cat(2, (const em_tensor *const[]){*t, more}, 0));
    em_release(more);
    return more && *t ? EM_OK : em_error_code();
}

/* The final state of a forward pass over a packed sequence: the last
 * step's rows, then the rows dropped at each earlier step (latest first),
 * which is batch order. Releases the pieces (and clears their slots). */
static em_tensor *final_state(em_tensor *last, em_tensor **dropped, int n)
{
    const em_tensor *parts[n + 1];
    int k = 0;
    parts[k++] = last;
    for (int i = n - 1; i >= 0; i--)
        if (dropped[i]) parts[k++] = dropped[i];
    em_tensor *r = k == 1 ? em_retain(last) : em_cat(k, parts, 0);
    for (int i = 0; i < n; i++) em_release(dropped[i]), dropped[i] = NULL;
    return r;
}

/* The packed layout's checks: T >= 1 steps of non-increasing positive
 * batch sizes summing to the rows of x. */
static em_status check_batch_sizes(const em_tensor *x, int64_t T, const int64_t *bs)
{
    if (T < 1) return em_fail(EM_ERR_VALUE, "%s: expected at least one step, got %lld", layer_name, (long long)T);
    int64_t sum = 0;
    for (int64_t t = 0; t < T; t++) {
        if (bs[t] < 1 || (t && bs[t] > bs[t - 1]))
            return em_fail(EM_ERR_VALUE, "%s: batch_sizes must be positive and non-increasing, got %lld at step "
                           "%lld", layer_name, (long long)bs[t], (long long)t);
        sum += bs[t];
    }
    if (x->ndim != 2 || x->sizes[0] != sum)
        return em_fail(EM_ERR_SHAPE, "%s: expected packed data of %lld rows (the sum of batch_sizes), but got %s",
                       layer_name, (long long)sum, em_shape_str(x->ndim, x->sizes));
    return EM_OK;
}

/* The argument checks: the layout, then the cell's checks on the first
 * step's rows with the initial states. *x2 gets x as (N, I) rows. */
static em_status check_layer(em_rnn_mode mode, const em_tensor *x, int64_t T, const int64_t *bs,
                             const em_tensor *hx, const em_tensor *cx, const em_rnn_weights *w, em_tensor **x2)
{
    if (mode < EM_RNN_TANH || mode > EM_RNN_GRU) return em_fail(EM_ERR_VALUE, "%s: unknown mode %d", layer_name, mode);
    if (!x || !w || !hx || (mode == EM_RNN_LSTM) != (cx != NULL) || (w->w_hr && mode != EM_RNN_LSTM))
        return em_fail(EM_ERR_VALUE, "%s: expected x, weights, hx, and cx (and w_hr) exactly for an LSTM",
                       layer_name);
    if (bs ? check_batch_sizes(x, T, bs) : EM_OK) return em_error_code();
    if (!bs && (x->ndim != 3 || x->sizes[0] < 1))
        return em_fail(EM_ERR_SHAPE, "%s: expected input of size (seq_len >= 1, batch, input_size), but got %s",
                       layer_name, em_shape_str(x->ndim, x->sizes));
    *x2 = bs ? em_retain((em_tensor *)x) : em_reshape(x, 2, (const int64_t[]){x->sizes[0] * x->sizes[1], -1});
    em_tensor *first = *x2 ? em_narrow(*x2, 0, 0, bs ? bs[0] : x->sizes[1]) : NULL;
    em_status st = first ? em_rnn_check_cell(layer_name, gate_count[mode], first, hx, cx, w) : em_error_code();
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
    const int64_t T = batch_sizes ? nsteps : x->sizes[0], B = batch_sizes ? batch_sizes[0] : x->sizes[1];
    /* reverse starts at the last step, with the rows of the sequences that reach it */
    const int64_t rows0 = reverse && batch_sizes ? batch_sizes[T - 1] : B;
    layer L = {.mode = mode, .w = w, .h = em_narrow(hx, 0, 0, rows0), .c = cx ? em_narrow(cx, 0, 0, rows0) : NULL};
    em_tensor *wih_t = em_t(w->w_ih), *ig_all = NULL, *out = NULL, *h_final = NULL, *c_final = NULL;
    /* per step: its output, and the (forward) states of the sequences it ended */
    em_tensor **outs = calloc((size_t)T * 3, sizeof *outs), **ended_h = outs + T, **ended_c = outs + 2 * T;
    em_status st = !outs ? em_fail(EM_ERR_MEMORY, "%s: out of memory", layer_name)
                 : !L.h || (cx && !L.c) ? em_error_code() : EM_OK;
    if (st == EM_OK) {
        L.whh_t = em_t(w->w_hh);
        L.whr_t = w->w_hr ? em_t(w->w_hr) : NULL;
        ig_all = wih_t ? em_rnn_project(x2, wih_t, w->b_ih) : NULL; /* (N, G*H) */
        if (!ig_all || !L.whh_t || (w->w_hr && !L.whr_t)) st = em_error_code();
    }
    for (int64_t s = 0, row = 0; s < T && st == EM_OK; s++) {
        const int64_t t = reverse ? T - 1 - s : s, rows = batch_sizes ? batch_sizes[t] : B;
        if (reverse ? grow(&L.h, hx, rows) || (L.c && grow(&L.c, cx, rows))
                    : shrink(&L.h, rows, &ended_h[t]) || (L.c && shrink(&L.c, rows, &ended_c[t])))
            st = em_error_code();
        /* rows of step t: the sum of the earlier steps' sizes (reverse: of all but the later ones) */
        const int64_t first = reverse ? em_size(ig_all, 0) - row - rows : row;
        em_tensor *ig = st == EM_OK ? em_narrow(ig_all, 0, first, rows) : NULL;
        if (st == EM_OK) st = ig ? step(&L, ig) : em_error_code();
        em_release(ig);
        if (st == EM_OK) outs[t] = em_retain(L.h);
        row += rows;
    }
    if (st == EM_OK) {
        out = em_cat((int)T, (const em_tensor *const *)outs, 0);
        if (out && !batch_sizes) replace(&out, em_view(out, 3, (const int64_t[]){T, B, -1}));
        h_final = out ? final_state(L.h, ended_h, (int)T) : NULL;
        c_final = h_final && L.c ? final_state(L.c, ended_c, (int)T) : NULL;
        if (!h_final || (L.c && !c_final)) st = em_error_code();
    }
    if (st == EM_OK) {
        *output = out, *hy = h_final;
        if (cy) *cy = c_final;
        else em_release(c_final);
    } else {
        em_release(out), em_release(h_final), em_release(c_final);
    }
    for (int64_t t = 0; t < 3 * T && outs; t++) em_release(outs[t]); /* final_state cleared what it took */
    em_release(x2), em_release(wih_t), em_release(ig_all), em_release(L.whh_t), em_release(L.whr_t);
    em_release(L.h), em_release(L.c);
    free(outs);
    return st;
}
