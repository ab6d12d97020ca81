/* The per-precision pass loop of src/cpu/fft.c, included once per precision
 * with T the real type, CT the complex one, CONJ its conjugate and SFX the
 * suffix of line_SFX. */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* Lines [begin, end) of the pass ctx (a struct pass). */
static void FN(pass_chunk)(void *ctx, int64_t begin, int64_t end)
{
    pass *ps = ctx;
    const int64_t n = ps->p->n, inner = ps->inner, lin = ps->len_in, lout = ps->len_out;
    CT *buf = malloc(3 * (size_t)n * sizeof *buf);
    if (!buf) {
        __atomic_store_n(&ps->failed, true, __ATOMIC_RELAXED);
        return;
    }
    CT *res = buf + n, *scratch = res + n;
    const T scale = (T)ps->scale;
    for (int64_t l = begin; l < end; l++) {
        const int64_t si = l / inner * lin * inner + l % inner, di = l / inner * lout * inner + l % inner;
        if (ps->kind == PASS_R2C) {
            const T *s = (const T *)ps->src + si;
            for (int64_t k = 0; k < n; k++) buf[k] = s[k * inner];
        } else {
            const CT *s = (const CT *)ps->src + si;
            for (int64_t k = 0; k < lin; k++) buf[k] = s[k * inner];
            for (int64_t k = lin; k < n; k++) buf[k] = CONJ(buf[n - k]); /* c2r: the mirrored half */
        }
        FN(line)(ps->p, res, buf, scratch);
        if (ps->kind == PASS_C2R) {
            T *d = (T *)ps->dst + di;
            for (int64_t k = 0; k < n; k++) d[k * inner] = CT_REAL(res[k]) * scale;
        } else {
            CT *d = (CT *)ps->dst + di;
            for (int64_t k = 0; k < lout; k++) d[k * inner] = res[k] * scale;
        }
    }
    free(buf);
}

#undef FN
#undef CAT
#undef CAT_
