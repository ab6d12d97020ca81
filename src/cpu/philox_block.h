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

#endif
