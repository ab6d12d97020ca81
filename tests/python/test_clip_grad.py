"""ember.nn.utils.clip_grad_norm_ / clip_grad_value_ vs torch 1.13: the same
gradients clipped in both libraries, the total norms and clipped gradients
compared, and the non-finite-norm error."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, to_ember

SHAPES = [(4, 3), (5,), (2, 3, 2), ()]


def make_params(dtype=torch.float32, seed=0, scale=1.0, missing=(), special=None):
    """Parameters of SHAPES with random gradients, in both libraries; indices
    in `missing` get no gradient, `special` is put in the first gradient."""
    g = np.random.default_rng(seed)
    tparams, eparams = [], []
    for i, shape in enumerate(SHAPES):
        tp = torch.tensor(g.uniform(-1, 1, shape), dtype=dtype).requires_grad_()
        ep = to_ember(tp).requires_grad_()
        if i not in missing:
            grad = torch.tensor(g.normal(0, scale, shape), dtype=dtype)
            if special is not None and i == 0:
                grad[0, 0] = special
            tp.grad, ep.grad = grad, to_ember(grad)
        tparams.append(tp)
        eparams.append(ep)
    return tparams, eparams


def assert_grads_same(eparams, tparams, **tol):
    for ep, tp in zip(eparams, tparams):
        if tp.grad is None:
            assert ep.grad is None
        else:
            assert_same(ep.grad, tp.grad, **tol)


@pytest.mark.parametrize('norm_type', [2.0, 2, 1, 3.5, 0.5, 'inf', math.inf, -math.inf])
@pytest.mark.parametrize('max_norm', [0.1, 1, 1e6])
@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype):
    tparams, eparams = make_params(dtype, missing=(2,))
    tnorm = torch.nn.utils.clip_grad_norm_(tparams, max_norm, norm_type)
    enorm = ember.nn.utils.clip_grad_norm_(eparams, max_norm, norm_type)
    tol = dict(atol=1e-6, rtol=1e-5) if dtype == torch.float32 else dict(atol=1e-12, rtol=1e-12)
    assert_same(enorm, tnorm, **tol)
    assert_grads_same(eparams, tparams, **tol)


def test_argument_forms():
    tparams, eparams = make_params(scale=5.0)
    # one tensor, a generator, the deprecated name
    assert_same(ember.nn.utils.clip_grad_norm_(eparams[0], 1.0), torch.nn.utils.clip_grad_norm_(tparams[0], 1.0))
    assert_same(ember.nn.utils.clip_grad_norm_((p for p in eparams), 2.0, norm_type=1.0),
                torch.nn.utils.clip_grad_norm_((p for p in tparams), 2.0, norm_type=1.0))
    with pytest.warns(UserWarning, match='clip_grad_norm is now deprecated'):
        enorm = ember.nn.utils.clip_grad_norm(eparams, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        tnorm = torch.nn.utils.clip_grad_norm(tparams, 0.5)
    assert_same(enorm, tnorm)
    assert_grads_same(eparams, tparams)
    # no gradients at all, or no parameters
    tparams, eparams = make_params(missing=range(len(SHAPES)))
    for tp, ep in ((tparams, eparams), ([], [])):
        assert_same(ember.nn.utils.clip_grad_norm_(ep, 1.0), torch.nn.utils.clip_grad_norm_(tp, 1.0))


@pytest.mark.parametrize('special', [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize('norm_type', [2.0, 'inf'])
def test_non_finite_norm(special, norm_type):
    tparams, eparams = make_params(special=special)
    with pytest.raises(RuntimeError) as texc:
        torch.nn.utils.clip_grad_norm_(tparams, 1.0, norm_type, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as eexc:
        ember.nn.utils.clip_grad_norm_(eparams, 1.0, norm_type, error_if_nonfinite=True)
    assert str(eexc.value) == str(texc.value)
    assert_grads_same(eparams, tparams)   # untouched
    tnorm = torch.nn.utils.clip_grad_norm_(tparams, 1.0, norm_type)
    enorm = ember.nn.utils.clip_grad_norm_(eparams, 1.0, norm_type)
    assert_same(enorm, tnorm)
    assert_grads_same(eparams, tparams)


@pytest.mark.parametrize('clip_value', [0.5, 1, 10.0])
def test_clip_grad_value_matches_torch(clip_value):
    tparams, eparams = make_params(missing=(1,), scale=2.0)
    assert torch.nn.utils.clip_grad_value_(tparams, clip_value) is None
    assert ember.nn.utils.clip_grad_value_(eparams, clip_value) is None
    assert_grads_same(eparams, tparams)
    torch.nn.utils.clip_grad_value_(tparams[0], 0.1)
    ember.nn.utils.clip_grad_value_(eparams[0], 0.1)
    assert_grads_same(eparams, tparams)


def test_scales_in_place_and_keeps_grad_objects():
    _, eparams = make_params(scale=10.0)
    grads = [p.grad for p in eparams]
    ember.nn.utils.clip_grad_norm_(eparams, 1.0)
    assert all(p.grad is g for p, g in zip(eparams, grads))
    total = ember.norm(ember.stack([ember.norm(g) for g in grads]))
    assert abs(total.item() - 1.0) < 1e-5
