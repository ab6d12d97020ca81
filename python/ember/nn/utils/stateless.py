"""functional_call (torch.nn.utils.stateless): call a module with some of
its parameters and buffers replaced by given tensors (which may carry
history, so that gradients flow to them), restoring the module after."""
from contextlib import contextmanager

__all__ = ['functional_call']


def _owner(module, path):
    """(the submodule holding dotted path's last name, that name)."""
    *parents, name = path.split('.')
    for p in parents:
        module = getattr(module, p)
    return module, name


def _table(module, name):
    """The dict module keeps `name` in (parameters, buffers), or None for a
    plain attribute."""
    for table in (module._parameters, module._buffers):
        if name in table:
            return table
    return None


@contextmanager
def _reparametrize(module, tensors):
    """Inside the block, module.<path> reads tensors[path]. A value the
    module assigns to one of them in the block goes into `tensors`, and the
    module's own value is put back after."""
    swapped = []  # (path, owner, name, table, original)
    try:
        for path, tensor in tensors.items():
            owner, name = _owner(module, path)
            table = _table(owner, name)
            original = table[name] if table is not None else owner.__dict__.get(name)
            swapped.append((path, owner, name, table, original))
            if table is not None:
                table[name] = tensor
            else:
                object.__setattr__(owner, name, tensor)
        yield
    finally:
        for path, owner, name, table, original in reversed(swapped):
            current = table.get(name) if table is not None else owner.__dict__.get(name)
            if current is not tensors[path]:
                tensors[path] = current
            if table is not None:
                table[name] = original
            elif original is None:
                object.__delattr__(owner, name)
            else:
                object.__setattr__(owner, name, original)


def functional_call(module, parameters_and_buffers, args, kwargs=None):
    """module(*args, **kwargs) with module.<name> replaced by
    parameters_and_buffers[name] (dotted names reach submodules). A module
    whose weights are tied sees the replacement only under the names given."""
    if kwargs is None:
        kwargs = {}
    if not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, parameters_and_buffers):
        return module(*args, **kwargs)
