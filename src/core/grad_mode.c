/* Thread-local grad mode and inference mode: whether ops record the autograd
 * graph, and whether new tensors are inference tensors. Kept in core so that
 * every layer can read them without depending on src/autograd. */
#include "internal.h"

static _Thread_local bool grad_disabled; /* zero-initialised: grad mode is on */
static _Thread_local bool inference_on;

/* Recording needs both: inference mode records nothing even when grad mode
 * was switched back on inside it (PyTorch's InferenceMode excludes autograd). */
bool em_grad_mode(void) { return !grad_disabled && !inference_on; }
bool em_inference_mode(void) { return inference_on; }
bool em_is_grad_enabled(void) { return !grad_disabled; }
void em_set_grad_enabled(bool enabled) { grad_disabled = !enabled; }
bool em_is_inference_mode_enabled(void) { return inference_on; }

void em_set_inference_mode(bool enabled)
{
    inference_on = enabled;
    grad_disabled = enabled;
}
