"""torch functions and Tensor methods that are other Ember ops under another
name or a few of them combined: PyTorch's aliases (arccos, multiply, greater,
...), the in-place function forms (torch.exp_(t) is t.exp_()), whole-tensor
comparisons (allclose, isclose, equal), broadcasting and splitting helpers,
small math (cdist, cross, cov, trapezoid, ...), dtype rules (promote_types,
result_type, can_cast) and the RNG state. Composites of recorded ops, so they
are differentiable wherever their parts are."""
import builtins
import collections
import functools
import itertools
import math
import warnings

from . import _C
from ._argcheck import MAX_PIECES, accepts, as_int, check, check_count, param_names
from ._tensor import Tensor

# alias -> the Ember op it names (each also as a Tensor method and, where the
# op has one, an in-place method alias_)
ALIASES = {
    'absolute': 'abs', 'arccos': 'acos', 'arccosh': 'acosh', 'arcsin': 'asin', 'arcsinh': 'asinh',
    'arctan': 'atan', 'arctan2': 'atan2', 'arctanh': 'atanh', 'multiply': 'mul', 'divide': 'div',
    'subtract': 'sub', 'true_divide': 'div', 'greater': 'gt', 'greater_equal': 'ge', 'less': 'lt',
    'less_equal': 'le', 'not_equal': 'ne', 'negative': 'neg', 'fix': 'trunc',
}
# torch.<op>_(t, ...) functions: the in-place method of t
INPLACE_FUNCTIONS = (
    'abs_', 'acos_', 'acosh_', 'asin_', 'asinh_', 'atan_', 'atanh_', 'ceil_', 'clamp_', 'clip_', 'cos_', 'cosh_',
    'erf_', 'erfc_', 'exp2_', 'exp_', 'expm1_', 'fill_', 'floor_', 'frac_', 'gcd_', 'lcm_', 'log10_', 'log1p_',
    'log2_', 'log_', 'nan_to_num_', 'neg_', 'reciprocal_', 'round_', 'rsqrt_', 'sigmoid_', 'sin_', 'sinh_', 'sqrt_',
    'square_', 'tan_', 'tanh_', 'trunc_', 'xlogy_', 'zero_', 'arccos_', 'arccosh_', 'arcsin_', 'arcsinh_',
    'arctan_', 'arctanh_', 'negative_', 'fix_', 'deg2rad_', 'rad2deg_', 'logit_', 'sinc_',
)


_Aminmax = collections.namedtuple('aminmax', ['min', 'max'])


def _method_of(name):
    def method(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    return method


def _function_of(name):
    def function(input, *args, **kwargs):
        check(name, 'input', 1, input, 'Tensor')
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = name
    return function


# ---- whole-tensor comparisons ---------------------------------------------------------------
@accepts(input='Tensor', other='Tensor', rtol='float', atol='float', equal_nan='bool')
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol |other| elementwise; equal values (infinities too) are close,
    nans only with equal_nan."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype} did not match {other.dtype}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input == other
    inexact = input.is_floating_point() or input.is_complex()  # complex: |input - other| is the modulus
    if equal_nan and inexact:
        close = close | ((input != input) & (other != other))
    if inexact and (rtol or atol):
        error = _C.abs(input - other)
        close = close | (_C.isfinite(error) & (error <= atol + rtol * _C.abs(other)))
    elif rtol or atol:  # integers: the bound in float64, as PyTorch
        error = _C.abs(input.double() - other.double())
        close = close | (error <= atol + rtol * _C.abs(other.double()))
    return close


@accepts(input='Tensor', other='Tensor', rtol='float', atol='float', equal_nan='bool')
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


@accepts(input='Tensor', other='Tensor')
def equal(input, other):
    """True when both have the same size and elements."""
    return input.shape == other.shape and builtins.bool((input == other).all())


# ---- broadcasting -----------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    result = []
    for shape in shapes:
        shape = (shape,) if isinstance(shape, builtins.int) else tuple(shape)
        for k, n in enumerate(reversed(shape)):
            if n < 0:
                raise RuntimeError("Trying to create tensor with negative dimension {}: {}".format(n, list(shape)))
            if k == len(result):
                result.append(n)
            elif result[k] == 1 or n == result[k]:
                result[k] = n
            elif n != 1:
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape")
    return _C.Size(tuple(reversed(result)))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


@accepts(input='Tensor')
def broadcast_to(input, size):
    return input.expand(size)


def _atleast(ndim, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(ndim, (t,)) for t in tensors[0])
    out = []
    for t in tensors:
        if t.dim() == 0:
            t = t.reshape((1,) * ndim)
        elif t.dim() == 1 and ndim >= 2:
            t = t.reshape((1, t.shape[0], 1)[:ndim])
        elif t.dim() == 2 and ndim == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


@accepts(input='Tensor')
def ravel(input):
    return input.reshape(-1)


@accepts(tensors='Tensors')
def column_stack(tensors, *, out=None):
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return _C.hstack(cols) if out is None else _C.hstack(cols, out=out)


# ---- splitting ---------------------------------------------------------------------------------
@accepts(input='Tensor', dim='dim')
def tensor_split(input, indices_or_sections, dim=0):
    """numpy.array_split: n nearly equal parts (the first size % n one longer), or cuts at indices."""
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        if indices_or_sections.dim() > 1 or indices_or_sections.is_floating_point():
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               "one-dimensional tensor, but got a tensor with {} dims".format(
                                   indices_or_sections.dim()))
        indices_or_sections = (indices_or_sections.item() if indices_or_sections.dim() == 0
                               else indices_or_sections.tolist())
    if isinstance(indices_or_sections, builtins.int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        check_count('tensor_split: sections', n)  # each a tensor, empty ones past the size: refuse, not loop
        q, r = divmod(size, n)
        cuts, at = [], 0
        for k in range(n - 1):
            at += q + (1 if k < r else 0)
            cuts.append(at)
    elif isinstance(indices_or_sections, (list, tuple)) and all(as_int(c) is not None for c in indices_or_sections):
        cuts = [as_int(c) for c in indices_or_sections]
    else:
        raise TypeError("tensor_split(): argument 'indices_or_sections' (position 2) must be int, tuple of ints "
                        f"or Tensor, not {type(indices_or_sections).__name__}")
    parts, start = [], 0
    for cut in cuts + [size]:  # part k is input[cut_{k-1}:cut_k] with Python's slice rules
        cut = builtins.min(builtins.max(cut + size if cut < 0 else cut, 0), size)
        parts.append(input.narrow(dim, start, builtins.max(cut - start, 0)))
        start = cut
    return tuple(parts)


def _numpy_split(name, dim_of, min_dims):
    def split(input, indices_or_sections):
        if input.dim() < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
                               f"tensor with {input.dim()} dimensions!")
        dim = dim_of(input)
        if isinstance(indices_or_sections, builtins.int) and (
                indices_or_sections == 0 or input.shape[dim] % indices_or_sections != 0):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {input.shape[dim]} is not divisible by the split_size "
                               f"{indices_or_sections}!")
        return tensor_split(input, indices_or_sections, dim)
    split.__name__ = name
    return split


hsplit = _numpy_split('hsplit', lambda t: 0 if t.dim() == 1 else 1, 1)
vsplit = _numpy_split('vsplit', lambda t: 0, 2)
dsplit = _numpy_split('dsplit', lambda t: 2, 3)


@accepts(input='Tensor', dim='dim')
def split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


# ---- small math ------------------------------------------------------------------------------
def _float_only(name, input):
    if not input.is_floating_point():
        raise RuntimeError(f"{name} is not supported for integer inputs" if input.dtype != _C.bool
                           else f"{name} is not supported for bool tensors.")


@accepts(input='Tensor')
def deg2rad(input):
    _float_only('deg2rad', input)
    return input * (math.pi / 180)


@accepts(input='Tensor')
def rad2deg(input):
    _float_only('rad2deg', input)
    return input * (180 / math.pi)


@accepts(input='Tensor', eps='float?')
def logit(input, eps=None):
    x = input if eps is None else input.clamp(eps, 1 - eps)
    return _C.log(x / (1 - x))


@accepts(input='Tensor')
def signbit(input):
    """True where the sign bit is set (-0.0 included)."""
    if input.dtype == _C.bool:
        return _C.zeros_like(input, dtype=_C.bool)
    if not input.is_floating_point():
        return input < 0
    return _C.copysign(_C.ones_like(input), input) < 0


@accepts(input='Tensor', other='Tensor', out='Tensor?')
def inner(input, other, *, out=None):
    if input.dim() == 0 or other.dim() == 0:
        result = input * other
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError("inner() the last dimension must match on both input tensors but got shapes {} "
                               "and {}".format(list(input.shape), list(other.shape)))
        result = _C.tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1]))
    return result if out is None else out.resize_(result.shape).copy_(result)


@accepts(input='Tensor', other='Tensor')
def dist(input, other, p=2):
    return (input - other).norm(p)


@accepts(input='Tensor', dim='dim?', keepdim='bool')
def aminmax(input, *, dim=None, keepdim=False, out=None):
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    dims = tuple(range(input.dim())) if dim is None else dim
    lo, hi = _C.amin(input, dims, keepdim), _C.amax(input, dims, keepdim)
    if dim is not None and keepdim and input.dim() == 0:  # PyTorch keeps a reduced 0-d input as (1,)
        lo, hi = lo.reshape(1), hi.reshape(1)
    if out is None:
        return _Aminmax(lo, hi)
    for o in out:
        if o.dtype != input.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {input.dtype}, but got {o.dtype} instead")
    for o, r in zip(out, (lo, hi)):
        o.resize_(r.shape).copy_(r)
    return _Aminmax(*out)


@accepts(input='Tensor')
def sinc(input):
    """sin(pi x) / (pi x), 1 at 0 (the division taken on a safe value there, so the gradient is 0)."""
    zero = input == 0
    safe = _C.where(zero, _C.ones_like(input), input) * math.pi
    return _C.where(zero, _C.ones_like(safe), _C.sin(safe) / safe)


@accepts(x1='Tensor', x2='Tensor', p='float')
def cdist(x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'):
    """p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R)."""
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: {} X2: {}".format(
            x1.shape[-1], x2.shape[-1]))
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, dim=-1)


@accepts(input='Tensor', other='Tensor', dim='dim?', out='Tensor?')
def cross(input, other, dim=None, *, out=None):
    """Cross products of 3-vectors along dim (default: the first dim of size 3), broadcasting."""
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    a, b = input, other
    if dim is None:
        dim = next((d for d, n in enumerate(broadcast_shapes(a.shape, b.shape)) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError("linalg.cross: inputs dimension {} must have length 3. Got {} and {}".format(
            dim, a.shape[dim], b.shape[dim]))
    a1, a2, a3 = a.unbind(dim)
    b1, b2, b3 = b.unbind(dim)
    result = _C.stack([a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1], dim)
    return result if out is None else out.resize_(result.shape).copy_(result)


def block_diag(*tensors):
    """The tensors (0-d, 1-d as a row, 2-d) on the diagonal of a zero matrix."""
    blocks = []
    for k, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {} has {} "
                               "dimensions".format(k, t.dim()))
        blocks.append(t.reshape(1, -1) if t.dim() < 2 else t)
    if not blocks:
        return _C.empty(1, 0)
    dtype = blocks[0].dtype
    for t in blocks[1:]:
        dtype = promote_types(dtype, t.dtype)
    width = builtins.sum(t.shape[1] for t in blocks)
    rows, left = [], 0
    for t in blocks:
        r, c = t.shape
        rows.append(_C.cat([_C.zeros(r, left, dtype=dtype), t.to(dtype), _C.zeros(r, width - left - c, dtype=dtype)],
                           1))
        left += c
    return _C.cat(rows, 0)


def _cov_check_weights(name, w, n):
    """PyTorch's checks of cov's fweights (integral) and aweights (floating): 1-d, n of them, none negative."""
    if w is None:
        return
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.dim()} dimensions")
    if name == 'fweights' and (w.is_floating_point() or w.is_complex() or w.dtype == _C.bool):
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with {w.dtype} dtype")
    if name == 'aweights' and not w.is_floating_point():
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                           f"{w.dtype} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if n > 0 and builtins.bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@accepts(input='Tensor', correction='int', fweights='Tensor?', aweights='Tensor?')
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the rows (variables) over the columns (observations), optionally weighted."""
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n = x.shape[1]
    _cov_check_weights('fweights', fweights, n)
    _cov_check_weights('aweights', aweights, n)
    w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else n
    if w is not None and not builtins.bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w).sum(1) / w_sum if w is not None else x.mean(1)
    if w is None or correction == 0:
        norm_factor = w_sum - correction if w is None else w_sum
    elif aweights is None:
        norm_factor = w_sum - correction
    else:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if builtins.float(norm_factor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0")
        norm_factor = 0.0
    xm = x - avg.unsqueeze(1)
    xw = (xm if w is None else xm * w).t()
    c = xm.matmul(xw.conj() if xw.is_complex() else xw)  # complex: E[(x - mean) conj(x - mean)^T]
    return (c / norm_factor).squeeze()


@accepts(input='Tensor')
def corrcoef(input):
    """Pearson correlation coefficients of the rows, clipped to [-1, 1]."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    std = _C.sqrt(c.diagonal())
    r = c / std.unsqueeze(1) / std.unsqueeze(0)
    if r.is_complex():  # each part clipped, as PyTorch
        return _C.view_as_complex(_C.view_as_real(r).clamp(-1, 1))
    return r.clamp(-1, 1)


def _interval_areas(y, x, dx, dim):
    n = y.shape[dim]
    left, right = y.narrow(dim, 0, builtins.max(n - 1, 0)), y.narrow(dim, builtins.min(1, n), builtins.max(n - 1, 0))
    if x is None:
        return (left + right) * ((1 if dx is None else dx) / 2)
    if x.dim() == 1:
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    d = x.narrow(dim, 1, builtins.max(x.shape[dim] - 1, 0)) - x.narrow(dim, 0, builtins.max(x.shape[dim] - 1, 0))
    return d * (left + right) / 2


@accepts(y='Tensor', dim='dim')
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim, with sample points x or a constant spacing dx (default 1)."""
    if x is not None and not isinstance(x, Tensor):  # trapezoid(y, dx) as a positional number
        x, dx = None, x
    return _interval_areas(y, x, dx, dim).sum(dim)


@accepts(y='Tensor', dim='dim')
def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@accepts(y='Tensor', dim='dim')
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    if x is not None and not isinstance(x, Tensor):
        x, dx = None, x
    return _interval_areas(y, x, dx, dim).cumsum(dim)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` is in test_elements (either may be a number)."""
    e = elements if isinstance(elements, Tensor) else _C.tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else _C.tensor(test_elements)
    found = (e.unsqueeze(-1) == t.reshape(-1)).any(-1)
    return ~found if invert else found


@accepts(input='Tensor', r='int', with_replacement='bool')
def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-d tensor's elements, as rows (PyTorch's order)."""
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    check_count('combinations: r', r)  # (rows of r elements: a huge r is refused, as by PyTorch)
    n = input.shape[0]
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if count * builtins.max(r, 1) > MAX_PIECES ** 2:  # the index table is built in Python: bound it
        raise RuntimeError(f"combinations: {count} combinations of {r} elements are more than Ember supports")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = list(pick(range(n), r)) if count else []  # (itertools allocates r slots even for none)
    if r == 0:
        return _C.empty(0, dtype=input.dtype)
    # (no combinations: an empty index, so that the result still has input's history)
    return input[_C.tensor(index, dtype=_C.int64) if index else _C.zeros(0, r, dtype=_C.int64)]


# ---- facts ---------------------------------------------------------------------------------------
@accepts(input='Tensor')
def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with {} is ambiguous".format(
            "no values" if input.numel() == 0 else "more than one value"))
    return input.item() != 0


@accepts(input='Tensor', other='Tensor')
def is_same_size(input, other):
    return input.shape == other.shape


@accepts(input='Tensor')
def is_signed(input):
    return input.dtype not in (_C.uint8, _C.bool)


def _probe(x):
    """A stand-in with x's promotion category: a number, a 0-d or a dimensioned tensor."""
    if not isinstance(x, Tensor):
        return x
    return _C.zeros((), dtype=x.dtype) if x.dim() == 0 else _C.empty((0,), dtype=x.dtype)


def promote_types(type1, type2):
    """The dtype PyTorch's promotion gives two tensors of these dtypes."""
    return (_C.empty((0,), dtype=type1) + _C.empty((0,), dtype=type2)).dtype


def result_type(tensor1, tensor2):
    """The dtype of an arithmetic result of two operands (tensors or Python numbers)."""
    if not isinstance(tensor1, Tensor) and not isinstance(tensor2, Tensor):
        return promote_types(_C.tensor(tensor1).dtype, _C.tensor(tensor2).dtype)
    return (_probe(tensor1) + _probe(tensor2)).dtype if isinstance(tensor1, Tensor) else \
        (_probe(tensor2) + _probe(tensor1)).dtype


def can_cast(from_, to):
    """Ember's (and PyTorch's) casting rule: no complex -> real, no floating -> integral, nothing but
    bool -> bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return not (from_ != _C.bool and to == _C.bool)


# ---- the default generator's state -------------------------------------------------------------
def get_rng_state():
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    _C.default_generator.set_state(new_state)


def seed():
    return _C.default_generator.seed()


FUNCTIONS = {f.__name__: f for f in (
    isclose, allclose, equal, broadcast_shapes, broadcast_tensors, broadcast_to, atleast_1d, atleast_2d,
    atleast_3d, ravel, column_stack, tensor_split, hsplit, vsplit, dsplit, split_with_sizes, deg2rad, rad2deg,
    logit, signbit, inner, dist, aminmax, is_nonzero, is_same_size, is_signed, promote_types, result_type,
    can_cast, get_rng_state, set_rng_state, seed, sinc, cdist, cross, block_diag, cov, corrcoef, trapezoid, trapz,
    cumulative_trapezoid, isin, combinations)}
# the ones torch.Tensor has as methods
METHODS = ('isclose', 'allclose', 'equal', 'broadcast_to', 'ravel', 'tensor_split', 'hsplit', 'vsplit', 'dsplit',
           'split_with_sizes', 'deg2rad', 'rad2deg', 'logit', 'signbit', 'inner', 'dist', 'aminmax', 'is_nonzero',
           'is_same_size', 'is_signed', 'sinc', 'cross', 'cov', 'corrcoef')


def _without_out(fn):
    """fn as a Tensor method: PyTorch's methods take no out= (a TypeError, as from the C binding)."""
    if 'out' not in sum(param_names(fn), ()):
        return fn

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        if 'out' in kwargs:
            raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'out'")
        return fn(self, *args, **kwargs)
    return method


def _inplace_method(fn):
    def method(self, *args, **kwargs):
        return self.copy_(fn(self, *args, **kwargs))
    return method


def install(namespace):
    """Adds the functions to `namespace` (ember's globals) and the methods to Tensor."""
    for alias, op in ALIASES.items():
        namespace.setdefault(alias, namespace[op])
        if not hasattr(Tensor, alias):
            setattr(Tensor, alias, _method_of(op))
        if hasattr(Tensor, op + '_') and not hasattr(Tensor, alias + '_'):
            setattr(Tensor, alias + '_', _method_of(op + '_'))
    for name, fn in FUNCTIONS.items():
        namespace.setdefault(name, fn)
    for name in METHODS:
        if not hasattr(Tensor, name):
            setattr(Tensor, name, _without_out(FUNCTIONS[name]))
    for name in ('deg2rad', 'rad2deg', 'logit', 'sinc'):  # in place: computed, then written back
        if not hasattr(Tensor, name + '_'):
            setattr(Tensor, name + '_', _inplace_method(FUNCTIONS[name]))
    for name in INPLACE_FUNCTIONS:
        if hasattr(Tensor, name):
            namespace.setdefault(name, _function_of(name))
    from . import _functions_extra
    _functions_extra.install(namespace)
