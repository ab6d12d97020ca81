"""Constraints: the sets that parameters and supports live in, as
torch.distributions.constraints. check(value) is a bool tensor over the batch
(the event dims, event_dim of them, are reduced)."""
import ember

__all__ = ['Constraint', 'boolean', 'cat', 'corr_cholesky', 'dependent', 'dependent_property', 'greater_than',
           'greater_than_eq', 'half_open_interval', 'independent', 'integer_interval', 'interval',
           'less_than', 'lower_cholesky', 'lower_triangular', 'multinomial', 'nonnegative',
           'nonnegative_integer', 'one_hot', 'positive', 'positive_definite', 'positive_integer',
           'positive_semidefinite', 'real', 'real_vector', 'simplex', 'square', 'stack', 'symmetric',
           'unit_interval', 'is_dependent']


class Constraint:
    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip('_') + '()'


class _Dependent(Constraint):
    """A support that depends on other parameters: it cannot be checked alone."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError('.is_discrete cannot be determined statically')
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError('.event_dim cannot be determined statically')
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, x):
        raise ValueError('Cannot determine validity of dependent constraint')


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose class-level value is a dependent constraint (a support given by parameters)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """base_constraint with its rightmost reinterpreted_batch_ndims dims taken as one event."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    is_discrete = property(lambda self: self.base_constraint.is_discrete)
    event_dim = property(lambda self: self.base_constraint.event_dim + self.reinterpreted_batch_ndims)

    def check(self, value):
        ok = self.base_constraint.check(value)
        if ok.dim() < self.reinterpreted_batch_ndims:
            raise ValueError(f'Expected value.dim() >= {self.base_constraint.event_dim + self.reinterpreted_batch_ndims}'
                             f' but got {value.dim()}')
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok

    def __repr__(self):
        return f'IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})'


class _Pointwise(Constraint):
    """One elementwise test: test(value, *bounds)."""

    def __init__(self, name, test, *bounds, is_discrete=False):
        self._name, self._test, self._bounds, self.is_discrete = name, test, bounds, is_discrete

    lower_bound = property(lambda self: self._bounds[0])
    upper_bound = property(lambda self: self._bounds[-1])

    def check(self, value):
        return self._test(value, *self._bounds)

    def __repr__(self):
        names = {1: ('lower_bound',), 2: ('lower_bound', 'upper_bound')}.get(len(self._bounds), ())
        return f"{self._name}({', '.join(f'{n}={b}' for n, b in zip(names, self._bounds))})"


def _integer(x):
    return x % 1 == 0


def greater_than(lower_bound):
    return _Pointwise('GreaterThan', lambda x, lo: lo < x, lower_bound)


def greater_than_eq(lower_bound):
    return _Pointwise('GreaterThanEq', lambda x, lo: lo <= x, lower_bound)


def less_than(upper_bound):
    return _Pointwise('LessThan', lambda x, hi: x < hi, upper_bound)


def interval(lower_bound, upper_bound):
    return _Pointwise('Interval', lambda x, lo, hi: (lo <= x) & (x <= hi), lower_bound, upper_bound)


def half_open_interval(lower_bound, upper_bound):
    return _Pointwise('HalfOpenInterval', lambda x, lo, hi: (lo <= x) & (x < hi), lower_bound, upper_bound)


def integer_interval(lower_bound, upper_bound):
    return _Pointwise('IntegerInterval', lambda x, lo, hi: _integer(x) & (lo <= x) & (x <= hi),
                      lower_bound, upper_bound, is_discrete=True)


def integer_greater_than(lower_bound):
    return _Pointwise('IntegerGreaterThan', lambda x, lo: _integer(x) & (x >= lo), lower_bound, is_discrete=True)


class _Event(Constraint):
    """A test over the last event_dim dims."""

    def __init__(self, name, test, event_dim, is_discrete=False):
        self._name, self._test, self.event_dim, self.is_discrete = name, test, event_dim, is_discrete

    def check(self, value):
        return self._test(value)

    def __repr__(self):
        return self._name + '()'


def _simplex(x):
    return (x >= 0).all(-1) & ((x.sum(-1) - 1).abs() < 1e-6)


def _tri_ok(x):
    return (x.tril() == x).all(-1).all(-1)


def _lower_cholesky(x):
    return _tri_ok(x) & (x.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


def _corr_cholesky(x):
    tol = ember.finfo(x.dtype).eps * x.size(-1) * 10
    row_norm = ember.linalg.norm(x.detach(), dim=-1)
    return _lower_cholesky(x) & ((row_norm - 1.0).abs() <= tol).all(-1)


def _square(x):
    return ember.full(x.shape[:-2], x.shape[-2] == x.shape[-1], dtype=ember.bool)


def _symmetric(x):
    if x.shape[-2] != x.shape[-1]:
        return _square(x)
    return ember.isclose(x, x.transpose(-2, -1), atol=1e-6).all(-2).all(-1)


def _positive_semidefinite(x):
    if x.shape[-2] != x.shape[-1] or not bool(_symmetric(x).all()):
        return _symmetric(x)
    return (ember.linalg.eigvalsh(x) >= 0).all(-1)


def _positive_definite(x):
    if x.shape[-2] != x.shape[-1] or not bool(_symmetric(x).all()):
        return _symmetric(x)
    return ember.linalg.cholesky_ex(x).info == 0


def _multinomial_check(upper_bound):
    return lambda x: (x >= 0).all(-1) & (x.sum(-1) <= upper_bound)


class _Multinomial(_Event):
    def __init__(self, upper_bound):
        super().__init__('Multinomial', _multinomial_check(upper_bound), 1, is_discrete=True)
        self.upper_bound = upper_bound


class _Cat(Constraint):
    """constraints[i] on the lengths[i]-long section i of dim (as torch.cat)."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise ValueError('lengths must match the constraints')
        self.dim = dim

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    event_dim = property(lambda self: max(c.event_dim for c in self.cseq))

    def check(self, value):
        parts, start = [], 0
        for c, n in zip(self.cseq, self.lengths):
            parts.append(c.check(value.narrow(self.dim, start, n)))
            start += n
        return ember.cat(parts, self.dim)


class _Stack(Constraint):
    """constraints[i] on slice i of dim (as torch.stack)."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    event_dim = property(lambda self: max(c.event_dim for c in self.cseq) + (1 if self.dim < 0 else 0))

    def check(self, value):
        if value.size(self.dim) != len(self.cseq):
            raise ValueError('value and the constraints differ in length along dim')
        return ember.stack([c.check(value.select(self.dim, i)) for i, c in enumerate(self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Pointwise('Boolean', lambda x: (x == 0) | (x == 1), is_discrete=True)
one_hot = _Event('OneHot', lambda x: ((x == 0) | (x == 1)).all(-1) & (x.sum(-1) == 1), 1, is_discrete=True)
nonnegative_integer = integer_greater_than(0)
positive_integer = integer_greater_than(1)
real = _Pointwise('Real', lambda x: x == x)  # NaN fails
real_vector = independent(real, 1)
positive = greater_than(0.)
nonnegative = greater_than_eq(0.)
multinomial = _Multinomial
unit_interval = interval(0., 1.)
simplex = _Event('Simplex', _simplex, 1)
lower_triangular = _Event('LowerTriangular', _tri_ok, 2)
lower_cholesky = _Event('LowerCholesky', _lower_cholesky, 2)
corr_cholesky = _Event('CorrCholesky', _corr_cholesky, 2)
square = _Event('Square', _square, 2)
symmetric = _Event('Symmetric', _symmetric, 2)
positive_semidefinite = _Event('PositiveSemidefinite', _positive_semidefinite, 2)
positive_definite = _Event('PositiveDefinite', _positive_definite, 2)
cat = _Cat
stack = _Stack
