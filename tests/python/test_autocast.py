"""CPU autocast (ember.autocast, ember.cpu.amp.autocast) against torch 1.13's:
which ops run in bfloat16 or float32, values, gradients back in float32,
the weight-cast cache, nesting, decorators, the state functions, and the
regions PyTorch 1.13 disables with a warning."""
import warnings

import numpy as np
import pytest
import torch

import ember


def pair(shape, seed, dtype='float32'):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a), torch.tensor(a)


X, TX = pair((4, 8), 0)
W, TW = pair((6, 8), 1)
B3, TB3 = pair((2, 4, 4), 2)
IMG, TIMG = pair((1, 3, 8, 8), 3)
K, TK = pair((2, 3, 3, 3), 4)
TGT = np.array([0, 2, 5, 1])

# name -> f(lib, tensors...) run on both libraries with the same inputs
CASES = {
    'mm': lambda L, x, w, b3, img, k: L.mm(x, w.t()),
    'matmul': lambda L, x, w, b3, img, k: x @ w.t(),
    'bmm': lambda L, x, w, b3, img, k: L.bmm(b3, b3),
    'addmm': lambda L, x, w, b3, img, k: L.addmm(x[:, :6], x, w.t()),
    'baddbmm': lambda L, x, w, b3, img, k: L.baddbmm(b3, b3, b3),
    'addbmm': lambda L, x, w, b3, img, k: L.addbmm(b3[0], b3, b3),
    'linear': lambda L, x, w, b3, img, k: L.nn.functional.linear(x, w, w[:, 0]),
    'linear_3d': lambda L, x, w, b3, img, k: L.nn.functional.linear(x.reshape(2, 2, 8), w),
    'conv2d': lambda L, x, w, b3, img, k: L.nn.functional.conv2d(img, k, k[:, 0, 0, 0]),
    'conv1d': lambda L, x, w, b3, img, k: L.nn.functional.conv1d(img[:, :, 0], k[:, :, 0]),
    'conv_transpose2d': lambda L, x, w, b3, img, k: L.nn.functional.conv_transpose2d(img, k.transpose(0, 1)),
    'softmax': lambda L, x, w, b3, img, k: L.softmax(x, 1),
    'relu_of_mm': lambda L, x, w, b3, img, k: L.relu(x @ w.t()),
    'mm_plus_fp32': lambda L, x, w, b3, img, k: x @ w.t() + x[:, :6],
    'sum': lambda L, x, w, b3, img, k: x.sum(),
    'layer_norm': lambda L, x, w, b3, img, k: L.nn.functional.layer_norm(x, (8,)),
    'cross_entropy': lambda L, x, w, b3, img, k: L.nn.functional.cross_entropy(x, L.tensor(TGT)),
    'cross_entropy_of_mm': lambda L, x, w, b3, img, k: L.nn.functional.cross_entropy(x @ w.t(), L.tensor(TGT)),
    'nll_loss': lambda L, x, w, b3, img, k: L.nn.functional.nll_loss(x, L.tensor(TGT)),
    'mse_loss': lambda L, x, w, b3, img, k: L.nn.functional.mse_loss(x @ w.t(), x[:, :6]),
    'l1_loss': lambda L, x, w, b3, img, k: L.nn.functional.l1_loss(x, x * 2),
    'smooth_l1_loss': lambda L, x, w, b3, img, k: L.nn.functional.smooth_l1_loss(x, x * 2),
    'huber_loss': lambda L, x, w, b3, img, k: L.nn.functional.huber_loss(x, x * 2),
    'bce_with_logits': lambda L, x, w, b3, img, k: L.nn.functional.binary_cross_entropy_with_logits(
        x @ w.t(), (x[:, :6] > 0).float()),
}


@pytest.mark.parametrize('name', list(CASES))
@pytest.mark.parametrize('input_dtype', ['float32', 'bfloat16'])
def test_op_dtypes_and_values_match_torch(name, input_dtype):
    ours = [t.to(getattr(ember, input_dtype)) for t in (X, W, B3, IMG, K)]
    theirs = [t.to(getattr(torch, input_dtype)) for t in (TX, TW, TB3, TIMG, TK)]
    with ember.autocast(device_type='cpu', dtype=ember.bfloat16):
        r = CASES[name](ember, *ours)
    with torch.autocast(device_type='cpu', dtype=torch.bfloat16):
        e = CASES[name](torch, *theirs)
    assert str(r.dtype).split('.')[-1] == str(e.dtype).split('.')[-1]
    # bfloat16 keeps 8 bits: compare at the scale of the result
    expected = e.float().detach().numpy()
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(r.float().detach().numpy(), expected, rtol=2e-2, atol=1e-2 * scale)


def test_float64_and_integers_are_left_alone():
    a = ember.randn(3, 3, dtype=ember.float64)
    i = ember.arange(9).reshape(3, 3)
    with ember.autocast('cpu'):
        assert (a @ a).dtype == ember.float64
        assert (i @ i).dtype == ember.int64
        assert ember.nn.functional.mse_loss(a, a).dtype == ember.float64


def test_gradients_return_in_float32_and_match_torch():
    lin, tlin = ember.nn.Linear(8, 6), torch.nn.Linear(8, 6)
    tlin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lin.state_dict().items()})
    x, tx = X.clone().requires_grad_(), TX.clone().requires_grad_()
    with ember.autocast('cpu'):
        loss = ember.nn.functional.cross_entropy(lin(x), ember.tensor(TGT))
    with torch.autocast('cpu'):
        tloss = torch.nn.functional.cross_entropy(tlin(tx), torch.tensor(TGT))
    loss.backward()
    tloss.backward()
    assert loss.dtype == ember.float32 and lin.weight.grad.dtype == ember.float32 and x.grad.dtype == ember.float32
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-2)
    np.testing.assert_allclose(lin.weight.grad.numpy(), tlin.weight.grad.numpy(), rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=3e-2, atol=3e-2)


def count_casts(fn):
    with ember.profiler.profile() as prof:
        fn()
    return sum(1 for e in prof.events() if e.name in ('cast', 'to_copy', 'copy'))


def test_weights_are_cast_once_per_region():
    lin = ember.nn.Linear(8, 8)
    x = ember.randn(4, 8)

    def two_forwards(cache):
        with ember.autocast('cpu', cache_enabled=cache):
            lin(x), lin(x)
    cached, uncached = count_casts(lambda: two_forwards(True)), count_casts(lambda: two_forwards(False))
    assert cached < uncached
    # an in-place update of the weight inside the region makes a fresh cast
    with ember.autocast('cpu'):
        before = lin(x)
        with ember.no_grad():
            lin.weight.mul_(2)
        after = lin(x)
    assert not ember.allclose(before, after)


def test_gradient_accumulation_inside_one_region():
    lin, tlin = ember.nn.Linear(8, 3), torch.nn.Linear(8, 3)
    tlin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lin.state_dict().items()})
    with ember.autocast('cpu'):
        for _ in range(3):
            lin(X).sum().backward()
    with torch.autocast('cpu'):
        for _ in range(3):
            tlin(TX).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), tlin.weight.grad.numpy(), rtol=3e-2, atol=3e-2)


def test_nesting_disabling_and_decorators():
    with ember.autocast('cpu'):
        assert ember.is_autocast_cpu_enabled()
        with ember.autocast('cpu', enabled=False):
            assert not ember.is_autocast_cpu_enabled()
            assert (X @ W.t()).dtype == ember.float32
        assert (X @ W.t()).dtype == ember.bfloat16
    assert not ember.is_autocast_cpu_enabled()

    @ember.autocast('cpu')
    def f(a, b):
        return a @ b

    @ember.cpu.amp.autocast()
    def g(a, b):
        return a @ b
    assert f(X, W.t()).dtype == ember.bfloat16 and g(X, W.t()).dtype == ember.bfloat16
    assert (X @ W.t()).dtype == ember.float32
    with ember.cpu.amp.autocast():
        assert ember.get_autocast_cpu_dtype() == ember.bfloat16 and (X @ W.t()).dtype == ember.bfloat16


def test_state_functions_match_torch():
    for lib in (ember, torch):
        assert not lib.is_autocast_cpu_enabled() and lib.get_autocast_cpu_dtype() == lib.bfloat16
        assert lib.is_autocast_cache_enabled()
        with lib.autocast('cpu'):
            assert lib.is_autocast_cpu_enabled()
        assert not lib.is_autocast_enabled()
    with pytest.raises(TypeError):
        ember.set_autocast_cpu_dtype('bfloat16')


def test_regions_torch_disables_and_errors():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="device_type must be 'cuda' or 'cpu'"):
            lib.autocast('tpu')
    # torch 1.13 warns that it disables the region, then fails setting float16; Ember disables it
    with pytest.warns(UserWarning, match='CPU Autocast only supports dtype of torch.bfloat16'):
        region = ember.autocast('cpu', dtype=ember.float16)
    with region:
        assert not ember.is_autocast_cpu_enabled() and (X @ W.t()).dtype == ember.float32
    with pytest.warns(UserWarning, match='CUDA is not available'):
        with ember.autocast('cuda'):
            assert (X @ W.t()).dtype == ember.float32
