"""ember.utils.checkpoint: activation checkpointing (torch.utils.checkpoint).

checkpoint(fn, *args) runs fn without recording its graph, keeping only its
inputs; backward runs fn again (with the RNG state of the first run, so that
dropout draws the same mask) under grad mode and backpropagates through the
recomputed graph. Gradients reach the inputs through the returned values and
the parameters fn uses by accumulation into their .grad.

use_reentrant=True is PyTorch's original form: without an input that
requires grad nothing is recorded (PyTorch warns the same). use_reentrant=False
also records the checkpoint when no input requires grad (parameters inside fn
still get their gradients) and accepts keyword arguments. Both recompute
inside the backward pass, so `ember.autograd.grad` through a checkpoint
returns the inputs' gradients while the parameters' gradients land in .grad
(PyTorch's non-reentrant form, built on saved-tensor hooks, returns those too).
"""
import warnings

from .. import _C
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..random import fork_rng

__all__ = ['checkpoint', 'checkpoint_sequential']


def detach_variable(inputs):
    """The tensors of `inputs` detached, keeping requires_grad; other values as they are."""
    if not isinstance(inputs, tuple):
        raise RuntimeError('Only tuple of tensors is supported. Got Unsupported input type: ', type(inputs).__name__)
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


def check_backward_validity(inputs):
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn('None of the inputs have requires_grad=True. Gradients will be None')


def get_device_states(*args):
    """The RNG states of the CUDA devices of the tensor arguments: ([devices], [states])."""
    devices = sorted({x.get_device() for x in args if isinstance(x, Tensor) and x.is_cuda})
    from .. import cuda
    return devices, [cuda.get_rng_state(d) for d in devices]


def set_device_states(devices, states):
    from .. import cuda
    for device, state in zip(devices, states):
        cuda.set_rng_state(state, device)


class CheckpointFunction(Function):
    """forward(ctx, run_function, preserve_rng_state, *args): the checkpoint node. A leading
    placeholder argument that requires grad keeps the node recorded for use_reentrant=False."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.cpu_rng_state = _C.default_generator.get_state()
            ctx.device_states = get_device_states(*args)
        ctx.inputs = [None if isinstance(x, Tensor) else x for x in args]
        ctx.tensor_indices = [k for k, x in enumerate(args) if isinstance(x, Tensor)]
        ctx.save_for_backward(*[x for x in args if isinstance(x, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for k, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[k] = t
        detached = detach_variable(tuple(inputs))
        devices = ctx.device_states[0] if ctx.preserve_rng_state else []
        with fork_rng(devices=devices, enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                _C.default_generator.set_state(ctx.cpu_rng_state)
                set_device_states(*ctx.device_states)
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError('none of output has requires_grad=True, this checkpoint() is not necessary')
        from .. import autograd
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


def checkpoint(function, *args, use_reentrant=True, **kwargs):
    """Runs function(*args) without keeping its activations; they are recomputed in backward.
    preserve_rng_state=True (default) replays the random numbers of the first run."""
    preserve = kwargs.pop('preserve_rng_state', True)
    if use_reentrant:
        if kwargs:
            raise ValueError('Unexpected keyword arguments: ' + ','.join(kwargs))
        check_backward_validity(args)
        return CheckpointFunction.apply(function, preserve, *args)
    call = (lambda *a: function(*a[1:], **kwargs))
    placeholder = _C.empty((0,), requires_grad=True)
    return CheckpointFunction.apply(call, preserve, placeholder, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    """Runs a Sequential (or list of modules) in `segments` checkpointed chunks; the last chunk
    runs normally."""
    preserve = kwargs.pop('preserve_rng_state', True)
    if kwargs:
        raise ValueError('Unexpected keyword arguments: ' + ','.join(kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, 'children') and callable(functions.children):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)

