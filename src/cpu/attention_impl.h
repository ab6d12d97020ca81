/* Per-dtype template of the attention kernels, included by attention.c once
 * per dtype with T, SFX, EXP and GEMM defined (see attention.h). A score
 * tile is row-major with row stride SDPA_BK. Defines FN(sdpa_forward) and
 * FN(sdpa_backward), the kernels of that dtype. */
#define SDPA_CAT2(a, b) a##_##b
#define SDPA_CAT(a, b) SDPA_CAT2(a, b)
#define FN(name) SDPA_CAT(name, SFX)

/* C (M x N, ldc) = alpha * op(A) op(B) + beta * C, row-major; empty sizes are fine. */
static inline void FN(gemm)(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T *A, int lda,
                            const T *B, int ldb, T beta, T *C, int ldc)
{
    if (M == 0 || N == 0) return;
    if (K == 0) {
        if (beta == 0)
            for (int64_t i = 0; i < M; i++) memset(C + i * ldc, 0, (size_t)N * sizeof(T));
        return;
    }
    const int omp = cpu_blas_begin();
    GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
         alpha, A, lda, B, ldb, beta, C, ldc);
    cpu_blas_end(omp);
}

/* s = scale * Q[i0:i0+bq] K[j0:j0+bk]^T of batch b, masked: -inf where a query
 * does not attend to a key (bool mask false, causal j > i), + a float mask. */
static void FN(scores)(const sdpa_ctx *x, int64_t b, int64_t i0, int64_t bq, int64_t j0, int64_t bk, T *s)
{
    const T *Q = (const T *)sdpa_base(&x->q, b) + i0 * x->q.rs;
    const T *K = (const T *)sdpa_base(&x->k, b) + j0 * x->k.rs;
    FN(gemm)(false, true, bq, bk, x->E, (T)x->scale, Q, sdpa_ld(&x->q, x->E), K, sdpa_ld(&x->k, x->E), 0, s,
             SDPA_BK);
    if (!x->causal && x->mask_kind == SDPA_MASK_NONE) return;
    const char *mb = x->mask_kind != SDPA_MASK_NONE ? sdpa_base(&x->mask, b) : NULL;
    const int64_t mrs = x->mask.rs, mcs = x->mask.cs;
    for (int64_t r = 0; r < bq; r++) {
        T *row = s + r * SDPA_BK;
        const int64_t i = i0 + r;
        if (x->causal) {
            for (int64_t c = sdpa_causal_cols(i, j0, bk); c < bk; c++) row[c] = -INFINITY;
        } else if (x->mask_kind == SDPA_MASK_BOOL) {
            const uint8_t *m = (const uint8_t *)mb + i * mrs + j0 * mcs;
            for (int64_t c = 0; c < bk; c++) row[c] = m[c * mcs] ? row[c] : -INFINITY;
        } else {
            const T *m = (const T *)mb + i * mrs + j0 * mcs;
            for (int64_t c = 0; c < bk; c++) row[c] += m[c * mcs];
        }
    }
}

/* ---- forward ----------------------------------------------------------------------- */
/* Output rows [i0, i0 + bq) of batch b: the online softmax keeps each row's
 * running max m and sum l of exp(score - m); the output rows themselves
 * accumulate P V, rescaled by exp(m_old - m_new) whenever the max grows. */
static void FN(forward_tile)(const sdpa_ctx *x, int64_t b, int64_t i0, T *s, T *m, T *l, T *out, T *lse)
{
    const int64_t bq = x->L - i0 < SDPA_BQ ? x->L - i0 : SDPA_BQ, Ev = x->Ev;
    T *acc = out + (b * x->L + i0) * Ev;
    memset(acc, 0, (size_t)(bq * Ev) * sizeof(T));
    for (int64_t r = 0; r < bq; r++) m[r] = -INFINITY, l[r] = 0;
    const int64_t kend = x->causal && i0 + bq < x->S ? i0 + bq : x->S;
    const T *V = (const T *)sdpa_base(&x->v, b);
    for (int64_t j0 = 0; j0 < kend; j0 += SDPA_BK) {
        const int64_t bk = kend - j0 < SDPA_BK ? kend - j0 : SDPA_BK;
        FN(scores)(x, b, i0, bq, j0, bk, s);
        for (int64_t r = 0; r < bq; r++) {
            T *row = s + r * SDPA_BK, mx = m[r];
            for (int64_t c = 0; c < bk; c++) mx = row[c] > mx ? row[c] : mx;
            if (mx == -INFINITY) { /* no key of this row so far */
                memset(row, 0, (size_t)bk * sizeof(T));
                continue;
            }
            T sum = 0, alpha = EXP(m[r] - mx);
            for (int64_t c = 0; c < bk; c++) {
                row[c] = EXP(row[c] - mx);
                sum += row[c];
            }
            l[r] = l[r] * alpha + sum;
            m[r] = mx;
            if (alpha != 1)
                for (int64_t e = 0; e < Ev; e++) acc[r * Ev + e] *= alpha;
        }
        FN(gemm)(false, false, bq, Ev, bk, 1, s, SDPA_BK, V + j0 * x->v.rs, sdpa_ld(&x->v, Ev), 1, acc, (int)(Ev > 0 ? Ev : 1));
    }
    for (int64_t r = 0; r < bq; r++) { /* l == 0: a fully masked row, zeros (attention.h) */
        T inv = l[r] > 0 ? 1 / l[r] : 0;
        for (int64_t e = 0; e < Ev; e++) acc[r * Ev + e] *= inv;
        lse[b * x->L + i0 + r] = l[r] > 0 ? m[r] + (T)log(l[r]) : -INFINITY;
    }
}

typedef struct FN(sdpa_fwd_job) {
    const sdpa_ctx *x;
    int64_t ntiles;
    T *out, *lse;
    _Atomic bool failed;
} FN(sdpa_fwd_job);

static void FN(forward_tiles)(void *p, int64_t begin, int64_t end)
{
    FN(sdpa_fwd_job) *j = p;
    T *buf = malloc(sizeof(T) * (SDPA_BQ * SDPA_BK + 2 * SDPA_BQ));
    if (!buf) {
        j->failed = true;
        return;
    }
    for (int64_t t = begin; t < end; t++)
        FN(forward_tile)(j->x, t / j->ntiles, t % j->ntiles * SDPA_BQ, buf, buf + SDPA_BQ * SDPA_BK,
                         buf + SDPA_BQ * SDPA_BK + SDPA_BQ, j->out, j->lse);
    free(buf);
}

static em_status FN(sdpa_forward)(const em_call *c)
{
    sdpa_ctx x;
    sdpa_ctx_init(&x, c, c->in[0], c->in[1], c->in[2], c->in[3]);
    FN(sdpa_fwd_job) j = {.x = &x, .ntiles = (x.L + SDPA_BQ - 1) / SDPA_BQ, .out = (T *)em_tensor_data(c->out[0]),
                          .lse = (T *)em_tensor_data(c->out[1])};
    em_parallel_for(x.nbatch * j.ntiles, SDPA_BQ * x.S * (x.E + x.Ev), SDPA_GRAIN, FN(forward_tiles), &j);
    return j.failed ? em_fail(EM_ERR_MEMORY, "scaled_dot_product_attention: out of memory for tile buffers") : EM_OK;
}

/* ---- backward ---------------------------------------------------------------------- */
/* What a backward task reads besides the forward's operands. */
typedef struct FN(sdpa_grads) {
    sdpa_operand go;
    const T *stats; /* (nbatch, L, 2): lse, delta = rowsum(grad_out * out) */
    T *dq, *dk, *dv;
} FN(sdpa_grads);

/* ds (in place of the score tile) = P * (dP - delta), with P = exp(score - lse)
 * recomputed and dP = dO V^T; P is left in p (row stride SDPA_BK) when p != s. */
static void FN(grad_scores)(const sdpa_ctx *x, const FN(sdpa_grads) *g, int64_t b, int64_t i0, int64_t bq,
                            int64_t j0, int64_t bk, T *s, T *dp, T *p)
{
    FN(scores)(x, b, i0, bq, j0, bk, s);
    const T *st = g->stats + (b * x->L + i0) * 2;
    for (int64_t r = 0; r < bq; r++) {
        T *row = s + r * SDPA_BK, lse = st[2 * r];
        if (lse == -INFINITY) memset(row, 0, (size_t)bk * sizeof(T)); /* a fully masked row: no gradient */
        else
            for (int64_t c = 0; c < bk; c++) row[c] = EXP(row[c] - lse);
    }
    const T *dO = (const T *)sdpa_base(&g->go, b) + i0 * g->go.rs, *V = (const T *)sdpa_base(&x->v, b);
    FN(gemm)(false, true, bq, bk, x->Ev, 1, dO, sdpa_ld(&g->go, x->Ev), V + j0 * x->v.rs, sdpa_ld(&x->v, x->Ev), 0,
             dp, SDPA_BK);
    for (int64_t r = 0; r < bq; r++) {
        T *row = s + r * SDPA_BK, delta = st[2 * r + 1];
        const T *dpr = dp + r * SDPA_BK;
        if (p != s) memcpy(p + r * SDPA_BK, row, (size_t)bk * sizeof(T));
        for (int64_t c = 0; c < bk; c++) row[c] *= dpr[c] - delta;
    }
}

/* dK and dV rows [j0, j0 + bk) of batch b: sums over the query tiles that see them. */
static void FN(dkdv_tile)(const sdpa_ctx *x, const FN(sdpa_grads) *g, int64_t b, int64_t j0, T *s, T *dp, T *p)
{
    const int64_t bk = x->S - j0 < SDPA_BK ? x->S - j0 : SDPA_BK, E = x->E, Ev = x->Ev;
    T *dK = g->dk + (b * x->S + j0) * E, *dV = g->dv + (b * x->S + j0) * Ev;
    memset(dK, 0, (size_t)(bk * E) * sizeof(T));
    memset(dV, 0, (size_t)(bk * Ev) * sizeof(T));
    const T *Q = (const T *)sdpa_base(&x->q, b);
    const T *dO = (const T *)sdpa_base(&g->go, b);
    for (int64_t i0 = x->causal ? j0 : 0; i0 < x->L; i0 += SDPA_BQ) {
        const int64_t bq = x->L - i0 < SDPA_BQ ? x->L - i0 : SDPA_BQ;
        FN(grad_scores)(x, g, b, i0, bq, j0, bk, s, dp, p);
        FN(gemm)(true, false, bk, Ev, bq, 1, p, SDPA_BK, dO + i0 * g->go.rs, sdpa_ld(&g->go, Ev), 1, dV,
                 (int)(Ev > 0 ? Ev : 1));
        FN(gemm)(true, false, bk, E, bq, (T)x->scale, s, SDPA_BK, Q + i0 * x->q.rs, sdpa_ld(&x->q, E), 1, dK,
                 (int)(E > 0 ? E : 1));
    }
}

/* dQ rows [i0, i0 + bq) of batch b: sums over the key tiles they see. */
static void FN(dq_tile)(const sdpa_ctx *x, const FN(sdpa_grads) *g, int64_t b, int64_t i0, T *s, T *dp)
{
    const int64_t bq = x->L - i0 < SDPA_BQ ? x->L - i0 : SDPA_BQ, E = x->E;
    T *dQ = g->dq + (b * x->L + i0) * E;
    memset(dQ, 0, (size_t)(bq * E) * sizeof(T));
    const int64_t kend = x->causal && i0 + bq < x->S ? i0 + bq : x->S;
    const T *K = (const T *)sdpa_base(&x->k, b);
    for (int64_t j0 = 0; j0 < kend; j0 += SDPA_BK) {
        const int64_t bk = kend - j0 < SDPA_BK ? kend - j0 : SDPA_BK;
        FN(grad_scores)(x, g, b, i0, bq, j0, bk, s, dp, s);
        FN(gemm)(false, false, bq, E, bk, (T)x->scale, s, SDPA_BK, K + j0 * x->k.rs, sdpa_ld(&x->k, E), 1, dQ,
                 (int)(E > 0 ? E : 1));
    }
}

/* Two passes, each parallel without write conflicts: dK, dV by key tile, then
 * dQ by query tile (the score and dP tiles are recomputed in each). */
typedef struct FN(sdpa_bwd_job) {
    const sdpa_ctx *x;
    const FN(sdpa_grads) *g;
    int64_t nqt, nkt;
    _Atomic bool failed;
} FN(sdpa_bwd_job);

static void FN(dkdv_tiles)(void *p, int64_t begin, int64_t end)
{
    FN(sdpa_bwd_job) *j = p;
    T *buf = malloc(sizeof(T) * 3 * SDPA_BQ * SDPA_BK);
    if (!buf) {
        j->failed = true;
        return;
    }
    for (int64_t t = begin; t < end; t++)
        FN(dkdv_tile)(j->x, j->g, t / j->nkt, t % j->nkt * SDPA_BK, buf, buf + SDPA_BQ * SDPA_BK,
                      buf + 2 * SDPA_BQ * SDPA_BK);
    free(buf);
}

static void FN(dq_tiles)(void *p, int64_t begin, int64_t end)
{
    FN(sdpa_bwd_job) *j = p;
    T *buf = malloc(sizeof(T) * 2 * SDPA_BQ * SDPA_BK);
    if (!buf) {
        j->failed = true;
        return;
    }
    for (int64_t t = begin; t < end; t++) FN(dq_tile)(j->x, j->g, t / j->nqt, t % j->nqt * SDPA_BQ, buf, buf + SDPA_BQ * SDPA_BK);
    free(buf);
}

static em_status FN(sdpa_backward)(const em_call *c)
{
    sdpa_ctx x;
    sdpa_ctx_init(&x, c, c->in[1], c->in[2], c->in[3], c->in[5]);
    FN(sdpa_grads) g = {.go = sdpa_operand_of(c->in[0], c->in[1]->ndim - 2),
                        .stats = (const T *)em_tensor_data(c->in[4]),
                        .dq = (T *)em_tensor_data(c->out[0]),
                        .dk = (T *)em_tensor_data(c->out[1]),
                        .dv = (T *)em_tensor_data(c->out[2])};
    FN(sdpa_bwd_job) j = {.x = &x, .g = &g, .nqt = (x.L + SDPA_BQ - 1) / SDPA_BQ, .nkt = (x.S + SDPA_BK - 1) / SDPA_BK};
    em_parallel_for(x.nbatch * j.nkt, SDPA_BK * x.L * (x.E + x.Ev), SDPA_GRAIN, FN(dkdv_tiles), &j);
    em_parallel_for(x.nbatch * j.nqt, SDPA_BQ * x.S * (x.E + x.Ev), SDPA_GRAIN, FN(dq_tiles), &j);
    const bool failed = j.failed;
    return failed ? em_fail(EM_ERR_MEMORY, "scaled_dot_product_attention_backward: out of memory for tile buffers")
                  : EM_OK;
}

#undef FN
#undef SDPA_CAT
#undef SDPA_CAT2
