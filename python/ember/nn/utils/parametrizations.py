"""Ready-made parametrizations (torch.nn.utils.parametrizations):
spectral_norm and orthogonal (in _orthogonal.py), registered through
nn.utils.parametrize."""
import ember
from ..functional import normalize
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _as_matrix, _default_dim
from ._orthogonal import orthogonal

__all__ = ['orthogonal', 'spectral_norm']


class _SpectralNorm(Module):
    """weight / sigma, sigma (the largest singular value of weight as a
    matrix) estimated by power iteration on the buffers _u and _v, advanced
    n_power_iterations times per forward in training mode. A 1-d weight is
    just normalised."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f'Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got '
                             f'{dim})')
        if n_power_iterations <= 0:
            raise ValueError('Expected n_power_iterations to be positive, but got '
                             f'n_power_iterations={n_power_iterations}')
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = _as_matrix(weight, self.dim)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer('_u', normalize(u, dim=0, eps=self.eps))
            self.register_buffer('_v', normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from a good estimate

    def _power_method(self, weight_mat, n_power_iterations):
        with ember.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(ember.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(ember.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = _as_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = ember.dot(u, ember.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value  # any weight is its own preimage: scale is not recoverable


def spectral_norm(module, name='weight', n_power_iterations=1, eps=1e-12, dim=None):
    """Registers a spectral-norm parametrization on module.<name>; returns
    the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ember.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
