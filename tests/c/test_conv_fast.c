/* The oneDNN fast path of the float32 convolutions (src/cpu/conv_dnnl.c)
 * against im2col + GEMM (the path with em_conv_set_onednn(false)): forward,
 * input gradient and weight gradient, regular and transposed, on many random
 * geometries (1-3 spatial dims, groups, stride, padding, dilation, output
 * padding, bias), checking that oneDNN really ran where it should. Without oneDNN in the
 * build the switch reports it and the test only checks that. */
#include "test.h"
#include "../../src/cpu/conv_dnnl.h"

typedef struct geometry {
    int nd;
    bool transposed, bias;
    int64_t N, C_in, C_out, groups;         /* C_in: the input tensor's channels */
    int64_t in[3], k[3], stride[3], pad[3], dil[3], outpad[3];
} geometry;

static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(trandu() * (double)(hi - lo + 1)) % (hi - lo + 1); }

/* A random geometry whose output is not empty. */
static geometry random_geometry(void)
{
    geometry g = {.nd = (int)pick(1, 3), .transposed = trandu() < 0.3, .bias = trandu() < 0.5, .N = pick(1, 3),
                  .groups = pick(1, 3)};
    g.C_in = g.groups * pick(1, 10);
    g.C_out = g.groups * pick(1, 10);
    for (int d = 0; d < g.nd; d++) {
        const int64_t small = g.nd == 3 ? 1 : 0; /* keep 3-d cases small */
        g.k[d] = pick(1, 3 - small);
        g.stride[d] = pick(1, 3);
        g.dil[d] = pick(1, 2);
        const int64_t span = g.dil[d] * (g.k[d] - 1) + 1;
        g.pad[d] = pick(0, span / 2 + 1);
        if (g.transposed) {
            g.outpad[d] = pick(0, (g.stride[d] > g.dil[d] ? g.stride[d] : g.dil[d]) - 1);
            g.in[d] = pick(1, 6 - 2 * small);
            while ((g.in[d] - 1) * g.stride[d] - 2 * g.pad[d] + span + g.outpad[d] < 1) g.in[d]++;
        } else {
            g.in[d] = pick(span - 2 * g.pad[d] > 1 ? span - 2 * g.pad[d] : 1, 9 - 4 * small);
        }
    }
    return g;
}

/* oneDNN sizes a convolution's output by PyTorch's formula, so a transposed
 * one whose output padding reaches the stride (allowed below the dilation)
 * has no regular counterpart there: its forward and weight gradient fall
 * back to GEMM. Few input channels send backward data to GEMM too. */
static int expected_refusals(const geometry *g)
{
    /* the input-side channels per group of the backward-data call (Note
     * [Regular geometry]): below 8 it goes to GEMM by choice */
    const int64_t in_side = (g->transposed ? g->C_out : g->C_in) / g->groups;
    int r = in_side < 8 ? 1 : 0;
    for (int d = 0; d < g->nd; d++)
        if (g->transposed && g->outpad[d] >= g->stride[d]) return 2;
    return r;
}

static bool same(const em_tensor *fast, const em_tensor *slow)
{
    if (!fast || !slow || fast->ndim != slow->ndim) return false;
    double *want = tvals(slow);
    bool ok = tclose(fast, want, 1e-4, 1e-4);
    free(want);
    return ok;
}

/* y, dx, dw of geometry g, on the path `fast` selects. */
static void run_case(const geometry *g, em_tensor *const *in, bool fast, em_tensor **out)
{
    em_conv_set_onednn(fast);
    em_tensor *x = in[0], *w = in[1], *b = in[2], *go = in[3];
    out[0] = em_convolution(x, w, g->bias ? b : NULL, g->nd, g->stride, g->pad, g->dil, g->transposed, g->outpad,
                            g->groups);
    out[1] = em_convolution_input_grad(go, w, x->ndim, x->sizes, g->nd, g->stride, g->pad, g->dil, g->transposed,
                                       g->groups);
    out[2] = em_convolution_weight_grad(x, go, g->k, g->nd, g->stride, g->pad, g->dil, g->transposed, g->groups);
}

TEST(conv_fast_path_matches_gemm)
{
    COVER(EM_OP_convolution, EM_OP_convolution_weight_grad);
    const bool was = em_conv_set_onednn(true);
    if (!em_conv_set_onednn(true)) { /* built without oneDNN: the switch stays off */
        CHECK(!was);
        return;
    }
    int refused = 0;
    for (int t = 0; t < 40; t++) {
        const geometry g = random_geometry();
        int64_t xs[5] = {g.N, g.C_in}, ws[5], os[5];
        const int64_t w_in = g.transposed ? g.C_in : g.C_out, w_out = g.transposed ? g.C_out : g.C_in;
        ws[0] = w_in;
        ws[1] = w_out / g.groups;
        for (int d = 0; d < g.nd; d++) {
            xs[2 + d] = g.in[d];
            ws[2 + d] = g.k[d];
        }
        em_tensor *x = trand(EM_F32, g.nd + 2, xs, -1, 1), *w = trand(EM_F32, g.nd + 2, ws, -1, 1);
        em_tensor *b = trand(EM_F32, 1, (int64_t[]){g.C_out}, -1, 1);
        em_tensor *y0 = em_convolution(x, w, NULL, g.nd, g.stride, g.pad, g.dil, g.transposed, g.outpad, g.groups);
        CHECK(y0 != NULL);
        if (!y0) {
            RELEASE(x, w, b);
            return;
        }
        for (int d = 0; d < g.nd + 2; d++) os[d] = y0->sizes[d];
        em_tensor *go = trand(EM_F32, g.nd + 2, os, -1, 1);
        em_tensor *in[4] = {x, w, b, go}, *fast[3], *slow[3];
        const uint64_t before = conv_dnnl_runs();
        run_case(&g, in, true, fast);
        refused += 3 - (int)(conv_dnnl_runs() - before) - expected_refusals(&g);
        run_case(&g, in, false, slow);
        for (int i = 0; i < 3; i++)
            CHECK_MSG(same(fast[i], slow[i]), "case %d (nd %d, transposed %d, groups %lld) output %d", t, g.nd,
                      g.transposed, (long long)g.groups, i);
        RELEASE(x, w, b, y0, go, fast[0], fast[1], fast[2], slow[0], slow[1], slow[2]);
    }
    CHECK_MSG(refused == 0, "oneDNN refused %d calls more than expected", refused);
    em_conv_set_onednn(was);
}
