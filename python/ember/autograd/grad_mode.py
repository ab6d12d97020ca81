"""Grad-mode switches: context managers that also work as decorators."""
import functools

from .. import _C


class _DecoratorContextManager:
    """A context manager usable as @decorator (a fresh instance per call)."""

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disables gradient recording inside the block (thread-local)."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording inside the block (thread-local)."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode to `mode` now (as a function) or inside the block."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = mode
        _C._set_grad_enabled(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """No recording and no version tracking inside the block; tensors made
    there are inference tensors (they can never be saved for backward)."""

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        if self.mode:
            _C._set_inference_mode(True)
        else:
            _C._set_inference_mode(False)
            _C._set_grad_enabled(self.prev[0])

    def __exit__(self, *exc):
        _C._set_inference_mode(self.prev[1])
        _C._set_grad_enabled(self.prev[0])

    def clone(self):
        return self.__class__(self.mode)
