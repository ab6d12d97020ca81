/* The op layer of scaled dot-product attention (include/ember/attention.h):
 * argument checks, the broadcast batch shape, the fused forward and backward
 * ops' calls, and the composite attention_weights.
 *
 * Note [Attention call]
 * Both fused ops reach their kernels (src/cpu/attention*.c) with operands of
 * the batch shape B (expanded views, no copy) whose rows BLAS can read (unit
 * stride along the last dim, a row stride >= the row's length):
 *   forward:  in = q (B, L, E), k (B, S, E), v (B, S, Ev), mask (B, L, S) or NULL
 *             out = o (B, L, Ev), lse (B, L)  (contiguous)
 *   backward: in = grad_out (B, L, Ev), q, k, v, stats (B, L, 2) = [lse, delta],
 *             mask;  out = dq (B, L, E), dk (B, S, E), dv (B, S, Ev)  (contiguous)
 *   f[0] = scale, i[0] = is_causal, i[1] = mask kind (MASK_*).
 * The mask keeps its strides (0 where it broadcasts): never materialised.
 * delta = rowsum(grad_out * o) is computed here with ops and packed with lse,
 * so that the backward op's inputs fit an em_call. */
#include "../ops/dispatch.h"
#include <limits.h>
#include <math.h>

enum { MASK_NONE, MASK_BOOL, MASK_FLOAT };

/* The checked geometry of one attention call. */
typedef struct sdpa_geom {
    int nb;                      /* batch dims of the result */
    int64_t batch[EM_MAX_DIMS];  /* the broadcast batch shape */
    int64_t L, S, E, Ev;
    em_dtype dt;
    int mask_kind;
    double scale;
} sdpa_geom;

static const char *const OP = "scaled_dot_product_attention";

/* Batch dims of t (all but the last two) broadcast into g->batch. */
static em_status broadcast_batch(sdpa_geom *g, const em_tensor *t, const char *what)
{
    int nb = g->nb;
    int r = em_broadcast_shapes(nb, g->batch, t->ndim - 2, t->sizes, g->batch, OP);
    if (r < 0)
        return em_fail(EM_ERR_SHAPE, "%s: the batch dims of %s %s do not broadcast with %s", OP, what,
                       em_shape_str(t->ndim, t->sizes), em_shape_str(nb, g->batch));
    g->nb = r;
    return EM_OK;
}

static em_status check_qkv(const em_tensor *q, const em_tensor *k, const em_tensor *v, const em_tensor *mask,
                           bool is_causal, double scale, sdpa_geom *g)
{
    if (!q || !k || !v) return em_fail(EM_ERR_VALUE, "%s: query, key and value must not be NULL", OP);
    const em_tensor *vv = v;
    if (q->ndim < 2 || k->ndim < 2 || vv->ndim < 2)
        return em_fail(EM_ERR_SHAPE, "%s: expected query, key and value of at least 2 dims, got %s, %s and %s", OP,
                       em_shape_str(q->ndim, q->sizes), em_shape_str(k->ndim, k->sizes),
                       em_shape_str(vv->ndim, vv->sizes));
    if (q->dtype != k->dtype || q->dtype != vv->dtype)
        return em_fail(EM_ERR_DTYPE, "Expected query, key, and value to have the same dtype, but got query.dtype: "
                       "%s key.dtype: %s and value.dtype: %s instead.", em_dtypes[q->dtype].scalar_name,
                       em_dtypes[k->dtype].scalar_name, em_dtypes[vv->dtype].scalar_name);
    if (q->dtype != EM_F32 && q->dtype != EM_F64)
        return em_fail(EM_ERR_DTYPE, "\"%s_cpu\" not implemented for '%s'", OP, em_dtypes[q->dtype].scalar_name);
    g->dt = (em_dtype)q->dtype;
    g->L = q->sizes[q->ndim - 2];
    g->E = q->sizes[q->ndim - 1];
    g->S = k->sizes[k->ndim - 2];
    g->Ev = vv->sizes[vv->ndim - 1];
    if (k->sizes[k->ndim - 1] != g->E)
        return em_fail(EM_ERR_SHAPE, "%s: expected key's last dim to be query's embedding size %lld, got key %s", OP,
                       (long long)g->E, em_shape_str(k->ndim, k->sizes));
    if (vv->sizes[vv->ndim - 2] != g->S)
        return em_fail(EM_ERR_SHAPE, "%s: expected key and value of the same sequence length, got key %s and value %s",
                       OP, em_shape_str(k->ndim, k->sizes), em_shape_str(vv->ndim, vv->sizes));
    if (g->E > INT_MAX / 2 || g->Ev > INT_MAX / 2 || g->L > INT_MAX / 2 || g->S > INT_MAX / 2)
        return em_fail(EM_ERR_SHAPE, "%s: sizes beyond BLAS's int range", OP);
    g->nb = 0;
    if (broadcast_batch(g, q, "query") || broadcast_batch(g, k, "key") || broadcast_batch(g, vv, "value"))
        return em_error_code();
    g->mask_kind = MASK_NONE;
    if (mask) {
        if (is_causal)
            return em_fail(EM_ERR_RUNTIME, "%s: Explicit attn_mask should not be set when is_causal=True", OP);
        if (mask->dtype == EM_BOOL) g->mask_kind = MASK_BOOL;
        else if (mask->dtype == q->dtype) g->mask_kind = MASK_FLOAT;
        else
            return em_fail(EM_ERR_DTYPE, "%s: Expected attn_mask dtype to be bool or to match query dtype, got %s "
                           "for a query of %s", OP, em_dtypes[mask->dtype].scalar_name,
                           em_dtypes[q->dtype].scalar_name);
        int64_t want[EM_MAX_DIMS + 2], got[EM_MAX_DIMS + 2];
        memcpy(want, g->batch, g->nb * sizeof *want);
        want[g->nb] = g->L, want[g->nb + 1] = g->S;
        int r = mask->ndim <= g->nb + 2 ? em_broadcast_shapes(mask->ndim, mask->sizes, g->nb + 2, want, got, OP) : -1;
        if (r != g->nb + 2 || memcmp(got, want, r * sizeof *got)) {
            em_clear_error();
            return em_fail(EM_ERR_SHAPE, "%s: attn_mask of shape %s does not broadcast to the attention shape %s", OP,
                           em_shape_str(mask->ndim, mask->sizes), em_shape_str(g->nb + 2, want));
        }
    }
    g->scale = !isnan(scale) ? scale : g->E > 0 ? 1 / sqrt((double)g->E) : 1;
    return EM_OK;
}

/* t expanded to (batch..., rows, cols), with rows BLAS can read: a new reference. */
static em_tensor *operand(const em_tensor *t, const sdpa_geom *g, int64_t rows, int64_t cols, bool blas_rows)
{
    int64_t sizes[EM_MAX_DIMS + 2];
    memcpy(sizes, g->batch, g->nb * sizeof *sizes);
    sizes[g->nb] = rows, sizes[g->nb + 1] = cols;
    em_tensor *e = em_expand(t, g->nb + 2, sizes);
    if (!e || !blas_rows) return e;
    const int64_t *st = e->strides + g->nb;
    bool readable = (cols <= 1 || st[1] == 1) && (rows <= 1 || st[0] >= cols) && st[0] <= INT_MAX;
    if (readable) return e;
    em_tensor *c = em_contiguous(e);
    em_release(e);
    return c;
}

static em_tensor *new_result(const sdpa_geom *g, int64_t rows, int64_t cols, int extra)
{
    int64_t sizes[EM_MAX_DIMS + 2];
    memcpy(sizes, g->batch, g->nb * sizeof *sizes);
    sizes[g->nb] = rows, sizes[g->nb + 1] = cols;
    if (em_check_sizes(g->nb + extra, sizes, g->dt, OP)) return NULL;
    return em_tensor_new(g->nb + extra, sizes, g->dt, EM_DEVICE_CPU);
}

static void fill_call(em_call *c, const sdpa_geom *g, bool is_causal)
{
    c->dtype = g->dt;
    c->f[0] = g->scale;
    c->i[0] = is_causal;
    c->i[1] = g->mask_kind;
}

/* Note [Half-type attention]
 * float16 and bfloat16 (q, k and v from a bfloat16 autocast region) compute
 * in float32, as the kernels are float32/float64: the operands are cast up,
 * the results cast back, and lse stays float32 for the backward to read. */
static bool computes_in_f32(const em_tensor *q, const em_tensor *k, const em_tensor *v)
{
    return (q->dtype == EM_F16 || q->dtype == EM_BF16) && k->dtype == q->dtype && v->dtype == q->dtype;
}

/* out[i] = ts[i] as float32 (NULL stays NULL; a bool mask is kept as is); false on failure. */
static bool cast_up(int n, const em_tensor *const *ts, em_tensor **out)
{
    bool ok = true;
    for (int i = 0; i < n; i++) {
        out[i] = !ts[i] ? NULL : ts[i]->dtype == EM_BOOL ? em_retain((em_tensor *)ts[i]) : em_to_dtype(ts[i], EM_F32);
        ok = ok && (out[i] || !ts[i]);
    }
    return ok;
}

static void release_all(int n, em_tensor **ts)
{
    for (int i = 0; i < n; i++) em_release(ts[i]);
}

/* *t (float32) replaced by its cast to dt; false (and *t released) on failure. */
static bool cast_down(em_tensor **t, em_dtype dt)
{
    em_tensor *d = em_to_dtype(*t, dt);
    em_release(*t);
    *t = d;
    return d != NULL;
}

em_status em_scaled_dot_product_attention_lse(const em_tensor *q, const em_tensor *k, const em_tensor *v,
                                              const em_tensor *attn_mask, bool is_causal, double scale,
                                              em_tensor **out, em_tensor **lse)
{
    if (EM_NULL(q) || EM_NULL(k) || EM_NULL(v) || EM_NULL(out) || EM_NULL(lse)) return em_error_code();
    if (computes_in_f32(q, k, v)) { /* Note [Half-type attention] */
        em_tensor *up[4];
        em_status st = cast_up(4, (const em_tensor *[]){q, k, v, attn_mask}, up)
                           ? em_scaled_dot_product_attention_lse(up[0], up[1], up[2], up[3], is_causal, scale, out, lse)
                           : em_error_code();
        release_all(4, up);
        if (st == EM_OK && !cast_down(out, (em_dtype)q->dtype)) {
            em_release(*lse);
            return em_error_code();
        }
        return st;
    }
    sdpa_geom g = {0};
    if (check_qkv(q, k, v, attn_mask, is_causal, scale, &g)) return em_error_code();
    em_tensor *qe = operand(q, &g, g.L, g.E, true), *ke = operand(k, &g, g.S, g.E, true);
    em_tensor *ve = operand(v, &g, g.S, g.Ev, true);
    em_tensor *me = attn_mask ? operand(attn_mask, &g, g.L, g.S, false) : NULL;
    em_tensor *o = new_result(&g, g.L, g.Ev, 2), *l = new_result(&g, g.L, 0, 1);
    em_status st = qe && ke && ve && (me || !attn_mask) && o && l ? EM_OK : em_error_code();
    if (st == EM_OK) {
        em_call c = {.op = EM_OP_scaled_dot_product_attention, .nin = 4, .nout = 2, .out = {o, l},
                     .in = {qe, ke, ve, me}};
        fill_call(&c, &g, is_causal);
        st = em_dispatch(&c);
    }
    em_release(qe), em_release(ke), em_release(ve), em_release(me);
    if (st) {
        em_release(o), em_release(l);
        return st;
    }
    *out = o, *lse = l;
    return EM_OK;
}

em_tensor *em_scaled_dot_product_attention(const em_tensor *q, const em_tensor *k, const em_tensor *v,
                                           const em_tensor *attn_mask, bool is_causal, double scale)
{
    em_tensor *o = NULL, *lse = NULL;
    if (em_scaled_dot_product_attention_lse(q, k, v, attn_mask, is_causal, scale, &o, &lse)) return NULL;
    em_release(lse);
    return o;
}

static bool any_requires_grad(int n, const em_tensor *const *ts)
{
    for (int i = 0; i < n; i++)
        if (ts[i] && em_requires_grad(ts[i])) return true;
    return false;
}

/* grad_out, out (B..., L, Ev), lse and grad_lse (B..., L) of q's dtype; the refusal to record. */
static em_status check_backward_args(const em_tensor *const *ts, const sdpa_geom *g, const em_tensor *const *all)
{
    const char *bw = "scaled_dot_product_attention_backward";
    if (!ts[0] || !ts[1] || !ts[2]) return em_fail(EM_ERR_VALUE, "%s: grad_out, out and lse must not be NULL", bw);
    for (int i = 0; i < 4; i++) {
        const em_tensor *t = ts[i];
        if (!t) continue;
        int want_nd = g->nb + (i < 2 ? 2 : 1);
        bool ok = t->dtype == g->dt && t->ndim == want_nd && !memcmp(t->sizes, g->batch, g->nb * sizeof *t->sizes) &&
                  t->sizes[g->nb] == g->L && (i >= 2 || t->sizes[g->nb + 1] == g->Ev);
        if (!ok)
            return em_fail(EM_ERR_SHAPE, "%s: expected %s of shape [batch..., %lld%s] and dtype %s, got %s %s", bw,
                           (const char *[]){"grad_out", "out", "lse", "grad_lse"}[i], (long long)g->L, i < 2 ? ", Ev" : "",
                           em_dtypes[g->dt].name, em_dtypes[t->dtype].name, em_shape_str(t->ndim, t->sizes));
    }
    if (em_grad_mode() && any_requires_grad(8, all))
        return em_fail(EM_ERR_NOT_IMPLEMENTED, "the derivative for '%s' is not implemented", bw);
    return EM_OK;
}

em_status em_scaled_dot_product_attention_backward(const em_tensor *grad_out, const em_tensor *grad_lse,
                                                   const em_tensor *q,
                                                   const em_tensor *k, const em_tensor *v, const em_tensor *out,
                                                   const em_tensor *lse, const em_tensor *attn_mask, bool is_causal,
                                                   double scale, em_tensor **dq, em_tensor **dk, em_tensor **dv)
{
    if (q && k && v && computes_in_f32(q, k, v)) { /* Note [Half-type attention] */
        em_tensor *up[8];
        em_status st = cast_up(8, (const em_tensor *[]){grad_out, grad_lse, q, k, v, out, lse, attn_mask}, up)
                           ? em_scaled_dot_product_attention_backward(up[0], up[1], up[2], up[3], up[4], up[5], up[6],
                                                                      up[7], is_causal, scale, dq, dk, dv)
                           : em_error_code();
        release_all(8, up);
        if (st == EM_OK) {
            bool ok = cast_down(dq, (em_dtype)q->dtype);
            ok = cast_down(dk, (em_dtype)q->dtype) && ok;
            ok = cast_down(dv, (em_dtype)q->dtype) && ok;
            if (!ok) {
                em_release(*dq), em_release(*dk), em_release(*dv);
                return em_error_code();
            }
        }
        return st;
    }
    sdpa_geom g = {0};
    const em_tensor *all[8] = {grad_out, grad_lse, q, k, v, out, lse, attn_mask};
    if (check_qkv(q, k, v, attn_mask, is_causal, scale, &g) ||
        check_backward_args((const em_tensor *[]){grad_out, out, lse, grad_lse}, &g, all))
        return em_error_code();
    /* delta = rowsum(grad_out * out) - grad_lse: dS = P (dP - delta) covers both outputs */
    int last = -1;
    em_tensor *prod = em_mul(grad_out, out);
    em_tensor *dsum = prod ? em_sum(prod, 1, &last, false, EM_DTYPE_NONE) : NULL;
    em_tensor *delta = dsum && grad_lse ? em_sub(dsum, grad_lse, 1) : em_retain(dsum);
    em_tensor *stats = delta ? em_stack(2, (const em_tensor *[]){lse, delta}, -1) : NULL;
    em_tensor *ge = operand(grad_out, &g, g.L, g.Ev, true);
    em_tensor *qe = operand(q, &g, g.L, g.E, true), *ke = operand(k, &g, g.S, g.E, true);
    em_tensor *ve = operand(v, &g, g.S, g.Ev, true);
    em_tensor *me = attn_mask ? operand(attn_mask, &g, g.L, g.S, false) : NULL;
    em_tensor *rq = new_result(&g, g.L, g.E, 2), *rk = new_result(&g, g.S, g.E, 2), *rv = new_result(&g, g.S, g.Ev, 2);
    em_status st = stats && ge && qe && ke && ve && (me || !attn_mask) && rq && rk && rv ? EM_OK : em_error_code();
    if (st == EM_OK) {
        em_call c = {.op = EM_OP_scaled_dot_product_attention_backward, .nin = 6, .nout = 3, .out = {rq, rk, rv},
                     .in = {ge, qe, ke, ve, stats, me}};
        fill_call(&c, &g, is_causal);
        st = em_dispatch(&c);
    }
    em_tensor *tmp[] = {prod, dsum, delta, stats, ge, qe, ke, ve, me};
    for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++) em_release(tmp[i]);
    if (st) {
        em_release(rq), em_release(rk), em_release(rv);
        return st;
    }
    *dq = rq, *dk = rk, *dv = rv;
    return EM_OK;
}

/* ---- the composite ------------------------------------------------------------------ */
em_tensor *em_attention_weights(const em_tensor *q, const em_tensor *k, const em_tensor *attn_mask, bool is_causal,
                                double scale)
{
    sdpa_geom g = {0};
    if (check_qkv(q, k, k, attn_mask, is_causal, scale, &g)) return NULL;
    em_tensor *t[16] = {0};
    int n = 0, last = -1;
#define STEP(e) (t[n] = (e), t[n++])
    em_tensor *kt = STEP(em_transpose(k, -1, -2));
    em_tensor *s = kt ? STEP(em_matmul(q, kt)) : NULL;
    em_tensor *sc = STEP(em_scalar_float(g.scale));
    if (s && sc) s = STEP(em_mul(s, sc));
    if (s && g.mask_kind == MASK_FLOAT) s = STEP(em_add(s, attn_mask, 1));
    /* blocked[i, j]: query i does not attend to key j */
    em_tensor *blocked = NULL;
    if (g.mask_kind == MASK_BOOL) blocked = STEP(em_logical_not(attn_mask));
    if (is_causal) {
        em_tensor *ones = STEP(em_ones(2, (int64_t[]){g.L, g.S}, EM_BOOL));
        blocked = ones ? STEP(em_triu(ones, 1)) : NULL;
    }
    if (s && blocked) s = STEP(em_masked_fill(s, blocked, -INFINITY));
    /* a row with no key left (all -inf) gets uniform finite scores, then zero
     * probabilities: no NaN, and zero gradients through it */
    em_tensor *ninf = STEP(em_scalar_float(-INFINITY));
    em_tensor *is_ninf = s && ninf ? STEP(em_eq(s, ninf)) : NULL;
    em_tensor *dead = is_ninf ? STEP(em_all(is_ninf, 1, &last, true)) : NULL;
    em_tensor *p = NULL;
    if (dead) s = STEP(em_masked_fill(s, dead, 0));
    if (dead && s) p = STEP(em_softmax(s, -1, EM_DTYPE_NONE));
    em_tensor *r = p ? em_masked_fill(p, dead, 0) : NULL;
#undef STEP
    for (int i = 0; i < n; i++) em_release(t[i]);
    return r;
}
