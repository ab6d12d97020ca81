"""The profiler's results: FunctionEvent (one span), EventList (a session's
spans, with key_averages, table and export_chrome_trace) and
FunctionEventAvg (spans grouped by name, as key_averages returns them).
Built from the C recorder's tuples (ember._C._profiler_events)."""
import enum
import json
import os

from .. import _C

# enum em_profile_kind (include/ember/profiler.h)
_OP, _BACKWARD, _RANGE = 0, 1, 2


class DeviceType(enum.Enum):
    """Device kinds, numbered as PyTorch's (torch.autograd.DeviceType); Ember records CPU only."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    ORT = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18


class RecordScope(enum.Enum):
    """What a recorded span is (torch.profiler.RecordScope): Ember's op spans are FUNCTION, autograd
    nodes BACKWARD_FUNCTION and record_function ranges USER_SCOPE."""
    FUNCTION = 0
    BACKWARD_FUNCTION = 1
    TORCHSCRIPT_FUNCTION = 2
    KERNEL_FUNCTION_DTYPE = 3
    CUSTOM_CLASS = 4
    BUILD_FEATURE = 5
    LITE_INTERPRETER = 6
    USER_SCOPE = 7
    STATIC_RUNTIME_OP = 8
    STATIC_RUNTIME_MODEL = 9


class Interval:
    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


def _shapes(text):
    return json.loads(text) if text else []


def _stack(text):
    return text.splitlines() if text else []


class FunctionEvent:
    """One recorded span: an op, an autograd node run by backward, or a
    record_function range. Times in microseconds from the session's start."""

    def __init__(self, id, name, kind, thread, start_us, end_us, self_bytes, input_shapes, stack):
        self.id, self.name, self.kind, self.thread = id, name, kind, thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes, self.stack = input_shapes, stack
        self.self_cpu_memory_usage = self_bytes
        self.cpu_children, self.cpu_parent = [], None
        self.count = 1
        self.device_type = DeviceType.CPU
        self.is_async = self.is_remote = self.is_legacy = False
        self.node_id, self.sequence_nr, self.flops = -1, -1, 0
        self.cuda_time_total = self.self_cuda_time_total = 0
        self.cuda_memory_usage = self.self_cuda_memory_usage = 0

    @property
    def key(self):
        return self.name

    @property
    def trace_name(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self):
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg:
    """Events of one key (name, and input shapes or stack when grouped by
    them) added up."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key, self.input_shapes, self.stack = key, input_shapes, stack
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.cuda_time_total = self.self_cuda_time_total = 0
        self.cuda_memory_usage = self.self_cuda_memory_usage = 0
        self.node_id, self.flops = -1, 0
        self.is_async = self.is_remote = self.is_legacy = False
        self.device_type = DeviceType.CPU
        self.cpu_children, self.cpu_parent = [], None

    def add(self, other):
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


def _format_time(us):
    if us >= 1e6:
        return f'{us / 1e6:.3f}s'
    if us >= 1e3:
        return f'{us / 1e3:.3f}ms'
    return f'{us:.3f}us'


def _format_memory(nbytes):
    for unit, scale in (('Gb', 1 << 30), ('Mb', 1 << 20), ('Kb', 1 << 10)):
        if abs(nbytes) >= scale:
            return f'{nbytes / scale:.2f} {unit}'
    return f'{nbytes} b'


class EventList(list):
    """A session's events in the order they began."""

    def __init__(self, events=(), profile_memory=False, with_stack=False):
        super().__init__(events)
        self._profile_memory, self._with_stack = profile_memory, with_stack

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for e in self:
            key = (e.key, str(e.input_shapes) if group_by_input_shape else None,
                   tuple(e.stack[:group_by_stack_n]) if group_by_stack_n else None)
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else None,
                                               e.stack[:group_by_stack_n] if group_by_stack_n else None)
            groups[key].add(e)
        averages = EventList(groups.values(), self._profile_memory, self._with_stack)
        averages._grouped_by_shape, averages._stack_n = group_by_input_shape, group_by_stack_n
        return averages

    def total_average(self):
        total = FunctionEventAvg('Total')
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False):
        rows = [e for e in self if not (top_level_events_only and e.cpu_parent is not None)]
        if sort_by is not None:
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total = sum(e.self_cpu_time_total for e in self) or 1.0
        name_width = min(max([len(e.key) for e in rows] + [4]) + 4, max_name_column_width)
        columns = [('Name', name_width, lambda e: _clip(e.key, name_width)),
                   ('Self CPU %', 12, lambda e: f'{100 * e.self_cpu_time_total / total:.2f}%'),
                   ('Self CPU', 12, lambda e: _format_time(e.self_cpu_time_total)),
                   ('CPU total %', 12, lambda e: f'{100 * e.cpu_time_total / total:.2f}%'),
                   ('CPU total', 12, lambda e: _format_time(e.cpu_time_total)),
                   ('CPU time avg', 12, lambda e: _format_time(e.cpu_time_total / max(e.count, 1)))]
        if self._profile_memory:
            columns += [('CPU Mem', 12, lambda e: _format_memory(e.cpu_memory_usage)),
                        ('Self CPU Mem', 12, lambda e: _format_memory(e.self_cpu_memory_usage))]
        columns.append(('# of Calls', 12, lambda e: str(e.count)))
        if getattr(self, '_grouped_by_shape', False):
            width = max_shapes_column_width // 2
            columns.append(('Input Shapes', width, lambda e: _clip(str(e.input_shapes), width)))
        if self._with_stack and getattr(self, '_stack_n', 0):
            columns.append(('Source Location', max_src_column_width,
                            lambda e: _clip((e.stack or [''])[0], max_src_column_width)))
        line = ''.join('-' * w + '  ' for _, w, _ in columns)
        out = [header] if header else []
        out += [line, ''.join(f'{title:>{w}}  ' for title, w, _ in columns), line]
        out += [''.join(f'{cell(e):>{w}}  ' for _, w, cell in columns) for e in rows]
        out += [line, f'Self CPU time total: {_format_time(sum(e.self_cpu_time_total for e in self))}', '']
        return '\n'.join(out)

    def export_chrome_trace(self, path):
        """Writes the events as a Chrome trace (chrome://tracing, Perfetto):
        complete ('X') events in microseconds, one track per thread."""
        pid = os.getpid()
        categories = {_OP: 'cpu_op', _BACKWARD: 'cpu_op', _RANGE: 'user_annotation'}
        trace = [{'name': 'process_name', 'ph': 'M', 'pid': pid, 'tid': 0, 'args': {'name': 'ember (CPU)'}}]
        trace += [{'name': 'thread_name', 'ph': 'M', 'pid': pid, 'tid': t, 'args': {'name': f'thread {t}'}}
                  for t in sorted({e.thread for e in self})]
        for e in self:
            args = {}
            if e.input_shapes:
                args['Input Dims'] = e.input_shapes
            if e.stack:
                args['Call stack'] = ';'.join(e.stack)
            if e.self_cpu_memory_usage:
                args['Self CPU Mem (bytes)'] = e.self_cpu_memory_usage
            trace.append({'name': e.name, 'cat': categories[e.kind], 'ph': 'X', 'pid': pid, 'tid': e.thread,
                          'ts': round(e.time_range.start, 3), 'dur': round(e.cpu_time_total, 3), 'args': args})
        with open(path, 'w') as f:
            json.dump({'traceEvents': trace, 'displayTimeUnit': 'ms'}, f)

    def export_stacks(self, path, metric='self_cpu_time_total'):
        """Writes 'frame;frame;...;op value' lines (outermost frame first), the
        input of flamegraph.pl; needs with_stack=True."""
        with open(path, 'w') as f:
            for e in self:
                if e.stack:
                    f.write(';'.join(reversed(e.stack)) + f';{e.name} {int(getattr(e, metric))}\n')


def _clip(text, width):
    return text if len(text) <= width - 1 else text[:width - 4] + '...'


def collect(profile_memory=False, with_stack=False, origin_ns=None):
    """The C recorder's events of the last session as an EventList, with
    parents and children linked by nesting (per thread)."""
    raw = _C._profiler_events()
    if origin_ns is None:
        origin_ns = raw[0][4] if raw else 0
    stop_ns = max([r[5] for r in raw] + [r[4] for r in raw] + [origin_ns])
    events, open_at_depth = EventList(profile_memory=profile_memory, with_stack=with_stack), {}
    for i, (name, kind, depth, thread, begin, end, self_bytes, shapes, stack) in enumerate(raw):
        end = stop_ns if end < 0 else end  # a span still open when the session stopped
        e = FunctionEvent(i + 1, name, kind, thread, (begin - origin_ns) / 1e3, (end - origin_ns) / 1e3,
                          self_bytes, _shapes(shapes), _stack(stack))
        parents = open_at_depth.setdefault(thread, [])
        del parents[depth:]
        if depth and len(parents) == depth:
            e.cpu_parent = parents[-1]
            parents[-1].cpu_children.append(e)
        parents.append(e)
        events.append(e)
    return events
