"""Convolutions vs PyTorch 1.13: F.conv1d/2d/3d, F.conv_transpose1d/2d/3d,
torch.convolution, F.unfold/F.fold (values, input/weight/bias gradients,
float64 gradcheck, errors), and the Conv/ConvTranspose/Fold/Unfold modules
(outputs, gradients, repr, initialisation)."""
import math

import pytest
import torch

import ember
from helpers import assert_same, check, rand, to_ember

F_NAMES = {1: 'conv1d', 2: 'conv2d', 3: 'conv3d'}
T_NAMES = {1: 'conv_transpose1d', 2: 'conv_transpose2d', 3: 'conv_transpose3d'}


def fn(m):
    return m.nn.functional


# (nd, input shape, weight shape, kwargs)
CONV_CASES = [
    (2, (2, 3, 7, 6), (4, 3, 3, 3), {}),
    (2, (2, 4, 9, 8), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)),
    (2, (1, 4, 6, 6), (4, 1, 3, 3), dict(padding=1, groups=4)),          # depthwise
    (2, (3, 5, 4, 4), (2, 5, 1, 1), {}),                                  # 1x1: a GEMM
    (2, (3, 6, 6), (2, 3, 3, 3), dict(padding=1)),                        # unbatched
    (2, (2, 3, 6, 7), (4, 3, 2, 3), dict(padding='same', dilation=(2, 1))),  # 'same' with odd total padding
    (2, (2, 3, 6, 7), (4, 3, 2, 2), dict(padding='same')),
    (2, (2, 3, 6, 7), (4, 3, 2, 2), dict(padding='valid', stride=2)),
    (1, (2, 3, 11), (4, 3, 3), dict(stride=2, padding=2, dilation=2)),
    (1, (3, 11), (4, 3, 4), dict(padding='same')),
    (3, (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(stride=(1, 2, 1), padding=(1, 0, 1))),
    (3, (2, 4, 3, 4, 3), (4, 2, 2, 2, 2), dict(groups=2, dilation=(1, 2, 1))),
]


@pytest.mark.parametrize('case', CONV_CASES, ids=lambda c: f'{F_NAMES[c[0]]}-{c[1]}-{c[3]}')
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_conv_functional(case, dtype):
    nd, xs, ws, kw = case
    x, w, b = rand(*xs, dtype=dtype, seed=1), rand(*ws, dtype=dtype, seed=2), rand(ws[0], dtype=dtype, seed=3)
    check(lambda x, w, b, m: getattr(fn(m), F_NAMES[nd])(x, w, b, **kw), x, w, b, grad=True, atol=1e-4)
    check(lambda x, w, m: getattr(m, F_NAMES[nd])(x, w, None, **kw), x, w, grad=True, atol=1e-4)


# (nd, input shape, weight shape, kwargs)
TRANSPOSE_CASES = [
    (2, (2, 3, 4, 5), (3, 4, 3, 3), {}),
    (2, (2, 4, 3, 4), (4, 3, 3, 2), dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), dilation=(1, 2), groups=2)),
    (2, (1, 3, 4, 4), (3, 1, 2, 2), dict(stride=2, groups=3)),
    (2, (3, 5, 5), (3, 2, 3, 3), dict(stride=2, padding=1, output_padding=1)),   # unbatched
    (2, (2, 3, 4, 4), (3, 5, 1, 1), {}),
    (1, (2, 2, 5), (2, 4, 3), dict(stride=3, padding=1, dilation=2, output_padding=2)),
    (1, (2, 2, 3), (2, 2, 2), dict(dilation=3, output_padding=2)),          # output_padding >= stride
    (3, (1, 2, 2, 3, 2), (2, 2, 2, 2, 3), dict(stride=(2, 1, 2), padding=(0, 1, 1), output_padding=(1, 0, 0))),
]


@pytest.mark.parametrize('case', TRANSPOSE_CASES, ids=lambda c: f'{T_NAMES[c[0]]}-{c[1]}-{c[3]}')
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_conv_transpose_functional(case, dtype):
    nd, xs, ws, kw = case
    groups = kw.get('groups', 1)
    x, w, b = rand(*xs, dtype=dtype, seed=4), rand(*ws, dtype=dtype, seed=5), rand(ws[1] * groups, dtype=dtype, seed=6)
    check(lambda x, w, b, m: getattr(fn(m), T_NAMES[nd])(x, w, b, **kw), x, w, b, grad=True, atol=1e-4)


def test_convolution_toplevel_and_positional():
    x, w, b = rand(2, 3, 6, 6, seed=7), rand(4, 3, 3, 3, seed=8), rand(4, seed=9)
    check(lambda x, w, b, m: m.convolution(x, w, b, [2, 1], [1, 0], [1, 1], False, [0, 0], 1), x, w, b, grad=True,
          atol=1e-4)
    check(lambda x, w, m: m.convolution(x, w, None, [1], [0], [1], True, [0], 1), x, w.transpose(0, 1).contiguous(),
          grad=True, atol=1e-4)
    check(lambda x, w, b, m: m.conv2d(x, w, b, 2, 1, 1, 1), x, w, b, atol=1e-4)
    check(lambda x, w, b, m: m.conv2d(x, w, b, 1, 'same'), x, w, b, atol=1e-4)


def test_conv_noncontiguous_and_bfloat16():
    x = rand(2, 3, 6, 7, noncontig=True, seed=10)
    w = rand(4, 3, 3, 3, seed=11).transpose(2, 3)
    check(lambda x, w, m: fn(m).conv2d(x, w, padding=1), x, w, grad=True, atol=1e-4)
    xb, wb = rand(2, 3, 6, 6, seed=12).bfloat16(), rand(4, 3, 3, 3, seed=13).bfloat16()
    check(lambda x, w, m: fn(m).conv2d(x, w), xb, wb, atol=0.3, rtol=0.05)


def test_conv_gradcheck_float64():
    x = ember.randn(1, 2, 5, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 1, 2, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(4, dtype=ember.float64, requires_grad=True)
    F = ember.nn.functional
    assert ember.autograd.gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2),
                                                              groups=2), (x, w, b))
    wt = ember.randn(2, 3, 3, 2, dtype=ember.float64, requires_grad=True)
    bt = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=(1, 0),
                                                                        output_padding=1), (x, wt, bt))


def test_conv_double_backward():
    """create_graph through a convolution: the input gradient is a
    convolution and the weight gradient has its own formula."""
    x, w = rand(1, 2, 5, 5, dtype='float64', seed=14), rand(3, 2, 3, 3, dtype='float64', seed=15)

    def second(x, w, m):
        y = fn(m).conv2d(x, w, stride=2, padding=1)
        gx, gw = m.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        return (gx * gx).sum() + (gw * gw).sum()
    check(second, x, w, grad=True, atol=1e-6)


def test_gradient_functions_match_autograd():
    """ember._C._nn.convolution_input_grad / convolution_weight_grad (what the
    backward formulas run) give torch's gradients."""
    x, w, g = rand(2, 4, 7, 6, seed=30), rand(6, 2, 3, 2, seed=31), rand(2, 6, 4, 2, seed=32)
    tx, tw = x.clone().requires_grad_(), w.clone().requires_grad_()
    y = torch.nn.functional.conv2d(tx, tw, stride=2, padding=(1, 0), dilation=(1, 2), groups=2)
    gx, gw = torch.autograd.grad(y, (tx, tw), g)
    nn = ember._C._nn
    ex = nn.convolution_input_grad(to_ember(g), to_ember(w), list(x.shape), [2, 2], [1, 0], [1, 2], False, 2)
    ew = nn.convolution_weight_grad(to_ember(x), to_ember(g), [3, 2], [2, 2], [1, 0], [1, 2], False, 2)
    assert_same(ex, gx, atol=1e-4)
    assert_same(ew, gw, atol=1e-4)


CONV_ERRORS = [
    ((2, 4, 5, 5), (4, 3, 3, 3), {}, 'expected input[2, 4, 5, 5] to have 3 channels, but got 4 channels instead'),
    ((2, 3, 2, 2), (4, 3, 3, 3), {}, 'Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). '
                                     "Kernel size can't be greater than actual input size"),
    ((2, 3, 5, 5), (4, 1, 3, 3), dict(groups=3), 'expected weight to be divisible by 3 at dimension 0'),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(groups=2), 'expected input[2, 3, 5, 5] to have 6 channels'),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(padding=-1), 'negative padding is not supported'),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(stride=0), 'non-positive stride is not supported'),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(dilation=0), 'non-positive dilation is not supported'),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(groups=0), 'non-positive groups is not supported'),
    ((2, 2, 3, 5, 5), (4, 3, 3, 3), {}, 'Expected 3D (unbatched) or 4D (batched) input to conv2d'),
    ((5, 5), (4, 3, 3, 3), {}, 'Expected 3D (unbatched) or 4D (batched) input to conv2d'),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(stride=(1, 1, 1)), 'expected stride to be a single integer value or a list of 2'),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(padding='same', stride=2), "padding='same' is not supported for strided"),
    ((2, 3, 5, 5), (4, 3, 3, 3), dict(padding='foo'), "Invalid padding string: 'foo'"),
]


@pytest.mark.parametrize('case', CONV_ERRORS, ids=lambda c: c[3][:30])
def test_conv_errors(case):
    xs, ws, kw, msg = case
    for m in (torch, ember):
        with pytest.raises(RuntimeError) as info:
            fn(m).conv2d(m.zeros(*xs), m.zeros(*ws), **kw)
        assert msg in str(info.value), (m.__name__, str(info.value))


def test_conv_error_dtypes_and_bias():
    for m in (torch, ember):
        x = m.zeros(2, 3, 5, 5)
        with pytest.raises(RuntimeError, match='should be the same'):
            fn(m).conv2d(x, m.zeros(4, 3, 3, 3, dtype=m.float64))
        with pytest.raises(RuntimeError, match='expected bias to be 1-dimensional with 4 elements'):
            fn(m).conv2d(x, m.zeros(4, 3, 3, 3), m.zeros(3))
        with pytest.raises(RuntimeError, match="not implemented for 'Half'"):
            fn(m).conv2d(x.half(), m.zeros(4, 3, 3, 3).half())
        with pytest.raises(RuntimeError, match='Given transposed=1, weight of size'):
            fn(m).conv_transpose2d(x, m.zeros(4, 3, 3, 3))
        with pytest.raises(RuntimeError, match='output padding must be smaller than either stride or dilation'):
            fn(m).conv_transpose2d(x, m.zeros(3, 4, 3, 3), stride=2, output_padding=2)
        with pytest.raises(RuntimeError, match='Output size is too small'):
            fn(m).conv_transpose2d(x, m.zeros(3, 4, 3, 3), padding=4)


# ---- unfold / fold --------------------------------------------------------------
FOLD_CASES = [
    ((2, 3, 5, 7), dict(kernel_size=2)),
    ((2, 3, 5, 7), dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2))),
    ((3, 6, 6), dict(kernel_size=3, padding=1, stride=2)),
]


@pytest.mark.parametrize('case', FOLD_CASES, ids=str)
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_unfold_fold(case, dtype):
    shape, kw = case
    x = rand(*shape, dtype=dtype, seed=16)
    eout, tout = check(lambda x, m: fn(m).unfold(x, **kw), x, grad=True)
    cols = rand(*tout.shape, dtype=dtype, seed=17)
    check(lambda c, m: fn(m).fold(c, shape[-2:], **kw), cols, grad=True)


def test_unfold_fold_half_and_errors():
    x = rand(2, 3, 5, 5, seed=18)
    check(lambda x, m: fn(m).unfold(x, 2), x.half(), atol=1e-2, rtol=1e-2)
    check(lambda x, m: fn(m).unfold(x, 2), x.bfloat16(), atol=1e-2, rtol=1e-2)
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match='Expected 3D or 4D'):
            fn(m).unfold(m.zeros(1, 2, 3, 4, 5), 2)
        with pytest.raises(RuntimeError, match='calculated shape of the array of sliding blocks as'):
            fn(m).unfold(m.zeros(2, 3, 5, 5), 6)
        with pytest.raises(RuntimeError, match='padding should be non-negative'):
            fn(m).unfold(m.zeros(2, 3, 5, 5), 2, padding=-1)
        with pytest.raises(RuntimeError, match='kernel size should be greater than zero'):
            fn(m).unfold(m.zeros(2, 3, 5, 5), 0)
        with pytest.raises(RuntimeError, match="not implemented for 'Int'"):
            fn(m).unfold(m.zeros(2, 3, 5, 5, dtype=m.int32), 2)
        with pytest.raises(RuntimeError, match='to match the calculated number of sliding blocks 4 \\* 4 = 16'):
            fn(m).fold(m.zeros(1, 12, 15), (5, 5), 2)
        with pytest.raises(RuntimeError, match='divisible by the product of kernel_size'):
            fn(m).fold(m.zeros(1, 13, 16), (5, 5), 2)
        with pytest.raises(RuntimeError, match='Expected 2D or 3D'):
            fn(m).fold(m.zeros(1, 2, 12, 16), (5, 5), 2)


# ---- modules (need the nn.Module framework) -------------------------------------
def _modules_ready():
    try:
        ember.nn.Conv2d(1, 1, 1)
        return True
    except Exception:  # noqa: BLE001 - the framework is missing
        return False


needs_modules = pytest.mark.skipif(not _modules_ready(), reason='ember.nn.Module framework not merged yet')
needs_pad = pytest.mark.skipif(not hasattr(ember.nn.functional, 'pad'),
                               reason='F.pad (pool family) not merged yet: non-zero padding modes need it')

MODULE_CASES = [
    ('Conv1d', (3, 4, 3), dict(stride=2, padding=1), (2, 3, 9)),
    ('Conv2d', (3, 4, 3), {}, (2, 3, 6, 6)),
    ('Conv2d', (4, 6, (2, 3)), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2, bias=False), (2, 4, 7, 8)),
    ('Conv2d', (3, 4, 4), dict(padding='same'), (3, 6, 5)),
    ('Conv3d', (2, 3, 2), dict(padding=1), (1, 2, 3, 4, 3)),
    ('ConvTranspose1d', (3, 2, 3), dict(stride=2, output_padding=1), (2, 3, 4)),
    ('ConvTranspose2d', (4, 6, 3), dict(stride=2, padding=1, groups=2, dilation=2), (2, 4, 3, 4)),
    ('ConvTranspose3d', (2, 2, 2), dict(stride=(1, 2, 1)), (1, 2, 2, 3, 2)),
]


@needs_modules
@pytest.mark.parametrize('case', MODULE_CASES, ids=lambda c: f'{c[0]}-{c[2]}')
def test_conv_modules(case):
    from nn_helpers import check_module
    name, args, kw, xs = case
    check_module(lambda m: getattr(m.nn, name)(*args, **kw), rand(*xs, seed=19), atol=1e-4)
    assert repr(getattr(ember.nn, name)(*args, **kw)) == repr(getattr(torch.nn, name)(*args, **kw))


@needs_modules
def test_conv_transpose_output_size():
    from nn_helpers import check_module
    x = rand(2, 3, 4, 4, seed=20)
    check_module(lambda m: m.nn.ConvTranspose2d(3, 2, 3, stride=2), x,
                 forward=lambda mod, x: mod(x, output_size=[10, 9]), atol=1e-4)
    for m in (torch, ember):
        with pytest.raises(ValueError, match='requested an output size of'):
            m.nn.ConvTranspose2d(3, 2, 3, stride=2)(m.zeros(2, 3, 4, 4), output_size=[12, 12])


@needs_modules
@needs_pad
@pytest.mark.parametrize('mode', ['reflect', 'replicate', 'circular'])
def test_conv_padding_modes(mode):
    from nn_helpers import check_module
    check_module(lambda m: m.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode), rand(2, 2, 5, 6, seed=21),
                 atol=1e-4)
    assert repr(ember.nn.Conv2d(2, 3, 3, padding_mode=mode)) == repr(torch.nn.Conv2d(2, 3, 3, padding_mode=mode))


@needs_modules
def test_conv_module_errors():
    for m in (torch, ember):
        with pytest.raises(ValueError, match='in_channels must be divisible by groups'):
            m.nn.Conv2d(3, 4, 3, groups=2)
        with pytest.raises(ValueError, match='groups must be a positive integer'):
            m.nn.Conv2d(3, 4, 3, groups=0)
        with pytest.raises(ValueError, match='padding_mode must be one of'):
            m.nn.Conv2d(3, 4, 3, padding_mode='foo')
        with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
            m.nn.Conv2d(3, 4, 3, padding='same', stride=2)
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
            m.nn.ConvTranspose2d(3, 4, 3, padding_mode='reflect')


@needs_modules
def test_conv_init_moments():
    """kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the
    weight, and the bias the same bound."""
    conv = ember.nn.Conv2d(64, 128, 3)
    fan_in = 64 * 9
    bound = 1 / math.sqrt(fan_in)
    w = conv.weight.detach()
    assert float(w.abs().max()) <= bound
    assert abs(float(w.mean())) < 0.05 * bound
    assert abs(float(w.std()) - bound / math.sqrt(3)) < 0.02 * bound
    assert float(conv.bias.detach().abs().max()) <= bound
    convt = ember.nn.ConvTranspose2d(16, 32, 5)
    assert tuple(convt.weight.shape) == (16, 32, 5, 5)
    bt = 1 / math.sqrt(32 * 25)  # fan_in of a transposed weight is its dim 1 times the kernel
    assert float(convt.weight.detach().abs().max()) <= bt


@needs_modules
def test_fold_modules():
    from nn_helpers import check_module
    check_module(lambda m: m.nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2)), rand(2, 3, 6, 7, seed=22))
    check_module(lambda m: m.nn.Fold(5, 2), rand(2, 12, 16, seed=23))
    assert repr(ember.nn.Fold(3, 2)) == repr(torch.nn.Fold(3, 2))
    assert repr(ember.nn.Unfold(2, dilation=2, stride=(1, 2))) == repr(torch.nn.Unfold(2, dilation=2, stride=(1, 2)))


def test_conv_lenet_like_training_step():
    """A tiny CNN: conv -> relu -> conv, one SGD step by hand, same losses."""
    x = rand(4, 1, 12, 12, seed=24)
    w1, b1 = rand(3, 1, 5, 5, seed=25) * 0.2, rand(3, seed=26) * 0.1
    w2, b2 = rand(2, 3, 3, 3, seed=27) * 0.2, rand(2, seed=28) * 0.1

    def loss(x, w1, b1, w2, b2, m):
        h = fn(m).conv2d(x, w1, b1, padding=2).relu()
        return (fn(m).conv2d(h, w2, b2, stride=2) ** 2).mean()
    check(loss, x, w1, b1, w2, b2, grad=True, atol=1e-4)
