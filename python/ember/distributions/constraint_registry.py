"""biject_to(c) and transform_to(c): a transform from unconstrained reals onto the
constraint c (a bijection for biject_to), looked up by the constraint's type, as
torch.distributions.constraint_registry."""
import numbers

from . import constraints, transforms

__all__ = ['ConstraintRegistry', 'biject_to', 'transform_to']


class ConstraintRegistry:
    """Maps a constraint type (or a singleton constraint) to a factory fn(constraint) -> Transform."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        factory = self._registry.get(constraint) if not isinstance(constraint, type) else None
        if factory is None:
            for cls in type(constraint).__mro__:
                if cls in self._registry:
                    factory = self._registry[cls]
                    break
        if factory is None:
            raise NotImplementedError(f'Cannot transform {type(constraint).__name__} constraints')
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint, factory, bijective=True):
    transform_to.register(constraint, factory)
    if bijective:
        biject_to.register(constraint, factory)


def _real(c):
    return transforms.identity_transform


def _pointwise(c):
    """greater_than(lo) -> lo + exp(x); less_than(hi) -> hi - exp(x); intervals -> sigmoid, scaled."""
    name = c._name
    if name in ('Real',):
        return transforms.identity_transform
    if name in ('GreaterThan', 'GreaterThanEq'):
        return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(c.lower_bound, 1)])
    if name == 'LessThan':
        return transforms.ComposeTransform([transforms.ExpTransform(),
                                            transforms.AffineTransform(c.upper_bound, -1)])
    if name in ('Interval', 'HalfOpenInterval'):
        lo, hi = c.lower_bound, c.upper_bound
        unit = all(isinstance(b, numbers.Number) for b in (lo, hi)) and lo == 0 and hi == 1
        if unit:
            return transforms.SigmoidTransform()
        return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(lo, hi - lo)])
    raise NotImplementedError(f'Cannot transform {c!r} constraints')


_both(constraints.real, _real)
_both(constraints._Pointwise, _pointwise)
biject_to.register(constraints._IndependentConstraint,
                   lambda c: transforms.IndependentTransform(biject_to(c.base_constraint), c.reinterpreted_batch_ndims))
transform_to.register(constraints._IndependentConstraint,
                      lambda c: transforms.IndependentTransform(transform_to(c.base_constraint),
                                                                c.reinterpreted_batch_ndims))
biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
_both(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform(), bijective=False)
_both(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())
biject_to.register(constraints._Cat, lambda c: transforms.CatTransform([biject_to(x) for x in c.cseq], c.dim,
                                                                       c.lengths))
transform_to.register(constraints._Cat, lambda c: transforms.CatTransform([transform_to(x) for x in c.cseq],
                                                                          c.dim, c.lengths))
biject_to.register(constraints._Stack, lambda c: transforms.StackTransform([biject_to(x) for x in c.cseq], c.dim))
transform_to.register(constraints._Stack, lambda c: transforms.StackTransform([transform_to(x) for x in c.cseq],
                                                                              c.dim))
