"""Marking what Ember names but does not implement.

A function decorated with @not_implemented raises NotImplementedError naming
what is missing, and carries `__ember_not_implemented__ = True` so that
tools/api_coverage.py counts its name as missing rather than present.
"""
import functools


def not_implemented(what):
    """Decorator: the function raises NotImplementedError(`what` + ' is not implemented in Ember')."""
    def decorate(fn):
        @functools.wraps(fn)
        def stub(*args, **kwargs):
            raise NotImplementedError(f'{what} is not implemented in Ember')
        stub.__ember_not_implemented__ = True
        return stub
    return decorate


def is_stub(obj):
    return getattr(obj, '__ember_not_implemented__', False) is True
