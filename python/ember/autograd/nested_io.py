"""NestedIOFunction (torch.autograd's legacy interface for functions whose inputs and outputs are
nested lists and tuples of tensors): subclass it with forward_extended(*inputs) and
backward_extended(*grad_outputs), then call an instance on the inputs. Inside,
self.save_for_backward(...) / self.saved_tensors, mark_dirty, mark_non_differentiable and
needs_input_grad work as in a Function's ctx. (torch 1.13 still exports it but its legacy call
path is gone; Ember's runs it as an ordinary Function over the flattened tensors.)"""
from .._tensor import Tensor
from .function import Function

__all__ = ['NestedIOFunction']


def _flatten(obj):
    """The tensors of a nested list/tuple structure, in order."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _flatten(item)]
    return []


def _unflatten(flat, structure):
    """structure with its tensors replaced, in order, by those of flat."""
    it = iter(flat)

    def rebuild(obj):
        if isinstance(obj, Tensor):
            return next(it)
        if isinstance(obj, (list, tuple)):
            return type(obj)(rebuild(item) for item in obj)
        return obj
    return rebuild(structure)


def _flatten_like(grads, structure):
    """The entries of grads at the tensor positions of structure (a gradient may be None)."""
    if isinstance(structure, Tensor):
        return [grads]
    if isinstance(structure, (list, tuple)):
        if grads is None:
            grads = [None] * len(structure)
        if not isinstance(grads, (list, tuple)) or len(grads) != len(structure):
            raise RuntimeError('backward_extended must return gradients nested as the inputs were')
        return [g for gi, si in zip(grads, structure) for g in _flatten_like(gi, si)]
    return []


class _Flat(Function):
    """Runs a NestedIOFunction instance (the first argument) on its flattened tensor inputs."""

    @staticmethod
    def forward(ctx, fn, structure, *flat_inputs):
        fn._ctx, ctx._nested_fn, ctx._nested_input = ctx, fn, structure
        fn.to_save, fn.dirty_tensors, fn.non_differentiable = None, (), ()
        outputs = fn.forward_extended(*_unflatten(flat_inputs, structure))
        fn._nested_output = outputs
        if fn.to_save is not None:
            ctx.save_for_backward(*fn.to_save)
        if fn.dirty_tensors:
            ctx.mark_dirty(*fn.dirty_tensors)
        if fn.non_differentiable:
            ctx.mark_non_differentiable(*fn.non_differentiable)
        return tuple(_flatten(outputs))

    @staticmethod
    def backward(ctx, *flat_grads):
        fn = ctx._nested_fn
        out = fn._nested_output
        grads = fn.backward_extended(*_unflatten(flat_grads, out if isinstance(out, tuple) else (out,)))
        inputs = ctx._nested_input
        if not (isinstance(grads, tuple) and len(grads) == len(inputs)):
            grads = (grads,)  # one input's gradient
        return (None, None) + tuple(_flatten_like(grads, inputs))


class NestedIOFunction:
    to_save = None
    dirty_tensors = non_differentiable = ()

    def __call__(self, *args):
        outputs = _Flat.apply(self, args, *_flatten(args))
        return _unflatten(outputs if isinstance(outputs, tuple) else (outputs,), self._nested_output)

    def _do_forward(self, *inputs):
        return self(*inputs)

    def save_for_backward(self, *args):
        """Saves the tensors of the nested args (self.saved_tensors gives them back in that shape)."""
        self.to_save = tuple(_flatten(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self):
        return _unflatten(self._ctx.saved_tensors, self._to_save_nested)

    @property
    def needs_input_grad(self):
        return self._ctx.needs_input_grad[2:]

    def mark_dirty(self, *args, **kwargs):
        self.dirty_tensors = tuple(_flatten((args, tuple(kwargs.values()))))

    def mark_non_differentiable(self, *args, **kwargs):
        self.non_differentiable = tuple(_flatten((args, tuple(kwargs.values()))))

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError
