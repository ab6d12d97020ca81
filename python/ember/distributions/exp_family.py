"""ExponentialFamily: densities p(x) = h(x) exp(<t(x), theta> - F(theta)); the
entropy follows from the log normalizer F by autograd (Nielsen and Nock, 2010)."""
import ember
from .distribution import Distribution

__all__ = ['ExponentialFamily']


class ExponentialFamily(Distribution):
    """Subclasses give _natural_params (a tuple of tensors), _log_normalizer(*params) and
    _mean_carrier_measure (E[log h(x)])."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # H = F(theta) - <theta, grad F(theta)> - E[log h(x)]
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with ember.enable_grad():
            lg = self._log_normalizer(*params)
            grads = ember.autograd.grad(lg.sum(), params, create_graph=True)
        result = -self._mean_carrier_measure + lg
        for p, g in zip(params, grads):
            result = result - p * g
        return result
