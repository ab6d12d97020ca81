"""Distributed benchmarks (issue 18), 2 ranks on this machine over Open MPI:
all-reduce bus bandwidth through Ember vs MPI_Allreduce called from C, for
4 KiB ... 64 MiB float32 messages, and the DDP step time of an MLP on 1 vs 2
ranks with the time backward still waited for communication. Prints a
markdown table, also written to bench/dist/RESULTS.md. On a 2-core machine
two ranks share the cores: only the same-run ratios mean anything.

    /usr/bin/python3 bench/dist/run.py [--quick]
"""
import datetime
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python'), EMBER_NUM_THREADS='1', OMP_NUM_THREADS='1',
           OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')


def mpirun(n, argv):
    cmd = ['mpirun', '--oversubscribe', '--bind-to', 'none', '-np', str(n)] + argv
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, check=True).stdout.split('\n')


def build_mpi_bench():
    """allreduce_mpi.c compiled into build/; its path."""
    exe = os.path.join(ROOT, 'build', 'bench_allreduce_mpi')
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    subprocess.run(['mpicc', '-O2', '-o', exe, os.path.join(HERE, 'allreduce_mpi.c')], check=True)
    return exe


def cpu_model():
    with open('/proc/cpuinfo') as f:
        names = [line.split(':', 1)[1].strip() for line in f if line.startswith('model name')]
    return f'{len(names)} x {names[0]}' if names else 'unknown CPU'


def main():
    quick = '--quick' in sys.argv
    lines = []
    print = lines.append  # noqa: A001 (the tables go to stdout and RESULTS.md)
    sizes = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20][:3 if quick else 5]
    exe = build_mpi_bench()
    rows = []
    for _ in range(2):  # alternate the two sides; keep each one's best
        c = [line.split() for line in mpirun(2, [exe] + [str(s) for s in sizes]) if line]
        e = [line.split() for line in mpirun(2, [sys.executable, os.path.join(HERE, 'allreduce_ember.py')] +
                                             [str(s) for s in sizes]) if line]
        rows.append((c, e))
    print('| message | MPI from C: bus GB/s | Ember: bus GB/s | Ember / C |')
    print('|---|---|---|---|')
    for k, size in enumerate(sizes):
        tc = min(float(r[0][k][1]) for r in rows)
        te = min(float(r[1][k][1]) for r in rows)
        bus = lambda us: 2 * (2 - 1) / 2 * size / (us * 1e-6) / 1e9  # noqa: E731 (2 ranks)
        label = f'{size >> 10} KiB' if size < (1 << 20) else f'{size >> 20} MiB'
        print(f'| {label} | {bus(tc):.2f} | {bus(te):.2f} | {tc / te:.2f} |')
    steps = '5' if quick else '30'
    one = mpirun(1, [sys.executable, os.path.join(HERE, 'ddp_step.py'), 'mlp', steps])[0].split()
    two = mpirun(2, [sys.executable, os.path.join(HERE, 'ddp_step.py'), 'mlp', steps])[0].split()
    print('')
    print('| MLP 784-512-512-10, batch 128 per rank | ms / step | of which waiting for all-reduce | samples/s |')
    print('|---|---|---|---|')
    print(f'| 1 rank | {float(one[0]):.2f} | - | {128 / float(one[0]) * 1e3:.0f} |')
    print(f'| 2 ranks (DDP) | {float(two[0]):.2f} | {float(two[1]):.2f} | {256 / float(two[0]) * 1e3:.0f} |')
    head = ['# Distributed benchmarks (bench/dist/run.py)', '',
            f'{datetime.date.today()}, {cpu_model()}, 2 ranks over Open MPI on this machine (shared cores: '
            f'only same-run ratios mean anything){" — --quick: figures meaningless" if quick else ""}.', '']
    text = '\n'.join(head + lines) + '\n'
    sys.stdout.write(text)
    with open(os.path.join(HERE, 'RESULTS.md'), 'w') as f:
        f.write(text)


if __name__ == '__main__':
    main()
