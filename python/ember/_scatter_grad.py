"""Gradients of scatter_reduce for the 'prod', 'mean', 'amax' and 'amin'
reductions (the C op differentiates 'sum'), as PyTorch 1.13's
derivatives: an autograd.Function around the C kernel, used when a
gradient is wanted. index_reduce, written with scatter_reduce, gets them too."""
from . import _C
from ._tensor import Tensor
from .autograd.function import Function

_REDUCTIONS = ('prod', 'mean', 'amax', 'amin')


def _src_shaped(g, src):
    """g (index's shape) grown with zeros to src's shape (a scatter reads only src's corner)."""
    if tuple(g.shape) == tuple(src.shape):
        return g
    out = _C.zeros_like(src)
    out[tuple(slice(0, s) for s in g.shape)] = g
    return out


def _backward(grad, self, dim, index, full_src, reduce, include_self, result):
    src = full_src[tuple(slice(0, s) for s in index.shape)]  # the part the scatter read
    if reduce == 'prod':
        # the product of the others, also where self or src is 0 (one zero in src per slot)
        masked_self = _C.where(self == 0, _C.ones_like(self), self)
        grad_self = grad * masked_self.scatter_reduce(dim, index, src, 'prod', include_self=include_self) / masked_self
        src_zero = src == 0
        zeros_at = _C.zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype)).gather(dim, index)
        single_zero = src_zero & (zeros_at == 1)
        masked_src = _C.where(single_zero, _C.ones_like(src), src)
        others = self.scatter_reduce(dim, index, masked_src, 'prod', include_self=include_self)
        grad_src = _C.where(single_zero, (grad * others).gather(dim, index),
                            (grad * result).gather(dim, index) / _C.where(src_zero, _C.ones_like(src), src))
    elif reduce == 'mean':
        count = _C.ones_like(grad) if include_self else _C.zeros_like(grad)
        count = count.scatter_add(dim, index, _C.ones_like(src))
        count = _C.where(count == 0, _C.ones_like(count), count)
        grad_self = grad / count
        grad_src = grad.gather(dim, index) / count.gather(dim, index)
    else:  # amax, amin: shared evenly among the values equal to the result
        value = result.gather(dim, index)
        self_is = (self == result).to(grad.dtype)
        src_is = (src == value).to(grad.dtype)
        share = grad / self_is.scatter_add(dim, index, src_is)
        grad_self = self_is * share
        grad_src = src_is * share.gather(dim, index)
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, _src_shaped(grad_src, full_src)


class _ScatterReduce(Function):
    @staticmethod
    def forward(ctx, self, dim, index, src, reduce, include_self):
        result = _C.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
        ctx.save_for_backward(self, index, src, result)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        return result

    @staticmethod
    def backward(ctx, grad):
        self, index, src, result = ctx.saved_tensors
        grad_self, grad_src = _backward(grad, self, ctx.dim, index, src, ctx.reduce, ctx.include_self, result)
        return grad_self, None, None, grad_src, None, None


def _needs_function(self, src, reduce):
    return (reduce in _REDUCTIONS and _C.is_grad_enabled() and isinstance(self, Tensor) and isinstance(src, Tensor)
            and (self.requires_grad or src.requires_grad))


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    if out is None and _needs_function(input, src, reduce):
        return _ScatterReduce.apply(input, dim, index, src, reduce, include_self)
    if out is None:
        return _C.scatter_reduce(input, dim, index, src, reduce, include_self=include_self)
    return _C.scatter_reduce(input, dim, index, src, reduce, include_self=include_self, out=out)


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    if _needs_function(self, src, reduce):  # computed on a copy, which the backward keeps
        return self.copy_(_ScatterReduce.apply(self.clone(), dim, index, src, reduce, include_self))
    return _c_scatter_reduce_(self, dim, index, src, reduce, include_self=include_self)


_c_scatter_reduce_ = Tensor.scatter_reduce_  # the C method, before install() replaces it


def install(namespace):
    namespace['scatter_reduce'] = scatter_reduce
    Tensor.scatter_reduce = scatter_reduce
    Tensor.scatter_reduce_ = scatter_reduce_
