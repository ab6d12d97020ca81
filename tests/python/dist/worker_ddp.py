"""Run by test_distributed.py through the launcher (ember.distributed.run
--nproc_per_node=2): DistributedDataParallel on 2 ranks against the same
model trained in one process on the combined batch (each rank computes that
reference itself), no_sync, find_unused_parameters, gradient_as_bucket_view,
broadcast_buffers and SyncBatchNorm. Any failure raises (exit status 1)."""
import os

import ember
import ember.distributed as dist
from ember import nn
from ember.nn.parallel import DistributedDataParallel as DDP

assert os.environ['WORLD_SIZE'] == '2' and os.environ['LOCAL_RANK'] == os.environ['RANK']
assert os.environ['MASTER_ADDR'] and os.environ['MASTER_PORT']
dist.init_process_group('gloo')  # as a PyTorch CPU script would: it runs on MPI
assert dist.get_backend() == 'mpi'
R, W = dist.get_rank(), dist.get_world_size()
assert R == int(os.environ['RANK'])


def cnn():
    ember.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 8, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 32), nn.ReLU(), nn.Linear(32, 10))


def close(a, b, what, tol=2e-5):
    """Parameters equal to float32 rounding: within tol of the largest |value|."""
    for (n, x), y in zip(a.named_parameters(), b.parameters()):
        err, scale = (x - y).abs().max().item(), y.abs().max().item()
        if os.environ.get('SHOW'):
            print(what, n, err, scale)
        if err > tol * max(scale, 1.0):
            raise AssertionError(f'{what}: {n} differs by {err} (largest |value| {scale})')


# --- 50 SGD steps of a LeNet-style CNN on Fashion-MNIST (its first 1600 test
# images when dataset-fashion-mnist is installed), 16 images per rank a step,
# each rank's through DistributedSampler; the reference takes both ranks' 32
try:
    from ember.utils.data.datasets import FashionMNIST
    ds = FashionMNIST(train=False)
    X = (ds.data[:1600].float().div(255).sub(0.2860).div(0.3530)).unsqueeze(1)
    Y = ds.targets[:1600].long()
except (OSError, ValueError, RuntimeError):
    ember.manual_seed(123)
    X, Y = ember.randn(1600, 1, 28, 28), ember.randint(0, 10, (1600,))
data = ember.utils.data.TensorDataset(X, Y)
sampler = ember.utils.data.DistributedSampler(data, shuffle=False)
assert len(sampler) == 800 and list(sampler)[:3] == [R, R + 2, R + 4]
loader = ember.utils.data.DataLoader(data, batch_size=16, sampler=sampler)
ref, split, model = cnn(), cnn(), cnn()
for p in model.parameters():   # different starting points: DDP must broadcast rank 0's
    if R:
        p.data.add_(1.0)
ddp = DDP(model, bucket_cap_mb=0.01)
assert len(ddp._buckets) > 1
opt_ref = ember.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
opt_split = ember.optim.SGD(split.parameters(), lr=0.05, momentum=0.9)
opt = ember.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for step, (x, y) in enumerate(loader):
    if step == 50:
        break
    xs, ys = X[32 * step:32 * step + 32], Y[32 * step:32 * step + 32]
    opt_ref.zero_grad()
    loss_fn(ref(xs), ys).backward()
    opt_ref.step()
    # the same mean loss, summed as the two ranks do: the float32 roundings match DDP's
    opt_split.zero_grad()
    ((loss_fn(split(xs[0::2]), ys[0::2]) + loss_fn(split(xs[1::2]), ys[1::2])) / 2).backward()
    opt_split.step()
    opt.zero_grad()
    loss_fn(ddp(x), y).backward()
    opt.step()
close(model, split, 'DDP CNN after 50 steps vs the split-batch reference', tol=1e-6)
close(model, ref, 'DDP CNN after 50 steps vs the combined batch', tol=5e-4)  # 50 steps amplify roundings

# --- no_sync: two local micro-batches, then one synchronized step == one big step
ref, model = cnn(), cnn()
ddp = DDP(model, gradient_as_bucket_view=True)
x, y = ember.randn(2, 8, 1, 28, 28), ember.randint(0, 10, (2, 8))
for k in range(2):
    loss_fn(ref(x[k]), y[k]).backward()
with ddp.no_sync():
    loss_fn(ddp(x[0][4 * R:4 * R + 4]), y[0][4 * R:4 * R + 4]).backward()
mine = [p.grad.clone() for p in model.parameters()]
loss_fn(ddp(x[1][4 * R:4 * R + 4]), y[1][4 * R:4 * R + 4]).backward()
for p, q, m in zip(model.parameters(), ref.parameters(), mine):
    assert ember.allclose(p.grad, q.grad, rtol=2e-5, atol=2e-5), 'no_sync accumulation'
assert not ember.allclose(mine[0], ref.parameters().__next__().grad), 'no_sync did not communicate'


# --- find_unused_parameters: rank 0 uses a branch rank 1 does not; one layer no rank uses
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        ember.manual_seed(1)
        self.a, self.b, self.never = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x, use_b):
        h = self.a(x)
        return self.b(h) if use_b else h


x = ember.randn(2, 3, 4)


def check_branchy(ddp, ref, model, what):
    """One step where only rank 0 uses `b` and nobody `never`: DDP's gradients
    are the reference's averaged over ranks, `never`'s stays None."""
    for p in list(ref.parameters()) + list(model.parameters()):
        p.grad = None
    sum(ref(x[r], r == 0).pow(2).mean() for r in range(W)).div(W).backward()
    ddp(x[R], R == 0).pow(2).mean().backward()
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        if n.startswith('never'):
            assert p.grad is None, n
        else:
            assert ember.allclose(p.grad, q.grad, rtol=1e-5, atol=1e-6), f'{what}: {n}'


ref, model = Branchy(), Branchy()
ddp = DDP(model, find_unused_parameters=True)
for it in range(2):
    check_branchy(ddp, ref, model, 'find_unused_parameters')

# --- static_graph: the first iteration finds the unused parameters; later ones do not search the graph
ref, model = Branchy(), Branchy()
ddp = DDP(model, static_graph=True)
searches, search = [], ddp._reachable
ddp._reachable = lambda out: searches.append(1) or search(out)
for it in range(3):
    check_branchy(ddp, ref, model, 'static_graph')
assert searches == [1], f'static_graph searched the graph {len(searches)} times'

# --- without find_unused_parameters an unused parameter is reported at the next forward
ddp = DDP(Branchy())
ddp(x[R], True).sum().backward()  # `never` gets no gradient
try:
    ddp(x[R], True)
    raise AssertionError('no error for an unused parameter')
except RuntimeError as e:
    assert 'Expected to have finished reduction' in str(e)


# --- register_comm_hook: the default hooks (torch's names) and a custom one seeing GradBuckets
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as torch_hooks  # noqa: E402
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: E402
assert set(default_hooks.__all__) <= set(dir(torch_hooks))
xb, yb = ember.randn(2, 4, 1, 28, 28), ember.randint(0, 10, (2, 4))


def hooked_grads(state=None, hook=None):
    model = cnn()
    ddp = DDP(model, bucket_cap_mb=0.01)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
        try:
            ddp.register_comm_hook(state, hook)
            raise AssertionError('register_comm_hook twice: no error')
        except RuntimeError:
            pass
    loss_fn(ddp(xb[R]), yb[R]).backward()
    return [p.grad.clone() for p in model.parameters()]


local = cnn()
loss_fn(local(xb[R]), yb[R]).backward()
every = [[ember.empty_like(p.grad) for _ in range(W)] for p in local.parameters()]
for out, p in zip(every, local.parameters()):
    dist.all_gather(out, p.grad)
plain = hooked_grads()
for g, gs in zip(hooked_grads(None, default_hooks.allreduce_hook), every):
    assert ember.allclose(g, (gs[0] + gs[1]) / 2, rtol=1e-6, atol=1e-7), 'allreduce_hook'
for hook, dt in ((default_hooks.fp16_compress_hook, ember.float16), (default_hooks.bf16_compress_hook, ember.bfloat16),
                 (default_hooks.fp16_compress_wrapper(default_hooks.allreduce_hook), ember.float16)):
    for g, gs, f in zip(hooked_grads(None, hook), every, plain):
        want = sum(a.to(dt).div(W).float() for a in gs).to(dt).float()  # each rank's share rounded, summed, rounded
        assert ember.allclose(g, want, rtol=1e-6, atol=1e-8), f'{hook.__name__}: {(g - want).abs().max()}'
        assert ember.allclose(g, f, rtol=2e-2, atol=1e-3)
seen = []


def spy(state, bucket):
    assert state == 'st' and bucket.buffer().numel() == sum(t.numel() for t in bucket.gradients())
    assert [tuple(t.shape) for t in bucket.gradients()] == [tuple(p.shape) for p in bucket.parameters()]
    seen.append((bucket.index(), bucket.is_last()))
    return default_hooks.allreduce_hook(None, bucket)


for g, p in zip(hooked_grads('st', spy), plain):
    assert ember.allclose(g, p, rtol=1e-6, atol=1e-7), 'custom hook'
assert len(seen) > 1 and [i for i, _ in seen] == list(range(len(seen))) and seen[-1][1] and not seen[0][1], seen


# --- join: rank 0 trains 3 batches, rank 1 one; the gradient of each step is the active ranks'
# sum divided by the world size (divide_by_initial_world_size) or by the active ranks
def lin():
    ember.manual_seed(3)
    return nn.Linear(3, 2)


xs, counts = ember.randn(W, 3, 4, 3), [3, 1]
for divide in (True, False):
    ref, model = lin(), lin()
    ddp = DDP(model)
    o_ref, o = ember.optim.SGD(ref.parameters(), lr=0.1), ember.optim.SGD(ddp.parameters(), lr=0.1)
    snapshots = []
    for k in range(max(counts)):
        o_ref.zero_grad()
        active = [r for r in range(W) if k < counts[r]]
        sum(ref(xs[r, k]).pow(2).mean() for r in active).div(W if divide else len(active)).backward()
        o_ref.step()
        snapshots.append([p.detach().clone() for p in ref.parameters()])
    with ddp.join(divide_by_initial_world_size=divide):
        for k in range(counts[R]):
            o.zero_grad()
            ddp(xs[R, k]).pow(2).mean().backward()
            o.step()
    for p, q in zip(model.parameters(), snapshots[counts[R] - 1]):
        assert ember.allclose(p, q, rtol=1e-5, atol=1e-6), f'join (divide_by_initial_world_size={divide})'


# --- broadcast_buffers: rank 0's buffers at every forward
class WithBuffer(nn.Linear):
    def __init__(self):
        super().__init__(2, 2)
        self.register_buffer('count', ember.zeros(1))


m = WithBuffer()
ddp = DDP(m)
m.count.fill_(R + 5)
ddp(ember.ones(1, 2))
assert m.count.item() == 5, 'broadcast_buffers'


# --- SyncBatchNorm == BatchNorm on the combined batch (values, running stats, training)
def bn_net():
    ember.manual_seed(2)
    return nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3))


ref, model = bn_net(), nn.SyncBatchNorm.convert_sync_batchnorm(bn_net())
assert isinstance(model[1], nn.SyncBatchNorm)
ddp = DDP(model)
o_ref, o = ember.optim.SGD(ref.parameters(), lr=0.1), ember.optim.SGD(ddp.parameters(), lr=0.1)
X = ember.randn(5, 8, 5)
for step in range(5):
    o_ref.zero_grad()
    ref(X[step]).pow(2).mean().backward()
    o_ref.step()
    o.zero_grad()
    out = ddp(X[step][4 * R:4 * R + 4])
    out.pow(2).mean().backward()
    o.step()
close(model, ref, 'SyncBatchNorm training', tol=1e-5)
assert ember.allclose(model[1].running_mean, ref[1].running_mean, atol=1e-6)
assert ember.allclose(model[1].running_var, ref[1].running_var, atol=1e-6)
assert model[1].num_batches_tracked.item() == 5
model.eval(), ref.eval()
assert ember.allclose(model(X[0]), ref(X[0]), atol=1e-5)
dist.destroy_process_group()
print(f'rank {R}: DDP checks passed')
