"""ember.cuda: torch.cuda's API over Ember's CUDA devices.

Which devices there are comes from the C extension (`_C._cuda_device_count()`,
`_C._cuda_is_built()`); today that is none, so `is_available()` is False,
the queries that need no device answer as PyTorch does without one (0, [],
{}), seeding is a no-op, and every call that needs a GPU raises
RuntimeError("Ember not compiled with CUDA enabled ..."), the text the C
extension gives for `tensor.cuda()`. The CUDA backend fills in the calls
guarded by `_lazy_init()` once it reports devices.
"""
import warnings

from .. import _C
from .._stubs import not_implemented

# The C extension's text for a CUDA call in a build without CUDA (python/csrc/emp.h EMP_NO_CUDA).
_NO_CUDA = 'Ember not compiled with CUDA enabled: device cuda is not available in this build'
_initialized = False

has_half = True
has_magma = False
default_generators = ()


class OutOfMemoryError(RuntimeError):
    """Raised when a CUDA allocation fails (as torch.cuda.OutOfMemoryError)."""


class CudaError(RuntimeError):
    def __init__(self, code):
        super().__init__(f'CUDA error {code}')


class DeferredCudaCallError(Exception):
    pass


def is_available():
    """True when this build of Ember has CUDA and sees at least one GPU."""
    return _C._cuda_is_built() and _C._cuda_device_count() > 0


def device_count():
    return _C._cuda_device_count() if _C._cuda_is_built() else 0


def is_initialized():
    return _initialized


def _lazy_init():
    """Raises the error PyTorch raises without CUDA; initialises the devices once there are some."""
    global _initialized
    if _initialized:
        return
    if not _C._cuda_is_built():
        raise RuntimeError(_NO_CUDA)
    if _C._cuda_device_count() == 0:
        raise RuntimeError('No CUDA GPUs are available')
    raise NotImplementedError("Ember's CUDA backend does not report its devices to ember.cuda yet")


def init():
    _lazy_init()


def _needs_gpu(name, doc):
    def fn(*args, **kwargs):
        _lazy_init()
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + ' (needs a CUDA device: raises RuntimeError without one)'
    return fn


# Calls that need an initialised GPU; without one they raise PyTorch's error.
for _name, _doc in (
        ('current_device', 'The index of the selected device.'),
        ('get_device_name', 'The name of a device.'),
        ('get_device_capability', 'The (major, minor) compute capability of a device.'),
        ('get_device_properties', 'The properties of a device.'),
        ('synchronize', 'Waits for all work on a device to finish.'),
        ('set_device', 'Selects the current device.'),
        ('current_stream', 'The current stream of a device.'),
        ('default_stream', 'The default stream of a device.'),
        ('set_stream', 'Sets the current stream.'),
        ('current_blas_handle', 'The cuBLAS handle of the current stream.'),
        ('get_rng_state', "A device generator's state as a uint8 tensor."),
        ('set_rng_state', "Sets a device generator's state."),
        ('initial_seed', "The current device generator's initial seed."),
        ('mem_get_info', 'The (free, total) memory of a device in bytes.'),
        ('ipc_collect', 'Frees the memory of tensors shared with other processes that have ended.'),
        ('is_bf16_supported', 'Whether the device computes in bfloat16.'),
        ('get_sync_debug_mode', 'The synchronisation debug mode.'),
        ('set_sync_debug_mode', 'Sets the synchronisation debug mode.'),
        ('set_per_process_memory_fraction', "Caps this process's share of a device's memory."),
        ('can_device_access_peer', 'Whether one device can read the memory of another.'),
        ('caching_allocator_alloc', 'Memory from the caching allocator.'),
        ('caching_allocator_delete', 'Returns memory to the caching allocator.'),
        ('cudart', 'The CUDA runtime library.'),
        ('utilization', 'The GPU utilisation in percent.'),
        ('memory_usage', 'The memory read/write utilisation in percent.'),
        ('list_gpu_processes', 'The processes running on a device.'),
        ('is_current_stream_capturing', 'Whether the current stream is capturing a CUDA graph.'),
        ('graph_pool_handle', 'A memory pool handle for CUDA graphs.'),
        ('memory_snapshot', "The caching allocator's state.")):
    globals()[_name] = _needs_gpu(_name, _doc)
del _name, _doc


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# Seeding without a GPU does nothing (PyTorch defers it until CUDA initialises).
def manual_seed(seed):
    if is_available():
        _lazy_init()


def manual_seed_all(seed):
    if is_available():
        _lazy_init()


def seed():
    if is_available():
        _lazy_init()


def seed_all():
    if is_available():
        _lazy_init()


def get_arch_list():
    return []


def get_gencode_flags():
    return ''


def empty_cache():
    """Frees the cached memory of the GPU allocator (nothing without one)."""
    if _initialized:
        _lazy_init()


# Memory statistics: empty without an initialised GPU, as in PyTorch.
def memory_stats(device=None):
    return {}


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_summary(device=None, abbreviated=False):
    _lazy_init()


def _zero_stat(name, renamed=None):
    def stat(device=None):
        if renamed:
            warnings.warn(f'torch.cuda.{name} has been renamed to torch.cuda.{renamed}', FutureWarning)
        return memory_stats(device).get('allocated_bytes.all.current', 0)
    stat.__name__ = stat.__qualname__ = name
    return stat


memory_allocated = _zero_stat('memory_allocated')
max_memory_allocated = _zero_stat('max_memory_allocated')
memory_reserved = _zero_stat('memory_reserved')
max_memory_reserved = _zero_stat('max_memory_reserved')
memory_cached = _zero_stat('memory_cached', 'memory_reserved')
max_memory_cached = _zero_stat('max_memory_cached', 'max_memory_reserved')


def reset_peak_memory_stats(device=None):
    _lazy_init()


def reset_accumulated_memory_stats(device=None):
    _lazy_init()


def reset_max_memory_allocated(device=None):
    _lazy_init()


def reset_max_memory_cached(device=None):
    _lazy_init()


def check_error(res):
    if res != 0:
        raise CudaError(res)


class cudaStatus:
    SUCCESS = 0
    ERROR_NOT_READY = 34


class device:
    """Context manager that selects a device (a no-op for None or a negative index)."""

    def __init__(self, device):
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Selects the device of a tensor (nothing for a CPU tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def _device_index(d):
    if d is None:
        return -1
    if isinstance(d, str):
        d = _C.device(d)
    if isinstance(d, _C.device):
        if d.type != 'cuda':
            raise ValueError(f'Expected a cuda device, but got: {d}')
        return -1 if d.index is None else d.index
    return int(d)


class Stream:
    """A CUDA stream (needs a GPU)."""

    def __init__(self, device=None, priority=0, **kwargs):
        _lazy_init()


class ExternalStream(Stream):
    pass


class Event:
    """A CUDA event (needs a GPU)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        _lazy_init()


class StreamContext:
    """Selects a stream (a no-op for None)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            set_stream(self.stream)

    def __exit__(self, *exc):
        return False


def stream(stream):
    return StreamContext(stream)


class CUDAGraph:
    def __init__(self):
        _lazy_init()


class graph:
    def __init__(self, cuda_graph, pool=None, stream=None):
        _lazy_init()


@not_implemented('torch.cuda.make_graphed_callables (CUDA graphs)')
def make_graphed_callables(callables, sample_args, num_warmup_iters=3):
    pass


def _legacy_types():
    from .._legacy import cuda_tensor_types
    return cuda_tensor_types()


def __getattr__(name):
    if name == 'amp':
        import importlib
        return importlib.import_module('.amp', __name__)
    types = _legacy_types()
    if name in types:
        return types[name]
    from .._storage import CUDA_LEGACY
    if name in CUDA_LEGACY:  # constructing one raises the no-CUDA error, as torch's does without a GPU
        return CUDA_LEGACY[name]
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")
