/* Autograd's debugging and memory hooks, for front ends: anomaly detection
 * (torch.autograd.detect_anomaly) and hooks on the tensors saved for
 * backward (torch.autograd.graph.saved_tensors_hooks). Both cost one flag
 * test per node when off. Conventions as core.h. */
#ifndef EMBER_AUTOGRAD_HOOKS_H
#define EMBER_AUTOGRAD_HOOKS_H

#include "autograd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- anomaly detection (process-wide, off by default) --------------------- */
/* While enabled, every node made records where (em_anomaly_hooks.record),
 * and a node whose backward fails is reported with its name and record;
 * with check_nan, a formula that returns a NaN gradient fails with
 * "Function 'XBackward0' returned nan values in its ith output.". */
void em_set_anomaly_mode(bool enabled, bool check_nan);
bool em_is_anomaly_enabled(void);
bool em_is_anomaly_check_nan_enabled(void);
/* The front end's callbacks, all optional (NULL clears them). record returns
 * an owned opaque value kept on the node and given to free; report runs on
 * the thread running backward, before the error is returned. */
typedef struct em_anomaly_hooks {
    void *(*record)(void);
    void (*report)(const char *node_name, void *record);
    void (*free)(void *record);
} em_anomaly_hooks;
void em_set_anomaly_hooks(const em_anomaly_hooks *hooks);

/* ---- saved-tensor hooks (thread-local, none by default) ------------------- */
/* While set, every tensor a node saves for backward (op inputs and outputs,
 * a custom Function's save_for_backward) is handed to pack, which returns
 * an owned handle kept instead of the tensor; backward's first read of it
 * calls unpack(handle) (a new reference, kept until the saved tensors are
 * freed). The handle must carry what unpacking needs: hooks set later do
 * not apply to it. pack and unpack return NULL with an error set on
 * failure. A tensor packed this way is not version-checked. */
typedef struct em_saved_hooks {
    void *(*pack)(const em_tensor *t, void *ctx);
    em_tensor *(*unpack)(void *handle);
    void (*free)(void *handle);
    void *ctx; /* pack's */
} em_saved_hooks;
/* Sets this thread's hooks (copied; NULL: none) and returns the previous ones in *prev when prev is not NULL. */
void em_set_saved_tensors_hooks(const em_saved_hooks *hooks, em_saved_hooks *prev);

#ifdef __cplusplus
}
#endif
#endif
