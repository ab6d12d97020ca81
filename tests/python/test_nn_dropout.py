"""Dropout vs PyTorch 1.13: zero fraction and scale (statistically), the
gradient mask * scale, reproducibility under manual_seed, eval identity
(the same object), dims checks and warnings, errors, modules and reprs."""
import warnings

import pytest
import torch

import ember
import ember.nn.functional as F


def _eq(a, b):
    """Same shape and values (ember has no ember.equal yet)."""
    return a.shape == b.shape and bool((a == b).all())


def _close(a, b):
    return a.shape == b.shape and bool(((a - b).abs() <= 1e-5 + 1e-4 * b.abs()).all())


def _fresh(*shape, dtype=ember.float32):
    return ember.rand(*shape, dtype=dtype) + 1  # no zeros: a zero output means dropped


@pytest.mark.parametrize('dtype', [ember.float32, ember.float64])
@pytest.mark.parametrize('p', [0.2, 0.5, 0.9])
def test_dropout_statistics_and_gradient(dtype, p):
    x = _fresh(300, 200, dtype=dtype).requires_grad_(True)
    y = F.dropout(x, p)
    dropped = (y == 0).double().mean().item()
    assert abs(dropped - p) < 6 * (p * (1 - p) / 60000) ** 0.5
    kept = y != 0
    assert _close(y[kept], x.detach()[kept] / (1 - p))
    y.backward(ember.ones_like(y))
    assert _close(x.grad, kept.to(dtype) / (1 - p))


def test_dropout_reproducible_and_noncontiguous():
    x = _fresh(40, 30).t()
    ember.manual_seed(3)
    a = F.dropout(x, 0.4)
    ember.manual_seed(3)
    b = F.dropout(x.contiguous(), 0.4)
    assert _eq(a, b)
    assert not _eq(a, F.dropout(x, 0.4))


def test_eval_and_edge_probabilities():
    x = _fresh(5, 6)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.alpha_dropout(x, 0.5) is x  # training=False by default, as torch
    assert _eq(F.dropout(x, 1.0), ember.zeros(5, 6))
    for fn in (F.dropout, F.alpha_dropout, F.feature_alpha_dropout, F.dropout1d, F.dropout2d, F.dropout3d):
        for p in (1.5, -0.1):
            with pytest.raises(ValueError, match='dropout probability has to be between 0 and 1, but got'):
                fn(x, p)
    with pytest.raises(ValueError, match='but got 1.5'):
        ember.nn.Dropout(1.5)


def test_inplace():
    x = _fresh(20, 20)
    y = x.clone()
    ember.manual_seed(5)
    r = F.dropout(y, 0.3, inplace=True)
    ember.manual_seed(5)
    assert r is y and _eq(y, F.dropout(x, 0.3))
    t = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        F.dropout(ember.ones(3, requires_grad=True), 0.3, inplace=True)
    assert t is not None


def test_double_backward():
    x = ember.randn(6, 5, dtype=ember.float64, requires_grad=True)

    def f(t):
        ember.manual_seed(8)
        return F.dropout(t, 0.3) ** 2
    assert ember.autograd.gradcheck(f, (x,))
    assert ember.autograd.gradgradcheck(f, (x,))


def test_feature_dropout_channels():
    x = _fresh(16, 32, 5, 4, dtype=ember.float64)
    y = F.dropout2d(x, 0.5)
    zero = (y == 0)
    per_channel = zero.flatten(2).all(2) | (~zero).flatten(2).all(2)
    assert bool(per_channel.all())
    frac = zero.flatten(2).all(2).double().mean().item()
    assert abs(frac - 0.5) < 0.1
    for fn, shape in ((F.dropout1d, (4, 8, 5)), (F.dropout1d, (8, 5)), (F.dropout3d, (2, 4, 3, 3, 3)),
                      (F.dropout3d, (4, 3, 3, 3))):
        y = fn(_fresh(*shape), 0.5)
        assert list(y.shape) == list(shape)
        ch = (y == 0).flatten(-1 if fn is F.dropout1d else -3)
        assert bool((ch.all(-1) | (~ch).all(-1)).all())


def test_dims_checks_and_warnings():
    for fn, shape in (('dropout2d', (3, 4)), ('dropout2d', (2, 3, 4)), ('dropout3d', (2, 3)), ('dropout2d', (2, 3, 4, 5)),
                      ('dropout3d', (2, 3, 4, 5, 6))):
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter('always')
            getattr(torch.nn.functional, fn)(torch.ones(*shape), 0.5)
        with warnings.catch_warnings(record=True) as ew:
            warnings.simplefilter('always')
            getattr(F, fn)(ember.ones(*shape), 0.5)
        assert len(ew) == len(tw), (fn, shape)
    for shape in ((3,), (2, 3, 4, 5)):
        with pytest.raises(RuntimeError, match='dropout1d: Expected 2D or 3D input'):
            F.dropout1d(ember.ones(*shape))
    with pytest.raises(RuntimeError):
        ember.feature_dropout(ember.ones(3), 0.5, True)


def test_alpha_dropout_keeps_moments():
    x = ember.randn(400000, dtype=ember.float64)
    for fn in (F.alpha_dropout, F.feature_alpha_dropout):
        y = fn(x.reshape(2000, 200), 0.3, training=True)
        assert abs(y.mean().item()) < 0.02 and abs(y.std().item() - 1) < 0.03
    xg = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)

    def f(t):
        ember.manual_seed(2)
        return F.alpha_dropout(t, 0.4, True)
    assert ember.autograd.gradcheck(f, (xg,))


def test_toplevel_names():
    x = _fresh(10, 10)
    ember.manual_seed(1)
    a = ember.dropout(x, 0.5, True)
    ember.manual_seed(1)
    out, mask = ember.native_dropout(x, 0.5, True)
    assert _eq(a, out) and mask.dtype == ember.bool
    assert _eq(out, x * mask / 0.5)
    assert ember.dropout(x, 0.5, False) is x
    for name in ('feature_dropout', 'alpha_dropout', 'feature_alpha_dropout'):
        assert getattr(ember, name)(x, 0.5, False) is x


MODULES = [lambda m: m.nn.Dropout(), lambda m: m.nn.Dropout(0.2, True), lambda m: m.nn.Dropout1d(0.3),
           lambda m: m.nn.Dropout2d(), lambda m: m.nn.Dropout3d(0.1), lambda m: m.nn.AlphaDropout(0.2),
           lambda m: m.nn.FeatureAlphaDropout(0.4)]


@pytest.mark.parametrize('k', range(len(MODULES)))
def test_modules(k):
    from nn_helpers import check_module
    make = MODULES[k]
    assert repr(make(ember)) == repr(make(torch))
    shape = (2, 3, 4) if isinstance(make(torch), torch.nn.Dropout1d) else (2, 3, 4, 5)
    check_module(make, torch.rand(*shape, dtype=torch.float64), train=False)  # eval: the identity, as torch
    mod = make(ember)
    xe = _fresh(*shape)
    y = mod(xe.clone() if mod.inplace else xe)
    assert list(y.shape) == list(shape) and not _eq(y, xe)
