"""ember.testing: assert_close and make_tensor for tests (torch.testing), and its deprecated
dtype lists. The lists hold the complex dtypes where this build of Ember has them; the lists of
complex dtypes only are stubs until it does."""
from ._comparison import assert_close, assert_allclose  # noqa: F401
from ._creation import make_tensor, make_non_contiguous  # noqa: F401
from .. import _C
from .._C import rand, randn  # noqa: F401
from .._stubs import not_implemented

_FLOATING = (_C.float32, _C.float64)
_INTEGRAL = (_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64)


def empty_types():
    return ()


def floating_types():
    return _FLOATING


def floating_types_and(*dtypes):
    return _FLOATING + dtypes


def floating_types_and_half():
    return _FLOATING + (_C.half,)


def integral_types():
    return _INTEGRAL


def integral_types_and(*dtypes):
    return _INTEGRAL + dtypes


def all_types():
    return _FLOATING + _INTEGRAL


def all_types_and(*dtypes):
    return all_types() + dtypes


def all_types_and_half():
    return all_types() + (_C.half,)


def get_all_int_dtypes():
    return list(_INTEGRAL)


def get_all_fp_dtypes(include_half=True, include_bfloat16=True):
    return list(_FLOATING) + [_C.float16] * include_half + [_C.bfloat16] * include_bfloat16


def get_all_device_types():
    from .. import cuda
    return ['cpu', 'cuda'] if cuda.is_available() else ['cpu']


# complex dtypes, where this build of Ember has them
_COMPLEX = tuple(getattr(_C, n) for n in ('complex64', 'complex128') if hasattr(_C, n))


def get_all_dtypes(include_half=True, include_bfloat16=True, include_bool=True, include_complex=True,
                   include_complex32=False, include_qint=False):
    """Every dtype (torch's order): integers, floating (half, bfloat16 optional), bool, complex
    (the complex dtypes Ember has). Quantized dtypes do not exist in Ember."""
    if include_qint:
        raise NotImplementedError('torch.testing.get_all_dtypes(include_qint=True): Ember has no quantized dtypes')
    dtypes = get_all_int_dtypes() + get_all_fp_dtypes(include_half, include_bfloat16)
    if include_bool:
        dtypes.append(_C.bool)
    if include_complex:
        dtypes += get_all_complex_dtypes(include_complex32)
    return dtypes


def get_all_math_dtypes(device):
    """The dtypes math ops take on `device` (torch 1.13's list): integers, float32, float64, float16
    on CUDA only, then complex."""
    return get_all_int_dtypes() + get_all_fp_dtypes(include_half=device.startswith('cuda'), include_bfloat16=False) + \
        get_all_complex_dtypes()


def get_all_complex_dtypes(include_complex32=False):
    if include_complex32 and not hasattr(_C, 'complex32'):
        raise NotImplementedError('torch.testing.get_all_complex_dtypes(include_complex32=True): Ember has no '
                                  'complex32')
    return ([_C.complex32] if include_complex32 else []) + list(_COMPLEX)


def double_types():
    """The double-precision dtypes: float64 and complex128 (where Ember has it)."""
    return (_C.float64,) + tuple(d for d in _COMPLEX if d == getattr(_C, 'complex128', None))


def _complex_only(name, fn):
    if _COMPLEX:
        return fn
    return not_implemented(f'torch.testing.{name} (complex dtypes)')(fn)


complex_types = _complex_only('complex_types', lambda: _COMPLEX)
floating_and_complex_types = _complex_only('floating_and_complex_types', lambda: _FLOATING + _COMPLEX)
floating_and_complex_types_and = _complex_only('floating_and_complex_types_and',
                                               lambda *dtypes: _FLOATING + _COMPLEX + dtypes)
all_types_and_complex = _complex_only('all_types_and_complex', lambda: all_types() + _COMPLEX)
all_types_and_complex_and = _complex_only('all_types_and_complex_and', lambda *dtypes: all_types() + _COMPLEX + dtypes)
