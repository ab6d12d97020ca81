"""ember.special: PyTorch 1.13's torch.special.

The functions with kernels of their own are ops of the C core (named
special_<f> there, include/ember/ops/special.def); the rest are the
top-level functions under torch.special's names, or short compositions."""
import math

from . import _C
from ._argcheck import accepts
from ._tensor import Tensor

__all__ = ['airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'chebyshev_polynomial_t',
           'chebyshev_polynomial_u', 'chebyshev_polynomial_v', 'chebyshev_polynomial_w', 'digamma', 'entr', 'erf',
           'erfc', 'erfcx', 'erfinv', 'exp2', 'expit', 'expm1', 'gammainc', 'gammaincc', 'gammaln',
           'hermite_polynomial_h', 'hermite_polynomial_he', 'i0', 'i0e', 'i1', 'i1e', 'laguerre_polynomial_l',
           'legendre_polynomial_p', 'log1p', 'log_ndtr', 'log_softmax', 'logit', 'logsumexp', 'modified_bessel_i0',
           'modified_bessel_i1', 'modified_bessel_k0', 'modified_bessel_k1', 'multigammaln', 'ndtr', 'ndtri',
           'polygamma', 'psi', 'round', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1',
           'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u', 'shifted_chebyshev_polynomial_v',
           'shifted_chebyshev_polynomial_w', 'sinc', 'softmax', 'spherical_bessel_j0', 'xlog1py', 'xlogy', 'zeta']


def _top(name):
    import ember
    return getattr(ember, name)


# ---- the C core's torch.special ops: f(input, *, out=None) -----------------------------
def _unary(name):
    op = getattr(_C, 'special_' + name)

    def fn(input, *, out=None):
        return op(input) if out is None else op(input, out=out)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _as_tensor(value, other):
    """A Python number given where PyTorch takes a Scalar: a 0-d tensor that promotes as a wrapped number."""
    if isinstance(value, Tensor):
        return value
    if not isinstance(other, Tensor):
        raise TypeError(f"expected at least one Tensor argument, got {type(value).__name__} and "
                        f"{type(other).__name__}")
    import ember
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a Tensor or a number, got {type(value).__name__}")
    dtype = ember.int64 if isinstance(value, int) else ember.get_default_dtype()
    if isinstance(value, float) and other.is_floating_point():
        dtype = other.dtype
    return ember.tensor(value, dtype=dtype)


def _binary(name, op=None):
    op = op or getattr(_C, 'special_' + name)

    def fn(input, other, *, out=None):
        a, b = _as_tensor(input, other), _as_tensor(other, input)
        return op(a, b) if out is None else op(a, b, out=out)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _polynomial(name):
    """An orthogonal polynomial family: f(input, n), the degree n a tensor or a number."""
    binary = _binary(name)

    def fn(input, n, *, out=None):
        return binary(input, n, out=out)
    fn.__name__ = fn.__qualname__ = name
    return fn


for _name in ('airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_i0',
              'modified_bessel_i1', 'modified_bessel_k0', 'modified_bessel_k1', 'scaled_modified_bessel_k0',
              'scaled_modified_bessel_k1', 'spherical_bessel_j0', 'i0e', 'i1', 'i1e', 'erfcx', 'ndtri', 'log_ndtr',
              'entr'):
    globals()[_name] = _unary(_name)
for _name in ('chebyshev_polynomial_t', 'chebyshev_polynomial_u', 'chebyshev_polynomial_v',
              'chebyshev_polynomial_w', 'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
              'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'hermite_polynomial_h',
              'hermite_polynomial_he', 'laguerre_polynomial_l', 'legendre_polynomial_p'):
    globals()[_name] = _polynomial(_name)
zeta = _binary('zeta')
xlog1py = _binary('xlog1py')
xlogy = _binary('xlogy', op=_C.xlogy)
gammainc = _binary('gammainc', op=_C.igamma)
gammaincc = _binary('gammaincc', op=_C.igammac)


# ---- the top-level functions under torch.special's names --------------------------------
def _alias(name, target):
    def fn(*args, **kwargs):
        return _top(target)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    return fn


for _name, _target in (('digamma', 'digamma'), ('psi', 'digamma'), ('gammaln', 'lgamma'), ('i0', 'i0'),
                       ('polygamma', 'polygamma'), ('erf', 'erf'), ('erfc', 'erfc'), ('erfinv', 'erfinv'),
                       ('exp2', 'exp2'), ('expm1', 'expm1'), ('log1p', 'log1p'), ('expit', 'sigmoid'),
                       ('round', 'round'), ('sinc', 'sinc'), ('logsumexp', 'logsumexp'),
                       ('multigammaln', 'mvlgamma')):
    globals()[_name] = _alias(_name, _target)


@accepts(input='Tensor', eps='float?')
def logit(input, eps=None, *, out=None):
    result = _top('logit')(input, eps)
    return result if out is None else out.resize_(result.shape).copy_(result)


@accepts(input='Tensor')
def ndtr(input, *, out=None):
    """The standard normal CDF, erfc(-x / sqrt 2) / 2."""
    result = _C.erfc(input * -math.sqrt(0.5)) * 0.5
    return result if out is None else out.resize_(result.shape).copy_(result)


def softmax(input, dim, *, dtype=None):
    return _top('softmax')(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _top('log_softmax')(input, dim, dtype=dtype)


# ---- mvlgamma, the top-level function and Tensor methods --------------------------------
@accepts(input='Tensor', p='int')
def mvlgamma(input, p, *, out=None):
    """The multivariate log-gamma of dimension p: sum_j lgamma(x - j/2) + p(p-1)/4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    import ember
    x = input if input.is_floating_point() else input.to(ember.get_default_dtype())
    shifts = ember.arange(p, dtype=x.dtype) * -0.5
    result = _C.lgamma(x.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return result if out is None else out.resize_(result.shape).copy_(result)


def _install(namespace):
    """Adds mvlgamma to ember's namespace and mvlgamma/mvlgamma_ to Tensor."""
    namespace.setdefault('mvlgamma', mvlgamma)
    Tensor.mvlgamma = lambda self, p: mvlgamma(self, p)
    Tensor.mvlgamma_ = lambda self, p: self.copy_(mvlgamma(self, p))
