"""ember.autograd.Function: differentiable operations written in Python.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

Function.apply runs on the C engine's custom-function node (em_function_apply,
python/csrc/function.c). The ctx is also the node: y.grad_fn is ctx, an
instance of ExpBackward, which holds the attributes forward set on it."""
from .. import _C


class FunctionCtx:
    """What forward and backward may call on ctx (the methods are C):
    save_for_backward(*tensors) / saved_tensors, mark_dirty(*inputs),
    mark_non_differentiable(*outputs), set_materialize_grads(bool),
    needs_input_grad."""


class BackwardCFunction(_C._FunctionCtx, FunctionCtx):
    """The base of each Function's node class (<Name>Backward)."""

    def apply(self, *grads):
        return self._forward_cls.backward(self, *grads)


class FunctionMeta(type):
    """Gives each Function subclass its node class, <Name>Backward."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + 'Backward', (BackwardCFunction,),
                                 {'_forward_cls': cls, '_em_function': _C._function_spec(name),
                                  '__module__': __name__})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass it with static forward(ctx, *args) and backward(ctx, *grads)
    and call .apply(*args)."""

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            'Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd '
            'function with static forward method. (Example: https://pytorch.org/docs/stable/autograd.html'
            '#torch.autograd.Function)')

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError('You must implement the forward function for custom autograd.Function.')

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError('You must implement either the backward or vjp method for your custom '
                                  'autograd.Function to use it with backward mode AD.')

    @classmethod
    def apply(cls, *args):
        return _C._function_apply(cls, args)


class _DelayedError(Function):
    """Identity on its inputs whose backward raises `message` (what
    once_differentiable puts after a backward run with create_graph)."""

    @staticmethod
    def forward(ctx, message, *inputs):
        ctx.message = message
        return tuple(x.clone() for x in inputs)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.message)


def once_differentiable(fn):
    """Decorates a Function's backward that is not itself differentiable:
    it runs without recording, and differentiating its result (a double
    backward) raises a RuntimeError instead of giving a wrong zero."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled() or not any(isinstance(a, _C.TensorBase) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outputs = (outputs,) if single else outputs
        tensors = [i for i, o in enumerate(outputs) if o is not None]
        marked = _DelayedError.apply('trying to differentiate twice a function that was marked with '
                                     '@once_differentiable',
                                     *(outputs[i].detach().requires_grad_() for i in tensors))
        marked = marked if isinstance(marked, tuple) else (marked,)
        result = list(outputs)
        for i, m in zip(tensors, marked):
            result[i] = m
        return result[0] if single else tuple(result)
    return wrapper


def _no_grad():
    from .grad_mode import no_grad
    return no_grad()
