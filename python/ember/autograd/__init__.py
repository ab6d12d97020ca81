"""ember.autograd: reverse-mode differentiation. The engine is C
(src/autograd/); this module turns PyTorch's flexible arguments (a tensor or
a sequence, None gradients) into the tuples the C entry points take."""
from .. import _C
from .._tensor import Tensor
from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode
from .function import Function, FunctionCtx
from ._hooks import TensorHookHandle
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .variable import Variable
from . import graph, anomaly_mode  # noqa: F401
from .graph import SavedTensor  # noqa: F401

__all__ = ['backward', 'grad', 'Function', 'FunctionCtx', 'gradcheck', 'gradgradcheck', 'no_grad', 'enable_grad',
           'set_grad_enabled', 'inference_mode', 'detect_anomaly', 'set_detect_anomaly', 'Variable', 'functional',
           'graph']


def _as_tuple(tensors):
    return (tensors,) if isinstance(tensors, Tensor) else tuple(tensors)


def _grads_tuple(grads, outputs):
    """grad_tensors / grad_outputs as a tuple with one entry per output."""
    if grads is None:
        grads = (None,) * len(outputs)
    else:
        grads = (grads,) if isinstance(grads, Tensor) else tuple(grads)
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(g, Tensor):
            if g.shape != out.shape:
                raise RuntimeError(f'Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] '
                                   f'has a shape of {out.shape}.')
        elif g is None:
            if out.requires_grad and out.numel() != 1:
                raise RuntimeError('grad can be implicitly created only for scalar outputs')
        else:
            raise TypeError('gradients can be either Tensors or None, but got ' + type(g).__name__)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates the gradient of `tensors` (weighted by grad_tensors) into
    the .grad of the graph's leaves, or only of `inputs` when given."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    tensors = _as_tuple(tensors)
    inputs = _as_tuple(inputs) if inputs is not None else ()
    grads = _grads_tuple(grad_tensors, tensors)
    if retain_graph is None:
        retain_graph = create_graph
    _C._run_backward(tensors, grads, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """The gradients of `outputs` w.r.t. `inputs` (a tuple, one per input;
    None for an unused input when allow_unused)."""
    if is_grads_batched:
        raise NotImplementedError('ember.autograd.grad: is_grads_batched=True is not supported')
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _grads_tuple(grad_outputs, outputs)
    if not inputs:
        raise ValueError('grad requires non-empty inputs.')
    if retain_graph is None:
        retain_graph = create_graph
    return _C._run_grad(outputs, grads, inputs, retain_graph, create_graph, allow_unused)


def _register_hook(tensor, hook):
    """Tensor.register_hook: hook(grad) -> Tensor or None, called with the
    gradient of `tensor` during backward; returns a handle with .remove()."""
    return TensorHookHandle(tensor, _C._register_hook(tensor, hook))


def _register_post_accumulate_grad_hook(tensor, hook):
    """Tensor.register_post_accumulate_grad_hook: hook(tensor), called after
    backward accumulated into the leaf's .grad."""
    return TensorHookHandle(tensor, _C._register_post_accumulate_grad_hook(tensor, hook))


# submodules and names loaded on first use, keeping `import ember` fast: name -> module
_LAZY_MODULES = {'profiler': '.profiler', 'functional': '.functional'}
_LAZY_NAMES = {'gradcheck': '.gradcheck', 'gradgradcheck': '.gradcheck', 'NestedIOFunction': '.nested_io',
               'DeviceType': '..profiler._events', 'ProfilerActivity': '..profiler',
               **dict.fromkeys(('ProfilerState', 'ProfilerConfig', 'ProfilerEvent', 'kineto_available',
                                '_enable_profiler_legacy', '_disable_profiler_legacy'), '.profiler_legacy'),
               **dict.fromkeys(('handle_torch_function', 'has_torch_function', 'is_tensor_like'), '..overrides')}


def __getattr__(name):
    import importlib
    if name in _LAZY_MODULES:
        return importlib.import_module(_LAZY_MODULES[name], __name__)
    if name in _LAZY_NAMES:
        module = importlib.import_module(_LAZY_NAMES[name], __name__)
        # importing .gradcheck bound the submodule to the name `gradcheck`: the function takes it back
        globals().update({n: getattr(module, n) for n, m in _LAZY_NAMES.items() if m == _LAZY_NAMES[name]})
        return globals()[name]
    raise AttributeError(f"module 'ember.autograd' has no attribute '{name}'")
