"""torch.autograd.graph: hooks on the tensors saved for backward. While a
saved_tensors_hooks block is active, every tensor an op saves is passed to
pack_hook and replaced by what it returns; backward gets the tensor back
from unpack_hook(packed). The C engine calls them (src/autograd/saved.c);
blocks nest, per thread, innermost first."""
from _thread import _local as _thread_local  # the class of threading.local(), without importing threading

from .. import _C

__all__ = ['saved_tensors_hooks', 'save_on_cpu', 'disable_saved_tensors_hooks', 'SavedTensor']

_stacks = _thread_local()


def _stack():
    if not hasattr(_stacks, 'hooks'):
        _stacks.hooks = []
    return _stacks.hooks


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) -> anything, unpack_hook(that) ->
    a tensor equal to the one packed."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        disabled = getattr(_stacks, 'disabled', None)
        if disabled is not None:
            raise RuntimeError(disabled)
        _stack().append((self.pack_hook, self.unpack_hook))
        _C._set_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc):
        stack = _stack()
        stack.pop()
        if stack:
            _C._set_saved_tensors_hooks(*stack[-1])
        else:
            _C._reset_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Keeps saved tensors in CPU memory and moves each back to its device
    when backward needs it (pin_memory: page-locked copies, for
    asynchronous copies back)."""

    def __init__(self, pin_memory=False):
        def pack(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            from .. import empty
            staged = empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
            staged.copy_(tensor)
            return tensor.device, staged

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside the block, entering saved_tensors_hooks raises RuntimeError
    with error_message (for features that cannot work with them)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self.prev = getattr(_stacks, 'disabled', None)
        _stacks.disabled = self.error_message

    def __exit__(self, *exc):
        _stacks.disabled = self.prev


class SavedTensor:
    """A tensor a graph node saved for backward (what grad_fn._raw_saved_self... give):
    register_hooks(pack_hook, unpack_hook) packs it now and unpacks it when backward reads it,
    as saved_tensors_hooks does for every save inside its block."""

    def __init__(self, node, output, index):
        self._node, self._output, self._index = node, output, index

    def register_hooks(self, pack_hook, unpack_hook):
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError('register_hooks(): pack_hook and unpack_hook must be functions')
        with saved_tensors_hooks(pack_hook, unpack_hook):
            _C._node_pack_saved(self._node, self._output, self._index)
