"""ember.distributed on 2 ranks over Open MPI (issue 18), launched with
mpirun: all_reduce (float32 SUM) per message size, Ember's time vs
MPI_Allreduce called from C (the "torch" column: the engine underneath);
and DDP training steps of the MLP (batch 128 per rank) and ResNet-18
(32x32, batch 8 per rank) on 1 rank and on 2, with the share of the
all-reduce time that backward hid (overlap: 1 - time the end of backward
waited / time the buckets take to all-reduce alone). Both ranks share this
machine's cores: only same-run ratios mean anything. bench/dist/run.py
prints the same figures as a table (bench/dist/RESULTS.md)."""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, ROOT, cli, figure, quick  # noqa: E402

HERE = os.path.join(ROOT, 'bench', 'dist')
_spec = importlib.util.spec_from_file_location('dist_run', os.path.join(HERE, 'run.py'))
dist_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dist_run)


def allreduce_rows():
    sizes = [4 << 10, 64 << 10, 1 << 20] + ([] if quick() else [16 << 20])
    exe = dist_run.build_mpi_bench()
    best_c, best_e = [1e30] * len(sizes), [1e30] * len(sizes)
    for _ in range(1 if quick() else 2):  # alternate the two sides (the load drifts); keep each one's best
        c = dist_run.mpirun(2, [exe] + [str(s) for s in sizes])
        e = dist_run.mpirun(2, [PYTHON, os.path.join(HERE, 'allreduce_ember.py')] + [str(s) for s in sizes])
        for k in range(len(sizes)):
            best_c[k], best_e[k] = min(best_c[k], float(c[k].split()[1])), min(best_e[k], float(e[k].split()[1]))
    rows = []
    for k, size in enumerate(sizes):
        label = f'{size >> 10} KiB' if size < (1 << 20) else f'{size >> 20} MiB'
        rows.append(figure(__file__, f'all_reduce {label} float32, 2 ranks', 'us', 1, best_e[k], best_c[k],
                           note='torch column: MPI_Allreduce from C'))
    return rows


def ddp_rows(model, case, steps):
    one = dist_run.mpirun(1, [PYTHON, os.path.join(HERE, 'ddp_step.py'), model, steps])[0].split()
    ms, wait, comm = (float(v) for v in dist_run.mpirun(2, [PYTHON, os.path.join(HERE, 'ddp_step.py'), model,
                                                             steps])[0].split())
    overlap = 100 * max(0.0, 1 - wait / comm) if comm > 0 else None
    return [figure(__file__, f'{case}, 1 rank', 'ms', 1, float(one[0]), None),
            figure(__file__, f'{case}, 2 ranks DDP', 'ms', 1, ms, None,
                   note=f'end of backward waited {wait:.2f} ms for all-reduces taking {comm:.2f} ms alone'),
            figure(__file__, f'{case}, 2 ranks DDP: all-reduce hidden by backward', '%', 1, overlap, None,
                   higher_is_better=True)]


def figures(args):
    return (allreduce_rows() + ddp_rows('mlp', 'DDP step MLP 784-512-512-10, batch 128/rank', '2' if quick() else '20')
            + ddp_rows('resnet18', 'DDP step ResNet-18 32x32, batch 8/rank', '1' if quick() else '3'))


if __name__ == '__main__':
    cli(__file__, figures)
