"""ExecutionGraphObserver (torch.profiler's): records the ops run between start() and stop() and
writes them as a graph of nodes to a JSON file — each node its id, name, parent (the enclosing
span, or the root), thread, scope (RecordScope) and input shapes, with the process as root."""
import json
import os
import time

from ._events import RecordScope, _BACKWARD, _RANGE, collect

_ROOT = '[pytorch|profiler|execution_graph|process]'


class ExecutionGraphObserver:
    def __init__(self):
        self._path, self._registered, self._running, self._origin = None, False, False, None

    def register_callback(self, output_file_path):
        """Sets the JSON file the graph goes to (once per observer)."""
        if not self._registered:
            self._path, self._registered = os.fspath(output_file_path), True
        return self

    def unregister_callback(self):
        if self._running:
            self.stop()
        self._registered = False

    def get_output_file_path(self):
        if not self._registered:
            raise RuntimeError('A callback to the EG profiler needs to be registered first before getting the '
                               'output file path')
        return self._path

    def start(self):
        from .. import _C
        from . import _SHAPES
        if not self._registered:
            raise RuntimeError('ExecutionGraphObserver: register_callback(path) first')
        if not self._running:
            self._origin = _C._profiler_now()
            _C._profiler_start(_SHAPES)
            self._running = True

    def stop(self):
        """Stops recording and writes the graph."""
        from .. import _C
        if not self._running:
            return
        _C._profiler_stop()
        self._running = False
        events = collect(origin_ns=self._origin)
        nodes = [{'name': _ROOT, 'id': 1, 'parent': 1, 'tid': 0, 'scope': RecordScope.FUNCTION.value,
                  'input_shapes': [], 'start_us': 0.0, 'dur_us': 0.0}]
        ids = {}
        for e in events:
            ids[id(e)] = len(nodes) + 1
            scope = RecordScope.BACKWARD_FUNCTION if e.kind == _BACKWARD else \
                RecordScope.USER_SCOPE if e.kind == _RANGE else RecordScope.FUNCTION
            nodes.append({'name': e.name, 'id': ids[id(e)], 'parent': ids.get(id(e.cpu_parent), 1), 'tid': e.thread,
                          'scope': scope.value, 'input_shapes': [list(s) for s in e.input_shapes or []],
                          'start_us': e.time_range.start, 'dur_us': e.time_range.end - e.time_range.start})
        with open(self._path, 'w') as f:
            json.dump({'schema': '1.0.1', 'pid': os.getpid(), 'time': time.strftime('%Y-%m-%d %X'),
                       'nodes': nodes}, f)
