/* CPU kernels of the statistical reductions: var/std (and var_mean,
 * std_mean), norm and logsumexp. Two-pass where stability needs it: var
 * subtracts the mean before squaring, logsumexp the max before exp. */
#include "reduce.h"
#include "vmath.h"

#define ADD(x, y) ((x) + (y))
#define KEEP(v, a) (v)
#define MEAN_F64(s, n, a) ((double)(s) / (double)(n))
#define RESULT(s, n, a) (s)

/* ---- var, std, var_mean, std_mean --------------------------------------
 * c->f[0] = correction; c->i[1] = 1 for the standard deviation; out[1], when
 * present, receives the mean. */
#define SQDEV(v, a) (((v) - (__typeof__(v))(a)) * ((v) - (__typeof__(v))(a)))
#define VAR_KINDS(DT, T)                                                                              \
    EM_RED_KIND(mean_aux_##DT, T, T, double, 0, KEEP, ADD, MEAN_F64)                                  \
    EM_RED_KIND(sqdev_##DT, T, T, T, 0, SQDEV, ADD, RESULT)                                           \
    static void var_finish_##DT(const void *accv, int64_t m, char *o0, char *o1, int64_t os, const double *aux, \
                                int64_t n, const em_call *c)                                         \
    {                                                                                                \
        const T *acc = (const T *)accv;                                                              \
        double denom = (double)n - c->f[0];                                                          \
        if (denom < 0) denom = 0;                                                                    \
        for (int64_t j = 0; j < m; j++) {                                                            \
            double v = (double)acc[j] / denom;                                                       \
            ((T *)o0)[j * os] = (T)(c->i[1] ? sqrt(v) : v);                                          \
            if (o1) ((T *)o1)[j * os] = (T)aux[j];                                                   \
        }                                                                                            \
    }                                                                                                \
    static const em_red_kind var_##DT = {sizeof(T), {sizeof(T), sizeof(T)}, sqdev_##DT##_row,        \
                                         sqdev_##DT##_cols, sqdev_##DT##_merge, var_finish_##DT};
VAR_KINDS(F32, float)
VAR_KINDS(F64, double)

static em_status var_like(const em_call *c)
{
    return c->dtype == EM_F32 ? em_red_call2(c, &mean_aux_F32, &var_F32) : em_red_call2(c, &mean_aux_F64, &var_F64);
}
em_status cpu_var(const em_call *c) { return var_like(c); }
em_status cpu_std(const em_call *c) { return var_like(c); }
em_status cpu_var_mean(const em_call *c) { return var_like(c); }
em_status cpu_std_mean(const em_call *c) { return var_like(c); }

/* ---- norm: c->f[0] = p ------------------------------------------------- */
#define MAX_NAN(x, y) EM_MAX_NAN(x, y)
#define MIN_NAN(x, y) EM_MIN_NAN(x, y)
#define SQUARE(v, a) ((v) * (v))
#define ABS(v, a) ((v) < 0 ? -(v) : (v))
#define NONZERO(v, a) ((__typeof__(v))((v) != 0))
#define POW_ABS(v, a) ((__typeof__(v))pow(fabs((double)(v)), c->f[0]))
#define ROOT2(s, n, a) ((__typeof__(s))sqrt((double)(s)))
#define ROOT_P(s, n, a) ((__typeof__(s))pow((double)(s), 1.0 / c->f[0]))
#define EMPTY_ZERO(s, n, a) ((n) == 0 ? 0 : (s)) /* PyTorch: the -inf norm of nothing is 0 */
#define NORM_KINDS(DT, T)                                                                             \
    EM_RED_KIND(norm2_##DT, T, T, T, 0, SQUARE, ADD, ROOT2)                                           \
    EM_RED_KIND(norm1_##DT, T, T, T, 0, ABS, ADD, RESULT)                                             \
    EM_RED_KIND(norm_inf_##DT, T, T, T, 0, ABS, MAX_NAN, RESULT)                                      \
    EM_RED_KIND(norm_ninf_##DT, T, T, T, INFINITY, ABS, MIN_NAN, EMPTY_ZERO)                          \
    EM_RED_KIND(norm0_##DT, T, T, T, 0, NONZERO, ADD, RESULT)                                         \
    EM_RED_KIND(normp_##DT, T, T, T, 0, POW_ABS, ADD, ROOT_P)                                         \
    static const em_red_kind *norm_kind_##DT(double p)                                                \
    {                                                                                                 \
        return p == 2 ? &norm2_##DT : p == 1 ? &norm1_##DT : p == INFINITY ? &norm_inf_##DT           \
             : p == -INFINITY ? &norm_ninf_##DT : p == 0 ? &norm0_##DT : &normp_##DT;                 \
    }
NORM_KINDS(F32, float)
NORM_KINDS(F64, double)

em_status cpu_norm(const em_call *c)
{
    return em_red_call(c, c->dtype == EM_F32 ? norm_kind_F32(c->f[0]) : norm_kind_F64(c->f[0]), 0);
}

/* ---- logsumexp: max (an infinite max taken as 0, as PyTorch), then
 * log(sum(exp(x - max))) + max ---------------------------------------------- */
#define FINITE_MAX(s, n, a) (isinf(s) ? 0.0 : (double)(s))
#define EXP_SHIFTED_F32(v, a) em_vexpf((v) - (float)(a))
#define EXP_SHIFTED_F64(v, a) exp((v) - (a))
#define LOG_PLUS(s, n, a) ((__typeof__(s))(log((double)(s)) + (a)))
#define LSE_KINDS(DT, T)                                                                              \
    EM_RED_KIND(lse_max_##DT, T, T, double, -INFINITY, KEEP, MAX_NAN, FINITE_MAX)                     \
    EM_RED_KIND(lse_sum_##DT, T, T, T, 0, EXP_SHIFTED_##DT, ADD, LOG_PLUS)
LSE_KINDS(F32, float)
LSE_KINDS(F64, double)

em_status cpu_logsumexp(const em_call *c)
{
    return c->dtype == EM_F32 ? em_red_call2(c, &lse_max_F32, &lse_sum_F32)
                              : em_red_call2(c, &lse_max_F64, &lse_sum_F64);
}
