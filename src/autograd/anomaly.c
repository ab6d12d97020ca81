/* Anomaly detection (torch.autograd.detect_anomaly): while it is on, each
 * node records where it was made (the front end's record hook, e.g. the
 * Python stack), the engine checks every gradient a formula returns for NaN,
 * and a node whose backward fails is reported with that record. Off, it
 * costs one flag test per node made and per node run. */
#include "autograd.h"

static struct {
    bool enabled, check_nan;
    em_anomaly_hooks hooks;
} anomaly;

void em_set_anomaly_mode(bool enabled, bool check_nan)
{
    anomaly.check_nan = check_nan;
    __atomic_store_n(&anomaly.enabled, enabled, __ATOMIC_RELEASE);
}

bool em_is_anomaly_enabled(void) { return __atomic_load_n(&anomaly.enabled, __ATOMIC_ACQUIRE); }
bool em_is_anomaly_check_nan_enabled(void) { return anomaly.check_nan; }
void em_set_anomaly_hooks(const em_anomaly_hooks *hooks) { anomaly.hooks = hooks ? *hooks : (em_anomaly_hooks){0}; }

void em_anomaly_record(em_node *n)
{
    if (em_is_anomaly_enabled() && anomaly.hooks.record) n->anomaly = anomaly.hooks.record();
}

void em_anomaly_free(em_node *n)
{
    if (n->anomaly && anomaly.hooks.free) anomaly.hooks.free(n->anomaly);
    n->anomaly = NULL;
}

/* Does g hold a NaN? Read without recording. */
static em_status has_nan(const em_tensor *g, bool *out)
{
    bool was = em_is_grad_enabled();
    em_set_grad_enabled(false);
    em_tensor *nan = em_isnan(g);
    em_tensor *any = nan ? em_any(nan, 0, NULL, false) : NULL;
    double v = 0;
    em_status st = any && em_item(any, &v) == 0 ? EM_OK : em_error_code();
    em_release(any);
    em_release(nan);
    em_set_grad_enabled(was);
    *out = v != 0;
    return st;
}

em_status em_anomaly_check(const em_node *n, em_status st, em_tensor *const *grads)
{
    for (int i = 0; st == EM_OK && anomaly.check_nan && i < n->nin; i++) {
        bool nan = false;
        if (grads[i] && !(st = has_nan(grads[i], &nan)) && nan)
            st = em_fail(EM_ERR_RUNTIME, "Function '%s' returned nan values in its %dth output.", n->name, i);
    }
    if (st != EM_OK && anomaly.hooks.report) anomaly.hooks.report(n->name, n->anomaly);
    return st;
}
