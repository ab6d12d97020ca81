"""Matrix-parameterized families — MultivariateNormal, LowRankMultivariateNormal,
Wishart, LKJCholesky — as torch.distributions'. They factor with ember.linalg
(cholesky, solve_triangular)."""
import math

import ember
from . import constraints
from .distribution import Distribution
from .families import _shape
from .gamma import Beta, Chi2

__all__ = ['MultivariateNormal', 'LowRankMultivariateNormal', 'Wishart', 'LKJCholesky']


def _mv(mat, vec):
    return (mat @ vec.unsqueeze(-1)).squeeze(-1)


def _tri_solve_vec(tril, vec):
    """tril^-1 vec over broadcast batches."""
    batch = ember.broadcast_shapes(tril.shape[:-2], vec.shape[:-1])
    n = tril.shape[-1]
    tril = tril.expand(tuple(batch) + (n, n))
    vec = vec.expand(tuple(batch) + (n,))
    return ember.linalg.solve_triangular(tril, vec.unsqueeze(-1), upper=False).squeeze(-1)


def _precision_to_scale_tril(precision):
    """L with L L^T = P^-1, by the Cholesky factor of P with its rows and columns reversed."""
    lf = ember.linalg.cholesky(precision.flip(-2, -1))
    l_inv = lf.flip(-2, -1).transpose(-2, -1)
    eye = ember.eye(precision.shape[-1], dtype=precision.dtype)
    return ember.linalg.solve_triangular(l_inv, eye, upper=False)


def _half_log_det(tril):
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _mvlgamma(a, p):
    j = ember.arange(p, dtype=a.dtype)
    return p * (p - 1) / 4 * math.log(math.pi) + ember.lgamma(a.unsqueeze(-1) - j / 2).sum(-1)


def _matrix_param(covariance_matrix, precision_matrix, scale_tril):
    given = [x is not None for x in (covariance_matrix, precision_matrix, scale_tril)]
    if sum(given) != 1:
        raise ValueError('Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.')
    name = ('covariance_matrix', 'precision_matrix', 'scale_tril')[given.index(True)]
    value = (covariance_matrix, precision_matrix, scale_tril)[given.index(True)]
    if value.dim() < 2:
        raise ValueError(f'{name} matrix must be at least two-dimensional, with optional leading batch dimensions')
    return name, value


def _scale_tril_of(name, value):
    if name == 'scale_tril':
        return value
    if name == 'covariance_matrix':
        return ember.linalg.cholesky(value)
    return _precision_to_scale_tril(value)


class MultivariateNormal(Distribution):
    """N(loc, Sigma) in the last dim, with Sigma given as covariance_matrix, precision_matrix or scale_tril."""
    arg_constraints = {'loc': constraints.real_vector, 'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite, 'scale_tril': constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError('loc must be at least one-dimensional.')
        name, value = _matrix_param(covariance_matrix, precision_matrix, scale_tril)
        batch = ember.broadcast_shapes(value.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        setattr(self, name, value.expand(tuple(batch) + (n, n)))
        self.loc = loc.expand(tuple(batch) + (n,))
        super().__init__(batch, (n,), validate_args=validate_args)
        self._validate_params()
        self._unbroadcasted_scale_tril = _scale_tril_of(name, value)

    def __getattr__(self, name):
        # the two matrix forms not given are computed from the scale factor when asked for
        if name == 'scale_tril':
            return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)
        if name == 'covariance_matrix':
            tril = self._unbroadcasted_scale_tril
            return (tril @ tril.transpose(-2, -1)).expand(self._batch_shape + self._event_shape * 2)
        if name == 'precision_matrix':
            eye = ember.eye(self._event_shape[0], dtype=self.loc.dtype)
            inv = ember.linalg.solve_triangular(self._unbroadcasted_scale_tril, eye, upper=False)
            return (inv.transpose(-2, -1) @ inv).expand(self._batch_shape + self._event_shape * 2)
        raise AttributeError(name)

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    variance = property(lambda self: self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
        self._batch_shape + self._event_shape))

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        n = self._event_shape[0]
        batch = tuple(batch_shape)
        new.loc = self.loc.expand(batch + (n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ('covariance_matrix', 'precision_matrix', 'scale_tril'):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch + (n, n)))
        Distribution.__init__(new, batch, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        eps = ember.randn(self._extended_shape(_shape(sample_shape)), dtype=self.loc.dtype)
        return self.loc + _mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        self._validate_sample(value)
        diff = value - self.loc
        m = _tri_solve_vec(self._unbroadcasted_scale_tril, diff).pow(2).sum(-1)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + m) - _half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


class LowRankMultivariateNormal(Distribution):
    """N(loc, W W^T + diag(D)) with W = cov_factor (n x r) and D = cov_diag."""
    arg_constraints = {'loc': constraints.real_vector, 'cov_factor': constraints.independent(constraints.real, 2),
                       'cov_diag': constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError('loc must be at least one-dimensional.')
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError('cov_factor must be at least two-dimensional, with optional leading batch dimensions')
        if cov_factor.shape[-2] != n:
            raise ValueError(f'cov_factor must be a batch of matrices with shape {n} x m')
        if cov_diag.shape[-1:] != (n,):
            raise ValueError(f'cov_diag must be a batch of vectors with shape {(n,)}')
        batch = ember.broadcast_shapes(loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1])
        r = cov_factor.shape[-1]
        self.loc = loc.expand(tuple(batch) + (n,))
        self.cov_factor = cov_factor.expand(tuple(batch) + (n, r))
        self.cov_diag = cov_diag.expand(tuple(batch) + (n,))
        super().__init__(batch, (n,), validate_args=validate_args)
        self._validate_params()
        self._capacitance_tril = self._capacitance(cov_factor, cov_diag)

    @staticmethod
    def _capacitance(w, d):
        """Cholesky of I + W^T D^-1 W (r x r), the Woodbury identity's small matrix."""
        wt_dinv = w.transpose(-2, -1) / d.unsqueeze(-2)
        k = wt_dinv @ w
        return ember.linalg.cholesky(k + ember.eye(w.shape[-1], dtype=w.dtype))

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    variance = property(lambda self: self.cov_factor.pow(2).sum(-1) + self.cov_diag)

    @property
    def covariance_matrix(self):
        return self.cov_factor @ self.cov_factor.transpose(-2, -1) + self.cov_diag.diag_embed()

    @property
    def scale_tril(self):
        return ember.linalg.cholesky(self.covariance_matrix)

    @property
    def precision_matrix(self):
        return ember.linalg.inv(self.covariance_matrix)

    def expand(self, batch_shape, _instance=None):
        batch = tuple(batch_shape)
        n, r = self.cov_factor.shape[-2:]
        new = LowRankMultivariateNormal(self.loc.expand(batch + (n,)), self.cov_factor.expand(batch + (n, r)),
                                        self.cov_diag.expand(batch + (n,)), validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(_shape(sample_shape))
        r = self.cov_factor.shape[-1]
        eps_w = ember.randn(tuple(shape[:-1]) + (r,), dtype=self.loc.dtype)
        eps_d = ember.randn(shape, dtype=self.loc.dtype)
        return self.loc + _mv(self.cov_factor, eps_w) + self.cov_diag.sqrt() * eps_d

    def _log_det(self):
        return 2 * _half_log_det(self._capacitance_tril) + self.cov_diag.log().sum(-1)

    def log_prob(self, value):
        self._validate_sample(value)
        x = value - self.loc
        # x^T (W W^T + D)^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2
        dinv_x = x / self.cov_diag
        wt = self.cov_factor.transpose(-2, -1)
        y = _tri_solve_vec(self._capacitance_tril, _mv(wt, dinv_x))
        m = (x * dinv_x).sum(-1) - y.pow(2).sum(-1)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + m + self._log_det())

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


class Wishart(Distribution):
    """Wishart(df, Sigma) on positive definite p x p matrices; Sigma given as covariance_matrix,
    precision_matrix or scale_tril; df > p - 1."""
    arg_constraints = {'covariance_matrix': constraints.positive_definite,
                       'precision_matrix': constraints.positive_definite, 'scale_tril': constraints.lower_cholesky,
                       'df': constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        name, value = _matrix_param(covariance_matrix, precision_matrix, scale_tril)
        p = value.shape[-1]
        df = df if isinstance(df, ember.Tensor) else ember.tensor(float(df), dtype=value.dtype)
        batch = ember.broadcast_shapes(value.shape[:-2], df.shape)
        self.df = df.expand(batch)
        setattr(self, name, value.expand(tuple(batch) + (p, p)))
        super().__init__(batch, (p, p), validate_args=validate_args)
        if self._validate_args and not bool((self.df > p - 1).all()):
            raise ValueError(f'Value of df={df} expected to be greater than ndim - 1 = {p - 1}.')
        self._validate_params()
        self._unbroadcasted_scale_tril = _scale_tril_of(name, value)
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1) - ember.arange(p, dtype=value.dtype).expand(
            tuple(batch) + (p,)), validate_args=False)

    def __getattr__(self, name):
        if name in ('scale_tril', 'covariance_matrix', 'precision_matrix'):
            shape = self._batch_shape + self._event_shape
            tril = self._unbroadcasted_scale_tril
            if name == 'scale_tril':
                return tril.expand(shape)
            if name == 'covariance_matrix':
                return (tril @ tril.transpose(-2, -1)).expand(shape)
            inv = ember.linalg.solve_triangular(tril, ember.eye(tril.shape[-1], dtype=tril.dtype), upper=False)
            return (inv.transpose(-2, -1) @ inv).expand(shape)
        raise AttributeError(name)

    def _df(self):
        return self.df.reshape(tuple(self.df.shape) + (1, 1))

    mean = property(lambda self: self._df() * self.covariance_matrix)

    @property
    def mode(self):
        p = self._event_shape[-1]
        factor = self._df() - p - 1
        factor = ember.where(factor <= 0, ember.full_like(factor, float('nan')), factor)
        return factor * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag = v.diagonal(dim1=-2, dim2=-1)
        return self._df() * (v.pow(2) + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        """A with X = L A A^T L^T: sqrt(chi2(df - i)) on the diagonal, N(0, 1) below."""
        shape = _shape(sample_shape)
        p = self._event_shape[-1]
        noise = ember.randn(shape + tuple(self._batch_shape) + (p, p), dtype=self.df.dtype).tril(-1)
        diag = self._dist_chi2.rsample(shape).sqrt()
        return noise + diag.diag_embed()

    def rsample(self, sample_shape=(), max_try_correction=None):
        a = self._bartlett(sample_shape)
        la = self._unbroadcasted_scale_tril @ a
        return la @ la.transpose(-2, -1)

    def log_prob(self, value):
        self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        half_logdet_sigma = _half_log_det(tril)
        logdet_x = 2 * _half_log_det(ember.linalg.cholesky(value))
        # tr(Sigma^-1 X) = |L^-1 chol(X)|_F^2
        inner = ember.linalg.solve_triangular(tril.expand(tuple(value.shape[:-2]) + (p, p)),
                                              ember.linalg.cholesky(value), upper=False)
        trace = inner.pow(2).sum((-2, -1))
        return (0.5 * (nu - p - 1) * logdet_x - 0.5 * trace - 0.5 * nu * p * math.log(2)
                - nu * half_logdet_sigma - _mvlgamma(0.5 * nu, p))

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        j = ember.arange(p, dtype=nu.dtype)
        psi_p = ember.digamma(0.5 * nu.unsqueeze(-1) - j / 2).sum(-1)
        return ((p + 1) * _half_log_det(self._unbroadcasted_scale_tril) + 0.5 * p * (p + 1) * math.log(2)
                + _mvlgamma(0.5 * nu, p) - 0.5 * (nu - p - 1) * psi_p + 0.5 * nu * p)


class LKJCholesky(Distribution):
    """Cholesky factors of dim x dim correlation matrices with density proportional to
    det(C)^(concentration - 1) (Lewandowski, Kurowicka and Joe, 2009); drawn by the onion method."""
    arg_constraints = {'concentration': constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1., validate_args=None):
        if dim < 2:
            raise ValueError(f'Expected dim to be an integer greater than or equal to 2. Found dim={dim}.')
        self.dim = dim
        self.concentration = concentration if isinstance(concentration, ember.Tensor) else \
            ember.tensor(float(concentration))
        super().__init__(self.concentration.shape, (dim, dim), validate_args=validate_args)
        self._validate_params()
        # row i's squared off-diagonal norm is Beta(i/2, concentration + (dim - 2 - i)/2)
        offset = ember.cat([ember.zeros(1, dtype=self.concentration.dtype),
                            ember.arange(dim - 1, dtype=self.concentration.dtype)])
        c = self.concentration.unsqueeze(-1)
        self._beta = Beta(offset + 0.5, c + 0.5 * (dim - 2) - 0.5 * offset, validate_args=False)

    def expand(self, batch_shape, _instance=None):
        new = LKJCholesky(self.dim, self.concentration.expand(tuple(batch_shape)), validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with ember.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(_shape(sample_shape))
            u = ember.randn(shape, dtype=y.dtype).tril(-1)
            u = u / u.norm(dim=-1, keepdim=True).clamp(min=ember.finfo(y.dtype).tiny)
            first = ember.ones(self.dim, 1, dtype=y.dtype)
            first[0] = 0
            w = y.sqrt() * u * first
            diag = (1 - w.pow(2).sum(-1)).clamp(min=ember.finfo(y.dtype).tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        self._validate_sample(value)
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = ember.arange(2, self.dim + 1, dtype=value.dtype)
        power = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (power * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        log_norm = 0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1) - dm1 * ember.lgamma(alpha)
        return unnormalized - log_norm
