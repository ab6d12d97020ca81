/* CPU kernels of the fused recurrent gates (ops/rnn.def): one pass over a
 * step's gate pre-activations computes every gate and the new state, and one
 * pass computes their gradients (recomputing the gates from the saved
 * pre-activations rather than storing them). Operands are 2-d (B, k*H), rows
 * at any stride, elements contiguous within a row (the op layer sees to it);
 * float32 and float64. Rows are split over threads above a grain. */
#include "cpu.h"
#include "vmath.h"

#ifdef EM_LIBMVEC
EM_LIBMVEC(double, exp) /* with tanh (vmath.h), the float64 gate loops vectorize */
#endif

static inline float sigf(float x) { return em_vsigmoidf(x); }
static inline float tanf_(float x) { return em_vtanhf(x); }
static inline double sigd(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline double tand_(double x) { return tanh(x); }

/* Row b of a 2-d operand. */
static inline char *row(const em_tensor *t, int64_t b)
{
    return em_tensor_data(t) + b * t->strides[0] * (int64_t)em_dtypes[t->dtype].size;
}

/* Each ROWS_* macro defines the per-row loops of one op for dtype T (sigmoid
 * SIG, tanh TANH); the driver below runs them over the batch. */
#define LSTM_ROWS(T, SIG, TANH)                                                                        \
    EM_SIMD static void lstm_fwd_##T(T *restrict hy, T *restrict cy, const T *restrict ig,             \
                                     const T *restrict hg, const T *restrict cx, int64_t H)            \
    {                                                                                                  \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T i = SIG(ig[j] + hg[j]), f = SIG(ig[H + j] + hg[H + j]);                                  \
            T g = TANH(ig[2 * H + j] + hg[2 * H + j]), o = SIG(ig[3 * H + j] + hg[3 * H + j]);         \
            T c = f * cx[j] + i * g;                                                                   \
            cy[j] = c;                                                                                 \
            hy[j] = o * TANH(c);                                                                       \
        }                                                                                              \
    }                                                                                                  \
    EM_SIMD static void lstm_bwd_##T(T *restrict dgates, T *restrict dcx, const T *restrict ghy,       \
                                     const T *restrict gcy, const T *restrict ig, const T *restrict hg, \
                                     const T *restrict cx, int64_t H)                                  \
    {                                                                                                  \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T i = SIG(ig[j] + hg[j]), f = SIG(ig[H + j] + hg[H + j]);                                  \
            T g = TANH(ig[2 * H + j] + hg[2 * H + j]), o = SIG(ig[3 * H + j] + hg[3 * H + j]);         \
            T tc = TANH(f * cx[j] + i * g);                                                            \
            T dc = gcy[j] + ghy[j] * o * (1 - tc * tc);                                                \
            dgates[j] = dc * g * i * (1 - i);                                                          \
            dgates[H + j] = dc * cx[j] * f * (1 - f);                                                  \
            dgates[2 * H + j] = dc * i * (1 - g * g);                                                  \
            dgates[3 * H + j] = ghy[j] * tc * o * (1 - o);                                             \
            dcx[j] = dc * f;                                                                           \
        }                                                                                              \
    }
#define GRU_ROWS(T, SIG, TANH)                                                                         \
    EM_SIMD static void gru_fwd_##T(T *restrict hy, const T *restrict ig, const T *restrict hg,        \
                                    const T *restrict hx, int64_t H)                                   \
    {                                                                                                  \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T r = SIG(ig[j] + hg[j]), z = SIG(ig[H + j] + hg[H + j]);                                  \
            T n = TANH(ig[2 * H + j] + r * hg[2 * H + j]);                                             \
            hy[j] = n + z * (hx[j] - n);                                                               \
        }                                                                                              \
    }                                                                                                  \
    EM_SIMD static void gru_bwd_##T(T *restrict dig, T *restrict dhg, T *restrict dhx,                 \
                                    const T *restrict ghy, const T *restrict ig, const T *restrict hg, \
                                    const T *restrict hx, int64_t H)                                   \
    {                                                                                                  \
        for (int64_t j = 0; j < H; j++) {                                                              \
            T r = SIG(ig[j] + hg[j]), z = SIG(ig[H + j] + hg[H + j]);                                  \
            T n = TANH(ig[2 * H + j] + r * hg[2 * H + j]);                                             \
            T dn = ghy[j] * (1 - z) * (1 - n * n), dz = ghy[j] * (hx[j] - n) * z * (1 - z);            \
            T dr = dn * hg[2 * H + j] * r * (1 - r);                                                   \
            dig[j] = dhg[j] = dr;                                                                      \
            dig[H + j] = dhg[H + j] = dz;                                                              \
            dig[2 * H + j] = dn;                                                                       \
            dhg[2 * H + j] = dn * r;                                                                   \
            dhx[j] = ghy[j] * z;                                                                       \
        }                                                                                              \
    }
#define RNN_ROWS(T, TANH)                                                                              \
    EM_SIMD static void rnn_fwd_##T(T *restrict hy, const T *restrict ig, const T *restrict hg,        \
                                    int64_t H, bool relu)                                              \
    {                                                                                                  \
        if (relu)                                                                                      \
            for (int64_t j = 0; j < H; j++) {                                                          \
                T s = ig[j] + hg[j];                                                                   \
                hy[j] = s > 0 ? s : (s == s ? 0 : s); /* relu keeps nan, as PyTorch */                 \
            }                                                                                          \
        else                                                                                           \
            for (int64_t j = 0; j < H; j++) hy[j] = TANH(ig[j] + hg[j]);                               \
    }                                                                                                  \
    EM_SIMD static void rnn_bwd_##T(T *restrict d, const T *restrict ghy, const T *restrict hy,        \
                                    int64_t H, bool relu)                                              \
    {                                                                                                  \
        if (relu)                                                                                      \
            for (int64_t j = 0; j < H; j++) d[j] = hy[j] > 0 ? ghy[j] : 0;                             \
        else                                                                                           \
            for (int64_t j = 0; j < H; j++) d[j] = ghy[j] * (1 - hy[j] * hy[j]);                       \
    }
LSTM_ROWS(float, sigf, tanf_)
LSTM_ROWS(double, sigd, tand_)
GRU_ROWS(float, sigf, tanf_)
GRU_ROWS(double, sigd, tand_)
RNN_ROWS(float, tanf_)
RNN_ROWS(double, tand_)

/* CPU_GATES(op, out, width, stmt) defines cpu_<op>: `stmt` for each row b
 * of c->out[out] (B, H), split over threads at the row grain, B rows of
 * `width` gate values each; `stmt` calls the float or double row loop on
 * rows of c's operands. */
#define CPU_GATES(op, o, width, stmt)                                             \
    static void op##_rows(void *p, int64_t b0, int64_t b1)                        \
    {                                                                             \
        const em_call *c = p;                                                     \
        const int64_t H = c->out[o]->sizes[1];                                    \
        for (int64_t b = b0; b < b1; b++) stmt;                                   \
    }                                                                             \
    em_status cpu_##op(const em_call *c)                                          \
    {                                                                             \
        const int64_t H = c->out[o]->sizes[1];                                    \
        (void)H;                                                                  \
        em_parallel_for(c->out[o]->sizes[0], width, EM_GRAIN_ROWS, op##_rows, (void *)c); \
        return EM_OK;                                                             \
    }
/* `fn_T(args...)` for the call's dtype, args as row pointers of that type. */
#define BY_DTYPE(name, ...)                                                       \
    do {                                                                          \
        if (c->dtype == EM_F64) {                                                 \
            typedef double T;                                                     \
            name##_double(__VA_ARGS__);                                           \
        } else {                                                                  \
            typedef float T;                                                      \
            name##_float(__VA_ARGS__);                                            \
        }                                                                         \
    } while (0)
#define IN(k) ((const T *)row(c->in[k], b))
#define OUT(k) ((T *)row(c->out[k], b))

/* in: igates, hgates, cx; out: hy, cy */
CPU_GATES(lstm_gates, 0, 4 * H, BY_DTYPE(lstm_fwd, OUT(0), OUT(1), IN(0), IN(1), IN(2), H))
/* in: grad_hy, grad_cy, igates, hgates, cx; out: grad_gates, grad_cx */
CPU_GATES(lstm_gates_backward, 1, 4 * H, BY_DTYPE(lstm_bwd, OUT(0), OUT(1), IN(0), IN(1), IN(2), IN(3), IN(4), H))
/* in: igates, hgates, hx; out: hy */
CPU_GATES(gru_gates, 0, 3 * H, BY_DTYPE(gru_fwd, OUT(0), IN(0), IN(1), IN(2), H))
/* in: grad_hy, igates, hgates, hx; out: grad_igates, grad_hgates, grad_hx */
CPU_GATES(gru_gates_backward, 2, 3 * H, BY_DTYPE(gru_bwd, OUT(0), OUT(1), OUT(2), IN(0), IN(1), IN(2), IN(3), H))
/* in: igates, hgates; out: hy; i[0]: relu */
CPU_GATES(rnn_gates, 0, H, BY_DTYPE(rnn_fwd, OUT(0), IN(0), IN(1), H, c->i[0] != 0))
/* in: grad_hy, hy; out: grad of the pre-activation; i[0]: relu */
CPU_GATES(rnn_gates_backward, 0, H, BY_DTYPE(rnn_bwd, OUT(0), IN(0), IN(1), H, c->i[0] != 0))
