/* The CPU backend's shared machinery: the 1-d loop type every pointwise
 * kernel implements, the runner that drives loops over an em_iter with
 * threads and on-the-fly dtype conversion, and helpers for kernel files. */
#ifndef EMBER_CPU_H
#define EMBER_CPU_H

#include "../core/iter.h"
#include "../core/parallel.h"
#include "../ops/dispatch.h"
#include <complex.h>
#include <math.h>

/* Every op's CPU kernel, cpu_<op>, as the table declares it (src/cpu/device.c
 * collects them; kernels may call each other, e.g. cpu_copy). */
#define EM_COMPOSITE(name, flags)
#define EM_OP(name, flags) em_status cpu_##name(const em_call *c);
#include "ember/ops.def"
#undef EM_OP
#undef EM_COMPOSITE

/* A kernel's inner loop: n elements; data[k] and strides[k] (bytes) for each
 * operand, outputs first. Contiguous strides are the common case: kernels
 * written with EM_LOOP get a vectorizable copy of their body for it. */
typedef void (*em_loop_fn)(char **data, const int64_t *strides, int64_t n, const em_call *c);

/* Runs `loops[c->dtype]` (float16/bfloat16 fall back to the float32 loop)
 * over tensors `ops` broadcast to (ndim, shape); operands whose stored dtype
 * differs from c->operand_dtypes are converted in chunks. Splits the work
 * over threads above EM_GRAIN elements. */
em_status cpu_pointwise_run(const em_call *c, const em_loop_fn loops[EM_DTYPE_COUNT], int nops,
                            const em_tensor *const *ops, int ndim, const int64_t *shape);
/* The usual case: c->out[0] and c->in[...] at out[0]'s shape. */
em_status cpu_pointwise(const em_call *c, const em_loop_fn loops[EM_DTYPE_COUNT]);

/* dst[i] = (dst dtype) src[i] for n elements, any dtype pair. */
typedef void (*em_cast_fn)(char *dst, int64_t dst_stride, const char *src, int64_t src_stride, int64_t n);
extern const em_cast_fn em_cast_table[EM_DTYPE_COUNT][EM_DTYPE_COUNT];

/* Run-time ISA dispatch: the loop is compiled for AVX-512, AVX2+FMA and
 * baseline x86-64, and the loader picks the best the CPU has. */
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(EM_NO_CLONES)
#define EM_SIMD __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EM_SIMD
/* CPU_POINTWISE(op, entries...) defines cpu_<op> running a per-dtype loop
 * table; entries are L(op, DT) (= [EM_DT] = op_DT). */
#define CPU_POINTWISE(op, ...)                                                   \
    static const em_loop_fn op##_loops[EM_DTYPE_COUNT] = {__VA_ARGS__};          \
    em_status cpu_##op(const em_call *c) { return cpu_pointwise(c, op##_loops); }
#define L(op, DT) [EM_##DT] = op##_##DT,

#endif

/* EM_LOOP(name, T_OUT, T_A, body) style helpers: each defines a loop whose
 * body computes `out` from `a` (and `b`, `c`), with a contiguous fast path
 * the compiler vectorizes and a strided path. `p` is c->f (the op's params). */
#define EM_UNARY_LOOP(fname, TO, TA, expr) EM_UNARY_LOOP_P(fname, TO, TA, , expr)
/* EM_UNARY_LOOP_P: `setup` (statements, run once before the loop) may
 * derive locals from the params p for `expr`, e.g. bounds converted to TA. */
#define EM_UNARY_LOOP_P(fname, TO, TA, setup, expr)                                            \
    EM_SIMD static void fname(char **data, const int64_t *s, int64_t n, const em_call *call)   \
    {                                                                                          \
        const double *p = call->f;                                                             \
        (void)p;                                                                               \
        setup                                                                                  \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TA)) {                                        \
            TO *restrict o = (TO *)data[0];                                                    \
            const TA *restrict ap = (const TA *)data[1];                                       \
            for (int64_t i = 0; i < n; i++) {                                                  \
                TA a = ap[i];                                                                  \
                o[i] = (expr);                                                                 \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                  \
                TA a = *(const TA *)(data[1] + i * s[1]);                                      \
                *(TO *)(data[0] + i * s[0]) = (expr);                                          \
            }                                                                                  \
        }                                                                                      \
    }

#define EM_BINARY_LOOP(fname, TO, TA, expr)                                                    \
    EM_SIMD static void fname(char **data, const int64_t *s, int64_t n, const em_call *call)   \
    {                                                                                          \
        const double *p = call->f;                                                             \
        (void)p;                                                                               \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TA) && s[2] == sizeof(TA)) {                  \
            TO *restrict o = (TO *)data[0];                                                    \
            const TA *restrict ap = (const TA *)data[1], *restrict bp = (const TA *)data[2];   \
            for (int64_t i = 0; i < n; i++) {                                                  \
                TA a = ap[i], b = bp[i];                                                       \
                o[i] = (expr);                                                                 \
            }                                                                                  \
        } else if (s[0] == sizeof(TO) && s[1] == sizeof(TA) && s[2] == 0) {                    \
            TO *restrict o = (TO *)data[0];                                                    \
            const TA *restrict ap = (const TA *)data[1];                                       \
            const TA b = *(const TA *)data[2];                                                 \
            for (int64_t i = 0; i < n; i++) {                                                  \
                TA a = ap[i];                                                                  \
                o[i] = (expr);                                                                 \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                  \
                TA a = *(const TA *)(data[1] + i * s[1]);                                      \
                TA b = *(const TA *)(data[2] + i * s[2]);                                      \
                *(TO *)(data[0] + i * s[0]) = (expr);                                          \
            }                                                                                  \
        }                                                                                      \
    }

#define EM_TERNARY_LOOP(fname, TO, TA, TB, TC, expr)                                          \
    EM_SIMD static void fname(char **data, const int64_t *s, int64_t n, const em_call *call)   \
    {                                                                                          \
        const double *p = call->f;                                                             \
        (void)p;                                                                               \
        if (s[0] == sizeof(TO) && s[1] == sizeof(TA) && s[2] == sizeof(TB) && s[3] == sizeof(TC)) { \
            TO *restrict o = (TO *)data[0];                                                    \
            const TA *restrict ap = (const TA *)data[1];                                       \
            const TB *restrict bp = (const TB *)data[2];                                       \
            const TC *restrict cp = (const TC *)data[3];                                       \
            for (int64_t i = 0; i < n; i++) {                                                  \
                TA a = ap[i];                                                                  \
                TB b = bp[i];                                                                  \
                TC c = cp[i];                                                                  \
                o[i] = (expr);                                                                 \
            }                                                                                  \
        } else {                                                                               \
            for (int64_t i = 0; i < n; i++) {                                                  \
                TA a = *(const TA *)(data[1] + i * s[1]);                                      \
                TB b = *(const TB *)(data[2] + i * s[2]);                                      \
                TC c = *(const TC *)(data[3] + i * s[3]);                                      \
                *(TO *)(data[0] + i * s[0]) = (expr);                                          \
            }                                                                                  \
        }                                                                                      \
    }

/* The C type of each dtype's kernels: half types compute through float32
 * (cpu_pointwise_run converts), so they have no loops of their own. */
typedef uint8_t em_U8_t;
typedef int8_t em_I8_t;
typedef int16_t em_I16_t;
typedef int32_t em_I32_t;
typedef int64_t em_I64_t;
typedef float em_F32_t;
typedef double em_F64_t;
typedef bool em_BOOL_t;
/* complex32 computes through complex64, as the half types through float32 */
typedef float _Complex em_C64_t;
typedef double _Complex em_C128_t;

/* Note [Integer wrap]
 * Signed overflow is undefined in C, but PyTorch's integer ops wrap. Kernels
 * do integer arithmetic that may overflow in em_<DT>_w (unsigned, at least as
 * wide as int so that no operand is promoted back to a signed int) and cast
 * the result back: (em_I32_t)(EM_W(I32, a) * EM_W(I32, b)) is a wrapping
 * multiply that vectorizes like the plain one. Floats are their own _w type. */
typedef uint32_t em_U8_w;
typedef uint32_t em_I8_w;
typedef uint32_t em_I16_w;
typedef uint32_t em_I32_w;
typedef uint64_t em_I64_w;
typedef float em_F32_w;
typedef double em_F64_w;
typedef em_C64_t em_C64_w;
typedef em_C128_t em_C128_w;
#define EM_W(DT, x) ((em_##DT##_w)(x))
/* the signed type of em_<DT>_w: C's promoted type of DT's integers */
typedef int32_t em_U8_s, em_I8_s, em_I16_s, em_I32_s;
typedef int64_t em_I64_s;

/* EM_PARAM(DT, v): an op's double param (c->f) as DT's C type. Integers go
 * through int64, since a negative double cast straight to an unsigned type is
 * undefined in C; the op must have checked the range (cpu_check_param). */
typedef int64_t em_U8_p, em_I8_p, em_I16_p, em_I32_p, em_I64_p;
typedef double em_F32_p, em_F64_p, em_BOOL_p, em_C64_p, em_C128_p;
#define EM_PARAM(DT, v) ((em_##DT##_t)(em_##DT##_p)(v))

/* PyTorch's checked conversion of a Scalar param (alpha, value) to dtype dt:
 * EM_ERR_RUNTIME "value cannot be converted to type <dt> without overflow"
 * if v is out of dt's range (inf and nan pass for floating dtypes; unsigned
 * dtypes also take negatives down to -max, which wrap). Bool always fits. */
em_status cpu_check_param(double v, em_dtype dt);

/* Expands M(DT) for dtype groups, to build per-dtype loop tables. */
#define EM_FOR_FLOATS(M) M(F32) M(F64)
#define EM_FOR_INTS(M) M(U8) M(I8) M(I16) M(I32) M(I64)
#define EM_FOR_NUMERIC(M) EM_FOR_INTS(M) EM_FOR_FLOATS(M)
#define EM_FOR_ALL(M) EM_FOR_NUMERIC(M) M(BOOL)
#define EM_FOR_COMPLEX(M) M(C64) M(C128)

/* CPU_POINTWISE(op, entries...) defines cpu_<op> running a per-dtype loop
 * table; entries are L(op, DT) (= [EM_DT] = op_DT). */
#define CPU_POINTWISE(op, ...)                                                   \
    static const em_loop_fn op##_loops[EM_DTYPE_COUNT] = {__VA_ARGS__};          \
    em_status cpu_##op(const em_call *c) { return cpu_pointwise(c, op##_loops); }
#define L(op, DT) [EM_##DT] = op##_##DT,
/* Loop-table entries op_<DT> for a dtype group: CPU_POINTWISE(mul, EM_LOOPS_ALL(mul)). */
#define EM_LOOPS_INTS(op) L(op, U8) L(op, I8) L(op, I16) L(op, I32) L(op, I64)
#define EM_LOOPS_FLOATS(op) L(op, F32) L(op, F64)
#define EM_LOOPS_NUMERIC(op) EM_LOOPS_INTS(op) EM_LOOPS_FLOATS(op)
#define EM_LOOPS_ALL(op) EM_LOOPS_NUMERIC(op) L(op, BOOL)
#define EM_LOOPS_COMPLEX(op) L(op, C64) L(op, C128)
/* CPU_POINTWISE whose cpu_<op> first runs `check(c)`: an em_status function for
 * the errors only a kernel can see (values, params in the compute dtype). It
 * must fail before anything is written: the op layer relies on it. */
#define CPU_POINTWISE_CHECKED(op, check, ...)                                    \
    static const em_loop_fn op##_loops[EM_DTYPE_COUNT] = {__VA_ARGS__};          \
    em_status cpu_##op(const em_call *c)                                         \
    {                                                                            \
        em_status st = check(c);                                                 \
        return st ? st : cpu_pointwise(c, op##_loops);                           \
    }

#endif
