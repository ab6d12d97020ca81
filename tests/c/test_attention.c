/* Scaled dot-product attention: the fused forward op (output and
 * log-sum-exp) and the composite attention_weights against a naive double
 * reference, over masks of each kind, causal, broadcast batch dims,
 * non-contiguous operands, several tiles, empty sizes, fully masked rows;
 * the backward op against the composite's gradients; error cases. */
#include "test.h"

enum { NO_MASK, BOOL_MASK, FLOAT_MASK };

/* Naive attention in double over materialised (B, L, E), (B, S, E), (B, S,
 * Ev) and (B, L, S) mask arrays; fully masked rows give zeros and lse -inf. */
static void ref_attention(int64_t B, int64_t L, int64_t S, int64_t E, int64_t Ev, const double *q, const double *k,
                          const double *v, const double *mask, int kind, bool causal, double scale, double *out,
                          double *lse, double *probs)
{
    double *s = malloc((S ? S : 1) * sizeof *s);
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < L; i++) {
            double m = -INFINITY;
            for (int64_t j = 0; j < S; j++) {
                double d = 0;
                for (int64_t e = 0; e < E; e++) d += q[(b * L + i) * E + e] * k[(b * S + j) * E + e];
                double mv = mask ? mask[(b * L + i) * S + j] : 0;
                s[j] = scale * d + (kind == FLOAT_MASK ? mv : 0);
                if ((kind == BOOL_MASK && mv == 0) || (causal && j > i)) s[j] = -INFINITY;
                m = fmax(m, s[j]);
            }
            double sum = 0;
            for (int64_t j = 0; j < S; j++) sum += m == -INFINITY ? 0 : exp(s[j] - m);
            for (int64_t e = 0; e < Ev; e++) {
                double acc = 0;
                for (int64_t j = 0; j < S && sum > 0; j++) acc += exp(s[j] - m) / sum * v[(b * S + j) * Ev + e];
                out[(b * L + i) * Ev + e] = acc;
            }
            if (lse) lse[b * L + i] = sum > 0 ? m + log(sum) : -INFINITY;
            for (int64_t j = 0; probs && j < S; j++) probs[(b * L + i) * S + j] = sum > 0 ? exp(s[j] - m) / sum : 0;
        }
    free(s);
}

/* t's values broadcast to (batch..., rows, cols), row-major (malloc'ed). */
static double *materialise(const em_tensor *t, int nb, const int64_t *batch, int64_t rows, int64_t cols)
{
    int64_t sizes[EM_MAX_DIMS];
    memcpy(sizes, batch, nb * sizeof *sizes);
    sizes[nb] = rows, sizes[nb + 1] = cols;
    em_tensor *e = em_expand(t, nb + 2, sizes);
    double *v = e ? tvals(e) : NULL;
    em_release(e);
    return v;
}

typedef struct sdpa_case {
    const char *name;
    int nd;                       /* q, k, v dims (batch dims of size 1 broadcast) */
    int64_t q[4], k[4], v[4];
    int mask_nd, mask_kind;
    int64_t mask[4];
    bool causal, noncontig;
    double scale;                 /* NAN: the default */
} sdpa_case;

/* A mask for case c: bool (mostly true, its first row all false) or float
 * (some entries -inf). */
static em_tensor *make_mask(const sdpa_case *c, em_dtype dt)
{
    if (c->mask_kind == NO_MASK) return NULL;
    em_tensor *r = trand(EM_F64, c->mask_nd, c->mask, 0, 1), *m = NULL;
    if (c->mask_kind == BOOL_MASK) {
        em_tensor *th = em_scalar_float(0.25);
        m = em_gt(r, th);
        em_tensor *row = em_narrow(m, -2, 0, 1);
        em_fill_(row, 0);
        RELEASE(th, row);
    } else {
        em_tensor *lo = em_scalar_float(0.1), *blocked = em_lt(r, lo), *f = em_masked_fill(r, blocked, -INFINITY);
        m = em_to_dtype(f, dt);
        RELEASE(lo, blocked, f);
    }
    em_release(r);
    return m;
}

static bool run_case(const sdpa_case *c, em_dtype dt)
{
    em_tensor *q = trand(dt, c->nd, c->q, -1, 1), *k = trand(dt, c->nd, c->k, -1, 1);
    em_tensor *v = trand(dt, c->nd, c->v, -1, 1), *mask = make_mask(c, dt);
    if (c->noncontig) {
        em_tensor *qn = tnoncontig(q), *vn = tnoncontig(v);
        em_tensor *kt = em_transpose(k, -1, -2), *ktc = em_contiguous(kt), *kv = em_transpose(ktc, -1, -2);
        RELEASE(q, v, k, kt, ktc); /* kv: column-major */
        q = qn, v = vn, k = kv;
    }
    em_tensor *out = NULL, *lse = NULL, *w = NULL;
    bool ok = em_scaled_dot_product_attention_lse(q, k, v, mask, c->causal, c->scale, &out, &lse) == EM_OK;
    if (ok) w = em_attention_weights(q, k, mask, c->causal, c->scale);
    ok = ok && w && em_dtype_of(out) == dt && em_dtype_of(lse) == dt;
    if (ok) {
        int nb = em_ndim(out) - 2;
        const int64_t *batch = em_sizes(out);
        int64_t B = 1, L = c->q[c->nd - 2], S = c->k[c->nd - 2];
        int64_t E = c->q[c->nd - 1], Ev = c->v[c->nd - 1];
        for (int d = 0; d < nb; d++) B *= batch[d];
        double *qv = materialise(q, nb, batch, L, E), *kv = materialise(k, nb, batch, S, E);
        double *vv = materialise(v, nb, batch, S, Ev);
        double *mv = mask ? materialise(mask, nb, batch, L, S) : NULL;
        double *ro = malloc((B * L * Ev + 1) * sizeof *ro), *rl = malloc((B * L + 1) * sizeof *rl);
        double *rp = malloc((B * L * S + 1) * sizeof *rp);
        double scale = isnan(c->scale) ? 1 / sqrt((double)E) : c->scale;
        ref_attention(B, L, S, E, Ev, qv, kv, vv, mv, c->mask_kind, c->causal, scale, ro, rl, rp);
        double tol = dt == EM_F32 ? 2e-5 : 1e-11;
        ok = em_ndim(lse) == nb + 1 && em_size(lse, -1) == L && em_size(out, -1) == Ev && em_size(w, -1) == S &&
             tclose(out, ro, tol, tol) && tclose(lse, rl, tol, tol) && tclose(w, rp, tol, tol);
        free(qv), free(kv), free(vv), free(mv), free(ro), free(rl), free(rp);
    }
    RELEASE(q, k, v, mask, out, lse, w);
    return ok;
}

#define NAN_ NAN
static const sdpa_case CASES[] = {
    {"3-d", 3, {2, 5, 4}, {2, 7, 4}, {2, 7, 6}, 0, NO_MASK, {0}, false, false, NAN_},
    {"4-d, L != S, E != Ev", 4, {2, 3, 5, 8}, {2, 3, 9, 8}, {2, 3, 9, 3}, 0, NO_MASK, {0}, false, false, NAN_},
    {"2-d", 2, {6, 4}, {3, 4}, {3, 5}, 0, NO_MASK, {0}, false, false, NAN_},
    {"several tiles", 3, {2, 150, 8}, {2, 300, 8}, {2, 300, 5}, 0, NO_MASK, {0}, false, false, NAN_},
    {"broadcast batch", 4, {2, 3, 5, 4}, {1, 3, 6, 4}, {2, 1, 6, 2}, 0, NO_MASK, {0}, false, false, NAN_},
    {"non-contiguous", 4, {2, 2, 5, 4}, {2, 2, 7, 4}, {2, 2, 7, 3}, 0, NO_MASK, {0}, false, true, NAN_},
    {"explicit scale", 3, {2, 5, 4}, {2, 6, 4}, {2, 6, 4}, 0, NO_MASK, {0}, false, false, 0.3},
    {"bool mask (L, S)", 4, {2, 2, 5, 4}, {2, 2, 7, 4}, {2, 2, 7, 3}, 2, BOOL_MASK, {5, 7}, false, false, NAN_},
    {"bool mask full, tiles", 3, {2, 70, 4}, {2, 200, 4}, {2, 200, 3}, 3, BOOL_MASK, {2, 70, 200}, false, false, NAN_},
    {"bool mask (B, 1, 1, S)", 4, {2, 3, 5, 4}, {2, 3, 6, 4}, {2, 3, 6, 2}, 4, BOOL_MASK, {2, 1, 1, 6}, false, false,
     NAN_},
    {"float mask (1, L, S)", 3, {3, 5, 4}, {3, 8, 4}, {3, 8, 4}, 3, FLOAT_MASK, {1, 5, 8}, false, false, NAN_},
    {"float mask, tiles", 3, {1, 130, 4}, {1, 260, 4}, {1, 260, 2}, 2, FLOAT_MASK, {130, 260}, false, false, NAN_},
    {"causal, L < S", 3, {2, 5, 4}, {2, 9, 4}, {2, 9, 3}, 0, NO_MASK, {0}, true, false, NAN_},
    {"causal, L > S (rows past S)", 3, {2, 9, 4}, {2, 5, 4}, {2, 5, 3}, 0, NO_MASK, {0}, true, false, NAN_},
    {"causal, tiles", 3, {1, 200, 8}, {1, 200, 8}, {1, 200, 8}, 0, NO_MASK, {0}, true, false, NAN_},
    {"L = 0", 3, {2, 0, 4}, {2, 5, 4}, {2, 5, 3}, 0, NO_MASK, {0}, false, false, NAN_},
    {"S = 0: every row masked", 3, {2, 3, 4}, {2, 0, 4}, {2, 0, 3}, 0, NO_MASK, {0}, false, false, NAN_},
    {"B = 0", 3, {0, 3, 4}, {0, 5, 4}, {0, 5, 3}, 0, NO_MASK, {0}, false, false, NAN_},
    {"Ev = 0", 3, {2, 3, 4}, {2, 5, 4}, {2, 5, 0}, 0, NO_MASK, {0}, false, false, NAN_},
};

TEST(attention_forward_vs_reference)
{
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++)
        for (int d = 0; d < 2; d++)
            CHECK_MSG(run_case(&CASES[i], d ? EM_F64 : EM_F32), "%s (%s)", CASES[i].name, d ? "float64" : "float32");
    COVER(EM_OP_scaled_dot_product_attention, EM_OP_attention_weights);
}

TEST(attention_errors)
{
    em_tensor *q = trand(EM_F32, SHAPE(2, 3, 4), -1, 1), *k = trand(EM_F32, SHAPE(2, 5, 4), -1, 1);
    em_tensor *v = trand(EM_F32, SHAPE(2, 5, 6), -1, 1), *kd = em_to_dtype(k, EM_F64), *qi = em_to_dtype(q, EM_I64);
    em_tensor *k3 = trand(EM_F32, SHAPE(2, 5, 3), -1, 1), *v4 = trand(EM_F32, SHAPE(2, 4, 6), -1, 1);
    em_tensor *kb = trand(EM_F32, SHAPE(3, 5, 4), -1, 1), *q1 = trand(EM_F32, SHAPE(4), -1, 1);
    em_tensor *mbad = trand(EM_BOOL, SHAPE(3, 4), 0, 1), *mok = trand(EM_BOOL, SHAPE(3, 5), 0, 1);
    em_tensor *mint = trand(EM_I32, SHAPE(3, 5), 0, 2), *mf64 = trand(EM_F64, SHAPE(3, 5), 0, 1);
    em_tensor *mbig = trand(EM_BOOL, SHAPE(4, 2, 3, 5), 0, 1);
    CHECK_ERR(em_scaled_dot_product_attention(q, kd, v, NULL, false, NAN), EM_ERR_DTYPE);
    CHECK_ERR(em_scaled_dot_product_attention(qi, qi, qi, NULL, false, NAN), EM_ERR_DTYPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, k3, v, NULL, false, NAN), EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, k, v4, NULL, false, NAN), EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, kb, v, NULL, false, NAN), EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention(q1, k, v, NULL, false, NAN), EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, k, v, mbad, false, NAN), EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, k, v, mbig, false, NAN), EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, k, v, mint, false, NAN), EM_ERR_DTYPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, k, v, mf64, false, NAN), EM_ERR_DTYPE);
    CHECK_ERR(em_scaled_dot_product_attention(q, k, v, mok, true, NAN), EM_ERR_RUNTIME);
    CHECK_ERR(em_scaled_dot_product_attention(NULL, k, v, NULL, false, NAN), EM_ERR_VALUE);
    CHECK_ERR(em_attention_weights(q, k3, NULL, false, NAN), EM_ERR_SHAPE);
    /* the backward op checks grad_out, out and lse */
    em_tensor *o = NULL, *lse = NULL, *dq = NULL, *dk = NULL, *dv = NULL;
    CHECK(em_scaled_dot_product_attention_lse(q, k, v, NULL, false, NAN, &o, &lse) == EM_OK);
    CHECK_ERR(em_scaled_dot_product_attention_backward(q, NULL, q, k, v, o, lse, NULL, false, NAN, &dq, &dk, &dv),
              EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention_backward(o, o, q, k, v, o, lse, NULL, false, NAN, &dq, &dk, &dv),
              EM_ERR_SHAPE);
    CHECK_ERR(em_scaled_dot_product_attention_backward(o, NULL, q, k, v, o, NULL, NULL, false, NAN, &dq, &dk, &dv),
              EM_ERR_VALUE);
    CHECK(!dq && !dk && !dv);
    RELEASE(q, k, v, kd, qi, k3, v4, kb, q1, mbad, mok, mint, mf64, mbig, o, lse);
}

/* The backward op against autograd through the composite (attention_weights @ v). */
static bool backward_matches_composite(em_dtype dt, const int64_t *qs, const int64_t *ks, const int64_t *vs,
                                       const em_tensor *mask, bool causal)
{
    em_tensor *q = trand(dt, 3, qs, -1, 1), *k = trand(dt, 3, ks, -1, 1), *v = trand(dt, 3, vs, -1, 1);
    em_tensor *o = NULL, *lse = NULL, *d[3] = {0};
    bool ok = em_scaled_dot_product_attention_lse(q, k, v, mask, causal, NAN, &o, &lse) == EM_OK;
    em_tensor *go = ok ? trand(dt, 3, em_sizes(o), -1, 1) : NULL;
    ok = ok && !em_scaled_dot_product_attention_backward(go, NULL, q, k, v, o, lse, mask, causal, NAN, &d[0], &d[1],
                                                         &d[2]);
    /* composite: o = P v; the gradients of sum(o go) (lse's gradient: gradcheck, test_autograd_attention.c) */
    em_tensor *in[3] = {q, k, v}, *g[3] = {0};
    for (int i = 0; i < 3; i++) em_set_requires_grad(in[i], true);
    em_tensor *p = em_attention_weights(q, k, mask, causal, NAN), *po = p ? em_matmul(p, v) : NULL;
    em_tensor *t1 = po ? em_mul(po, go) : NULL, *tot = t1 ? em_sum(t1, 0, NULL, false, EM_DTYPE_NONE) : NULL;
    ok = ok && tot && !em_autograd_grad(1, &tot, NULL, 3, in, false, false, false, g);
    double tol = dt == EM_F32 ? 1e-4 : 1e-10;
    for (int i = 0; i < 3 && ok; i++) {
        double *want = tvals(g[i]);
        ok = tclose(d[i], want, tol, tol);
        free(want);
    }
    RELEASE(q, k, v, o, lse, go, d[0], d[1], d[2], g[0], g[1], g[2], p, po, t1, tot);
    return ok;
}

TEST(attention_backward_op)
{
    em_tensor *bm = trand(EM_BOOL, SHAPE(2, 70, 150), 0, 1), *row = em_select(bm, 1, 3);
    em_fill_(row, 0); /* a fully masked row */
    em_tensor *fm = trand(EM_F32, SHAPE(70, 150), -1, 1);
    for (int d = 0; d < 2; d++) {
        em_dtype dt = d ? EM_F64 : EM_F32;
        CHECK(backward_matches_composite(dt, (int64_t[]){2, 5, 4}, (int64_t[]){2, 7, 4}, (int64_t[]){2, 7, 3}, NULL,
                                         false));
        CHECK(backward_matches_composite(dt, (int64_t[]){2, 70, 8}, (int64_t[]){2, 150, 8}, (int64_t[]){2, 150, 5},
                                         bm, false));
        CHECK(backward_matches_composite(dt, (int64_t[]){2, 150, 8}, (int64_t[]){2, 140, 8}, (int64_t[]){2, 140, 5},
                                         NULL, true));
    }
    CHECK(backward_matches_composite(EM_F32, (int64_t[]){1, 70, 8}, (int64_t[]){1, 150, 8}, (int64_t[]){1, 150, 5},
                                     fm, false));
    COVER(EM_OP_scaled_dot_product_attention_backward);
    RELEASE(bm, row, fm);
}
