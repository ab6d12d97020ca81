"""Complex tensors: the functions PyTorch has for them, written with the
views between complex and real tensors (view_as_real / view_as_complex, in C)
and real ops, plus the complex-aware forms of abs, angle, sgn, full, randn
and fill_. For real inputs they give PyTorch's answers for real tensors.

conj() of a complex tensor is a view with the conjugate bit set, and the
imaginary part of such a view a view with the negative bit set (Note
[Conjugate bit] in src/core/internal.h). All of them are differentiable
through the views (Note [Retyped views])."""
import math

from . import _C
from ._argcheck import accepts

Tensor = None  # set by install()


def _parts(input):
    """The real and imaginary parts of a complex tensor, as views; those of a conjugate view
    are the storage's parts, the imaginary one with the negative bit (PyTorch's)."""
    if not _C._is_conj(input):
        pair = _C.view_as_real(input)
        return pair.select(-1, 0), pair.select(-1, 1)
    pair = _C.view_as_real(_C._conj(input))
    return pair.select(-1, 0), _C._neg_view(pair.select(-1, 1))


def real(input):
    return _parts(input)[0] if input.is_complex() else input


def imag(input):
    if not input.is_complex():
        raise RuntimeError('imag is not implemented for tensors with non-complex dtypes.')
    return _parts(input)[1]


def conj_physical(input):
    return _C._conj_physical(input)


def conj(input):
    return _C._conj(input)


def _neg_view(input):
    return _C._neg_view(input)


def resolve_conj(input):
    return _C._resolve_conj(input)


def resolve_neg(input):
    return _C._resolve_neg(input)


def is_conj(input):
    return _C._is_conj(input)


def is_neg(input):
    return _C._is_neg(input)


def isreal(input):
    if not input.is_complex():
        return _C.ones_like(input, dtype=_C.bool)
    return imag(input) == 0


def _parts_test(test):
    """isnan / isinf / isfinite: of a complex tensor, from its parts (PyTorch's rules)."""
    real_op = getattr(_C, test.__name__)

    def fn(input):
        if not input.is_complex():
            return real_op(input)
        re, im = _parts(input)
        return test(real_op(re), real_op(im))
    fn.__name__ = test.__name__
    return fn


def isnan(re_nan, im_nan):
    return re_nan | im_nan


def isinf(re_inf, im_inf):
    return re_inf | im_inf


def isfinite(re_finite, im_finite):
    return re_finite & im_finite


isnan, isinf, isfinite = _parts_test(isnan), _parts_test(isinf), _parts_test(isfinite)


def _at_zero(input, fn):
    """fn(re, im) of a complex tensor whose gradient at 0 is 0, as PyTorch's abs and angle have it (fn's own,
    hypot's and atan2's, is 0/0 there): where the input requires grad, zeros are replaced by 1 on the
    differentiated path, and the value there comes from a detached copy."""
    if not (input.requires_grad and _C.is_grad_enabled()):
        return fn(*_parts(input))
    zero = input == 0
    safe = fn(*_parts(_C.where(zero, _C.ones_like(input), input)))
    return _C.where(zero, fn(*_parts(input.detach())), safe)


def _abs(input, *, out=None):
    if not input.is_complex():
        return _C.abs(input, out=out) if out is not None else _C.abs(input)
    r = _at_zero(input, _C.hypot)
    return out.copy_(r) if out is not None else r


def angle(input):
    if input.is_complex():
        return _at_zero(input, lambda re, im: _C.atan2(im, re))
    x = input if input.is_floating_point() else input.to(_C.get_default_dtype())
    return _C.where(_C.isnan(x), x, _C.where(x < 0, _C.full_like(x, math.pi), _C.zeros_like(x)))


def sgn(input):
    if not input.is_complex():
        return input.sign()
    a = _abs(input)
    return _C.where(a == 0, _C.zeros_like(input), input / _C.where(a == 0, _C.ones_like(a), a))


def _check_parts(fn, names, real, imag):
    """complex() and polar(): two tensors of one floating dtype (PyTorch's errors)."""
    for name, t, pos in zip(names, (real, imag), (1, 2)):
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    if real.dtype != imag.dtype:
        raise RuntimeError(f'Expected object of scalar type {_scalar_name(real.dtype)} but got scalar type '
                           f'{_scalar_name(imag.dtype)} for second argument')
    if real.dtype not in (_C.float16, _C.float32, _C.float64):
        raise RuntimeError(f'Expected both inputs to be Half, Float or Double tensors but got '
                           f'{_scalar_name(real.dtype)} and {_scalar_name(imag.dtype)}')


def complex(real, imag, *, out=None):
    _check_parts('complex', ('real', 'imag'), real, imag)
    from ._functions import broadcast_shapes
    shape = broadcast_shapes(real.shape, imag.shape)
    result = _C.view_as_complex(_C.stack([real.expand(shape), imag.expand(shape)], -1))
    return out.copy_(result) if out is not None else result


def vdot(input, other, *, out=None):
    if input.is_complex():
        input = conj_physical(input)
        return _C.dot(input, other, out=out) if out is not None else _C.dot(input, other)
    return _C.vdot(input, other, out=out) if out is not None else _C.vdot(input, other)


def polar(abs, angle, *, out=None):
    _check_parts('polar', ('abs', 'angle'), abs, angle)
    return complex(abs * _C.cos(angle), abs * _C.sin(angle), out=out)


_SCALAR_NAMES = {'float16': 'Half', 'float32': 'Float', 'float64': 'Double', 'bfloat16': 'BFloat16',
                 'complex32': 'ComplexHalf', 'complex64': 'ComplexFloat', 'complex128': 'ComplexDouble',
                 'int64': 'Long', 'int32': 'Int', 'int16': 'Short', 'int8': 'Char', 'uint8': 'Byte', 'bool': 'Bool'}


def _scalar_name(dtype):
    return _SCALAR_NAMES[str(dtype).split('.')[-1]]


def _default_complex():
    return _C.complex128 if _C.get_default_dtype() == _C.float64 else _C.complex64


def _full(size, fill_value, *, dtype=None, **kwargs):
    if not isinstance(fill_value, builtin_complex):
        return _C.full(size, fill_value, dtype=dtype, **kwargs)
    requires_grad = kwargs.pop('requires_grad', False)
    out = kwargs.pop('out', None)
    t = _C.empty(size, dtype=dtype or _default_complex(), **kwargs)
    _C._fill_complex_(t, fill_value)
    if out is not None:
        return out.resize_(t.shape).copy_(t)
    return t.requires_grad_(requires_grad) if requires_grad else t


def _full_like(input, fill_value, *, dtype=None, **kwargs):
    if not isinstance(fill_value, builtin_complex):
        return _C.full_like(input, fill_value, dtype=dtype, **kwargs)
    return _full(input.shape, fill_value, dtype=dtype or input.dtype, **kwargs)


def _fill_(self, value):
    if isinstance(value, builtin_complex):
        return _C._fill_complex_(self, value)
    return _C.TensorBase.fill_(self, value)


def _random_complex(draw, scale):
    """rand / randn; a complex dtype draws its real and imaginary parts independently, scaled by
    `scale` (randn: each part N(0, 1/2), so that E|z|^2 = 1, as PyTorch)."""
    def fn(*size, dtype=None, generator=None, out=None, **kwargs):
        extra = {'generator': generator} if generator is not None else {}
        if dtype is None or not dtype.is_complex:
            if out is not None:
                extra['out'] = out
            return draw(*size, dtype=dtype, **extra, **kwargs)
        if len(size) == 1 and isinstance(size[0], (tuple, list, _C.Size)):
            size = tuple(size[0])
        requires_grad = kwargs.pop('requires_grad', False)
        part = {_C.complex32: _C.float16, _C.complex64: _C.float32, _C.complex128: _C.float64}[dtype]
        pairs = draw(*size, 2, dtype=_C.float64 if part == _C.float16 else part, **extra, **kwargs)
        t = _C.view_as_complex((pairs * scale if scale != 1 else pairs).to(part))
        if out is not None:
            return out.resize_(t.shape).copy_(t)
        return t.requires_grad_(requires_grad) if requires_grad else t
    fn.__name__ = draw.__name__
    return fn


builtin_complex = __builtins__['complex'] if isinstance(__builtins__, dict) else __builtins__.complex

FUNCTIONS = dict(real=real, imag=imag, conj=conj, _neg_view=_neg_view, conj_physical=conj_physical,
                 resolve_conj=resolve_conj, resolve_neg=resolve_neg, is_conj=is_conj, is_neg=is_neg, isreal=isreal,
                 angle=angle, sgn=sgn, complex=complex, polar=polar, vdot=vdot, isnan=isnan, isinf=isinf,
                 isfinite=isfinite)
METHODS = dict(conj=conj, _neg_view=_neg_view, conj_physical=conj_physical, resolve_conj=resolve_conj,
               resolve_neg=resolve_neg, is_conj=is_conj, is_neg=is_neg, isreal=isreal, angle=angle, sgn=sgn, vdot=vdot,
               isnan=isnan, isinf=isinf, isfinite=isfinite,
               abs=_abs, absolute=_abs, __abs__=_abs, fill_=_fill_, conj_physical_=lambda self: self.copy_(conj_physical(self)),
               sgn_=lambda self: self.copy_(sgn(self)))


def _set_real(self, value):
    real(self).copy_(value if isinstance(value, _C.TensorBase) else _C.tensor(value))


def _set_imag(self, value):
    imag(self).copy_(value if isinstance(value, _C.TensorBase) else _C.tensor(value))


def install(namespace, tensor_class):
    """Puts the complex-aware functions in ember's namespace and on Tensor (replacing real-only forms)."""
    global Tensor
    Tensor = tensor_class
    for name, fn in FUNCTIONS.items():
        namespace[name] = accepts(input='Tensor')(fn) if name not in ('complex', 'polar') else fn
    namespace.update(abs=_abs, absolute=_abs, full=_full, full_like=_full_like,
                     randn=_random_complex(_C.randn, math.sqrt(0.5)), rand=_random_complex(_C.rand, 1),
                     conj_physical_=METHODS['conj_physical_'],
                     view_as_real_copy=lambda input: _C.view_as_real(input).clone(),
                     view_as_complex_copy=lambda input: _C.view_as_complex(input).clone())
    for name, fn in METHODS.items():
        setattr(tensor_class, name, fn)
    tensor_class.real = property(real, _set_real)
    tensor_class.imag = property(imag, _set_imag)
