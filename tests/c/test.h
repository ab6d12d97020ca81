/* Ember's C test harness: TEST() registers a test, CHECK* record failures
 * (a test stops at its first), COVER() marks ops of the table as tested,
 * and helpers build tensors from values and compare against references.
 * One binary runs every tests/c/test_*.c and ends with "N passed, N failed". */
#ifndef EMBER_TEST_H
#define EMBER_TEST_H

#include "ember/ember.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The real dtypes come first in dtypes.def, the complex ones last: loops over
 * real semantics run dt < TEST_REAL_DTYPES (complex: tests/c/test_complex.c). */
#define TEST_REAL_DTYPES EM_C32

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool test_failed(void);
void test_cover(em_op op);

#define TEST(name)                                                                   \
    static void test_##name(void);                                                   \
    __attribute__((constructor)) static void register_##name(void) { test_register(#name, test_##name); } \
    static void test_##name(void)

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            test_fail(__FILE__, __LINE__, "CHECK(%s) failed [last error: %s]", #cond, em_last_error()); \
            return;                                                                  \
        }                                                                            \
    } while (0)
#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        if (!(cond)) {                                                               \
            test_fail(__FILE__, __LINE__, __VA_ARGS__);                              \
            return;                                                                  \
        }                                                                            \
    } while (0)
/* expr must fail (return NULL or a nonzero status) with error code `code`;
 * a result it returns anyway is not released (the test fails then). */
#define CHECK_ERR(expr, code)                                                        \
    do {                                                                             \
        em_clear_error();                                                            \
        (void)(expr);                                                                \
        if (em_error_code() != (code)) {                                             \
            test_fail(__FILE__, __LINE__, "%s: expected error %d, got code %d (%s)", #expr, (int)(code), \
                      (int)em_error_code(), em_last_error());                        \
            return;                                                                  \
        }                                                                            \
    } while (0)

#define COVER(...) test_cover_list((const em_op[]){__VA_ARGS__}, sizeof((const em_op[]){__VA_ARGS__}) / sizeof(em_op), false)
/* In the autograd tests: these ops' gradients were checked (float64 gradcheck);
 * every differentiable op of the table must be (tests/c/main.c). */
#define GRAD_COVER(...) test_cover_list((const em_op[]){__VA_ARGS__}, sizeof((const em_op[]){__VA_ARGS__}) / sizeof(em_op), true)
void test_cover_list(const em_op *ops, size_t n, bool gradchecked);

/* ---- tensor helpers (all CPU) ----------------------------------------- */
#define SHAPE(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), ((const int64_t[]){__VA_ARGS__})
/* A tensor of dtype dt from double values (row-major). */
em_tensor *tt(em_dtype dt, int ndim, const int64_t *sizes, const double *vals);
/* Deterministic uniform values in [lo, hi) (integers for integral dtypes). */
em_tensor *trand(em_dtype dt, int ndim, const int64_t *sizes, double lo, double hi);
/* Same values, non-contiguous layout (every other element of a larger buffer). */
em_tensor *tnoncontig(const em_tensor *t);
/* Element `i` in row-major order, as double. */
double tval(const em_tensor *t, int64_t i);
/* Values in row-major order, malloc'ed (caller frees). */
double *tvals(const em_tensor *t);
bool tshape_is(const em_tensor *t, int ndim, const int64_t *sizes);
/* |got - want| <= atol + rtol*|want| elementwise, nan == nan; prints the first mismatch. */
bool tclose(const em_tensor *got, const double *want, double rtol, double atol);
/* Tolerances that suit a dtype's precision. */
double trtol(em_dtype dt);
/* Next value of the harness's deterministic generator in [0, 1). */
double trandu(void);
/* Random values laid out as asked: 0 contiguous, 1 every other element of a
 * larger buffer, 2 transposed (first and last dims swapped in memory). */
em_tensor *tlayout(em_dtype dt, int ndim, const int64_t *sizes, int layout, double lo, double hi);
/* Random integers in [lo, hi) stored as dt. */
em_tensor *tints(em_dtype dt, int ndim, const int64_t *sizes, int64_t lo, int64_t hi);
/* v as dtype dt stores it (rounded, wrapped, or made bool), as double. */
double tcast(em_dtype dt, double v);
/* Row-major linear index <-> coordinates. */
void tunravel(int64_t i, int ndim, const int64_t *sizes, int64_t *coord);
int64_t travel(int ndim, const int64_t *sizes, const int64_t *coord);
/* Releases every tensor of a list: RELEASE(a, b, c). */
void trelease_n(em_tensor *const *ts, size_t n);
#define RELEASE(...) trelease_n((em_tensor *const[]){__VA_ARGS__}, sizeof((em_tensor *const[]){__VA_ARGS__}) / sizeof(em_tensor *))
#define NLIST(...) (int)(sizeof((const em_tensor *const[]){__VA_ARGS__}) / sizeof(em_tensor *))

/* ---- autograd ------------------------------------------------------------ */
typedef em_tensor *(*fn_t)(em_tensor *const *in, const void *ctx);
/* Compares the analytic gradients of f at `in` (float64 leaves that require
 * grad) with central differences of sum(f(in) * w) for a random w; prints
 * the first mismatch. */
bool gradcheck(const char *name, fn_t f, int nin, em_tensor *const *in, const void *ctx);
/* Compares the second derivatives recorded by create_graph with central
 * differences of the first derivatives (w.r.t. the inputs and the output's
 * gradient); prints the first mismatch. */
bool gradgradcheck(const char *name, fn_t f, int nin, em_tensor *const *in, const void *ctx);
/* A float64 leaf requiring grad with values in [lo, hi). */
em_tensor *leaf(int ndim, const int64_t *sizes, double lo, double hi);

#endif
