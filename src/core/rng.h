/* Ember's random number generation core: the Philox4x32-10 block function
 * and the generator locking the op layer uses to draw a stream of counters.
 * Kernels see only (key, offset) pairs, never a generator.
 *
 * Note [Philox streams]
 * A generator is a key (its seed) and an offset (the next unused counter).
 * One Philox call maps (key, counter) to four 32-bit words. A random op that
 * writes n elements taking `wpe` words each (1 or 2) reads the words of
 * counters offset, offset + 1, ... in order: element e uses words
 * [e * wpe, (e + 1) * wpe) of that stream, so counter offset + e * wpe / 4.
 * Every element's numbers are thus fixed by its index alone, whichever
 * thread computes it, and the op then advances the offset by
 * em_rng_counters(n, wpe). Ops that consume draws in another pattern
 * (randperm, multinomial) still number their draws and follow the same rule. */
#ifndef EMBER_RNG_H
#define EMBER_RNG_H

#include "internal.h"

/* Philox4x32-10 (Salmon et al., SC'11): counter (c0..c3) under key (k0, k1). */
#define EM_PHILOX_M0 0xD2511F53u
#define EM_PHILOX_M1 0xCD9E8D57u
#define EM_PHILOX_W0 0x9E3779B9u
#define EM_PHILOX_W1 0xBB67AE85u

static inline void em_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)EM_PHILOX_M0 * c0, p1 = (uint64_t)EM_PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c0 = n0, c1 = (uint32_t)p1, c2 = n2, c3 = (uint32_t)p0;
        k0 += EM_PHILOX_W0, k1 += EM_PHILOX_W1;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* The four words of stream counter `counter` (a 64-bit index) under a 64-bit key. */
static inline void em_philox_words(uint64_t key, uint64_t counter, uint32_t out[4])
{
    const uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
    const uint32_t c[4] = {(uint32_t)counter, (uint32_t)(counter >> 32), 0, 0};
    em_philox4x32(c, k, out);
}

/* A uniform double on [0, 1) with 53 random bits, from two words: 26 bits
 * of the first and 27 of the second (the two parts do not overlap, so the
 * sum is exact; int32 conversions vectorize where int64 ones do not). */
static inline double em_rng_unit53(const uint32_t w[2])
{
    return (double)(int32_t)(w[0] >> 6) * 0x1p-26 + (double)(int32_t)(w[1] >> 5) * 0x1p-53;
}

/* Counters used by n elements of `wpe` words each (Note [Philox streams]). */
static inline uint64_t em_rng_counters(int64_t n, int wpe) { return ((uint64_t)n * (uint64_t)wpe + 3) / 4; }

/* Locks generator g (NULL: the default one) for one op and gives its key and
 * current offset; returns the generator to pass to em_rng_end. Draws made
 * while the lock is held are the op's alone: two threads sharing a
 * generator never get the same numbers. */
em_generator *em_rng_begin(em_generator *g, uint64_t *key, uint64_t *offset);
/* Advances the offset by `counters` (0 after a failed op, which therefore
 * leaves the generator as it was) and unlocks. */
void em_rng_end(em_generator *g, uint64_t counters);

#endif
