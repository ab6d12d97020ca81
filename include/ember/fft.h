/* Ember's discrete Fourier transforms: the three primitives torch.fft is
 * built from (python/ember/fft.py composes fft, ifft, rfft, irfft, hfft,
 * ihfft and their 2-d and n-d forms, with n/s padding and trimming, from
 * these), computed with kissfft for float32/complex64 and Ember's own
 * mixed-radix code for float64/complex128 (src/cpu/fft.c).
 *
 * Conventions (as core.h): results are NEW references (NULL on error);
 * tensor arguments are borrowed, any strides. `dims` are ndims distinct dims
 * of x (negative ones count from the end), 1 <= ndims <= x's ndim; the
 * transform runs over each of them (the n-d DFT). The signal size n is the
 * product of the transformed sizes (of x for c2c and r2c, of the result for
 * c2r), and `norm` scales the result by 1, 1/sqrt(n) or 1/n. Forward
 * transforms use e^(-2 pi i jk/n), inverse ones e^(+2 pi i jk/n).
 *
 * Autograd: all three are differentiable (src/autograd/formulas_fft.c);
 * each one's gradient is another of them. */
#ifndef EMBER_FFT_H
#define EMBER_FFT_H

#include "ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum em_fft_norm { EM_FFT_NORM_NONE, EM_FFT_NORM_SQRT_N, EM_FFT_NORM_N } em_fft_norm;

/* Complex-to-complex DFT of x (complex64 or complex128); the result has
 * x's shape and dtype. */
em_tensor *em_fft_c2c(const em_tensor *x, int ndims, const int64_t *dims, em_fft_norm norm, bool forward);

/* Forward DFT of the real x (float32 or float64), complex result of the
 * matching precision. onesided: the last of dims keeps its first n/2 + 1
 * entries (the rest follow by Hermitian symmetry), else all n. */
em_tensor *em_fft_r2c(const em_tensor *x, int ndims, const int64_t *dims, em_fft_norm norm, bool onesided);

/* Inverse DFT of a Hermitian signal given by its half x (complex64 or
 * complex128) to real values: the last of dims has last_dim_size / 2 + 1
 * entries in x and last_dim_size (>= 1) in the result; the imaginary parts
 * the symmetry fixes (of entry 0, and of entry n/2 for even n) are ignored. */
em_tensor *em_fft_c2r(const em_tensor *x, int ndims, const int64_t *dims, em_fft_norm norm, int64_t last_dim_size);

#ifdef __cplusplus
}
#endif

#endif
