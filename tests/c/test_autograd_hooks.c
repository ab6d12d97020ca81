/* Anomaly mode and saved-tensor hooks (include/ember/autograd_hooks.h): the
 * NaN check names the node, records reach report and are freed, packed
 * saves are unpacked in backward, freed with the graph, and not packed
 * again by the pack hook's own ops. */
#include "test.h"

static double grad_at(const em_tensor *t, int64_t i)
{
    em_tensor *g = em_get_grad(t);
    double v = g ? tval(g, i) : NAN;
    em_release(g);
    return v;
}

/* ---- anomaly ---------------------------------------------------------------- */
static int records_live, reports;
static char reported[64];

static void *record(void)
{
    records_live++;
    return malloc(16);
}
static void report(const char *name, void *rec)
{
    reports++;
    snprintf(reported, sizeof reported, "%s%s", name, rec ? "" : " (no record)");
}
static void free_record(void *rec)
{
    records_live--;
    free(rec);
}

TEST(anomaly_mode_names_a_nan_backward)
{
    em_set_anomaly_hooks(&(em_anomaly_hooks){.record = record, .report = report, .free = free_record});
    em_tensor *x = leaf(SHAPE(2), 0, 0), *y, *s;  /* zeros: x / x gives NaN gradients */
    CHECK(x);
    em_set_anomaly_mode(true, true);
    y = em_div(x, x);
    s = em_sum(y, 0, NULL, false, EM_DTYPE_NONE);
    CHECK(records_live == 2); /* DivBackward0 and SumBackward0 (not AccumulateGrad) */
    CHECK_ERR(em_backward(1, &s, NULL, true, false, 0, NULL), EM_ERR_RUNTIME);
    CHECK(strstr(em_last_error(), "Function 'DivBackward0' returned nan values in its"));
    CHECK(reports == 1 && !strcmp(reported, "DivBackward0"));
    em_set_anomaly_mode(true, false); /* no NaN check: backward runs */
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    em_set_anomaly_mode(false, true);
    RELEASE(x, y, s);
    CHECK(records_live == 0);
    em_set_anomaly_hooks(NULL);
}

/* ---- saved-tensor hooks ------------------------------------------------------ */
typedef struct packed {
    em_tensor *t;
    double scale;
} packed;
static int packs, unpacks, handles_live;

static void *pack(const em_tensor *t, void *ctx)
{
    packs++;
    handles_live++;
    packed *p = malloc(sizeof *p);
    /* an op in the hook: recorded nothing through the hook (no recursion) */
    p->t = em_mul(t, (em_tensor *)ctx);
    p->scale = 1;
    return p;
}
static em_tensor *unpack(void *h)
{
    unpacks++;
    return em_retain(((packed *)h)->t);
}
static void free_handle(void *h)
{
    handles_live--;
    em_release(((packed *)h)->t);
    free(h);
}

TEST(saved_tensor_hooks_pack_unpack_free)
{
    em_tensor *one = em_scalar_float(1), *x = leaf(SHAPE(3), 1, 2);
    em_saved_hooks prev;
    em_set_saved_tensors_hooks(&(em_saved_hooks){.pack = pack, .unpack = unpack, .free = free_handle, .ctx = one},
                               &prev);
    CHECK(!prev.pack);
    em_tensor *y = em_mul(x, x), *e = em_exp(y), *s = em_sum(e, 0, NULL, false, EM_DTYPE_NONE);
    em_set_saved_tensors_hooks(NULL, NULL);
    CHECK(s && packs == 3 && handles_live == 3); /* mul: both inputs; exp: its output */
    /* a save through hooks is not version-checked (PyTorch's rule) */
    CHECK(em_backward(1, &s, NULL, false, false, 0, NULL) == EM_OK);
    CHECK(unpacks == 3 && handles_live == 0); /* freed with the graph's saved tensors */
    for (int i = 0; i < 3; i++) {
        double v = tval(x, i);
        CHECK(fabs(grad_at(x, i) - 2 * v * exp(v * v)) < 1e-9);
    }
    RELEASE(one, x, y, e, s);
}

static void *failing_pack(const em_tensor *t, void *ctx)
{
    em_fail(EM_ERR_VALUE, "pack refused");
    return NULL;
}

TEST(saved_tensor_hooks_pack_failure_fails_the_op)
{
    em_tensor *x = leaf(SHAPE(2), 1, 2);
    em_set_saved_tensors_hooks(&(em_saved_hooks){.pack = failing_pack, .unpack = unpack}, NULL);
    CHECK_ERR(em_mul(x, x), EM_ERR_VALUE);
    em_set_saved_tensors_hooks(NULL, NULL);
    CHECK(strstr(em_last_error(), "pack refused"));
    RELEASE(x);
}
