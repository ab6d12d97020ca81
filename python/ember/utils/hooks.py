"""Handles for hooks kept in dicts (torch.utils.hooks): nn.Module's forward,
backward and state_dict hooks, and the full backward hook machinery."""
import weakref
from collections import OrderedDict

__all__ = ['RemovableHandle', 'BackwardHook']


class RemovableHandle:
    """Removes the hook stored under self.id in the dict(s) it was created
    for. The dicts are held weakly: a handle never keeps a module alive."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = weakref.ref(extra_dict) if extra_dict is not None else None

    def remove(self):
        for ref in (self.hooks_dict_ref, self.extra_dict_ref):
            hooks = ref() if ref is not None else None
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __getstate__(self):
        extra = self.extra_dict_ref() if self.extra_dict_ref is not None else None
        return (self.hooks_dict_ref(), self.id, extra)

    def __setstate__(self, state):
        hooks, self.id, extra = state
        # a dict that is gone unpickles as an empty one: remove() is then a no-op
        self.hooks_dict_ref = weakref.ref(OrderedDict() if hooks is None else hooks)
        self.extra_dict_ref = weakref.ref(extra) if extra is not None else None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _identity_function():
    """The autograd Function that wraps a module's tensor inputs or outputs
    (created lazily: ember.autograd imports ember's core)."""
    global _BackwardHookFunction
    if _BackwardHookFunction is None:
        from ..autograd import Function

        class BackwardHookFunction(Function):
            """Identity forward; backward hands the gradients to on_grads(grads)
            and passes on what it returns."""

            @staticmethod
            def forward(ctx, on_grads, *tensors):
                ctx.on_grads = on_grads
                ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
                return tuple(t.view_as(t) for t in tensors)

            @staticmethod
            def backward(ctx, *grads):
                return (None,) + tuple(ctx.on_grads(grads))

        _BackwardHookFunction = BackwardHookFunction
    return _BackwardHookFunction


_BackwardHookFunction = None


class BackwardHook:
    """Runs a module's full backward hooks, hook(module, grad_input,
    grad_output), for one forward call: identity Functions around the
    module's tensor inputs and outputs see the gradients flowing through.
    The output side records grad_output; the input side calls the hooks with
    grad_input (None for non-tensor arguments) and uses what they return.
    When no input requires grad, the hooks run at the output side with
    grad_input all None, and must return None."""

    def __init__(self, module, user_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_index = None  # positions of the wrapped input tensors
        self.output_index = None

    @staticmethod
    def _pack(index, values, size):
        """A size-tuple with values at the positions in index, None elsewhere."""
        packed = [None] * size
        for i, v in zip(index, values):
            packed[i] = v
        return tuple(packed)

    def _wrap(self, args, on_grads):
        """args with its tensors replaced by the identity Function's outputs;
        the positions wrapped (None when nothing is wrapped)."""
        from .._tensor import Tensor
        from .. import _C
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (_C.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        wrapped = _identity_function().apply(on_grads, *tensors)
        out = list(args)
        for i, t in zip(index, wrapped):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args):
        self.n_inputs = len(args)

        def on_input_grads(grads):
            grad_input = self._pack(self.input_index, grads, self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_input, self.grad_outputs)
                if res is None:
                    continue
                if len(res) != len(grad_input):
                    raise RuntimeError('Backward hook returned an invalid number of grad_input, '
                                       f'got {len(res)}, but expected {len(grad_input)}')
                grad_input = tuple(res)
            self.grad_outputs = None
            return [grad_input[i] for i in self.input_index]

        args, self.input_index = self._wrap(args, on_input_grads)
        return args

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        self.n_outputs = len(outputs)

        def on_output_grads(grads):
            self.grad_outputs = self._pack(self.output_index, grads, self.n_outputs)
            if self.input_index is None:  # no input needs a gradient: the hooks run here
                grad_input = (None,) * self.n_inputs
                for hook in self.user_hooks:
                    res = hook(self.module, grad_input, self.grad_outputs)
                    if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                        raise RuntimeError('Backward hook for Modules where no input requires gradient should '
                                           'always return None or None for all gradients.')
                self.grad_outputs = None
            return grads

        outputs, self.output_index = self._wrap(outputs, on_output_grads)
        return outputs[0] if single else outputs
