/* Thread-local grad mode: whether ops record the autograd graph. Kept in
 * core so that every layer can read it without depending on src/autograd. */
#include "internal.h"

static _Thread_local bool grad_disabled; /* zero-initialised: grad mode is on */

bool em_grad_mode(void) { return !grad_disabled; }
bool em_is_grad_enabled(void) { return !grad_disabled; }
void em_set_grad_enabled(bool enabled) { grad_disabled = !enabled; }
