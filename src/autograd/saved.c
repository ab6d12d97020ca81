/* Tensors saved for backward through the front end's pack/unpack hooks
 * (torch.autograd.graph.saved_tensors_hooks): while hooks are set, a saved
 * tensor is replaced by the handle pack returns, and backward's first read
 * unpacks it. Without hooks a save is the tensor itself, as before. */
#include "autograd.h"
#include <stdlib.h>

/* What a packed save keeps: the handle and how to unpack and free it (the
 * hooks of the moment it was packed). */
struct em_packed {
    void *handle;
    em_tensor *(*unpack)(void *handle);
    void (*free)(void *handle);
};

static _Thread_local em_saved_hooks hooks;

void em_set_saved_tensors_hooks(const em_saved_hooks *h, em_saved_hooks *prev)
{
    if (prev) *prev = hooks;
    hooks = h ? *h : (em_saved_hooks){0};
}

em_status em_saved_pack(em_saved *s)
{
    if (!hooks.pack || !s->t) return EM_OK;
    em_packed *p = malloc(sizeof *p);
    if (!p) return em_fail(EM_ERR_MEMORY, "out of memory saving a tensor for backward");
    *p = (em_packed){.unpack = hooks.unpack, .free = hooks.free};
    /* the hook's own ops save nothing through it (no recursion) */
    em_saved_hooks active = hooks;
    hooks = (em_saved_hooks){0};
    em_clear_error();
    p->handle = active.pack(s->t, active.ctx);
    hooks = active;
    if (!p->handle) {
        free(p);
        return em_error_code() ? em_error_code() : em_fail(EM_ERR_RUNTIME, "saved tensor pack hook failed");
    }
    em_release(s->t);
    s->t = NULL;
    s->packed = p;
    return EM_OK;
}

const em_tensor *em_saved_unpack_packed(em_saved *s)
{
    if (!s->t) {
        em_clear_error();
        s->t = s->packed->unpack(s->packed->handle);
        if (!s->t && !em_error_code()) em_fail(EM_ERR_RUNTIME, "saved tensor unpack hook failed");
    }
    return s->t;
}

bool em_saved_release(em_saved *s)
{
    bool held = s->t || s->packed;
    em_release(s->t);
    s->t = NULL;
    if (s->packed) {
        if (s->packed->free) s->packed->free(s->packed->handle);
        free(s->packed);
        s->packed = NULL;
    }
    return held;
}
