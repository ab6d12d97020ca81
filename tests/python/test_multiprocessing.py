"""DataLoader worker processes and ember.multiprocessing: batches come back
through shared memory, errors and dead workers surface in the main
process, and nothing (child process, descriptor, /dev/shm segment) is
left behind."""
import multiprocessing
import gc
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ember
import ember.multiprocessing as emp
import ember.utils.data as edata

ROOT = os.path.join(os.path.dirname(__file__), '..', '..')


def snapshot():
    """(child processes, /dev/shm entries, open descriptors) of this process.
    Only /dev/shm names Python or Ember could make count: other programs on
    the machine (another test run, torch) create and remove their own."""
    gc.collect()  # a loader kept alive by a reference cycle (a traceback) shuts down when collected
    shm = sorted(n for n in os.listdir('/dev/shm') if n.startswith(('psm_', 'ember')))
    return len(multiprocessing.active_children()), shm, len(os.listdir('/proc/self/fd'))


class Squares(edata.Dataset):
    def __init__(self, n=24, fail_at=None, sleep=0.0):
        self.n, self.fail_at, self.sleep = n, fail_at, sleep

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        time.sleep(self.sleep)
        return ember.tensor([i, i * i]), i


class Seeds(edata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = edata.get_worker_info()
        return (info.id, info.seed, ember.randint(0, 10**9, (1,)).item(), random.random(),
                float(np.random.rand()), os.getpid())


class Shards(edata.IterableDataset):
    def __iter__(self):
        info = edata.get_worker_info()
        wid, n = (info.id, info.num_workers) if info else (0, 1)
        return iter(range(wid, 10, n))


def test_same_batches_with_and_without_workers():
    before = snapshot()
    runs = []
    for workers in (0, 2):
        g = ember.Generator().manual_seed(7)
        loader = edata.DataLoader(Squares(), batch_size=5, shuffle=True, num_workers=workers, generator=g,
                                  prefetch_factor=3 if workers else 2)
        batches = list(loader)
        if workers:
            assert all(b[0].is_shared() for b in batches)  # mapped from the workers' shared blocks
        runs.append([(b[0].tolist(), b[1].tolist()) for b in batches])
    assert runs[0] == runs[1] and len(runs[0]) == 5
    del batches, loader
    assert snapshot() == before


def test_worker_error_has_traceback():
    loader = edata.DataLoader(Squares(fail_at=7), batch_size=4, num_workers=2)
    with pytest.raises(ValueError) as info:
        list(loader)
    msg = str(info.value)
    assert 'Caught ValueError in DataLoader worker process 1' in msg
    assert 'Traceback (most recent call last)' in msg and 'bad sample 7' in msg and '__getitem__' in msg


def test_killed_worker_raises_quickly():
    before = snapshot()
    it = iter(edata.DataLoader(Squares(sleep=0.2), batch_size=2, num_workers=2))
    next(it)
    os.kill(it._workers[0].pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match='killed by signal: SIGKILL'):
        for _ in it:
            pass
    # no hang: the loader notices at once (about 0.2 s here); the bound is
    # loose because CI machines may be loaded
    assert time.monotonic() - start < 10.0
    del it
    assert snapshot() == before


def test_break_twice_delete_leave_nothing():
    before = snapshot()
    loader = edata.DataLoader(Squares(), batch_size=2, num_workers=2)
    for _ in range(2):
        for i, _batch in enumerate(loader):
            if i == 2:
                break
    del _batch
    assert len(list(loader)) == 12
    del loader
    assert snapshot() == before


def test_worker_seeds():
    def run(seed):
        g = ember.Generator().manual_seed(seed)
        return list(edata.DataLoader(Seeds(), batch_size=None, num_workers=2, generator=g))
    a, b, c = run(1), run(1), run(2)
    assert [x[:5] for x in a] == [x[:5] for x in b] and [x[1:] for x in a] != [x[1:] for x in c]
    wid0, wid1 = a[0], a[1]  # round-robin: sample 0 on worker 0, sample 1 on worker 1
    assert (wid0[0], wid1[0]) == (0, 1) and wid1[1] == wid0[1] + 1
    assert wid0[2] != wid1[2] and wid0[3] != wid1[3] and wid0[4] != wid1[4]
    ember.manual_seed(wid0[1])
    random.seed(wid0[1])
    assert ember.randint(0, 10**9, (1,)).item() == wid0[2] and random.random() == wid0[3]


def test_persistent_workers_timeout_and_sharding():
    before = snapshot()
    loader = edata.DataLoader(Seeds(), batch_size=None, num_workers=2, persistent_workers=True)
    first = next(iter(loader))  # breaks out of epoch 1 with tasks in flight
    pids = {x[5] for x in loader}
    assert len(pids) == 2 and first[5] in pids and [x[0] for x in loader] == [0, 1, 0, 1]
    del loader, first
    sharded = edata.DataLoader(Shards(), batch_size=3, num_workers=2)
    assert sorted(sum((b.tolist() for b in sharded), [])) == list(range(10))
    slow = edata.DataLoader(Squares(sleep=1.5), num_workers=1, timeout=0.3)
    with pytest.raises(RuntimeError, match='timed out after 0.3 seconds'):
        next(iter(slow))
    assert snapshot() == before


def _fill(q_in, q_out, received):
    t = q_in.get()
    t[1:] = 7  # writes the sender's memory
    q_out.put((t, ember.nn.Parameter(ember.ones(2))))
    received.wait(20)  # a sender lives until its descriptors are fetched (Note [Tensors between processes])


def test_queue_shares_memory():
    x = ember.zeros(4)
    v = x[1:]
    assert not x.is_shared()
    assert x.share_memory_() is x and x.is_shared() and v.is_shared()
    x[0] = 3
    assert v.tolist() == [0, 0, 0]
    q_in, q_out, received = emp.Queue(), emp.Queue(), emp.Event()
    p = emp.Process(target=_fill, args=(q_in, q_out, received))
    p.start()
    q_in.put(x)
    back, param = q_out.get(timeout=20)
    received.set()
    p.join()
    assert x.tolist() == [3, 7, 7, 7] and back.tolist() == [3, 7, 7, 7]
    assert isinstance(param, ember.nn.Parameter) and param.requires_grad and param.is_shared()
    from multiprocessing.reduction import ForkingPickler
    with pytest.raises(RuntimeError, match='Cowardly refusing'):
        ForkingPickler.dumps(ember.ones(1, requires_grad=True) * 2)


def test_hogwild_example():
    out = subprocess.run([sys.executable, os.path.join(ROOT, 'examples', 'hogwild.py'), '--procs', '2', '--steps',
                          '60', '--dim', '8'], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python')))
    assert out.returncode == 0, out.stderr
    before, after = map(float, out.stdout.split('before ')[1].split(' (')[0].split(', after '))
    assert after < 0.2 * before  # both processes' updates landed in the one shared model


def test_spawn_context():
    ds = edata.TensorDataset(ember.arange(10).float())
    loader = edata.DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context='spawn')
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
