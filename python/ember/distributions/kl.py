"""kl_divergence(p, q) = KL(p || q) by the pair of types, with a registry as
torch.distributions.kl's (register_kl(P, Q) decorates an implementation)."""
import ember
import ember.nn.functional as F
from .families import Bernoulli, Categorical, Exponential, Normal, OneHotCategorical, Uniform

__all__ = ['kl_divergence', 'register_kl']

_KL = {}


def register_kl(type_p, type_q):
    def decorator(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorator


def kl_divergence(p, q):
    for tp in type(p).__mro__:
        for tq in type(q).__mro__:
            if (tp, tq) in _KL:
                return _KL[tp, tq](p, q)
    raise NotImplementedError


def _inf_where(cond, value):
    return ember.where(cond, ember.full_like(value, float('inf')), value)


def _zero_where(cond, value):
    return ember.where(cond, ember.zeros_like(value), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _zero_where((p.probs == 0).expand_as(t), _inf_where((q.probs == 0).expand_as(t), t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


# ---- the other families' pairs (torch 1.13's registry) ----
import math  # noqa: E402

from .continuous import Cauchy, ContinuousBernoulli, Gumbel, HalfNormal, Laplace, Pareto  # noqa: E402
from .discrete import Binomial, Geometric, Poisson  # noqa: E402
from .exp_family import ExponentialFamily  # noqa: E402
from .gamma import Beta, Dirichlet, Gamma  # noqa: E402
from .independent import Independent  # noqa: E402
from .multivariate import LowRankMultivariateNormal, MultivariateNormal  # noqa: E402
from .transformed import TransformedDistribution  # noqa: E402

_EULER = 0.57721566490153286061


def _sum_rightmost(x, n):
    return x.reshape(x.shape[:x.dim() - n] + (-1,)).sum(-1) if n > 0 else x


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    s1, s0 = p.concentration1, p.concentration0
    t1, t0 = q.concentration1, q.concentration0
    total = s1 + s0
    return (ember.lgamma(total) - ember.lgamma(s1) - ember.lgamma(s0)
            - ember.lgamma(t1 + t0) + ember.lgamma(t1) + ember.lgamma(t0)
            + (s1 - t1) * ember.digamma(s1) + (s0 - t0) * ember.digamma(s0)
            + (t1 + t0 - total) * ember.digamma(total))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError('KL between Binomials where q.total_count > p.total_count is not implemented')
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    a, b = p.concentration, q.concentration
    a0 = a.sum(-1)
    return (ember.lgamma(a0) - ember.lgamma(b.sum(-1)) - (ember.lgamma(a) - ember.lgamma(b)).sum(-1)
            + ((a - b) * (ember.digamma(a) - ember.digamma(a0).unsqueeze(-1))).sum(-1))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a, b, c, d = p.concentration, p.rate, q.concentration, q.rate
    return (c * (b / d).log() + ember.lgamma(c) - ember.lgamma(a) + (a - c) * ember.digamma(a)
            + (d - b) * (a / b))


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    return -ct1.log() - ct2 + ct3 + ct1 * _EULER + (ct2 + ember.lgamma(1 + ct1) - ct3).exp() - (1 + _EULER)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(p.support.lower_bound < q.support.lower_bound, result)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._log_normalizer() + (-p.probs).log1p()
    t3 = -q._log_normalizer() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer between the natural parameters."""
    if type(p) is not type(q):
        raise NotImplementedError('The cross KL-divergence between different exponential families cannot be '
                                  'computed using Bregman divergences')
    p_nat = [n.detach().requires_grad_() for n in p._natural_params]
    q_nat = q._natural_params
    with ember.enable_grad():
        lg = p._log_normalizer(*p_nat)
        grads = ember.autograd.grad(lg.sum(), p_nat, create_graph=True)
    result = q._log_normalizer(*q_nat) - lg
    for pn, qn, g in zip(p_nat, q_nat, grads):
        result = result - _sum_rightmost((qn - pn) * g, len(q.event_shape))
    return result


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


def _batch_trace_xxt(m):
    return m.pow(2).flatten(-2).sum(-1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError('KL-divergence between two Multivariate Normals with different event shapes cannot be '
                         'computed')
    n = p.event_shape[0]
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = lq.diagonal(dim1=-2, dim2=-1).log().sum(-1) - lp.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = ember.broadcast_shapes(lq.shape[:-2], lp.shape[:-2])
    lq_b = lq.expand(tuple(batch) + (n, n))
    term2 = _batch_trace_xxt(ember.linalg.solve_triangular(lq_b, lp.expand(tuple(batch) + (n, n)), upper=False))
    diff = (q.loc - p.loc)
    batch2 = ember.broadcast_shapes(batch, diff.shape[:-1])
    term3 = ember.linalg.solve_triangular(lq.expand(tuple(batch2) + (n, n)),
                                          diff.expand(tuple(batch2) + (n,)).unsqueeze(-1), upper=False)
    return half_term1 + 0.5 * (term2 + term3.pow(2).sum((-2, -1)) - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    as_full = [MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix) for d in (p, q)]
    return _kl_mvn_mvn(*as_full)


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    return _kl_mvn_mvn(MultivariateNormal(p.loc, covariance_matrix=p.covariance_matrix), q)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    return _kl_mvn_mvn(p, MultivariateNormal(q.loc, covariance_matrix=q.covariance_matrix))


# cross-family pairs
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return (p.probs * (p.logits - q.rate.log()) + (-p.probs).log1p() + q.rate)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    e1, e2 = p.concentration1, p.concentration0
    total = e1 + e2
    mean = e1 / total
    second = e1 * (e1 + 1) / (total * (total + 1))
    t1 = (q.scale * math.sqrt(2 * math.pi)).log()
    t2 = (second - 2 * q.loc * mean + q.loc.pow(2)) / (2 * q.scale.pow(2))
    return -p.entropy() + t1 + t2


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    c, r = q.concentration, q.rate
    e_log_x = ember.digamma(p.concentration1) - ember.digamma(p.concentration1 + p.concentration0)
    return -p.entropy() + ember.lgamma(c) - c * r.log() - (c - 1) * e_log_x + r * p.mean


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * ember.log(ratio)
    return t1 + ratio + ember.lgamma(q.concentration) + q.concentration * _EULER - (1 + _EULER)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = loc_scale_ratio.exp() * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration / p.rate)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    a = p.concentration
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - a - ember.lgamma(a)
    t2 = 0.5 * (a.pow(2) + a) / beta_sqr
    t3 = q.loc * a / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (a - 1) * ember.digamma(a) + (t2 - t3 + t4) / var_normal


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = (-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio).exp()
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * ember.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common_term = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common_term.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common_term * ((-high_loc_diff).exp() - (-low_loc_diff).exp())
    return t1 - t2


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common_term = p.high - p.low
    t1 = common_term.log()
    t2 = q.concentration * q.rate.log()
    t3 = ember.lgamma(q.concentration)
    t4 = (1 - q.concentration) * (p.high * p.high.log() - p.low * p.low.log() - common_term) / common_term
    t5 = q.rate * (p.high + p.low) / 2
    return _inf_where(p.low < 0, -t1 - t2 + t3 + t4 + t5)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common_term = p.high - p.low
    t1 = ember.lgamma(q.concentration1) + ember.lgamma(q.concentration0) \
        - ember.lgamma(q.concentration1 + q.concentration0)
    # E[log x] and E[log(1 - x)] under U(low, high), from the antiderivatives of log
    t2 = (1 - q.concentration1) * (ember.xlogy(p.high, p.high) - ember.xlogy(p.low, p.low) - common_term) \
        / common_term
    t3 = -(1 - q.concentration0) * (ember.xlogy(1 - p.high, 1 - p.high) - ember.xlogy(1 - p.low, 1 - p.low)
                                    + common_term) / common_term
    t4 = common_term.log()
    return _inf_where((p.high > q.support.upper_bound) | (p.low < q.support.lower_bound), t3 + t1 - t4 + t2)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    result = t1 - t2 + (t3 + t4) / var_normal - 1
    return _inf_where(p.alpha <= 2, result)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return (((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)) / (4 * p.scale * q.scale)).log()


def _cross_entropy_cb(p, q):
    """-E_p[log q] for q a ContinuousBernoulli and p on [0, 1]."""
    return -p.mean * q.logits - (-q.probs).log1p() - q._log_normalizer()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_cb(p, q):
    return -p.entropy() + _cross_entropy_cb(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_cb(p, q):
    return _inf_where((p.high > 1) | (p.low < 0), -p.entropy() + _cross_entropy_cb(p, q))


@register_kl(ContinuousBernoulli, Exponential)
def _kl_cb_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_cb_normal(p, q):
    second = p.variance + p.mean.pow(2)
    return (-p.entropy() + 0.5 * (math.log(2 * math.pi) + q.scale.pow(2).log())
            + (second - 2 * q.loc * p.mean + q.loc.pow(2)) / (2 * q.scale.pow(2)))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_cb_uniform(p, q):
    # torch 1.13 takes a boundary equal to the support's as outside (inf), so does this
    return _inf_where((q.low >= 0) | (q.high <= 1), -p.entropy() + (q.high - q.low).log())


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    a = p.concentration
    beta_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = (a - 1) * ember.digamma(a) - ember.lgamma(a) - a
    t2 = beta_scale.log() + a / beta_scale
    t3 = loc_scale.exp() * (1 + beta_scale.reciprocal()).pow(-a) - loc_scale
    return t1 + t2 + t3


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate = p.scale * q.rate
    result = (p.alpha / scale_rate).log() - p.alpha.reciprocal() + p.alpha * scale_rate / (p.alpha - 1) - 1
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = ember.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


def _register_infinite(pairs):
    """Pairs whose support of p is not inside that of q: KL is +inf everywhere."""
    def infinite(p, q):
        shape = ember.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
        return ember.full(shape, float('inf'), dtype=p.mean.dtype)
    for a, b in pairs:
        register_kl(a, b)(infinite)


_register_infinite([(Beta, Pareto), (Exponential, Beta), (Exponential, Pareto),
                    (Exponential, Uniform), (Gamma, Beta), (Gamma, Pareto), (Gamma, Uniform), (Gumbel, Beta),
                    (Gumbel, Exponential), (Gumbel, Gamma), (Gumbel, Pareto), (Gumbel, Uniform), (Laplace, Beta),
                    (Laplace, Exponential), (Laplace, Gamma), (Laplace, Pareto), (Laplace, Uniform),
                    (Normal, Beta), (Normal, Exponential), (Normal, Gamma), (Normal, Pareto), (Normal, Uniform),
                    (Pareto, Beta), (Pareto, Uniform), (Poisson, Bernoulli), (Poisson, Binomial),
                    (Uniform, Pareto), (Exponential, ContinuousBernoulli),
                    (Gamma, ContinuousBernoulli), (Gumbel, ContinuousBernoulli), (Laplace, ContinuousBernoulli),
                    (Normal, ContinuousBernoulli), (Pareto, ContinuousBernoulli), (ContinuousBernoulli, Pareto)])
