"""Complex dtypes against PyTorch 1.13: dtype objects and promotion, creation
from Python complex numbers, printing, item/tolist, NumPy and DLPack
exchange, save/load, the complex <-> real views and the functions built on
them (real, imag, abs, angle, conj, polar, complex, sgn, isreal), the
pointwise ops and reductions with complex kernels, and PyTorch's errors
where an op has no complex kernel."""
import io
import math

import numpy as np
import pytest
import torch

import ember

CDTYPES = ['complex64', 'complex128']
ALL = ['uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64', 'bool', 'bfloat16',
       'complex32', 'complex64', 'complex128']
VALUES = [[1 + 2j, -3.5 + 0.25j, 0j], [2 - 1j, 1e-3 + 4j, -1 - 1j]]


def both(dtype='complex64', values=VALUES):
    return ember.tensor(values, dtype=getattr(ember, dtype)), torch.tensor(values, dtype=getattr(torch, dtype))


def same(e, t, rtol=1e-5, atol=1e-6):
    assert str(e.dtype).split('.')[1] == str(t.dtype).split('.')[1], (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(np.array(e.tolist(), dtype=np.complex128) if e.numel() else np.zeros(tuple(e.shape)),
                               t.numpy().astype(np.complex128), rtol=rtol, atol=atol)


def test_dtype_objects():
    for name in ('complex32', 'complex64', 'complex128'):
        d, td = getattr(ember, name), getattr(torch, name)
        assert (d.is_complex, d.is_floating_point, d.is_signed, d.itemsize) == \
            (td.is_complex, td.is_floating_point, td.is_signed, torch.empty(0, dtype=td).element_size())
        assert repr(d) == 'ember.' + name
        assert repr(ember.finfo(d)) == repr(torch.finfo(td)).replace('torch.', 'ember.')
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128 and ember.chalf is ember.complex32
    assert ember.is_complex(ember.zeros(2, dtype=ember.cfloat)) and not ember.is_complex(ember.zeros(2))


@pytest.mark.parametrize('a', ['complex32', 'complex64', 'complex128'])
def test_promote_types(a):
    for b in ALL:
        assert str(ember.promote_types(getattr(ember, a), getattr(ember, b))).split('.')[1] == \
            str(torch.promote_types(getattr(torch, a), getattr(torch, b))).split('.')[1]


@pytest.mark.parametrize('dtype', ['float16', 'float32', 'float64', 'bfloat16', 'int64', 'bool'])
def test_python_complex_scalar_promotion(dtype):
    e = ember.ones(2, dtype=getattr(ember, dtype)) * 1j
    t = torch.ones(2, dtype=getattr(torch, dtype)) * 1j
    assert str(e.dtype).split('.')[1] == str(t.dtype).split('.')[1]


def test_default_complex_follows_default_float():
    assert ember.tensor([1j]).dtype == ember.complex64
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1j]).dtype == ember.complex128
        assert (ember.ones(2, dtype=ember.float32) * 1j).dtype == ember.complex64  # the tensor's precision
        assert repr(ember.tensor([1 + 1j])) == 'tensor([1.+1.j])'
    finally:
        ember.set_default_dtype(ember.float32)


def test_tensor_item_tolist():
    e, t = both()
    same(e, t)
    assert e.tolist() == t.tolist()
    assert e[0, 1].item() == t[0, 1].item() and isinstance(e[0, 1].item(), complex)
    assert ember.tensor([1, 2.5, 3j]).tolist() == torch.tensor([1, 2.5, 3j]).tolist()
    assert bool(ember.tensor(1j)) and not bool(ember.tensor(0j))
    for z in (np.complex64(1 + 2j), np.complex128(3 - 1j)):  # NumPy complex scalars
        assert ember.tensor([z, 1]).tolist() == torch.tensor([z, 1]).tolist()
        # torch 1.13 drops the imaginary part of a np.complex64 operand; Ember keeps it
        assert (ember.ones(2) * z).tolist() == (torch.ones(2) * complex(z)).tolist()
    e[1, 2] = 5 - 6j
    t[1, 2] = 5 - 6j
    same(e, t)


@pytest.mark.parametrize('dtype', ['complex32', 'complex64', 'complex128'])
def test_casts(dtype):
    e, t = both(dtype)
    for other in ALL:
        same_dtype = getattr(ember, other)
        ee, tt = e.to(same_dtype), t.to(getattr(torch, other))
        assert ee.dtype == same_dtype
        np.testing.assert_allclose(np.array(ee.tolist(), dtype=np.complex128), np.array(tt.tolist(), dtype=np.complex128),
                                   rtol=1e-2)
    r = ember.tensor([[1.5, -2.0]]).to(getattr(ember, dtype))
    assert r.tolist() == torch.tensor([[1.5, -2.0]]).to(getattr(torch, dtype)).tolist()
    assert e.cfloat().dtype == ember.complex64 and e.cdouble().dtype == ember.complex128
    assert e.chalf().dtype == ember.complex32


def test_factories():
    for f in ('zeros', 'ones', 'empty'):
        for d in CDTYPES:
            e, t = getattr(ember, f)(2, 3, dtype=getattr(ember, d)), getattr(torch, f)(2, 3, dtype=getattr(torch, d))
            assert e.dtype == getattr(ember, d) and tuple(e.shape) == tuple(t.shape)
            if f != 'empty':
                same(e, t)
    same(ember.full((2, 2), 1 - 2j), torch.full((2, 2), 1 - 2j))
    same(ember.full((2,), 3.0, dtype=ember.cdouble), torch.full((2,), 3.0, dtype=torch.cdouble))
    e, t = both()
    same(e.fill_(2 + 3j), t.fill_(2 + 3j))
    same(ember.zeros_like(e), torch.zeros_like(t))
    same(ember.full_like(e, 1j), torch.full_like(t, 1j))


def test_randn_complex():
    ember.manual_seed(0)
    x = ember.randn(20000, dtype=ember.cfloat)
    assert x.dtype == ember.complex64
    re, im = x.real, x.imag
    assert abs(re.var().item() - 0.5) < 0.03 and abs(im.var().item() - 0.5) < 0.03
    assert abs(re.mean().item()) < 0.03 and abs(im.mean().item()) < 0.03
    assert ember.randn(2, 3, dtype=ember.cdouble).shape == (2, 3)
    u = ember.rand(20000, dtype=ember.cdouble)
    assert u.dtype == ember.complex128 and 0 <= u.real.min().item() and u.imag.max().item() < 1
    assert abs(u.imag.mean().item() - 0.5) < 0.02
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match='cannot be converted'):
            float(m.tensor(1 + 2j))
    assert float(ember.tensor(3 + 0j)) == 3.0 and int(ember.tensor(3.5 + 0j)) == 3


def test_printing():
    cases = [VALUES, [[1 + 1j]], [1.5 - 2.25j, 1e5 + 1e-5j], [0j], [float('nan') + 1j, float('inf') - 2j],
             [[1 + 2j, 3 - 4j], [-5 + 6j, 7 - 8j]], 3 + 4j]
    for v in cases:
        for d in CDTYPES:
            assert repr(ember.tensor(v, dtype=getattr(ember, d))) == \
                repr(torch.tensor(v, dtype=getattr(torch, d))).replace('torch.', 'ember.'), v
    assert repr(ember.zeros(300, dtype=ember.cfloat) + 1j) == repr(torch.zeros(300, dtype=torch.cfloat) + 1j)


def test_numpy_exchange():
    for d in CDTYPES:
        e, t = both(d)
        a = e.numpy()
        assert a.dtype == t.numpy().dtype
        np.testing.assert_array_equal(a, t.numpy())
        a[0, 0] = 9j  # shares memory
        assert e[0, 0].item() == 9j
        n = np.array([[1 + 2j, 3j]], dtype=np.complex64 if d == 'complex64' else np.complex128)
        f = ember.from_numpy(n)
        assert f.dtype == getattr(ember, d) and f.tolist() == n.tolist()
        n[0, 1] = 7
        assert f[0, 1].item() == 7
        assert ember.tensor(n).tolist() == n.tolist()


def test_dlpack():
    e, t = both()
    t2 = torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(e))
    assert t2.dtype == torch.complex64 and t2.tolist() == e.tolist()
    e2 = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    assert e2.dtype == ember.complex64 and e2.tolist() == t.tolist()


def test_save_load(tmp_path):
    e, t = both('complex128')
    path = str(tmp_path / 'x.pt')
    ember.save({'x': e, 'y': e.to(ember.cfloat)}, path)
    back = torch.load(path)
    assert back['x'].dtype == torch.complex128 and back['x'].tolist() == t.tolist()
    assert back['y'].dtype == torch.complex64
    torch.save({'x': t}, path)
    assert ember.load(path)['x'].tolist() == e.tolist()
    st = str(tmp_path / 'x.safetensors')
    ember.save({'x': e.to(ember.cfloat)}, st)
    assert ember.load(st)['x'].tolist() == e.to(ember.cfloat).tolist()


def test_views():
    e, t = both()
    r = ember.view_as_real(e)
    same(r, torch.view_as_real(t))
    same(e.real, t.real)
    same(e.imag, t.imag)
    r[0, 0, 1] = 10  # shares storage
    assert e[0, 0].item() == 1 + 10j
    x = ember.randn(3, 4, 2)
    c = ember.view_as_complex(x)
    tc = torch.view_as_complex(torch.tensor(x.tolist()))
    same(c, tc)
    e.imag[1] = 0.5
    assert e.imag[1].tolist() == [0.5] * 3
    e.real = ember.zeros(2, 3)
    assert e.real.tolist() == [[0.0] * 3] * 2
    assert ember.real(ember.ones(2)).tolist() == [1.0, 1.0]
    nc = both()[0].t()
    same(ember.view_as_real(nc), torch.view_as_real(both()[1].t()))


def test_view_errors():
    bad = [lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int32)), lambda m: m.view_as_complex(m.ones(3, 3)),
           lambda m: m.view_as_complex(m.ones(2, 3).t()), lambda m: m.view_as_complex(m.ones(3, 3)[:, :2]),
           lambda m: m.view_as_complex(m.ones(7)[1:].view(3, 2)), lambda m: m.view_as_complex(m.ones(())),
           lambda m: m.view_as_real(m.ones(3)), lambda m: m.ones(3).imag]
    for f in bad:
        with pytest.raises(RuntimeError) as te:
            f(torch)
        with pytest.raises(RuntimeError) as ee:
            f(ember)
        assert str(ee.value) == str(te.value)


def test_functions_of_parts():
    e, t = both('complex128')
    for f in ('abs', 'angle', 'sgn', 'isreal', 'conj_physical', 'resolve_conj'):
        a, b = getattr(ember, f)(e), getattr(torch, f)(t)
        if b.dtype == torch.bool:
            assert a.tolist() == b.tolist()
        else:
            same(a, b)
    same(e.conj(), t.conj().resolve_conj())
    same(abs(e), abs(t))
    same(e.abs(), t.abs())
    r, i = ember.tensor([1.0, -2.0]), ember.tensor([[0.5], [3.0]])
    same(ember.complex(r, i), torch.complex(torch.tensor([1.0, -2.0]), torch.tensor([[0.5], [3.0]])))
    same(ember.polar(r.abs(), i), torch.polar(torch.tensor([1.0, 2.0]), torch.tensor([[0.5], [3.0]])))
    for m in (torch, ember):
        with pytest.raises(RuntimeError):
            m.complex(m.ones(2), m.ones(2, dtype=m.float64))
    # real inputs keep PyTorch's real answers
    x = ember.tensor([-1.0, 0.0, 2.0])
    assert ember.angle(x).tolist() == torch.angle(torch.tensor([-1.0, 0.0, 2.0])).tolist()
    assert ember.conj(x) is x and not ember.is_conj(x) and ember.isreal(x).tolist() == [True] * 3


BINARY = ['add', 'sub', 'mul', 'div', 'eq', 'ne', 'pow']


@pytest.mark.parametrize('dtype', CDTYPES)
@pytest.mark.parametrize('op', BINARY)
def test_binary(op, dtype):
    e, t = both(dtype)
    e2, t2 = both(dtype, [[2 + 1j, 1j, -1 + 0.5j], [1, 2 - 2j, 0.5 + 0.5j]])
    a, b = getattr(ember, op)(e, e2), getattr(torch, op)(t, t2)
    if b.dtype == torch.bool:
        assert a.tolist() == b.tolist()
    else:
        same(a, b, rtol=1e-4)
    # broadcasting, a real operand and Python scalars
    same(getattr(ember, op)(e, ember.tensor([1.0, 2.0, 3.0])) if op not in ('eq', 'ne') else e.real,
         getattr(torch, op)(t, torch.tensor([1.0, 2.0, 3.0])) if op not in ('eq', 'ne') else t.real, rtol=1e-4)
    if op not in ('eq', 'ne'):
        same(getattr(ember, op)(e, 2j) if op != 'pow' else e ** 2, getattr(torch, op)(t, 2j) if op != 'pow' else t ** 2,
             rtol=1e-4)


def test_operators_and_inplace():
    e, t = both()
    same(e * 1j + 2 - e / (1 + 1j), t * 1j + 2 - t / (1 + 1j))
    same(-e, -t)
    same(ember.ones(3) * 1j, torch.ones(3) * 1j)
    e2, t2 = both()
    e2 += 1j
    t2 += 1j
    same(e2, t2)
    e2.mul_(e)
    t2.mul_(t)
    same(e2, t2, rtol=1e-4)
    assert (e == e).all().item()


UNARY = ['exp', 'log', 'sqrt', 'sin', 'cos', 'tan', 'sinh', 'cosh', 'tanh', 'asin', 'acos', 'atan', 'asinh',
         'acosh', 'atanh', 'reciprocal', 'neg', 'square']


@pytest.mark.parametrize('dtype', CDTYPES)
@pytest.mark.parametrize('op', UNARY)
def test_unary(op, dtype):
    vals = [[0.5 + 0.25j, -0.3 + 0.7j, 1.2 - 0.4j], [-0.8 - 0.6j, 0.1 + 0.1j, 2 + 1j]]
    e, t = both(dtype, vals)
    same(getattr(ember, op)(e), getattr(torch, op)(t), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('dtype', CDTYPES)
def test_reductions(dtype):
    e, t = both(dtype)
    same(e.sum(), t.sum(), rtol=1e-5)
    same(e.sum(0), t.sum(0), rtol=1e-5)
    same(e.mean(1, keepdim=True), t.mean(1, keepdim=True), rtol=1e-5)
    same(e.prod(1), t.prod(1), rtol=1e-4)
    same(e.cumsum(1), t.cumsum(1), rtol=1e-5)
    same(e.cumprod(0), t.cumprod(0), rtol=1e-5)
    same(ember.ones(3).cumsum(0, dtype=ember.cfloat), torch.ones(3).cumsum(0, dtype=torch.cfloat))
    big_e = ember.ones(1000, 7, dtype=getattr(ember, dtype)) * (1 + 2j)
    same(big_e.sum(0), torch.ones(1000, 7, dtype=getattr(torch, dtype)).mul(1 + 2j).sum(0))


def test_complex32_goes_through_complex64():
    e, t = both('complex32', [[1 + 2j, 0.5 - 1j]])
    assert (e + e).dtype == ember.complex32 and (e + e).tolist() == (t + t).tolist()
    for d in ('complex32', 'complex64', 'complex128'):  # strided copies of each element size
        x, tx = both(d)
        assert x.t().contiguous().tolist() == tx.t().contiguous().tolist()
    assert repr(e) == repr(t).replace('torch.', 'ember.')


def test_unsupported_ops_raise_like_torch():
    e, t = both()
    for f in (lambda x: x.max(), lambda x: x < 1, lambda x: x.floor(), lambda x: x.clamp(0, 1), lambda x: x.relu()):
        with pytest.raises(RuntimeError):
            f(t)
        with pytest.raises(RuntimeError):
            f(e)
    assert e.requires_grad_().requires_grad  # complex autograd: tests/python/test_complex_autograd.py


@pytest.mark.parametrize('dtype', CDTYPES)
def test_products(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))
    v = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    d = getattr(ember, dtype)
    ea, eb, ev = ember.tensor(a, dtype=d), ember.tensor(b, dtype=d), ember.tensor(v, dtype=d)
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.array((ea @ eb).tolist()), a @ b, **tol)
    np.testing.assert_allclose(np.array(ember.mm(ea.t().contiguous().t(), eb).tolist()), a @ b, **tol)
    np.testing.assert_allclose(np.array(ember.bmm(ea[None], eb[None]).tolist()), (a @ b)[None], **tol)
    np.testing.assert_allclose(np.array(ember.mv(ea, ev).tolist()), a @ v, **tol)
    np.testing.assert_allclose(ember.dot(ev, ev).item(), np.dot(v, v), **tol)
    np.testing.assert_allclose(ember.vdot(ev, ev).item(), np.vdot(v, v), **tol)
    np.testing.assert_allclose(np.array(ember.addmm(ea @ eb, ea, eb, beta=0.5, alpha=2).tolist()),
                               0.5 * (a @ b) + 2 * (a @ b), **tol)
    np.testing.assert_allclose(np.array(ember.nn.functional.linear(ea, eb.t()).tolist()), a @ b, **tol)


def test_dtype_generic_ops():
    e, t = both()
    i, ti = ember.tensor([1, 0]), torch.tensor([1, 0])
    cases = [lambda m, x, i: m.cat([x, x]), lambda m, x, i: m.stack([x, x], 1), lambda m, x, i: x.flip(0),
             lambda m, x, i: x.roll(1, 1), lambda m, x, i: x.repeat(2, 1), lambda m, x, i: x.index_select(1, i),
             lambda m, x, i: x[i], lambda m, x, i: x[x.real > 0], lambda m, x, i: x.t().contiguous(),
             lambda m, x, i: x.triu(), lambda m, x, i: x.masked_fill(x.real > 0, 1j),
             lambda m, x, i: m.where(x.real > 0, x, 2j), lambda m, x, i: x.gather(1, i[None].expand(2, 2))]
    for f in cases:
        same(f(ember, e, i), f(torch, t, ti))
    x, tx = e.clone(), t.clone()
    x[:, i] = 3j
    tx[:, ti] = 3j
    same(x, tx)


def test_nan_inf_tests():
    v = [[complex(float('nan'), 1), complex(1, float('inf')), 1 + 1j, complex(0, float('nan'))]]
    e, t = both('complex128', v)
    for f in ('isnan', 'isinf', 'isfinite'):
        assert getattr(ember, f)(e).tolist() == getattr(torch, f)(t).tolist()
        assert getattr(e, f)().tolist() == getattr(t, f)().tolist()
    assert ember.isnan(ember.tensor([1.0, float('nan')])).tolist() == [False, True]


@pytest.mark.parametrize('dtype', CDTYPES)
def test_products_through_blas(dtype):
    rng = np.random.default_rng(1)
    d = getattr(ember, dtype)
    for (m, k, n) in [(64, 300, 90), (1, 50, 7), (7, 50, 1), (3, 0, 4), (130, 17, 140)]:
        a = rng.standard_normal((m, k)) + 1j * rng.standard_normal((m, k))
        b = rng.standard_normal((k, n)) + 1j * rng.standard_normal((k, n))
        ea, eb = ember.tensor(a, dtype=d), ember.tensor(b, dtype=d)
        tol = dict(rtol=1e-4, atol=1e-3) if dtype == 'complex64' else dict(rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.array((ea @ eb).tolist()).reshape(m, n), a @ b, **tol)
        eat = ember.tensor(a.T.copy(), dtype=d).t()  # column-major A
        np.testing.assert_allclose(np.array((eat @ eb).tolist()).reshape(m, n), a @ b, **tol)
        np.testing.assert_allclose(np.array(ember.bmm(ea.expand(2, m, k), eb.expand(2, k, n)).tolist()).reshape(2, m, n),
                                   np.stack([a @ b] * 2), **tol)
