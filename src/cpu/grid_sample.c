/* CPU kernels of grid_sample and grid_sample_backward (op layer: src/nn/grid_sample.c): each
 * output point reads a few input taps (2^nd for (tri)linear, 1 nearest, 4 x 4 bicubic) whose
 * offsets and weights are computed once and used for every channel. The per-dtype code is the
 * template grid_sample_impl.h; output points (backward: batch elements) split over the pool. */
#include "cpu.h"
#include "ember/pool.h"
#include <stdint.h>
#include <string.h>
#include <tgmath.h>

/* One call's geometry, read from its contiguous tensors. */
typedef struct gs_geom {
    int64_t N, C, P, plane; /* batch, channels, output points, input plane (D * H * W) */
    int64_t sz[3], st[3];   /* per grid coordinate (x, y, z): input size and stride */
    int nd, mode, pad;
    bool align;
    const void *input, *grid, *grad;
    void *out0, *out1;
} gs_geom;

#define T float
#define SFX f32
#include "grid_sample_impl.h"
#undef T
#undef SFX

#define T double
#define SFX f64
#include "grid_sample_impl.h"
#undef T
#undef SFX

/* in[first] is the input, in[first + 1] the grid */
static gs_geom geom_of(const em_call *c, int first)
{
    const em_tensor *x = c->in[first], *g = c->in[first + 1];
    gs_geom q = {.N = x->sizes[0], .C = x->sizes[1], .P = 1, .plane = 1, .nd = x->ndim - 2, .mode = (int)c->i[0],
                 .pad = (int)c->i[1], .align = c->i[2] != 0, .input = em_tensor_data(x), .grid = em_tensor_data(g)};
    for (int j = 0; j < q.nd; j++) {
        q.sz[j] = x->sizes[x->ndim - 1 - j];
        q.st[j] = q.plane;
        q.plane *= q.sz[j];
        q.P *= g->sizes[1 + j];
    }
    return q;
}

em_status cpu_grid_sample(const em_call *c)
{
    gs_geom q = geom_of(c, 0);
    q.out0 = em_tensor_data(c->out[0]);
    em_range_fn fn = c->dtype == EM_F64 ? grid_forward_f64 : grid_forward_f32;
    em_parallel_for(q.N * q.P, (q.C + 1) * 4, EM_GRAIN_WINDOW, fn, &q);
    return EM_OK;
}

em_status cpu_grid_sample_backward(const em_call *c)
{
    gs_geom q = geom_of(c, 1);
    q.grad = em_tensor_data(c->in[0]);
    q.out0 = em_tensor_data(c->out[0]);
    q.out1 = em_tensor_data(c->out[1]);
    em_range_fn fn = c->dtype == EM_F64 ? grid_backward_f64 : grid_backward_f32;
    em_parallel_for(q.N, q.P * (q.C + 1) * 8, EM_GRAIN_WINDOW, fn, &q);
    return EM_OK;
}
