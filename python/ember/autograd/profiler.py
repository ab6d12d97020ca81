"""ember.autograd.profiler: PyTorch's older profiler interface over the same
recorder as ember.profiler (profile, record_function, EventList)."""
import warnings

from ..profiler import _MEMORY, _SHAPES, _STACK, _Session, record_function
from ..profiler._events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ['profile', 'record_function', 'EventList', 'FunctionEvent', 'FunctionEventAvg']


class profile:
    """`with profile(record_shapes=True) as prof: ...` then
    `prof.key_averages().table()`, `prof.function_events`,
    `prof.export_chrome_trace(path)`. enabled=False records nothing."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None):
        if use_cuda:
            warnings.warn('ember.autograd.profiler: use_cuda=True, but this build of ember has no CUDA device; '
                          'recording CPU activity only')
        self.enabled = enabled
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        flags = (_SHAPES if record_shapes else 0) | (_MEMORY if profile_memory else 0) | (_STACK if with_stack else 0)
        self._session = _Session(flags, profile_memory, with_stack)
        self.function_events = None
        self.entered = False

    def __enter__(self):
        if self.entered:
            raise RuntimeError('Profiler context manager is not reentrant')
        self.entered = True
        if self.enabled:
            self._session.start()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.function_events = self._session.stop()
        return False

    def _events(self):
        if self.function_events is None:
            raise RuntimeError('Profiler didn\'t finish running')
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        return self._events().key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by=None, row_limit=100, **kwargs):
        return self._events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def total_average(self):
        return self._events().total_average()

    @property
    def self_cpu_time_total(self):
        return self._events().self_cpu_time_total

    def export_chrome_trace(self, path):
        return self._events().export_chrome_trace(path)

    def export_stacks(self, path, metric='self_cpu_time_total'):
        return self._events().export_stacks(path, metric)

    def __str__(self):
        return self.table()
