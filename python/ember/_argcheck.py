"""Argument checks for the functions written in Python, with the errors the C
binding's parser gives (python/csrc/args.c): a wrong type is a TypeError
naming the argument and the type it must be; an int beyond int64 is
PyTorch's RuntimeError; a dim beyond any tensor's dims is an IndexError.

    @accepts(input='Tensor', other='Tensor', r='int')
    def combinations(input, r=2, with_replacement=False): ...
"""
import functools
import operator

from . import _C

MAX_PIECES = 1 << 16  # tensors one split may make (a count beyond it would loop and allocate without bound)
_INT64 = 1 << 63
_MAX_DIMS = 16
_MISSING = object()


def _type_name(value):
    return 'Tensor' if isinstance(value, _C.TensorBase) else type(value).__name__


def as_int(value):
    """value (an int, or an object with __index__ that is not a tensor) as an int in int64's range;
    None if it is not one."""
    if isinstance(value, bool) or isinstance(value, _C.TensorBase) and value.is_floating_point():
        return None
    try:
        v = operator.index(value)
    except TypeError:
        return None
    if not -_INT64 <= v < _INT64:
        raise RuntimeError("Overflow when unpacking long")
    return v


def int_arg(fname, name, value):
    """One element of an int-list argument as an int: PyTorch's TypeError for another type (a float, a str,
    inf), its RuntimeError past int64."""
    v = as_int(value)
    if v is None:
        raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, but found element of type "
                        f"{_type_name(value)}")
    return v


def check_count(what, n):
    """A count of things a Python loop will make (sections, layers, copies): RuntimeError past MAX_PIECES,
    where PyTorch would loop and allocate for as long as memory lasts."""
    if isinstance(n, int) and n > MAX_PIECES:
        raise RuntimeError(f"{what}: {n} is more than the {MAX_PIECES} Ember supports")
    if isinstance(n, int) and n < 0:
        raise ValueError(f"{what} must not be negative, but got {n}")


def _fits(value, kind):
    if kind.endswith('?'):
        if value is None:
            return True
        kind = kind[:-1]
    if kind == 'Tensor':
        return isinstance(value, _C.TensorBase)
    if kind in ('int', 'dim'):
        return not isinstance(value, _C.TensorBase) and as_int(value) is not None
    if kind == 'bool':
        return isinstance(value, bool)
    if kind == 'float':
        return isinstance(value, (int, float)) and not isinstance(value, bool) or (
            not isinstance(value, _C.TensorBase) and hasattr(value, '__float__'))
    if kind == 'Tensors':
        return isinstance(value, (list, tuple)) and all(isinstance(t, _C.TensorBase) for t in value)
    raise AssertionError(kind)


_DISPLAY = {'Tensor': 'Tensor', 'int': 'int', 'dim': 'int', 'bool': 'bool', 'float': 'float',
            'Tensors': 'tuple of Tensors'}


def wrap_dim(dim, ndim):
    """dim (an int; RuntimeError past int64) wrapped into [0, ndim): PyTorch's IndexError outside
    [-ndim, ndim) (a 0-d tensor counts as 1-d)."""
    d, n = as_int(dim), max(ndim, 1)
    if d is None:
        raise TypeError(f"dim must be an int, not {_type_name(dim)}")
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


def check(fname, name, position, value, kind):
    """Raises PyTorch's error if value is not of kind ('Tensor', 'int', 'dim', 'bool', 'float', 'Tensors',
    each with '?' for None allowed); position counts from 1, None for a keyword."""
    if not _fits(value, kind):
        where = f" (position {position})" if position else ''
        raise TypeError(f"{fname}(): argument '{name}'{where} must be {_DISPLAY[kind.rstrip('?')]}, not "
                        f"{_type_name(value)}")
    if kind.rstrip('?') == 'dim' and value is not None and not -_MAX_DIMS - 1 <= value <= _MAX_DIMS:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{_MAX_DIMS}, {_MAX_DIMS - 1}], "
                         f"but got {value})")


def param_names(fn):
    """(positional, keyword-only) parameter names of a Python function, through functools.wraps
    layers, without inspect's import cost."""
    while hasattr(fn, '__wrapped__'):
        fn = fn.__wrapped__
    code = fn.__code__
    names = code.co_varnames
    return names[:code.co_argcount], names[code.co_argcount:code.co_argcount + code.co_kwonlyargcount]


def accepts(**kinds):
    """Decorator: checks the named parameters of a Python-level function as the C parser would."""
    def wrap(fn):
        positional, keyword_only = param_names(fn)
        unknown = set(kinds) - set(positional) - set(keyword_only)
        if unknown:
            raise ValueError(f"accepts: {fn.__name__} has no parameter {sorted(unknown)}")
        # keyword-only parameters are only looked up in kwargs (their position is past any args)
        checks = [(positional.index(name) if name in positional else float('inf'), name, kind)
                  for name, kind in kinds.items()]

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            for pos, name, kind in checks:
                value = args[pos] if pos < len(args) else kwargs.get(name, _MISSING)
                if value is not _MISSING:
                    check(fn.__name__, name, pos + 1 if pos < len(args) else None, value, kind)
            return fn(*args, **kwargs)
        return checked
    return wrap
