/* CPU kernels of the DFT primitives (include/ember/fft.h).
 *
 * The op layer hands each kernel a contiguous input and a fresh contiguous
 * output, the params in c->i[] as include/ember/ops/fft.def says. An n-d
 * transform is a 1-d pass per dim; a pass is a batch of lines (the dim's
 * entries at each index of the other dims), split over the pool, and each
 * line is gathered into a buffer, transformed and scattered back. Plans are
 * made per pass (one length, one direction).
 *
 * Both precisions go through kissfft: complex64 through Debian's
 * libkissfft-float, complex128 through its C++ template kissfft<double>
 * (src/cpu/fft_kiss64.h). Lengths with a large prime factor use Bluestein's
 * algorithm, in double precision for both. Real transforms
 * of even length are complex ones of half the length (Note [Real transforms
 * of even length]); of odd length, complex ones of the same length (r2c with
 * zero imaginary parts, c2r on the Hermitian completion of its half). */
#include "cpu.h"
#include "fft_kiss64.h"
#include <kissfft/kiss_fft.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef float _Complex cf32;
typedef double _Complex cf64;

/* ---- one length, one direction -------------------------------------------- */
/* Lengths with a prime factor above this go through Bluestein's algorithm (a
 * convolution of a 5-smooth length, smooth_size): kissfft's butterfly of a
 * prime p above 5 costs p^2 (measured: direct is faster up to 23, Bluestein
 * from 29 on). */
#define BLUESTEIN_MIN_PRIME 23

typedef struct plan {
    int64_t n;
    bool inverse;
    kiss_fft_cfg kiss;       /* complex64, no large prime factor */
    kiss64 *kiss64;          /* complex128, no large prime factor; each chunk runs a copy */
    /* Bluestein: X_k = w_k sum_j (x_j w_j) conj(w_(k-j)), w_t = e^(-+i pi t^2/n), the sum a
     * circular convolution of length m >= 2n - 1 done by FFTs of length m */
    struct plan *conv;       /* forward, length m (factors 2, 3, 5: threads share it) */
    cf64 *chirp;             /* w_0 .. w_(n-1) */
    cf64 *kernel;            /* m: the DFT of conj(w) wrapped around, over m */
    size_t scratch;          /* bytes a line needs besides its input and output */
} plan;

/* Frees what p holds (a failed plan_make leaves nothing to free). */
static void plan_free(plan *p)
{
    kiss_fft_free(p->kiss);
    kiss64_free(p->kiss64);
    free(p->chirp);
    free(p->kernel);
    if (p->conv) plan_free(p->conv);
    free(p->conv);
    memset(p, 0, sizeof *p);
}

/* e^(sign 2 pi i k/n) for 0 <= k < n, exact at the quarter turns (k a
 * multiple of n/4): the quadrant is a multiplication by a power of i, cos/sin see
 * angles of at most pi/4 (so W^(n/2) is exactly -1, W^(n/4) exactly -+i). */
static cf64 unit_root(int64_t k, int64_t n, double sign)
{
    const int64_t quadrant = 4 * k / n, r = 4 * k - quadrant * n; /* angle: (quadrant + r/n) pi/2 */
    double c, si;
    if (2 * r <= n) {
        const double a = M_PI / 2 * (double)r / (double)n;
        c = cos(a), si = sin(a);
    } else {
        const double a = M_PI / 2 * (double)(n - r) / (double)n;
        c = sin(a), si = cos(a);
    }
    const double re[4] = {c, -si, -c, si}, im[4] = {si, c, -si, -c};
    return re[quadrant] + sign * im[quadrant] * I;
}

static int64_t largest_factor(int64_t n)
{
    int64_t big = 1;
    for (int64_t f = 2; f * f <= n; f++)
        while (n % f == 0) big = f, n /= f;
    return n > big ? n : big;
}

/* The least 2^a 3^b 5^c >= n: a length of kissfft's fast butterflies (radix
 * 4, 2, 3, 5), within a few percent of n where a power of 2 may be 2n. */
static int64_t smooth_size(int64_t n)
{
    int64_t best = INT64_MAX;
    for (int64_t p5 = 1; p5 < 2 * n; p5 *= 5)
        for (int64_t p3 = p5; p3 < 2 * n; p3 *= 3) {
            int64_t m = p3;
            while (m < n) m *= 2;
            if (m < best) best = m;
        }
    return best;
}

static void line_f64(const plan *p, cf64 *out, const cf64 *in, void *scratch);

static em_status plan_make(plan *p, em_dtype dt, int64_t n, bool inverse);

/* The Bluestein parts of p (length p->n) in double precision. */
static em_status plan_bluestein(plan *p)
{
    const int64_t n = p->n;
    const int64_t m = smooth_size(2 * n - 1);
    p->conv = calloc(1, sizeof *p->conv);
    p->chirp = malloc((size_t)n * sizeof *p->chirp);
    p->kernel = malloc((size_t)m * sizeof *p->kernel);
    cf64 *b = malloc((size_t)m * sizeof *b);
    if (!p->conv || !p->chirp || !p->kernel || !b || plan_make(p->conv, EM_C128, m, false)) {
        free(b);
        plan_free(p);
        return em_fail(EM_ERR_MEMORY, "fft: out of memory for a plan of length %lld", (long long)n);
    }
    for (int64_t t = 0; t < n; t++) p->chirp[t] = unit_root((t * t) % (2 * n), 2 * n, p->inverse ? 1 : -1);
    for (int64_t t = 0; t < m; t++) b[t] = 0;
    for (int64_t t = 0; t < n; t++) b[t] = b[(m - t) % m] = conj(p->chirp[t]) / (double)m;
    line_f64(p->conv, p->kernel, b, NULL);
    free(b);
    p->scratch = (size_t)(2 * m + 2 * n) * sizeof(cf64);
    return EM_OK;
}

static em_status plan_make(plan *p, em_dtype dt, int64_t n, bool inverse)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->inverse = inverse;
    if (largest_factor(n) > BLUESTEIN_MIN_PRIME) return plan_bluestein(p);
    if (dt == EM_C64) {
        p->kiss = kiss_fft_alloc((int)n, inverse, NULL, NULL);
    } else {
        cf64 *tw = malloc((size_t)n * sizeof *tw);
        for (int64_t k = 0; tw && k < n; k++) tw[k] = unit_root(k, n, inverse ? 1 : -1);
        p->kiss64 = tw ? kiss64_make(n, inverse, (const double *)tw) : NULL;
        free(tw);
    }
    return p->kiss || p->kiss64 ? EM_OK
                                : em_fail(EM_ERR_MEMORY, "fft: out of memory for a plan of length %lld", (long long)n);
}

/* Bluestein's transform of one line (p->conv's FFTs; the inverse one as the
 * conjugate of the forward FFT of the conjugate); work holds 2m. */
static void bluestein(const plan *p, cf64 *out, const cf64 *in, cf64 *work)
{
    const int64_t n = p->n, m = p->conv->n;
    cf64 *a = work, *A = work + m;
    for (int64_t j = 0; j < n; j++) a[j] = in[j] * p->chirp[j];
    for (int64_t j = n; j < m; j++) a[j] = 0;
    line_f64(p->conv, A, a, NULL);
    for (int64_t k = 0; k < m; k++) A[k] = conj(A[k] * p->kernel[k]);
    line_f64(p->conv, a, A, NULL);
    for (int64_t k = 0; k < n; k++) out[k] = conj(a[k]) * p->chirp[k];
}

/* One line: out = DFT(in), n entries; scratch holds p->scratch bytes. */
static void line_f64(const plan *p, cf64 *out, const cf64 *in, void *scratch)
{
    if (p->conv) bluestein(p, out, in, scratch);
    else kiss64_run(p->kiss64, (double *)out, (const double *)in);
}
static void line_f32(const plan *p, cf32 *out, const cf32 *in, void *scratch)
{
    if (!p->conv) {
        kiss_fft(p->kiss, (const kiss_fft_cpx *)in, (kiss_fft_cpx *)out);
        return;
    }
    cf64 *a = scratch, *b = a + p->n; /* Bluestein in double precision */
    for (int64_t k = 0; k < p->n; k++) a[k] = in[k];
    line_f64(p, b, a, b + p->n);
    for (int64_t k = 0; k < p->n; k++) out[k] = (cf32)b[k];
}

/* ---- passes ------------------------------------------------------------------ */
typedef enum pass_kind { PASS_C2C, PASS_R2C, PASS_C2R } pass_kind;

/* One 1-d pass of length n over the dim of stride `inner` (elements): line l
 * starts at (l / inner) * len * inner + l % inner in src (len = len_in) and
 * dst (len = len_out); src == dst for in-place passes. Results times `scale`.
 *
 * Note [Real transforms of even length]
 * A real pass of even length n runs a complex transform of length h = n/2
 * (plan p) on z_j = x_2j + i x_2j+1, the real signal read as h complex
 * numbers: with Z = DFT(z), X_k = E_k + W^k O_k where E_k = (Z_k +
 * conj(Z_h-k)) / 2 and O_k = (Z_k - conj(Z_h-k)) / 2i are the transforms of
 * the even and odd samples, W = e^(-2 pi i/n) (rtw[k] = W^k, k <= h). c2r
 * undoes it: Z_k = (X_k + conj(X_h-k)) + i conj(W^k) (X_k - conj(X_h-k)),
 * whose inverse transform is x's samples in pairs. */
typedef struct pass {
    pass_kind kind;
    const plan *p;
    const cf64 *rtw; /* even-length real passes: W^k, else NULL */
    const char *src;
    char *dst;
    int64_t n, len_in, len_out, inner;
    double scale;
    bool failed; /* a chunk ran out of memory */
} pass;

#define LINE_BLOCK 16
#define T float
#define CT cf32
#define CONJ conjf
#define CT_REAL crealf
#define SFX f32
#include "fft_impl.h"
#undef T
#undef CT
#undef CONJ
#undef CT_REAL
#undef SFX

#define T double
#define CT cf64
#define CONJ conj
#define CT_REAL creal
#define SFX f64
#include "fft_impl.h"
#undef T
#undef CT
#undef CONJ
#undef CT_REAL
#undef SFX

/* Runs pass *ps of length n over `lines` lines with a fresh plan of the
 * complex dtype dt (of length n / 2 for a real pass of even length). */
static em_status run_pass(pass *ps, em_dtype dt, int64_t n, bool inverse, int64_t lines)
{
    const bool half = ps->kind != PASS_C2C && n % 2 == 0;
    plan p;
    cf64 *rtw = half ? malloc((size_t)(n / 2 + 1) * sizeof *rtw) : NULL;
    if (half && !rtw) return em_fail(EM_ERR_MEMORY, "fft: out of memory for a plan of length %lld", (long long)n);
    if (plan_make(&p, dt, half ? n / 2 : n, inverse)) {
        free(rtw);
        return em_error_code();
    }
    for (int64_t k = 0; half && k <= n / 2; k++) rtw[k] = unit_root(k, n, -1);
    ps->p = &p;
    ps->rtw = rtw;
    ps->n = n;
    /* about 5 n log2(n) flops a line, in the grain's unit of elements */
    int64_t cost = n;
    for (int64_t m = n; m > 1; m >>= 1) cost += n / 4;
    em_parallel_for(lines, cost, EM_GRAIN, dt == EM_C64 ? pass_chunk_f32 : pass_chunk_f64, ps);
    plan_free(&p);
    free(rtw);
    return ps->failed ? em_fail(EM_ERR_MEMORY, "fft: out of memory for a line of %lld", (long long)n) : EM_OK;
}

static int64_t prod(const int64_t *sizes, int from, int to)
{
    int64_t r = 1;
    for (int d = from; d < to; d++) r *= sizes[d];
    return r;
}

/* The product of t's sizes over the dims of mask. */
static double signal_size(const em_tensor *t, uint64_t mask)
{
    double n = 1;
    for (int d = 0; d < t->ndim; d++)
        if (mask >> d & 1) n *= (double)t->sizes[d];
    return n;
}

/* The scale of em_fft_norm `norm` for signal size n. */
static double norm_scale(int norm, double n)
{
    return norm == EM_FFT_NORM_N ? 1 / n : norm == EM_FFT_NORM_SQRT_N ? 1 / sqrt(n) : 1;
}

/* In-place complex passes over every dim of mask except `skip` (-1: none) on
 * buf (complex dt, `sizes`), the first one reading from src; the last one
 * scales by `scale` when `scale_last`. */
static em_status c2c_passes(em_dtype dt, int ndim, const int64_t *sizes, uint64_t mask, int skip, const char *src,
                            char *buf, bool inverse, double scale, bool scale_last)
{
    int last = -1;
    for (int d = 0; d < ndim; d++)
        if ((mask >> d & 1) && d != skip) last = d;
    const int64_t numel = prod(sizes, 0, ndim);
    for (int d = 0; d < ndim; d++) {
        if (!(mask >> d & 1) || d == skip) continue;
        pass ps = {.kind = PASS_C2C, .src = src, .dst = buf, .len_in = sizes[d], .len_out = sizes[d],
                   .inner = prod(sizes, d + 1, ndim), .scale = d == last && scale_last ? scale : 1};
        if (run_pass(&ps, dt, sizes[d], inverse, numel / sizes[d])) return em_error_code();
        src = buf;
    }
    return EM_OK;
}

/* in[0] complex x, out[0] its transform (same shape). */
em_status cpu_fft_c2c(const em_call *c)
{
    const em_tensor *x = c->in[0];
    const uint64_t mask = (uint64_t)c->i[0];
    if (!em_numel(x)) return EM_OK;
    return c2c_passes(c->dtype, x->ndim, x->sizes, mask, -1, em_tensor_data(x), em_tensor_data(c->out[0]), !c->i[3],
                      norm_scale((int)c->i[2], signal_size(x, mask)), true);
}

/* in[0] real x, out[0] its transform: the last dim halved when onesided. */
em_status cpu_fft_r2c(const em_call *c)
{
    const em_tensor *x = c->in[0], *y = c->out[0];
    const uint64_t mask = (uint64_t)c->i[0];
    const int last = (int)c->i[1];
    if (!em_numel(y)) return EM_OK;
    const double scale = norm_scale((int)c->i[2], signal_size(x, mask));
    const bool others = (mask & ~(1ull << last)) != 0;
    const int64_t n = x->sizes[last];
    pass ps = {.kind = PASS_R2C, .src = em_tensor_data(x), .dst = em_tensor_data(y), .len_in = n,
               .len_out = y->sizes[last], .inner = prod(x->sizes, last + 1, x->ndim), .scale = others ? 1 : scale};
    if (run_pass(&ps, c->dtype, n, false, em_numel(x) / n)) return em_error_code();
    return others ? c2c_passes(c->dtype, y->ndim, y->sizes, mask, last, em_tensor_data(y), em_tensor_data(y), false,
                               scale, true)
                  : EM_OK;
}

/* in[0] complex half spectrum z, out[0] the real signal: the inverse complex
 * passes over the other dims (into a copy of z), then the c2r pass. */
em_status cpu_fft_c2r(const em_call *c)
{
    const em_tensor *z = c->in[0], *y = c->out[0];
    const uint64_t mask = (uint64_t)c->i[0];
    const int last = (int)c->i[1];
    if (!em_numel(y)) return EM_OK;
    const char *src = em_tensor_data(z);
    char *work = NULL;
    if (mask & ~(1ull << last)) {
        work = malloc((size_t)em_numel(z) * em_dtypes[c->dtype].size);
        if (!work) return em_fail(EM_ERR_MEMORY, "fft: out of memory for a copy of the input");
        if (c2c_passes(c->dtype, z->ndim, z->sizes, mask, last, src, work, true, 1, false)) {
            free(work);
            return em_error_code();
        }
        src = work;
    }
    const int64_t n = y->sizes[last];
    pass ps = {.kind = PASS_C2R, .src = src, .dst = em_tensor_data(y), .len_in = z->sizes[last], .len_out = n,
               .inner = prod(y->sizes, last + 1, y->ndim), .scale = norm_scale((int)c->i[2], signal_size(y, mask))};
    em_status st = run_pass(&ps, c->dtype, n, true, em_numel(y) / n);
    free(work);
    return st;
}
