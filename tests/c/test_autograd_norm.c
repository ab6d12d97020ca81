/* Autograd of the normalization ops (src/autograd/formulas_norm.c): float64
 * gradchecks of batch_norm (training and eval), layer_norm, group_norm,
 * instance_norm and local_response_norm through the fused backward ops, and
 * second derivatives through their recorded form (create_graph). */
#include "test.h"

typedef struct ncase {
    em_op op;
    bool training, transposed; /* batch norm mode; feed x transposed (non-contiguous) */
    int64_t groups;            /* group norm */
    int nnorm;                 /* layer norm */
} ncase;

/* in: x, weight, bias (weight and bias may be absent: nin 1); a fresh
 * running stat pair per call, so every call sees the same eval statistics. */
static em_tensor *run_norm(em_tensor *const *in, const void *ctx)
{
    const ncase *c = ctx;
    em_tensor *x = c->transposed ? em_transpose(in[0], 0, em_ndim(in[0]) - 1) : em_retain(in[0]);
    const em_tensor *w = in[1], *b = in[2];
    int64_t C = em_ndim(x) > 1 ? em_size(x, 1) : 0;
    em_tensor *rm = em_full(1, &C, 0.25, EM_F64), *rv = em_full(1, &C, 1.5, EM_F64), *y = NULL;
    switch (c->op) {
    case EM_OP_batch_norm: y = em_batch_norm(x, w, b, rm, rv, c->training, 0.1, 1e-5); break;
    case EM_OP_instance_norm: y = em_instance_norm(x, w, b, rm, rv, c->training, 0.1, 1e-5); break;
    case EM_OP_layer_norm:
        y = em_layer_norm(x, c->nnorm, em_sizes(x) + em_ndim(x) - c->nnorm, w, b, 1e-5);
        break;
    case EM_OP_group_norm: y = em_group_norm(x, c->groups, w, b, 1e-5); break;
    case EM_OP_local_response_norm: y = em_local_response_norm(x, 3, 0.5, 0.75, 1.5); break;
    default: break;
    }
    RELEASE(x, rm, rv);
    return y;
}

static bool check_case(const char *name, const ncase *c, int ndim, const int64_t *xsizes, int pn,
                       const int64_t *psizes, bool second)
{
    em_tensor *in[3] = {leaf(ndim, xsizes, -2, 2), pn ? leaf(pn, psizes, 0.5, 1.5) : NULL,
                        pn ? leaf(pn, psizes, -1, 1) : NULL};
    int nin = pn ? 3 : 1;
    bool ok = gradcheck(name, run_norm, nin, in, c) && (!second || gradgradcheck(name, run_norm, nin, in, c));
    RELEASE(in[0], in[1], in[2]);
    return ok;
}

TEST(autograd_batch_norm)
{
    int64_t C = 3;
    for (int t = 0; t < 2; t++) {
        ncase c = {EM_OP_batch_norm, .training = t};
        CHECK(check_case("batch_norm 3d", &c, 3, (const int64_t[]){4, 3, 2}, 1, &C, true));
        CHECK(check_case("batch_norm 2d", &c, 2, (const int64_t[]){5, 3}, 1, &C, false));
        CHECK(check_case("batch_norm no affine", &c, 4, (const int64_t[]){2, 3, 2, 2}, 0, NULL, t));
        c.transposed = true; /* x (2, 3, 4) seen as (4, 3, 2) */
        CHECK(check_case("batch_norm transposed", &c, 3, (const int64_t[]){2, 3, 4}, 1, &C, false));
    }
    GRAD_COVER(EM_OP_batch_norm);
}

TEST(autograd_layer_and_group_norm)
{
    ncase ln = {EM_OP_layer_norm, .nnorm = 1}, ln2 = {EM_OP_layer_norm, .nnorm = 2};
    CHECK(check_case("layer_norm", &ln, 2, (const int64_t[]){3, 5}, 1, (const int64_t[]){5}, true));
    CHECK(check_case("layer_norm 2 dims", &ln2, 3, (const int64_t[]){2, 3, 4}, 2, (const int64_t[]){3, 4}, true));
    CHECK(check_case("layer_norm no affine", &ln, 3, (const int64_t[]){2, 2, 4}, 0, NULL, false));
    ln.transposed = true;
    CHECK(check_case("layer_norm transposed", &ln, 2, (const int64_t[]){4, 3}, 1, (const int64_t[]){4}, false));
    ncase gn = {EM_OP_group_norm, .groups = 2};
    CHECK(check_case("group_norm", &gn, 3, (const int64_t[]){2, 4, 3}, 1, (const int64_t[]){4}, true));
    CHECK(check_case("group_norm 2d", &gn, 2, (const int64_t[]){3, 4}, 0, NULL, true));
    gn.groups = 1;
    CHECK(check_case("group_norm 4d", &gn, 4, (const int64_t[]){2, 2, 2, 3}, 1, (const int64_t[]){2}, false));
    GRAD_COVER(EM_OP_layer_norm, EM_OP_group_norm);
}

TEST(autograd_instance_and_local_response_norm)
{
    ncase in = {EM_OP_instance_norm, .training = true};
    CHECK(check_case("instance_norm", &in, 3, (const int64_t[]){2, 3, 4}, 1, (const int64_t[]){3}, true));
    in.training = false;
    CHECK(check_case("instance_norm eval", &in, 3, (const int64_t[]){2, 3, 4}, 1, (const int64_t[]){3}, false));
    ncase lrn = {EM_OP_local_response_norm};
    CHECK(check_case("local_response_norm", &lrn, 3, (const int64_t[]){2, 5, 3}, 0, NULL, true));
    GRAD_COVER(EM_OP_instance_norm, EM_OP_local_response_norm);
}

/* The fused float32 backward agrees with the float64 one. */
TEST(autograd_norm_float32_backward)
{
    int64_t sizes[4] = {4, 6, 3, 5}, C = 6;
    em_tensor *x64 = leaf(4, sizes, -2, 2), *w64 = leaf(1, &C, 0.5, 1.5);
    em_tensor *xd = em_detach(x64), *wd = em_detach(w64), *x32 = em_to_dtype(xd, EM_F32), *w32 = em_to_dtype(wd, EM_F32);
    em_set_requires_grad(x32, true), em_set_requires_grad(w32, true);
    for (int k = 0; k < 3; k++) {
        em_tensor *y64 = k == 0 ? em_batch_norm(x64, w64, NULL, NULL, NULL, true, 0.1, 1e-5)
                         : k == 1 ? em_group_norm(x64, 3, w64, NULL, 1e-5)
                                  : em_layer_norm(x64, 1, sizes + 3, NULL, NULL, 1e-5);
        em_tensor *y32 = k == 0 ? em_batch_norm(x32, w32, NULL, NULL, NULL, true, 0.1, 1e-5)
                         : k == 1 ? em_group_norm(x32, 3, w32, NULL, 1e-5)
                                  : em_layer_norm(x32, 1, sizes + 3, NULL, NULL, 1e-5);
        em_tensor *g64 = trand(EM_F64, 4, sizes, -1, 1), *g32 = em_to_dtype(g64, EM_F32);
        em_tensor *in64[2] = {x64, w64}, *in32[2] = {x32, w32}, *r64[2] = {0}, *r32[2] = {0};
        int nin = k == 2 ? 1 : 2;
        CHECK(em_autograd_grad(1, &y64, &g64, nin, in64, false, false, true, r64) == EM_OK);
        CHECK(em_autograd_grad(1, &y32, &g32, nin, in32, false, false, true, r32) == EM_OK);
        for (int i = 0; i < nin; i++) {
            double *want = tvals(r64[i]);
            bool ok = tclose(r32[i], want, 1e-3, 1e-3);
            free(want);
            CHECK(ok);
        }
        RELEASE(y64, y32, g64, g32, r64[0], r64[1], r32[0], r32[1]);
    }
    RELEASE(x64, w64, xd, wd, x32, w32);
}
