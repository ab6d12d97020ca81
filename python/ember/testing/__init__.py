"""ember.testing: assert_close and make_tensor for tests (torch.testing), and its deprecated
dtype lists. The lists that would hold complex dtypes are not implemented (Ember has none yet)."""
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


def _complex(name):
    return not_implemented(f'torch.testing.{name} (complex dtypes)')(lambda *args, **kwargs: None)


for _name in ('complex_types', 'double_types', 'floating_and_complex_types', 'floating_and_complex_types_and',
              'all_types_and_complex', 'all_types_and_complex_and', 'get_all_complex_dtypes', 'get_all_dtypes',
              'get_all_math_dtypes'):
    globals()[_name] = _complex(_name)
del _name
