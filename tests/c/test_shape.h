/* Helpers shared by the shape ops' tests (test_shape.c, test_shape_tri.c):
 * references are functions from an output index to the expected value,
 * checked exactly after rounding to the result's dtype (the ops move data;
 * diff's reference, which computes, rounds each of its steps). */
#ifndef EMBER_TEST_SHAPE_H
#define EMBER_TEST_SHAPE_H

#include "test.h"

/* The expected value at `idx` (an index of the result). */
typedef double (*shape_ref_fn)(const int64_t *idx, const void *ctx);
/* Every element of got == want(idx, ctx) rounded to got's dtype; prints the first mismatch. */
bool shape_check(const em_tensor *got, shape_ref_fn want, const void *ctx);
void shape_unravel(int64_t i, int nd, const int64_t *sizes, int64_t *idx);
double shape_at(const em_tensor *t, const int64_t *idx);
double shape_cast(double v, em_dtype dt); /* v rounded to dt as a store would */
/* A rows x cols view of random values that is a transpose (not contiguous). */
em_tensor *shape_transposed(em_dtype dt, int64_t rows, int64_t cols);
/* The last error message contains `text` (prints it otherwise). */
bool shape_error_says(const char *text);
void shape_release_all(em_tensor **ts, int n);

#endif
