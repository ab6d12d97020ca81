"""The collectives and point-to-point transfers of torch.distributed on
Ember tensors: each checks its arguments, hands the backend contiguous
buffers (copies of non-contiguous tensors, copied back when the work is
done) and returns a Work (async_op=True) or waits for it."""
import pickle

import ember
from . import distributed_c10d as c10d
from .distributed_c10d import _AVG, ReduceOp, Work, _group

__all__ = ['all_reduce', 'broadcast', 'reduce', 'all_gather', 'all_gather_into_tensor', 'gather', 'scatter',
           'reduce_scatter', 'reduce_scatter_tensor', 'all_to_all', 'all_to_all_single', 'send', 'recv', 'isend',
           'irecv', 'P2POp', 'batch_isend_irecv', 'broadcast_object_list', 'all_gather_object', 'gather_object',
           'scatter_object_list']

_inflight = []  # works whose buffers the backend may still touch: kept alive here


def _check(t, name='tensor'):
    if not isinstance(t, ember.Tensor):
        raise RuntimeError(f'Invalid function argument. Expected parameter `{name}` to be of type torch.Tensor.')
    if t.device.type != 'cpu':
        raise RuntimeError(f"ember.distributed: the 'mpi' backend takes CPU tensors, got one on {t.device}")


def _check_list(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, ember.Tensor) for t in ts):
        raise RuntimeError(f'Invalid function argument. Expected parameter `{name}` to be of type '
                           f'List[torch.Tensor].')
    for t in ts:
        _check(t, name)


def _same(ts, like, n, what):
    """Every tensor of ts has like's dtype and n elements."""
    for i, t in enumerate(ts):
        if t.dtype != like.dtype or t.numel() != n:
            raise RuntimeError(f'{what}: tensor {i} is {t.dtype} with {t.numel()} elements, expected {like.dtype} '
                               f'with {n}')


def _contig(t, copy_back=None):
    """t as a contiguous tensor outside autograd; when it is a copy and
    copy_back is a list, (t, copy) is recorded to write the result back."""
    c = t.detach()
    if not c.is_contiguous():
        c = c.contiguous()
        if copy_back is not None:
            copy_back.append((t, c))
    return c


_DTYPE_NAMES = {}


def _dtype(t):
    name = _DTYPE_NAMES.get(t.dtype)
    if name is None:
        name = _DTYPE_NAMES[t.dtype] = str(t.dtype).rsplit('.', 1)[1]
    return name


def _peer(g, global_rank, what):
    if global_rank not in g._ranks:
        raise ValueError(f'{what} rank {global_rank} is not part of the group (ranks {g._ranks})')
    return g._ranks.index(global_rank)


_BITWISE = (ReduceOp.BAND.code, ReduceOp.BOR.code, ReduceOp.BXOR.code)


def _opcode(op, t):
    """The backend's code for op (AVG is a SUM, divided when done)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f'op must be a ReduceOp, got {op!r}')
    code = op.code
    if code == ReduceOp.PREMUL_SUM.code:
        raise NotImplementedError('ember.distributed: ReduceOp.PREMUL_SUM is implemented for all_reduce only, '
                                  'with a factor (dist._make_nccl_premul_sum(factor))')
    if code in _BITWISE and t.is_floating_point():
        raise RuntimeError(f'ember.distributed: {op.name} needs an integer or bool tensor, got {t.dtype}')
    if code == _AVG:
        if t.dtype == ember.bool:
            raise RuntimeError('ember.distributed: ReduceOp.AVG does not support bool tensors')
        return ReduceOp.SUM.code
    return code


def _average(c, n):
    if c.is_floating_point():
        c.div_(n)
    else:
        c.copy_(ember.div(c, n, rounding_mode='trunc'))


def _submit(g, kind, send=None, recv=None, count=0, op=0, peer=0, tag=0, ints=None, wait=False):
    """The backend's work; wait=True (a blocking call) lets the backend run it
    at once on this thread, ending the job if it outlasts the group's timeout."""
    like = recv if recv is not None else send
    return g._backend.submit(getattr(g._backend, kind), g._comm, send.data_ptr() if send is not None else 0,
                             recv.data_ptr() if recv is not None else 0, count,
                             _dtype(like) if like is not None else '', op, peer, tag, ints,
                             g._timeout.total_seconds() if wait else None)


def _detail_check(g, name, t, count):
    """TORCH_DISTRIBUTED_DEBUG=DETAIL: every rank must call the same
    collective on the same dtype and element count; else each says how."""
    mine = ember.tensor([sum(map(ord, name)), count, hash(str(t.dtype)) % (1 << 31) if t is not None else 0],
                        dtype=ember.int64)
    every = ember.empty(3 * g.size(), dtype=ember.int64)
    c10d.Work(g, 'the DETAIL check', [_submit(g, 'ALLGATHER', mine, every, 3)]).wait()
    rows = every.view(g.size(), 3).tolist()
    if any(r != rows[0] for r in rows):
        raise RuntimeError(f'ember.distributed: ranks disagree on {name}: this rank ({g.rank()}) called it on '
                           f'{count} elements of {t.dtype if t is not None else None}; [kind, count, dtype] per '
                           f'rank: {rows}')


def _launch(g, name, works, async_op, finish=None, outputs=(), keep=()):
    work = Work(g, name, works, finish, outputs)
    if async_op:
        work._keep = keep
        _inflight[:] = [w for w in _inflight if not w._done]
        _inflight.append(work)
        return work
    work.wait()
    return None


def _copy_back(pairs):
    if not pairs:
        return
    with ember.no_grad():
        for dst, src in pairs:
            dst.detach().copy_(src.view(dst.shape))


def _run(g, name, kind, async_op, send=None, recv=None, count=0, op=None, peer=0, ints=None, finish=None,
         outputs=(), copy_back=(), avg_here=True):
    """One backend operation; `finish` and copy_back run when it is done."""
    if c10d.get_debug_level() is c10d.DebugLevel.DETAIL:
        _detail_check(g, name, recv if recv is not None else send, count)
    code = 0 if op is None else _opcode(op, recv if recv is not None else send)
    w = _submit(g, kind, send, recv, count, code, peer, 0, ints, wait=not async_op)

    average = op is not None and op.code == _AVG and avg_here

    def done():
        if average:
            _average(recv, g.size())
        if finish is not None:
            finish()
        _copy_back(copy_back)
    return _launch(g, name, [w], async_op, done, outputs, keep=(send, recv))


# ------------------------------------------------------------ collectives

def _blocking(g, name, kind, t, code, peer=0):
    """The fast path of a blocking in-place collective: the backend runs it at
    once on a contiguous CPU tensor (ember._mpi.blocking says which), with no
    Work nor copies, and it returns True; else False, and the caller takes
    the general path. A small all-reduce is a few microseconds in MPI: the
    Python around it must be less (so no helpers here)."""
    if not isinstance(t, ember.Tensor) or c10d._debug_level is c10d.DebugLevel.DETAIL:
        return False
    try:
        r = g._backend.blocking(kind, g._comm, t, code, peer, g._timeout_s)
    except RuntimeError as e:
        raise c10d._failed(name, e) from None
    if r < 0:
        raise c10d._timed_out(name, g._timeout_s)
    return r == 1


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces tensor over the group in place: every rank gets the result."""
    g = _group(group)
    if type(op) is ReduceOp and hasattr(op, '_factor'):  # PREMUL_SUM: scale each rank's input, then sum
        _check(tensor)
        if not tensor.is_floating_point():
            raise RuntimeError(f'ember.distributed: ReduceOp.PREMUL_SUM needs a floating-point tensor, got '
                               f'{tensor.dtype}')
        with ember.no_grad():
            tensor.detach().mul_(op._factor)
        op = ReduceOp.SUM
    if not async_op and type(op) is ReduceOp and _blocking(g, 'all_reduce', g._backend.ALLREDUCE, tensor, op.code):
        if op.code == _AVG:
            with ember.no_grad():
                _average(tensor.detach(), g.size())
        return None
    _check(tensor)
    back = []
    c = _contig(tensor, back)
    return _run(g, 'all_reduce', 'ALLREDUCE', async_op, recv=c, count=c.numel(), op=op, copy_back=back,
                outputs=[tensor])


def broadcast(tensor, src, group=None, async_op=False):
    """Copies src's tensor into every rank's."""
    g = _group(group)
    if not async_op and _blocking(g, 'broadcast', g._backend.BROADCAST, tensor, 0, _peer(g, src, 'src')):
        return None
    _check(tensor)
    back = []
    c = _contig(tensor, back)
    return _run(g, 'broadcast', 'BROADCAST', async_op, recv=c, count=c.numel(), peer=_peer(g, src, 'src'),
                copy_back=back, outputs=[tensor])


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduces tensor over the group into dst's tensor (the others' are unchanged)."""
    g = _group(group)
    _check(tensor)
    root = _peer(g, dst, 'dst')
    back = []
    c = _contig(tensor, back)
    return _run(g, 'reduce', 'REDUCE', async_op, recv=c, count=c.numel(), op=op, peer=root, copy_back=back,
                avg_here=g.rank() == root, outputs=[tensor])


def _unpack(flat, outs, n):
    def finish():
        with ember.no_grad():
            for i, o in enumerate(outs):
                o.detach().copy_(flat[i * n:(i + 1) * n].view(o.shape))
    return finish


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] gets rank i's tensor."""
    g = _group(group)
    _check(tensor)
    _check_list(tensor_list, 'tensor_list')
    if len(tensor_list) != g.size():
        raise RuntimeError(f'all_gather: tensor_list has {len(tensor_list)} tensors for a group of {g.size()}')
    n = tensor.numel()
    _same(tensor_list, tensor, n, 'all_gather')
    flat = ember.empty(g.size() * n, dtype=tensor.dtype)
    return _run(g, 'all_gather', 'ALLGATHER', async_op, send=_contig(tensor), recv=flat, count=n,
                finish=_unpack(flat, tensor_list, n), outputs=[tensor_list])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor (size * input's elements) gets every rank's input, in rank order."""
    g = _group(group)
    _check(output_tensor, 'output_tensor')
    _check(input_tensor, 'input_tensor')
    n = input_tensor.numel()
    _same([output_tensor], input_tensor, g.size() * n, 'all_gather_into_tensor: output_tensor')
    back = []
    return _run(g, 'all_gather_into_tensor', 'ALLGATHER', async_op, send=_contig(input_tensor),
                recv=_contig(output_tensor, back), count=n, copy_back=back, outputs=[output_tensor])


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """dst's gather_list[i] gets rank i's tensor."""
    g = _group(group)
    _check(tensor)
    root = _peer(g, dst, 'dst')
    n = tensor.numel()
    if g.rank() == root:
        if not gather_list:
            raise ValueError('Argument ``gather_list`` must be specified on destination rank.')
        _check_list(gather_list, 'gather_list')
        if len(gather_list) != g.size():
            raise RuntimeError(f'gather: gather_list has {len(gather_list)} tensors for a group of {g.size()}')
        _same(gather_list, tensor, n, 'gather')
        flat = ember.empty(g.size() * n, dtype=tensor.dtype)
        finish = _unpack(flat, gather_list, n)
    else:
        if gather_list:
            raise ValueError('Argument ``gather_list`` must NOT be specified on non-destination ranks.')
        flat, finish = None, None
    return _run(g, 'gather', 'GATHER', async_op, send=_contig(tensor), recv=flat, count=n, peer=root,
                finish=finish)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Rank i's tensor gets src's scatter_list[i]."""
    g = _group(group)
    _check(tensor)
    root = _peer(g, src, 'src')
    n = tensor.numel()
    send = None
    if g.rank() == root:
        if not scatter_list:
            raise ValueError('Argument ``scatter_list`` must be specified on source rank.')
        _check_list(scatter_list, 'scatter_list')
        if len(scatter_list) != g.size():
            raise RuntimeError(f'scatter: scatter_list has {len(scatter_list)} tensors for a group of {g.size()}')
        _same(scatter_list, tensor, n, 'scatter')
        send = ember.cat([t.detach().reshape(-1) for t in scatter_list]) if n else ember.empty(0, dtype=tensor.dtype)
    elif scatter_list:
        raise ValueError('Argument ``scatter_list`` must NOT be specified on non-source ranks.')
    back = []
    return _run(g, 'scatter', 'SCATTER', async_op, send=send, recv=_contig(tensor, back), count=n, peer=root,
                copy_back=back)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output on rank i gets the reduction over ranks of their input_list[i]."""
    g = _group(group)
    _check(output, 'output')
    _check_list(input_list, 'input_list')
    if len(input_list) != g.size():
        raise RuntimeError(f'reduce_scatter: input_list has {len(input_list)} tensors for a group of {g.size()}')
    n = output.numel()
    _same(input_list, output, n, 'reduce_scatter')
    send = ember.cat([t.detach().reshape(-1) for t in input_list]) if n else ember.empty(0, dtype=output.dtype)
    back = []
    return _run(g, 'reduce_scatter', 'REDUCE_SCATTER', async_op, send=send, recv=_contig(output, back), count=n,
                op=op, copy_back=back)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Like reduce_scatter with input (size * output's elements) as the list, split in rank order."""
    g = _group(group)
    _check(output, 'output')
    _check(input, 'input')
    n = output.numel()
    _same([input], output, g.size() * n, 'reduce_scatter_tensor: input')
    back = []
    return _run(g, 'reduce_scatter_tensor', 'REDUCE_SCATTER', async_op, send=_contig(input),
                recv=_contig(output, back), count=n, op=op, copy_back=back)


def _displs(counts):
    out, at = [], 0
    for c in counts:
        out.append(at)
        at += c
    return out


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Rank j gets rank i's i-th slice (along dim 0) of input into its output's
    i-th slice; the slices are equal, or given by the split sizes."""
    g = _group(group)
    _check(output, 'output')
    _check(input, 'input')
    size = g.size()
    if output.dtype != input.dtype:
        raise RuntimeError(f'all_to_all_single: output is {output.dtype} but input is {input.dtype}')

    def counts(t, splits, what):
        if splits is None or len(splits) == 0:
            if t.numel() % size:
                raise RuntimeError(f'all_to_all_single: {what} has {t.numel()} elements, not divisible by the '
                                   f'group size {size}')
            return [t.numel() // size] * size
        splits = list(splits)
        rows = t.shape[0] if t.dim() else 1
        if len(splits) != size or sum(splits) != rows or any(s < 0 for s in splits):
            raise RuntimeError(f'all_to_all_single: {what}_split_sizes {splits} must have {size} entries '
                               f'summing to {rows}')
        row = t.numel() // rows if rows else 0
        return [s * row for s in splits]
    sc, rc = counts(input, input_split_sizes, 'input'), counts(output, output_split_sizes, 'output')
    back = []
    send, recv = _contig(input), _contig(output, back)
    if input_split_sizes is None and output_split_sizes is None:
        return _run(g, 'all_to_all_single', 'ALLTOALL', async_op, send=send, recv=recv, count=sc[0],
                    copy_back=back)
    return _run(g, 'all_to_all_single', 'ALLTOALLV', async_op, send=send, recv=recv,
                ints=sc + _displs(sc) + rc + _displs(rc), copy_back=back)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank j's output_tensor_list[i] gets rank i's input_tensor_list[j]."""
    g = _group(group)
    _check_list(output_tensor_list, 'output_tensor_list')
    _check_list(input_tensor_list, 'input_tensor_list')
    if len(output_tensor_list) != g.size() or len(input_tensor_list) != g.size():
        raise RuntimeError(f'all_to_all: the lists need {g.size()} tensors each')
    like = input_tensor_list[0]
    for t in list(output_tensor_list) + list(input_tensor_list):
        if t.dtype != like.dtype:
            raise RuntimeError(f'all_to_all: every tensor must be {like.dtype}, got {t.dtype}')
    sc = [t.numel() for t in input_tensor_list]
    rc = [t.numel() for t in output_tensor_list]
    send = ember.cat([t.detach().reshape(-1) for t in input_tensor_list])
    recv = ember.empty(sum(rc), dtype=like.dtype)
    rd = _displs(rc)

    def finish():
        with ember.no_grad():
            for o, at, n in zip(output_tensor_list, rd, rc):
                o.detach().copy_(recv[at:at + n].view(o.shape))
    return _run(g, 'all_to_all', 'ALLTOALLV', async_op, send=send, recv=recv,
                ints=sc + _displs(sc) + rc + rd, finish=finish)


# --------------------------------------------------------- point to point

def _p2p(kind, tensor, peer, group, tag):
    g = _group(group)
    _check(tensor)
    if peer is not None and peer == c10d.get_rank():
        raise ValueError(f'Invalid {"destination" if kind == "SEND" else "source"} rank: should not be the same as '
                         f'the rank of the current process.')
    back = []
    c = _contig(tensor, back) if kind == 'RECV' else _contig(tensor)
    p = -1 if peer is None else _peer(g, peer, 'dst' if kind == 'SEND' else 'src')
    w = g._backend.submit(getattr(g._backend, kind), g._comm, 0, c.data_ptr(), c.numel(), _dtype(c), 0, p,
                          int(tag), None)
    return _launch(g, kind.lower(), [w], True, lambda: _copy_back(back), keep=(c,))


def isend(tensor, dst, group=None, tag=0):
    """Sends tensor to global rank dst; returns a Work."""
    return _p2p('SEND', tensor, dst, group, tag)


def irecv(tensor, src=None, group=None, tag=0):
    """Receives into tensor from global rank src (any rank when None); returns a Work."""
    return _p2p('RECV', tensor, src, group, tag)


def send(tensor, dst, group=None, tag=0):
    isend(tensor, dst, group, tag).wait()


def recv(tensor, src=None, group=None, tag=0):
    """Receives into tensor; returns the sender's global rank."""
    w = irecv(tensor, src, group, tag)
    return w.source_rank()


class P2POp:
    """A send or receive for batch_isend_irecv: P2POp(dist.isend, tensor, peer, group=None, tag=0)."""

    def __init__(self, op, tensor, peer, group=None, tag=0):
        if op not in (isend, irecv):
            raise RuntimeError('Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or '
                               '``torch.distributed.irecv``.')
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag


def batch_isend_irecv(p2p_op_list):
    """Starts every P2POp; returns their Works."""
    if not isinstance(p2p_op_list, list) or not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise RuntimeError('Invalid ``p2p_op_list``. Each op is expected to to be of type '
                           '``torch.distributed.P2POp``.')
    return [p.op(p.tensor, p.peer, p.group, p.tag) for p in p2p_op_list]


# ---------------------------------------------------- Python objects (pickle)

def _to_bytes(obj):
    data = pickle.dumps(obj)
    return ember.frombuffer(bytearray(data), dtype=ember.uint8) if data else ember.empty(0, dtype=ember.uint8)


def _from_bytes(t, n):
    return pickle.loads(bytes(t[:n].numpy().tobytes()))


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """src's object_list (picklable objects) replaces every rank's, in place."""
    g = _group(group)
    if g.rank() == _peer(g, src, 'src'):
        blobs = [_to_bytes(o) for o in object_list]
        sizes = ember.tensor([b.numel() for b in blobs], dtype=ember.int64)
    else:
        sizes = ember.empty(len(object_list), dtype=ember.int64)
    broadcast(sizes, src, group)
    data = ember.cat(blobs) if g.rank() == g._ranks.index(src) and blobs else \
        ember.empty(int(sizes.sum()), dtype=ember.uint8)
    broadcast(data, src, group)
    if g.rank() != g._ranks.index(src):
        at = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _from_bytes(data[at:at + n], n)
            at += n


def _gather_blobs(g, obj):
    """(every rank's pickled obj, padded, as a (size, max) uint8 tensor, their lengths)."""
    blob = _to_bytes(obj)
    sizes = ember.empty(g.size(), dtype=ember.int64)
    all_gather_into_tensor(sizes, ember.tensor([blob.numel()], dtype=ember.int64), group=g)
    width = int(sizes.max())
    padded = ember.zeros(width, dtype=ember.uint8)
    padded[:blob.numel()] = blob
    return padded, width, sizes.tolist()


def all_gather_object(object_list, obj, group=None):
    """object_list[i] gets rank i's obj (object_list has the group's size)."""
    g = _group(group)
    padded, width, sizes = _gather_blobs(g, obj)
    out = ember.empty(g.size() * width, dtype=ember.uint8)
    all_gather_into_tensor(out, padded, group=g)
    for i, n in enumerate(sizes):
        object_list[i] = _from_bytes(out[i * width:(i + 1) * width], n)


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """dst's object_gather_list[i] gets rank i's obj."""
    g = _group(group)
    root = _peer(g, dst, 'dst')
    padded, width, sizes = _gather_blobs(g, obj)
    outs = [ember.empty(width, dtype=ember.uint8) for _ in range(g.size())] if g.rank() == root else None
    gather(padded, outs, dst, group=g)
    if g.rank() == root:
        for i, n in enumerate(sizes):
            object_gather_list[i] = _from_bytes(outs[i], n)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list, src=0, group=None):
    """scatter_object_output_list[0] on rank i gets src's scatter_object_input_list[i]."""
    g = _group(group)
    root = _peer(g, src, 'src')
    if g.rank() == root:
        blobs = [_to_bytes(o) for o in scatter_object_input_list]
        meta = ember.tensor([max(b.numel() for b in blobs)] + [b.numel() for b in blobs], dtype=ember.int64)
    else:
        meta = ember.empty(g.size() + 1, dtype=ember.int64)
    broadcast(meta, src, group=g)
    width = int(meta[0])
    if g.rank() == root:
        padded = [ember.cat([b, ember.zeros(width - b.numel(), dtype=ember.uint8)]) for b in blobs]
    out = ember.empty(width, dtype=ember.uint8)
    scatter(out, padded if g.rank() == root else None, src, group=g)
    scatter_object_output_list[0] = _from_bytes(out, int(meta[1 + g.rank()]))
