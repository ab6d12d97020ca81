"""PyTorch 1.13's gradients of linalg.pinv and linalg.lstsq, which are not those of the SVD
they are computed with: autograd Functions around their values (ember._lapack) with the
pseudo-inverse's own differential, finite where the SVD's is not (repeated or zero singular
values). Written with Ember ops, so twice differentiable."""
from . import _C
from .autograd.function import Function


def _mT(x):
    return x.transpose(-2, -1)


def pinv_backward(G, P, A):
    """The gradient of A for P = pinv(A) and P's gradient G. Where A's rank is locally constant
    (Golub and Pereyra, 1973): dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P, whose
    adjoint is gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)."""
    Gt, Pt = _mT(G), _mT(P)
    Y = _C.matmul(Gt, _C.matmul(P, Pt))  # G^T P P^T (m x n)
    Z = _C.matmul(_C.matmul(Pt, P), Gt)  # P^T P G^T (m x n)
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
        gA = pinv_backward(_C.matmul(gX, _mT(B)), P, A) if ctx.needs_input_grad[0] else None
        gB = _C.matmul(_mT(P), gX) if ctx.needs_input_grad[1] else None
        return gA, gB, None, None
