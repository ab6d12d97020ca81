/* Helpers shared by the sort family's op-layer files (src/ops/sort*.c). */
#ifndef EMBER_SORT_OPS_H
#define EMBER_SORT_OPS_H

#include "dispatch.h"

/* Result pointers (each may be NULL: not wanted): set to NULL on entry... */
static inline void em_sort_results_init(em_tensor **a, em_tensor **b, em_tensor **c)
{
    if (a) *a = NULL;
    if (b) *b = NULL;
    if (c) *c = NULL;
}
/* ...and released and set to NULL again on failure; returns the error code. */
static inline em_status em_sort_results_drop(em_tensor **a, em_tensor **b, em_tensor **c)
{
    em_tensor **all[] = {a, b, c};
    for (int k = 0; k < 3; k++)
        if (all[k]) {
            em_release(*all[k]);
            *all[k] = NULL;
        }
    return em_error_code();
}

/* An out= tensor must have exactly dtype `want` (PyTorch's sort/topk rule). */
static inline em_status em_sort_check_dtype(const em_tensor *out, em_dtype want, const char *op)
{
    if (out->dtype == want) return EM_OK;
    return em_fail(EM_ERR_DTYPE, "%s: Expected out tensor to have dtype %s, but got %s instead", op,
                   em_dtypes[want].name, em_dtypes[out->dtype].name);
}

/* c->i[0] of the histc, histogram and bincount kernels: what to compute.
 * A histogram over the data's range first needs that range, and bincount's
 * length the largest value: the first call gets those (into a 2-element
 * float64 or int64 tensor), the op layer checks them, the second counts. */
enum em_hist_mode {
    EM_HIST_RANGE,  /* [min, max] of c->in[0] (NaN if it holds one) */
    EM_HIST_LINEAR, /* equal bins over [c->f[0], c->f[1]] */
    EM_HIST_EDGES,  /* histogram: the bin edges given in c->in[2] */
};

/* Writes a fresh contiguous `result` into out (resized to its shape) for the
 * out= forms of kernels that write contiguous results; releases result. */
em_status em_sort_deliver(em_tensor *out, em_tensor *result);

#endif
