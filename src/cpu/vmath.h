/* Branch-free float32 math for the hot kernels (exp, expm1, log, log1p,
 * tanh, sigmoid, silu, gelu, mish), shared by the unary family, softmax and
 * logsumexp. libm's expf or tanhf are calls GCC cannot vectorize;
 * these are plain arithmetic, selects and bit moves, so a loop calling them
 * auto-vectorizes in every EM_SIMD clone. Accuracy against double libm over
 * every 3rd-31st float32 (tests/c/test_unary.c samples all binades), in
 * ulp: exp 1.0, expm1 1.5, log 0.85, log1p 1.5, tanh 1.5, sigmoid 2.4, silu 3.2,
 * mish 4.3, gelu 6.1, tanh-gelu 4 + 3|2u| (u = sqrt(2/pi)(x + 0.044715x^3)
 * is rounded to float32, as in PyTorch, and exp amplifies that).
 *
 * Note [Vector exp]
 * exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n*ln2 in [-ln2/2, ln2/2]:
 * n comes from the low mantissa bits of x/ln2 + 1.5*2^23 (no float->int
 * conversion, so NaN is harmless); r from a two-part ln2 (Cody-Waite: the
 * high part has 9 bits, so n*ln2_hi and x - n*ln2_hi are exact); exp(r) from
 * a degree-6 minimax polynomial. 2^n is applied as two factors 2^(n/2) and
 * 2^(n-n/2), both normal for any n reached, so overflow gives inf and
 * results in the subnormal range are rounded once. The coefficients here
 * were fitted for this file (Lawson's minimax iteration on relative error). */
#ifndef EMBER_CPU_VMATH_H
#define EMBER_CPU_VMATH_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* glibc's vector math library (libmvec, linked by -lm as needed): with
 * these declarations (math.h's own under -ffast-math) GCC calls its vector
 * variants in vectorized loops, the one matching each EM_SIMD clone's ISA
 * (_ZGVb SSE for the default clone, _ZGVd AVX2, _ZGVe AVX-512). */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__clang__)
#define EM_LIBMVEC(T, fn) T fn(T) __attribute__((simd("notinbranch")));
#define EM_LIBMVEC_BOTH(fn) EM_LIBMVEC(float, fn##f) EM_LIBMVEC(double, fn)
EM_LIBMVEC_BOTH(sin) EM_LIBMVEC_BOTH(cos) EM_LIBMVEC_BOTH(tan) EM_LIBMVEC_BOTH(asin) EM_LIBMVEC_BOTH(acos)
EM_LIBMVEC_BOTH(atan) EM_LIBMVEC_BOTH(sinh) EM_LIBMVEC_BOTH(cosh) EM_LIBMVEC_BOTH(asinh)
EM_LIBMVEC_BOTH(acosh) EM_LIBMVEC_BOTH(atanh) EM_LIBMVEC_BOTH(exp2) EM_LIBMVEC_BOTH(log2)
EM_LIBMVEC_BOTH(log10) EM_LIBMVEC_BOTH(erfc)
EM_LIBMVEC(double, tanh) EM_LIBMVEC(double, expm1) EM_LIBMVEC(double, log) EM_LIBMVEC(double, log1p)
EM_LIBMVEC(double, erf)
#undef EM_LIBMVEC_BOTH
/* EM_LIBMVEC stays defined for a file's own declarations: double exp is
 * declared only where its last-bit difference from libm's exp is welcome
 * (the activations); the exp op itself stays libm's. */
#endif

static inline uint32_t em_vf_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static inline float em_vf_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* exp(hi + lo) * 2^k (Note [Vector exp]) for |lo| < 0.1 and |k| <= 24: lo
 * carries the low part of an argument not exact in one float (erfc's -a*a);
 * k scales results that would otherwise be subnormal before a multiply. */
static inline float em_vexpf_scaled(float hi, float lo, int32_t k)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23 */
    const float log2e = 1.44269504f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    float x = hi < -150.0f ? -150.0f : hi; /* beyond these, 2^(n+k) is 0 or inf; */
    x = x > 90.0f ? 90.0f : x;             /* NaN passes both */
    float t = (x + lo) * log2e + magic;
    float n = t - magic;
    int32_t ni = (int32_t)(em_vf_bits(t) - em_vf_bits(magic)) + k;
    float r = (x - n * ln2_hi) - n * ln2_lo + lo;
    float q = 1.38116512e-3f;
    q = q * r + 8.37014057e-3f;
    q = q * r + 4.16685306e-2f;
    q = q * r + 1.66665092e-1f;
    q = q * r + 4.99999940e-1f;
    float p = 1.0f + (r + r * r * q);
    int32_t n1 = ni >> 1, n2 = ni - n1;
    float s1 = em_vf_from_bits((uint32_t)(n1 + 127) << 23);
    float s2 = em_vf_from_bits((uint32_t)(n2 + 127) << 23);
    return p * s1 * s2;
}

static inline float em_vexpf(float x) { return em_vexpf_scaled(x, 0.0f, 0); }

/* expm1(x) = 2^n (1 + t) - 1 = 2^n t + (2^n - 1), with n, r and
 * t = expm1(r) = r + r^2 Q(r) as in exp: no cancellation near 0 (n = 0),
 * 2^n - 1 exact for |n| <= 24. x is clamped to [-30, 80] (2^n normal);
 * beyond 80, expm1 = exp in float32. */
static inline float em_vexpm1f(float x)
{
    const float magic = 12582912.0f, log2e = 1.44269504f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    float xc = x < -30.0f ? -30.0f : x;
    xc = xc > 80.0f ? 80.0f : xc;
    float t = xc * log2e + magic, n = t - magic;
    int32_t ni = (int32_t)(em_vf_bits(t) - em_vf_bits(magic));
    float r = (xc - n * ln2_hi) - n * ln2_lo;
    float q = 1.38116512e-3f;
    q = q * r + 8.37014057e-3f;
    q = q * r + 4.16685306e-2f;
    q = q * r + 1.66665092e-1f;
    q = q * r + 4.99999940e-1f;
    float tr = r + r * r * q, s = em_vf_from_bits((uint32_t)(ni + 127) << 23);
    float near = s * tr + (s - 1.0f), far = em_vexpf(x);
    near = x == 0.0f ? x : near; /* -0 stays -0 */
    return x > 80.0f ? far : near;
}

/* log(x): x = 2^e * m with m in [sqrt(1/2), sqrt(2)) read from the bits
 * (subnormals scaled by 2^23 first), log(m) = f - f^2/2 + f^3 Q(f) with
 * f = m - 1 exact, and e*ln2 in two parts as in exp. */
static inline float em_vlogf(float x)
{
    float xa = __builtin_fabsf(x); /* so that -0 gives -inf below; x < 0 is NaN anyway */
    bool sub = xa < 0x1p-126f;
    float xs = sub ? xa * 0x1p23f : xa;
    uint32_t ix = em_vf_bits(xs) - 0x3f3504f3u; /* bits of sqrt(1/2) */
    int32_t e = ((int32_t)ix >> 23) - (sub ? 23 : 0);
    float f = em_vf_from_bits((ix & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    float q = -7.63449371e-2f;
    q = q * f + 1.27615750e-1f;
    q = q * f - 1.31601825e-1f;
    q = q * f + 1.42017588e-1f;
    q = q * f - 1.66233569e-1f;
    q = q * f + 2.00012267e-1f;
    q = q * f - 2.50008196e-1f;
    q = q * f + 3.33333313e-1f;
    float hf = 0.5f * f * f, ef = (float)e;
    float r = ef * 0.693359375f + (f - (hf - (f * hf * 2.0f * q + ef * -2.12194440e-4f)));
    /* specials as arithmetic on r, not as selects of it, which GCC would
     * turn into branches around r's computation (no vectorizing then):
     * r is < -100 for x = 0 and > 88 for x = inf, the x with x + x == x */
    float to_inf = x + x == x ? INFINITY : 1.0f, to_nan = x >= 0.0f ? 0.0f : NAN;
    return r * to_inf + to_nan;
}

/* log1p(x) = log(u) + c/u, u = 1 + x rounded and c = x - (u - 1) its
 * rounding error (log1p(c/u) ~ c/u at this size); x = inf is capped so
 * that u stays finite, and restored after (arithmetic, as in em_vlogf). */
static inline float em_vlog1pf(float x)
{
    float xc = x > FLT_MAX ? FLT_MAX : x;
    float u = 1.0f + xc, c = xc - (u - 1.0f);
    float r = em_vlogf(u) + c / (u == 0.0f ? 1.0f : u);
    r = x == 0.0f ? x : r; /* -0 stays -0 */
    return r * (x == INFINITY ? INFINITY : 1.0f);
}

/* y * sigmoid(z) = y * (z >= 0 ? 1 : e) / (1 + e), e = exp(-|z|): no exp
 * overflows, and e is taken scaled by 2^24 so that a product that is normal
 * (silu(-90) ~ 1e-37) is not built from a subnormal e. */
static inline float em_vmul_sigmoidf(float y, float z)
{
    float es = em_vexpf_scaled(-__builtin_fabsf(z), 0.0f, 24), e = es * 0x1p-24f;
    bool pos = z >= 0.0f;
    return y * (pos ? 1.0f : es) / (1.0f + e) * (pos ? 1.0f : 0x1p-24f);
}

static inline float em_vsigmoidf(float x)
{
    float e = em_vexpf(-__builtin_fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

/* silu(x) = x * sigmoid(x) */
static inline float em_vsiluf(float x) { return em_vmul_sigmoidf(x, x); }

/* tanh: an odd polynomial for |x| < 0.625, (1 - e) / (1 + e) with
 * e = exp(-2|x|) beyond (no cancellation there). */
static inline float em_vtanhf(float x)
{
    float a = __builtin_fabsf(x), x2 = x * x;
    float q = -5.70498733e-3f;
    q = q * x2 + 2.06390880e-2f;
    q = q * x2 - 5.37397154e-2f;
    q = q * x2 + 1.33314416e-1f;
    q = q * x2 - 3.33332807e-1f;
    float small = __builtin_copysignf(x + x * x2 * q, x); /* (-0 stays -0) */
    float e = em_vexpf(-2.0f * a);
    float big = __builtin_copysignf((1.0f - e) / (1.0f + e), x);
    return a < 0.625f ? small : big;
}

/* erf(w) = w * P(w^2) for |w| < 0.5. */
static inline float em_verf_mid(float w)
{
    float w2 = w * w, p = 4.71800240e-3f;
    p = p * w2 - 2.67571919e-2f;
    p = p * w2 + 1.12828232e-1f;
    p = p * w2 - 3.76126081e-1f;
    p = p * w2 + 1.12837911e+0f;
    return w * p;
}
static inline float em_verfc_mid(float w) { return 1.0f - em_verf_mid(w); }

/* erfc(a) * 2^24 for a = |x| * sqrt(sq_scale) >= 0.5 (gelu: sq_scale =
 * 1/2, erf: 1): exp(-a^2) * t * Q(t), t = 1 / (1 + a/2). a^2 = sq_scale x^2
 * is split into an exact high part (x's top 12 bits squared) and a low
 * part, and taken from x rather than the rounded a, so that the large
 * exponent loses nothing; |x| is capped at 16, where the result is 0 in
 * float32 already. */
static inline float em_verfc_tail_scaled(float x, float sq_scale, float half_a_per_x)
{
    float ax = __builtin_fabsf(x);
    ax = ax > 16.0f ? 16.0f : ax;
    float xh = em_vf_from_bits(em_vf_bits(ax) & 0xfffff000u), xl = ax - xh;
    float sq_hi = sq_scale * xh * xh, sq_lo = sq_scale * (xh + xh + xl) * xl;
    float t = 1.0f / (1.0f + half_a_per_x * ax);
    float q = -6.04468100e-2f;
    q = q * t + 2.93205649e-1f;
    q = q * t - 5.06996572e-1f;
    q = q * t + 3.01250368e-1f;
    q = q * t - 4.21666689e-2f;
    q = q * t + 2.08859965e-1f;
    q = q * t + 2.41677865e-1f;
    q = q * t + 2.82550871e-1f;
    q = q * t + 2.82077581e-1f;
    return em_vexpf_scaled(-sq_hi, -sq_lo, 24) * (t * q);
}

/* erf(x) = x P(x^2) for |x| < 0.5, +-(1 - erfc(|x|)) beyond (libmvec's
 * erff is 4 ulp near +-1, this 1 - erfc has no cancellation there). */
static inline float em_verff(float x)
{
    float mid = em_verf_mid(x), tail = 1.0f - em_verfc_tail_scaled(x, 1.0f, 0.5f) * 0x1p-24f;
    return __builtin_fabsf(x) < 0.5f ? mid : __builtin_copysignf(tail, x);
}

/* gelu(x) = x * Phi(x) = x/2 * erfc(w), w = -x/sqrt2: erfc keeps full
 * relative precision in the negative tail, where 1 + erf(x/sqrt2) would
 * cancel; for w <= -0.5, erfc(w) = 2 - erfc(-w). */
static inline float em_vgeluf(float x)
{
    float w = x * -0.707106781f;
    float tail_s = em_verfc_tail_scaled(x, 0.5f, 0.353553391f);
    float far_neg = x * 0.5f * tail_s * 0x1p-24f, far_pos = x * (1.0f - 0.5f * 0x1p-24f * tail_s);
    return __builtin_fabsf(w) < 0.5f ? x * 0.5f * em_verfc_mid(w) : (w > 0.0f ? far_neg : far_pos);
}

/* gelu's tanh approximation x/2 * (1 + tanh(u)) = x * sigmoid(2u),
 * u = sqrt(2/pi) * (x + 0.044715 x^3). */
static inline float em_vgelu_tanhf(float x)
{
    return em_vmul_sigmoidf(x, 1.59576912f * (x + 0.044715f * x * x * x));
}

/* mish(x) = x * tanh(softplus(x)) = x * n / (n + 2), n = e * (e + 2),
 * e = exp(x) (scaled by 2^24 as in em_vmul_sigmoidf); x itself beyond 20,
 * where mish(x) == x in float32. */
static inline float em_vmishf(float x)
{
    float es = em_vexpf_scaled(x < 20.0f ? x : 20.0f, 0.0f, 24), e = es * 0x1p-24f;
    float ns = es * (e + 2.0f);
    return x < 20.0f ? x * ns / (ns * 0x1p-24f + 2.0f) * 0x1p-24f : x;
}

#endif
