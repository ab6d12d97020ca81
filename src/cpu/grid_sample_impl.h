/* Per-dtype template of the grid_sample kernels, included by grid_sample.c once per dtype with
 * T and SFX defined (<tgmath.h> picks floor/fmod/nearbyint of T). Defines FN(grid_forward) and
 * FN(grid_backward). Tensors are contiguous: input (N, C, D, H, W), grid (N, P, nd) with P the
 * output's spatial size, output (N, C, P); a 2-D sample is a 3-D one with D = 1 and no z.
 * Grid coordinate j (x, y, z) indexes input dim W, H, D: sizes sz[j], strides st[j]. */
#define GS_CAT2(a, b) a##_##b
#define GS_CAT(a, b) GS_CAT2(a, b)
#define FN(name) GS_CAT(name, SFX)

/* Clamp to [0, size - 1]; *d: the derivative (0 at and beyond the borders, as PyTorch). */
static inline T FN(clip)(T x, int64_t size, T *d)
{
    T hi = (T)(size - 1);
    if (x <= 0) return *d = 0, (T)0;
    if (x >= hi) return *d = 0, hi;
    return *d = 1, x;
}

/* Reflect x into [twice_low / 2, twice_high / 2] by mirroring at the ends; *d: +-1. */
static inline T FN(reflect)(T x, T twice_low, T twice_high, T *d)
{
    if (twice_low == twice_high) return *d = 0, (T)0;
    T lo = twice_low / 2, span = (twice_high - twice_low) / 2, sign = 1;
    x -= lo;
    if (x < 0) x = -x, sign = -1;
    T extra = fmod(x, span), flips = floor(x / span); /* stays a float: x may be huge or not finite */
    if (fmod(flips, (T)2) == 0) return *d = sign, extra + lo;
    return *d = -sign, span - extra + lo;
}

/* A pixel coordinate mapped by the padding mode, and *d its derivative. Values that cannot be
 * an index (non-finite, beyond int range) become -100, which every bounds check rejects. */
static inline T FN(pad_coord)(T x, int64_t size, int pad, bool align, T *d)
{
    T d1 = 1, d2 = 1;
    if (pad == EM_GRID_BORDER) {
        x = FN(clip)(x, size, &d1);
    } else if (pad == EM_GRID_REFLECTION) {
        x = align ? FN(reflect)(x, 0, (T)(2 * (size - 1)), &d1) : FN(reflect)(x, -1, (T)(2 * size - 1), &d1);
        x = FN(clip)(x, size, &d2);
    }
    *d = d1 * d2;
    if (!isfinite(x) || x > (T)(INT32_MAX - 1) || x < (T)INT32_MIN) x = -100;
    return x;
}

/* Grid value g in [-1, 1] to a pixel coordinate of a dim of `size`; *d: d coord / d g. */
static inline T FN(unnormalize)(T g, int64_t size, bool align, T *d)
{
    if (align) return *d = (T)(size - 1) / 2, (g + 1) / 2 * (T)(size - 1);
    return *d = (T)size / 2, ((g + 1) * (T)size - 1) / 2;
}

/* Cubic convolution weights (A = -0.75) of the 4 taps around t in [0, 1), and their d/dt. */
static inline void FN(cubic)(T t, T *w, T *dw)
{
    const T A = (T)-0.75;
    T s = t + 1, u = 1 - t, v = 2 - t;
    w[0] = ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * u - (A + 3)) * u * u + 1;
    w[3] = ((A * v - 5 * A) * v + 8 * A) * v - 4 * A;
    dw[0] = (3 * A * s - 10 * A) * s + 8 * A;
    dw[1] = (3 * (A + 2) * t - 2 * (A + 3)) * t;
    dw[2] = -(3 * (A + 2) * u - 2 * (A + 3)) * u;
    dw[3] = -((3 * A * v - 10 * A) * v + 8 * A);
}

/* The taps of one output point: input offsets (-1: outside, reads 0), weights, and the weights'
 * derivatives along each grid coordinate (already times d coord / d grid). */
typedef struct FN(taps) {
    int n;
    int64_t off[16];
    T w[16], dw[16][3];
} FN(taps);

static void FN(linear_taps)(const T *x, const T *dx, const int64_t *sz, const int64_t *st, int nd, FN(taps) *tp)
{
    int64_t lo[3];
    T whi[3], wlo[3];
    for (int j = 0; j < nd; j++) {
        T f = floor(x[j]);
        lo[j] = (int64_t)f;
        whi[j] = x[j] - f, wlo[j] = f + 1 - x[j];
    }
    tp->n = 1 << nd;
    for (int c = 0; c < tp->n; c++) {
        int64_t off = 0;
        bool in = true;
        T w = 1;
        for (int j = 0; j < nd; j++) {
            int b = c >> j & 1;
            int64_t i = lo[j] + b;
            in &= i >= 0 && i < sz[j];
            off += i * st[j];
            w *= b ? whi[j] : wlo[j];
        }
        tp->off[c] = in ? off : -1;
        tp->w[c] = w;
        for (int j = 0; j < nd; j++) {
            T p = c >> j & 1 ? dx[j] : -dx[j];
            for (int k = 0; k < nd; k++)
                if (k != j) p *= c >> k & 1 ? whi[k] : wlo[k];
            tp->dw[c][j] = p;
        }
    }
}

static void FN(nearest_taps)(const T *x, const int64_t *sz, const int64_t *st, int nd, FN(taps) *tp)
{
    int64_t off = 0;
    bool in = true;
    for (int j = 0; j < nd; j++) {
        int64_t i = (int64_t)nearbyint(x[j]); /* half to even, as PyTorch */
        in &= i >= 0 && i < sz[j];
        off += i * st[j];
    }
    tp->n = 1;
    tp->off[0] = in ? off : -1;
    tp->w[0] = 1;
    memset(tp->dw[0], 0, sizeof tp->dw[0]);
}

/* 2-D only: the 4 x 4 taps around x (unnormalized, unpadded); each tap's integer coordinate
 * goes through the padding mode (its derivative is 0: the taps sit at integers). A tap's weight
 * is the product of its x and y weights. */
static void FN(cubic_taps)(const T *x, const T *dx, const int64_t *sz, const int64_t *st, int pad, bool align,
                           FN(taps) *tp)
{
    int64_t idx[2][4];
    T w[2][4], dw[2][4], unused;
    for (int j = 0; j < 2; j++) {
        T f = floor(x[j]);
        FN(cubic)(x[j] - f, w[j], dw[j]);
        for (int a = 0; a < 4; a++) {
            T p = FN(pad_coord)(f - 1 + (T)a, sz[j], pad, align, &unused);
            int64_t i = (int64_t)p;
            idx[j][a] = i >= 0 && i < sz[j] ? i : -1;
        }
    }
    tp->n = 16;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int c = 4 * a + b;
            tp->off[c] = idx[0][b] < 0 || idx[1][a] < 0 ? -1 : idx[1][a] * st[1] + idx[0][b] * st[0];
            tp->w[c] = w[0][b] * w[1][a];
            tp->dw[c][0] = dw[0][b] * w[1][a] * dx[0];
            tp->dw[c][1] = w[0][b] * dw[1][a] * dx[1];
        }
}

static void FN(point_taps)(const T *g, const int64_t *sz, const int64_t *st, int nd, int mode, int pad, bool align,
                           FN(taps) *tp)
{
    T x[3], dx[3];
    for (int j = 0; j < nd; j++) {
        T du, dp;
        x[j] = FN(unnormalize)(g[j], sz[j], align, &du);
        if (mode == EM_GRID_BICUBIC) {
            dx[j] = du;
        } else {
            x[j] = FN(pad_coord)(x[j], sz[j], pad, align, &dp);
            dx[j] = du * dp;
        }
    }
    if (mode == EM_GRID_NEAREST)
        FN(nearest_taps)(x, sz, st, nd, tp);
    else if (mode == EM_GRID_BICUBIC)
        FN(cubic_taps)(x, dx, sz, st, pad, align, tp);
    else
        FN(linear_taps)(x, dx, sz, st, nd, tp);
}

/* Output points [begin, end) of the N * P (a range function of the pool; ctx: a gs_geom). */
static void FN(grid_forward)(void *ctx, int64_t begin, int64_t end)
{
    const gs_geom *q = ctx;
    const T *in = q->input, *grid = q->grid;
    T *out = q->out0;
    int64_t C = q->C, P = q->P, plane = q->plane;
    for (int64_t np = begin; np < end; np++) {
        int64_t n = np / P, p = np % P;
        FN(taps) tp;
        FN(point_taps)(grid + np * q->nd, q->sz, q->st, q->nd, q->mode, q->pad, q->align, &tp);
        const T *x = in + n * C * plane;
        T *y = out + n * C * P + p;
        for (int64_t ch = 0; ch < C; ch++, x += plane) {
            T acc = 0;
            for (int c = 0; c < tp.n; c++)
                if (tp.off[c] >= 0) acc += tp.w[c] * x[tp.off[c]];
            y[ch * P] = acc;
        }
    }
}

/* Batch elements [begin, end). grad_input accumulates scattered adds: each batch element has its
 * own slice, so chunks split the batch (never the channels: every channel adds into the same
 * grid gradient). */
static void FN(grid_backward)(void *ctx, int64_t begin, int64_t end)
{
    const gs_geom *q = ctx;
    const T *in = q->input, *grid = q->grid, *gout = q->grad;
    T *gin = q->out0, *ggrid = q->out1;
    int64_t C = q->C, P = q->P, plane = q->plane;
    int nd = q->nd;
    for (int64_t n = begin; n < end; n++) {
        T *gx = gin + n * C * plane;
        memset(gx, 0, (size_t)(C * plane) * sizeof(T));
        for (int64_t p = 0; p < P; p++) {
            FN(taps) tp;
            int64_t np = n * P + p;
            FN(point_taps)(grid + np * nd, q->sz, q->st, nd, q->mode, q->pad, q->align, &tp);
            T gg[3] = {0, 0, 0};
            const T *x = in + n * C * plane, *gy = gout + n * C * P + p;
            for (int64_t ch = 0; ch < C; ch++) {
                T go = gy[ch * P];
                const T *xc = x + ch * plane;
                T *gc = gx + ch * plane;
                for (int c = 0; c < tp.n; c++) {
                    int64_t o = tp.off[c];
                    if (o < 0) continue;
                    gc[o] += tp.w[c] * go;
                    T v = xc[o] * go;
                    for (int j = 0; j < nd; j++) gg[j] += v * tp.dw[c][j];
                }
            }
            for (int j = 0; j < nd; j++) ggrid[np * nd + j] = gg[j];
        }
    }
}

#undef FN
#undef GS_CAT
#undef GS_CAT2
