/* The kernels that split planes, points, channels or rows over the pool
 * (pooling, padding, upsampling, grid_sample, batch_norm, the recurrences'
 * gate rows), forward and backward, above their grains: 3 threads give the
 * one-thread results bit for bit, and a chunk's failure is reported on the
 * calling thread. Under ASan (make test-asan) this runs the chunked paths. */
#include "test.h"
#include "ember/norm.h"
#include "ember/pool.h"
#include "ember/rnn.h"

#define MAX_OUTS 40

typedef struct inputs {
    em_tensor *x, *samples, *grid, *ig[2], *hx, *cx, *whh[2];
} inputs;

typedef struct outs {
    em_tensor *t[MAX_OUTS];
    int n;
} outs;

static void keep(outs *o, em_tensor *t)
{
    if (o->n < MAX_OUTS) o->t[o->n++] = t;
}

static void run_pools(const inputs *in, outs *o)
{
    const em_tensor *x = in->x;
    em_pool_params p = {.nd = 2, .kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}};
    em_tensor *ind = NULL, *y = em_max_pool(x, &p, &ind);
    keep(o, y), keep(o, ind);
    keep(o, em_max_pool_backward(y, ind, 2, 4, em_sizes(x)));
    em_tensor *a = em_avg_pool(x, &p);
    keep(o, a);
    keep(o, em_avg_pool_backward(a, &p, 4, em_sizes(x)));
    em_tensor *aa = em_adaptive_avg_pool(x, 2, (int64_t[]){7, 9}), *ai = NULL;
    keep(o, aa);
    keep(o, em_adaptive_avg_pool_backward(aa, 2, 4, em_sizes(x)));
    keep(o, em_adaptive_max_pool(x, 2, (int64_t[]){7, 9}, &ai)), keep(o, ai);
    em_tensor *fi = NULL;
    keep(o, em_fractional_max_pool(x, 2, (int64_t[]){3, 3}, (int64_t[]){20, 25}, in->samples, &fi)), keep(o, fi);
}

static void run_maps(const inputs *in, outs *o)
{
    const em_tensor *x = in->x;
    const int64_t size[] = {45, 50}, pads[] = {3, 2, 1, 4};
    em_tensor *n = em_upsample_nearest(x, size, NULL), *l = em_upsample_linear(x, size, false, NULL);
    em_tensor *c = em_upsample_bicubic(x, size, true, NULL), *pd = em_pad(x, 4, pads, EM_PAD_REFLECT, 0);
    keep(o, n), keep(o, l), keep(o, c), keep(o, pd);
    keep(o, em_upsample_nearest_backward(n, 4, em_sizes(x), NULL));
    keep(o, em_upsample_linear_backward(l, 4, em_sizes(x), false, NULL));
    keep(o, em_upsample_bicubic_backward(c, 4, em_sizes(x), true, NULL));
    keep(o, em_pad_backward(pd, 4, pads, EM_PAD_REFLECT, 4, em_sizes(x)));
    em_tensor *g = em_grid_sample(x, in->grid, EM_GRID_BILINEAR, EM_GRID_REFLECTION, false), *gi = NULL, *gg = NULL;
    keep(o, g);
    em_grid_sample_backward(g, x, in->grid, EM_GRID_BILINEAR, EM_GRID_REFLECTION, false, &gi, &gg);
    keep(o, gi), keep(o, gg);
}

static void run_norm_rnn(const inputs *in, outs *o)
{
    em_tensor *bn[3] = {NULL}, *grads[3] = {NULL};
    em_native_batch_norm(bn, in->x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5);
    em_batch_norm_backward(grads, (bool[]){true, true, true}, in->x, in->x, NULL, bn[1], bn[2], true);
    for (int k = 0; k < 3; k++) keep(o, bn[k]), keep(o, grads[k]);
    const em_rnn_mode modes[2] = {EM_RNN_LSTM, EM_RNN_GRU};
    for (int m = 0; m < 2; m++) {
        const bool lstm = modes[m] == EM_RNN_LSTM;
        const em_tensor *cx = lstm ? in->cx : NULL;
        em_tensor *out = NULL, *hy = NULL, *cy = NULL, *ws = NULL;
        em_rnn_recurrence(modes[m], in->ig[m], 3, NULL, in->hx, cx, in->whh[m], NULL, NULL, false, &out, &hy,
                          lstm ? &cy : NULL, &ws);
        keep(o, out), keep(o, hy);
        em_rnn_grads g = {0};
        em_rnn_recurrence_backward(modes[m], out, hy, cy, out, ws, 3, NULL, in->hx, cx, in->whh[m], false, NULL,
                                   false, &g);
        keep(o, g.igates), keep(o, g.hx), keep(o, g.w_hh);
        if (lstm) keep(o, g.cx);
        RELEASE(cy, ws);
    }
}

static outs run_all(const inputs *in, int threads)
{
    em_set_num_threads(threads);
    outs o = {0};
    run_pools(in, &o);
    run_maps(in, &o);
    run_norm_rnn(in, &o);
    return o;
}

static bool same(const em_tensor *a, const em_tensor *b)
{
    return a && b && em_dtype_of(a) == em_dtype_of(b) && em_numel(a) == em_numel(b) && em_is_contiguous(a) &&
           em_is_contiguous(b) &&
           memcmp(em_data_ptr(a), em_data_ptr(b), (size_t)em_numel(a) * em_dtype_size(em_dtype_of(a))) == 0;
}

TEST(window_kernels_match_one_thread)
{
    int saved = em_get_num_threads();
    const int64_t B = 192, H = 128; /* the GRU's rows: B * 3H above 2 * EM_GRAIN_ROWS */
    inputs in = {.x = trand(EM_F64, SHAPE(4, 16, 32, 32), -2, 2), .samples = trand(EM_F64, SHAPE(4, 16, 2), 0, 1),
                 .grid = trand(EM_F64, SHAPE(4, 30, 30, 2), -1.1, 1.1), .hx = trand(EM_F64, SHAPE(B, H), -1, 1),
                 .cx = trand(EM_F64, SHAPE(B, H), -1, 1)};
    for (int m = 0; m < 2; m++) {
        const int64_t G = m == 0 ? 4 : 3;
        in.ig[m] = trand(EM_F64, SHAPE(3 * B, G * H), -1, 1);
        in.whh[m] = trand(EM_F64, SHAPE(G * H, H), -0.1, 0.1);
    }
    outs one = run_all(&in, 1), three = run_all(&in, 3);
    em_set_num_threads(saved);
    CHECK_MSG(one.n == three.n && one.n == 39, "%d, %d outputs", one.n, three.n);
    for (int k = 0; k < one.n && k < three.n; k++) CHECK_MSG(same(one.t[k], three.t[k]), "output %d differs", k);
    for (int k = 0; k < one.n; k++) RELEASE(one.t[k], three.t[k]);
    RELEASE(in.x, in.samples, in.grid, in.ig[0], in.ig[1], in.hx, in.cx, in.whh[0], in.whh[1]);
}

/* An index outside its plane in a chunk that is not the caller's: an
 * IndexError from the call, the same with one thread or three. */
TEST(window_kernel_failure_reported_by_caller)
{
    int saved = em_get_num_threads();
    em_tensor *g = trand(EM_F64, SHAPE(64, 32, 32), -1, 1), *ind = tints(EM_I64, SHAPE(64, 32, 32), 0, 1024);
    ((int64_t *)em_data_ptr(ind))[em_numel(ind) - 5] = 1024;
    for (int threads = 1; threads <= 3; threads += 2) {
        em_set_num_threads(threads);
        em_clear_error();
        em_tensor *r = em_max_pool_backward(g, ind, 2, 3, (int64_t[]){64, 32, 32});
        CHECK_MSG(!r && em_error_code() == EM_ERR_INDEX, "threads %d: %s", threads, em_last_error());
        em_release(r);
    }
    em_set_num_threads(saved);
    RELEASE(g, ind);
}
