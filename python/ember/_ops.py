"""ember.ops (torch.ops): operators by namespace and overload, torch.ops.aten.<op>.<overload>.
Only the aten operators that have no other public name are registered here (slice); any other
name raises AttributeError, as torch does for an operator it does not know."""
from ._functions_extra import _slice


class OpOverload:
    """One overload of an operator: a callable named '<op>.<overload>'."""
    def __init__(self, op, overload, fn):
        self._op, self._overload, self._fn = op, overload, fn
        self.__name__ = f'{op}.{overload}'
        self.__module__ = 'ember._ops.aten'  # as torch's OpOverloads name torch._ops.aten

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f'<OpOverload(op=\'aten.{self._op}\', overload=\'{self._overload}\')>'


class OpOverloadPacket:
    """An operator: its overloads as attributes; calling it calls the first (the default)."""
    def __init__(self, op, overloads):
        self._op, self._overloads = op, overloads
        self.__name__ = op

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        if name.startswith('_') or name not in self._overloads:
            raise AttributeError(f"The underlying op of 'aten.{self._op}' has no overload name '{name}'")
        return OpOverload(self._op, name, self._overloads[name])

    def __call__(self, *args, **kwargs):
        return next(iter(self._overloads.values()))(*args, **kwargs)


class _OpNamespace:
    def __init__(self, name, table):
        self._name, self._table = name, table

    def __getattr__(self, op):
        if op.startswith('_') or op not in self._table:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute '{op}'")
        return OpOverloadPacket(op, self._table[op])


def _slice_tensor(self, dim=0, start=None, end=None, step=1):
    """aten::slice.Tensor: self[..., start:end:step, ...] along dim, a view."""
    if step <= 0:
        raise RuntimeError('slice step must be positive')
    return _slice(self, dim, start, end, step)


class _Ops:
    aten = _OpNamespace('aten', {'slice': {'Tensor': _slice_tensor}})


ops = _Ops()
aten = ops.aten
