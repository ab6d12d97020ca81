"""DLPack exchange (torch.utils.dlpack): tensors shared zero-copy with any
library that speaks DLPack (NumPy >= 1.22, PyTorch, JAX, CuPy...)."""
import enum

from .. import _C


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (dlpack.h), as __dlpack_device__ returns them."""
    kDLCPU = 1
    kDLGPU = 2
    kDLCPUPinned = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLExtDev = 12
    kDLOneAPI = 14


def to_dlpack(tensor):
    """A "dltensor" capsule sharing the tensor's memory; consumable once."""
    return _C._to_dlpack(tensor)


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of `ext_tensor`: an object with
    __dlpack__ (a NumPy array, a PyTorch tensor...) or a legacy capsule."""
    if hasattr(ext_tensor, '__dlpack__'):
        device_type, _ = ext_tensor.__dlpack_device__()
        if device_type != DLDeviceType.kDLCPU:
            raise RuntimeError(f'from_dlpack: DLPack device type {int(device_type)} is not supported '
                               '(Ember imports CPU memory only)')
        capsule = ext_tensor.__dlpack__()
    else:
        capsule = ext_tensor
    return _C._from_dlpack(capsule)
