/* The per-precision pass loop of src/cpu/fft.c, included once per precision
 * with T the real type, CT the complex one, CONJ its conjugate, CT_REAL its
 * real part and SFX the suffix of line_SFX. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* Lines [begin, end) of the pass ctx (a struct pass). Lines next to each
 * other in memory (consecutive indices of the dims after the transformed
 * one) are gathered and scattered LINE_BLOCK at a time, so that a pass over
 * a leading dim reads and writes whole runs of memory rather than one
 * element per row. */
static void FN(pass_chunk)(void *ctx, int64_t begin, int64_t end)
{
    pass *ps = ctx;
    const int64_t n = ps->p->n, inner = ps->inner, lin = ps->len_in, lout = ps->len_out;
    const int64_t width = inner < LINE_BLOCK ? inner : LINE_BLOCK;
    CT *buf = malloc(2 * (size_t)(width * n) * sizeof *buf + ps->p->scratch);
    if (!buf) {
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
        if (ps->kind == PASS_R2C) {
            const T *s = (const T *)ps->src + si;
            for (int64_t k = 0; k < n; k++)
                for (int64_t b = 0; b < w; b++) buf[b * n + k] = s[k * inner + b];
        } else {
            const CT *s = (const CT *)ps->src + si;
            for (int64_t k = 0; k < lin; k++)
                for (int64_t b = 0; b < w; b++) buf[b * n + k] = s[k * inner + b];
            for (int64_t b = 0; b < w; b++) /* c2r: the mirrored half */
                for (int64_t k = lin; k < n; k++) buf[b * n + k] = CONJ(buf[b * n + n - k]);
        }
        for (int64_t b = 0; b < w; b++) FN(line)(ps->p, res + b * n, buf + b * n, scratch);
        if (ps->kind == PASS_C2R) {
            T *d = (T *)ps->dst + di;
            for (int64_t k = 0; k < n; k++)
                for (int64_t b = 0; b < w; b++) d[k * inner + b] = CT_REAL(res[b * n + k]) * scale;
        } else {
            CT *d = (CT *)ps->dst + di;
            for (int64_t k = 0; k < lout; k++)
                for (int64_t b = 0; b < w; b++) d[k * inner + b] = res[b * n + k] * scale;
        }
        l += w;
    }
    free(buf);
}

#undef FN
#undef CAT
#undef CAT_
