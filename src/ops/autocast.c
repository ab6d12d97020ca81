/* Autocast's per-thread state, its weight-cast cache, and the casts done at
 * the entry of the ops it covers.
 *
 * Note [Autocast]
 * PyTorch decides per op: "lower precision" ops (matrix products,
 * convolutions) cast floating inputs to the autocast dtype, "float32" ops
 * (losses) cast them to float32, others run as they are. Ember puts an
 * EM_AUTOCAST line at the top of each covered entry (em_mm, em_linear,
 * em_convolution, the loss funnels...): it casts the tensor parameters with
 * em_to_dtype (recorded, so gradients return in the original dtypes) and
 * calls the entry again with autocast paused, so composites (linear ->
 * addmm) cast once and backward formulas never. float64 and non-floating
 * tensors are never cast (PyTorch's eligibility rule). Weights (leaves that
 * require grad) are cast once per autocast region: their casts are cached,
 * keyed by tensor and storage version, until the region's end clears the
 * cache. */
#include "autocast.h"
#include <stdlib.h>

static _Thread_local struct {
    bool cpu_enabled, dtype_set, cache_disabled;
    em_dtype cpu_dtype; /* when dtype_set; bfloat16 otherwise */
    int nesting, paused;
} amp;

/* ---- state ------------------------------------------------------------------ */
em_status em_autocast_set_enabled(em_device_type dev, bool enabled)
{
    if (dev != EM_CPU) return enabled ? em_fail(EM_ERR_DEVICE, "autocast: no CUDA device in this build") : EM_OK;
    amp.cpu_enabled = enabled;
    return EM_OK;
}

bool em_autocast_is_enabled(em_device_type dev) { return dev == EM_CPU && amp.cpu_enabled; }

em_status em_autocast_set_dtype(em_device_type dev, em_dtype dt)
{
    if (dev == EM_CPU && dt != EM_BF16)
        return em_fail(EM_ERR_VALUE, "autocast: the CPU supports only bfloat16, not %s",
                       em_dtype_valid(dt) ? em_dtypes[dt].name : "an invalid dtype");
    if (dev != EM_CPU && dt != EM_F16 && dt != EM_BF16)
        return em_fail(EM_ERR_VALUE, "autocast: expected float16 or bfloat16 for CUDA");
    if (dev == EM_CPU) amp.cpu_dtype = dt, amp.dtype_set = true;
    return EM_OK;
}

em_dtype em_autocast_get_dtype(em_device_type dev)
{
    return dev == EM_CPU && amp.dtype_set ? amp.cpu_dtype : dev == EM_CPU ? EM_BF16 : EM_F16;
}

void em_autocast_set_cache_enabled(bool enabled) { amp.cache_disabled = !enabled; }
bool em_autocast_is_cache_enabled(void) { return !amp.cache_disabled; }
int em_autocast_increment_nesting(void) { return ++amp.nesting; }
int em_autocast_decrement_nesting(void) { return amp.nesting > 0 ? --amp.nesting : 0; }
bool em_autocast_active(void) { return amp.cpu_enabled && !amp.paused; }
void em_autocast_pause(void) { amp.paused++; }
void em_autocast_resume(void) { amp.paused--; }

/* ---- the weight-cast cache: open addressing on the source tensor --------- */
typedef struct cached_cast {
    em_tensor *src, *cast; /* both owned */
    uint64_t version;      /* src's storage version when cast */
} cached_cast;

static _Thread_local struct {
    cached_cast *slots;
    size_t cap, used; /* cap: a power of two */
} cache;

void em_autocast_clear_cache(void)
{
    for (size_t i = 0; i < cache.cap; i++)
        if (cache.slots[i].src) em_release(cache.slots[i].src), em_release(cache.slots[i].cast);
    free(cache.slots);
    cache.slots = NULL;
    cache.cap = cache.used = 0;
}

static cached_cast *slot_of(const em_tensor *src)
{
    size_t i = ((uintptr_t)src >> 4) * 0x9E3779B97F4A7C15ull & (cache.cap - 1);
    while (cache.slots[i].src && cache.slots[i].src != src) i = (i + 1) & (cache.cap - 1);
    return &cache.slots[i];
}

static bool grow(void)
{
    size_t cap = cache.cap ? 2 * cache.cap : 64;
    cached_cast *old = cache.slots, *slots = calloc(cap, sizeof *slots);
    if (!slots) return false;
    size_t old_cap = cache.cap;
    cache.slots = slots, cache.cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].src) *slot_of(old[i].src) = old[i];
    free(old);
    return true;
}

static bool is_weight(const em_tensor *t) { return t->autograd && em_autograd && em_autograd->is_grad_leaf(t); }

/* t cast to dt, from the cache when t is a weight; a new reference. */
static em_tensor *cast(const em_tensor *t, em_dtype dt)
{
    if (amp.cache_disabled || !is_weight(t)) return em_to_dtype(t, dt);
    if (cache.used * 2 >= cache.cap && !grow()) return em_to_dtype(t, dt);
    cached_cast *s = slot_of(t);
    if (s->src && s->version == t->storage->version && s->cast->dtype == dt) return em_retain(s->cast);
    em_tensor *c = em_to_dtype(t, dt);
    if (!c) return NULL;
    if (s->src) em_release(s->cast);
    else s->src = em_retain((em_tensor *)t), cache.used++;
    s->cast = em_retain(c);
    s->version = t->storage->version;
    return c;
}

/* ---- entry casts -------------------------------------------------------------- */
static bool eligible(const em_tensor *t)
{
    return t && t->storage->device.type == EM_CPU && em_dtype_is_float((em_dtype)t->dtype) && t->dtype != EM_F64;
}

static void release_casts(int n, em_tensor **casts)
{
    for (int i = 0; i < n; i++) em_release(casts[i]);
}

int em_autocast_enter(em_autocast_policy p, int n, const em_tensor **const *params, em_tensor **casts)
{
    if (!em_autocast_active()) return 0;
    em_dtype to = p == EM_AUTOCAST_LOWER ? em_autocast_get_dtype(EM_CPU) : EM_F32;
    for (int i = 0; i < n; i++) {
        const em_tensor *t = *params[i];
        casts[i] = !eligible(t) ? NULL : t->dtype == to ? em_retain((em_tensor *)t) : cast(t, to);
        if (eligible(t) && !casts[i]) {
            release_casts(i, casts);
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        if (casts[i]) *params[i] = casts[i];
    amp.paused++;
    return 1;
}

void em_autocast_exit(int n, em_tensor **casts)
{
    release_casts(n, casts);
    amp.paused--;
}
