"""The thread settings as PyTorch documents them (set_num_threads and
friends, OMP_NUM_THREADS / EMBER_NUM_THREADS, DataLoader workers on one
thread) and parallel kernels that give the one-thread results."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
from ember.utils.data import DataLoader, Dataset

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def physical_cores():
    """Cores in our affinity mask, counted once per core."""
    cores = set()
    for cpu in os.sched_getaffinity(0):
        try:
            with open("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % cpu) as f:
                cores.add(int(f.read().replace("-", ",").split(",")[0]))
        except OSError:
            cores.add(cpu)
    n = len(cores)
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()
        if quota != "max":
            n = min(n, -(-int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return max(n, 1)


def threads_in_child(env_extra, code="print(ember.get_num_threads())"):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "EMBER_NUM_THREADS")}
    env.update(env_extra)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    out = subprocess.run([sys.executable, "-c", "import ember\n" + code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


@pytest.mark.parametrize("env, want", [
    ({}, None),
    ({"OMP_NUM_THREADS": "3"}, 3),
    ({"EMBER_NUM_THREADS": "5"}, 5),
    ({"OMP_NUM_THREADS": "2", "EMBER_NUM_THREADS": "4"}, 4),   # EMBER_ wins
    ({"OMP_NUM_THREADS": "3,2"}, 3),                           # an OpenMP list: its first level
    ({"OMP_NUM_THREADS": "junk"}, None),                       # ignored, as PyTorch does
])
def test_default_threads_from_environment(env, want):
    assert threads_in_child(env) == [str(want or physical_cores())]


def test_set_num_threads():
    saved = ember.get_num_threads()
    try:
        ember.set_num_threads(3)
        assert ember.get_num_threads() == 3
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
    finally:
        ember.set_num_threads(saved)


@pytest.mark.parametrize("bad, message", [
    (0, "set_num_threads expects a positive integer"),
    (-2, "set_num_threads expects a positive integer"),
    (1.5, "set_num_threads expects an int, but got float"),
    (True, "set_num_threads expects an int, but got bool"),
    ("2", "set_num_threads expects an int, but got str"),
])
def test_set_num_threads_errors(bad, message):
    saved = ember.get_num_threads()
    with pytest.raises(RuntimeError, match=message):
        ember.set_num_threads(bad)
    assert ember.get_num_threads() == saved


def test_interop_threads():
    # PyTorch: a positive count, settable once; reading it does not fix it
    code = "\n".join([
        "print(ember.get_num_interop_threads() >= 1)",
        "for bad in (0, -1):",
        "    try: ember.set_num_interop_threads(bad)",
        "    except RuntimeError as e: print('positive' in str(e))",
        "ember.set_num_interop_threads(3)",
        "print(ember.get_num_interop_threads())",
        "try: ember.set_num_interop_threads(2)",
        "except RuntimeError as e: print('cannot set number of interop threads' in str(e))",
        "print(ember.get_num_interop_threads())",
    ])
    assert threads_in_child({}, code) == ["True", "True", "True", "3", "True", "3"]


class ThreadsSeen(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return ember.get_num_threads()


def test_dataloader_workers_use_one_thread():
    saved = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        seen = [int(x) for batch in DataLoader(ThreadsSeen(), batch_size=2, num_workers=2) for x in batch]
        assert seen == [1, 1, 1, 1]
        assert ember.get_num_threads() == 2  # the main process keeps its setting
    finally:
        ember.set_num_threads(saved)


def kernels(threads):
    ember.set_num_threads(threads)
    g = ember.Generator().manual_seed(0)
    a = ember.randn(700, 300, generator=g, dtype=ember.float64)
    b = ember.randn(300, 500, generator=g, dtype=ember.float64)
    c = ember.randn(400, 700, generator=g, dtype=ember.float32)
    outs = [a.exp(), a.sum(), a.sum(0), a.sum(1), a.softmax(1), a.log_softmax(0), a @ b, c @ c.t(),
            a.cumsum(1), a[:, ::2].clone(), a.index_select(0, ember.arange(699, -1, -3)),
            ember.nn.functional.layer_norm(a, (300,)), a.median(1).values, c.sort(1).values]
    return [o.detach().numpy() for o in outs + more_kernels(g)]


def more_kernels(g):
    """The kernels that split by samples, rows, blocks or chunks: convolution (float64: im2col + GEMM),
    unfold/fold, losses, random streams, fills, sampling, searches, bags, CTC."""
    F = ember.nn.functional
    x = ember.randn(16, 3, 20, 20, generator=g, dtype=ember.float64)
    w = ember.randn(4, 3, 3, 3, generator=g, dtype=ember.float64)
    y = ember.randn(600, 300, generator=g)
    probs = ember.rand(400, 200, generator=g, dtype=ember.float64)
    bag_w = ember.randn(500, 64, generator=g, requires_grad=True)
    bag_i = ember.randint(0, 500, (4000,), generator=g)
    bag = F.embedding_bag(bag_i, bag_w, ember.arange(0, 4000, 4), mode='mean')
    bag.sum().backward()
    lp = ember.randn(50, 64, 20, generator=g, dtype=ember.float64).log_softmax(2).requires_grad_()
    targets = ember.randint(1, 20, (64, 30), generator=g)
    ctc = F.ctc_loss(lp, targets, ember.full((64,), 50), ember.full((64,), 30), reduction='sum')
    ctc.backward()
    ember.manual_seed(1)
    return [F.conv2d(x, w, padding=1), F.conv_transpose2d(x, w.transpose(0, 1)), F.unfold(x, 3),
            F.fold(F.unfold(x, 3), (20, 20), 3), F.mse_loss(y, y.flip(0)), F.smooth_l1_loss(y, y.t().reshape(600, 300)),
            F.dropout(y, 0.3), F.rrelu(y, training=True), ember.randn(100000, generator=g),
            ember.rand(100000, generator=g, dtype=ember.float64), ember.arange(0, 1, 1e-6), ember.linspace(-3, 5, 300001),
            ember.full((3 << 20,), 7, dtype=ember.int16), ember.multinomial(probs, 50, generator=g),
            ember.multinomial(probs, 200, replacement=True, generator=g),
            ember.searchsorted(y[0].sort().values, y.reshape(-1)), bag, bag_w.grad, ctc, lp.grad]


@pytest.mark.parametrize('dtype', ['float64', 'float32'])
def test_conv_weight_grad_same_with_threads(dtype):
    """The weight gradient sums per-chunk partials: equal up to rounding for any thread count (float64:
    im2col + GEMM; float32: oneDNN, one primitive per chunk of samples)."""
    saved, dt = ember.get_num_threads(), getattr(ember, dtype)
    grads = []
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            g = ember.Generator().manual_seed(0)
            x = ember.randn(17, 8, 24, 24, generator=g, dtype=dt, requires_grad=True)
            w = ember.randn(16, 8, 3, 3, generator=g, dtype=dt, requires_grad=True)
            y = ember.nn.functional.conv2d(x, w, stride=2)
            y.square().sum().backward()
            grads.append([t.detach().numpy().astype(np.float64) for t in (y, x.grad, w.grad)])
    finally:
        ember.set_num_threads(saved)
    tol = 1e-12 if dtype == 'float64' else 1e-5
    for other in grads[1:]:
        for got, want in zip(other, grads[0]):
            assert np.abs(got - want).max() <= tol * np.abs(want).max()


def test_parallel_results_equal_one_thread():
    saved = ember.get_num_threads()
    try:
        one, many = kernels(1), kernels(3)
    finally:
        ember.set_num_threads(saved)
    for i, (x, y) in enumerate(zip(one, many)):
        assert x.dtype == y.dtype and np.array_equal(x, y), "output %d differs" % i


def window_kernels(threads):
    """Pooling, padding, upsampling, grid_sample, batch_norm and the recurrent layers' gate rows (the
    kernels that split by planes, points, channels or rows), forward and backward, each above its grain."""
    ember.set_num_threads(threads)
    F = ember.nn.functional
    g = ember.Generator().manual_seed(0)
    x = ember.randn(8, 16, 40, 40, generator=g, dtype=ember.float64, requires_grad=True)
    x32 = ember.randn(8, 16, 40, 40, generator=g, requires_grad=True)
    samples = ember.rand(8, 16, 2, generator=g, dtype=ember.float64)
    grid = ember.rand(8, 30, 30, 2, generator=g, dtype=ember.float64) * 2.2 - 1.1
    grid.requires_grad_()
    outs = []

    def run(y, *inputs):
        """y, and the gradients of (y * a fixed random tensor).sum() with respect to the inputs"""
        gy = ember.randn(y.shape, generator=g, dtype=y.dtype)
        outs.append(y)
        outs.extend(ember.autograd.grad((y * gy).sum(), inputs))

    pooled, ind = F.max_pool2d(x, 3, 2, padding=1, return_indices=True)
    run(pooled, x)
    run(F.max_pool2d(x32, 2), x32)  # the 2x2 loop
    run(F.max_pool3d(x, (2, 3, 3), (2, 2, 1)), x)
    run(F.avg_pool2d(x, 3, 2, padding=1), x)
    run(F.avg_pool2d(x32, 5, 3, ceil_mode=True, count_include_pad=False), x32)
    run(F.lp_pool2d(x, 2, 3), x)
    run(F.adaptive_avg_pool2d(x, (7, 9)), x)
    run(F.adaptive_avg_pool3d(x, (5, 6, 7)), x)
    run(F.adaptive_max_pool2d(x, (7, 9)), x)
    run(F.fractional_max_pool2d(x, 3, output_size=(25, 25), _random_samples=samples), x)
    leaf = pooled.detach().requires_grad_()
    run(F.max_unpool2d(leaf, ind, 3, 2, padding=1, output_size=(40, 40)), leaf)
    run(F.pad(x, (3, 2, 1, 4), mode='reflect'), x)
    for mode in ('nearest', 'bilinear', 'bicubic'):
        run(F.interpolate(x, scale_factor=1.7, mode=mode), x)
    run(F.interpolate(x32, size=(33, 57), mode='bilinear', align_corners=True), x32)
    run(F.interpolate(x.reshape(8, 16, 10, 4, 40), scale_factor=1.5, mode='trilinear'), x)
    for mode in ('bilinear', 'nearest', 'bicubic'):
        run(F.grid_sample(x, grid, mode=mode, padding_mode='reflection', align_corners=False), x, grid)
    w = ember.rand(16, generator=g, dtype=ember.float64, requires_grad=True)
    b = ember.randn(16, generator=g, dtype=ember.float64, requires_grad=True)
    mean, var = ember.zeros(16, dtype=ember.float64), ember.ones(16, dtype=ember.float64)
    run(F.batch_norm(x, mean, var, w, b, training=True), x, w, b)
    outs += [mean, var]
    run(F.batch_norm(x32, None, None, training=True), x32)
    seq = ember.randn(4, 256, 32, generator=g, dtype=ember.float64, requires_grad=True)
    for layer in (ember.nn.LSTM(32, 256), ember.nn.GRU(32, 256), ember.nn.RNN(32, 256), ember.nn.LSTM(32, 256, proj_size=64)):
        for p in layer.parameters():
            p.data = ember.randn(p.shape, generator=g, dtype=ember.float64) * 0.1
        y, _ = layer(seq)
        run(y, seq, *layer.parameters())
    return [o.detach().numpy() for o in outs]


def test_window_kernels_equal_one_thread():
    saved = ember.get_num_threads()
    try:
        one, many = window_kernels(1), window_kernels(3)
    finally:
        ember.set_num_threads(saved)
    for i, (x, y) in enumerate(zip(one, many)):
        assert x.dtype == y.dtype and np.array_equal(x, y), "output %d differs" % i


def test_onednn_chunks_run_concurrently():
    """ResNet-18's deep convolution shape (float32, oneDNN, batch 32): the chunks of a batch run one
    primitive on two threads at once, each with its own scratchpad (Note [oneDNN scratchpads] in
    conv_dnnl.c; with the shared library scratchpad this crashed ResNet-18's training step).
    Equal to one thread up to rounding."""
    F = ember.nn.functional
    saved, results = ember.get_num_threads(), []
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            g = ember.Generator().manual_seed(0)
            x = ember.randn(32, 256, 2, 2, generator=g, requires_grad=True)
            w = ember.randn(256, 256, 3, 3, generator=g, requires_grad=True)
            for _ in range(3):
                x.grad = w.grad = None
                y = F.conv2d(x, w, padding=1)
                y.square().mean().backward()
            results.append([t.detach().numpy() for t in (y, x.grad, w.grad)])
    finally:
        ember.set_num_threads(saved)
    for other in results[1:]:
        for got, want in zip(other, results[0]):
            assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()
