/* A vectorizable float32 exp for the reduce family's kernels (softmax,
 * logsumexp): branch-free, so loops calling it vectorize; within 2 ulp of
 * expf. Results below 2.7e-38 (x < -86.5) flush to 0 instead of becoming
 * subnormal; x > 88.72 gives inf; NaN gives NaN. */
#ifndef EMBER_CPU_REDUCE_VMATH_H
#define EMBER_CPU_REDUCE_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float em_vexpf(float x)
{
    const float hi = 88.72283935546875f, lo = -86.5f;
    float xc = x > hi ? hi : x < lo ? lo : x; /* NaN passes through */
    /* n = round(x / ln2) lands in t's low mantissa bits (no float -> int conversion) */
    const float shifter = 12582912.0f; /* 1.5 * 2^23 */
    float t = xc * 1.44269504088896341f + shifter;
    float n = t - shifter;
    float r = xc - n * 0.693359375f; /* ln2 split in two for an exact product */
    r = r + n * 2.12194440e-4f;
    /* exp(r) on [-ln2/2, ln2/2] (Cephes' expf polynomial) */
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = p * r * r + r + 1.0f;
    /* times 2^(n-1) * 2: n - 1 stays a normal exponent over [lo, hi] */
    uint32_t tb, sb;
    memcpy(&tb, &t, 4);
    sb = (tb - 0x4B400000u + 126u) << 23;
    float scale;
    memcpy(&scale, &sb, 4);
    y = y * scale * 2.0f;
    return x > hi ? INFINITY : x < lo ? 0.0f : y; /* NaN: y is NaN */
}

#endif
