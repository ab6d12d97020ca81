/* Philox in blocks for the CPU random kernels (random.c, sample.c): the
 * words of EM_PHILOX_BLOCK consecutive counters at once, vectorized. */
#ifndef EMBER_CPU_PHILOX_BLOCK_H
#define EMBER_CPU_PHILOX_BLOCK_H

#include "../core/rng.h"
#include "cpu.h"

#define EM_PHILOX_BLOCK 64                       /* counters per block */
#define EM_PHILOX_WORDS (4 * EM_PHILOX_BLOCK)    /* words per block */

/* w[4j .. 4j + 3] = the words of counter ctr + j under key, j < EM_PHILOX_BLOCK
 * (the same as em_philox_words gives one at a time). */
void cpu_philox_block(uint64_t key, uint64_t ctr, uint32_t *restrict w);

/* Elements [first, first + n) of an op's output from their block's words w. */
typedef void (*cpu_philox_fn)(void *ctx, const uint32_t *w, int64_t first, int64_t n);

/* Runs fn over the n elements of the op's stream in parallel over blocks,
 * c->i[0] = key, c->i[1] = offset, c->i[2] = words per element. */
void cpu_philox_for(const em_call *c, int64_t n, cpu_philox_fn fn, void *ctx);

#endif
