/* CPU kernels of the plain reductions: sum, nansum, mean, nanmean, prod,
 * amax/amin (and max/min of everything), all, any, count_nonzero. The op
 * layer has converted the input to the dtype computed in (int64 for integer
 * sums, float32 for the half types, bool for the logical ops). */
#include "reduce.h"

#define ADD(x, y) ((x) + (y))
#define MUL(x, y) ((x) * (y))
#define AND(x, y) ((x) & (y))
#define OR(x, y) ((x) | (y))
#define KEEP(v, a) (v)
#define NAN_TO_ZERO(v, a) ((v) != (v) ? 0 : (v))
#define IS_NUMBER(v, a) ((int64_t)((v) == (v)))
#define AS_U64(v, a) ((uint64_t)(v))
#define AS_I64(v, a) ((int64_t)(v))
#define AS_FLAG(v, a) ((uint8_t)(v))
#define RESULT(s, n, a) (s)
#define RESULT_I64(s, n, a) ((int64_t)(s)) /* wraps like PyTorch's int64 arithmetic */
#define MEAN(s, n, a) ((s) / (n))
#define MEAN_OF_AUX(s, n, a) ((s) / (a)) /* aux: the count of non-NaN elements */
#define NONZERO(s, n, a) ((s) != 0)

/* Integer sums and products accumulate in uint64: wrapping, never undefined. */
EM_RED_KIND(sum_F32, float, float, float, 0.0f, KEEP, ADD, RESULT)
EM_RED_KIND(sum_F64, double, double, double, 0.0, KEEP, ADD, RESULT)
EM_RED_KIND(sum_I64, int64_t, uint64_t, int64_t, 0, AS_U64, ADD, RESULT_I64)
EM_RED_KIND(sum_C64, em_C64_t, em_C64_t, em_C64_t, 0.0f, KEEP, ADD, RESULT)
EM_RED_KIND(sum_C128, em_C128_t, em_C128_t, em_C128_t, 0.0, KEEP, ADD, RESULT)
EM_CPU_REDUCE(sum, [EM_F32] = &sum_F32, [EM_F64] = &sum_F64, [EM_I64] = &sum_I64, [EM_C64] = &sum_C64,
              [EM_C128] = &sum_C128)

EM_RED_KIND(nansum_F32, float, float, float, 0.0f, NAN_TO_ZERO, ADD, RESULT)
EM_RED_KIND(nansum_F64, double, double, double, 0.0, NAN_TO_ZERO, ADD, RESULT)
EM_CPU_REDUCE(nansum, [EM_F32] = &nansum_F32, [EM_F64] = &nansum_F64, [EM_I64] = &sum_I64)

EM_RED_KIND(mean_F32, float, float, float, 0.0f, KEEP, ADD, MEAN)
EM_RED_KIND(mean_F64, double, double, double, 0.0, KEEP, ADD, MEAN)
EM_RED_KIND(mean_C64, em_C64_t, em_C64_t, em_C64_t, 0.0f, KEEP, ADD, MEAN)
EM_RED_KIND(mean_C128, em_C128_t, em_C128_t, em_C128_t, 0.0, KEEP, ADD, MEAN)
EM_CPU_REDUCE(mean, [EM_F32] = &mean_F32, [EM_F64] = &mean_F64, [EM_C64] = &mean_C64, [EM_C128] = &mean_C128)

/* nanmean: the count of non-NaN elements, then their sum divided by it */
EM_RED_KIND(count_F32, float, int64_t, double, 0, IS_NUMBER, ADD, RESULT)
EM_RED_KIND(count_F64, double, int64_t, double, 0, IS_NUMBER, ADD, RESULT)
EM_RED_KIND(nanmean_F32, float, float, float, 0.0f, NAN_TO_ZERO, ADD, MEAN_OF_AUX)
EM_RED_KIND(nanmean_F64, double, double, double, 0.0, NAN_TO_ZERO, ADD, MEAN_OF_AUX)
em_status cpu_nanmean(const em_call *c)
{
    return c->dtype == EM_F32 ? em_red_call2(c, &count_F32, &nanmean_F32) : em_red_call2(c, &count_F64, &nanmean_F64);
}

EM_RED_KIND(prod_F32, float, float, float, 1.0f, KEEP, MUL, RESULT)
EM_RED_KIND(prod_F64, double, double, double, 1.0, KEEP, MUL, RESULT)
EM_RED_KIND(prod_I64, int64_t, uint64_t, int64_t, 1, AS_U64, MUL, RESULT_I64)
EM_RED_KIND(prod_C64, em_C64_t, em_C64_t, em_C64_t, 1.0f, KEEP, MUL, RESULT)
EM_RED_KIND(prod_C128, em_C128_t, em_C128_t, em_C128_t, 1.0, KEEP, MUL, RESULT)
EM_CPU_REDUCE(prod, [EM_F32] = &prod_F32, [EM_F64] = &prod_F64, [EM_I64] = &prod_I64, [EM_C64] = &prod_C64,
              [EM_C128] = &prod_C128)

/* amax/amin for every dtype; NaN wins */
#define EXTREMA(DT)                                                                                   \
    EM_RED_KIND(amax_##DT, em_##DT##_t, em_##DT##_t, em_##DT##_t, EM_LOWEST_##DT, KEEP, EM_MAX_NAN, RESULT) \
    EM_RED_KIND(amin_##DT, em_##DT##_t, em_##DT##_t, em_##DT##_t, EM_HIGHEST_##DT, KEEP, EM_MIN_NAN, RESULT)
EM_FOR_ALL(EXTREMA)
#define AMAX_ENTRY(DT) [EM_##DT] = &amax_##DT,
#define AMIN_ENTRY(DT) [EM_##DT] = &amin_##DT,
EM_CPU_REDUCE(amax, EM_FOR_ALL(AMAX_ENTRY))
EM_CPU_REDUCE(amin, EM_FOR_ALL(AMIN_ENTRY))
em_status cpu_max(const em_call *c) { return cpu_amax(c); }
em_status cpu_min(const em_call *c) { return cpu_amin(c); }

/* the logical reductions read bools */
EM_RED_KIND(all_BOOL, bool, uint8_t, bool, 1, AS_FLAG, AND, NONZERO)
EM_RED_KIND(any_BOOL, bool, uint8_t, bool, 0, AS_FLAG, OR, NONZERO)
EM_RED_KIND(count_nonzero_BOOL, bool, int64_t, int64_t, 0, AS_I64, ADD, RESULT)
EM_CPU_REDUCE(all, [EM_BOOL] = &all_BOOL)
EM_CPU_REDUCE(any, [EM_BOOL] = &any_BOOL)
EM_CPU_REDUCE(count_nonzero, [EM_BOOL] = &count_nonzero_BOOL)
