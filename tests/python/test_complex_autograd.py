"""Autograd of complex tensors against PyTorch 1.13: the conjugate Wirtinger
convention (a real loss L gives dL/dx + i dL/dy for z = x + iy, as torch),
checked by complex128 gradcheck (and gradgradcheck for some), and the same
gradients as torch for the same inputs and cotangent; real <-> complex
crossings (promotion, .to(), view_as_real/view_as_complex, real/imag) and
in-place writes through the retyped views."""
import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.autograd.gradcheck import GradcheckError

RNG = np.random.default_rng(0)


def cvalues(shape, rng=RNG):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def tensors(lib, arrays, single=False):
    """lib tensors that require grad: complex128 for complex arrays, float64 for real ones (complex64 and
    float32 when single)."""
    c, r = (lib.complex64, lib.float32) if single else (lib.complex128, lib.float64)
    return [lib.tensor(a, dtype=c if np.iscomplexobj(a) else r, requires_grad=True) for a in arrays]


def grads(lib, fn, arrays, cotangent, single=False):
    xs = tensors(lib, arrays, single)
    out = fn(lib, *xs)
    ct = lib.tensor(cotangent, dtype=out.dtype)
    gs = lib.autograd.grad(out, xs, ct, allow_unused=True)
    return out, gs


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().resolve_neg().numpy()
    return np.array(t.detach().tolist())


def check_against_torch(fn, arrays, torch_fn=None, rtol=1e-7, atol=1e-9, single=False):
    torch_fn = torch_fn or fn
    tout = torch_fn(torch, *tensors(torch, arrays, single))
    shape = tuple(tout.shape)
    cotangent = cvalues(shape) if tout.is_complex() else RNG.standard_normal(shape)
    (eo, eg), (to, tg) = grads(ember, fn, arrays, cotangent, single), grads(torch, torch_fn, arrays, cotangent, single)
    np.testing.assert_allclose(to_numpy(eo), to_numpy(to), rtol=rtol, atol=atol)
    for e, t in zip(eg, tg):
        assert (e is None) == (t is None)
        if e is not None:
            assert str(e.dtype).split('.')[1] == str(t.dtype).split('.')[1]
            np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=rtol, atol=atol)


# (name, fn(lib, *inputs), input shapes; a shape in R(...) is a real input)
class R(tuple):
    pass


def sig(lib, z):
    return z.sigmoid()


CASES = [
    ('add', lambda L, a, b: a + b, [(3,), (3,)]),
    ('add_alpha', lambda L, a, b: L.add(a, b, alpha=2.5), [(3,), (3,)]),
    ('sub', lambda L, a, b: a - b, [(2, 3), (3,)]),
    ('mul', lambda L, a, b: a * b, [(2, 3), (3,)]),
    ('div', lambda L, a, b: a / b, [(3,), (2, 3)]),
    ('neg', lambda L, a: -a, [(3,)]),
    ('reciprocal', lambda L, a: a.reciprocal(), [(3,)]),
    ('pow', lambda L, a, b: a ** b, [(3,), (3,)]),
    ('pow_scalar', lambda L, a: a ** 3, [(3,)]),
    ('square', lambda L, a: a.square(), [(3,)]),
    ('exp', lambda L, a: a.exp(), [(3,)]),
    ('log', lambda L, a: a.log(), [(3,)]),
    ('sqrt', lambda L, a: a.sqrt(), [(3,)]),
    ('rsqrt', lambda L, a: a.rsqrt(), [(3,)]),
    ('sin', lambda L, a: a.sin(), [(3,)]),
    ('cos', lambda L, a: a.cos(), [(3,)]),
    ('tan', lambda L, a: a.tan(), [(3,)]),
    ('tanh', lambda L, a: a.tanh(), [(3,)]),
    ('sinh', lambda L, a: a.sinh(), [(3,)]),
    ('cosh', lambda L, a: a.cosh(), [(3,)]),
    ('abs', lambda L, a: a.abs(), [(3,)]),
    ('angle', lambda L, a: a.angle(), [(3,)]),
    ('sgn', lambda L, a: a.sgn(), [(3,)]),
    ('real', lambda L, a: a.real, [(2, 3)]),
    ('imag', lambda L, a: a.imag, [(2, 3)]),
    ('conj', lambda L, a: a.conj() * a, [(3,)]),
    ('conj_physical', lambda L, a: L.conj_physical(a), [(3,)]),
    ('view_as_real', lambda L, a: L.view_as_real(a), [(2, 3)]),
    ('view_as_complex', lambda L, x: L.view_as_complex(x), [R((3, 2))]),
    ('view_as_real_strided', lambda L, a: L.view_as_real(a.t()), [(2, 3)]),
    ('polar', lambda L, r, t: L.polar(r, t), [R((3,)), R((3,))]),
    ('complex', lambda L, x, y: L.complex(x, y), [R((2, 3)), R((3,))]),
    ('sum', lambda L, a: a.sum(0), [(2, 3)]),
    ('mean', lambda L, a: a.mean(), [(2, 3)]),
    ('prod', lambda L, a: a.prod(1), [(2, 3)]),
    ('matmul', lambda L, a, b: a @ b, [(2, 3), (3, 4)]),
    ('mm_transposed', lambda L, a, b: L.mm(a.t(), b), [(3, 2), (3, 4)]),
    ('bmm', lambda L, a, b: L.bmm(a, b), [(2, 2, 3), (2, 3, 2)]),
    ('mv', lambda L, a, v: L.mv(a, v), [(2, 3), (3,)]),
    ('dot', lambda L, a, b: L.dot(a, b), [(3,), (3,)]),
    ('vdot', lambda L, a, b: L.vdot(a, b), [(3,), (3,)]),
    ('mv_as_dot', lambda L, a, b: L.mv(a.reshape(1, 3), b), [(3,), (3,)]),
    ('reshape', lambda L, a: a.reshape(3, 2) * 2, [(2, 3)]),
    ('view', lambda L, a: a.view(6), [(2, 3)]),
    ('transpose', lambda L, a: a.transpose(0, 1), [(2, 3)]),
    ('permute', lambda L, a: a.permute(2, 0, 1), [(2, 3, 2)]),
    ('expand', lambda L, a: a.expand(4, 3), [(1, 3)]),
    ('index', lambda L, a: a[L.tensor([2, 0, 2])], [(3, 2)]),
    ('select', lambda L, a: a[1], [(3, 2)]),
    ('slice', lambda L, a: a[:, 1:], [(3, 3)]),
    ('cat', lambda L, a, b: L.cat([a, b], 0), [(2, 3), (1, 3)]),
    ('stack', lambda L, a, b: L.stack([a, b], 1), [(2, 3), (2, 3)]),
    ('asin', lambda L, a: a.asin(), [(3,)]),
    ('acos', lambda L, a: a.acos(), [(3,)]),
    ('atan', lambda L, a: a.atan(), [(3,)]),
    ('asinh', lambda L, a: a.asinh(), [(3,)]),
    ('acosh', lambda L, a: a.acosh(), [(2, 3)]),
    ('atanh', lambda L, a: a.atanh(), [(3,)]),
    ('sigmoid', lambda L, a: a.sigmoid(), [(3,)]),
    ('cumsum', lambda L, a: a.cumsum(1), [(2, 3)]),
    ('cumprod', lambda L, a: a.cumprod(1), [(2, 3)]),
    ('index_select', lambda L, a: a.index_select(0, L.tensor([2, 0, 2])), [(3, 2)]),
    ('gather', lambda L, a: a.gather(1, L.tensor([[0, 0], [1, 0], [1, 1]])), [(3, 2)]),
    ('take', lambda L, a: a.take(L.tensor([1, 1, 5])), [(3, 2)]),
    ('index_put', lambda L, a, b: a.index_put((L.tensor([2, 0]),), b), [(3, 2), (2, 2)]),
    ('masked_fill', lambda L, a: a.masked_fill(L.tensor([True, False, True]), 2), [(3,)]),
    ('where', lambda L, a, b: L.where(L.tensor([True, False, True]), a, b), [(3,), (3,)]),
    ('flip', lambda L, a: a.flip(0), [(3, 2)]),
    ('roll', lambda L, a: a.roll(1, 1), [(2, 3)]),
    ('tril', lambda L, a: a.tril(), [(3, 3)]),
    ('addmm', lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2), [(2, 4), (2, 3), (3, 4)]),
    ('einsum', lambda L, a, b: L.einsum('ij,kj->ik', a, b), [(2, 3), (4, 3)]),
    ('diagonal', lambda L, a: a.diagonal(), [(3, 3)]),
    ('unbind', lambda L, a: a.unbind(0)[1], [(3, 2)]),
    # real <-> complex: a real input gets the real part of its complex gradient
    ('real_times_complex', lambda L, x, a: x * a, [R((3,)), (3,)]),
    ('real_div_complex', lambda L, x, a: x / a, [R((3,)), (3,)]),
    ('to_complex', lambda L, x: x.to(L.complex128) * (1 + 2j), [R((3,))]),
    ('to_real', lambda L, a: a.to(L.float64), [(3,)]),
    ('complex_to_real_loss', lambda L, a: (a * a.conj()).real.sum(), [(3,)]),
    ('abs_of_product', lambda L, a, b: (a @ b).abs().sum(), [(2, 3), (3,)]),
]


def shapes_to_arrays(shapes):
    return [RNG.standard_normal(s) + 2 if isinstance(s, R) else cvalues(s) for s in shapes]


# Debian's torch 1.13 returns 0 for dot/vdot of complex128 tensors here (its
# complex BLAS dot): its reference is the same sum written with mul
TORCH_REFERENCE = {'dot': lambda L, a, b: (a * b).sum(), 'vdot': lambda L, a, b: (a.conj() * b).sum()}


@pytest.mark.parametrize('name,fn,shapes', CASES, ids=[c[0] for c in CASES])
def test_gradients_match_torch(name, fn, shapes):
    check_against_torch(fn, shapes_to_arrays(shapes), TORCH_REFERENCE.get(name))


@pytest.mark.parametrize('name,fn,shapes', CASES, ids=[c[0] for c in CASES])
def test_complex64_gradients_match_torch(name, fn, shapes):
    check_against_torch(fn, shapes_to_arrays(shapes), TORCH_REFERENCE.get(name), rtol=2e-4, atol=2e-5, single=True)


@pytest.mark.parametrize('name,fn,shapes', CASES, ids=[c[0] for c in CASES])
def test_gradcheck(name, fn, shapes):
    xs = tensors(ember, shapes_to_arrays(shapes))
    assert gradcheck(lambda *a: fn(ember, *a), xs)


@pytest.mark.parametrize('name,fn,shapes', CASES, ids=[c[0] for c in CASES])
def test_gradgradcheck(name, fn, shapes):
    xs = tensors(ember, shapes_to_arrays(shapes))
    assert gradgradcheck(lambda *a: fn(ember, *a), xs)


def test_double_backward_through_a_view_fed_an_expanded_gradient():
    # sum's gradient is expanded; the select's backward, recorded, used to refuse to view it
    res = []
    for lib in (torch, ember):
        a = lib.arange(6., dtype=lib.float64).reshape(3, 2).requires_grad_()
        go = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad((a * a)[:, 0].sum(), a, go, create_graph=True)
        res.append([to_numpy(g)] + [to_numpy(t) for t in lib.autograd.grad(g.sum(), [a, go])])
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_gradcheck_catches_a_wrong_complex_gradient():
    class NoConj(ember.autograd.Function):  # d(a z)/dz* should be g * conj(a)
        @staticmethod
        def forward(ctx, z):
            return z * (1 + 2j)

        @staticmethod
        def backward(ctx, g):
            return g * (1 + 2j)
    z = ember.randn(3, dtype=ember.complex128, requires_grad=True)
    assert not gradcheck(NoConj.apply, (z,), raise_exception=False)
    with pytest.raises(GradcheckError, match='real part of complex outputs'):
        gradcheck(NoConj.apply, (z,))


def test_backward_accumulates_into_leaves():
    a = cvalues((3,))
    for lib in (torch, ember):
        z = lib.tensor(a, requires_grad=True)
        (z * z).abs().sum().backward()
        (z.conj() * 2).real.sum().backward()
        if lib is torch:
            expected = z.grad.numpy()
        else:
            assert z.grad.dtype == ember.complex128
            np.testing.assert_allclose(to_numpy(z.grad), expected, rtol=1e-12)


def test_complex_scalar_backward_seeds_one_as_torch_1_13():
    # torch 1.13 takes 1 as the gradient of a complex scalar (later versions refuse it)
    a = cvalues((3,))
    res = []
    for lib in (torch, ember):
        z = lib.tensor(a, requires_grad=True)
        (z * z).sum().backward()
        res.append(to_numpy(z.grad))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


def test_inplace_through_retyped_views():
    a = cvalues((2, 3))
    for write in (lambda L, w: w.real.mul_(3), lambda L, w: w.imag.zero_(), lambda L, w: L.view_as_real(w)[0].neg_()):
        res = []
        for lib in (torch, ember):
            z = lib.tensor(a, requires_grad=True)
            w = z * (1 - 1j)
            write(lib, w)
            (w * lib.tensor(a[::-1].copy())).abs().sum().backward()
            res.append(to_numpy(z.grad))
        np.testing.assert_allclose(res[1], res[0], rtol=1e-10)


def test_inplace_into_complex_through_view_of_real():
    x = RNG.standard_normal((3, 2))
    res = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        y = t * 2
        lib.view_as_complex(y).mul_(1j)
        (y ** 2 * lib.arange(6.).reshape(3, 2)).sum().backward()
        res.append(to_numpy(t.grad))
    np.testing.assert_allclose(res[1], res[0], rtol=1e-12)


@pytest.mark.parametrize('op', ['abs', 'angle', 'sgn'])
def test_gradient_at_zero(op):
    # PyTorch's: 0 at z == 0 (hypot's and atan2's own formulas are 0/0 there)
    values = [0j, 1 + 1j, complex(-0.0, 0.0), complex(-0.0, -0.0)]
    res = []
    for lib in (torch, ember):
        z = lib.tensor(values, dtype=lib.complex128, requires_grad=True)
        y = getattr(z, op)()
        g = lib.ones(4, dtype=y.dtype) * (1 + 2j if y.is_complex() else 1)
        res.append((to_numpy(y), to_numpy(lib.autograd.grad(y, z, g)[0])))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-15)


def test_errors():
    with pytest.raises(RuntimeError, match='only Tensors of floating point dtype can require gradients'):
        ember.zeros(2, dtype=ember.int64).requires_grad_()
    z = ember.randn(2, 3, dtype=ember.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match='grad can be implicitly created only for scalar outputs'):
        (z * 2).backward()
    with pytest.raises(RuntimeError, match='For complex Tensors, both grad_output and output are required to have '
                       'the same dtype. Mismatch in dtype: grad_output.0. has a dtype of float64'):
        (z * 2).backward(ember.ones(2, 3, dtype=ember.float64))
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match='grad_output.0. has a dtype of complex128 and output.0. has a dtype of '
                       'float64'):
        ember.autograd.grad(x * 2, x, ember.ones(3, 4, dtype=ember.complex128))
    with pytest.raises(RuntimeError, match='last dimension of size 2'):
        ember.view_as_complex(x)
    with pytest.raises(RuntimeError, match='storage_offset divisible by 2'):
        ember.view_as_complex(x[:, 1:3])
    with pytest.raises(RuntimeError, match='only supported for complex tensors'):
        ember.view_as_real(x)


@pytest.mark.parametrize('args', [lambda L: (L.ones(2), L.ones(2, dtype=L.float64)),
                                  lambda L: (L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64)),
                                  lambda L: (L.ones(2), 3)])
def test_polar_errors_as_torch(args):
    errors = []
    for lib in (torch, ember):
        with pytest.raises((RuntimeError, TypeError)) as info:
            lib.polar(*args(lib))
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


def test_hooks_retain_grad_and_custom_functions():
    a = cvalues((3,))
    res = []
    for lib in (torch, ember):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                z, = ctx.saved_tensors
                return g * 2 * z.conj()
        z = lib.tensor(a, requires_grad=True)
        w = Square.apply(z) * (1 + 1j)
        w.retain_grad()
        w.register_hook(lambda g: g * (2 - 1j))
        w.abs().sum().backward()
        res.append((to_numpy(w.grad), to_numpy(z.grad)))
    for e, t in zip(res[1], res[0]):
        np.testing.assert_allclose(e, t, rtol=1e-12)


def test_complex_gradients_in_real_leaves_have_real_dtype():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    z = ember.randn(3, dtype=ember.complex128)
    (x * z).abs().sum().backward()
    assert x.grad.dtype == ember.float64
    f = ember.randn(3, dtype=ember.float32, requires_grad=True)
    (f.to(ember.complex64) * (1 + 1j)).abs().sum().backward()
    assert f.grad.dtype == ember.float32
