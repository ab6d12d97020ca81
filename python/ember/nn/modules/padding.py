"""Padding modules (torch.nn's ConstantPad*, ZeroPad2d, ReflectionPad*, ReplicationPad*):
padding normalised to a tuple as PyTorch does; forward is F.pad."""
from .. import functional as F
from .module import Module
from .pooling import _ntuple

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _width = 2

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _ntuple(self._width)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _width = 2


class ConstantPad2d(_ConstantPadNd):
    _width = 4


class ConstantPad3d(_ConstantPadNd):
    _width = 6


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.)

    def extra_repr(self):
        return f"{self.padding}"


class _ModePadNd(Module):
    __constants__ = ["padding"]
    _width = 2
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(self._width)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    _width, _mode = 2, "reflect"


class ReflectionPad2d(_ModePadNd):
    _width, _mode = 4, "reflect"


class ReflectionPad3d(_ModePadNd):
    _width, _mode = 6, "reflect"


class ReplicationPad1d(_ModePadNd):
    _width, _mode = 2, "replicate"


class ReplicationPad2d(_ModePadNd):
    _width, _mode = 4, "replicate"


class ReplicationPad3d(_ModePadNd):
    _width, _mode = 6, "replicate"
