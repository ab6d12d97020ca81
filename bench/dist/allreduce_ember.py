"""Ember's side of bench/dist/run.py: ember.distributed.all_reduce (float32
SUM, in place), the best time of `reps` per message size, measured like
allreduce_mpi.c; rank 0 prints "bytes microseconds" lines."""
import sys
import time

import ember
import ember.distributed as dist

dist.init_process_group('mpi')
t = ember.zeros(1, dtype=ember.float64)
for arg in sys.argv[1:]:
    nbytes = int(arg)
    x = ember.zeros(nbytes // 4)
    best = 1e30
    for _ in range(200 if nbytes <= (1 << 20) else 20):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(x)
        t[0] = time.perf_counter() - t0
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        best = min(best, t.item())
    if dist.get_rank() == 0:
        print(nbytes, f'{best * 1e6:.3f}')
