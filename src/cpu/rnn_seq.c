/* CPU kernels of the fused sequence layer (rnn_recurrence and
 * rnn_recurrence_backward in ops/rnn.def; contract in include/ember/rnn.h).
 *
 * Forward: per step one hidden GEMM (h_prev W_hh^T, added onto the step's
 * rows of the input projection) and one pass over the gates, which keeps
 * what backward needs in the workspace: the LSTM's activated gates i, f, g,
 * o and its cell state c (5H per row), the GRU's r, z, n and its hidden
 * gate product hn = h W_hn^T + b_hn (4H); the Elman layer reads its output.
 * The running states live in hy/cy, which thus end as every sequence's
 * final state (a packed sequence leaves the batch early: its rows are
 * simply no longer written).
 *
 * Backward (backpropagation through time): per step, last to first, one
 * pass gives the gate gradients into the (N, G*H) result and one GEMM
 * carries the state gradient back (dgates W_hh); then the weight gradients
 * are one GEMM each over all steps (dW_hh = dgates^T h_prev, dW_hr =
 * dh^T (o tanh c)) and the GRU's b_hh gradient a column sum.
 *
 * Operands are contiguous (the op layer sees to it), float32 or float64.
 * GEMMs go to BLAS outside any parallel region; a step's gate rows are
 * split over the pool above a grain (for_rows). */
#include "../nn/rnn_internal.h"
#include "gemm.h"
#include "vmath.h"
#include <stdlib.h>

static inline float sigf(float x) { return em_vsigmoidf(x); }
static inline float tanf_(float x) { return em_vtanhf(x); }
static inline double sigd(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline double tand_(double x) { return tanh(x); }

/* ---- per-row gate loops, one set per dtype ------------------------------ */
/* lstm_fwd: w holds a row's 4H pre-activations; they become i, f, g, o and
 * w[4H..5H) the new cell state; c (the state) is updated, h gets o tanh(c).
 * lstm_bwd: from dh (the hidden state's gradient, unprojected) and dc (the
 * cell state's, updated to that of the previous state) the gate
 * pre-activations' gradients dg (4H). lstm_hu: h = o tanh(c) again.
 * gru_fwd: from ig, hg (3H, hg including b_hh) and h (the previous state,
 * updated to the new one, also written to out) w gets r, z, n, hn.
 * gru_bwd: dig, dhg (3H) from dh, which becomes its part carried directly
 * (dh z). rnn_*: the activation in place; d = dh act'(y). */
#define SEQ_ROWS(T, SIG, TANH)                                                                         \
    EM_SIMD static void lstm_fwd_##T(void *w_, void *c_, void *h_, int64_t H)                          \
    {                                                                                                  \
        T *restrict w = w_, *restrict c = c_, *restrict h = h_;                                        \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T i = SIG(w[j]), f = SIG(w[H + j]), g = TANH(w[2 * H + j]), o = SIG(w[3 * H + j]);         \
            T cn = f * c[j] + i * g;                                                                   \
            w[j] = i, w[H + j] = f, w[2 * H + j] = g, w[3 * H + j] = o, w[4 * H + j] = cn;             \
            c[j] = cn;                                                                                 \
            h[j] = o * TANH(cn);                                                                       \
        }                                                                                              \
    }                                                                                                  \
    EM_SIMD static void lstm_bwd_##T(void *dg_, void *dc_, const void *dh_, const void *w_,            \
                                     const void *cp_, int64_t H)                                       \
    {                                                                                                  \
        T *restrict dg = dg_, *restrict dc = dc_;                                                      \
        const T *restrict dh = dh_, *restrict w = w_, *restrict cp = cp_;                              \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T i = w[j], f = w[H + j], g = w[2 * H + j], o = w[3 * H + j], tc = TANH(w[4 * H + j]);     \
            T d = dc[j] + dh[j] * o * (1 - tc * tc);                                                   \
            dg[j] = d * g * i * (1 - i);                                                               \
            dg[H + j] = d * cp[j] * f * (1 - f);                                                       \
            dg[2 * H + j] = d * i * (1 - g * g);                                                       \
            dg[3 * H + j] = dh[j] * tc * o * (1 - o);                                                  \
            dc[j] = d * f;                                                                             \
        }                                                                                              \
    }                                                                                                  \
    EM_SIMD static void lstm_hu_##T(void *h_, const void *w_, int64_t H)                               \
    {                                                                                                  \
        T *restrict h = h_;                                                                            \
        const T *restrict w = w_;                                                                      \
        for (int64_t j = 0; j < H; j++) h[j] = w[3 * H + j] * TANH(w[4 * H + j]);                      \
    }                                                                                                  \
    EM_SIMD static void gru_fwd_##T(void *w_, const void *ig_, const void *hg_, void *h_, void *out_,  \
                                    int64_t H)                                                         \
    {                                                                                                  \
        T *restrict w = w_, *restrict h = h_, *restrict out = out_;                                    \
        const T *restrict ig = ig_, *restrict hg = hg_;                                                \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T r = SIG(ig[j] + hg[j]), z = SIG(ig[H + j] + hg[H + j]), hn = hg[2 * H + j];              \
            T n = TANH(ig[2 * H + j] + r * hn);                                                        \
            w[j] = r, w[H + j] = z, w[2 * H + j] = n, w[3 * H + j] = hn;                               \
            h[j] = out[j] = n + z * (h[j] - n);                                                        \
        }                                                                                              \
    }                                                                                                  \
    EM_SIMD static void gru_bwd_##T(void *dig_, void *dhg_, void *dh_, const void *w_, const void *hp_, \
                                    int64_t H)                                                         \
    {                                                                                                  \
        T *restrict dig = dig_, *restrict dhg = dhg_, *restrict dh = dh_;                              \
        const T *restrict w = w_, *restrict hp = hp_;                                                  \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T r = w[j], z = w[H + j], n = w[2 * H + j], hn = w[3 * H + j], g = dh[j];                  \
            T dn = g * (1 - z) * (1 - n * n), dz = g * (hp[j] - n) * z * (1 - z);                      \
            T dr = dn * hn * r * (1 - r);                                                              \
            dig[j] = dhg[j] = dr;                                                                      \
            dig[H + j] = dhg[H + j] = dz;                                                              \
            dig[2 * H + j] = dn;                                                                       \
            dhg[2 * H + j] = dn * r;                                                                   \
            dh[j] = g * z;                                                                             \
        }                                                                                              \
    }                                                                                                  \
    EM_SIMD static void rnn_fwd_##T(void *y_, int64_t H, bool relu)                                    \
    {                                                                                                  \
        T *restrict y = y_;                                                                            \
        if (relu)                                                                                      \
            for (int64_t j = 0; j < H; j++) y[j] = y[j] > 0 ? y[j] : (y[j] == y[j] ? 0 : y[j]);        \
        else                                                                                           \
            for (int64_t j = 0; j < H; j++) y[j] = TANH(y[j]);                                         \
    }                                                                                                  \
    EM_SIMD static void rnn_bwd_##T(void *d_, const void *dh_, const void *y_, int64_t H, bool relu)   \
    {                                                                                                  \
        T *restrict d = d_;                                                                            \
        const T *restrict dh = dh_, *restrict y = y_;                                                  \
        if (relu)                                                                                      \
            for (int64_t j = 0; j < H; j++) d[j] = y[j] > 0 ? dh[j] : 0;                               \
        else                                                                                           \
            for (int64_t j = 0; j < H; j++) d[j] = dh[j] * (1 - y[j] * y[j]);                          \
    }                                                                                                  \
    static void add_##T(void *y_, const void *x_, int64_t n)                                           \
    {                                                                                                  \
        T *restrict y = y_;                                                                            \
        const T *restrict x = x_;                                                                      \
        for (int64_t j = 0; j < n; j++) y[j] += x[j];                                                  \
    }                                                                                                  \
    static void colsum_##T(void *s_, const void *x_, int64_t rows, int64_t cols)                       \
    {                                                                                                  \
        T *restrict s = s_;                                                                            \
        const T *restrict x = x_;                                                                      \
        for (int64_t j = 0; j < cols; j++) s[j] = 0;                                                   \
        for (int64_t r = 0; r < rows; r++)                                                             \
            for (int64_t j = 0; j < cols; j++) s[j] += x[r * cols + j];                                \
    }
SEQ_ROWS(float, sigf, tanf_)
SEQ_ROWS(double, sigd, tand_)

typedef struct row_fns {
    void (*lstm_fwd)(void *w, void *c, void *h, int64_t H);
    void (*lstm_bwd)(void *dg, void *dc, const void *dh, const void *w, const void *cp, int64_t H);
    void (*lstm_hu)(void *h, const void *w, int64_t H);
    void (*gru_fwd)(void *w, const void *ig, const void *hg, void *h, void *out, int64_t H);
    void (*gru_bwd)(void *dig, void *dhg, void *dh, const void *w, const void *hp, int64_t H);
    void (*rnn_fwd)(void *y, int64_t H, bool relu);
    void (*rnn_bwd)(void *d, const void *dh, const void *y, int64_t H, bool relu);
    void (*add)(void *y, const void *x, int64_t n);
    void (*colsum)(void *s, const void *x, int64_t rows, int64_t cols);
} row_fns;
#define FNS(T) {lstm_fwd_##T, lstm_bwd_##T, lstm_hu_##T, gru_fwd_##T, gru_bwd_##T, rnn_fwd_##T, rnn_bwd_##T, \
                add_##T, colsum_##T}
static const row_fns fns_float = FNS(float), fns_double = FNS(double);

/* ---- layout -------------------------------------------------------------- */
typedef struct seq {
    em_rnn_mode mode;
    bool reverse;
    int64_t T, B, N, H, P, GH; /* P: the state's width (Hout) */
    int64_t *off;              /* [T + 1]: each step's first row */
    const int64_t *bs;         /* NULL: padded, B rows a step */
    em_dtype dt;
    int64_t es;                /* element size */
    const row_fns *fn;
} seq;

static em_status seq_init(seq *q, const em_call *c, const int64_t *bs, int64_t N, int64_t B, int64_t H, int64_t P)
{
    *q = (seq){.mode = (em_rnn_mode)c->i[0], .reverse = c->i[1] != 0, .T = c->i[2], .B = B, .N = N, .H = H, .P = P,
               .bs = bs, .dt = c->dtype, .es = (int64_t)em_dtypes[c->dtype].size,
               .fn = c->dtype == EM_F64 ? &fns_double : &fns_float};
    q->GH = em_rnn_gates_of[q->mode] * H;
    if (!(q->off = malloc((size_t)(q->T + 1) * sizeof *q->off))) return em_fail(EM_ERR_MEMORY, "rnn: out of memory");
    q->off[0] = 0;
    for (int64_t t = 0; t < q->T; t++) q->off[t + 1] = q->off[t] + (bs ? bs[t] : B);
    return EM_OK;
}
static inline int64_t rows_of(const seq *q, int64_t t) { return q->off[t + 1] - q->off[t]; }
/* The step run s-th (forward order) and the one run just before it. */
static inline int64_t step_at(const seq *q, int64_t s) { return q->reverse ? q->T - 1 - s : s; }
static inline int64_t prev_step(const seq *q, int64_t t) { return q->reverse ? t + 1 : t - 1; }
/* How many of step t's rows (the s-th run) continue the previous step's
 * state; the others start from the initial state. */
static inline int64_t carried(const seq *q, int64_t s, int64_t t)
{
    if (s == 0) return 0;
    int64_t a = rows_of(q, t), b = rows_of(q, prev_step(q, t));
    return a < b ? a : b;
}
/* Row r of a matrix of `ld` elements a row. */
#define AT(q, p, r, ld) ((char *)(p) + ((r) * (ld)) * (q)->es)

/* C (M, Nc) = beta C + op(A) op(B), row-major; op(A) (M, K), op(B) (K, Nc). */
static void gemm(const seq *q, bool ta, bool tb, int64_t M, int64_t Nc, int64_t K, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc)
{
    if (M == 0 || Nc == 0) return;
    if (K == 0) {
        if (beta == 0)
            for (int64_t r = 0; r < M; r++) memset(AT(q, C, r, ldc), 0, (size_t)(Nc * q->es));
        return;
    }
    lda = lda > 0 ? lda : 1, ldb = ldb > 0 ? ldb : 1, ldc = ldc > 0 ? ldc : 1;
    cpu_gemm(q->dt, ta, tb, M, Nc, K, 1.0, A, lda, B, ldb, beta, C, ldc);
}

/* One pass of a gate loop over n rows (a step's, or all N), split over the
 * pool above EM_GRAIN_ROWS: which loop, and its operands, row b of operand
 * i at op[i] + b * ld[i] elements. The state a row started from (lstm_bwd's
 * cell, gru_bwd's hidden) is op[4] for rows below `carried`, op[5] after. */
typedef enum { LSTM_FWD, LSTM_BWD, LSTM_HU, GRU_FWD, GRU_BWD, RNN_FWD, RNN_BWD, ADD } row_kind;
typedef struct rows_job {
    const seq *q;
    row_kind kind;
    int64_t width, carried; /* width: the elements a row's loop touches (its cost) */
    bool relu;
    const char *op[6];
    int64_t ld[6];
} rows_job;

static void rows_range(void *ctx, int64_t begin, int64_t end)
{
    const rows_job *j = ctx;
    const row_fns *f = j->q->fn;
    const int64_t H = j->q->H, es = j->q->es;
#define ROW(i) ((void *)(j->op[i] + b * j->ld[i] * es))
#define STATE (b < j->carried ? ROW(4) : ROW(5))
    for (int64_t b = begin; b < end; b++) {
        switch (j->kind) {
        case LSTM_FWD: f->lstm_fwd(ROW(0), ROW(1), ROW(2), H); break;
        case LSTM_BWD: f->lstm_bwd(ROW(0), ROW(1), ROW(2), ROW(3), STATE, H); break;
        case LSTM_HU: f->lstm_hu(ROW(0), ROW(1), H); break;
        case GRU_FWD: f->gru_fwd(ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), H); break;
        case GRU_BWD: f->gru_bwd(ROW(0), ROW(1), ROW(2), ROW(3), STATE, H); break;
        case RNN_FWD: f->rnn_fwd(ROW(0), H, j->relu); break;
        case RNN_BWD: f->rnn_bwd(ROW(0), ROW(1), ROW(2), H, j->relu); break;
        case ADD: f->add(ROW(0), ROW(1), j->width); break;
        }
    }
#undef STATE
#undef ROW
}

/* Runs job j over n rows: for_rows(&q, n, &(rows_job){.kind = ..., .op = {...}, .ld = {...}}). */
static void for_rows(const seq *q, int64_t n, rows_job *j)
{
    j->q = q;
    em_parallel_for(n, j->width, EM_GRAIN_ROWS, rows_range, j);
}

static void copy_rows(const seq *q, void *dst, int64_t ldd, const void *src, int64_t lds, int64_t rows, int64_t cols)
{
    for (int64_t r = 0; r < rows; r++) memcpy(AT(q, dst, r, ldd), AT(q, src, r, lds), (size_t)(cols * q->es));
}

/* ---- forward --------------------------------------------------------------- */
/* in: igates (N, G*H), hx (B, P), w_hh (G*H, P), batch_sizes (T) int64 or
 * NULL, cx (B, H; LSTM) or b_hh (G*H; GRU) or NULL, w_hr (P, H) or NULL;
 * out: output (N, P), hy (B, P), cy (B, H) or NULL, workspace or NULL;
 * i[0] mode, i[1] reverse, i[2] T. */
em_status cpu_rnn_recurrence(const em_call *c)
{
    const em_tensor *ig = c->in[0], *hx = c->in[1], *whh = c->in[2], *bsz = c->in[3], *in4 = c->in[4];
    const em_tensor *whr = c->in[5];
    em_tensor *out = c->out[0], *hy = c->out[1], *cy = c->out[2], *ws = c->out[3];
    seq q;
    const int64_t G = em_rnn_gates_of[c->i[0]], H = whh->sizes[0] / G, P = hx->sizes[1];
    if (seq_init(&q, c, bsz ? (const int64_t *)em_tensor_data(bsz) : NULL, ig->sizes[0], hx->sizes[0], H, P))
        return em_error_code();
    const bool lstm = q.mode == EM_RNN_LSTM, gru = q.mode == EM_RNN_GRU;
    const int64_t W = em_rnn_workspace_of[q.mode] * H, GH = q.GH;
    char *pig = em_tensor_data(ig), *pout = em_tensor_data(out), *ph = em_tensor_data(hy);
    char *pc = cy ? em_tensor_data(cy) : NULL, *pws = ws ? em_tensor_data(ws) : NULL;
    const char *pw = em_tensor_data(whh), *pwr = whr ? em_tensor_data(whr) : NULL;
    const char *pb = gru && in4 ? em_tensor_data(in4) : NULL;
    /* scratch: the GRU's hidden gates (B, 3H), the LSTM's unprojected h (B, H) */
    char *tmp = gru || whr ? malloc((size_t)(q.B * (gru ? GH : H) * q.es) + 1) : NULL;
    if ((gru || whr) && !tmp) {
        free(q.off);
        return em_fail(EM_ERR_MEMORY, "rnn_recurrence: out of memory");
    }
    memcpy(ph, em_tensor_data(hx), (size_t)(q.B * P * q.es));
    if (lstm) memcpy(pc, em_tensor_data(in4), (size_t)(q.B * H * q.es));
    for (int64_t s = 0; s < q.T; s++) {
        const int64_t t = step_at(&q, s), n = rows_of(&q, t), r0 = q.off[t];
        char *o = AT(&q, pout, r0, P);
        if (lstm) {
            char *w = AT(&q, pws, r0, W), *h = whr ? tmp : o;
            copy_rows(&q, w, W, AT(&q, pig, r0, GH), GH, n, GH);
            gemm(&q, false, true, n, GH, P, ph, P, pw, P, 1, w, W);
            for_rows(&q, n, &(rows_job){.kind = LSTM_FWD, .width = GH, .op = {w, pc, h}, .ld = {W, H, H}});
            if (whr) gemm(&q, false, true, n, P, H, tmp, H, pwr, H, 0, o, P);
            memcpy(ph, o, (size_t)(n * P * q.es));
        } else if (gru) {
            for (int64_t b = 0; b < n; b++)
                if (pb) memcpy(AT(&q, tmp, b, GH), pb, (size_t)(GH * q.es));
            gemm(&q, false, true, n, GH, P, ph, P, pw, P, pb ? 1 : 0, tmp, GH);
            char *w = AT(&q, pws, r0, W), *x = AT(&q, pig, r0, GH);
            for_rows(&q, n,
                     &(rows_job){.kind = GRU_FWD, .width = GH, .op = {w, x, tmp, ph, o}, .ld = {W, GH, GH, H, H}});
        } else {
            copy_rows(&q, o, H, AT(&q, pig, r0, H), H, n, H);
            gemm(&q, false, true, n, H, H, ph, H, pw, H, 1, o, H);
            const bool relu = q.mode == EM_RNN_RELU;
            for_rows(&q, n, &(rows_job){.kind = RNN_FWD, .width = H, .relu = relu, .op = {o}, .ld = {H}});
            memcpy(ph, o, (size_t)(n * H * q.es));
        }
    }
    free(tmp);
    free(q.off);
    return EM_OK;
}

/* ---- backward -------------------------------------------------------------- */
/* The state each row of the sequence started its step from, (N, P): the
 * previous step's output row, or the initial state's; the left operand of
 * dW_hh's GEMM. */
static void fill_prev_states(const seq *q, char *hp, const char *out, const char *hx)
{
    for (int64_t s = 0; s < q->T; s++) {
        const int64_t t = step_at(q, s), n = rows_of(q, t), k = carried(q, s, t);
        char *dst = AT(q, hp, q->off[t], q->P);
        if (k) memcpy(dst, AT(q, out, q->off[prev_step(q, t)], q->P), (size_t)(k * q->P * q->es));
        memcpy(AT(q, dst, k, q->P), AT(q, hx, k, q->P), (size_t)((n - k) * q->P * q->es));
    }
}

/* in: grad_output (N, P) or NULL, grad_hy (B, P) or NULL, grad_cy (B, H) or
 * NULL, output (N, P), workspace or NULL, w_hh (G*H, P); arg: the rest
 * (em_rnn_backward_arg); out: grad_igates (N, G*H), grad_hx (B, P), grad_cx
 * (B, H) or NULL, grad_w_hh (G*H, P); i[] as the forward's. */
em_status cpu_rnn_recurrence_backward(const em_call *c)
{
    const em_rnn_backward_arg *ex = c->arg;
    const em_tensor *gout = c->in[0], *ghy = c->in[1], *gcy = c->in[2], *out = c->in[3], *ws = c->in[4];
    const em_tensor *whh = c->in[5];
    em_tensor *gig = c->out[0], *ghx = c->out[1], *gcx = c->out[2], *gwhh = c->out[3];
    seq q;
    const int64_t G = em_rnn_gates_of[c->i[0]], H = whh->sizes[0] / G, P = whh->sizes[1];
    if (seq_init(&q, c, ex->batch_sizes, out->sizes[0], ex->hx->sizes[0], H, P)) return em_error_code();
    const bool lstm = q.mode == EM_RNN_LSTM, gru = q.mode == EM_RNN_GRU, proj = ex->w_hr != NULL;
    const int64_t W = em_rnn_workspace_of[q.mode] * H, GH = q.GH, N = q.N;
    char *pgig = em_tensor_data(gig), *pdh = em_tensor_data(ghx), *pdc = gcx ? em_tensor_data(gcx) : NULL;
    const char *pws = ws ? em_tensor_data(ws) : NULL, *pout = em_tensor_data(out), *pw = em_tensor_data(whh);
    const char *pgo = gout ? em_tensor_data(gout) : NULL, *pcx = lstm ? em_tensor_data(ex->cx) : NULL;
    const char *pwr = proj ? em_tensor_data(ex->w_hr) : NULL;
    /* scratch: h_prev (N, P); GRU: the hidden gates' gradients (N, 3H);
     * projection: the projected state's gradients (N, P), then the
     * unprojected h (N, H), and one step's unprojected gradient (B, H) */
    const int64_t nscratch = N * P + (gru ? N * GH : 0) + (proj ? N * P + N * H + q.B * H : 0);
    char *hp = malloc((size_t)(nscratch * q.es) + 1);
    if (!hp) {
        free(q.off);
        return em_fail(EM_ERR_MEMORY, "rnn_recurrence_backward: out of memory");
    }
    char *dhg = AT(&q, hp, N, P), *dH = AT(&q, dhg, gru ? N : 0, GH), *hu = AT(&q, dH, proj ? N : 0, P);
    char *dhu = AT(&q, hu, proj ? N : 0, H);
    if (ghy) memcpy(pdh, em_tensor_data(ghy), (size_t)(q.B * P * q.es));
    else memset(pdh, 0, (size_t)(q.B * P * q.es));
    if (lstm) {
        if (gcy) memcpy(pdc, em_tensor_data(gcy), (size_t)(q.B * H * q.es));
        else memset(pdc, 0, (size_t)(q.B * H * q.es));
    }
    for (int64_t s = q.T - 1; s >= 0; s--) {
        const int64_t t = step_at(&q, s), n = rows_of(&q, t), r0 = q.off[t], k = carried(&q, s, t);
        if (pgo) for_rows(&q, n, &(rows_job){.kind = ADD, .width = P, .op = {pdh, AT(&q, pgo, r0, P)}, .ld = {P, P}});
        char *dg = AT(&q, pgig, r0, GH);
        const char *w = AT(&q, pws, r0, W);
        if (lstm) {
            const char *dh = pdh;
            if (proj) { /* through h = hu W_hr^T: keep dh for dW_hr, carry dhu = dh W_hr */
                copy_rows(&q, AT(&q, dH, r0, P), P, pdh, P, n, P);
                gemm(&q, false, false, n, H, P, pdh, P, pwr, H, 0, dhu, H);
                dh = dhu;
            }
            const char *cprev = s ? AT(&q, pws, q.off[prev_step(&q, t)], W) : NULL;
            for_rows(&q, n, &(rows_job){.kind = LSTM_BWD, .width = GH, .carried = k,
                                        .op = {dg, pdc, dh, w, cprev ? cprev + 4 * H * q.es : NULL, pcx},
                                        .ld = {GH, H, H, W, W, H}});
            gemm(&q, false, false, n, P, GH, dg, GH, pw, P, 0, pdh, P);
        } else if (gru) {
            const char *oprev = s ? AT(&q, pout, q.off[prev_step(&q, t)], P) : NULL, *hx = em_tensor_data(ex->hx);
            char *dh2 = AT(&q, dhg, r0, GH);
            for_rows(&q, n, &(rows_job){.kind = GRU_BWD, .width = GH, .carried = k, .op = {dg, dh2, pdh, w, oprev, hx},
                                        .ld = {GH, GH, P, W, P, P}});
            gemm(&q, false, false, n, P, GH, dh2, GH, pw, P, 1, pdh, P);
        } else {
            const bool relu = q.mode == EM_RNN_RELU;
            const char *y = AT(&q, pout, r0, P);
            for_rows(&q, n,
                     &(rows_job){.kind = RNN_BWD, .width = H, .relu = relu, .op = {dg, pdh, y}, .ld = {GH, P, P}});
            gemm(&q, false, false, n, P, GH, dg, GH, pw, P, 0, pdh, P);
        }
    }
    fill_prev_states(&q, hp, pout, em_tensor_data(ex->hx));
    gemm(&q, true, false, GH, P, N, gru ? dhg : pgig, GH, hp, P, 0, em_tensor_data(gwhh), P);
    if (ex->grad_b_hh) q.fn->colsum(em_tensor_data(ex->grad_b_hh), dhg, N, GH);
    if (proj) {
        for_rows(&q, N, &(rows_job){.kind = LSTM_HU, .width = H, .op = {hu, pws}, .ld = {H, W}});
        gemm(&q, true, false, P, H, N, dH, P, hu, H, 0, em_tensor_data(ex->grad_w_hr), H);
    }
    free(hp);
    free(q.off);
    return EM_OK;
}
