/* The NULL-argument test (Note [NULL arguments] in src/core/internal.h):
 * tools/gen_null_test.py writes build/tests/null_args.c, one case per
 * pointer parameter of every exported function, from the headers; this is
 * what the generated cases use, defined in tests/c/test_null_args.c. */
#ifndef EMBER_NULL_ARGS_H
#define EMBER_NULL_ARGS_H

#include "test.h"

typedef struct null_case {
    const char *function, *argument;
    void (*run)(em_function_ctx *ctx);
    bool nullable; /* NULL allowed by contract: the call must only not crash */
    bool needs_ctx; /* runs inside a custom function's forward (a live ctx) */
} null_case;
extern const null_case null_cases[];
extern const int null_ncases, null_nfunctions;

/* ---- valid arguments (what the generator passes where it does not pass NULL) */
em_tensor *T(void);                 /* a fresh float32 (2, 2) tensor of ones */
em_tensor **OUTS(void);             /* 16 result slots, NULL-initialised */
em_tensor **TL(void);               /* 16 fresh tensors */
em_tensor **TL_NULL(void);          /* 16 slots, all NULL: a list with a NULL element */
em_rnn_grads *GRADS(void);          /* a zeroed result struct */
extern const int64_t I64S[16];
extern const int INTS[16];
extern const double F64S[16];
extern const bool BOOLS[16];
extern const char *const STRS[16];
extern int int_slot;
extern double f64_slot;
extern bool bool_slot;
extern char BUF[4096];
extern em_generator *gen;
extern em_node *node;
extern const em_function probe_fn;
extern const em_pool_params pool_params;
extern const em_optim_options optim_options;
extern const em_optim_group optim_group;
extern const em_rnn_weights rnn_weights;
void noop_free(void *ctx);
em_tensor *hook_fn(const em_tensor *grad, void *ctx);
void post_hook_fn(em_tensor *leaf, void *ctx);
int write_sink(void *ctx, const void *data, size_t n);

/* Ends a case: `failed` says the call returned its error value; the error
 * must be set. (A message that does not say NULL, because the call failed
 * first on another argument, is counted, not failed.) */
void done(const char *function, const char *argument, bool failed);

#endif
