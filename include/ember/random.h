/* Ember's random ops and factory ops: the hand-declared C API of the EM_OP
 * entries in ops/random.def, and the random generator they draw from.
 *
 * Conventions (besides core.h's):
 * - `dt` EM_DTYPE_NONE picks PyTorch's default: the default float dtype for
 *   floating results, int64 for arange_int, randint and randperm.
 * - A random op takes an `em_generator *`; NULL means the default generator.
 *   Numbers depend only on the generator's state and the element's index in
 *   row-major order, never on the thread count or the memory layout of an
 *   in-place target. A failed call leaves the generator as it was.
 * - `*_out(out, ...)` resizes `out` to the result shape and writes the result
 *   in out's dtype (which must be allowed for the op); `*_` ops write into
 *   `self` in place. Both bump the version counter of the tensor written. */
#ifndef EMBER_RANDOM_H
#define EMBER_RANDOM_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- generators ------------------------------------------------------
 * A counter-based Philox4x32-10 generator: its state is a seed and an
 * offset (how many 128-bit counters were used), so it is cheap to copy and
 * the same on every device. A generator may be shared between threads
 * (ops lock it while they draw). */
typedef struct em_generator em_generator;

/* The default seed of a new or reset generator, as PyTorch's. */
#define EM_DEFAULT_SEED 67280421310721ull
/* Byte size of a generator state (em_generator_get_state). */
#define EM_GENERATOR_STATE_SIZE 24

em_generator *em_generator_new(uint64_t seed);          /* NULL on out of memory; free with em_generator_free */
void em_generator_free(em_generator *g);                 /* NULL-safe; ignores the default generator */
em_generator *em_generator_clone(const em_generator *g); /* an independent copy of g's current state */
void em_generator_manual_seed(em_generator *g, uint64_t seed); /* seed and offset 0 (g NULL: default) */
uint64_t em_generator_initial_seed(const em_generator *g);    /* the seed last set */
/* Writes EM_GENERATOR_STATE_SIZE bytes describing g (for checkpoints) to
 * state (not NULL: an error is set and nothing written). */
void em_generator_get_state(const em_generator *g, void *state);
/* Restores a state from em_generator_get_state; RuntimeError (g unchanged)
 * when `size` or the bytes are not such a state. */
em_status em_generator_set_state(em_generator *g, const void *state, size_t size);

em_generator *em_default_generator(void); /* borrowed; lives as long as the program */
void em_manual_seed(uint64_t seed);       /* seeds the default generator */

/* ---- factories (no generator) ----------------------------------------
 * arange: [start, end) by step, size ceil((end - start) / step) computed in
 * double as PyTorch does. em_arange takes Python floats (NONE: default float
 * dtype); em_arange_int takes Python ints, exact in int64 (NONE: int64).
 * RuntimeError: step zero ("step must be nonzero", also when it truncates to
 * 0 for an integral dtype), non-finite bounds, a step whose sign does not
 * lead from start to end, a size overflowing int64; DTYPE error for bool. */
em_tensor *em_arange(double start, double end, double step, em_dtype dt);
em_tensor *em_arange_int(int64_t start, int64_t end, int64_t step, em_dtype dt);
em_status em_arange_out(em_tensor *out, double start, double end, double step);
em_status em_arange_int_out(em_tensor *out, int64_t start, int64_t end, int64_t step);
/* linspace: `steps` values from start to end inclusive, with PyTorch's
 * formula (values equal torch's for float32, float64 and integral dtypes).
 * steps < 0 is a RuntimeError; bool a DTYPE error. */
em_tensor *em_linspace(double start, double end, int64_t steps, em_dtype dt);
em_status em_linspace_out(em_tensor *out, double start, double end, int64_t steps);
/* logspace: base ** linspace(start, end, steps), computed in double. */
em_tensor *em_logspace(double start, double end, int64_t steps, double base, em_dtype dt);
em_status em_logspace_out(em_tensor *out, double start, double end, int64_t steps, double base);
/* eye: an n x m matrix with ones on the diagonal; any dtype. n, m >= 0. */
em_tensor *em_eye(int64_t n, int64_t m, em_dtype dt);
em_status em_eye_out(em_tensor *out, int64_t n, int64_t m);

/* ---- continuous distributions (floating dtypes only) ------------------ */
/* rand: uniform on [0, 1); randn: standard normal (Box-Muller). */
em_tensor *em_rand(int ndim, const int64_t *sizes, em_dtype dt, em_generator *g);
em_status em_rand_out(em_tensor *out, int ndim, const int64_t *sizes, em_generator *g);
em_tensor *em_randn(int ndim, const int64_t *sizes, em_dtype dt, em_generator *g);
em_status em_randn_out(em_tensor *out, int ndim, const int64_t *sizes, em_generator *g);
/* Uniform on [from, to): needs from <= to, both finite in self's dtype and
 * to - from not overflowing it. */
em_status em_uniform_(em_tensor *self, double from, double to, em_generator *g);
/* Normal with the given mean and std >= 0 (std NaN or < 0: RuntimeError). */
em_status em_normal_(em_tensor *self, double mean, double std, em_generator *g);
/* Exponential with rate lambd >= 0: -log(1 - U) / lambd. */
em_status em_exponential_(em_tensor *self, double lambd, em_generator *g);
/* normal(mean, std) in PyTorch's four forms. Tensor-Tensor broadcasts and
 * has mean's dtype; Tensor-float has mean's shape and dtype; float-Tensor
 * std's; float-float makes `sizes` of dt. Every std element must be >= 0. */
em_tensor *em_normal(const em_tensor *mean, const em_tensor *std, em_generator *g);
em_status em_normal_out(em_tensor *out, const em_tensor *mean, const em_tensor *std, em_generator *g);
em_tensor *em_normal_tensor_float(const em_tensor *mean, double std, em_generator *g);
em_tensor *em_normal_float_tensor(double mean, const em_tensor *std, em_generator *g);
em_tensor *em_normal_float_float(double mean, double std, int ndim, const int64_t *sizes, em_dtype dt,
                                 em_generator *g);

/* ---- discrete distributions ------------------------------------------ */
/* randint: uniform integers in [low, high): low < high, low and high - 1
 * within the dtype's range (bool: [0, 2)). Any dtype. */
em_tensor *em_randint(int64_t low, int64_t high, int ndim, const int64_t *sizes, em_dtype dt, em_generator *g);
em_status em_randint_out(em_tensor *out, int64_t low, int64_t high, int ndim, const int64_t *sizes,
                         em_generator *g);
/* random_(): integers in [0, 2^mantissa] for floats, [0, max] for integral
 * dtypes, {0, 1} for bool. random_from_: [from, *to) or, to NULL, [from, the
 * same upper limit]. */
em_status em_random_(em_tensor *self, em_generator *g);
em_status em_random_from_(em_tensor *self, int64_t from, const int64_t *to, em_generator *g);
/* randperm: a random permutation of 0..n-1 (Fisher-Yates). Any dtype but
 * bool that holds n - 1 exactly (float16: n <= 2049). */
em_tensor *em_randperm(int64_t n, em_dtype dt, em_generator *g);
em_status em_randperm_out(em_tensor *out, int64_t n, em_generator *g);
/* bernoulli(p): 0/1 draws with probabilities p (float32/64 or bfloat16; each
 * in [0, 1]), in p's dtype and shape. bernoulli_p: input's shape and dtype
 * with a scalar p. bernoulli_ / bernoulli_tensor_: in place into self of
 * any dtype but float16; a tensor p broadcasts to self's shape. */
em_tensor *em_bernoulli(const em_tensor *p, em_generator *g);
em_status em_bernoulli_out(em_tensor *out, const em_tensor *p, em_generator *g);
em_tensor *em_bernoulli_p(const em_tensor *input, double p, em_generator *g);
em_status em_bernoulli_(em_tensor *self, double p, em_generator *g);
em_status em_bernoulli_tensor_(em_tensor *self, const em_tensor *p, em_generator *g);
/* multinomial: num_samples category indices (int64) per row of `probs`
 * (1-d or 2-d; float32, float64 or bfloat16; non-negative, finite, each
 * row summing to > 0; at most 2^24 categories). Without replacement no row
 * repeats an index and num_samples <= the number of categories. */
em_tensor *em_multinomial(const em_tensor *probs, int64_t num_samples, bool replacement, em_generator *g);
em_status em_multinomial_out(em_tensor *out, const em_tensor *probs, int64_t num_samples, bool replacement,
                             em_generator *g);

#ifdef __cplusplus
}
#endif
#endif
