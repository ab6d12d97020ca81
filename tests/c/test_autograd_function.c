/* Custom autograd functions (em_function_apply and the ctx API), inference
 * mode, and post-accumulate-grad hooks. */
#include "test.h"
#include <stdlib.h>

/* ---- user data: counts its frees, records what backward saw ------------------ */
static int user_frees;
typedef struct probe {
    bool needs[2];      /* em_ctx_needs_input_grad seen by backward */
    bool go_null[2];    /* which grad_out were NULL */
    bool materialize;   /* forward's em_ctx_set_materialize_grads */
    int bad_grad;       /* return a gradient of this many elements instead (0: the right one) */
} probe;
static probe *probe_new(void) { return calloc(1, sizeof(probe)); }
static void probe_free(void *p)
{
    user_frees++;
    free(p);
}

static em_tensor *scaled(const em_tensor *a, double s)
{
    em_tensor *k = em_scalar_float(s), *r = em_mul(a, k);
    em_release(k);
    return r;
}

/* Cube: y = x^3, saving x; dy/dx = 3 x^2 */
static em_status cube_fw(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    em_tensor *x2 = em_mul(in[0], in[0]);
    out[0] = em_mul(x2, in[0]);
    em_release(x2);
    *nout = 1;
    if (!out[0]) return em_error_code();
    return em_ctx_save_for_backward(ctx, 1, in);
}
static em_status cube_bw(em_function_ctx *ctx, int nout, em_tensor *const *go, int nin, em_tensor **gi)
{
    probe *p = em_ctx_user(ctx);
    if (p && p->bad_grad) {
        gi[0] = em_ones(1, (const int64_t[]){p->bad_grad}, EM_F64);
        return EM_OK;
    }
    em_tensor *x = em_ctx_saved_tensor(ctx, 0);
    if (!x) return em_error_code();
    em_tensor *x2 = em_mul(x, x), *d = x2 ? scaled(x2, 3) : NULL;
    gi[0] = d ? em_mul(d, go[0]) : NULL;
    RELEASE(x, x2, d);
    return gi[0] ? EM_OK : em_error_code();
}
static const em_function cube = {"Cube", cube_fw, cube_bw, probe_free};

static em_tensor *apply1(const em_function *f, probe *p, int nin, em_tensor *const *in)
{
    em_tensor *out[EM_FUNCTION_MAX_OUT] = {0};
    int nout;
    if (em_function_apply(f, p, nin, (const em_tensor *const *)in, &nout, out)) return NULL;
    for (int k = 1; k < nout; k++) em_release(out[k]);
    return out[0];
}
static em_tensor *f_cube(em_tensor *const *in, const void *c) { return apply1(&cube, probe_new(), 1, in); }

TEST(function_cube_gradcheck)
{
    int frees = user_frees;
    em_tensor *x = leaf(SHAPE(2, 3), -1, 1);
    CHECK(gradcheck("Cube", f_cube, 1, &x, NULL));
    CHECK(gradgradcheck("Cube", f_cube, 1, &x, NULL));
    em_tensor *y = f_cube(&x, NULL);
    CHECK(y && em_grad_fn(y) && !strcmp(em_node_name(em_grad_fn(y)), "CubeBackward"));
    int nr;
    CHECK(y && em_node_num_next(em_grad_fn(y)) == 1 &&
          !strcmp(em_node_name(em_node_next(em_grad_fn(y), 0, &nr)), "AccumulateGrad"));
    em_release(y);
    /* the view of a non-contiguous input, broadcast into a sum afterwards */
    em_tensor *xt = em_t(x), *ins[] = {xt};
    CHECK(gradcheck("Cube of a transposed view", f_cube, 1, ins, NULL));
    RELEASE(x, xt);
    CHECK(user_frees - frees > 0);
}

/* the user data is freed exactly once: with the node, or at once when no node is made */
TEST(function_user_data_freed_once)
{
    int frees = user_frees;
    em_tensor *x = leaf(SHAPE(3), -1, 1), *y = f_cube(&x, NULL), *z = scaled(y, 2);
    CHECK(user_frees == frees);
    em_release(y);
    CHECK(user_frees == frees); /* z's graph still holds the node */
    em_release(z);
    CHECK(user_frees == frees + 1); /* graph dropped without backward */
    /* backward, then release */
    y = f_cube(&x, NULL);
    CHECK(em_backward(1, (em_tensor *[]){y}, (em_tensor *[]){x}, false, false, 0, NULL) == EM_OK);
    CHECK(user_frees == frees + 1);
    em_release(y);
    CHECK(user_frees == frees + 2);
    /* nothing requires grad (or no_grad): no node, freed before returning */
    em_tensor *c = trand(EM_F64, SHAPE(3), -1, 1);
    y = f_cube(&c, NULL);
    CHECK(y && !em_grad_fn(y) && !em_requires_grad(y) && user_frees == frees + 3);
    em_release(y);
    em_set_grad_enabled(false);
    y = f_cube(&x, NULL);
    em_set_grad_enabled(true);
    CHECK(y && !em_grad_fn(y) && user_frees == frees + 4);
    em_release(y);
    /* a failing forward: nothing returned, still freed once */
    em_tensor *bad = trand(EM_F64, SHAPE(2), -1, 1), *xb[] = {x, bad}, *out[EM_FUNCTION_MAX_OUT] = {0};
    int nout = -1;
    CHECK(em_function_apply(&cube, probe_new(), 7, (const em_tensor *const *)xb, &nout, out) == EM_ERR_VALUE);
    CHECK(nout == 0 && !out[0] && user_frees == frees + 5);
    RELEASE(x, c, bad);
}

/* MulNeeds: y = a * b, recording needs_input_grad; the second input may be NULL (a non-tensor) */
static em_status mul_fw(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    const em_tensor *b = in[1] ? in[1] : in[2];
    out[0] = em_mul(in[0], b);
    *nout = 1;
    if (!out[0]) return em_error_code();
    return em_ctx_save_for_backward(ctx, 2, (const em_tensor *[]){in[0], b});
}
static em_status mul_bw(em_function_ctx *ctx, int nout, em_tensor *const *go, int nin, em_tensor **gi)
{
    probe *p = em_ctx_user(ctx);
    em_tensor *a = em_ctx_saved_tensor(ctx, 0), *b = em_ctx_saved_tensor(ctx, 1);
    for (int i = 0; i < 2; i++) p->needs[i] = em_ctx_needs_input_grad(ctx, i);
    /* gradients for every input, needed or not: the unneeded ones are dropped */
    gi[0] = em_mul(go[0], b);
    gi[1] = em_mul(go[0], a);
    if (nin == 3) gi[2] = em_mul(go[0], a);
    RELEASE(a, b);
    return gi[0] && gi[1] ? EM_OK : em_error_code();
}
static const em_function mul_needs = {"MulNeeds", mul_fw, mul_bw, probe_free};

TEST(function_needs_input_grad)
{
    em_tensor *a = leaf(SHAPE(2, 3), -1, 1), *b = trand(EM_F64, SHAPE(3), -1, 1);
    probe *p = probe_new();
    em_tensor *y = apply1(&mul_needs, p, 3, (em_tensor *[]){a, b, NULL}), *ga = NULL;
    CHECK(y && em_backward(1, &y, (em_tensor *[]){a}, false, false, 0, NULL) == EM_OK);
    CHECK(p->needs[0] && !p->needs[1]);
    CHECK((ga = em_get_grad(a)) && !em_get_grad(b));
    em_tensor *want = em_mul(a, b); /* the gradient given for y is a */
    double *wv = tvals(want);
    CHECK(ga && tclose(ga, wv, 1e-12, 0));
    free(wv);
    RELEASE(y, ga, want);
    /* the NULL input (a non-tensor argument) has no edge and needs no grad */
    p = probe_new();
    em_tensor *bl = leaf(SHAPE(3), -1, 1);
    y = apply1(&mul_needs, p, 3, (em_tensor *[]){a, NULL, bl});
    CHECK(y && em_node_num_next(em_grad_fn(y)) == 3 && !em_node_next(em_grad_fn(y), 1, NULL));
    em_tensor *g[3] = {0};
    CHECK(em_autograd_grad(1, &y, (em_tensor *[]){a}, 2, (em_tensor *[]){a, bl}, false, false, false, g) == EM_OK);
    CHECK(p->needs[0] && !p->needs[1] && g[0] && g[1]);
    RELEASE(y, g[0], g[1], a, b, bl);
}

/* ExpInPlace: exp_ of its input, marked dirty, saving the output */
static em_status exp_fw(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    em_tensor *x = (em_tensor *)in[0];
    if (em_exp_(x)) return em_error_code();
    out[0] = em_retain(x);
    *nout = 1;
    if (em_ctx_mark_dirty(ctx, x)) return em_error_code();
    return em_ctx_save_for_backward(ctx, 1, (const em_tensor *[]){x});
}
static em_status exp_bw(em_function_ctx *ctx, int nout, em_tensor *const *go, int nin, em_tensor **gi)
{
    em_tensor *y = em_ctx_saved_tensor(ctx, 0);
    gi[0] = y ? em_mul(go[0], y) : NULL;
    em_release(y);
    return gi[0] ? EM_OK : em_error_code();
}
static const em_function exp_inplace = {"ExpInPlace", exp_fw, exp_bw, NULL};
static em_tensor *f_exp_inplace(em_tensor *const *in, const void *c)
{
    em_tensor *x = em_clone(in[0]), *y = x ? apply1(&exp_inplace, NULL, 1, &x) : NULL;
    em_release(x);
    return y;
}

/* Forgets to return the tensor it marks dirty */
static em_status dirty_fw(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    out[0] = em_clone(in[0]);
    *nout = 1;
    return em_ctx_mark_dirty(ctx, in[0]);
}
static const em_function dirty_lost = {"DirtyLost", dirty_fw, exp_bw, NULL};

TEST(function_mark_dirty)
{
    em_tensor *w = leaf(SHAPE(2, 3), -1, 1);
    CHECK(gradcheck("ExpInPlace", f_exp_inplace, 1, &w, NULL));
    CHECK(gradgradcheck("ExpInPlace (through its saved output)", f_exp_inplace, 1, &w, NULL));
    em_tensor *x = em_clone(w), *y = apply1(&exp_inplace, NULL, 1, &x);
    CHECK(y == x && !strcmp(em_node_name(em_grad_fn(x)), "ExpInPlaceBackward"));
    em_release(y);
    /* the in-place input's old history is the node's edge */
    int nr;
    em_tensor *x2 = em_clone(w);
    CHECK(!strcmp(em_node_name(em_node_next(em_grad_fn(x), 0, &nr)), em_node_name(em_grad_fn(x2))));
    em_release(x2);
    /* a leaf that requires grad cannot be modified in place */
    em_tensor *out[EM_FUNCTION_MAX_OUT] = {0};
    int nout;
    CHECK_ERR(em_function_apply(&exp_inplace, NULL, 1, (const em_tensor *const *)&w, &nout, out), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "a leaf Variable that requires grad has been used in an in-place operation"));
    CHECK_ERR(em_function_apply(&dirty_lost, NULL, 1, (const em_tensor *const *)&x, &nout, out), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "marked as dirty during the forward method were not returned as output"));
    CHECK(nout == 0 && !out[0]);
    RELEASE(w, x);
}

/* Identity: returns its input unmodified (it becomes an alias with the node as grad_fn) */
static em_status id_fw(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    out[0] = em_retain((em_tensor *)in[0]);
    *nout = 1;
    return EM_OK;
}
static em_status id_bw(em_function_ctx *ctx, int nout, em_tensor *const *go, int nin, em_tensor **gi)
{
    gi[0] = em_retain(go[0]);
    return EM_OK;
}
static const em_function identity = {"Identity", id_fw, id_bw, NULL};

TEST(function_returns_input)
{
    em_tensor *w = leaf(SHAPE(3), -1, 1), *y = apply1(&identity, NULL, 1, &w);
    CHECK(y && y != w && em_is_leaf(w) && !strcmp(em_node_name(em_grad_fn(y)), "IdentityBackward"));
    CHECK(y && em_data_ptr(y) == em_data_ptr(w));
    RELEASE(y, w);
}

/* Split: (x * 2, x * 3 marked non-differentiable, x > 0 as an integer
 * output); backward reports which grad_out came as NULL */
static em_status split_fw(em_function_ctx *ctx, int nin, const em_tensor *const *in, int *nout, em_tensor **out)
{
    probe *p = em_ctx_user(ctx);
    em_ctx_set_materialize_grads(ctx, p->materialize);
    out[0] = scaled(in[0], 2);
    out[1] = scaled(in[0], 3);
    em_tensor *zero = em_scalar_float(0), *pos = em_gt(in[0], zero);
    out[2] = pos ? em_to_dtype(pos, EM_I64) : NULL;
    RELEASE(zero, pos);
    *nout = 3;
    if (!out[0] || !out[1] || !out[2]) return em_error_code();
    return p->go_null[1] ? em_ctx_mark_non_differentiable(ctx, out[1]) : EM_OK; /* go_null[1] in: mark it */
}
static em_status split_bw(em_function_ctx *ctx, int nout, em_tensor *const *go, int nin, em_tensor **gi)
{
    probe *p = em_ctx_user(ctx);
    for (int k = 0; k < 2; k++) p->go_null[k] = go[k] == NULL;
    em_tensor *a = go[0] ? scaled(go[0], 2) : NULL, *b = go[1] ? scaled(go[1], 3) : NULL;
    gi[0] = a && b ? em_add(a, b, 1) : em_retain(a ? a : b);
    RELEASE(a, b);
    return EM_OK;
}
static const em_function split = {"Split", split_fw, split_bw, probe_free};

TEST(function_non_differentiable_and_materialize)
{
    em_tensor *x = leaf(SHAPE(4), -1, 1), *out[EM_FUNCTION_MAX_OUT] = {0};
    int nout;
    for (int materialize = 0; materialize < 2; materialize++) {
        /* only out[0] gets a gradient: out[1] is missing */
        probe *p = probe_new();
        p->materialize = materialize;
        CHECK(em_function_apply(&split, p, 1, (const em_tensor *const *)&x, &nout, out) == EM_OK && nout == 3);
        CHECK(em_requires_grad(out[0]) && em_requires_grad(out[1]) && !em_requires_grad(out[2]));
        em_tensor *g = NULL;
        CHECK(em_autograd_grad(1, out, NULL, 1, &x, false, false, false, &g) == EM_ERR_RUNTIME); /* not scalar */
        em_tensor *ones = em_ones(1, (const int64_t[]){4}, EM_F64);
        CHECK(em_autograd_grad(1, out, &ones, 1, &x, false, false, false, &g) == EM_OK);
        CHECK(!p->go_null[0] && p->go_null[1] == !materialize);
        CHECK(g && tclose(g, (const double[]){2, 2, 2, 2}, 1e-12, 0));
        RELEASE(g, ones, out[0], out[1], out[2]);
    }
    /* marked non-differentiable: no history, and its gradient is zeros */
    probe *p = probe_new();
    p->materialize = true;
    p->go_null[1] = true;
    CHECK(em_function_apply(&split, p, 1, (const em_tensor *const *)&x, &nout, out) == EM_OK);
    CHECK(em_requires_grad(out[0]) && !em_requires_grad(out[1]) && !em_grad_fn(out[1]));
    CHECK(em_backward(1, out, (em_tensor *[]){x}, false, false, 0, NULL) == EM_OK && !p->go_null[1]);
    RELEASE(out[0], out[1], out[2], x);
}

TEST(function_invalid_gradient_shape)
{
    em_tensor *x = leaf(SHAPE(3), -1, 1);
    probe *p = probe_new();
    p->bad_grad = 2;
    em_tensor *y = apply1(&cube, p, 1, &x);
    CHECK_ERR(em_backward(1, &y, (em_tensor *[]){x}, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "Function CubeBackward returned an invalid gradient at index 0 - got [2] but "
                                   "expected shape compatible with [3]"));
    CHECK(!em_get_grad(x));
    em_release(y);
    /* a gradient that broadcasts to the input is summed to its shape */
    em_tensor *s = leaf(SHAPE(1), -1, 1);
    p = probe_new();
    p->bad_grad = 3;
    y = apply1(&cube, p, 1, &s);
    em_tensor *one = em_ones(1, (const int64_t[]){1}, EM_F64), *g = NULL;
    CHECK(em_autograd_grad(1, &y, &one, 1, &s, false, false, false, &g) == EM_OK);
    CHECK(g && tshape_is(g, SHAPE(1)) && tval(g, 0) == 3);
    RELEASE(x, y, s, one, g);
}

TEST(function_saved_tensor_checks)
{
    em_tensor *w = leaf(SHAPE(3), -1, 1), *x = em_clone(w), *y = f_cube(&x, NULL), *one = em_scalar_float(1);
    CHECK(em_add_(x, one, 1) == EM_OK);
    CHECK_ERR(em_backward(1, &y, (em_tensor *[]){x}, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "modified by an inplace operation") && strstr(em_last_error(), "CubeBackward"));
    em_release(y);
    /* saved tensors are freed by a backward without retain_graph */
    y = f_cube(&x, NULL);
    CHECK(em_backward(1, &y, (em_tensor *[]){x}, false, false, 0, NULL) == EM_OK);
    CHECK_ERR(em_backward(1, &y, (em_tensor *[]){x}, false, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "Trying to backward through the graph a second time"));
    RELEASE(w, x, y, one);
}

/* ---- inference mode ----------------------------------------------------------- */
TEST(inference_mode)
{
    em_tensor *w = leaf(SHAPE(3), -1, 1);
    CHECK(!em_is_inference_mode_enabled() && !em_is_inference(w));
    em_set_inference_mode(true);
    CHECK(em_is_inference_mode_enabled() && !em_is_grad_enabled());
    em_tensor *x = em_ones(1, (const int64_t[]){3}, EM_F64), *y = em_mul(w, w);
    em_set_grad_enabled(true); /* still nothing is recorded */
    em_tensor *z = em_mul(w, w);
    CHECK(em_is_inference(x) && em_is_inference(y) && !em_requires_grad(y) && !em_grad_fn(z));
    CHECK(em_set_requires_grad(x, true) == EM_OK && em_set_requires_grad(x, false) == EM_OK);
    em_set_inference_mode(false);
    CHECK(!em_is_inference_mode_enabled() && em_is_grad_enabled());
    em_tensor *v = em_reshape(x, 2, (const int64_t[]){1, 3}), *c = em_clone(x), *n = em_mul(w, w);
    CHECK(em_is_inference(v) && !em_is_inference(c) && !em_is_inference(n) && em_grad_fn(n));
    CHECK_ERR(em_set_requires_grad(x, true), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "Setting requires_grad=True on inference tensor outside InferenceMode"));
    /* mul saves its inputs: an inference tensor cannot be one; add saves none */
    CHECK(!em_mul(x, w) && em_error_code() == EM_ERR_RUNTIME);
    CHECK(!strcmp(em_last_error(), "Inference tensors cannot be saved for backward. To work around you can make a "
                                   "clone to get a normal tensor and use it in autograd."));
    em_tensor *s = em_add(x, w, 1);
    CHECK(s && em_grad_fn(s));
    /* an inference tensor is written only in inference mode */
    CHECK_ERR(em_add_(x, w, 1), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "Inplace update to inference tensor outside InferenceMode is not allowed."));
    CHECK(tval(x, 0) == 1 && em_add_(c, w, 1) == EM_OK);
    em_set_inference_mode(true);
    CHECK(em_add_(x, w, 1) == EM_OK && tval(x, 0) != 1);
    em_set_inference_mode(false);
    em_tensor *xw[] = {x, w}, *out[EM_FUNCTION_MAX_OUT] = {0};
    int nout;
    CHECK_ERR(em_function_apply(&mul_needs, probe_new(), 2, (const em_tensor *const *)xw, &nout, out), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "Inference tensors cannot be saved for backward"));
    RELEASE(w, x, y, z, v, c, n, s);
}

/* ---- post-accumulate-grad hooks ---------------------------------------------- */
typedef struct hook_log {
    int order[8], n;
    double grad0[8]; /* leaf.grad[0] when the hook ran */
} hook_log;
static hook_log hlog;
static void post_hook(em_tensor *leaf, void *ctx)
{
    em_tensor *g = em_get_grad(leaf);
    hlog.grad0[hlog.n] = g ? tval(g, 0) : NAN;
    hlog.order[hlog.n++] = (int)(intptr_t)ctx;
    em_release(g);
}
static void failing_hook(em_tensor *leaf, void *ctx) { em_size(leaf, 5); /* sets an IndexError */ }

TEST(post_accumulate_grad_hooks)
{
    em_tensor *w = leaf(SHAPE(2), -1, 1), *y = NULL, *two = em_scalar_float(2);
    hlog.n = 0;
    int h1 = em_register_post_accumulate_grad_hook(w, post_hook, (void *)1, NULL);
    int h2 = em_register_post_accumulate_grad_hook(w, post_hook, (void *)2, NULL);
    CHECK(h1 > 0 && h2 > h1);
    for (int round = 0; round < 2; round++) {
        em_tensor *p = em_mul(w, two);
        y = em_sum(p, 0, NULL, false, EM_DTYPE_NONE);
        CHECK(em_backward(1, &y, NULL, false, false, 0, NULL) == EM_OK);
        RELEASE(p, y);
    }
    /* in registration order, after .grad was accumulated (2, then 4) */
    CHECK(hlog.n == 4 && hlog.order[0] == 1 && hlog.order[1] == 2 && hlog.order[2] == 1 && hlog.order[3] == 2);
    CHECK(hlog.grad0[0] == 2 && hlog.grad0[1] == 2 && hlog.grad0[2] == 4 && hlog.grad0[3] == 4);
    /* removed by handle; autograd.grad accumulates nothing and runs none */
    CHECK(em_remove_hook(w, h1) == EM_OK);
    CHECK_ERR(em_remove_hook(w, h1), EM_ERR_VALUE);
    em_tensor *p = em_mul(w, two), *g = NULL;
    y = em_sum(p, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(em_autograd_grad(1, &y, NULL, 1, &w, true, false, false, &g) == EM_OK && hlog.n == 4);
    CHECK(em_backward(1, &y, NULL, true, false, 1, &w) == EM_OK && hlog.n == 5 && hlog.order[4] == 2);
    /* an error set by a hook fails the backward */
    int h3 = em_register_post_accumulate_grad_hook(w, failing_hook, NULL, NULL);
    CHECK_ERR(em_backward(1, &y, NULL, true, false, 0, NULL), EM_ERR_INDEX);
    CHECK(em_remove_hook(w, h3) == EM_OK && em_remove_hook(w, h2) == EM_OK);
    /* leaves that require grad only */
    CHECK(em_register_post_accumulate_grad_hook(p, post_hook, NULL, NULL) == -1 && em_error_code() == EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "post accumulate grad hooks cannot be registered on non-leaf tensors"));
    em_tensor *c = trand(EM_F64, SHAPE(2), -1, 1);
    CHECK(em_register_post_accumulate_grad_hook(c, post_hook, NULL, NULL) == -1 && em_error_code() == EM_ERR_RUNTIME);
    RELEASE(w, y, two, p, g, c);
}
