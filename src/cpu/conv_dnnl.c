/* The oneDNN fast path of the conv kernels (contract in conv_dnnl.h), and
 * the switch that turns it off (em_conv_set_onednn).
 *
 * A call is described by a key (kind and geometry). Per key we build once,
 * and keep in a small LRU cache, oneDNN's primitive for that convolution,
 * created with "any" memory formats so that oneDNN picks its fastest
 * (blocked) layouts, plus the reorders between Ember's plain NC(D)HW /
 * (G)OI(D)HW operands and those layouts. Building a primitive costs far
 * more than running a small one, so the cache is what makes small layers
 * (LeNet's) pay. Entries are reference-counted: one evicted while another
 * thread runs it is destroyed by the last user. A shape oneDNN refuses is
 * cached too (prim == NULL), so the refusal costs once.
 *
 * oneDNN (Debian's build) runs on OpenMP; batches are split over Ember's
 * pool instead (Note [oneDNN on the pool]). */
#include "conv_dnnl.h"
#include <ember/conv.h>
#include <stdatomic.h>
#include <stdlib.h>

static atomic_int onednn_on = -1; /* -1: not yet read from EMBER_ONEDNN */
static atomic_uint_fast64_t runs;

uint64_t conv_dnnl_runs(void) { return atomic_load(&runs); }

static bool onednn_enabled(void)
{
    int v = atomic_load(&onednn_on);
    if (v < 0) {
        const char *e = getenv("EMBER_ONEDNN");
        v = !(e && strcmp(e, "0") == 0);
        atomic_store(&onednn_on, v);
    }
    return v;
}

#ifndef EM_WITH_DNNL

bool em_conv_set_onednn(bool on) { return false; }

bool conv_dnnl_run(conv_dnnl_kind kind, const conv_geom *g, int nd, const float *a, const float *b,
                   const float *bias, float *c)
{
    (void)onednn_enabled;
    (void)runs;
    return false;
}

#else
#include "gemm.h"
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>

bool em_conv_set_onednn(bool on)
{
    bool was = onednn_enabled();
    atomic_store(&onednn_on, on);
    return was;
}

typedef struct conv_key {
    int64_t kind, nd, bias, N, groups, C_in, C_out;
    int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
} conv_key;

/* One operand (a, b or c of conv_dnnl_run): Ember's plain layout and the
 * primitive's; `reorder` converts between them (NULL when they agree). */
typedef struct dnnl_operand {
    dnnl_memory_desc_t user, inner;
    dnnl_primitive_t reorder;
    dnnl_memory_desc_t reorder_scratch; /* its scratchpad (Note [oneDNN scratchpads]) */
    int arg; /* DNNL_ARG_* of the operand in the primitive */
} dnnl_operand;

typedef struct conv_entry {
    conv_key key;
    dnnl_primitive_t prim; /* NULL: oneDNN refused this key */
    dnnl_operand op[3];
    dnnl_memory_desc_t bias_md, scratch; /* scratch: the primitive's scratchpad */
    int refs;      /* the cache's own reference counts as one */
    uint64_t used; /* LRU clock */
} conv_entry;

enum { CACHE_SLOTS = 32 };
static conv_entry *cache[CACHE_SLOTS];
static uint64_t cache_clock;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Note [oneDNN scratchpads]
 * By default oneDNN gives primitives a library-managed scratchpad that is not
 * safe to use from two threads at once; chunks of one batch run the same
 * primitive concurrently (Note [oneDNN on the pool]). So every primitive is
 * built with a user-managed scratchpad, and each execution allocates its own. */
static dnnl_primitive_attr_t user_scratchpad;

static dnnl_engine_t engine;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

static void engine_init(void)
{
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) engine = NULL;
    if (engine && (dnnl_primitive_attr_create(&user_scratchpad) != dnnl_success ||
                   dnnl_primitive_attr_set_scratchpad_mode(user_scratchpad, dnnl_scratchpad_mode_user) != dnnl_success))
        engine = NULL; /* no fast path rather than an unsafe one */
}

/* The scratchpad descriptor of pd (size 0 when it needs none). */
static bool scratch_md(const_dnnl_primitive_desc_t pd, dnnl_memory_desc_t *md)
{
    const dnnl_memory_desc_t *q = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (!q) return false;
    *md = *q;
    return true;
}

static void entry_destroy(conv_entry *e)
{
    if (e->prim) dnnl_primitive_destroy(e->prim);
    for (int i = 0; i < 3; i++)
        if (e->op[i].reorder) dnnl_primitive_destroy(e->op[i].reorder);
    free(e);
}

static void entry_release(conv_entry *e)
{
    pthread_mutex_lock(&cache_lock);
    bool last = --e->refs == 0;
    pthread_mutex_unlock(&cache_lock);
    if (last) entry_destroy(e);
}

/* ---- building a primitive --------------------------------------------------- */

/* dims and contiguous strides of an operand */
static void plain_md(dnnl_memory_desc_t *md, int ndims, const dnnl_dims_t dims)
{
    dnnl_dims_t strides;
    int64_t s = 1;
    for (int d = ndims - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
    dnnl_memory_desc_init_by_strides(md, ndims, dims, dnnl_f32, strides);
}

static bool any_md(dnnl_memory_desc_t *md, int ndims, const dnnl_dims_t dims)
{
    return dnnl_memory_desc_init_by_tag(md, ndims, dims, dnnl_f32, dnnl_format_tag_any) == dnnl_success;
}

/* The primitive's layout of operand i (query q) and, when it differs from
 * the plain one, the reorder: plain -> inner for inputs, back for outputs. */
static bool operand_init(dnnl_operand *o, const_dnnl_primitive_desc_t pd, dnnl_query_t q, int arg, bool output)
{
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, q, 0);
    if (!md) return false;
    o->inner = *md;
    o->arg = arg;
    if (dnnl_memory_desc_equal(&o->inner, &o->user)) return true;
    dnnl_primitive_desc_t rpd;
    const dnnl_memory_desc_t *from = output ? &o->inner : &o->user, *to = output ? &o->user : &o->inner;
    if (dnnl_reorder_primitive_desc_create(&rpd, from, engine, to, engine, user_scratchpad) != dnnl_success)
        return false;
    bool ok = scratch_md(rpd, &o->reorder_scratch) && dnnl_primitive_create(&o->reorder, rpd) == dnnl_success;
    dnnl_primitive_desc_destroy(rpd);
    if (!ok) o->reorder = NULL;
    return ok;
}

/* Fills e->prim and e->op for e->key; leaves e->prim NULL on refusal. */
static void entry_build(conv_entry *e)
{
    const conv_key *k = &e->key;
    const int nd = (int)k->nd, sp = 3 - nd, nx = nd + 2;
    dnnl_dims_t xd = {k->N, k->C_in}, yd = {k->N, k->C_out}, wd, strides, dil, pad_l, pad_r, bd = {k->C_out};
    int nw = 0;
    if (k->groups > 1) wd[nw++] = k->groups;
    wd[nw++] = k->C_out / k->groups;
    wd[nw++] = k->C_in / k->groups;
    for (int d = 0; d < nd; d++) {
        xd[2 + d] = k->in[sp + d];
        yd[2 + d] = k->out[sp + d];
        wd[nw++] = k->k[sp + d];
        strides[d] = k->stride[sp + d];
        dil[d] = k->dil[sp + d] - 1; /* oneDNN counts the gaps */
        pad_l[d] = pad_r[d] = k->pad[sp + d]; /* oneDNN floors the output size as PyTorch does */
    }
    dnnl_memory_desc_t x_any, y_any, w_any, bias_md;
    plain_md(&bias_md, 1, bd);
    if (!any_md(&x_any, nx, xd) || !any_md(&y_any, nx, yd) || !any_md(&w_any, nw, wd)) return;
    const bool with_bias = k->kind == CONV_DNNL_FORWARD && k->bias;
    dnnl_convolution_desc_t fwd, bwd;
    if (dnnl_dilated_convolution_forward_desc_init(&fwd, dnnl_forward_training, dnnl_convolution_direct, &x_any, &w_any,
                                                   with_bias ? &bias_md : NULL, &y_any, strides, dil, pad_l,
                                                   pad_r) != dnnl_success)
        return;
    dnnl_primitive_desc_t fpd = NULL, pd = NULL;
    if (dnnl_primitive_desc_create(&fpd, &fwd, user_scratchpad, engine, NULL) != dnnl_success) return;
    dnnl_status_t st = dnnl_success;
    if (k->kind == CONV_DNNL_BACKWARD_DATA)
        st = dnnl_dilated_convolution_backward_data_desc_init(&bwd, dnnl_convolution_direct, &x_any, &w_any, &y_any,
                                                              strides, dil, pad_l, pad_r);
    else if (k->kind == CONV_DNNL_BACKWARD_WEIGHTS)
        st = dnnl_dilated_convolution_backward_weights_desc_init(&bwd, dnnl_convolution_direct, &x_any, &w_any,
                                                                 NULL, &y_any, strides, dil, pad_l, pad_r);
    if (st == dnnl_success && k->kind != CONV_DNNL_FORWARD)
        st = dnnl_primitive_desc_create(&pd, &bwd, user_scratchpad, engine, fpd);
    if (k->kind == CONV_DNNL_FORWARD) {
        pd = fpd;
        fpd = NULL;
    }
    if (st == dnnl_success) {
        plain_md(&e->op[0].user, nx, k->kind == CONV_DNNL_BACKWARD_DATA ? yd : xd);
        plain_md(&e->op[1].user, k->kind == CONV_DNNL_BACKWARD_WEIGHTS ? nx : nw,
                 k->kind == CONV_DNNL_BACKWARD_WEIGHTS ? yd : wd);
        plain_md(&e->op[2].user, k->kind == CONV_DNNL_FORWARD ? nx : k->kind == CONV_DNNL_BACKWARD_DATA ? nx : nw,
                 k->kind == CONV_DNNL_FORWARD ? yd : k->kind == CONV_DNNL_BACKWARD_DATA ? xd : wd);
        e->bias_md = bias_md;
        bool ok;
        switch (k->kind) {
        case CONV_DNNL_FORWARD:
            ok = operand_init(&e->op[0], pd, dnnl_query_src_md, DNNL_ARG_SRC, false) &&
                 operand_init(&e->op[1], pd, dnnl_query_weights_md, DNNL_ARG_WEIGHTS, false) &&
                 operand_init(&e->op[2], pd, dnnl_query_dst_md, DNNL_ARG_DST, true);
            break;
        case CONV_DNNL_BACKWARD_DATA:
            ok = operand_init(&e->op[0], pd, dnnl_query_diff_dst_md, DNNL_ARG_DIFF_DST, false) &&
                 operand_init(&e->op[1], pd, dnnl_query_weights_md, DNNL_ARG_WEIGHTS, false) &&
                 operand_init(&e->op[2], pd, dnnl_query_diff_src_md, DNNL_ARG_DIFF_SRC, true);
            break;
        default:
            ok = operand_init(&e->op[0], pd, dnnl_query_src_md, DNNL_ARG_SRC, false) &&
                 operand_init(&e->op[1], pd, dnnl_query_diff_dst_md, DNNL_ARG_DIFF_DST, false) &&
                 operand_init(&e->op[2], pd, dnnl_query_diff_weights_md, DNNL_ARG_DIFF_WEIGHTS, true);
        }
        ok = ok && scratch_md(pd, &e->scratch);
        if (ok && dnnl_primitive_create(&e->prim, pd) != dnnl_success) e->prim = NULL;
        if (!ok || !e->prim) {
            for (int i = 0; i < 3; i++)
                if (e->op[i].reorder) dnnl_primitive_destroy(e->op[i].reorder);
            memset(e->op, 0, sizeof e->op);
            e->prim = NULL;
        }
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (fpd) dnnl_primitive_desc_destroy(fpd);
}

/* ---- the cache ---------------------------------------------------------------- */

static conv_entry *cache_find(const conv_key *k)
{
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (cache[i] && memcmp(&cache[i]->key, k, sizeof *k) == 0) {
            cache[i]->refs++;
            cache[i]->used = ++cache_clock;
            return cache[i];
        }
    return NULL;
}

/* The entry of key k with a reference for the caller (NULL: out of memory). */
static conv_entry *cache_get(const conv_key *k)
{
    pthread_mutex_lock(&cache_lock);
    conv_entry *e = cache_find(k);
    pthread_mutex_unlock(&cache_lock);
    if (e) return e;
    conv_entry *made = calloc(1, sizeof *made);
    if (!made) return NULL;
    made->key = *k;
    entry_build(made); /* slow: outside the lock */
    pthread_mutex_lock(&cache_lock);
    e = cache_find(k); /* another thread may have built it meanwhile */
    conv_entry *evicted = NULL;
    if (!e) {
        int slot = 0;
        for (int i = 0; i < CACHE_SLOTS; i++) {
            if (!cache[i]) {
                slot = i;
                break;
            }
            if (cache[i]->used < cache[slot]->used) slot = i;
        }
        if (cache[slot] && --cache[slot]->refs == 0) evicted = cache[slot];
        made->refs = 2;
        made->used = ++cache_clock;
        cache[slot] = e = made;
        made = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
    if (evicted) entry_destroy(evicted);
    if (made) entry_destroy(made);
    return e;
}

/* ---- running ------------------------------------------------------------------- */

/* Executes prim with args (room for one more) and a scratchpad of its own
 * (Note [oneDNN scratchpads]), waiting for it before the scratchpad goes. */
static bool execute(dnnl_primitive_t prim, const dnnl_memory_desc_t *scratch, dnnl_stream_t stream, int n,
                    dnnl_exec_arg_t *args)
{
    const size_t bytes = dnnl_memory_desc_get_size(scratch);
    void *buf = NULL;
    dnnl_memory_t mem = NULL;
    bool ok = true;
    if (bytes) {
        ok = (buf = em_cpu_alloc(bytes)) != NULL && dnnl_memory_create(&mem, scratch, engine, buf) == dnnl_success;
        if (ok) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, mem};
    }
    ok = ok && dnnl_primitive_execute(prim, stream, n, args) == dnnl_success && dnnl_stream_wait(stream) == dnnl_success;
    if (mem) dnnl_memory_destroy(mem);
    if (buf) em_cpu_free(buf, bytes);
    return ok;
}

static bool run_entry(const conv_entry *e, const float *a, const float *b, const float *bias, float *c)
{
    void *ptr[3] = {(void *)a, (void *)b, c};
    dnnl_memory_t user[3] = {0}, inner[3] = {0}, bias_mem = NULL;
    void *buf[3] = {0};
    size_t bytes[3] = {0};
    dnnl_stream_t stream = NULL;
    bool ok = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) == dnnl_success;
    for (int i = 0; ok && i < 3; i++) {
        const dnnl_operand *o = &e->op[i];
        ok = dnnl_memory_create(&user[i], &o->user, engine, ptr[i]) == dnnl_success;
        if (ok && o->reorder) {
            bytes[i] = dnnl_memory_desc_get_size(&o->inner);
            ok = (buf[i] = em_cpu_alloc(bytes[i])) != NULL &&
                 dnnl_memory_create(&inner[i], &o->inner, engine, buf[i]) == dnnl_success;
        }
    }
    if (ok && bias) ok = dnnl_memory_create(&bias_mem, &e->bias_md, engine, (void *)bias) == dnnl_success;
    for (int i = 0; ok && i < 2; i++) /* inputs into the primitive's layouts */
        if (e->op[i].reorder) {
            dnnl_exec_arg_t r[3] = {{DNNL_ARG_FROM, user[i]}, {DNNL_ARG_TO, inner[i]}};
            ok = execute(e->op[i].reorder, &e->op[i].reorder_scratch, stream, 2, r);
        }
    if (ok) {
        dnnl_exec_arg_t args[5];
        int n = 0;
        for (int i = 0; i < 3; i++) args[n++] = (dnnl_exec_arg_t){e->op[i].arg, inner[i] ? inner[i] : user[i]};
        if (bias_mem) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, bias_mem};
        ok = execute(e->prim, &e->scratch, stream, n, args);
    }
    if (ok && e->op[2].reorder) {
        dnnl_exec_arg_t r[3] = {{DNNL_ARG_FROM, inner[2]}, {DNNL_ARG_TO, user[2]}};
        ok = execute(e->op[2].reorder, &e->op[2].reorder_scratch, stream, 2, r);
    }
    if (stream) ok = dnnl_stream_wait(stream) == dnnl_success && ok;
    for (int i = 0; i < 3; i++) {
        if (user[i]) dnnl_memory_destroy(user[i]);
        if (inner[i]) dnnl_memory_destroy(inner[i]);
        if (buf[i]) em_cpu_free(buf[i], bytes[i]);
    }
    if (bias_mem) dnnl_memory_destroy(bias_mem);
    if (stream) dnnl_stream_destroy(stream);
    return ok;
}

/* Runs one primitive on samples [n0, n0 + n) of g: a and c (and b for the
 * weight gradient, whose c is the whole dW) advanced to sample n0. */
static bool run_samples(conv_dnnl_kind kind, const conv_geom *g, int nd, int64_t n0, int64_t n, const float *a,
                        const float *b, const float *bias, float *c)
{
    const int64_t in_side = g->C_in * g->L_in, out_side = g->C_out * g->L_out;
    switch (kind) {
    case CONV_DNNL_FORWARD: a += n0 * in_side, c += n0 * out_side; break;
    case CONV_DNNL_BACKWARD_DATA: a += n0 * out_side, c += n0 * in_side; break;
    default: a += n0 * in_side, b += n0 * out_side; break;
    }
    conv_key k = {.kind = kind, .nd = nd, .bias = bias != NULL, .N = n, .groups = g->groups,
                  .C_in = g->C_in, .C_out = g->C_out};
    for (int d = 0; d < 3; d++) {
        k.in[d] = g->in[d];
        k.out[d] = g->out[d];
        k.k[d] = g->k[d];
        k.stride[d] = g->stride[d];
        k.pad[d] = g->pad[d];
        k.dil[d] = g->dil[d];
    }
    conv_entry *e = cache_get(&k);
    if (!e) return false;
    bool ok = e->prim && run_entry(e, a, b, bias, c);
    entry_release(e);
    return ok;
}

/* Note [oneDNN on the pool]
 * oneDNN parallelizes with OpenMP, whose regions wait at a barrier for every
 * thread: on a machine where a core is taken, each convolution would stall
 * until the descheduled thread runs. So a batch is split into one chunk of
 * samples per thread over Ember's pool (a late thread costs at most its
 * chunk), each chunk running oneDNN on one OpenMP thread; per-sample cost is
 * the same at half the batch (LeNet's layers: 0.93-0.97x of the whole-batch
 * time). Only a single sample above the grain is left to oneDNN's threads. */
typedef struct dnnl_job {
    conv_dnnl_kind kind;
    const conv_geom *g;
    int nd;
    int64_t nchunks;
    const float *a, *b, *bias;
    float *c, *partial; /* the weight gradient: chunk k > 0 writes partial's (k - 1)th dW */
    int64_t wnum;       /* elements of one dW */
    _Atomic bool failed;
} dnnl_job;

static void run_chunk(void *ctx, int64_t k)
{
    dnnl_job *j = ctx;
    int64_t n0, n1;
    em_parallel_range(j->g->N, j->nchunks, 1, k, &n0, &n1);
    float *c = j->kind == CONV_DNNL_BACKWARD_WEIGHTS && k > 0 ? j->partial + (k - 1) * j->wnum : j->c;
    const int omp = cpu_blas_begin(); /* oneDNN on this thread only */
    if (n0 < n1 && !run_samples(j->kind, j->g, j->nd, n0, n1 - n0, j->a, j->b, j->bias, c))
        atomic_store(&j->failed, true);
    cpu_blas_end(omp);
}

bool conv_dnnl_run(conv_dnnl_kind kind, const conv_geom *g, int nd, const float *a, const float *b,
                   const float *bias, float *c)
{
    /* oneDNN's backward-data kernels block the input side's channels by 8
     * or 16; with fewer (a first layer: 1 or 3) they run several times
     * slower than col2im + GEMM (LeNet's conv1: ~8 ms against ~1). */
    if (kind == CONV_DNNL_BACKWARD_DATA && g->C_in / g->groups < 8) return false;
    if (!onednn_enabled() || g->N == 0 || g->C_in == 0 || g->C_out == 0 || g->L_in == 0 || g->L_out == 0 ||
        g->K == 0)
        return false;
    pthread_once(&engine_once, engine_init);
    if (!engine) return false;
    const int64_t work = g->C_in * g->K * g->L_out; /* per sample, as the im2col path counts it */
    const int64_t threads = em_get_num_threads();
    bool ok;
    if (g->N == 1 && em_parallel_chunks(work, EM_GRAIN_WINDOW) > 1) {
        ok = run_samples(kind, g, nd, 0, 1, a, b, bias, c); /* Note [oneDNN on the pool] */
    } else {
        dnnl_job j = {.kind = kind, .g = g, .nd = nd, .a = a, .b = b, .bias = bias, .c = c,
                      .wnum = g->C_out * (g->C_in / g->groups) * g->K,
                      .nchunks = em_parallel_chunks(g->N * work, EM_GRAIN_WINDOW) > 1 ? threads : 1};
        if (j.nchunks > g->N) j.nchunks = g->N;
        const size_t pbytes = (size_t)(j.nchunks - 1) * (size_t)j.wnum * sizeof(float);
        if (kind == CONV_DNNL_BACKWARD_WEIGHTS && j.nchunks > 1 && !(j.partial = em_cpu_alloc(pbytes))) return false;
        em_parallel_run(j.nchunks, run_chunk, &j);
        ok = !atomic_load(&j.failed);
        if (ok && j.partial) { /* the chunks' weight gradients, added in chunk order */
            for (int64_t k = 1; k < j.nchunks; k++)
                for (int64_t i = 0; i < j.wnum; i++) c[i] += j.partial[(k - 1) * j.wnum + i];
        }
        if (j.partial) em_cpu_free(j.partial, pbytes);
    }
    if (ok) atomic_fetch_add(&runs, 1);
    return ok;
}
#endif
