/* The CPU reduction machinery shared by every reduce, scan, select and
 * softmax kernel: the strided geometry of "reduce x over some dims", and a
 * driver that runs a reduction "kind" (how values enter, merge and leave)
 * over it with blocking, pairwise merging and threads.
 *
 * Note [Reduction geometry]
 * A reduction of x over a set of dims is seen as
 *     for each outer index o (the kept dims not in the inner run),
 *       for each of the m columns j of the inner run (a kept dim, or merged kept dims),
 *         out[o, j] = reduce over the n reduced elements x[o, i, j], i < n
 * where the n reduced elements are one strided run (the reduced dims merged;
 * when they cannot be merged the kernel works on a copy of x with those dims
 * innermost). The inner run is used ("vertical" reduction) when a kept dim
 * moves faster in memory than the reduced run: whole rows of m columns are
 * then accumulated at once, vectorized across j, instead of striding through
 * memory one element at a time. Otherwise m == 1 and each output reduces one
 * strided (usually contiguous) row of n elements.
 *
 * Note [Deterministic blocking]
 * Rows are cut into blocks whose size depends only on the shape, each block
 * is reduced on its own (pairwise inside), and block results merge in a fixed
 * pairwise tree. Threads only decide who computes which block, so results do
 * not depend on the thread count. Pairwise merging keeps float32 sums of 1e7
 * elements within a few ulps, where a naive loop loses three digits. */
#ifndef EMBER_CPU_REDUCE_H
#define EMBER_CPU_REDUCE_H

#include "cpu.h"

typedef struct em_red_geom {
    int64_t n, sn, on;  /* reduced run: length, input stride, output stride (scans) */
    int64_t m, si, oi;  /* inner run of kept columns: length (1: none), input and output strides */
    int nouter;
    int64_t outer[EM_MAX_DIMS], outer_si[EM_MAX_DIMS], outer_so[EM_MAX_DIMS];
    int64_t nrows;      /* product of outer[] */
    char *x;            /* element 0 of the input (or of its copy) */
    size_t xsize;       /* input element size in bytes */
    em_tensor *copy;    /* owned copy of the input, or NULL */
} em_red_geom;

enum {
    EM_GEOM_ORDERED = 1 /* the reduced run must visit elements in row-major order (indices) */
};

/* Builds the geometry of reducing x over the dims in `mask` into an output
 * with strides `ostrides` (elements; x's ndim of them: for reductions the
 * output has x's shape with size 1 in the reduced dims). May make a copy of
 * x (freed by em_red_geom_free). Errors only on allocation failure. */
em_status em_red_geom_init(em_red_geom *g, const em_tensor *x, const int64_t *ostrides, uint32_t mask, int flags);
void em_red_geom_free(em_red_geom *g);
/* Element offsets (input, output) of outer row o. */
void em_red_geom_row(const em_red_geom *g, int64_t o, int64_t *xoff, int64_t *ooff);

/* A reduction kind: accumulators of acc_size bytes; every function works on
 * m columns at once (m == 1 for a plain row). `aux` is an optional
 * per-output double from an earlier pass (a mean, a max, a count), indexed
 * like the outputs: one value for `row`, m values for `cols`; `c` carries
 * the op's parameters (c->f). */
typedef struct em_red_kind {
    size_t acc_size;
    size_t out_size[2]; /* element sizes of the outputs (0: no second output) */
    /* acc[0] = the reduction of n elements x[i * sn] (the identity if n == 0);
     * `base` is the index of x[0] within the whole reduced run. */
    void (*row)(const void *x, int64_t n, int64_t sn, int64_t base, void *acc, double aux, const em_call *c);
    /* acc[j] = the reduction over rows r < nrows of x[r * sn + j * si], j < m. */
    void (*cols)(const void *x, int64_t nrows, int64_t sn, int64_t m, int64_t si, int64_t base, void *acc,
                 const double *aux, const em_call *c);
    /* a[j] = merge(a[j], b[j]); b holds the later elements. */
    void (*merge)(void *a, const void *b, int64_t m);
    /* out0[j * os] (and out1, when the kind has a second output) from acc[j]. */
    void (*finish)(const void *acc, int64_t m, char *out0, char *out1, int64_t os, const double *aux, int64_t n,
                   const em_call *c);
} em_red_kind;

/* Runs kind k over g. Outputs: out0/out1 point at element 0 of the
 * outputs (out1 may be NULL), placed by g's output strides; if `flat` is
 * set they are instead plain arrays indexed o * m + j (an internal pass
 * writing doubles for a later one). aux (or NULL) is indexed o * m + j. */
em_status em_red_run(const em_red_kind *k, const em_red_geom *g, char *out0, char *out1, bool flat,
                     const double *aux, const em_call *c);

/* The usual single pass: c->in[0] reduced over the dims in c->i[0] (a
 * bitmask) into c->out[0] (and c->out[1], with the same strides). */
em_status em_red_call(const em_call *c, const em_red_kind *k, int flags);
/* Two passes: `first` writes one double per output (a mean, a max, a
 * count) that `second` then reads as its aux. */
em_status em_red_call2(const em_call *c, const em_red_kind *first, const em_red_kind *second);

/* EM_CPU_REDUCE(op, entries...) defines cpu_<op> running the kind for the
 * call's dtype; entries are [EM_<DT>] = &kind. */
#define EM_CPU_REDUCE(op, ...)                                                                       \
    static const em_red_kind *const op##_kinds[EM_DTYPE_COUNT] = {__VA_ARGS__};                      \
    em_status cpu_##op(const em_call *c) { return em_red_kinds(c, op##_kinds, 0); }
/* Runs kinds[c->dtype] with em_red_call (an internal error if missing). */
em_status em_red_kinds(const em_call *c, const em_red_kind *const *kinds, int flags);
/* The error of a call whose dtype has no kernel (the op layer should have
 * rejected it first). */
em_status em_red_no_kernel(const em_call *c);

/* Number of outputs of g. */
static inline int64_t em_red_nout(const em_red_geom *g) { return g->nrows * g->m; }
/* fn over ntask tasks sharing `numel` elements of work, split over threads
 * at the reductions' grain (tasks are shape-determined: the split does not
 * change results, Note [Deterministic blocking]). */
void em_red_for(int64_t ntask, int64_t numel, em_range_fn fn, void *ctx);

/* ---- defining kinds --------------------------------------------------
 * EM_RED_KIND(name, T, ACC, OUT, INIT, MAP, COMB, FIN) defines the kind
 * `name` reading T, accumulating ACC and writing OUT:
 *   INIT         the identity (ACC)
 *   MAP(v, a)    a value v (T) entering, with the output's aux a (double);
 *                `c` (the em_call) is in scope for parameters
 *   COMB(x, y)   merges two accumulators (associative; x holds earlier elements)
 *   FIN(s, n, a) the output from accumulator s, the reduced count n and aux
 *                a (`c` in scope too).
 * Rows use EM_RED_LANES independent accumulators merged pairwise (Note
 * [Deterministic blocking]); a contiguous row vectorizes across the lanes. */
#define EM_RED_LANES 32
#define EM_RED_LANE_ROWS 8    /* elements per lane per block */
#define EM_RED_COL_ROWS 16    /* rows summed directly by `cols` before pairwise merging */
#define EM_RED_COLS 256       /* columns per `cols` call */
#define EM_RED_LEVELS 12      /* pairwise merge depth: 2^12 blocks, more than the driver gives one call */

#define EM_RED_KIND(name, T, ACC, OUT, INIT, MAP, COMB, FIN)                                          \
    /* one block of up to LANES * LANE_ROWS elements into lanes[] */                                 \
    static inline __attribute__((always_inline)) void name##_block(const T *x, int64_t cnt, int64_t sn, \
                                                                   double a, const em_call *c, ACC *lanes) \
    {                                                                                                \
        (void)a, (void)c;                                                                            \
        ACC l[EM_RED_LANES];                                                                         \
        for (int k = 0; k < EM_RED_LANES; k++) l[k] = (INIT);                                        \
        if (cnt == EM_RED_LANES * EM_RED_LANE_ROWS) {                                                \
            for (int i = 0; i < EM_RED_LANE_ROWS; i++)                                               \
                for (int k = 0; k < EM_RED_LANES; k++) {                                             \
                    T v = x[(i * EM_RED_LANES + k) * sn];                                            \
                    l[k] = COMB(l[k], (MAP(v, a)));                                                  \
                }                                                                                    \
        } else {                                                                                     \
            for (int64_t i = 0; i < cnt; i++) {                                                      \
                T v = x[i * sn];                                                                     \
                l[i % EM_RED_LANES] = COMB(l[i % EM_RED_LANES], (MAP(v, a)));                        \
            }                                                                                        \
        }                                                                                            \
        memcpy(lanes, l, sizeof l);                                                                  \
    }                                                                                                \
    static inline __attribute__((always_inline)) ACC name##_row_body(const T *x, int64_t n, int64_t sn, double a, \
                                                                     const em_call *c)               \
    {                                                                                                \
        ACC stack[EM_RED_LEVELS][EM_RED_LANES];                                                      \
        int level[EM_RED_LEVELS], sp = 0;                                                            \
        const int64_t bs = EM_RED_LANES * EM_RED_LANE_ROWS;                                          \
        for (int64_t b = 0; b < n; b += bs) {                                                        \
            name##_block(x + b * sn, n - b < bs ? n - b : bs, sn, a, c, stack[sp]);                  \
            int l = 0;                                                                               \
            for (; sp > 0 && level[sp - 1] == l; l++, sp--)                                          \
                for (int k = 0; k < EM_RED_LANES; k++) stack[sp - 1][k] = COMB(stack[sp - 1][k], stack[sp][k]); \
            level[sp++] = l;                                                                         \
        }                                                                                            \
        if (sp == 0) return (INIT);                                                                  \
        for (; sp > 1; sp--)                                                                         \
            for (int k = 0; k < EM_RED_LANES; k++) stack[sp - 2][k] = COMB(stack[sp - 2][k], stack[sp - 1][k]); \
        for (int w = EM_RED_LANES / 2; w > 0; w /= 2)                                                \
            for (int k = 0; k < w; k++) stack[0][k] = COMB(stack[0][k], stack[0][k + w]);            \
        return stack[0][0];                                                                          \
    }                                                                                                \
    EM_SIMD static void name##_row(const void *xv, int64_t n, int64_t sn, int64_t base, void *acc, double a, \
                                   const em_call *c)                                                 \
    {                                                                                                \
        (void)base;                                                                                  \
        *(ACC *)acc = sn == 1 ? name##_row_body((const T *)xv, n, 1, a, c)                           \
                              : name##_row_body((const T *)xv, n, sn, a, c);                         \
    }                                                                                                \
    /* rows [0, cnt) of up to EM_RED_COL_ROWS into dst[0, m) */                                      \
    static inline __attribute__((always_inline)) void name##_colblock(const T *x, int64_t cnt, int64_t sn, int64_t m, \
                                                                      int64_t si, const double *aux, \
                                                                      const em_call *c, ACC *dst)    \
    {                                                                                                \
        (void)c;                                                                                     \
        for (int64_t j = 0; j < m; j++) {                                                            \
            double a = aux ? aux[j] : 0;                                                             \
            (void)a;                                                                                 \
            T v = x[j * si];                                                                         \
            dst[j] = (MAP(v, a));                                                                    \
        }                                                                                            \
        for (int64_t r = 1; r < cnt; r++)                                                            \
            for (int64_t j = 0; j < m; j++) {                                                        \
                double a = aux ? aux[j] : 0;                                                         \
                (void)a;                                                                             \
                T v = x[r * sn + j * si];                                                            \
                dst[j] = COMB(dst[j], (MAP(v, a)));                                                  \
            }                                                                                        \
    }                                                                                                \
    EM_SIMD static void name##_cols(const void *xv, int64_t nrows, int64_t sn, int64_t m, int64_t si, int64_t base, \
                                    void *accv, const double *aux, const em_call *c)                 \
    {                                                                                                \
        (void)base;                                                                                  \
        const T *x = (const T *)xv;                                                                  \
        ACC *acc = (ACC *)accv;                                                                      \
        ACC stack[EM_RED_LEVELS][EM_RED_COLS];                                                       \
        int level[EM_RED_LEVELS], sp = 0;                                                            \
        for (int64_t j = 0; j < m; j++) acc[j] = (INIT);                                             \
        for (int64_t r = 0; r < nrows; r += EM_RED_COL_ROWS) {                                       \
            int64_t cnt = nrows - r < EM_RED_COL_ROWS ? nrows - r : EM_RED_COL_ROWS;                 \
            if (si == 1)                                                                             \
                name##_colblock(x + r * sn, cnt, sn, m, 1, aux, c, stack[sp]);                       \
            else                                                                                     \
                name##_colblock(x + r * sn, cnt, sn, m, si, aux, c, stack[sp]);                      \
            int l = 0;                                                                               \
            for (; sp > 0 && level[sp - 1] == l; l++, sp--)                                          \
                for (int64_t j = 0; j < m; j++) stack[sp - 1][j] = COMB(stack[sp - 1][j], stack[sp][j]); \
            level[sp++] = l;                                                                         \
        }                                                                                            \
        if (sp == 0) return;                                                                         \
        for (; sp > 1; sp--)                                                                         \
            for (int64_t j = 0; j < m; j++) stack[sp - 2][j] = COMB(stack[sp - 2][j], stack[sp - 1][j]); \
        for (int64_t j = 0; j < m; j++) acc[j] = stack[0][j];                                        \
    }                                                                                                \
    static void name##_merge(void *av, const void *bv, int64_t m)                                    \
    {                                                                                                \
        ACC *x = (ACC *)av;                                                                          \
        const ACC *y = (const ACC *)bv;                                                              \
        for (int64_t j = 0; j < m; j++) x[j] = COMB(x[j], y[j]);                                     \
    }                                                                                                \
    static void name##_finish(const void *accv, int64_t m, char *o0, char *o1, int64_t os, const double *aux, \
                              int64_t n, const em_call *c)                                           \
    {                                                                                                \
        (void)o1, (void)c;                                                                           \
        const ACC *acc = (const ACC *)accv;                                                          \
        OUT *out = (OUT *)o0;                                                                        \
        for (int64_t j = 0; j < m; j++) {                                                            \
            double a = aux ? aux[j] : 0;                                                             \
            (void)a;                                                                                 \
            ACC s = acc[j];                                                                          \
            out[j * os] = (FIN(s, n, a));                                                            \
        }                                                                                            \
    }                                                                                                \
    __attribute__((unused)) static const em_red_kind name = {sizeof(ACC), {sizeof(OUT), 0}, name##_row, name##_cols, \
                                                             name##_merge, name##_finish};

/* Largest and smallest values of each kernel C type (identities of min/max). */
#define EM_LOWEST_U8 0
#define EM_LOWEST_I8 INT8_MIN
#define EM_LOWEST_I16 INT16_MIN
#define EM_LOWEST_I32 INT32_MIN
#define EM_LOWEST_I64 INT64_MIN
#define EM_LOWEST_F32 (-INFINITY)
#define EM_LOWEST_F64 (-INFINITY)
#define EM_LOWEST_BOOL false
#define EM_HIGHEST_U8 UINT8_MAX
#define EM_HIGHEST_I8 INT8_MAX
#define EM_HIGHEST_I16 INT16_MAX
#define EM_HIGHEST_I32 INT32_MAX
#define EM_HIGHEST_I64 INT64_MAX
#define EM_HIGHEST_F32 INFINITY
#define EM_HIGHEST_F64 INFINITY
#define EM_HIGHEST_BOOL true

/* max/min that propagate NaN (for integer types `a != a` folds away). The
 * non-short-circuit | keeps them branch-free, so lane loops vectorize. */
#define EM_MAX_NAN(a, b) (((a) != (a)) | ((a) > (b)) ? (a) : (b))
#define EM_MIN_NAN(a, b) (((a) != (a)) | ((a) < (b)) ? (a) : (b))

#endif
