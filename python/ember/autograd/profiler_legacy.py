"""The autograd profiler's low-level interface (torch.autograd's ProfilerState, ProfilerConfig,
ProfilerEvent, _enable_profiler_legacy / _disable_profiler_legacy): a config starts the C
recorder; stopping returns its spans as ProfilerEvents, one list per thread, each span a
'push' event at its start and a 'pop' event at its end, as PyTorch's legacy profiler gives."""
import enum

from .. import _C
from ..profiler import _MEMORY, _SHAPES, _STACK, kineto_available  # noqa: F401 (torch.autograd's too)
from ..profiler._events import DeviceType, RecordScope, _BACKWARD, _RANGE

__all__ = ['ProfilerState', 'ProfilerConfig', 'ProfilerEvent', 'kineto_available']


class ProfilerState(enum.Enum):
    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    KINETO = 5
    KINETO_GPU_FALLBACK = 6


class ProfilerConfig:
    """What to record: ProfilerConfig(state, report_input_shapes, profile_memory, with_stack, with_flops,
    with_modules, experimental_config)."""

    def __init__(self, state, report_input_shapes, profile_memory, with_stack, with_flops, with_modules,
                 experimental_config=None):
        if not isinstance(state, ProfilerState):
            raise TypeError(f'ProfilerConfig: state must be a ProfilerState, got {type(state).__name__}')
        self.state, self.report_input_shapes, self.profile_memory = state, bool(report_input_shapes), \
            bool(profile_memory)
        self.with_stack, self.with_flops, self.with_modules = bool(with_stack), bool(with_flops), bool(with_modules)
        self.experimental_config = experimental_config


class ProfilerEvent:
    """One 'push' (a span's start) or 'pop' (its end) of the legacy profiler; the accessors are
    methods, as PyTorch's."""

    def __init__(self, kind, name, thread, time_us, handle, span_kind, shapes, stack, self_bytes):
        self._kind, self._name, self._thread, self._time_us, self._handle = kind, name, thread, time_us, handle
        self._scope = RecordScope.BACKWARD_FUNCTION if span_kind == _BACKWARD else \
            RecordScope.USER_SCOPE if span_kind == _RANGE else RecordScope.FUNCTION
        self._shapes, self._stack, self._bytes = shapes, stack, self_bytes

    def kind(self):
        return self._kind

    def name(self):
        return self._name

    def thread_id(self):
        return self._thread

    def fwd_thread_id(self):
        return self._thread

    def start_us(self):
        return self._time_us

    def cpu_elapsed_us(self, other):
        """Microseconds from this event to `other`."""
        return other._time_us - self._time_us

    def cpu_memory_usage(self):
        return self._bytes

    def cuda_elapsed_us(self, other):
        raise RuntimeError('Profiler event has no CUDA time: Ember records the CPU only')

    def cuda_memory_usage(self):
        return 0

    def has_cuda(self):
        return False

    def device(self):
        return DeviceType.CPU.value

    def handle(self):
        return self._handle

    def node_id(self):
        return -1

    def is_remote(self):
        return False

    def is_async(self):
        return False

    def sequence_nr(self):
        return -1

    def correlation_id(self):
        return self._handle

    def scope(self):
        return self._scope.value

    def shapes(self):
        return self._shapes

    def stack(self):
        return self._stack

    def flops(self):
        return 0

    def __repr__(self):
        return f'<ProfilerEvent {self._kind} {self._name!r} at {self._time_us:.3f} us>'


_session = {}


def _enable_profiler_legacy(config):
    """Starts recording with config (state CPU; Disabled records nothing)."""
    if _session:
        raise RuntimeError('Profiler is already enabled on this thread')
    if config.state == ProfilerState.Disabled:
        return
    if config.state not in (ProfilerState.CPU, ProfilerState.KINETO):
        raise RuntimeError(f'ProfilerState.{config.state.name} needs a GPU profiler, which Ember does not have')
    flags = (_SHAPES if config.report_input_shapes else 0) | (_MEMORY if config.profile_memory else 0) | \
        (_STACK if config.with_stack else 0)
    _session['origin'] = _C._profiler_now()
    _C._profiler_start(flags)


def _disable_profiler_legacy():
    """Stops recording: a list per thread of ProfilerEvents in time order."""
    if not _session:
        raise RuntimeError("can't disable profiler when it's not running")
    _C._profiler_stop()
    origin = _session.pop('origin')
    from ..profiler._events import _shapes, _stack
    raw = _C._profiler_events()
    stop = max([r[5] for r in raw] + [r[4] for r in raw] + [origin])
    threads = {}
    for handle, (name, kind, depth, thread, begin, end, self_bytes, shapes, stack) in enumerate(raw, 1):
        end = stop if end < 0 else end
        for what, t in (('push', begin), ('pop', end)):
            threads.setdefault(thread, []).append(
                ProfilerEvent(what, name, thread, (t - origin) / 1e3, handle, kind, _shapes(shapes), _stack(stack),
                              self_bytes if what == 'push' else 0))
    for events in threads.values():
        events.sort(key=lambda e: (e._time_us, e._kind == 'push'))
    return list(threads.values())
