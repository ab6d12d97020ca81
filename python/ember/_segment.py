"""torch.segment_reduce (PyTorch 1.13): reductions over consecutive segments of one dim, given
by their lengths or offsets. A composite of scatter_reduce, so it differentiates as that does
(ties of max/min share the gradient; prod through zeros exactly)."""
from . import _C
from ._argcheck import wrap_dim

_EMPTY = {'max': -float('inf'), 'min': float('inf'), 'sum': 0.0, 'prod': 1.0, 'mean': float('nan')}
_SCATTER = {'max': 'amax', 'min': 'amin', 'sum': 'sum', 'prod': 'prod', 'mean': 'sum'}


def _checked_lengths(data, axis, lengths, offsets, unsafe):
    if lengths is None and offsets is None:
        raise RuntimeError('segment_reduce(): Either lengths or offsets must be defined')
    if offsets is not None:
        if offsets.dtype not in (_C.int32, _C.int64):
            raise RuntimeError('segment_reduce(): offsets must be int32 or int64')
        lengths = offsets.narrow(-1, 1, offsets.shape[-1] - 1) - offsets.narrow(-1, 0, offsets.shape[-1] - 1)
    elif lengths.dtype not in (_C.int32, _C.int64):
        raise RuntimeError('segment_reduce(): lengths must be int32 or int64')
    if lengths.dim() != axis + 1 or tuple(lengths.shape[:axis]) != tuple(data.shape[:axis]):
        raise RuntimeError(f'segment_reduce(): Expected lengths (or offsets) of shape data.shape[:axis] + '
                           f'(segments,), got {list(lengths.shape)} for data {list(data.shape)} and axis {axis}')
    lengths = lengths.to(_C.int64)
    if not unsafe:
        if bool((lengths < 0).any()):
            raise RuntimeError('segment_reduce(): lengths contains negative value!')
        if bool((lengths.sum(-1) != data.shape[axis]).any()):
            raise RuntimeError('segment_reduce(): Expected all rows of lengths along axis to sum to '
                               'data.size(lengths.dim()-1) when !unsafe.')
    return lengths


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """(data.shape[:axis] + (segments,) + data.shape[axis + 1:]): segment k along axis reduces the
    lengths[..., k] elements that follow segment k - 1's. An empty segment gives initial, or the
    reduction's empty value (-inf, inf, 0, 1, nan); initial joins every segment's reduction (for
    mean, (initial + sum) / length, as PyTorch)."""
    if reduce not in _EMPTY:
        raise RuntimeError(f"segment_reduce(): reduce must be one of max, mean, min, sum or prod, got '{reduce}'")
    if indices is not None:
        raise NotImplementedError('segment_reduce(): indices based reduction is not supported yet.')
    axis = wrap_dim(axis, data.dim())
    lengths = _checked_lengths(data, axis, lengths, offsets, unsafe)
    segments, n = lengths.shape[-1], data.shape[axis]
    # segment of each position along axis: how many segment ends are at or before it (segments
    # itself past the last end: a spare slot, dropped, for lengths that do not cover the dim)
    ends = lengths.cumsum(-1)
    where = _C.arange(n).expand(*lengths.shape[:-1], n).contiguous()
    seg = _C.searchsorted(ends.contiguous(), where, right=True).clamp(max=segments)
    index = seg.reshape(tuple(seg.shape) + (1,) * (data.dim() - axis - 1)).expand(data.shape)
    shape = list(data.shape)
    shape[axis] = segments + 1
    start = _EMPTY[reduce] if initial is None else initial
    if reduce == 'mean':  # the sum; empty segments keep start
        start = 0.0 if initial is None else initial
    out = _C.full(shape, start, dtype=data.dtype)
    out = out.scatter_reduce(axis, index, data, _SCATTER[reduce], include_self=True)
    out = out.narrow(axis, 0, segments)
    if reduce == 'mean':
        count = lengths.reshape(tuple(lengths.shape) + (1,) * (data.dim() - axis - 1)).to(data.dtype)
        empty = _EMPTY['mean'] if initial is None else initial
        out = _C.where(count > 0, out / _C.where(count > 0, count, _C.ones_like(count)), _C.full_like(out, empty))
    return out
