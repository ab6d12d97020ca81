"""The handle Tensor.register_hook returns (like torch.utils.hooks.RemovableHandle)."""
import weakref

from .. import _C


class TensorHookHandle:
    """Removes its hook with .remove() (or at the end of a `with` block).
    It holds the tensor weakly: a hook of a tensor that is gone is removed
    with what holds it."""

    def __init__(self, tensor, hook_id):
        self._tensor = weakref.ref(tensor)
        self.id = hook_id

    def remove(self):
        tensor = self._tensor()
        if tensor is not None:
            _C._remove_hook(tensor, self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
