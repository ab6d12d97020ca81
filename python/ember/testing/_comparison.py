"""ember.testing.assert_close: compares tensors, numbers, NumPy arrays and nested sequences and
mappings of them with per-dtype tolerances, and raises AssertionError with torch.testing's messages
(the counts of mismatched elements, the greatest absolute and relative differences and their index,
and for nested inputs which item failed)."""
import builtins
import collections.abc
import numbers

from .. import _C
from .._functions import isclose, promote_types
from .._tensor import Tensor

# (rtol, atol) per dtype; other dtypes (integers, bool) compare exactly.
DTYPE_PRECISIONS = {_C.float16: (1e-3, 1e-5), _C.bfloat16: (1.6e-2, 1e-5), _C.float32: (1.3e-6, 1e-5),
                    _C.float64: (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed check: the exception type and message to raise, and the path of the failing item."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, []


def default_tolerances(*dtypes):
    rtols, atols = zip(*[DTYPE_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _tolerances(dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes)


def _mismatch_message(identifier, default, equality, extra, diffs):
    """torch.testing's text: '<what> are not close!', the extra line, then one line per difference."""
    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += extra + '\n'
    for kind, diff, index, tol in diffs:
        line = f'{kind.title()} difference: {diff}' if index is None else \
            f'Greatest {kind} difference: {diff} at index {index}'
        msg += line + ('' if equality else f' (up to {tol} allowed)') + '\n'
    return msg.strip()


def _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The values for attribute 'dtype' do not match: {type(actual)} != "
                        f"{type(expected)}.")
    rtol, atol = _tolerances([_C.float64] if isinstance(actual, float) or isinstance(expected, float)
                             else [_C.int64], rtol, atol)
    a, b = _C.tensor(actual, dtype=_C.float64), _C.tensor(expected, dtype=_C.float64)
    if isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).item():
        return
    abs_diff = abs(actual - expected)
    rel_diff = float('inf') if expected == 0 else abs_diff / abs(expected)
    raise _Mismatch(AssertionError, _mismatch_message(
        None, 'Scalars', rtol == 0 and atol == 0, None,
        [('absolute', abs_diff, None, atol), ('relative', rel_diff, None, rtol)]))


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    return _C.from_numpy(x)


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_dtype, check_stride, identifier):
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    if actual.shape != expected.shape:
        raise _Mismatch(AssertionError, f"The values for attribute 'shape' do not match: {actual.shape} != "
                        f"{expected.shape}.")
    if check_dtype and actual.dtype != expected.dtype:
        raise _Mismatch(AssertionError, f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                        f"{expected.dtype}.")
    if check_stride and actual.stride() != expected.stride():
        raise _Mismatch(AssertionError, f"The values for attribute 'stride()' do not match: {actual.stride()} != "
                        f"{expected.stride()}.")
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol)
    if actual.dtype != expected.dtype:
        common = promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    # compare in the widest dtype of the category (bool counts as integral)
    wide = _C.float64 if actual.is_floating_point() else _C.int64
    actual, expected = actual.detach().to(wide), expected.detach().to(wide)
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if builtins.bool(matches.all()):
        return
    equality = rtol == 0 and atol == 0
    if actual.dim() == 0:
        a, b = actual.item(), expected.item()
        abs_diff = abs(a - b)
        rel_diff = float('inf') if b == 0 else abs_diff / abs(b)
        raise _Mismatch(AssertionError, _mismatch_message(
            identifier, 'Scalars', equality, None,
            [('absolute', abs_diff, None, atol), ('relative', rel_diff, None, rtol)]))
    mismatches = ~matches
    total, n = builtins.int(mismatches.sum()), matches.numel()
    extra = f'Mismatched elements: {total} / {n} ({total / n:.1%})'
    a, b, off = actual.reshape(-1), expected.reshape(-1), matches.reshape(-1)
    abs_diff = _C.abs(a - b)
    abs_diff[off] = 0
    rel_diff = abs_diff / _C.abs(b)
    rel_diff[off] = 0
    diffs = []
    for kind, diff, tol in (('absolute', abs_diff, atol), ('relative', rel_diff, rtol)):
        value, flat = diff.max(0)
        diffs.append((kind, value.item(), _unravel(builtins.int(flat), actual.shape), tol))
    raise _Mismatch(AssertionError, _mismatch_message(identifier, 'Tensor-likes', equality, extra, diffs))


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        flat, k = divmod(flat, size)
        index.append(k)
    return tuple(reversed(index))


def _is_array(x):
    return type(x).__module__ == 'numpy' and type(x).__name__ == 'ndarray'


def _compare(actual, expected, options):
    if isinstance(actual, (Tensor, bool, numbers.Number)) or _is_array(actual):
        tensor_like = (Tensor,) if isinstance(actual, Tensor) else ()
        if isinstance(actual, Tensor) and isinstance(expected, Tensor) or \
                _is_array(actual) and _is_array(expected):
            if not options['allow_subclasses'] and type(actual) is not type(expected):
                raise _Mismatch(TypeError, f'Both inputs have to be of the same type, but got {type(actual)} and '
                                f'{type(expected)}.')
            return _compare_tensors(actual, expected, options['rtol'], options['atol'], options['equal_nan'],
                                    options['check_dtype'], options['check_stride'], None)
        if not tensor_like and isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number) \
                and not isinstance(actual, complex) and not isinstance(expected, complex):
            return _compare_scalars(actual, expected, options['rtol'], options['atol'], options['equal_nan'],
                                    options['check_dtype'])
    elif isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str) and \
            isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f'The length of the sequences mismatch: {len(actual)} != {len(expected)}')
        for k, (a, e) in enumerate(zip(actual, expected)):
            _nested(k, a, e, options)
        return
    elif isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        keys_a, keys_e = set(actual.keys()), set(expected.keys())
        if keys_a != keys_e:
            missing, extra = keys_e - keys_a, keys_a - keys_e
            raise _Mismatch(AssertionError, f'The keys of the mappings do not match:\nMissing keys in the actual '
                            f'mapping: {sorted(missing, key=repr)}\nAdditional keys in the actual mapping: '
                            f'{sorted(extra, key=repr)}')
        for key in sorted(keys_a, key=repr) if not isinstance(actual, collections.OrderedDict) else actual:
            _nested(key, actual[key], expected[key], options)
        return
    raise _Mismatch(TypeError, f'No comparison pair was able to handle inputs of type {type(actual)} and '
                    f'{type(expected)}.')


def _nested(key, actual, expected, options):
    try:
        _compare(actual, expected, options)
    except _Mismatch as m:
        m.path.insert(0, key)
        raise


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Asserts that actual and expected are close: |actual - expected| <= atol + rtol * |expected|
    elementwise, with the dtype's default tolerances when rtol and atol are omitted (both or neither
    must be given). Inputs may be tensors, numbers, NumPy arrays, or sequences and mappings of them."""
    if (rtol is None) != (atol is None):
        _tolerances((), rtol, atol)
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, options)
    except _Mismatch as m:
        text = m.message
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        elif m.path:
            text += '\n\nThe failure occurred for item ' + ''.join(f'[{k!r}]' for k in m.path)
        raise m.kind(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=''):
    """Deprecated: use assert_close (this one broadcasts tensor-likes and defaults equal_nan to True)."""
    import warnings
    warnings.warn('`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future '
                  'release. Please use `torch.testing.assert_close()` instead.', FutureWarning)
    if not isinstance(actual, Tensor):
        actual = _C.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _C.tensor(expected, dtype=actual.dtype)
    expected = expected.expand_as(actual).to(actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual.dtype, expected.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                 msg=msg or None)
