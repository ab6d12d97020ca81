"""frexp's gradient, ldexp's out= and in-place forms, cov's weight checks and the type errors of
__rpow__ and polar, against PyTorch 1.13 (op_db's samples and error inputs for them)."""
import math

import numpy as np
import pytest
import torch

import ember

inf, nan = math.inf, math.nan


def raises_like(efn, tfn):
    """Both raise, the same exception type (or both succeed)."""
    try:
        tfn()
        want = None
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        want = type(e)
    if want is None:
        efn()
        return
    with pytest.raises(want):
        efn()


# ---- frexp -----------------------------------------------------------------------------------------
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_frexp_values_and_gradient(dtype):
    v = [3.0, -0.1, 0.0, -0.0, 1e-40, 1e-45, inf, -inf, nan, 1e30, -7.5e-20, 0.5, 1.0]
    if dtype == 'float64':
        v += [5e-324, 1e300, 2.2250738585072014e-308]
    g = list(np.linspace(-2, 2, len(v)))
    tx = torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=True)
    tm, te = torch.frexp(tx)
    tm.backward(torch.tensor(g, dtype=tx.dtype))
    ex = ember.tensor(v, dtype=getattr(ember, dtype), requires_grad=True)
    em, ee = ember.frexp(ex)
    assert em.requires_grad and not ee.requires_grad and ee.dtype == ember.int32
    em.backward(ember.tensor(g, dtype=ex.dtype))
    np.testing.assert_array_equal(em.detach().numpy(), tm.detach().numpy())
    np.testing.assert_array_equal(ee.numpy(), te.numpy())
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


def test_frexp_gradcheck_and_out():
    x = ember.tensor([3.0, 5.5, -0.3, 1e-3], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v: ember.frexp(v)[0], (x,))
    m, e = ember.empty(0), ember.empty(0, dtype=ember.int32)
    r = ember.frexp(ember.tensor([3.0, 8.0]), out=(m, e))
    assert r.mantissa is m and r.exponent is e
    assert m.tolist() == [0.75, 0.5] and e.tolist() == [2, 4]


# ---- ldexp -----------------------------------------------------------------------------------------
def _ldexp_cases(lib):
    a = lib.tensor([0.5, -1.5, 3.0], requires_grad=True)
    f, i = lib.tensor([1.0, 2.0, -3.0]), lib.tensor([1, 2, -3])
    return [
        lambda: lib.ldexp(a, f, out=lib.empty(3)),  # an input requires grad: refused
        lambda: lib.ldexp(f, a, out=lib.empty(3)),
        lambda: lib.ldexp(a.detach(), f, out=lib.empty(3)),
        lambda: lib.randn(3).ldexp_(a),
        lambda: a.detach().clone().requires_grad_().clone().ldexp_(f),
        lambda: lib.randn(3).ldexp_(i),  # int exponent into float: fine
        lambda: lib.tensor([1, 2, 3]).ldexp_(i),  # a float result into an int tensor: refused
        lambda: lib.randn(3, 1).ldexp_(lib.randn(3)),  # broadcasting beyond self's shape: refused
    ]


@pytest.mark.parametrize('k', range(8))
def test_ldexp_out_and_inplace_errors(k):
    raises_like(_ldexp_cases(ember)[k], _ldexp_cases(torch)[k])


def test_ldexp_inplace_values_and_no_grad():
    x, n = np.array([0.5, -1.5, 3.0], dtype=np.float32), np.array([1.0, 2.0, -3.0], dtype=np.float32)
    want = torch.from_numpy(x.copy()).ldexp_(torch.from_numpy(n)).numpy()
    e = ember.tensor(x)
    assert e.ldexp_(ember.tensor(n)) is e
    np.testing.assert_array_equal(e.numpy(), want)
    with ember.no_grad():  # outside grad mode inputs that require grad are fine, as in torch
        e = ember.tensor(x)
        e.ldexp_(ember.tensor(n, requires_grad=True))
    np.testing.assert_array_equal(e.numpy(), want)


# ---- cov ---------------------------------------------------------------------------------------------
def _cov_cases(lib):
    a = lib.rand(5)
    return [
        dict(input=lib.rand(5, 5, 5)),
        dict(input=a, fweights=lib.ones(5, 5, dtype=lib.int64)),
        dict(input=a, aweights=lib.rand(5, 5)),
        dict(input=a, fweights=lib.rand(5)),
        dict(input=a, aweights=lib.tensor([1, 1, 1, 1, 1])),
        dict(input=a, fweights=lib.tensor([1])),
        dict(input=a, aweights=lib.rand(1)),
        dict(input=a, fweights=lib.tensor([-1, -2, -3, -4, -5])),
        dict(input=a, aweights=lib.tensor([-1., -2., -3., -4., -5.])),
        dict(input=a, fweights=lib.tensor([True] * 5)),
        dict(input=lib.rand(2, 0), fweights=lib.zeros(0, dtype=lib.int64)),
        dict(input=a, fweights=lib.tensor([1, 2, 0, 1, 3]), aweights=lib.rand(5)),
        dict(input=a, aweights=lib.zeros(5)),
    ]


@pytest.mark.parametrize('k', range(13))
def test_cov_weight_checks(k):
    raises_like(lambda: ember.cov(**_cov_cases(ember)[k]), lambda: torch.cov(**_cov_cases(torch)[k]))


def test_cov_weighted_values_and_gradcheck():
    x = np.random.default_rng(0).standard_normal((3, 6))
    fw, aw = np.array([1, 2, 0, 1, 3, 1]), np.array([0.5, 1.0, 2.0, 0.1, 0.7, 1.3])
    want = torch.cov(torch.tensor(x), fweights=torch.tensor(fw), aweights=torch.tensor(aw)).numpy()
    got = ember.cov(ember.tensor(x), fweights=ember.tensor(fw), aweights=ember.tensor(aw)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)
    ex = ember.tensor(x, requires_grad=True)
    ew = ember.tensor(aw, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, w: ember.cov(a, aweights=w), (ex, ew))


# ---- __rpow__ and polar: torch's type errors ------------------------------------------------------------
def test_rpow_unbound_with_a_number_raises():
    t, e = torch.tensor([1, 2, 3]), ember.tensor([1, 2, 3])
    raises_like(lambda: ember.Tensor.__rpow__(2, e), lambda: torch.Tensor.__rpow__(2, t))
    with pytest.raises(Exception):
        ember.Tensor.__rpow__(2, 3)
    assert (2 ** e).tolist() == (2 ** t).tolist()
    assert e.__rpow__(2).tolist() == t.__rpow__(2).tolist()


def test_polar_needs_tensors():
    for args in ((2, ember.tensor([1.0])), (ember.tensor([1.0]), 2), (2, 3)):
        with pytest.raises(TypeError, match='polar'):
            ember.polar(*args)
    with pytest.raises(TypeError):
        torch.polar(2, torch.tensor([1.0]))
    got = ember.polar(ember.tensor([2.0]), ember.tensor([0.5]))
    want = torch.polar(torch.tensor([2.0]), torch.tensor([0.5]))
    assert got.real.item() == pytest.approx(want.real.item()) and got.imag.item() == pytest.approx(want.imag.item())
