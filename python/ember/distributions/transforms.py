"""Invertible maps y = T(x) with log|dy/dx|, as torch.distributions.transforms:
the base Transform (inverse, caching, composition) and the elementwise, simplex,
triangular and structural transforms built on it."""
import math
import numbers

import ember
import ember.nn.functional as F
from . import constraints

__all__ = ['AbsTransform', 'AffineTransform', 'CatTransform', 'ComposeTransform', 'CorrCholeskyTransform',
           'CumulativeDistributionTransform', 'ExpTransform', 'IndependentTransform', 'LowerCholeskyTransform',
           'PowerTransform', 'ReshapeTransform', 'SigmoidTransform', 'SoftplusTransform', 'TanhTransform',
           'SoftmaxTransform', 'StackTransform', 'StickBreakingTransform', 'Transform', 'identity_transform']


def _sum_rightmost(x, n):
    return x.reshape(x.shape[:x.dim() - n] + (-1,)).sum(-1) if n > 0 else x


class Transform:
    """Subclasses give _call (x -> y), _inverse (y -> x) and log_abs_det_jacobian(x, y).
    cache_size=1 remembers the last pair so inverting a sample returns the exact x."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError('cache_size must be 0 or 1')
        self._cache_size = cache_size
        self._cached = (None, None)
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError('Please use either .domain.event_dim or .codomain.event_dim')

    @property
    def inv(self):
        inv = self._inv() if self._inv is not None else None
        if inv is None:
            inv = _InverseTransform(self)
            import weakref
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f'{type(self)}.with_cache is not implemented')

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached = (x, y)
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return type(self).__name__ + '()'


class _InverseTransform(Transform):
    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = property(lambda self: self._inv.codomain)
    codomain = property(lambda self: self._inv.domain)
    bijective = property(lambda self: self._inv.bijective)
    sign = property(lambda self: self._inv.sign)
    inv = property(lambda self: self._inv)

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """parts applied left to right."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [p.with_cache(cache_size) for p in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    bijective = property(lambda self: all(p.bijective for p in self.parts))

    @property
    def sign(self):
        s = 1
        for p in self.parts:
            s = s * p.sign
        return s

    @property
    def inv(self):
        return ComposeTransform([p.inv for p in reversed(self.parts)])

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ember.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total, event_dim = 0, self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = _sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            total = total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return 'ComposeTransform(\n    ' + ',\n    '.join(repr(p) for p in self.parts) + '\n)'


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """base_transform with its rightmost reinterpreted_batch_ndims dims taken as one event."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size)

    domain = property(lambda self: constraints.independent(self.base_transform.domain,
                                                           self.reinterpreted_batch_ndims))
    codomain = property(lambda self: constraints.independent(self.base_transform.codomain,
                                                             self.reinterpreted_batch_ndims))
    bijective = property(lambda self: self.base_transform.bijective)
    sign = property(lambda self: self.base_transform.sign)

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost in_shape dims of an event to out_shape."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = ember.Size(in_shape), ember.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError('in_shape, out_shape have different numbers of elements')
        super().__init__(cache_size=cache_size)

    domain = property(lambda self: constraints.independent(constraints.real, len(self.in_shape)))
    codomain = property(lambda self: constraints.independent(constraints.real, len(self.out_shape)))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ReshapeTransform(self.in_shape, self.out_shape, cache_size)

    def _call(self, x):
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + tuple(self.out_shape))

    def _inverse(self, y):
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError('Too few dimensions on input')
        cut = len(shape) - len(self.in_shape)
        if tuple(shape[cut:]) != tuple(self.in_shape):
            raise ValueError(f'Shape mismatch: expected {shape[cut:]} but got {self.in_shape}')
        return ember.Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError('Too few dimensions on input')
        cut = len(shape) - len(self.out_shape)
        if tuple(shape[cut:]) != tuple(self.out_shape):
            raise ValueError(f'Shape mismatch: expected {shape[cut:]} but got {self.out_shape}')
        return ember.Size(tuple(shape[:cut]) + tuple(self.in_shape))


class _Elementwise(Transform):
    """A bijection given by three one-line formulas (a class attribute table below)."""
    bijective = True
    sign = +1

    def __eq__(self, other):
        return type(self) is type(other)

    __hash__ = object.__hash__

    def _call(self, x):
        return type(self)._f(x)

    def _inverse(self, y):
        return type(self)._finv(y)

    def log_abs_det_jacobian(self, x, y):
        return type(self)._ladj(x, y)


def _clipped_sigmoid(x):
    finfo = ember.finfo(x.dtype)
    return ember.clamp(ember.sigmoid(x), min=finfo.tiny, max=1. - finfo.eps)


def _elementwise(name, f, finv, ladj, codomain, domain=constraints.real):
    return type(name, (_Elementwise,), {'_f': staticmethod(f), '_finv': staticmethod(finv),
                                        '_ladj': staticmethod(ladj), 'domain': domain, 'codomain': codomain,
                                        '__doc__': f'{name} (elementwise, bijective).'})


ExpTransform = _elementwise('ExpTransform', ember.exp, ember.log, lambda x, y: x, constraints.positive)
def _clipped_logit(y):
    finfo = ember.finfo(y.dtype)
    y = y.clamp(min=finfo.tiny, max=1. - finfo.eps)
    return y.log() - (-y).log1p()


SigmoidTransform = _elementwise('SigmoidTransform', _clipped_sigmoid, _clipped_logit,
                                lambda x, y: -F.softplus(-x) - F.softplus(x), constraints.unit_interval)
SoftplusTransform = _elementwise('SoftplusTransform', F.softplus, lambda y: y + (-(-y).expm1()).log(),
                                 lambda x, y: -F.softplus(-x), constraints.positive)
TanhTransform = _elementwise('TanhTransform', ember.tanh, lambda y: ember.atanh(y),
                             lambda x, y: 2. * (math.log(2.) - x - F.softplus(-2. * x)),
                             constraints.interval(-1.0, 1.0))


class AbsTransform(Transform):
    """y = |x| (not bijective)."""
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class PowerTransform(Transform):
    """y = x ** exponent on x > 0."""
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent, = _as_tensors(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent, cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return ember.broadcast_shapes(shape, getattr(self.exponent, 'shape', ()))

    inverse_shape = forward_shape


def _as_tensors(*values):
    return [v if isinstance(v, ember.Tensor) else ember.tensor(float(v)) for v in values]


class AffineTransform(Transform):
    """y = loc + scale * x, over event_dim rightmost dims."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    event_dim = property(lambda self: self._event_dim)
    domain = property(lambda self: constraints.real if self._event_dim == 0
                      else constraints.independent(constraints.real, self._event_dim))
    codomain = domain

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            AffineTransform(self.loc, self.scale, self._event_dim, cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((ember.as_tensor(a) == ember.as_tensor(b)).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        return (self.scale > 0) - (self.scale < 0) if isinstance(self.scale, numbers.Real) else self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, numbers.Real):
            result = ember.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = _sum_rightmost(result.expand(ember.broadcast_shapes(result.shape, shape)), self._event_dim)
            return result.expand(shape[:len(shape) - self._event_dim])
        return result.expand(ember.broadcast_shapes(result.shape, shape))

    def forward_shape(self, shape):
        return ember.broadcast_shapes(shape, getattr(self.loc, 'shape', ()), getattr(self.scale, 'shape', ()))

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by exp and normalization (not bijective)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
    """R^(K-1) to the K-simplex by stick breaking (bijective)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        offset = x.shape[-1] + 1 - ember.ones(x.shape[-1], dtype=x.dtype).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        cum = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(cum, [1, 0], value=1)

    def _inverse(self, y):
        cut = y[..., :-1]
        offset = y.shape[-1] - ember.ones(cut.shape[-1], dtype=y.dtype).cumsum(-1)
        rest = (1 - cut.cumsum(-1)).clamp(min=ember.finfo(y.dtype).tiny)
        return cut.log() - rest.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - ember.ones(x.shape[-1], dtype=x.dtype).cumsum(-1)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        return ember.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        return ember.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


def _vec_to_tril(vec, diag):
    """(..., m) packed rows -> (..., n, n) lower triangular matrices (below the diagonal for diag=-1)."""
    m = vec.shape[-1]
    n = int(round((math.sqrt(1 + 8 * m) - 1) / 2)) + (1 if diag == -1 else 0)
    rows, cols = ember.tril_indices(n, n, offset=diag)
    flat = ember.zeros(vec.shape[:-1] + (n * n,), dtype=vec.dtype)
    index = (rows * n + cols).expand(vec.shape[:-1] + (m,))
    return flat.scatter(-1, index, vec).reshape(vec.shape[:-1] + (n, n))


def _tril_to_vec(mat, diag):
    n = mat.shape[-1]
    rows, cols = ember.tril_indices(n, n, offset=diag)
    return mat.flatten(-2)[..., rows * n + cols]


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length D(D-1)/2 to Cholesky factors of D x D correlation matrices."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        x = ember.tanh(x)
        eps = ember.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = _vec_to_tril(x, -1)
        # Row i of the factor: its below-diagonal partial correlations scaled by the
        # stick left over, z_ij * sqrt(1 - sum_{k<j} L_ik^2); the diagonal takes the rest.
        z = r.pow(2)
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        n = r.shape[-1]
        eye = ember.eye(n, dtype=x.dtype)
        r = r + eye
        y = r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)
        return y

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = _tril_to_vec(y, -1)
        y_cumsum_vec = _tril_to_vec(y_cumsum_shifted, -1)
        t = y_vec / y_cumsum_vec.sqrt()
        return ((1 + t) / (1 - t)).log() / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        y1m_cumsum_tril = _tril_to_vec(y1m_cumsum, -2)
        stick_part = 0.5 * y1m_cumsum_tril.log().sum(-1)
        tanh_part = (2. * (math.log(2.) - x - F.softplus(-2. * x))).sum(-1)
        return stick_part + tanh_part

    def forward_shape(self, shape):
        m = shape[-1]
        n = round((0.25 + 2 * m) ** 0.5 + 0.5)
        if n * (n - 1) // 2 != m:
            raise ValueError('Input is not a flattend lower-diagonal number')
        return ember.Size(tuple(shape[:-1]) + (n, n))

    def inverse_shape(self, shape):
        if len(shape) < 2 or shape[-2] != shape[-1]:
            raise ValueError('Input must be square')
        n = shape[-1]
        return ember.Size(tuple(shape[:-2]) + (n * (n - 1) // 2,))


class LowerCholeskyTransform(Transform):
    """Square matrices to lower triangular ones with a positive diagonal (exp of the diagonal)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x) (the probability integral transform)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    domain = property(lambda self: self.distribution.support)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution,
                                                                                           cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class CatTransform(Transform):
    """tseq[i] applied to the lengths[i]-long section i of dim."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError('lengths must match tseq')
        self.dim = dim

    event_dim = property(lambda self: max(t.event_dim for t in self.transforms))
    length = property(lambda self: sum(self.lengths))
    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = property(lambda self: constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths))
    codomain = property(lambda self: constraints.cat([t.codomain for t in self.transforms], self.dim,
                                                     self.lengths))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CatTransform(self.transforms, self.dim, self.lengths,
                                                                        cache_size)

    def _map(self, x, fn):
        if x.size(self.dim) != self.length:
            raise ValueError(f'the size of dim {self.dim} must be {self.length}')
        out, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            out.append(fn(t, x.narrow(self.dim, start, n)))
            start += n
        return out

    def _call(self, x):
        return ember.cat(self._map(x, lambda t, v: t(v)), self.dim)

    def _inverse(self, y):
        return ember.cat(self._map(y, lambda t, v: t.inv(v)), self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts, start = [], 0
        for t, n in zip(self.transforms, self.lengths):
            xs, ys = x.narrow(self.dim, start, n), y.narrow(self.dim, start, n)
            ladj = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                ladj = _sum_rightmost(ladj, self.event_dim - t.event_dim)
            parts.append(ladj)
            start += n
        dim = self.dim if self.dim >= 0 else self.dim + x.dim()
        # a split inside the batch dims keeps the pieces apart; one inside the event sums them
        return ember.cat(parts, dim) if dim < x.dim() - self.event_dim else sum(parts)


class StackTransform(Transform):
    """tseq[i] applied to slice i of dim."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.transforms = [t.with_cache(cache_size) for t in tseq]
        self.dim = dim

    bijective = property(lambda self: all(t.bijective for t in self.transforms))
    domain = property(lambda self: constraints.stack([t.domain for t in self.transforms], self.dim))
    codomain = property(lambda self: constraints.stack([t.codomain for t in self.transforms], self.dim))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, x):
        if x.size(self.dim) != len(self.transforms):
            raise ValueError(f'the size of dim {self.dim} must be {len(self.transforms)}')
        return [x.select(self.dim, i) for i in range(len(self.transforms))]

    def _call(self, x):
        return ember.stack([t(v) for t, v in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y):
        return ember.stack([t.inv(v) for t, v in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return ember.stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                            zip(self.transforms, self._slices(x), self._slices(y))], self.dim)
