/* complex128 DFTs through kissfft's header-only C++ template (kissfft.hh,
 * Debian's libkissfft-dev; BSD-3-Clause), for the C kernels of src/cpu/fft.c:
 * Debian builds kissfft's C library in single precision only, and kissfft<T>
 * takes T = double. A plan is one length and one direction. */
#ifndef EMBER_CPU_FFT_KISS64_H
#define EMBER_CPU_FFT_KISS64_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiss64 kiss64;

/* A plan for length n >= 1 (inverse: the e^(+2 pi i jk/n) transform,
 * unscaled) with twiddles[k] = e^(-+2 pi i k/n) for 0 <= k < n as (re, im)
 * pairs, or NULL when out of memory. */
kiss64 *kiss64_make(int64_t n, bool inverse, const double *twiddles);
/* A copy of p, or NULL when out of memory. A plan with a prime factor above
 * 5 keeps a scratch buffer in itself (kissfft's generic butterfly), so each
 * thread running such a plan runs its own copy. */
kiss64 *kiss64_copy(const kiss64 *p);
/* out[0..n) = the DFT of in[0..n), both n complex numbers as (re, im)
 * pairs; out and in do not overlap. */
void kiss64_run(kiss64 *p, double *out, const double *in);
void kiss64_free(kiss64 *p);

#ifdef __cplusplus
}
#endif
#endif
