/* The per-dtype body of the general eigendecomposition (lapack_eig.c
 * includes it with T, SFX, GEEV and FINITE set, and PARTS: 2 for a real T,
 * whose complex results are (re, im) pairs of T; 1 for a complex T). */
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* Eigenvalues w (n complex: (re, im) pairs) and, when v is not NULL, the
 * right eigenvectors as the columns of v (n x n complex, row-major) of the
 * row-major a (n x n). `work` holds 2 n^2 + 2 n. Returns LAPACK's info; -1
 * for a non-finite input, which LAPACK would loop on. */
static int FN(eig)(T *w, T *v, const T *a, int64_t n, T *work)
{
    for (int64_t i = 0; i < n * n; i++)
        if (!FINITE(a[i])) return -1;
#if PARTS == 1 /* complex: geev's results are the eigenvalues and vectors */
    memcpy(work, a, n * n * sizeof(T));
    return GEEV(LAPACK_ROW_MAJOR, 'N', v ? 'V' : 'N', (int)n, work, (int)n, w, NULL, 1, v, v ? (int)n : 1);
#else
    T *acopy = work, *vr = work + n * n, *wr = vr + n * n, *wi = wr + n;
    memcpy(acopy, a, n * n * sizeof(T));
    int info = GEEV(LAPACK_ROW_MAJOR, 'N', v ? 'V' : 'N', (int)n, acopy, (int)n, wr, wi, NULL, 1, vr, (int)n);
    if (info) return info;
    for (int64_t j = 0; j < n; j++) w[2 * j] = wr[j], w[2 * j + 1] = wi[j];
    if (!v) return 0;
    /* a complex pair j, j + 1 (wi[j] > 0) has vectors vr[:, j] +- i vr[:, j + 1] */
    for (int64_t j = 0; j < n; j++) {
        const bool pair = wi[j] != 0 && j + 1 < n;
        for (int64_t r = 0; r < n; r++) {
            T *e = v + 2 * (r * n + j);
            e[0] = vr[r * n + j];
            e[1] = pair ? vr[r * n + j + 1] : 0;
            if (pair) e[2] = e[0], e[3] = -e[1];
        }
        j += pair;
    }
    return 0;
#endif
}

/* in[0] = A, out = {w (batch, n[, 2]), v (batch, n, n[, 2]) or unused, info};
 * i[3]: compute_v */
static em_status FN(run_eig)(const em_call *c, T *work)
{
    const int64_t n = c->i[2];
    const T *a = (const T *)em_tensor_data(c->in[0]);
    T *w = (T *)em_tensor_data(c->out[0]), *v = c->i[3] ? (T *)em_tensor_data(c->out[1]) : NULL;
    int32_t *info = (int32_t *)em_tensor_data(c->out[2]);
    for (int64_t b = 0; b < c->i[0]; b++)
        info[b] = FN(eig)(w + PARTS * b * n, v ? v + PARTS * b * n * n : NULL, a + b * n * n, n, work);
    return EM_OK;
}

#undef FN
#undef CAT
#undef CAT_
