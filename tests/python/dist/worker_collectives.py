"""Run by test_distributed.py under `mpirun -np 2`: every collective on
every dtype, on contiguous, non-contiguous and empty tensors, each ReduceOp,
against what torch 1.13 computes from all ranks' inputs (each rank knows
them: rank r's input is a function of r). Prints FAILED lines; rank 0 exits
1 when any rank failed."""
import sys
import traceback

import numpy as np
import torch

import ember
import ember.futures
import ember.distributed as dist

dist.init_process_group('mpi')
R, W = dist.get_rank(), dist.get_world_size()
failures = []
DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool']
OPS = ['SUM', 'PRODUCT', 'MIN', 'MAX', 'AVG', 'BAND', 'BOR', 'BXOR']


def data(rank, shape, dt, seed=0):
    """Rank's input as a torch tensor (small values, so products stay exact-ish)."""
    g = torch.Generator().manual_seed(1000 * seed + rank)
    n = int(np.prod(shape))
    if dt == 'bool':
        return torch.rand(n, generator=g).lt(0.5).view(shape)
    base = torch.randint(-3 if dt not in ('uint8',) else 0, 4, (n,), generator=g).view(shape)
    if dt.startswith('float') or dt == 'bfloat16':
        base = base + torch.rand(n, generator=g).view(shape).round(decimals=1) if n else base.float()
    return base.to(getattr(torch, dt))


def E(t):
    return ember.from_numpy(t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy().copy()).to(
        getattr(ember, str(t.dtype).split('.')[1]))


def T(e):
    return torch.from_numpy(e.float().numpy() if e.dtype == ember.bfloat16 else e.numpy().copy()).to(
        getattr(torch, str(e.dtype).split('.')[1]))


def noncontig(t):
    """t's values in a non-contiguous ember tensor (a transposed view)."""
    if t.dim() < 2:
        return E(t)
    return E(t.transpose(0, 1).contiguous()).transpose(0, 1)


def expect_reduce(ins, op, dt):
    s = torch.stack(ins)
    if dt == 'bool':
        return {'SUM': s.any(0), 'MAX': s.any(0), 'BOR': s.any(0), 'PRODUCT': s.all(0), 'MIN': s.all(0),
                'BAND': s.all(0), 'BXOR': s.sum(0).remainder(2).bool()}[op]
    if op == 'SUM':
        return s.sum(0, dtype=s.dtype) if s.is_floating_point() else s.sum(0).to(s.dtype)
    if op == 'AVG':
        return (s.sum(0) / len(ins)).to(s.dtype) if s.is_floating_point() else \
            torch.div(s.sum(0), len(ins), rounding_mode='trunc').to(s.dtype)
    if op == 'PRODUCT':  # one rounding per product, as the ranks combine pairwise
        out = s[0].clone()
        for x in s[1:]:
            out = out * x
        return out.to(s.dtype)
    if op == 'MIN':
        return s.min(0).values
    if op == 'MAX':
        return s.max(0).values
    out = s[0].clone()
    for x in s[1:]:
        out = {'BAND': out & x, 'BOR': out | x, 'BXOR': out ^ x}[op]
    return out


def check(name, got, want):
    got = T(got)
    if got.shape != want.shape or not torch.equal(got.to(want.dtype), want):
        failures.append(f'{name}: got {got.tolist()} want {want.tolist()}')


def case(name, fn):
    try:
        fn()
    except Exception:
        failures.append(f'{name}: raised\n{traceback.format_exc()}')


SHAPES = [(3, 4), (0, 3), (5,)]

for dt in DTYPES:
    floating = dt.startswith('float') or dt == 'bfloat16'
    for shape in SHAPES:
        for layout in ('contiguous', 'strided'):
            if layout == 'strided' and len(shape) < 2:
                continue
            mk = noncontig if layout == 'strided' else E
            ins = [data(r, shape, dt) for r in range(W)]
            tag = f'{dt} {shape} {layout}'
            for op in OPS:
                if (floating and op in ('BAND', 'BOR', 'BXOR')) or (dt == 'bool' and op == 'AVG'):
                    continue

                def allreduce(op=op):
                    x = mk(ins[R])
                    dist.all_reduce(x, op=getattr(dist.ReduceOp, op))
                    check(f'all_reduce {op} {tag}', x, expect_reduce(ins, op, dt))
                case(f'all_reduce {op} {tag}', allreduce)

            def bcast():
                x = mk(ins[R])
                dist.broadcast(x, src=1)
                check(f'broadcast {tag}', x, ins[1])
            case(f'broadcast {tag}', bcast)

            def red():
                x = mk(ins[R])
                dist.reduce(x, dst=0, op=dist.ReduceOp.MAX)
                check(f'reduce {tag}', x, expect_reduce(ins, 'MAX', dt) if R == 0 else ins[R])
            case(f'reduce {tag}', red)

            def allgather():
                outs = [mk(torch.zeros(shape, dtype=ins[0].dtype)) for _ in range(W)]
                dist.all_gather(outs, mk(ins[R]))
                for r in range(W):
                    check(f'all_gather {tag} [{r}]', outs[r], ins[r])
                out = ember.zeros((W * shape[0],) + shape[1:], dtype=getattr(ember, dt))
                dist.all_gather_into_tensor(out, mk(ins[R]))
                check(f'all_gather_into_tensor {tag}', out, torch.cat(ins))
            case(f'all_gather {tag}', allgather)

            def gather_scatter():
                outs = [mk(torch.zeros(shape, dtype=ins[0].dtype)) for _ in range(W)] if R == 1 else None
                dist.gather(mk(ins[R]), outs, dst=1)
                if R == 1:
                    for r in range(W):
                        check(f'gather {tag} [{r}]', outs[r], ins[r])
                x = mk(torch.zeros(shape, dtype=ins[0].dtype))
                dist.scatter(x, [E(data(r, shape, dt, seed=7)) for r in range(W)] if R == 0 else None, src=0)
                check(f'scatter {tag}', x, data(R, shape, dt, seed=7))
            case(f'gather/scatter {tag}', gather_scatter)

            if dt != 'bool':
                def reduce_scatter():
                    lists = [[data(10 * r + k, shape, dt) for k in range(W)] for r in range(W)]
                    out = mk(torch.zeros(shape, dtype=ins[0].dtype))
                    dist.reduce_scatter(out, [E(t) for t in lists[R]], op=dist.ReduceOp.SUM)
                    check(f'reduce_scatter {tag}', out, expect_reduce([lists[r][R] for r in range(W)], 'SUM', dt))
                    out = mk(torch.zeros(shape, dtype=ins[0].dtype))
                    dist.reduce_scatter_tensor(out, E(torch.cat(lists[R])), op=dist.ReduceOp.MIN)
                    check(f'reduce_scatter_tensor {tag}', out,
                          expect_reduce([lists[r][R] for r in range(W)], 'MIN', dt))
                case(f'reduce_scatter {tag}', reduce_scatter)

    def alltoall(dt=dt):
        ins = [data(r, (W * 3, 2), dt) for r in range(W)]
        out = ember.zeros(W * 3, 2, dtype=getattr(ember, dt))
        dist.all_to_all_single(out, E(ins[R]))
        check(f'all_to_all_single {dt}', out, torch.cat([ins[r][3 * R:3 * R + 3] for r in range(W)]))
        splits = [[1, 2], [3, 0]]   # splits[r][j]: rows rank r sends to rank j
        src = [data(r, (sum(splits[r]), 2), dt) for r in range(W)]
        recv_rows = [splits[r][R] for r in range(W)]
        out = ember.zeros(sum(recv_rows), 2, dtype=getattr(ember, dt))
        dist.all_to_all_single(out, E(src[R]), output_split_sizes=recv_rows, input_split_sizes=splits[R])
        want = torch.cat([src[r][sum(splits[r][:R]):sum(splits[r][:R + 1])] for r in range(W)])
        check(f'all_to_all_single splits {dt}', out, want)
        ins_l = [[data(10 * r + j, (j + 1, 2), dt) for j in range(W)] for r in range(W)]
        outs = [ember.zeros(R + 1, 2, dtype=getattr(ember, dt)) for _ in range(W)]
        dist.all_to_all(outs, [E(t) for t in ins_l[R]])
        for r in range(W):
            check(f'all_to_all {dt} [{r}]', outs[r], ins_l[r][R])
    case(f'all_to_all {dt}', alltoall)

    def p2p(dt=dt):
        t = data(5, (2, 3), dt)
        if R == 0:
            dist.send(E(t), 1)
            w = dist.isend(noncontig(t), 1, tag=3)
            w.wait()
        else:
            x = ember.zeros(2, 3, dtype=getattr(ember, dt))
            assert dist.recv(x) == 0
            check(f'recv {dt}', x, t)
            y = noncontig(torch.zeros(2, 3, dtype=t.dtype))
            w = dist.irecv(y, src=0, tag=3)
            w.wait()
            assert w.is_completed() and w.source_rank() == 0
            check(f'irecv {dt}', y, t)
    case(f'p2p {dt}', p2p)


def misc():
    # both ranks post isend then irecv of a large message: must not deadlock
    big = ember.full((1 << 20,), float(R))
    got = ember.zeros(1 << 20)
    ops = [dist.P2POp(dist.isend, big, 1 - R), dist.P2POp(dist.irecv, got, 1 - R)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    assert got.eq(1 - R).all().item(), 'exchange'
    # async all_reduce overlapping with local work
    x = ember.ones(1000) * (R + 1)
    w = dist.all_reduce(x, async_op=True)
    w.wait()
    assert w.is_completed() and w.is_success() and x.eq(3).all().item()
    assert dist.all_reduce(ember.ones(2), async_op=False) is None
    # the fast path (ember._mpi.blocking) takes contiguous CPU tensors of the dtypes with a buffer format
    b, comm = dist.distributed_c10d._default()._backend, dist.distributed_c10d._default()._comm
    for dt in ('float32', 'float64', 'float16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool'):
        assert b.blocking(b.ALLREDUCE, comm, ember.ones(3, dtype=getattr(ember, dt)), 3, 0, 60.0) == 1, dt
    for t, op in ((ember.ones(3, dtype=ember.bfloat16), 0), (ember.ones(3, requires_grad=True), 0),
                  (ember.ones(3, 2).t(), 0), (ember.ones(3), 4), (ember.ones(3, dtype=ember.bool), 7),
                  (ember.ones(3), 8)):
        assert b.blocking(b.ALLREDUCE, comm, t, op, 0, 60.0) == 0, (t, op)
    # PREMUL_SUM with a factor (torch's _make_nccl_premul_sum): each rank's input scaled, then summed
    for factor in (0.5, [ember.tensor([0.5])]):
        x = ember.full((2, 3), float(R + 1)).t()
        dist.all_reduce(x, op=dist._make_nccl_premul_sum(factor))
        assert x.eq(1.5).all().item(), x
    assert dist._make_nccl_premul_sum(2.0) == dist.ReduceOp.PREMUL_SUM
    for bad, exc in ((lambda: dist._make_nccl_premul_sum('x'), TypeError),
                     (lambda: dist.all_reduce(ember.ones(2, dtype=ember.int64), op=dist._make_nccl_premul_sum(2.0)),
                      RuntimeError),
                     (lambda: dist.reduce(ember.ones(2), 0, op=dist._make_nccl_premul_sum(2.0)), NotImplementedError)):
        try:
            bad()
            failures.append(f'PREMUL_SUM: no {exc.__name__}')
        except exc:
            pass
    # Work.get_future: a Future of the output tensors, chained with then (torch's interface)
    x = ember.ones(4) * (R + 1)
    fut = dist.all_reduce(x, async_op=True).get_future()
    doubled = fut.then(lambda f: f.value()[0] * 2)
    assert doubled.wait().tolist() == [6.0] * 4 and fut.done() and fut.value()[0] is x
    f0 = ember.futures.Future()
    seen = []
    f0.add_done_callback(lambda f: seen.append(f.value()))
    f0.set_result(5)
    assert seen == [5] and f0.wait() == 5
    try:
        f0.set_result(6)
        failures.append('Future.set_result twice: no error')
    except RuntimeError:
        pass
    # the *Options records: torch's fields and defaults
    for name in ('AllreduceOptions', 'AllreduceCoalescedOptions', 'BroadcastOptions', 'ReduceOptions',
                 'GatherOptions', 'ScatterOptions', 'ReduceScatterOptions', 'AllToAllOptions', 'BarrierOptions'):
        mine, theirs = getattr(dist, name)(), getattr(torch.distributed, name)()
        for k in (k for k in dir(theirs) if not k.startswith('_')):
            a, b = getattr(mine, k), getattr(theirs, k)
            same = ((a == dist.ReduceOp.SUM) == (b == torch.distributed.ReduceOp.SUM)) if k == 'reduceOp' else a == b
            if not same:
                failures.append(f'{name}.{k}: {a!r} vs torch {b!r}')
    # groups
    g = dist.new_group([1])
    if R == 1:
        assert dist.get_rank(g) == 0 and dist.get_world_size(g) == 1
        y = ember.ones(3)
        dist.all_reduce(y, group=g)
        assert y.eq(1).all().item()
    else:
        assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
    mine, groups = dist.new_subgroups(1)
    assert len(groups) == W and dist.get_process_group_ranks(mine) == [R]
    mine, groups = dist.new_subgroups_by_enumeration([[0, 1]])
    assert dist.get_world_size(mine) == 2
    g2 = dist.new_group()
    assert dist.get_process_group_ranks(g2) == [0, 1] and dist.get_backend(g2) == 'mpi'
    dist.destroy_process_group(g2)
    # objects
    objs = [None] * W
    dist.all_gather_object(objs, {'rank': R, 'data': list(range(R * 3))})
    assert objs == [{'rank': r, 'data': list(range(r * 3))} for r in range(W)], objs
    lst = [('a', 1), {2: 3}, None] if R == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [('a', 1), {2: 3}, None], lst
    out = [None] * W if R == 0 else None
    dist.gather_object(f'r{R}' * (R + 1), out, dst=0)
    assert R != 0 or out == ['r0', 'r1r1'], out
    got = [None]
    dist.scatter_object_list(got, [[1], 'two'] if R == 0 else None, src=0)
    assert got[0] == ([1] if R == 0 else 'two'), got
    dist.barrier()
    dist.monitored_barrier()
    # argument errors
    for fn, exc in [(lambda: dist.all_reduce([1]), RuntimeError),
                    (lambda: dist.all_reduce(ember.ones(2), op=dist.ReduceOp.BAND), RuntimeError),
                    (lambda: dist.all_reduce(ember.ones(2), op=dist.ReduceOp.PREMUL_SUM), NotImplementedError),
                    (lambda: dist.all_gather([ember.ones(2)], ember.ones(2)), RuntimeError),
                    (lambda: dist.gather(ember.ones(2), [ember.ones(2)] * 2, dst=1 - R) if R == 0 else
                     dist.gather(ember.ones(2), None, dst=R), ValueError),
                    (lambda: dist.broadcast(ember.ones(2), src=5), ValueError),
                    (lambda: dist.send(ember.ones(2), R), ValueError)]:
        try:
            fn()
            failures.append(f'no {exc.__name__}')
        except exc:
            pass
    # DETAIL mode reports a mismatch between ranks instead of corrupting
    dist.set_debug_level(dist.DebugLevel.DETAIL)
    try:
        dist.all_reduce(ember.ones(3 + R))
        failures.append('DETAIL: no error for mismatched sizes')
    except RuntimeError as e:
        assert 'ranks disagree on all_reduce' in str(e), e
    dist.set_debug_level(dist.DebugLevel.OFF)
case('misc', misc)

every = [None] * W
dist.all_gather_object(every, failures)
if R == 0:
    bad = [f'rank {r}: {f}' for r in range(W) for f in every[r]]
    for b in bad:
        print('FAILED', b)
    print(f'collectives: {len(bad)} failures')
dist.destroy_process_group()
assert not dist.is_initialized()
dist.init_process_group('mpi')  # again, after destroy
x = ember.ones(2)
dist.all_reduce(x)
assert x.tolist() == [2.0, 2.0]
dist.destroy_process_group()
sys.exit(1 if R == 0 and bad else 0)
