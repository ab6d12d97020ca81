"""More torch functions and Tensor methods that are compositions of Ember ops (issue 14's names):
the *_copy forms of the views, the scatter-into-a-view functions, addr, ldexp, clamp_min_/clamp_max_, sum_to_size, fill_diagonal_,
vander, range, empty_strided. Installed by ember._functions.install."""
import builtins

from . import _C
from ._argcheck import accepts, int_arg, param_names
from ._tensor import Tensor

# torch.<view>_copy(input, ...): the view, copied
VIEW_COPIES = ('as_strided', 'detach', 'diagonal', 'expand', 'permute', 'select', 'narrow', 'slice', 'split', 'squeeze',
               't', 'transpose', 'unbind', 'unfold', 'unsqueeze', 'view', 'split_with_sizes', 'alias')


def _slice(input, dim=0, start=None, end=None, step=1):
    index = [builtins.slice(None)] * input.dim()
    index[dim] = builtins.slice(start, end, step)
    return input[tuple(index)]


def _copy_of(view):
    def copy(input, *args, **kwargs):
        out = input if view == 'alias' else _slice(input, *args, **kwargs) if view == 'slice' else \
            getattr(input, view)(*args, **kwargs)
        return tuple(o.clone() for o in out) if isinstance(out, (tuple, list)) else out.clone()
    copy.__name__ = view + '_copy'
    return copy


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    out = input.clone()
    out.as_strided(size, stride, out.storage_offset() if storage_offset is None else storage_offset).copy_(src)
    return out


def select_scatter(input, src, dim, index):
    out = input.clone()
    out.select(dim, index).copy_(src)
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    out = input.clone()
    out.diagonal(offset, dim1, dim2).copy_(src)
    return out


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    out = input.clone()
    view = _slice(out, dim, start, end, step)
    if view.shape != src.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def adjoint(input):
    if input.dim() == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    t = input.t() if input.dim() == 0 else input.transpose(-2, -1)
    return t.conj() if t.is_complex() else t  # a copy for complex: Ember has no conjugate bit


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2)."""
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f'addr: Expected 1-D argument vec1, but got {vec1.dim()}-D' if vec1.dim() != 1 else
                           f'addr: Expected 1-D argument vec2, but got {vec2.dim()}-D')
    result = _C.outer(vec1, vec2) * alpha
    result = result if beta == 0 else input * beta + result
    return result if out is None else out.resize_(result.shape).copy_(result)


@accepts(input='Tensor', other='Tensor', out='Tensor?')
def ldexp(input, other, *, out=None):
    """input * 2**other, in floating point."""
    x = input if input.is_floating_point() else input.to(_C.get_default_dtype())
    if out is not None:
        _ldexp_check_into(out, input, other)
    result = x * _C.pow(2.0, other.to(x.dtype) if isinstance(other, Tensor) else other)
    return result if out is None else out.resize_(result.shape).copy_(result)


def _ldexp_check_into(out, input, other):
    """PyTorch 1.13 writes ldexp's out= and in-place forms through mul's out= form: it refuses inputs
    that require grad (in grad mode) and a result dtype that cannot be cast to out's."""
    from ._complex import _scalar_name
    from ._functions import can_cast
    if _C.is_grad_enabled() and (input.requires_grad or other.requires_grad):
        raise RuntimeError("mul(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    dtype = input.dtype if input.is_floating_point() else _C.get_default_dtype()
    if not can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {_scalar_name(dtype)} can't be cast to the desired output type "
                           f"{_scalar_name(out.dtype)}")


def ldexp_(self, other):
    _ldexp_check_into(self, self, other)
    return Tensor.copy_(self, ldexp(self, other))


def sum_to_size(input, *size):
    """Sums input over the dims that `size` broadcasts: the result has shape `size`."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int_arg('sum_to_size', 'size', n) for n in size)
    lead = input.dim() - len(size)
    if lead < 0 or any(n != 1 and n != input.shape[lead + k] for k, n in enumerate(size)):
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(input.shape)}.")
    dims = list(range(lead)) + [lead + k for k, n in enumerate(size) if n == 1 and input.shape[lead + k] != 1]
    return input.sum(tuple(dims), keepdim=True).reshape(size) if dims else input


def fill_diagonal_(input, fill_value, wrap=False):
    """Fills the main diagonal (all indices equal) in place; with wrap, a tall matrix's diagonal
    restarts every ncols + 1 rows (NumPy's fill_diagonal)."""
    if input.dim() < 2:
        raise RuntimeError('dimensions must larger than 1')
    if input.dim() > 2 and len(set(input.shape)) != 1:
        raise RuntimeError('all dimensions of input must be of equal length')
    if input.dim() == 2 and wrap:
        rows, cols = input.shape
        flat = _C.arange(0, rows * cols, cols + 1, dtype=_C.int64)  # positions in row-major order
        index = (flat // cols, flat % cols)
    else:
        index = (_C.arange(builtins.min(input.shape), dtype=_C.int64),) * input.dim()
    input[index] = fill_value
    return input


@accepts(x='Tensor', N='int?', increasing='bool')
def vander(x, N=None, increasing=False):
    """Columns x**0, x**1, ..., x**(N-1) (reversed unless increasing)."""
    if x.dim() != 1:
        raise RuntimeError('x must be a one-dimensional tensor.')
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError('N must be non-negative.')
    powers = _C.arange(N, dtype=_C.int64)
    if not increasing:
        powers = powers.flip(0)
    base = x if x.is_floating_point() else x.to(_C.int64)
    return base.unsqueeze(1) ** powers.unsqueeze(0)


def range_(start=0, end=None, step=1, *, dtype=None, **kwargs):
    """Deprecated torch.range: start to end inclusive."""
    import warnings
    warnings.warn('torch.range is deprecated and will be removed in a future release because its behavior is '
                  'inconsistent with Python\'s range builtin. Instead, use torch.arange, which produces values '
                  'in [start, end).', UserWarning)
    if end is None:
        start, end = 0, start
    if step == 0 or (end - start) * step < 0:
        raise RuntimeError('upper bound and lower bound inconsistent with step sign')
    n = builtins.int((end - start) // step) + 1
    return _C.arange(n, dtype=dtype or _C.get_default_dtype(), **kwargs) * step + start


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs):
    extent = 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride) if n > 0)
    base = _C.empty((extent if all(n > 0 for n in size) else 0,), dtype=dtype, device=device)
    out = base.as_strided(tuple(size), tuple(stride))
    return out.requires_grad_() if requires_grad else out


def fill(input, value):
    """A tensor like input filled with value; as a graph node, no gradient to input and the sum of the
    gradient to a tensor value (computed as a where that always picks value)."""
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f'fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} '
                           f'dimensions.')
    needs_graph = _C.is_grad_enabled() and (input.requires_grad or (isinstance(value, Tensor) and value.requires_grad))
    if not needs_graph:
        return _C.full_like(input, value.item() if isinstance(value, Tensor) else value)
    v = value.to(input.dtype) if isinstance(value, Tensor) else _C.full((), value, dtype=input.dtype)
    return _C.where(_C.ones_like(input, dtype=_C.bool), v, input)


def get_device(input):
    return input.device.index if input.is_cuda else -1


def type_as(input, other):
    return input.to(other.dtype)


FUNCTIONS = {f.__name__: f for f in (
    as_strided_scatter, select_scatter, diagonal_scatter, slice_scatter,
    adjoint, addr, ldexp, vander, empty_strided, fill, get_device)}
FUNCTIONS['range'] = range_  # named range_ here: the builtin range stays usable in this module
FUNCTIONS.update({v + '_copy': _copy_of(v) for v in VIEW_COPIES})
FUNCTIONS.update(row_stack=_C.vstack, chain_matmul=lambda *matrices: _chain(matrices),
                 unsafe_chunk=lambda input, chunks, dim=0: input.chunk(chunks, dim),
                 unsafe_split=lambda input, split_size, dim=0: input.split(split_size, dim),
                 unsafe_split_with_sizes=lambda input, split_sizes, dim=0: input.split(list(split_sizes), dim))


def _chain(matrices):
    out = matrices[0]
    for m in matrices[1:]:
        out = out.matmul(m)
    return out


# in-place view ops: the view, then set_ (which refuses tensors that require grad)
def _inplace_view(view):
    def method(self, *args, **kwargs):
        return self.set_(getattr(self, view)(*args, **kwargs))
    method.__name__ = view + '_'
    return method


INPLACE_VIEWS = ('squeeze', 'unsqueeze', 't', 'transpose', 'swapdims', 'swapaxes', 'as_strided')


def resize_as_(input, the_template, *, memory_format=None):
    return input.resize_(the_template.shape)


def detach_(input):
    """Detaches a leaf in place (requires_grad becomes False); a tensor with history cannot be cut
    from its graph in place in Ember."""
    if input.grad_fn is not None:
        raise RuntimeError('detach_() of a tensor that has a grad_fn is not supported in Ember; use detach()')
    return input.requires_grad_(False)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs):
    for name, value in (('size', size), ('stride', stride)):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"new_empty_strided(): argument '{name}' must be tuple of ints, not "
                            f"{type(value).__name__}")
        for v in value:
            int_arg('new_empty_strided', name, v)
    return empty_strided(size, stride, dtype=dtype or self.dtype, requires_grad=requires_grad)


METHODS = dict(
    narrow_copy=lambda self, dim, start, length: self.narrow(dim, start, length).clone(),
    as_strided_scatter=as_strided_scatter, select_scatter=select_scatter, diagonal_scatter=diagonal_scatter, slice_scatter=slice_scatter,
    adjoint=adjoint, addr=addr, ldexp=ldexp, sum_to_size=sum_to_size,
    fill_diagonal_=fill_diagonal_, get_device=get_device, type_as=type_as,
    unsafe_chunk=FUNCTIONS['unsafe_chunk'], unsafe_split=FUNCTIONS['unsafe_split'],
    unsafe_split_with_sizes=FUNCTIONS['unsafe_split_with_sizes'],
    ldexp_=ldexp_,
    addr_=lambda self, vec1, vec2, *, beta=1, alpha=1: self.copy_(addr(self, vec1, vec2, beta=beta, alpha=alpha)),
    clamp_min_=lambda self, min: self.clamp_(min=min), clamp_max_=lambda self, max: self.clamp_(max=max),
    resize_as_=resize_as_, detach_=detach_, new_empty_strided=new_empty_strided,
    **{view + '_': _inplace_view(view) for view in INPLACE_VIEWS})
PROPERTIES = dict(mH=property(adjoint),
                  **{name: property(lambda self: False) for name in (
                      'is_mps', 'is_xpu', 'is_ipu', 'is_vulkan', 'is_ort', 'is_nested')})


def _checked(fn):
    """fn refusing a non-tensor `input` with the C parser's TypeError (_argcheck)."""
    try:
        positional, _ = param_names(fn)
    except AttributeError:  # a builtin: the C parser checks its arguments
        return fn
    return accepts(input='Tensor')(fn) if positional[:1] == ('input',) else fn


def install(namespace):
    from . import _functions_more, _tensor_extra
    for name, fn in _functions_more.FUNCTIONS.items():
        namespace.setdefault(name, _checked(fn))
    for name, fn in _functions_more.METHODS.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    _tensor_extra.install()
    for name, fn in FUNCTIONS.items():
        namespace.setdefault(name, _checked(fn))
    for name, fn in METHODS.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    for name, prop in PROPERTIES.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, prop)
    from . import _lapack_top
    for name, fn in _lapack_top.FUNCTIONS.items():
        namespace.setdefault(name, fn)
    for name, fn in _lapack_top.METHODS.items():
        if not hasattr(Tensor, name):
            setattr(Tensor, name, fn)
    namespace['norm'], Tensor.norm = _lapack_top.norm, _lapack_top.norm_method  # C's, plus p='nuc'
    for name in ('clamp_min_', 'clamp_max_', 'as_strided_', 'resize_as_', 'detach_', 'ldexp_'):
        namespace.setdefault(name, METHODS[name])
