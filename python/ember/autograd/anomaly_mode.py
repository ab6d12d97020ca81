"""Anomaly detection for autograd (torch.autograd.detect_anomaly): while it
is on, each graph node remembers the Python stack of the forward call that
made it, a backward formula returning NaN raises RuntimeError naming its
node, and a failing node's forward stack is shown as a warning. The checks
are the C engine's (src/autograd/anomaly.c); this module supplies the stack."""
import warnings

from .. import _C

__all__ = ['detect_anomaly', 'set_detect_anomaly']


def _record():
    import traceback  # only while anomaly mode is on: keeps it out of `import ember`
    return ''.join(traceback.format_stack()[:-1])


def _report(node_name, stack):
    if stack is not None:
        warnings.warn(f'Error detected in {node_name}. Traceback of forward call that caused the error:\n{stack}',
                      stacklevel=1)


_C._set_anomaly_callbacks(_record, _report)


def is_anomaly_enabled():
    return _C._is_anomaly_enabled()


def is_anomaly_check_nan_enabled():
    return _C._is_anomaly_check_nan_enabled()


def set_anomaly_enabled(enabled, check_nan=True):
    _C._set_anomaly_enabled(bool(enabled), bool(check_nan))


class detect_anomaly:
    """Anomaly mode inside the block; warns that it is slow, as PyTorch does."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn('Anomaly Detection has been enabled. This mode will increase the runtime and should only be '
                      'enabled for debugging.', stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly mode to `mode` now (as a function), restored at the end
    of a `with` block."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
