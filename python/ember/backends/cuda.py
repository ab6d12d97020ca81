"""ember.backends.cuda: switches for CUDA math (TF32 matmuls, reduced-precision reductions,
the cuFFT plan cache, scaled-dot-product attention kernels). is_built() says whether this build of
Ember has CUDA; the switches are kept for programs that set them."""
import contextlib

from .. import _C


def is_built():
    return _C._cuda_is_built()


class cuBLASModule:
    """`matmul`: cuBLAS's switches as attributes."""
    _names = ('allow_tf32', 'allow_fp16_reduced_precision_reduction', 'allow_bf16_reduced_precision_reduction')

    def __init__(self):
        object.__setattr__(self, '_values', {'allow_tf32': False, 'allow_fp16_reduced_precision_reduction': True,
                                             'allow_bf16_reduced_precision_reduction': True})

    def __getattr__(self, name):
        if name in self._names:
            return self._values[name]
        raise AssertionError('Unknown attribute ' + name)

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AssertionError('Unknown attribute ' + name)
        self._values[name] = bool(value)


matmul = cuBLASModule()


class cuFFTPlanCacheAttrContextProp:
    """A cuFFT plan cache setting, read through the device (needs a GPU)."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, objtype=None):
        from .. import cuda
        cuda._lazy_init()

    def __set__(self, obj, value):
        from .. import cuda
        cuda._lazy_init()


class cuFFTPlanCache:
    """The cuFFT plan cache of one device."""
    size = cuFFTPlanCacheAttrContextProp('size')
    max_size = cuFFTPlanCacheAttrContextProp('max_size')

    def __init__(self, device_index):
        self.device_index = device_index

    def clear(self):
        from .. import cuda
        cuda._lazy_init()


class cuFFTPlanCacheManager:
    """cufft_plan_cache[device]: a device's plan cache; its attributes are the current device's."""

    def __getitem__(self, device):
        from .. import cuda
        return cuFFTPlanCache(cuda._device_index(device))

    def __getattr__(self, name):
        return getattr(self[0], name)

    def __setattr__(self, name, value):
        setattr(self[0], name, value)


cufft_plan_cache = cuFFTPlanCacheManager()

_sdp = {'flash': True, 'math': True}


def flash_sdp_enabled():
    return _sdp['flash']


def enable_flash_sdp(enabled):
    _sdp['flash'] = bool(enabled)


def math_sdp_enabled():
    return _sdp['math']


def enable_math_sdp(enabled):
    _sdp['math'] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True):
    """Context manager choosing the attention kernels; restores the previous choice on exit."""
    saved = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math))
    try:
        yield {}
    finally:
        _sdp.update(saved)


_linalg_library = ['default']


def preferred_linalg_library(backend=None):
    """The preferred CUDA linear-algebra library ('default', 'cusolver' or 'magma'); sets it when given."""
    if backend is not None:
        name = str(backend).lower().split('.')[-1]
        if name not in ('default', 'cusolver', 'magma'):
            raise RuntimeError(f'Unknown input value. Choose from: default, cusolver, magma; got {backend}')
        _linalg_library[0] = name
    return _linalg_library[0]
