/* Helpers shared by the unary kernel files (src/cpu/unary*.c): loop tables
 * of float-only ops, and running one op's loops with other params. */
#ifndef EMBER_CPU_UNARY_OPS_H
#define EMBER_CPU_UNARY_OPS_H

#include "cpu.h"

/* A float-only op (integral inputs either compute in float by the op's rule
 * or are rejected): its float32 and float64 loop bodies over `a`, params p.
 * UNARY_FLOAT_LOOPS defines only the loops and their table <name>_loops
 * (for a kernel that picks among tables), UNARY_FLOATS also cpu_<op>. */
#define UNARY_FLOAT_LOOPS(name, expr32, expr64)                                 \
    EM_UNARY_LOOP(name##_F32, float, float, expr32)                             \
    EM_UNARY_LOOP(name##_F64, double, double, expr64)                           \
    static const em_loop_fn name##_loops[EM_DTYPE_COUNT] = {L(name, F32) L(name, F64)};
#define UNARY_FLOATS(op, expr32, expr64)                                        \
    UNARY_FLOAT_LOOPS(op, expr32, expr64)                                       \
    em_status cpu_##op(const em_call *c) { return cpu_pointwise(c, op##_loops); }

/* A float-only op computed by libm's fnf / fn. */
#define UNARY_LIBM(op, fn) UNARY_FLOATS(op, fn##f(a), fn(a))

/* The same ops with complex loops too: complex.h's c<fn>f / c<fn>. */
#define UNARY_FLOATS_COMPLEX(op, expr32, expr64, cexpr64, cexpr128)                               \
    EM_UNARY_LOOP(op##_F32, float, float, expr32)                                                 \
    EM_UNARY_LOOP(op##_F64, double, double, expr64)                                               \
    EM_UNARY_LOOP(op##_C64, em_C64_t, em_C64_t, cexpr64)                                          \
    EM_UNARY_LOOP(op##_C128, em_C128_t, em_C128_t, cexpr128)                                      \
    static const em_loop_fn op##_loops[EM_DTYPE_COUNT] = {L(op, F32) L(op, F64) EM_LOOPS_COMPLEX(op)}; \
    em_status cpu_##op(const em_call *c) { return cpu_pointwise(c, op##_loops); }
#define UNARY_LIBM_COMPLEX(op, fn) UNARY_FLOATS_COMPLEX(op, fn##f(a), fn(a), c##fn##f(a), c##fn(a))

/* Runs `loops` for c with its params replaced by f0..f2: an op defined
 * through another's loops (relu6 = clamp(0, 6), selu = scaled elu). */
static inline em_status cpu_pointwise_params(const em_call *c, const em_loop_fn loops[EM_DTYPE_COUNT], double f0,
                                             double f1, double f2)
{
    em_call with = *c;
    with.f[0] = f0;
    with.f[1] = f1;
    with.f[2] = f2;
    return cpu_pointwise(&with, loops);
}

#endif
