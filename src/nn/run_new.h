/* The op layer's last step for nn ops with one fresh output: allocate it,
 * dispatch the call into it, and hand it back (shared by src/nn files). */
#ifndef EMBER_NN_RUN_NEW_H
#define EMBER_NN_RUN_NEW_H

#include "../ops/dispatch.h"

/* Runs c (inputs and params set) into one new tensor of (ndim, sizes, dt) on
 * the first input's device: a new reference, or NULL with the error set. */
static inline em_tensor *em_nn_run_new(em_call *c, int ndim, const int64_t *sizes, em_dtype dt)
{
    em_tensor *out = em_tensor_new(ndim, sizes, dt, c->in[0]->storage->device);
    if (!out) return NULL;
    c->nout = 1;
    c->out[0] = out;
    c->operand_dtypes[0] = (int8_t)dt;
    if (em_dispatch(c)) {
        em_release(out);
        return NULL;
    }
    return out;
}

#endif
