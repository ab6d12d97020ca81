"""ember.distributions: torch.distributions' interface for the common cases —
Distribution (batch/event shapes, sample/rsample, log_prob, entropy, moments,
argument validation), Normal, Uniform, Exponential, Bernoulli, Categorical,
OneHotCategorical, and kl_divergence between two of the same family. Written
with Ember's ops, so log_prob and rsample are differentiable in the parameters."""
from .distribution import Distribution
from .families import Bernoulli, Categorical, Exponential, Normal, OneHotCategorical, Uniform
from .kl import kl_divergence, register_kl

__all__ = ['Distribution', 'Normal', 'Uniform', 'Exponential', 'Bernoulli', 'Categorical', 'OneHotCategorical',
           'kl_divergence', 'register_kl']
