"""ember.jit: TorchScript's decorators as eager no-ops (torch.jit).

Ember runs everything eagerly: script() and trace() return the function or
module itself, ignore/unused/export leave the function as it is, and
is_scripting()/is_tracing() are False, so code written for TorchScript runs
unchanged in eager mode. Saving and loading TorchScript archives
(save/load) raise NotImplementedError.
"""
import contextlib
from typing import Final  # noqa: F401 (torch.jit.Final: a class attribute that is constant)

from .._stubs import not_implemented


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns obj itself: Ember does not compile to TorchScript."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None):
    """Returns func itself (the eager function or module), without running it."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None):
    return mod


def script_if_tracing(fn):
    return fn


def ignore(drop=False, **kwargs):
    """@ignore or @ignore(drop=True): leaves the function as it is (TorchScript would call Python)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def script_method(fn):
    return fn


def is_scripting():
    """False: Ember code never runs as TorchScript."""
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    """Returns the_value (the type is for the TorchScript compiler)."""
    return the_value


def isinstance(obj, target_type):
    import builtins
    import typing
    origin = typing.get_origin(target_type)
    return builtins.isinstance(obj, origin if origin is not None else target_type)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    return None


def fork(func, *args, **kwargs):
    """Runs func now and returns a finished future (wait() gives its result)."""
    return _Done(func(*args, **kwargs))


def wait(future):
    return future.wait()


class _Done:
    def __init__(self, value):
        self.value = value

    def wait(self):
        return self.value

    def done(self):
        return True


Future = _Done


@contextlib.contextmanager
def optimized_execution(should_optimize):
    yield


@contextlib.contextmanager
def fuser(name):
    yield


@contextlib.contextmanager
def strict_fusion():
    yield


def set_fusion_strategy(strategy):
    return []


def enable_onednn_fusion(enabled):
    pass


def onednn_fusion_enabled():
    return False


def set_module(obj, mod):
    obj.__module__ = mod


class Attribute:
    """Attribute(value, type) is value in eager mode."""

    def __new__(cls, value, type=None):
        return value


class Error(RuntimeError):
    pass


class TracerWarning(Warning):
    pass


class ScriptWarning(Warning):
    pass


class TracingCheckError(Exception):
    pass


@not_implemented('torch.jit.save (TorchScript archives)')
def save(m, f, _extra_files=None):
    pass


@not_implemented('torch.jit.load (TorchScript archives)')
def load(f, map_location=None, _extra_files=None):
    pass


@not_implemented('torch.jit.export_opnames (TorchScript)')
def export_opnames(m):
    pass


@not_implemented('torch.jit.last_executed_optimized_graph (TorchScript)')
def last_executed_optimized_graph():
    pass


@not_implemented('torch.jit.jit_module_from_flatbuffer (TorchScript)')
def jit_module_from_flatbuffer(f):
    pass


@not_implemented('torch.jit.save_jit_module_to_flatbuffer (TorchScript)')
def save_jit_module_to_flatbuffer(m, f, _extra_files=None):
    pass
