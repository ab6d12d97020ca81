"""DDP step time of bench/dist/run.py: the MLP 784-512-512-10 (batch 128 per
rank) trained with SGD, one rank (plain model) or several (DDP); also the
time backward waits for the last buckets (what communication did not hide).
Rank 0 prints "ms_per_step wait_ms"."""
import sys
import time

import ember
import ember.distributed as dist
from ember import nn

steps = int(sys.argv[1])
dist.init_process_group('mpi')
ember.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
net = nn.parallel.DistributedDataParallel(model) if dist.get_world_size() > 1 else model
opt = ember.optim.SGD(net.parameters(), lr=0.01)
x, y = ember.randn(128, 784), ember.randint(0, 10, (128,))
waited = [0.0]
if net is not model:  # time the final waits: the all-reduce not overlapped with backward
    finalize = net._finalize

    def timed():
        t0 = time.perf_counter()
        finalize()
        waited[0] += time.perf_counter() - t0
    net._finalize = timed
best = 1e30
for rnd in range(3):
    dist.barrier()
    waited[0] = 0.0
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    t = (time.perf_counter() - t0) / steps
    if t < best:
        best, wait = t, waited[0] / steps
if dist.get_rank() == 0:
    print(f'{best * 1e3:.3f} {wait * 1e3:.3f}')
