/* CPU kernels of the reductions that return indices: max/min along a dim
 * (values and indices) and argmax/argmin. The first extreme element wins a
 * tie; a NaN beats every number, and the first NaN wins among NaNs. */
#include "reduce.h"

#define MAX_BETTER(v, best) ((v) > (best) || ((v) != (v) && (best) == (best)))
#define MIN_BETTER(v, best) ((v) < (best) || ((v) != (v) && (best) == (best)))

/* ARG_KIND(name, T, BETTER, EXTREME) defines kinds name_vi (values in out0,
 * indices in out1) and name_i (indices in out0). A row finds its extreme
 * value with vectorized lanes (EXTREME: a NaN-propagating max or min), then
 * the first index holding it. Every block has >= 1 element: the op layer
 * rejects empty reduced dims. */
#define ARG_LANES 16
#define ARG_KIND(name, T, BETTER, EXTREME)                                                           \
    typedef struct name##_acc {                                                                      \
        T v;                                                                                         \
        int64_t i;                                                                                   \
    } name##_acc;                                                                                    \
    static inline __attribute__((always_inline)) name##_acc name##_row_body(const T *x, int64_t n, int64_t sn) \
    {                                                                                                \
        T l[ARG_LANES], m = x[0];                                                                    \
        int64_t nl = n / ARG_LANES * ARG_LANES, i = 0;                                               \
        for (int k = 0; k < ARG_LANES; k++) l[k] = x[0];                                             \
        for (int64_t b = 0; b < nl; b += ARG_LANES)                                                  \
            for (int k = 0; k < ARG_LANES; k++) l[k] = EXTREME(l[k], x[(b + k) * sn]);               \
        for (int k = 0; k < ARG_LANES; k++) m = EXTREME(m, l[k]);                                    \
        for (int64_t b = nl; b < n; b++) m = EXTREME(m, x[b * sn]);                                  \
        while (!(x[i * sn] == m || (m != m && x[i * sn] != x[i * sn]))) i++;                         \
        return (name##_acc){m, i};                                                                   \
    }                                                                                                \
    EM_SIMD static void name##_row(const void *xv, int64_t n, int64_t sn, int64_t base, void *accv, double aux, \
                                   const em_call *c)                                                 \
    {                                                                                                \
        name##_acc best = sn == 1 ? name##_row_body((const T *)xv, n, 1) : name##_row_body((const T *)xv, n, sn); \
        best.i += base;                                                                              \
        *(name##_acc *)accv = best;                                                                  \
    }                                                                                                \
    EM_SIMD static void name##_cols(const void *xv, int64_t nrows, int64_t sn, int64_t m, int64_t si, int64_t base, \
                                    void *accv, const double *aux, const em_call *c)                 \
    {                                                                                                \
        const T *x = (const T *)xv;                                                                  \
        name##_acc *acc = (name##_acc *)accv;                                                        \
        for (int64_t j = 0; j < m; j++) acc[j] = (name##_acc){x[j * si], base};                      \
        for (int64_t r = 1; r < nrows; r++)                                                          \
            for (int64_t j = 0; j < m; j++) {                                                        \
                T v = x[r * sn + j * si];                                                            \
                if (BETTER(v, acc[j].v)) acc[j] = (name##_acc){v, base + r};                         \
            }                                                                                        \
    }                                                                                                \
    static void name##_merge(void *av, const void *bv, int64_t m)                                    \
    {                                                                                                \
        name##_acc *a = (name##_acc *)av;                                                            \
        const name##_acc *b = (const name##_acc *)bv;                                                \
        for (int64_t j = 0; j < m; j++)                                                              \
            if (BETTER(b[j].v, a[j].v)) a[j] = b[j];                                                 \
    }                                                                                                \
    static void name##_finish_vi(const void *accv, int64_t m, char *o0, char *o1, int64_t os, const double *aux, \
                                 int64_t n, const em_call *c)                                        \
    {                                                                                                \
        const name##_acc *acc = (const name##_acc *)accv;                                            \
        for (int64_t j = 0; j < m; j++) {                                                            \
            ((T *)o0)[j * os] = acc[j].v;                                                            \
            ((int64_t *)o1)[j * os] = acc[j].i;                                                      \
        }                                                                                            \
    }                                                                                                \
    static void name##_finish_i(const void *accv, int64_t m, char *o0, char *o1, int64_t os, const double *aux, \
                                int64_t n, const em_call *c)                                         \
    {                                                                                                \
        const name##_acc *acc = (const name##_acc *)accv;                                            \
        for (int64_t j = 0; j < m; j++) ((int64_t *)o0)[j * os] = acc[j].i;                          \
    }                                                                                                \
    static const em_red_kind name##_vi = {sizeof(name##_acc), {sizeof(T), sizeof(int64_t)}, name##_row, \
                                          name##_cols, name##_merge, name##_finish_vi};              \
    static const em_red_kind name##_i = {sizeof(name##_acc), {sizeof(int64_t), 0}, name##_row, name##_cols, \
                                         name##_merge, name##_finish_i};

#define ARG_KINDS(DT)                                                                                \
    ARG_KIND(argmax_##DT, em_##DT##_t, MAX_BETTER, EM_MAX_NAN)                                       \
    ARG_KIND(argmin_##DT, em_##DT##_t, MIN_BETTER, EM_MIN_NAN)
EM_FOR_ALL(ARG_KINDS)

#define VI_MAX(DT) [EM_##DT] = &argmax_##DT##_vi,
#define VI_MIN(DT) [EM_##DT] = &argmin_##DT##_vi,
#define I_MAX(DT) [EM_##DT] = &argmax_##DT##_i,
#define I_MIN(DT) [EM_##DT] = &argmin_##DT##_i,
static const em_red_kind *const max_dim_kinds[EM_DTYPE_COUNT] = {EM_FOR_ALL(VI_MAX)};
static const em_red_kind *const min_dim_kinds[EM_DTYPE_COUNT] = {EM_FOR_ALL(VI_MIN)};
static const em_red_kind *const argmax_kinds[EM_DTYPE_COUNT] = {EM_FOR_ALL(I_MAX)};
static const em_red_kind *const argmin_kinds[EM_DTYPE_COUNT] = {EM_FOR_ALL(I_MIN)};

/* Indices count in row-major order over the reduced dims (argmax of all). */
em_status cpu_max_dim(const em_call *c) { return em_red_kinds(c, max_dim_kinds, EM_GEOM_ORDERED); }
em_status cpu_min_dim(const em_call *c) { return em_red_kinds(c, min_dim_kinds, EM_GEOM_ORDERED); }
em_status cpu_argmax(const em_call *c) { return em_red_kinds(c, argmax_kinds, EM_GEOM_ORDERED); }
em_status cpu_argmin(const em_call *c) { return em_red_kinds(c, argmin_kinds, EM_GEOM_ORDERED); }
