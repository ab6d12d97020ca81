"""PyTorch 1.13's gradients of linalg.solve, linalg.inv, linalg.det, linalg.pinv and linalg.lstsq, which are not those of
the factorizations they are computed with: autograd Functions around their values (ember._lapack)
with the function's own differential, finite where the factorization's is not (singular
matrices, repeated or zero singular values). Written with Ember ops, so twice differentiable.
Complex inputs get PyTorch's conjugate Wirtinger gradients: the real formulas with each transpose
an adjoint (^H) and each factor that multiplies the gradient conjugated."""
from . import _C
from .autograd.function import Function


def _mH(x):
    return x.transpose(-2, -1).conj()


def pinv_backward(G, P, A):
    """The gradient of A for P = pinv(A) and P's gradient G. Where A's rank is locally constant
    (Golub and Pereyra, 1973): dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P, whose
    adjoint is gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A) (^H for complex)."""
    Gt, Pt = _mH(G), _mH(P)
    Y = _C.matmul(Gt, _C.matmul(P, Pt))  # G^H P P^H (m x n)
    Z = _C.matmul(_C.matmul(Pt, P), Gt)  # P^H P G^H (m x n)
    return Y - _C.matmul(A, _C.matmul(P, Y)) + Z - _C.matmul(_C.matmul(Z, P), A) - _C.matmul(Pt, _C.matmul(G, Pt))


class Pinv(Function):
    """P = value(A), differentiated as the pseudo-inverse."""
    @staticmethod
    def forward(ctx, A, value):
        P = value(A)
        ctx.save_for_backward(A, P)
        return P

    @staticmethod
    def backward(ctx, G):
        A, P = ctx.saved_tensors
        return pinv_backward(G, P, A), None


class LstsqSolution(Function):
    """X, LAPACK's least-squares solution of A X = B, differentiated as pinv(A) B (PyTorch's
    gradient: `pinv` is the differentiable pseudo-inverse)."""
    @staticmethod
    def forward(ctx, A, B, X, pinv):
        ctx.save_for_backward(A, B)
        ctx.pinv = pinv
        return X.clone()

    @staticmethod
    def backward(ctx, gX):
        A, B = ctx.saved_tensors
        P = ctx.pinv(A)
        gA = pinv_backward(_C.matmul(gX, _mH(B)), P, A) if ctx.needs_input_grad[0] else None
        gB = _C.matmul(_mH(P), gX) if ctx.needs_input_grad[1] else None
        return gA, gB, None, None


class Det(Function):
    """det A = value(A)[0] (value gives its LU too), differentiated as PyTorch: g conj(det) A^-H
    solved with that LU, whose exact zeros on U's diagonal become eps (finite at singular A);
    under create_graph g times A's cofactors (from the SVD where A is near singular)."""
    @staticmethod
    def forward(ctx, A, value):
        det, LU, piv, ctx.transposed = value(A)
        ctx.save_for_backward(A, det, LU, piv)
        return det

    @staticmethod
    def backward(ctx, g):
        from . import _lapack as L
        A, det, LU, piv = ctx.saved_tensors
        n = A.shape[-1]
        d = _C.diag_embed((g * det.conj()).unsqueeze(-1).expand(*det.shape, n))
        eps = L._eps(A.dtype)
        if _C.is_grad_enabled():
            if bool((det.abs() < 100 * eps).any()):
                return g[..., None, None] * _cofactors(A), None
            return L.solve(_mH(A), d), None
        diag = LU.diagonal(0, -2, -1)
        LU = LU + _C.diag_embed(_C.where(diag == 0, _C.full_like(diag, eps), _C.zeros_like(diag)))
        return L._lu_solve_as(LU, piv, d, True, ctx.transposed, adjoint=True), None


def _cofactors(A):
    """The conjugate of the matrix of cofactors of A (conj(det A A^-T) where A is invertible; det's
    gradient per unit g), from A = U diag(S) Vh: conj(det(U Vh)) U diag(prod of the other S) Vh,
    finite and differentiable at singular A."""
    from . import _lapack as L
    U, S, Vh = L.svd(A)
    alpha = (L.det(U.detach()) * L.det(Vh.detach())).conj()  # of modulus 1
    one = _C.ones_like(S[..., :1])
    before = _C.cat([one, S[..., :-1]], -1).cumprod(-1)
    after = _C.cat([S[..., 1:], one], -1).flip(-1).cumprod(-1).flip(-1)
    return _C.matmul(U * (alpha.unsqueeze(-1) * before * after).unsqueeze(-2).to(A.dtype), Vh)


class Solve(Function):
    """X = A^-1 B (left) or B A^-1, computed outside from A's LU (of A^T when transposed),
    differentiated as PyTorch: gB = A^-H gX solved with that LU (under create_graph: solve(A^H)),
    gA = -gB X^H (left) or -X^H gB."""
    @staticmethod
    def forward(ctx, A, B, X, LU, piv, left, transposed):
        ctx.left, ctx.transposed = left, transposed
        X = X.clone()
        ctx.save_for_backward(A, LU, piv, X)
        return X

    @staticmethod
    def backward(ctx, gX):
        from . import _lapack as L
        A, LU, piv, X = ctx.saved_tensors
        left = ctx.left
        if _C.is_grad_enabled():
            gB = L.solve(_mH(A), gX, left=left)
        else:
            gB = L._lu_solve_as(LU, piv, gX, left, ctx.transposed, adjoint=True)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -_C.matmul(gB, _mH(X)) if left else -_C.matmul(_mH(X), gB)
        return gA, gB, None, None, None, None, None


class Inverse(Function):
    """X = A^-1, computed outside; PyTorch's gradient gA = -X^H gX X^H."""
    @staticmethod
    def forward(ctx, A, X):
        X = X.clone()
        ctx.save_for_backward(X)
        return X

    @staticmethod
    def backward(ctx, gX):
        X, = ctx.saved_tensors
        Xt = _mH(X)
        return -_C.matmul(Xt, _C.matmul(gX, Xt)), None


class Eig(Function):
    """(L, V) = eig(A), computed outside by geev, differentiated as PyTorch 1.13: with E_ij =
    conj(L_j - L_i) (1 on the diagonal), gA = V^-H (diag(gL) + off-diagonal of
    (V^H gV - V^H V diag(re(V^H gV))) / E) V^H, its real part for a real A. The loss must not
    depend on each eigenvector's phase (its |V|, say): V is defined up to it."""
    @staticmethod
    def forward(ctx, A, L, V):
        ctx.real_input = not A.is_complex()
        L, V = L.clone(), V.clone()
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        from . import _lapack as lapack
        L, V = ctx.saved_tensors
        Vh = V.mH
        if gV is None:
            gA = gL.unsqueeze(-1) * Vh
        else:
            VhgV = _C.matmul(Vh, gV)
            if VhgV.numel() and bool(VhgV.diagonal(0, -2, -1).imag.abs().amax() > 1e-2):
                raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                                   "multiplication by e^{i phi}. The specified loss function depends on this "
                                   "quantity, so it is ill-defined.")
            gA = VhgV - _C.matmul(Vh, V * VhgV.real.diagonal(0, -2, -1).unsqueeze(-2))
            Lc = L.conj()
            eye = _C.eye(L.shape[-1], dtype=L.real.dtype)
            E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1) + eye  # 1 on the diagonal (its difference is 0)
            gA = gA / E * (1 - eye)
            if gL is not None:
                gA = gA + gL.unsqueeze(-1) * eye
            gA = _C.matmul(gA, Vh)
        gA = lapack.solve(Vh, gA)
        return (gA.real if ctx.real_input else gA), None, None
