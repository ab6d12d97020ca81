/* The per-precision pass loop of src/cpu/fft.c, included once per precision
 * with T the real type, CT the complex one, CONJ its conjugate, CT_REAL its
 * real part and SFX the suffix of line_SFX. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* Even-length r2c (Note [Real transforms of even length]): x holds the h
 * transformed pairs Z on entry and the spectrum X (len entries) on return;
 * tmp holds h. */
static void FN(r2c_unpack)(CT *x, CT *tmp, const cf64 *rtw, int64_t n, int64_t len)
{
    const int64_t h = n / 2;
    for (int64_t k = 0; k < h; k++) tmp[k] = x[k];
    for (int64_t k = 0; k <= h; k++) {
        const CT zk = tmp[k % h], zc = CONJ(tmp[(h - k) % h]);
        const CT e = (zk + zc) * (T)0.5, o = (zk - zc) * (CT)(-0.5 * I);
        x[k] = e + (CT)rtw[k] * o;
    }
    for (int64_t k = h + 1; k < len; k++) x[k] = CONJ(x[n - k]); /* the full spectrum (onesided=False) */
}

/* Even-length c2r: z (h) from the half spectrum x (h + 1; the imaginary
 * parts of x[0] and x[h] are ignored, as the symmetry fixes them). */
static void FN(c2r_pack)(CT *z, const CT *x, const cf64 *rtw, int64_t n)
{
    const int64_t h = n / 2;
    for (int64_t k = 0; k < h; k++) {
        const CT xk = k ? x[k] : CT_REAL(x[0]), xc = k ? CONJ(x[h - k]) : CT_REAL(x[h]);
        z[k] = (xk + xc) + (CT)I * CONJ((CT)rtw[k]) * (xk - xc);
    }
}

/* Lines [begin, end) of the pass ctx (a struct pass). Lines next to each
 * other in memory (consecutive indices of the dims after the transformed
 * one) are gathered and scattered LINE_BLOCK at a time, so that a pass over
 * a leading dim reads and writes whole runs of memory rather than one
 * element per row. */
static void FN(pass_chunk)(void *ctx, int64_t begin, int64_t end)
{
    pass *ps = ctx;
    plan own = *ps->p; /* the chunk's own copy of a kissfft<double> plan (fft_kiss64.h) */
    const plan *p = &own;
    const int64_t n = ps->n, inner = ps->inner, lin = ps->len_in, lout = ps->len_out;
    const int64_t width = inner < LINE_BLOCK ? inner : LINE_BLOCK;
    const bool half = ps->rtw != NULL;
    CT *buf = malloc(2 * (size_t)(width * n) * sizeof *buf + p->scratch);
    if (own.kiss64) own.kiss64 = kiss64_copy(own.kiss64);
    if (!buf || (ps->p->kiss64 && !own.kiss64)) {
        free(buf);
        kiss64_free(own.kiss64);
        __atomic_store_n(&ps->failed, true, __ATOMIC_RELAXED);
        return;
    }
    CT *res = buf + width * n;
    void *scratch = res + width * n;
    const T scale = (T)ps->scale;
    for (int64_t l = begin; l < end;) {
        const int64_t o = l / inner, i = l % inner;
        int64_t w = inner - i < width ? inner - i : width;
        if (end - l < w) w = end - l;
        const int64_t si = o * lin * inner + i, di = o * lout * inner + i;
        /* gather: line b into buf + b n (an even-length real line as its pairs) */
        if (ps->kind == PASS_R2C) {
            const T *s = (const T *)ps->src + si;
            for (int64_t k = 0; k < n; k++)
                for (int64_t b = 0; b < w; b++) {
                    if (half) ((T *)(buf + b * n))[k] = s[k * inner + b];
                    else buf[b * n + k] = s[k * inner + b];
                }
        } else {
            const CT *s = (const CT *)ps->src + si;
            for (int64_t k = 0; k < lin; k++)
                for (int64_t b = 0; b < w; b++) buf[b * n + k] = s[k * inner + b];
            for (int64_t b = 0; !half && b < w; b++) /* c2r: the mirrored half */
                for (int64_t k = lin; k < n; k++) buf[b * n + k] = CONJ(buf[b * n + n - k]);
        }
        /* transform: the result in `out` */
        CT *out = res;
        for (int64_t b = 0; b < w; b++) {
            CT *x = buf + b * n, *y = res + b * n;
            if (half && ps->kind == PASS_R2C) {
                FN(line)(p, y, x, scratch);
                FN(r2c_unpack)(y, x, ps->rtw, n, lout);
            } else if (half) {
                FN(c2r_pack)(y, x, ps->rtw, n);
                FN(line)(p, x, y, scratch);
                out = buf;
            } else {
                FN(line)(p, y, x, scratch);
            }
        }
        if (ps->kind == PASS_C2R) {
            T *d = (T *)ps->dst + di;
            for (int64_t k = 0; k < n; k++)
                for (int64_t b = 0; b < w; b++)
                    d[k * inner + b] = (half ? ((const T *)(out + b * n))[k] : CT_REAL(out[b * n + k])) * scale;
        } else {
            CT *d = (CT *)ps->dst + di;
            for (int64_t k = 0; k < lout; k++)
                for (int64_t b = 0; b < w; b++) d[k * inner + b] = out[b * n + k] * scale;
        }
        l += w;
    }
    free(buf);
    kiss64_free(own.kiss64);
}

#undef FN
#undef CAT
#undef CAT_
