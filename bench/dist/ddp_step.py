"""DDP step time of bench/dist/run.py and bench/bench_distributed.py: a
model trained with SGD, one rank (plain model) or several (DDP). argv:
model (mlp: 784-512-512-10, batch 128 per rank; resnet18: 32x32, batch 8
per rank), steps. Rank 0 prints "ms_per_step wait_ms comm_ms": wait is the
time the end of backward waited for all-reduces (communication backward did
not hide), comm the time the same buckets take to all-reduce alone."""
import sys
import time

import ember
import ember.distributed as dist
from ember import nn
from ember.nn import functional as F


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + (x if self.down is None else self.down(x)))


def resnet18():
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 10))


name, steps = sys.argv[1], int(sys.argv[2])
dist.init_process_group('mpi')
ember.manual_seed(0)
if name == 'mlp':
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    x, y = ember.randn(128, 784), ember.randint(0, 10, (128,))
else:
    model = resnet18()
    x, y = ember.randn(8, 3, 32, 32), ember.randint(0, 10, (8,))
net = nn.parallel.DistributedDataParallel(model) if dist.get_world_size() > 1 else model
opt = ember.optim.SGD(net.parameters(), lr=0.01)
waited = [0.0]
if net is not model:  # time the final waits: the all-reduce not overlapped with backward
    finalize = net._finalize

    def timed():
        t0 = time.perf_counter()
        finalize()
        waited[0] += time.perf_counter() - t0
    net._finalize = timed
best, wait = 1e30, 0.0
for rnd in range(3):
    dist.barrier()
    waited[0] = 0.0
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    t = (time.perf_counter() - t0) / steps
    if t < best:
        best, wait = t, waited[0] / steps
comm = 0.0
if net is not model:
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(steps):
        for b in net._buckets:
            dist.all_reduce(b.flat, op=dist.ReduceOp.AVG)
    comm = (time.perf_counter() - t0) / steps
if dist.get_rank() == 0:
    print(f'{best * 1e3:.3f} {wait * 1e3:.3f} {comm * 1e3:.3f}')
