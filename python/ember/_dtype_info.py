"""ember.finfo / ember.iinfo: the numeric limits of each dtype, with
PyTorch's attribute names, values and errors."""
import math

from . import _C

# dtype name: (bits, mantissa bits, max exponent, min normal exponent)
_FLOATS = {
    'float16': (16, 10, 15, -14),
    'bfloat16': (16, 7, 127, -126),
    'float32': (32, 23, 127, -126),
    'float64': (64, 52, 1023, -1022),
}
# a complex dtype's limits are those of its parts (PyTorch's finfo)
_PARTS = {'complex32': 'float16', 'complex64': 'float32', 'complex128': 'float64'}
# dtype name: (bits, signed)
_INTS = {'uint8': (8, False), 'int8': (8, True), 'int16': (16, True), 'int32': (32, True), 'int64': (64, True)}


def _name(dtype, fn):
    if dtype is None and fn == 'finfo':
        dtype = _C.get_default_dtype()
    if not isinstance(dtype, _C.dtype):
        if dtype is None:
            raise TypeError(f'{fn}() missing 1 required positional arguments: "type"')
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be ember.dtype, not {type(dtype).__name__}")
    return str(dtype).split('.')[-1]


class _Info:
    __slots__ = ()
    _fields = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of '{type(self).__name__}' objects is not writable")

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # as PyTorch's: equality by value, unhashable

    def __repr__(self):
        shown = ', '.join(f'{f}={getattr(self, f):g}' for f in self._fields if f not in ('bits', 'dtype'))
        return f'{type(self).__name__}({shown}, dtype={self.dtype})'


class finfo(_Info):
    """Machine limits of a floating-point dtype (the default dtype if none is given)."""
    __slots__ = ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution', 'dtype')
    _fields = ('resolution', 'min', 'max', 'eps', 'smallest_normal', 'tiny', 'bits', 'dtype')

    def __init__(self, type=None):
        name = _name(type, 'finfo')
        name = _PARTS.get(name, name)
        if name not in _FLOATS:
            raise TypeError("ember.finfo() requires a floating point input type. Use ember.iinfo to handle 'ember.finfo'")
        bits, mant, emax, emin = _FLOATS[name]
        eps = 2.0 ** -mant
        largest = (2.0 - eps) * 2.0 ** emax
        values = dict(bits=bits, eps=eps, max=largest, min=-largest, tiny=2.0 ** emin, smallest_normal=2.0 ** emin,
                      resolution=10.0 ** -math.floor(-math.log10(eps)), dtype=name)
        for k, v in values.items():
            object.__setattr__(self, k, v)


class iinfo(_Info):
    """Limits of an integer dtype."""
    __slots__ = ('bits', 'max', 'min', 'dtype')
    _fields = ('min', 'max', 'bits', 'dtype')

    def __init__(self, type):
        name = _name(type, 'iinfo')
        if name == 'bool':
            raise TypeError('ember.bool is not supported by ember.iinfo')
        if name not in _INTS:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo to handle 'ember.iinfo'")
        bits, signed = _INTS[name]
        values = dict(bits=bits, max=2 ** (bits - signed) - 1, min=-2 ** (bits - 1) if signed else 0, dtype=name)
        for k, v in values.items():
            object.__setattr__(self, k, v)
