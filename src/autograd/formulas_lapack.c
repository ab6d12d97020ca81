/* Backward formulas of the factorizations (include/ember/lapack.h), written
 * with Ember ops (triangular solves instead of inverses), so that they can be
 * differentiated again. Notation: A the input, G the incoming gradients, ^H
 * the conjugate transpose of the last two dims (^T for real tensors: the
 * complex formulas are the real ones with adjoints, Note [Complex gradients]
 * in autograd.h, plus the phase terms said below). Each formula is
 * the adjoint of the factorization's differential; see e.g. Seeger et al.,
 * "Auto-differentiating linear algebra" (2017), and Walter & Lehmann,
 * "Algorithmic differentiation of linear algebra functions" (2018). */
#include "autograd.h"
#include "ember/ember.h"

#define T_(t) X(em_transpose((t), -2, -1))
#define H_(t) X(em_conj_if_complex(T_(t)))
#define MM(x, y) X(em_matmul((x), (y)))
#define TRSV(A, B, upper, left, unit) X(em_linalg_solve_triangular((A), (B), (upper), (left), (unit)))
#define SCALAR(v) X(em_scalar_float(v))

/* Saved output k, with history under create_graph (released with the arena). */
#define OUTPUT(k) X(em_node_unpack_output(n, (k)))

/* ---- triangular solve: X = A^-1 B (left) or B A^-1 (right) ----------------
 * gB = A^-H G (solved the same side), gA = -gB X^H (left) or -X^H gB
 * (right), kept on A's triangle (without the diagonal when unitriangular). */
EM_BACKWARD(linalg_solve_triangular, EM_SAVE_IN(0) | EM_SAVE_OUT(0))
{
    em_arena a = {0};
    const bool upper = n->call.i[4], left = n->call.i[5], unit = n->call.i[6];
    const em_tensor *A = em_node_input(n, 0);
    em_tensor *Xo = OUTPUT(0);
    if (!A || a.failed) DONE();
    em_tensor *gB = TRSV(H_(A), G, !upper, left, unit);
    GRAD(1, gB);
    if (em_node_needs_grad(n, 0)) {
        em_tensor *gA = X(em_neg(left ? MM(gB, H_(Xo)) : MM(H_(Xo), gB)));
        GRAD(0, upper ? X(em_triu(gA, unit)) : X(em_tril(gA, -unit)));
    }
    DONE();
}

/* ---- Cholesky: A = L L^H ---------------------------------------------------
 * gA = L^-H phi L^-1 with P = tril(L^H gL) and phi = (P + tril(P, -1)^H) / 2
 * (Hermitian off the diagonal, as PyTorch's: A is). U = L^H for upper. */
EM_BACKWARD(linalg_cholesky_ex, EM_SAVE_OUT(0))
{
    em_arena a = {0};
    const bool upper = n->call.i[3];
    em_tensor *L = OUTPUT(0);
    if (a.failed) DONE();
    em_tensor *gL = G;
    if (upper) L = H_(L), gL = H_(gL);
    em_tensor *P = X(em_tril(MM(H_(L), gL), 0));
    em_tensor *phi = X(em_mul(X(em_add(P, H_(X(em_tril(P, -1))), 1)), SCALAR(0.5)));
    GRAD(0, TRSV(L, TRSV(H_(L), phi, true, true, false), false, false, false));
    DONE();
}

/* ---- LU: A = P L U, L m x k unit lower, U k x n upper, k = min(m, n) --------
 * With gL, gU the strictly lower and upper parts of G (the packed gradient):
 * square: gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H;
 * tall (L = [L1; L2], L1 k x k): gA = P [L1^-H M; gL2] U^-H with
 *   M = tril(L1^H gL1, -1) + triu(gU U^H - L2^H gL2);
 * wide (U = [U1 | U2], U1 k x k): gA = P L^-H [M U1^-H | gU2] with
 *   M = tril(L^H gL - gU2 U2^H, -1) + triu(gU1 U1^H).
 * The packed LU's square block serves as L1^H (unit upper) and U1^H (lower)
 * in the solves. */
static em_tensor *lu_tall(em_tensor *LU, em_tensor *g, int64_t m, int64_t k)
{
    em_arena a = {0};
    em_tensor *LU1 = X(em_narrow(LU, -2, 0, k)), *L2 = X(em_narrow(LU, -2, k, m - k));
    em_tensor *g1 = X(em_narrow(g, -2, 0, k)), *gL2 = X(em_narrow(g, -2, k, m - k));
    em_tensor *L1 = X(em_add(X(em_tril(LU1, -1)), X(em_eye(k, k, em_dtype_to_real((em_dtype)LU->dtype))), 1));
    em_tensor *upper = X(em_sub(MM(X(em_triu(g1, 0)), H_(X(em_triu(LU1, 0)))), MM(H_(L2), gL2), 1));
    em_tensor *M = X(em_add(X(em_tril(MM(H_(L1), X(em_tril(g1, -1))), -1)), X(em_triu(upper, 0)), 1));
    em_tensor *top = TRSV(H_(LU1), M, true, true, true);
    em_tensor *R = X(em_cat(2, (const em_tensor *[]){top, gL2}, -2));
    em_tensor *r = em_arena_result(&a, TRSV(H_(LU1), R, false, false, false));
    em_arena_end(&a);
    return r;
}

static em_tensor *lu_wide(em_tensor *LU, em_tensor *g, int64_t k, int64_t n)
{
    em_arena a = {0};
    em_tensor *LU1 = X(em_narrow(LU, -1, 0, k)), *U2 = X(em_narrow(LU, -1, k, n - k));
    em_tensor *g1 = X(em_narrow(g, -1, 0, k)), *gU2 = X(em_narrow(g, -1, k, n - k));
    em_tensor *L = X(em_add(X(em_tril(LU1, -1)), X(em_eye(k, k, em_dtype_to_real((em_dtype)LU->dtype))), 1));
    em_tensor *lower = X(em_sub(MM(H_(L), X(em_tril(g1, -1))), MM(gU2, H_(U2)), 1));
    em_tensor *M = X(em_add(X(em_tril(lower, -1)), X(em_triu(MM(X(em_triu(g1, 0)), H_(X(em_triu(LU1, 0)))), 0)), 1));
    em_tensor *R = X(em_cat(2, (const em_tensor *[]){TRSV(H_(LU1), M, false, false, false), gU2}, -1));
    em_tensor *r = em_arena_result(&a, TRSV(H_(LU1), R, true, true, true));
    em_arena_end(&a);
    return r;
}

EM_BACKWARD(linalg_lu_factor_ex, EM_SAVE_OUT(0) | EM_SAVE_OUT(1))
{
    em_arena a = {0};
    const em_geometry *in = &n->in_geom[0];
    const int64_t m = in->sizes[in->ndim - 2], nc = in->sizes[in->ndim - 1];
    em_tensor *LU = OUTPUT(0);
    const em_tensor *piv = em_node_output(n, 1);
    if (!piv || a.failed) DONE();
    em_tensor *R = X(m >= nc ? lu_tall(LU, G, m, nc) : lu_wide(LU, G, m, nc));
    em_tensor *P = X(em_lu_pivots_to_permutation(piv, m, (em_dtype)LU->dtype));
    GRAD(0, MM(P, R));
    DONE();
}

/* ---- QR: A = Q R -----------------------------------------------------------
 * m >= n: gA = (gQ + Q sym(N)) R^-H with N = gR R^H - Q^H gQ and sym(N) the
 * Hermitian matrix of N's upper triangle, with the real part of N's diagonal
 * (PyTorch's order of operations, for its rounding). m < n: A = [X | Y],
 * R = [U | V]; X's gradient is the square case's with gQ + Y gV^H, Y's is
 * Q gV. */
static em_tensor *qr_tall(const em_tensor *Q, const em_tensor *R, em_tensor *gQ, em_tensor *gR)
{
    em_arena a = {0};
    em_tensor *N = X(em_sub(MM(gR, H_(R)), MM(H_(Q), gQ), 1));
    em_tensor *sym = X(em_add(X(em_triu(N, 0)), H_(X(em_triu(N, 1))), 1));
    if (em_dtype_is_complex((em_dtype)N->dtype)) { /* the diagonal's real part: less i im(N_ii) */
        em_tensor *d = X(em_diagonal(N, 0, -2, -1));
        sym = X(em_sub(sym, X(em_diag_embed(X(em_sub(d, X(em_conj_if_complex(d)), 1)), 0, -2, -1)), 0.5));
    }
    em_tensor *b = X(em_add(MM(Q, sym), gQ, 1));
    em_tensor *r = em_arena_result(&a, TRSV(H_(R), b, false, false, false));
    em_arena_end(&a);
    return r;
}

EM_BACKWARD(linalg_qr, EM_SAVE_INPUTS | EM_SAVE_OUT(0) | EM_SAVE_OUT(1))
{
    em_arena a = {0};
    const em_geometry *in = &n->in_geom[0];
    const int64_t m = in->sizes[in->ndim - 2], ncol = in->sizes[in->ndim - 1];
    if (n->call.i[5] == EM_QR_R)
        return em_fail(EM_ERR_RUNTIME, "The derivative of linalg.qr depends on Q, which is not computed when "
                       "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                       "linalg.qr.");
    if (n->call.i[5] == EM_QR_COMPLETE && m > ncol)
        return em_fail(EM_ERR_RUNTIME, "The QR decomposition is not differentiable when mode='complete' and "
                       "nrows > ncols.");
    em_tensor *Q = OUTPUT(0), *R = OUTPUT(1);
    if (a.failed) DONE();
    if (m >= ncol) {
        GRAD(0, X(qr_tall(Q, R, go[0], go[1])));
        DONE();
    }
    const em_tensor *A = em_node_input(n, 0);
    if (!A) DONE();
    em_tensor *Y = X(em_narrow(A, -1, m, ncol - m)), *U = X(em_narrow(R, -1, 0, m));
    em_tensor *gU = X(em_narrow(go[1], -1, 0, m)), *gV = X(em_narrow(go[1], -1, m, ncol - m));
    em_tensor *gX = X(qr_tall(Q, U, X(em_add(go[0], MM(Y, H_(gV)), 1)), gU));
    em_tensor *gY = MM(Q, gV);
    GRAD(0, X(em_cat(2, (const em_tensor *[]){gX, gY}, -1)));
    DONE();
}

/* ---- SVD: A = U diag(S) V^H (k = min(m, n) columns kept) ------------------
 * With E_ij = S_j^2 - S_i^2 (1 on the diagonal) and skew(X) = X - X^H:
 * gA = U [ (skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)
 *          + i im(diag(U^H gU)) / S ] V^H
 *      + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H)
 * (the last two terms only when m > k, resp. n > k; the imaginary term only
 * for complex A, whose loss must not depend on the vectors' phases: then the
 * diagonals of the two skew terms cancel). */
static em_tensor *skew_over(em_tensor *W, em_tensor *E)
{
    em_arena a = {0};
    em_tensor *r = em_arena_result(&a, X(em_div(X(em_sub(W, H_(W), 1)), E)));
    em_arena_end(&a);
    return r;
}

/* (gU - U (U^T gU)) S^-1: the part of gU off U's span, over S (by columns). */
static em_tensor *off_span(em_tensor *U, em_tensor *gU, em_tensor *UgU, em_tensor *Srow)
{
    em_arena a = {0};
    em_tensor *r = em_arena_result(&a, X(em_div(X(em_sub(gU, MM(U, UgU), 1)), Srow)));
    em_arena_end(&a);
    return r;
}

/* The bracket of the formula above, k x k. */
static em_tensor *svd_inner(em_tensor *S, em_tensor *gS, em_tensor *UgU, em_tensor *VgV)
{
    em_arena a = {0};
    const int64_t k = S->sizes[S->ndim - 1];
    em_tensor *S2 = X(em_mul(S, S)), *Srow = X(em_unsqueeze(S, -2)), *Scol = X(em_unsqueeze(S, -1));
    em_tensor *E = X(em_sub(X(em_unsqueeze(S2, -2)), X(em_unsqueeze(S2, -1)), 1));
    E = X(em_add(E, X(em_eye(k, k, (em_dtype)S->dtype)), 1));
    em_tensor *inner = X(em_add(X(em_mul(X(skew_over(UgU, E)), Srow)), X(em_mul(Scol, X(skew_over(VgV, E)))), 1));
    inner = X(em_add(inner, X(em_diag_embed(gS, 0, -2, -1)), 1));
    if (em_dtype_is_complex((em_dtype)UgU->dtype)) { /* i im(d) = (d - conj(d)) / 2 */
        em_tensor *d = X(em_diagonal(UgU, 0, -2, -1));
        em_tensor *im = X(em_div(X(em_sub(d, X(em_conj_if_complex(d)), 1)), X(em_mul(S, SCALAR(2)))));
        inner = X(em_add(inner, X(em_diag_embed(im, 0, -2, -1)), 1));
    }
    em_tensor *r = em_arena_result(&a, inner);
    em_arena_end(&a);
    return r;
}

/* PyTorch's check that a complex loss does not depend on the phases of the
 * singular or eigen vectors (each defined up to a factor e^{i phi}): the
 * imaginary part of W's diagonal is about 0, W = U^H gU + V^H gV (svd: W2 =
 * V^H gV) or Q^H gQ (eigh: W2 NULL). Real W: nothing to check. */
static bool phases_ignored(const em_tensor *W, const em_tensor *W2)
{
    if (!em_dtype_is_complex((em_dtype)W->dtype)) return true;
    em_arena a = {0};
    em_tensor *d = X(em_contiguous(X(em_diagonal(W2 ? X(em_add(W, W2, 1)) : W, 0, -2, -1))));
    em_tensor *im = X(em_abs(X(em_select(X(em_view_as_real(d)), -1, 1))));
    double most = 0;
    const bool ok = a.failed || em_numel(im) == 0 || (!em_item(X(em_max(im)), &most) && most <= 1e-2);
    em_arena_end(&a);
    return ok;
}

/* A missing gradient of output k (EM_KEEP_MISSING_GRADS): zeros like it. */
#define GO_OR_ZEROS(k, like) (go[k] ? go[k] : X(em_zeros_like((like), (em_dtype)(like)->dtype)))

EM_BACKWARD(linalg_svd, EM_SAVE_OUT(0) | EM_SAVE_OUT(1) | EM_SAVE_OUT(2) | EM_KEEP_MISSING_GRADS)
{
    em_arena a = {0};
    if (!n->call.i[4])
        return em_fail(EM_ERR_RUNTIME, "linalg.svd: the gradient needs the singular vectors: call it with "
                       "compute_uv=True");
    const em_geometry *in = &n->in_geom[0];
    const int64_t m = in->sizes[in->ndim - 2], nc = in->sizes[in->ndim - 1], k = m < nc ? m : nc;
    em_tensor *U = X(em_narrow(OUTPUT(0), -1, 0, k)), *S = OUTPUT(1), *Vh = X(em_narrow(OUTPUT(2), -2, 0, k));
    if (a.failed) DONE();
    em_tensor *gS = GO_OR_ZEROS(1, S);
    if (!go[0] && !go[2]) { /* the values alone: U diag(gS) V^T, also at repeated values (as PyTorch) */
        GRAD(0, MM(X(em_mul(U, X(em_unsqueeze(gS, -2)))), Vh));
        DONE();
    }
    em_tensor *gU = X(em_narrow(GO_OR_ZEROS(0, OUTPUT(0)), -1, 0, k));
    em_tensor *gV = H_(X(em_narrow(GO_OR_ZEROS(2, OUTPUT(2)), -2, 0, k)));
    if (a.failed) DONE();
    em_tensor *V = H_(Vh), *UgU = MM(H_(U), gU), *VgV = MM(Vh, gV), *Srow = X(em_unsqueeze(S, -2));
    if (!a.failed && !phases_ignored(UgU, VgV)) {
        em_arena_end(&a);
        return em_fail(EM_ERR_RUNTIME, "svd_backward: The singular vectors in the complex case are specified up to "
                       "multiplication by e^{i phi}. The specified loss function depends on this phase term, making "
                       "it ill-defined.");
    }
    em_tensor *gA = MM(MM(U, X(svd_inner(S, gS, UgU, VgV))), Vh);
    if (m > k) gA = X(em_add(gA, MM(X(off_span(U, gU, UgU, Srow)), Vh), 1));
    if (nc > k) gA = X(em_add(gA, MM(U, H_(X(off_span(V, gV, VgV, Srow)))), 1));
    GRAD(0, gA);
    DONE();
}

/* ---- eigh: A = Q diag(L) Q^H -----------------------------------------------
 * gA = Q (diag(gL) + (Q^H gQ) / E) Q^H with E_ij = L_j - L_i (off the
 * diagonal; the diagonal of the quotient is dropped), made Hermitian as
 * PyTorch's (A is). */
EM_BACKWARD(linalg_eigh, EM_SAVE_OUT(0) | EM_SAVE_OUT(1) | EM_KEEP_MISSING_GRADS)
{
    em_arena a = {0};
    if (!n->call.i[4])
        return em_fail(EM_ERR_RUNTIME, "linalg.eigh: the gradient needs the eigenvectors: call it with "
                       "compute_v=True (linalg.eigh rather than linalg.eigvalsh)");
    em_tensor *L = OUTPUT(0), *Q = OUTPUT(1);
    if (a.failed) DONE();
    em_tensor *gL = GO_OR_ZEROS(0, L);
    if (!go[1]) { /* the values alone: Q diag(gL) Q^T, also at repeated values (as PyTorch) */
        GRAD(0, MM(X(em_mul(Q, X(em_unsqueeze(gL, -2)))), H_(Q)));
        DONE();
    }
    const int64_t k = L->sizes[L->ndim - 1];
    em_tensor *eye = X(em_eye(k, k, (em_dtype)L->dtype));
    em_tensor *E = X(em_add(X(em_sub(X(em_unsqueeze(L, -2)), X(em_unsqueeze(L, -1)), 1)), eye, 1));
    em_tensor *QgQ = MM(H_(Q), go[1]);
    if (!a.failed && !phases_ignored(QgQ, NULL)) {
        em_arena_end(&a);
        return em_fail(EM_ERR_RUNTIME, "linalg_eigh_backward: The eigenvectors in the complex case are specified up "
                       "to multiplication by e^{i phi}. The specified loss function depends on this quantity, so it "
                       "is ill-defined.");
    }
    em_tensor *W = X(em_div(QgQ, E));
    W = X(em_sub(W, X(em_mul(W, eye)), 1));
    W = X(em_add(W, X(em_diag_embed(gL, 0, -2, -1)), 1));
    em_tensor *gA = MM(MM(Q, W), H_(Q));
    GRAD(0, X(em_mul(X(em_add(gA, H_(gA), 1)), SCALAR(0.5))));
    DONE();
}
