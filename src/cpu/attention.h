/* What the attention kernels share (Note [Attention call] in src/nn/attention.c):
 * the operands' geometry by flat batch index, tile sizes, BLAS on tiles, and
 * the masked scores of one tile. The per-dtype code is in attention_fwd.h and
 * attention_bwd.h, templates included once per dtype with T (float, double),
 * SFX (f32, f64), EXP (an exp of T that vectorizes) and GEMM (cblas_?gemm). */
#ifndef EMBER_CPU_ATTENTION_H
#define EMBER_CPU_ATTENTION_H

#include "gemm.h"
#include "vmath.h"
#include <cblas.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Queries x keys per tile: a score tile is BQ x BK; the forward keeps one
 * output accumulator of BQ x Ev per thread. */
#define SDPA_BQ 64
#define SDPA_BK 128
/* Attention below this many multiply-adds runs on one thread. */
#define SDPA_GRAIN (1 << 18)

enum { SDPA_MASK_NONE, SDPA_MASK_BOOL, SDPA_MASK_FLOAT };

/* An operand (batch..., rows, cols) of the call: element (b, r, c) of batch
 * index b is at base(b) + r * rs + c * cs (elements). */
typedef struct sdpa_operand {
    char *data;
    size_t esize;
    int nb;
    const int64_t *bsizes, *bstrides;
    int64_t rs, cs;
} sdpa_operand;

static inline sdpa_operand sdpa_operand_of(const em_tensor *t, int nb)
{
    sdpa_operand o = {0};
    if (!t) return o;
    o.data = em_tensor_data(t);
    o.esize = em_dtypes[t->dtype].size;
    o.nb = nb;
    o.bsizes = t->sizes;
    o.bstrides = t->strides;
    o.rs = t->strides[nb];
    o.cs = t->strides[nb + 1 < t->ndim ? nb + 1 : nb];
    return o;
}

/* The address of (b, 0, 0). */
static inline void *sdpa_base(const sdpa_operand *o, int64_t b)
{
    int64_t off = 0;
    for (int d = o->nb - 1; d >= 0; d--) {
        off += (b % o->bsizes[d]) * o->bstrides[d];
        b /= o->bsizes[d];
    }
    return o->data + off * (int64_t)o->esize;
}

/* BLAS's leading dimension of a row-major operand with `cols` columns. */
static inline int sdpa_ld(const sdpa_operand *o, int64_t cols)
{
    return (int)(o->rs > cols ? o->rs : cols > 0 ? cols : 1);
}

/* What one (batch, tile) task reads. */
typedef struct sdpa_ctx {
    int64_t nbatch, L, S, E, Ev;
    double scale;
    bool causal;
    int mask_kind;
    sdpa_operand q, k, v, mask;
} sdpa_ctx;

static inline void sdpa_ctx_init(sdpa_ctx *x, const em_call *c, const em_tensor *q, const em_tensor *k,
                                 const em_tensor *v, const em_tensor *mask)
{
    int nb = q->ndim - 2;
    x->nbatch = em_shape_numel(nb, q->sizes);
    x->L = q->sizes[nb], x->E = q->sizes[nb + 1];
    x->S = k->sizes[nb], x->Ev = v->sizes[nb + 1];
    x->scale = c->f[0];
    x->causal = c->i[0] != 0;
    x->mask_kind = (int)c->i[1];
    x->q = sdpa_operand_of(q, nb), x->k = sdpa_operand_of(k, nb), x->v = sdpa_operand_of(v, nb);
    x->mask = sdpa_operand_of(mask, nb);
}

/* Keys of query row i that a causal mask leaves in [j0, j0 + bk): the first n. */
static inline int64_t sdpa_causal_cols(int64_t i, int64_t j0, int64_t bk)
{
    int64_t n = i - j0 + 1;
    return n < 0 ? 0 : n > bk ? bk : n;
}

#endif
