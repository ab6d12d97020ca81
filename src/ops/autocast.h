/* Autocast inside the op layer (Note [Autocast] in autocast.c). */
#ifndef EMBER_OPS_AUTOCAST_H
#define EMBER_OPS_AUTOCAST_H
#include "../core/internal.h"

typedef enum em_autocast_policy {
    EM_AUTOCAST_LOWER, /* compute in the autocast dtype (bfloat16) */
    EM_AUTOCAST_FP32,  /* compute in float32 */
} em_autocast_policy;

#define EM_AUTOCAST_MAX 4

bool em_autocast_active(void);
/* Replaces each *params[i] by its cast under policy p (casts[i]: a new
 * reference to release with em_autocast_exit) and pauses autocast, so the
 * op's own body runs once, uncast. 1: redirected; 0: nothing to do
 * (autocast off or paused); -1: a cast failed (error set). */
int em_autocast_enter(em_autocast_policy p, int n, const em_tensor **const *params, em_tensor **casts);
void em_autocast_exit(int n, em_tensor **casts);
/* Backward and composite bodies run with autocast paused (nestable). */
void em_autocast_pause(void);
void em_autocast_resume(void);

/* At the top of an op entry returning em_tensor *: `call` (the entry called
 * again with the same parameter names) runs on the casts of the listed
 * tensor parameters (`&a, &b`) when autocast applies. */
#define EM_AUTOCAST(policy, call, ...)                                                           \
    do {                                                                                         \
        if (!em_autocast_active()) break;                                                        \
        const em_tensor **const params_[] = {__VA_ARGS__};                                       \
        em_tensor *casts_[EM_AUTOCAST_MAX];                                                      \
        int n_ = (int)(sizeof params_ / sizeof *params_);                                         \
        int how_ = em_autocast_enter(policy, n_, params_, casts_);                               \
        if (how_ < 0) return NULL;                                                               \
        if (how_) {                                                                              \
            em_tensor *r_ = call;                                                                \
            em_autocast_exit(n_, casts_);                                                        \
            return r_;                                                                           \
        }                                                                                        \
    } while (0)

#endif
