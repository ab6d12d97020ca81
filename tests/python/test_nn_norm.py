"""Normalization functionals and modules vs PyTorch 1.13: values, running
statistics, gradients (float32 against torch, float64 gradcheck and
gradgradcheck), layouts, numerical stability, errors and reprs."""
import collections

import pytest
import torch

import ember
from helpers import assert_same, check, check_raises, rand, to_ember
from nn_helpers import check_module

BN_SHAPES = [(6, 3), (4, 3, 5), (3, 4, 5, 6), (2, 3, 2, 3, 4), (2, 3, 700)]


def fn_of(m):
    return (torch.nn.functional if m is torch else ember.nn.functional)


@pytest.mark.parametrize('shape', BN_SHAPES)
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('noncontig', [False, True])
def test_batch_norm_training_steps(shape, dtype, noncontig):
    c = shape[1]
    stats = {m: (rand(c, dtype=dtype, seed=1), rand(c, dtype=dtype, seed=2, low=0.5, high=2)) for m in (torch, ember)}
    stats[ember] = tuple(to_ember(s) for s in stats[ember])
    for step in range(3):
        x = rand(*shape, dtype=dtype, seed=10 + step, noncontig=noncontig)
        w, b = rand(c, dtype=dtype, seed=3), rand(c, dtype=dtype, seed=4)
        check(lambda x, w, b, m: fn_of(m).batch_norm(x, *stats[m], w, b, True, 0.3, 1e-5), x, w, b, grad=True)
        assert_same(stats[ember][0], stats[torch][0])
        assert_same(stats[ember][1], stats[torch][1])
    # eval mode uses (and keeps) them
    x = rand(*shape, dtype=dtype, seed=20, noncontig=noncontig)
    check(lambda x, m: fn_of(m).batch_norm(x, *stats[m], training=False), x, grad=True)


def test_batch_norm_layouts_and_no_stats():
    x = rand(4, 3, 5, 6, seed=5).to(memory_format=torch.channels_last)
    check(lambda x, m: fn_of(m).batch_norm(x, None, None, training=True), x, grad=True)
    check(lambda x, m: m.batch_norm(x, None, None, None, None, True, 0.1, 1e-3, False), x, grad=True)
    xp = rand(3, 8, 4, seed=6)[:, ::2]  # a channel step
    check(lambda x, m: fn_of(m).batch_norm(x, None, None, training=True), xp, grad=True)
    check(lambda x, m: m.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)[0], x)


def test_norm_large_offset():
    x = rand(16, 4, 50, seed=7, low=-1, high=1) + 1e4
    check(lambda x, m: fn_of(m).batch_norm(x, None, None, training=True), x, atol=5e-3)
    check(lambda x, m: fn_of(m).layer_norm(x, (50,)), x, atol=5e-3)
    check(lambda x, m: fn_of(m).group_norm(x, 2), x, atol=5e-3)
    y = ember.nn.functional.batch_norm(to_ember(x), None, None, training=True)
    assert abs(float(y.std(unbiased=False)) - 1) < 1e-3


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('shape,ns', [((5, 7), (7,)), ((2, 3, 4), (3, 4)), ((9,), (9,)), ((1024, 256), (256,))])
def test_layer_norm(dtype, shape, ns):
    x = rand(*shape, dtype=dtype, seed=8, noncontig=True)
    w, b = rand(*ns, dtype=dtype, seed=9), rand(*ns, dtype=dtype, seed=10)
    check(lambda x, w, b, m: fn_of(m).layer_norm(x, ns, w, b), x, w, b, grad=True, atol=1e-4)
    check(lambda x, m: m.layer_norm(x, list(ns), eps=1e-3), x, grad=True, atol=1e-4)
    check(lambda x, m: m.native_layer_norm(x, ns, None, None, 1e-5), x, atol=1e-4)


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('shape,g', [((2, 6, 5), 3), ((3, 4), 2), ((2, 4, 3, 3), 4), ((2, 4, 600), 1)])
def test_group_norm(dtype, shape, g):
    x = rand(*shape, dtype=dtype, seed=11, noncontig=True)
    w, b = rand(shape[1], dtype=dtype, seed=12), rand(shape[1], dtype=dtype, seed=13)
    check(lambda x, w, b, m: fn_of(m).group_norm(x, g, w, b), x, w, b, grad=True, atol=1e-4)
    check(lambda x, m: m.group_norm(x, g), x, grad=True, atol=1e-4)


@pytest.mark.parametrize('use_input_stats', [True, False])
def test_instance_norm(use_input_stats):
    stats = {torch: (rand(3, seed=1), rand(3, seed=2, low=0.5, high=2))}
    stats[ember] = tuple(to_ember(s) for s in stats[torch])
    x, w, b = rand(2, 3, 5, 4, seed=14), rand(3, seed=15), rand(3, seed=16)
    check(lambda x, w, b, m: fn_of(m).instance_norm(x, *stats[m], w, b, use_input_stats, 0.2), x, w, b, grad=True)
    assert_same(stats[ember][0], stats[torch][0])
    assert_same(stats[ember][1], stats[torch][1])
    check(lambda x, m: fn_of(m).instance_norm(x), rand(2, 3, 6, seed=17, noncontig=True), grad=True)


@pytest.mark.parametrize('shape,size', [((2, 5, 4), 3), ((2, 6, 3, 3), 2), ((1, 4, 2, 2, 2), 5), ((2, 3, 0), 2)])
def test_local_response_norm(shape, size):
    check(lambda x, m: fn_of(m).local_response_norm(x, size, 1e-2, 0.75, 2.0), rand(*shape, seed=18), grad=True)


def test_gradcheck_float64():
    gc, ggc = ember.autograd.gradcheck, ember.autograd.gradgradcheck
    F = ember.nn.functional

    def leaf(*s, seed=0, low=-2, high=2):
        return to_ember(rand(*s, dtype='float64', seed=seed, low=low, high=high)).requires_grad_()
    x, w, b = leaf(4, 3, 2), leaf(3, seed=1, low=0.5), leaf(3, seed=2)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    bn = lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True)
    bn_eval = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=False)
    ln = lambda x, w, b: F.layer_norm(x, (3, 2), w.view(3, 1).expand(3, 2), b.view(3, 1).expand(3, 2))
    gn = lambda x, w, b: F.group_norm(x, 3, w, b)
    inorm = lambda x, w, b: F.instance_norm(x, weight=w, bias=b)
    lrn = lambda x, w, b: F.local_response_norm(x, 2, 0.5, 0.75, 1.5)
    for f in (bn, bn_eval, ln, gn, inorm, lrn):
        assert gc(f, (x, w, b))
        assert ggc(f, (x, w, b))


def test_errors():
    F = fn_of
    check_raises(lambda x, m: F(m).batch_norm(x, None, None, training=True), rand(1, 3))
    check_raises(lambda x, m: F(m).batch_norm(x, torch.zeros(4) if m is torch else ember.zeros(4), None, training=True),
                 rand(2, 3))
    check_raises(lambda x, m: F(m).batch_norm(x, None, None, training=False), rand(2, 3))
    check_raises(lambda x, m: m.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False), rand(2, 3).half())
    check_raises(lambda x, m: m.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False), rand(3))
    check_raises(lambda x, m: F(m).layer_norm(x, (4,)), rand(2, 3))
    check_raises(lambda x, w, m: F(m).layer_norm(x, (3,), w), rand(2, 3), rand(4))
    check_raises(lambda x, w, m: F(m).layer_norm(x, (3,), w), rand(2, 3), rand(3, dtype='float64'))
    check_raises(lambda x, m: F(m).group_norm(x, 4), rand(2, 6, 4))
    check_raises(lambda x, m: F(m).group_norm(x, 0), rand(2, 6, 4))
    check_raises(lambda x, m: F(m).instance_norm(x), rand(2, 3))
    check_raises(lambda x, m: F(m).local_response_norm(x, 2), rand(2, 3))
    with pytest.raises(ValueError, match=r'Expected more than 1 value per channel when training, got input size'):
        ember.nn.functional.batch_norm(ember.ones(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError) as e:
        ember.nn.functional.layer_norm(ember.ones(2, 3), (4,))
    assert str(e.value) == ('Given normalized_shape=[4], expected input with shape [*, 4], but got input of '
                            'size[2, 3]')


# ---- modules ------------------------------------------------------------------------
@pytest.mark.parametrize('make,shape', [
    (lambda m: m.nn.BatchNorm1d(3), (6, 3)), (lambda m: m.nn.BatchNorm1d(3, affine=False), (4, 3, 5)),
    (lambda m: m.nn.BatchNorm2d(4, momentum=None), (3, 4, 5, 5)),
    (lambda m: m.nn.BatchNorm2d(4, track_running_stats=False), (3, 4, 2, 2)),
    (lambda m: m.nn.BatchNorm3d(2, eps=1e-3), (2, 2, 3, 2, 2)),
    (lambda m: m.nn.LayerNorm(5), (3, 5)), (lambda m: m.nn.LayerNorm([2, 5], elementwise_affine=False), (3, 2, 5)),
    (lambda m: m.nn.GroupNorm(2, 4), (3, 4, 5)), (lambda m: m.nn.GroupNorm(1, 4, affine=False), (2, 4, 2, 2)),
    (lambda m: m.nn.InstanceNorm1d(3), (2, 3, 5)), (lambda m: m.nn.InstanceNorm1d(3, affine=True), (3, 5)),
    (lambda m: m.nn.InstanceNorm2d(3, track_running_stats=True), (2, 3, 4, 4)),
    (lambda m: m.nn.InstanceNorm3d(2, affine=True), (2, 2, 3, 2, 2)),
    (lambda m: m.nn.LocalResponseNorm(3), (2, 5, 3, 3)),
])
def test_modules(make, shape):
    emod, tmod = check_module(make, rand(*shape, seed=21))
    for seed in (22, 23):  # running statistics after more steps (momentum None: cumulative average)
        check_module(lambda m: emod if m is ember else tmod, rand(*shape, seed=seed))
    assert repr(emod) == repr(tmod)
    check_module(lambda m: emod if m is ember else tmod, rand(*shape, seed=24), train=False)


def test_module_errors_and_state_dict():
    for make, bad in [(lambda m: m.nn.BatchNorm1d(3), (3,)), (lambda m: m.nn.BatchNorm2d(3), (2, 3, 4)),
                      (lambda m: m.nn.BatchNorm3d(3), (2, 3, 4, 4)), (lambda m: m.nn.InstanceNorm2d(3), (3, 4))]:
        check_raises(lambda x, m: make(m)(x), rand(*bad))
    with pytest.raises(ValueError, match='num_channels must be divisible by num_groups'):
        ember.nn.GroupNorm(3, 4)
    # a checkpoint from before num_batches_tracked (version 1) loads with it at 0
    bn = ember.nn.BatchNorm2d(3)
    bn.num_batches_tracked.fill_(5)
    sd = collections.OrderedDict((k, v) for k, v in bn.state_dict().items() if k != 'num_batches_tracked')
    sd._metadata = {'': {'version': 1}}
    fresh = ember.nn.BatchNorm2d(3)
    fresh.load_state_dict(sd)
    assert int(fresh.num_batches_tracked) == 0
    # init: ones and zeros, zero/one buffers
    assert bool((bn.weight == 1).all()) and bool((bn.bias == 0).all())
    assert bool((fresh.running_var == 1).all()) and fresh.num_batches_tracked.dtype == ember.int64


def test_backward_ops_direct():
    x, dy = rand(4, 3, 5, dtype='float64', seed=30), rand(4, 3, 5, dtype='float64', seed=31)
    w = rand(3, dtype='float64', seed=32)
    tx = x.clone().requires_grad_()
    tw = w.clone().requires_grad_()
    y = torch.batch_norm(tx, tw, None, None, None, True, 0.1, 1e-5, False)
    want = torch.autograd.grad(y, (tx, tw), dy)
    ex, ew = to_ember(x), to_ember(w)
    _, mean, invstd = ember.native_batch_norm(ex, ew, None, None, None, True, 0.1, 1e-5)
    gx, gw, gb = ember.batch_norm_backward(to_ember(dy), ex, ew, mean, invstd, True, [1, 1, 0])
    assert gb is None
    assert_same(gx, want[0])
    assert_same(gw, want[1])
    _, mean, rstd = ember.native_layer_norm(ex, [5], None, None, 1e-5)
    gx, gw, gb = ember.layer_norm_backward(to_ember(dy), ex, [5], mean, rstd, None, [1, 0, 0])
    assert_same(gx, torch.autograd.grad(torch.layer_norm(tx, [5]), tx, dy)[0])
    _, mean, rstd = ember.native_group_norm(ex, None, None, 4, 3, 5, 3, 1e-5)
    gx, gw, gb = ember.group_norm_backward(to_ember(dy), ex, mean, rstd, None, 3, [1, 0, 0])
    assert_same(gx, torch.autograd.grad(torch.group_norm(tx, 3), tx, dy)[0])
