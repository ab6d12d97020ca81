"""ember.distributed on Open MPI with 2 ranks over loopback: a few launches
(mpirun and ember.distributed.run) each running many checks (tests/python/
dist/worker_*.py), failure behaviour, and the single-process API."""
import os
import shutil
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest

import ember
import ember.distributed as dist
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
need_mpi = pytest.mark.skipif(shutil.which('mpirun') is None or not dist.is_mpi_available(),
                              reason='Open MPI (openmpi-bin, libopenmpi-dev) is not installed')
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python'), EMBER_NUM_THREADS='1',
           OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
MPIRUN = ['mpirun', '--oversubscribe', '--bind-to', 'none', '-np', '2', sys.executable]


def run(cmd, timeout=180):
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


@need_mpi
def test_collectives_on_every_dtype_against_torch():
    rc, out = run(MPIRUN + [os.path.join(HERE, 'dist', 'worker_collectives.py')])
    assert rc == 0 and 'collectives: 0 failures' in out, out[-6000:]


@need_mpi
def test_ddp_through_the_launcher_matches_single_process_training():
    rc, out = run([sys.executable, '-m', 'ember.distributed.run', '--nproc_per_node=2',
                   os.path.join(HERE, 'dist', 'worker_ddp.py')])
    assert rc == 0, out[-6000:]
    assert 'rank 0: DDP checks passed' in out and 'rank 1: DDP checks passed' in out


@need_mpi
@pytest.mark.parametrize('mode,launcher', [('raise', True), ('exit', False), ('hang', False), ('hang_async', True),
                                          ('mismatch', False)])
def test_a_failing_rank_ends_the_job_with_an_error(mode, launcher):
    script = [os.path.join(HERE, 'dist', 'worker_fail.py'), mode]
    cmd = ([sys.executable, '-m', 'ember.distributed.run', '--nproc_per_node=2'] if launcher else MPIRUN) + script
    t0 = time.monotonic()
    rc, out = run(cmd, timeout=60)
    assert rc != 0 and time.monotonic() - t0 < 50, out
    if mode == 'raise':
        assert 'rank 1 fails on purpose' in out and 'the job failed' in out, out
    if mode == 'hang':  # rank 0's blocking all_reduce times out after 3 s: the watchdog ends the job
        assert 'a collective timed out after 3 s on rank 0' in out, out
    if mode == 'mismatch':
        assert 'message truncated; the ranks passed tensors of different sizes' in out, out
    if mode == 'hang_async':  # Work.wait raises, then the job is ended at exit
        assert 'RuntimeError: ember.distributed: all_reduce timed out after 3 s on rank 0' in out, out
        assert 'rank 0 is ending the job (a collective timed out)' in out, out


def test_import_ember_does_not_load_mpi():
    code = ('import sys, ember, ember.distributed as d; import ember.nn.parallel; '
            'assert "ember._mpi" not in sys.modules; '
            'assert "libmpi" not in open("/proc/self/maps").read(); print("ok")')
    p = subprocess.run([sys.executable, '-c', code], env=ENV, capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == 'ok', p.stderr


def test_api_without_a_process_group():
    assert not dist.is_initialized() and dist.is_available()
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier):
        with pytest.raises(RuntimeError, match='Default process group has not been initialized'):
            fn()
    with pytest.raises(RuntimeError, match='Default process group has not been initialized'):
        dist.all_reduce(ember.ones(2))
    assert dist.Backend('MPI') == 'mpi' == torch.distributed.Backend('MPI')
    with pytest.raises(ValueError, match="Invalid backend: 'foo'"):
        dist.Backend('foo')
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in"):
        dist.init_process_group('nccl')
    with pytest.raises(RuntimeError, match="doesn't have UCC built in"):
        dist.init_process_group('ucc')
    assert not dist.is_initialized()
    names = ['SUM', 'PRODUCT', 'MIN', 'MAX', 'BAND', 'BOR', 'BXOR', 'AVG', 'PREMUL_SUM']
    assert all(hasattr(dist.ReduceOp, n) and hasattr(torch.distributed.ReduceOp, n) for n in names)
    assert dist.ReduceOp.SUM == dist.ReduceOp.SUM != dist.ReduceOp.MAX


def test_stores(tmp_path):
    master = dist.TCPStore('127.0.0.1', 0, world_size=2, is_master=True, timeout=timedelta(seconds=10),
                           wait_for_workers=False)
    client = dist.TCPStore('127.0.0.1', master.port, world_size=2, timeout=timedelta(seconds=10))
    got = []
    t = threading.Thread(target=lambda: got.append(client.get('late')))
    t.start()
    master.set('late', 'value')
    t.join(10)
    assert got == [b'value']
    assert master.add('n', 2) == 2 and client.add('n', 3) == 5 and master.get('n') == b'5'
    assert client.compare_set('k', '', 'first') == b'first'
    assert client.compare_set('k', 'wrong', 'x') == b'first'
    assert client.compare_set('k', 'first', 'second') == b'second'
    p = dist.PrefixStore('job', client)
    p.set('a', b'1')
    assert master.get('job/a') == b'1' and p.get('a') == b'1'
    assert master.delete_key('job/a') and not master.delete_key('job/a')
    with pytest.raises(RuntimeError, match='Timed out'):
        client.wait(['never'], timedelta(seconds=0.2))
    path = os.path.join(str(tmp_path), 'store')
    f1, f2 = dist.FileStore(path, 2), dist.FileStore(path, 2)
    f1.set('a', 'b')
    assert f2.get('a') == b'b' and f2.add('c', 4) == 4 and f1.add('c', 1) == 5 and f1.num_keys() == 2
    store, rank, size = next(dist.rendezvous(f'file://{path}2', rank=1, world_size=2))
    assert (rank, size) == (1, 2) and isinstance(store, dist.FileStore)
    store, rank, size = next(dist.rendezvous(f'tcp://127.0.0.1:{master.port}?rank=1&world_size=2'))
    assert (rank, size) == (1, 2) and store.get('n') == b'5'
    with pytest.raises(RuntimeError, match='No rendezvous handler for foo://'):
        dist.rendezvous('foo://x')
    with pytest.raises(ValueError, match='rank parameter missing'):
        next(dist.rendezvous(f'file://{path}3'))
    h = dist.HashStore()
    h.set('x', 'y')
    assert h.get('x') == b'y' and h.num_keys() == 1


def test_launcher_arguments():
    from ember.distributed.run import command, get_args_parser
    cmd, env = command(get_args_parser().parse_args(['--nproc_per_node=3', '--master_port=1234', 'train.py', '--lr',
                                                     '0.1']))
    assert cmd[cmd.index('-np') + 1] == '3' and cmd[-3:] == ['train.py', '--lr', '0.1']
    assert env['WORLD_SIZE'] == '3' and env['MASTER_PORT'] == '1234'
    with pytest.raises(ValueError, match='mpirun -np N --hostfile'):
        command(get_args_parser().parse_args(['--nnodes=2', 'train.py']))
