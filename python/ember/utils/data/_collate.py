"""default_collate / default_convert: samples to batches, as PyTorch 1.13's
torch.utils.data._utils.collate. Inside a DataLoader worker, tensors are
stacked straight into shared memory (Note [DataLoader workers] in
dataloader.py), so that sending the batch copies no tensor data."""
import collections.abc
import re

import ember
from ember import _C
from ._worker import get_worker_info

__all__ = ['default_collate', 'default_convert']

# NumPy dtypes without a tensor counterpart: strings ('S', 'a', 'U') and objects ('O').
_np_str_obj = re.compile(r'[SaUO]')
_err = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(obj, name=None):
    t = type(obj)
    return t.__module__ == 'numpy' and (name is None or t.__name__ == name)


def _rebuild_sequence(elem, items):
    """items as the same kind of sequence or mapping as elem (a list if it
    cannot be rebuilt so)."""
    try:
        return type(elem)(items)
    except TypeError:
        return items if not isinstance(elem, collections.abc.Mapping) else dict(items)


def default_convert(data):
    """NumPy arrays (and those inside mappings, namedtuples and sequences)
    become tensors; everything else is returned as it is."""
    if isinstance(data, ember.Tensor):
        return data
    if _is_numpy(data) and type(data).__name__ not in ('str_', 'string_'):
        if _is_numpy(data, 'ndarray') and _np_str_obj.search(data.dtype.str):
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_sequence(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, '_fields'):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _stack(batch):
    elem = batch[0]
    out = None
    if get_worker_info() is not None:
        out = _C._empty_shared((len(batch),) + tuple(elem.shape), elem.dtype)
    return ember.stack(batch, 0, out=out)


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors, NumPy arrays and
    numbers become tensors with a new leading dim; strings stay a list;
    mappings, namedtuples and sequences are collated field by field."""
    elem = batch[0]
    if isinstance(elem, ember.Tensor):
        return _stack(batch)
    if _is_numpy(elem, 'ndarray') or _is_numpy(elem, 'memmap'):
        if _np_str_obj.search(elem.dtype.str):
            raise TypeError(_err.format(elem.dtype))
        return default_collate([ember.as_tensor(b) for b in batch])
    if _is_numpy(elem) and type(elem).__name__ not in ('str_', 'bytes_') and hasattr(elem, 'dtype'):
        import numpy  # (already imported: elem is one of its scalars)
        return ember.as_tensor(numpy.asarray(batch))  # NumPy scalars, keeping their dtype
    if isinstance(elem, float):
        return ember.tensor(batch, dtype=ember.float64)
    if isinstance(elem, int):
        return ember.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_sequence(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, '_fields'):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError('each element in list of batch should be of equal size')
        columns = [default_collate(samples) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(_err.format(type(elem)))
