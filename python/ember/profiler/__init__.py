"""ember.profiler: PyTorch's torch.profiler for the CPU.

Every op dispatched by the C core and every autograd node run by backward
is a span (include/ember/profiler.h), with input shapes (record_shapes),
the tensor memory each allocates and frees (profile_memory) and the Python
stack (with_stack); `record_function` adds named ranges around user code.
Results: `prof.key_averages().table(sort_by=...)`, `prof.events()`,
`prof.export_chrome_trace(path)` (chrome://tracing, Perfetto),
`prof.export_stacks(path)`. `schedule` and `step()` record chosen steps of
a training loop and hand each finished window to `on_trace_ready`.
There is no GPU activity to record: asking for CUDA warns and records the CPU.
"""
import enum
import functools
import os
import socket
import time
import warnings

from .. import _C
from ._events import DeviceType, EventList, FunctionEvent, FunctionEventAvg, RecordScope, collect
from ._execution_graph import ExecutionGraphObserver

__all__ = ['ProfilerAction', 'ProfilerActivity', 'profile', 'record_function', 'schedule',
           'supported_activities', 'tensorboard_trace_handler', 'ExecutionGraphObserver', 'RecordScope',
           'kineto_available']

# include/ember/profiler.h's EM_PROFILE_* flags
_SHAPES, _MEMORY, _STACK = 1, 2, 4


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def kineto_available():
    """False: Ember's profiler is its own recorder, not Kineto."""
    return False


def supported_activities():
    return {ProfilerActivity.CPU}


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """Which action each step takes: skip_first steps, then cycles of `wait`
    idle steps, `warmup` steps and `active` recorded steps (the last of which
    saves), `repeat` times (0: for ever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError('Invalid profiler schedule arguments')
    if warmup == 0:
        warnings.warn('Profiler won\'t be using warmup, this can skew profiler results')
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise AssertionError('step must be non-negative')
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        k = step % cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if k < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready callback writing each window's Chrome trace to
    dir_name/<worker_name>.<ms>.pt.trace.json[.gz]."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f'{socket.gethostname()}_{os.getpid()}'
        path = os.path.join(dir_name, f'{name}.{int(time.time() * 1000)}.pt.trace.json')
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            import shutil
            with open(path, 'rb') as src, gzip.open(path + '.gz', 'wb') as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
    return handler


class record_function:
    """A named range around a block of code (context manager or decorator);
    free when no profiler is recording."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f'record_function(): name must be a str, not {type(name).__name__}')
        self.name, self.args = name, args
        self._ids = []

    def __enter__(self):
        self._ids.append(_C._profiler_range_push(self.name))
        return self

    def __exit__(self, *exc):
        _C._profiler_range_pop(self._ids.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


class _Session:
    """One recording window of the C profiler."""

    def __init__(self, flags, profile_memory, with_stack):
        self.flags, self.profile_memory, self.with_stack = flags, profile_memory, with_stack
        self.origin = None

    def start(self):
        self.origin = _C._profiler_now()
        _C._profiler_start(self.flags)

    def stop(self):
        _C._profiler_stop()
        return collect(self.profile_memory, self.with_stack, self.origin)


class profile:
    """Profiles the ops run inside the context (or between start() and
    stop()), with PyTorch's arguments; see the module's docstring."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None):
        activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        if ProfilerActivity.CUDA in activities:
            warnings.warn('ember.profiler: CUDA activity requested, but this build of ember has no CUDA device; '
                          'recording CPU activity only')
        self.activities = activities
        self.schedule = schedule or _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        flags = (_SHAPES if record_shapes else 0) | (_MEMORY if profile_memory else 0) | (_STACK if with_stack else 0)
        self._session = _Session(flags, profile_memory, with_stack)
        self._recording = False
        self._step_range = None
        self._record_steps = False
        self._events = None
        self.step_num = 0
        self.current_action = None

    # -- recording windows --------------------------------------------------
    @staticmethod
    def _records(action):
        return action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def _enter_action(self, action):
        self.current_action = action
        if self._records(action) and not self._recording:
            self._session.start()
            self._recording = True
        if self._recording and self._record_steps:  # as torch: step ranges once step() is used
            self._step_range = _C._profiler_range_push(f'ProfilerStep#{self.step_num}')

    def _finish_window(self):
        if self._step_range is not None:
            _C._profiler_range_pop(self._step_range)
            self._step_range = None
        if self._recording:
            self._events = self._session.stop()
            self._recording = False
            if self.on_trace_ready:
                self.on_trace_ready(self)

    def start(self):
        self._enter_action(self.schedule(self.step_num))
        return self

    def stop(self):
        if self._recording:
            self._finish_window()

    def step(self):
        """Marks the end of a training step: moves the schedule on."""
        previous = self.current_action
        self._record_steps = True
        self.step_num += 1
        action = self.schedule(self.step_num)
        if self._step_range is not None:
            _C._profiler_range_pop(self._step_range)
            self._step_range = None
        if previous == ProfilerAction.RECORD_AND_SAVE or (self._recording and not self._records(action)):
            self._finish_window()
        self._enter_action(action)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- results ------------------------------------------------------------
    def events(self):
        if self._events is None:
            raise RuntimeError('ember.profiler: no results yet: the profiler has not finished a recording window')
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        return self.events().export_chrome_trace(path)

    def export_stacks(self, path, metric='self_cpu_time_total'):
        if not self.with_stack:
            raise RuntimeError('ember.profiler: export_stacks needs with_stack=True')
        return self.events().export_stacks(path, metric)
