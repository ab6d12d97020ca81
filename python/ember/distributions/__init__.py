"""ember.distributions: torch.distributions' interface — Distribution (batch and
event shapes, sample/rsample, log_prob, entropy, moments, cdf/icdf, expand,
support, argument validation), its families, the transforms and constraints with
their registry (biject_to, transform_to), and kl_divergence. Written with Ember's
ops, so log_prob and rsample are differentiable in the parameters."""
from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import (Cauchy, ContinuousBernoulli, Gumbel, HalfCauchy, HalfNormal, Laplace, LogisticNormal,
                         LogNormal, Pareto, RelaxedBernoulli, RelaxedOneHotCategorical, Weibull)
from .discrete import Binomial, Geometric, Multinomial, NegativeBinomial, OneHotCategoricalStraightThrough, Poisson
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .families import Bernoulli, Categorical, Exponential, Normal, OneHotCategorical, Uniform
from .gamma import Beta, Chi2, Dirichlet, FisherSnedecor, Gamma, Kumaraswamy, StudentT
from .independent import Independent, MixtureSameFamily
from .kl import kl_divergence, register_kl
from .multivariate import LKJCholesky, LowRankMultivariateNormal, MultivariateNormal, Wishart
from .transformed import TransformedDistribution
from .transforms import *  # noqa: F401,F403 (torch.distributions re-exports the transforms)
from .von_mises import VonMises

__all__ = ['Bernoulli', 'Beta', 'Binomial', 'Categorical', 'Cauchy', 'Chi2', 'ContinuousBernoulli', 'Dirichlet',
           'Distribution', 'Exponential', 'ExponentialFamily', 'FisherSnedecor', 'Gamma', 'Geometric', 'Gumbel',
           'HalfCauchy', 'HalfNormal', 'Independent', 'Kumaraswamy', 'LKJCholesky', 'Laplace', 'LogNormal',
           'LogisticNormal', 'LowRankMultivariateNormal', 'MixtureSameFamily', 'Multinomial',
           'MultivariateNormal', 'NegativeBinomial', 'Normal', 'OneHotCategorical',
           'OneHotCategoricalStraightThrough', 'Pareto', 'Poisson', 'RelaxedBernoulli', 'RelaxedOneHotCategorical',
           'StudentT', 'TransformedDistribution', 'Uniform', 'VonMises', 'Weibull', 'Wishart', 'biject_to',
           'constraints', 'kl_divergence', 'register_kl', 'transform_to', 'transforms'] + transforms.__all__
