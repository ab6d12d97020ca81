"""ember.autograd.functional, anomaly mode, saved-tensor hooks and Variable
against torch.autograd 1.13: values of Jacobians, Hessians and vector
products (float64), create_graph, strict mode and error types."""
import warnings

import numpy as np
import pytest
import torch

import ember
from helpers import assert_same, to_ember


def inputs(*shapes, seed=0):
    g = np.random.default_rng(seed)
    ts = tuple(torch.tensor(g.uniform(0.5, 1.5, s), dtype=torch.float64) for s in shapes)
    return ts, tuple(to_ember(t) for t in ts)


# each: (name, function taking the module and the inputs, input shapes)
FUNCS = [
    ('exp', lambda m, x: x.exp() * x, [(3,)]),
    ('matmul', lambda m, a, b: a @ b, [(2, 3), (3, 2)]),
    ('tuple_out', lambda m, x, y: (x * y, (x.sin() + y).sum()), [(4,), (4,)]),
    ('broadcast', lambda m, x, y: x.unsqueeze(1) * y.tanh(), [(2,), (3,)]),
    ('scalar', lambda m, x: (x ** 3).sum(), [(2, 2)]),
]
SCALAR_FUNCS = [
    ('cubic', lambda m, x: (x ** 3).sum(), [(3,)]),
    ('two_inputs', lambda m, x, y: (x.exp() * y.sum() + (x * x).sum() * y.prod()).sum(), [(2,), (3,)]),
    ('matrix', lambda m, a: (a @ a).sin().sum(), [(2, 2)]),
]


def call_both(api, fn, shapes, packed, **kw):
    """api(f, inputs, **kw) for torch and ember: inputs a tuple when packed."""
    ts, es = inputs(*shapes)
    t_in = ts if packed or len(ts) > 1 else ts[0]
    e_in = es if packed or len(es) > 1 else es[0]
    r_t = getattr(torch.autograd.functional, api)(lambda *a: fn(torch, *a), t_in, **kw)
    r_e = getattr(ember.autograd.functional, api)(lambda *a: fn(ember, *a), e_in, **kw)
    return r_t, r_e


def same_nested(e, t):
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            same_nested(a, b)
    else:
        assert_same(e, t, atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize('packed', [False, True])
@pytest.mark.parametrize('name,fn,shapes', FUNCS, ids=[f[0] for f in FUNCS])
def test_jacobian(name, fn, shapes, packed):
    same_nested(*reversed(call_both('jacobian', fn, shapes, packed)))


@pytest.mark.parametrize('name,fn,shapes', FUNCS, ids=[f[0] for f in FUNCS])
def test_jacobian_vectorize_and_create_graph(name, fn, shapes):
    r_t, r_e = call_both('jacobian', fn, shapes, True, create_graph=True, vectorize=True)
    same_nested(r_e, r_t)


@pytest.mark.parametrize('packed', [False, True])
@pytest.mark.parametrize('name,fn,shapes', SCALAR_FUNCS, ids=[f[0] for f in SCALAR_FUNCS])
def test_hessian(name, fn, shapes, packed):
    same_nested(*reversed(call_both('hessian', fn, shapes, packed)))


def vectors(shapes, seed=1):
    return inputs(*shapes, seed=seed)


@pytest.mark.parametrize('api', ['vjp', 'jvp'])
@pytest.mark.parametrize('name,fn,shapes', FUNCS, ids=[f[0] for f in FUNCS])
def test_vjp_jvp(api, name, fn, shapes):
    ts, es = inputs(*shapes)
    with torch.no_grad():
        outs = fn(torch, *ts)
    outs = outs if isinstance(outs, tuple) else (outs,)
    ref = outs if api == 'vjp' else ts
    vt, ve = vectors([tuple(o.shape) for o in ref])
    r_t = getattr(torch.autograd.functional, api)(lambda *a: fn(torch, *a), ts, vt)
    r_e = getattr(ember.autograd.functional, api)(lambda *a: fn(ember, *a), es, ve)
    same_nested(r_e, r_t)


@pytest.mark.parametrize('api', ['vhp', 'hvp'])
@pytest.mark.parametrize('name,fn,shapes', SCALAR_FUNCS, ids=[f[0] for f in SCALAR_FUNCS])
def test_vhp_hvp(api, name, fn, shapes):
    ts, es = inputs(*shapes)
    vt, ve = vectors(shapes)
    r_t = getattr(torch.autograd.functional, api)(lambda *a: fn(torch, *a), ts, vt)
    r_e = getattr(ember.autograd.functional, api)(lambda *a: fn(ember, *a), es, ve)
    same_nested(r_e, r_t)


def test_create_graph_differentiates_through():
    for m in (torch, ember):
        x = m.tensor([0.5, 1.0, 2.0], dtype=m.float64, requires_grad=True)
        _, g = m.autograd.functional.vjp(lambda x: (x ** 3).sum(), x, create_graph=True)
        g.sum().backward()
        if m is torch:
            expect = x.grad.tolist()
    assert x.grad.tolist() == pytest.approx(expect)
    # without create_graph the results are detached
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    out, g = ember.autograd.functional.vjp(lambda x: (x ** 2).sum(), x)
    assert not out.requires_grad and not g.requires_grad


def test_v_none_single_element():
    for m in (torch, ember):
        x = m.tensor([2.0], dtype=m.float64)
        _, g = m.autograd.functional.vjp(lambda x: x ** 2, x)
        assert g.tolist() == [4.0]


ERRORS = [
    ('vjp', lambda m, x: x * 2, lambda m: (m.ones(3, dtype=m.float64),), dict(), RuntimeError,
     'The vector v can only be None if the user-provided function returns a single Tensor with a single element'),
    ('vjp', lambda m, x: x * 2, lambda m: (m.ones(3, dtype=m.float64), m.ones(2, dtype=m.float64)), dict(),
     RuntimeError, 'v has invalid size'),
    ('jvp', lambda m, x: x * 2, lambda m: (m.ones(3, dtype=m.float64),), dict(), RuntimeError,
     'The vector v can only be None if the input to the user-provided function is a single Tensor'),
    ('jacobian', lambda m, x: 3, lambda m: (m.ones(3, dtype=m.float64),), dict(), TypeError,
     'The outputs of the user-provided function given to jacobian must be either a Tensor or a tuple of Tensors'),
    ('jacobian', lambda m, x: x * 2, lambda m: ([1.0],), dict(), TypeError,
     'The inputs given to jacobian must be either a Tensor or a tuple of Tensors'),
    ('jacobian', lambda m, x: m.ones(2, dtype=m.float64), lambda m: (m.ones(3, dtype=m.float64),),
     dict(strict=True), RuntimeError, 'Output 0 of the user-provided function does not require gradients'),
    ('jacobian', lambda m, x: x * 2, lambda m: (m.ones(3, dtype=m.float64),), dict(strict=True, vectorize=True),
     RuntimeError, 'not supported together'),
    ('hessian', lambda m, x: x * 2, lambda m: (m.ones(3, dtype=m.float64),), dict(), RuntimeError,
     'The Tensor returned by the function given to hessian should contain a single element'),
    ('hessian', lambda m, x: (x * 2).sum(), lambda m: (m.ones(3, dtype=m.float64),), dict(strict=True),
     RuntimeError, 'jacobian of the user-provided function with respect to input 0 is independent'),
    ('vhp', lambda m, x: (x, x), lambda m: (m.ones(1, dtype=m.float64),), dict(), RuntimeError,
     'The function given to vhp should return a single Tensor'),
    ('vjp', lambda m, x: x.detach() * 0 + x.sum().detach(), lambda m: (m.ones(1, dtype=m.float64),),
     dict(strict=True), RuntimeError, 'does not require gradients'),
]


@pytest.mark.parametrize('api,fn,args,kw,exc,match', ERRORS, ids=[f'{e[0]}-{i}' for i, e in enumerate(ERRORS)])
def test_errors(api, fn, args, kw, exc, match):
    for m in (torch, ember):
        a = args(m)
        with pytest.raises(exc, match=match):
            getattr(m.autograd.functional, api)(lambda *x: fn(m, *x), *a, **kw)


def test_independent_input_gives_zeros():
    for m in (torch, ember):
        x, y = m.ones(2, dtype=m.float64), m.ones(3, dtype=m.float64)
        jx, jy = m.autograd.functional.jacobian(lambda x, y: x * 2, (x, y))
        assert jy.shape == (2, 3) and jy.abs().sum().item() == 0
        with pytest.raises(RuntimeError, match='independent of input 1'):
            m.autograd.functional.jacobian(lambda x, y: x * 2, (x, y), strict=True)


def test_forward_mode_not_implemented():
    with pytest.raises(NotImplementedError):
        ember.autograd.functional.jacobian(lambda x: x, ember.ones(2), strategy='forward-mode', vectorize=True)


def test_hessian_create_graph_third_derivative():
    grads = []
    for m in (torch, ember):
        x = m.tensor([0.5, 1.5], dtype=m.float64, requires_grad=True)
        h = m.autograd.functional.hessian(lambda x: (x ** 4).sum() + x.prod().sin(), x, create_graph=True)
        assert h.requires_grad
        h.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[1] == pytest.approx(grads[0], rel=1e-10)


def test_grad_is_grads_batched_not_implemented():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match='is_grads_batched'):
        ember.autograd.grad(x * 2, x, ember.ones(3, 2), is_grads_batched=True)
