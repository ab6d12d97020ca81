/* Sliding-window arithmetic of convolution, unfold / fold and pooling, done
 * without overflow (Note [Window arithmetic]). */
#ifndef EMBER_NN_WINDOW_H
#define EMBER_NN_WINDOW_H

#include "../core/internal.h"

/* Note [Window arithmetic]
 * A window of `kernel` cells spread by `dilation` spans dilation * (kernel -
 * 1) + 1 cells; over `in` cells padded by `pad` on each side, moving by
 * `stride`, it takes floor((in + 2 pad - span) / stride) + 1 positions. With
 * a kernel, dilation, padding or stride near 2**62 these products overflow
 * int64: a wrapped value gives a wrong shape, or a zero divisor (SIGFPE).
 * The helpers return false on overflow and the op fails with a RuntimeError
 * (em_window_overflow); the output shape's element and byte counts are
 * checked by em_tensor_new. Callers check signs first: kernel, stride and
 * dilation > 0, in and pad >= 0. */

/* dilation * (kernel - 1) + 1 */
static inline bool em_window_span(int64_t kernel, int64_t dilation, int64_t *span)
{
    return !__builtin_mul_overflow(dilation, kernel - 1, span) && !__builtin_add_overflow(*span, 1, span);
}

/* in + 2 * pad */
static inline bool em_window_padded(int64_t in, int64_t pad, int64_t *padded)
{
    return !__builtin_mul_overflow(pad, 2, padded) && !__builtin_add_overflow(*padded, in, padded);
}

/* The number of window positions (<= 0 when the window does not fit: the
 * caller words that error). ceil_mode rounds up as PyTorch's pooling does,
 * the last window starting inside the input or its left padding. */
static inline bool em_window_count(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                                   bool ceil_mode, int64_t *count)
{
    int64_t span, padded, room;
    if (!em_window_span(kernel, dilation, &span) || !em_window_padded(in, pad, &padded) ||
        __builtin_sub_overflow(padded, span, &room))
        return false;
    if (ceil_mode && __builtin_add_overflow(room, stride - 1, &room)) return false;
    int64_t q = room / stride;
    if (room % stride && room < 0) q--; /* floor */
    if (ceil_mode && q >= 0 && q * stride >= in + pad) q--;
    *count = q + 1;
    return true;
}

/* A transposed convolution's output size: (in - 1) * stride - 2 * pad + span + output_padding. */
static inline bool em_window_transposed(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                                        int64_t output_padding, int64_t *out)
{
    int64_t span, r;
    return em_window_span(kernel, dilation, &span) && !__builtin_mul_overflow(in - 1, stride, &r) &&
           !__builtin_add_overflow(r, span, &r) && !__builtin_add_overflow(r, output_padding, &r) &&
           !__builtin_sub_overflow(r, pad, &r) && !__builtin_sub_overflow(r, pad, out);
}

/* The op's error for an overflow found by the helpers above. */
static inline em_status em_window_overflow(const char *op)
{
    return em_fail(EM_ERR_RUNTIME, "%s: the kernel size, dilation, padding or stride is too large: the window "
                   "arithmetic overflows int64", op);
}

#endif
