"""parametrizations.orthogonal: a weight (..., n, k) kept orthogonal (its
columns, or rows when n < k, orthonormal) as the image of an unconstrained
tensor under the matrix exponential or a product of Householder reflectors,
as PyTorch 1.13's.

Ember's linalg has no LAPACK factorizations yet, so the maps are written here
with Ember ops: the exponential by scaling and squaring of a Taylor series
(differentiable by the engine like any composite), the Householder product
as rank-1 updates, the Cayley map's solve by Gauss-Jordan elimination, and
the QR needed at registration (no gradient) as Householder QR in the layout
of LAPACK's geqrf."""
import math

import ember
from ..modules.module import Module

__all__ = ['orthogonal']

_MAPS = ('matrix_exp', 'cayley', 'householder')


def _mT(x):
    return x.transpose(-2, -1)


def _eye_like(x, rows, cols):
    return ember.eye(rows, cols, dtype=x.dtype, device=x.device)


def _matrix_exp(a):
    """exp(a) for a batch of square matrices: the degree-18 Taylor series of
    a / 2^s (1-norm at most 1/2: remainder below 1e-22) squared s times."""
    n = a.size(-1)
    norm = a.detach().abs().sum(-2).amax().item() if a.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    b = a / (2.0 ** s)
    eye = _eye_like(a, n, n)
    e = eye
    for k in range(18, 0, -1):  # Horner: I + b/1 (I + b/2 (I + ...))
        e = eye + (b @ e) / k
    for _ in range(s):
        e = e @ e
    return e


def _cayley(a):
    """(I - a/2)^-1 (I + a/2) for skew-symmetric a, by Gauss-Jordan
    elimination without pivoting: I - a/2 has the identity as its symmetric
    part (positive definite), so no pivot is ever small."""
    n = a.size(-1)
    eye = _eye_like(a, n, n)
    aug = ember.cat([eye - a / 2, (eye + a / 2).expand(*a.shape)], dim=-1)  # (..., n, 2n)
    for j in range(n):
        pivot = aug[..., j:j + 1, :] / aug[..., j:j + 1, j:j + 1]
        aug = aug - aug[..., :, j:j + 1] * pivot  # clears column j, row j included
        aug = ember.cat([aug[..., :j, :], pivot, aug[..., j + 1:, :]], dim=-2)
    return aug[..., :, n:]


def _householder_product(a, tau):
    """The first k columns of H_0 H_1 ... H_{k-1}, H_j = I - tau_j v_j v_j^T,
    v_j = (0, ..., 0, 1, a[j+1:, j]): (..., n, k) from a (..., n, k) and
    tau (..., k), as linalg.householder_product."""
    n, k = a.size(-2), a.size(-1)
    v = a.tril(-1) + _eye_like(a, n, k)
    q = _eye_like(a, n, k).expand(*a.shape[:-2], n, k)
    for j in range(k - 1, -1, -1):
        vj = v[..., :, j:j + 1]
        q = q - tau[..., j:j + 1].unsqueeze(-1) * (vj @ (_mT(vj) @ q))
    return q


def _geqrf_one(a):
    """Householder QR of one tall matrix, in place, LAPACK's layout: R on and
    above the diagonal, the reflectors' tails below it; returns tau."""
    n, k = a.shape
    tau = a.new_zeros(k)
    for j in range(k):
        x = a[j:, j]
        alpha = x[0].item()
        tail = x[1:].norm().item() if n - j > 1 else 0.0
        if tail == 0.0:
            continue  # already upper triangular here: H_j = I (tau 0)
        beta = -math.copysign(math.hypot(alpha, tail), alpha)
        tau[j] = (beta - alpha) / beta
        x[1:].div_(alpha - beta)
        x[0] = beta
        if j + 1 < k:
            v = ember.cat([x.new_ones(1), x[1:]])
            block = a[j:, j + 1:]
            block.sub_(tau[j] * ember.outer(v, v @ block))
    return tau


def _geqrf(a):
    """(reflectors and R, tau) of a batch of tall matrices, without gradient."""
    with ember.no_grad():
        flat = a.detach().clone().reshape(-1, a.size(-2), a.size(-1))
        taus = [_geqrf_one(flat[i]) for i in range(flat.size(0))]
        return flat.reshape(a.shape), ember.stack(taus).reshape(*a.shape[:-2], a.size(-1))


def _make_orthogonal(a):
    """Q of a = QR with diag(R) >= 0 (a tall)."""
    x, tau = _geqrf(a)
    q = _householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _is_orthogonal(q):
    n, k = q.size(-2), q.size(-1)
    eps = 10.0 * n * ember.finfo(q.dtype).eps
    return ember.allclose(_mT(q) @ q, _eye_like(q, k, k), atol=eps)


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer('base', None)

    def forward(self, x):
        n, k = x.size(-2), x.size(-1)
        transposed = n < k
        if transposed:
            x = _mT(x)
            n, k = k, n
        if self.orthogonal_map in ('matrix_exp', 'cayley'):
            x = x.tril()
            if n != k:  # embed the tall matrix in a square one
                x = ember.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], n, n - k)], dim=-1)
            a = x - _mT(x)  # skew-symmetric: both maps take it to an orthogonal matrix
            q = _matrix_exp(a) if self.orthogonal_map == 'matrix_exp' else _cayley(a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = _householder_product(a, tau)
            # x's diagonal holds +-1 signs: used, not differentiated
            q = q * x.detach().diagonal(dim1=-2, dim2=-1).to(ember.int32).unsqueeze(-2)
        if hasattr(self, 'base'):
            q = self.base @ q
        return _mT(q) if transposed else q

    def right_inverse(self, q):
        with ember.no_grad():
            if q.shape != self.shape:
                raise ValueError(f'Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of '
                                 f'shape {q.shape}.')
            q_init = q
            n, k = q.size(-2), q.size(-1)
            transpose = n < k
            if transpose:
                q = _mT(q)
                n, k = k, n
            if not hasattr(self, 'base'):
                if self.orthogonal_map in ('matrix_exp', 'cayley'):
                    raise NotImplementedError('It is not possible to assign to the matrix exponential or the Cayley '
                                              'parametrizations when use_trivialization=False.')
                a, tau = _geqrf(q)
                # diag(R) > 0 (unique QR): its signs go on the diagonal, which forward reads
                diag = a.diagonal(dim1=-2, dim2=-1)
                diag.sign_()
                diag.copy_(ember.where(tau == 0, -diag, diag))
                return _mT(a) if transpose else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:  # complete q to a full orthogonal basis
                extra = ember.randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
                q = _make_orthogonal(ember.cat([q, extra], dim=-1))
            self.base = q
            # -I: with it the Householder map's diagonal signs give the identity
            neg_id = ember.zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name='weight', orthogonal_map=None, *, use_trivialization=True):
    """Registers an orthogonal parametrization on module.<name> (a matrix or a
    batch of them); orthogonal_map 'matrix_exp' (default for square
    matrices), 'householder' (default otherwise) or 'cayley'. Returns the
    module."""
    from . import parametrize
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f'Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.')
    if orthogonal_map is None:
        orthogonal_map = 'matrix_exp' if weight.size(-2) == weight.size(-1) else 'householder'
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f'Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
