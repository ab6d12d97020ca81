"""The conjugate bit against PyTorch 1.13 (Note [Conjugate bit] in src/core/internal.h): conj() is a view
with the bit set (x.conj().imag one with the negative bit), every view keeps it, every op computes with the
conjugated values, writes into a conjugate view leave its base holding the conjugate, and everything that
reads memory outside a kernel (item, tolist, printing, NumPy, DLPack, the file writers, storages) either
resolves the bit or refuses as torch does. Autograd crosses conj views (gradcheck and torch's gradients)."""
import io
import pickle

import numpy as np
import pytest
import torch

import ember
from ember.autograd import gradcheck

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))


def pair(a=A, dtype='complex128'):
    return ember.tensor(a, dtype=getattr(ember, dtype)), torch.tensor(a, dtype=getattr(torch, dtype))


def values(t):
    """The values of an ember or torch tensor (resolved) as a NumPy array."""
    return t.detach().resolve_conj().resolve_neg().numpy()


def check(e, t, bits=True):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(values(e), values(t), rtol=1e-6, atol=1e-6)
    if bits:
        assert (e.is_conj(), e.is_neg()) == (t.is_conj(), t.is_neg())


# ---- conj() itself -------------------------------------------------------------------------------------
def test_conj_is_a_view_with_the_bit():
    x, tx = pair()
    y, ty = x.conj(), tx.conj()
    check(y, ty)
    assert y.is_conj() and y.data_ptr() == x.data_ptr()
    yy = y.conj()
    assert not yy.is_conj() and yy.data_ptr() == x.data_ptr()
    check(yy, tx)
    assert ember.is_conj(y) and ember.conj(x).is_conj()


def test_real_conj_is_itself_and_conj_physical_materializes():
    r = ember.ones(3)
    assert r.conj() is r and not r.is_conj()
    x, tx = pair()
    for e, t in ((x.conj_physical(), tx.conj_physical()), (x.conj().conj_physical(), tx.conj().conj_physical()),
                 (ember.conj_physical(x.conj()), torch.conj_physical(tx.conj()))):
        check(e, t)
        assert not e.is_conj() and e.data_ptr() != x.data_ptr()


def test_resolve_conj_clone_contiguous_to():
    x, tx = pair()
    y, ty = x.conj(), tx.conj()
    assert x.resolve_conj() is x and y.resolve_conj() is not y
    for f in (lambda t: t.resolve_conj(), lambda t: t.clone(), lambda t: t.contiguous(), lambda t: t.t().contiguous(),
              lambda t: t.to(t.dtype), lambda t: t.to(ember.complex64 if isinstance(t, ember.Tensor) else torch.complex64),
              lambda t: t.detach(), lambda t: -t, lambda t: t + 0):
        check(f(y), f(ty))
    assert y.contiguous() is y
    assert y.resolve_conj().data_ptr() != x.data_ptr()


# ---- views keep the bit ----------------------------------------------------------------------------------
VIEWS = {
    'view': lambda t: t.view(4, 3), 'reshape': lambda t: t.reshape(12), 'flatten': lambda t: t.flatten(),
    't': lambda t: t.t(), 'T': lambda t: t.T, 'transpose': lambda t: t.transpose(0, 1),
    'permute': lambda t: t.permute(1, 0), 'mT': lambda t: t.mT, 'mH': lambda t: t.mH, 'adjoint': lambda t: t.adjoint(),
    'H': lambda t: t.H, 'H_of_select': lambda t: t[0, 0].H,
    'slice': lambda t: t[1:, ::2], 'select': lambda t: t[1], 'select_fn': lambda t: t.select(1, 2),
    'narrow': lambda t: t.narrow(1, 1, 2), 'expand': lambda t: t[:1].expand(5, 4),
    'unsqueeze': lambda t: t.unsqueeze(0), 'squeeze': lambda t: t[:1].squeeze(0),
    'as_strided': lambda t: t.as_strided((2, 2), (1, 4), 1), 'diagonal': lambda t: t.diagonal(),
    'unfold': lambda t: t.unfold(1, 2, 1), 'split': lambda t: t.split(2, 1)[1], 'unbind': lambda t: t.unbind(0)[2],
    'chunk': lambda t: t.chunk(2, 1)[0], 'movedim': lambda t: t.movedim(0, 1),
    'real': lambda t: t.real, 'imag': lambda t: t.imag, 'imag_imag': lambda t: t.imag, 'view_as_self': lambda t: t.view_as(t),
}


@pytest.mark.parametrize('name', sorted(VIEWS))
def test_views_of_conj_views(name):
    x, tx = pair()
    e, t = VIEWS[name](x.conj()), VIEWS[name](tx.conj())
    check(e, t)
    assert e.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()  # a view, no copy


def test_views_of_plain_tensors_keep_no_bit():
    x, tx = pair()
    for name, f in VIEWS.items():
        check(f(x), f(tx))


def test_imag_of_conj_view_is_a_negative_view():
    x, tx = pair()
    im, tim = x.conj().imag, tx.conj().imag
    check(im, tim)
    assert im.is_neg() and not im.is_conj()
    check(im.resolve_neg(), tim.resolve_neg())
    assert ember._neg_view(ember.ones(2)).is_neg()
    check(ember._neg_view(ember.arange(3.)), torch._neg_view(torch.arange(3.)))
    im.fill_(5)  # written through the negative view: the storage gets -5
    tim.fill_(5)
    check(x, tx)


def test_view_as_real_of_conj_view_raises():
    x, tx = pair()
    with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved conjugated tensors"):
        ember.view_as_real(x.conj())
    check(ember.view_as_real(x.conj().resolve_conj()), torch.view_as_real(tx.conj().resolve_conj()))


# ---- ops compute with the conjugated values --------------------------------------------------------------
BINARY = {
    'add': lambda a, b: a + b, 'sub': lambda a, b: a - b, 'mul': lambda a, b: a * b, 'div': lambda a, b: a / b,
    'pow': lambda a, b: a ** b, 'eq': lambda a, b: a == b,
    'where': lambda a, b: (ember if isinstance(a, ember.Tensor) else torch).where(b.real > 0, a, b),
    'cat': lambda a, b: (ember if isinstance(a, ember.Tensor) else torch).cat([a, b]),
    'stack': lambda a, b: (ember if isinstance(a, ember.Tensor) else torch).stack([a, b]),
}


@pytest.mark.parametrize('name', sorted(BINARY))
@pytest.mark.parametrize('which', ['left', 'right', 'both', 'same'])
def test_binary_ops_mixing_conj_operands(name, which):
    x, tx = pair(A)
    w, tw = pair(B)
    def operands(a, b):
        return {'left': (a.conj(), b), 'right': (a, b.conj()), 'both': (a.conj(), b.conj()),
                'same': (a.conj(), a)}[which]
    check(BINARY[name](*operands(x, w)), BINARY[name](*operands(tx, tw)))


@pytest.mark.parametrize('fn', ['exp', 'sqrt', 'neg', 'abs', 'angle', 'sgn', 'isnan', 'isfinite', 'isreal', 'sin'])
def test_unary_ops_of_conj_views(fn):
    x, tx = pair()
    check(getattr(x.conj(), fn)(), getattr(tx.conj(), fn)())
    check(getattr(x.conj().t(), fn)(), getattr(tx.conj().t(), fn)())


@pytest.mark.parametrize('fn', [lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(1), lambda t: t.prod(),
                                lambda t: t.cumsum(1), lambda t: t.cumprod(0), lambda t: t.flip(0),
                                lambda t: t.roll(1, 1), lambda t: t.tril(), lambda t: t.repeat(2, 1)])
def test_reductions_and_reorders_of_conj_views(fn):
    x, tx = pair()
    check(fn(x.conj()), fn(tx.conj()))
    check(fn(x.conj().t()), fn(tx.conj().t()))


MATMUL = {
    'mm_mH': lambda lib, a, b: lib.mm(a, b.mH), 'mm_conj_left': lambda lib, a, b: lib.mm(a.conj(), b.t()),
    'matmul_both': lambda lib, a, b: a.conj() @ b.mT.conj(),
    'bmm': lambda lib, a, b: lib.bmm(a.conj().unsqueeze(0), b.mH.unsqueeze(0)),
    'mv': lambda lib, a, b: lib.mv(a.conj(), b[0].conj()),
    'addmm': lambda lib, a, b: lib.addmm(a[:, :3].conj(), a.conj(), b.mH),
}


@pytest.mark.parametrize('name', sorted(MATMUL))
def test_matmul_with_conj_operands(name):
    x, tx = pair(A)
    w, tw = pair(B)
    check(MATMUL[name](ember, x, w), MATMUL[name](torch, tx, tw))


def test_dot_vdot_with_conj_operands():
    """Against NumPy: Debian's torch 1.13 returns 0 for every complex dot (its BLAS call)."""
    x, w = pair(A)[0], pair(B)[0]
    a, b = A[0], B[1]
    for e, ref in ((ember.dot(x[0].conj(), w[1]), np.dot(a.conj(), b)), (ember.vdot(x[0].conj(), w[1]), np.vdot(a.conj(), b)),
                   (ember.vdot(x[0], w[1].conj()), np.vdot(a, b.conj())), (ember.dot(x[0].conj(), w[1].conj()), np.dot(a, b).conj()),
                   (x[0].conj() @ w[1], np.dot(a.conj(), b))):
        np.testing.assert_allclose(e.item(), ref, rtol=1e-12)


def test_index_reads_of_conj_views():
    x, tx = pair()
    idx, tidx = ember.tensor([2, 0]), torch.tensor([2, 0])
    for f in (lambda t, i: t[i], lambda t, i: t[:, i], lambda t, i: t[t.real > 0], lambda t, i: t.index_select(1, i),
              lambda t, i: t.take(i), lambda t, i: t.gather(1, i.view(1, 2).expand(3, 2))):
        check(f(x.conj(), idx), f(tx.conj(), tidx))


# ---- writes into conj views ------------------------------------------------------------------------------
WRITES = {
    'add_': lambda t, o: t.add_(1j), 'mul_': lambda t, o: t.mul_(o), 'div_': lambda t, o: t.div_(o + 1),
    'fill_': lambda t, o: t.fill_(2j), 'zero_': lambda t, o: t.zero_(), 'copy_': lambda t, o: t.copy_(o),
    'copy_conj_src': lambda t, o: t.copy_(o.conj()), 'copy_broadcast': lambda t, o: t.copy_(o[0]),
    'conj_physical_': lambda t, o: t.conj_physical_(), 'neg_': lambda t, o: t.neg_(), 'exp_': lambda t, o: t.exp_(),
    'setitem': lambda t, o: t.__setitem__((slice(None), 1), 3 + 4j),
    'setitem_tensor': lambda t, o: t.__setitem__(t.real > 0, o[t.real > 0]),
    'index_put_': lambda t, o: t.index_put_((o.real.new_tensor([0, 2]).long(),), o[1], accumulate=True),
    'masked_fill_': lambda t, o: t.masked_fill_(o.real > 0, 1 - 1j),
    'real_setter': lambda t, o: setattr(t, 'real', o.real), 'imag_setter': lambda t, o: setattr(t, 'imag', o.imag),
    'imag_add_': lambda t, o: t.imag.add_(1),
}


@pytest.mark.parametrize('name', sorted(WRITES))
@pytest.mark.parametrize('view', ['conj', 'conj_t', 'conj_slice'])
def test_writes_into_conj_views_reach_the_base(name, view):
    x, tx = pair(A)
    o, to = pair(B)
    make = {'conj': lambda t: t.conj(), 'conj_t': lambda t: t.t().conj().t(), 'conj_slice': lambda t: t.conj()[:, :]}
    y, ty = make[view](x), make[view](tx)
    r, tr = WRITES[name](y, o), WRITES[name](ty, to)
    check(x, tx)
    check(y, ty)
    if isinstance(r, ember.Tensor) and name != 'imag_add_':
        assert r is y


@pytest.mark.parametrize('write', [lambda t, i, o: t.index_add_(1, i, o[:, :2]), lambda t, i, o: t.index_copy_(1, i, o[:, :2]),
                                   lambda t, i, o: t.scatter_(1, i.expand(3, 2), o), lambda t, i, o: t.put_(i, o[0, :2])])
def test_plan_writes_into_conj_views_refuse(write):
    """Scatter-style writes whose kernels walk self's storage refuse a conjugate view (no silent wrong values)."""
    x, _ = pair()
    o, _ = pair(B)
    with pytest.raises(NotImplementedError, match='conjugate or negative bit'):
        write(x.conj(), ember.tensor([3, 0]), o)
    check(x, torch.tensor(A))


@pytest.mark.parametrize('op', ['add', 'mul', 'exp', 'mm', 'sum'])
def test_out_into_conj_views(op):
    x, tx = pair(A[:, :3] if op == 'mm' else A)
    o, to = pair(B[:3, :3] if op == 'mm' else B)
    y, ty = x.conj(), tx.conj()
    calls = {'add': lambda lib, a, b, out: lib.add(b, 1j, out=out), 'mul': lambda lib, a, b, out: lib.mul(b, b, out=out),
             'exp': lambda lib, a, b, out: lib.exp(b, out=out), 'mm': lambda lib, a, b, out: lib.mm(b, b.conj(), out=out),
             'sum': lambda lib, a, b, out: lib.sum(b, 0, out=out[0])}
    calls[op](ember, x, o, y)
    calls[op](torch, tx, to, ty)
    check(x, tx)
    assert y.is_conj()


def test_copy_from_conj_view_into_plain():
    x, tx = pair()
    e, t = ember.empty(3, 4, dtype=ember.complex128), torch.empty(3, 4, dtype=torch.complex128)
    e.copy_(x.conj())
    t.copy_(tx.conj())
    check(e, t)
    assert not e.is_conj()
    e32 = ember.empty(4, 3, dtype=ember.complex64).copy_(x.conj().t())
    check(e32, torch.empty(4, 3, dtype=torch.complex64).copy_(tx.conj().t()))


def test_in_place_between_a_conj_view_and_its_base():
    x, tx = pair()
    x.conj().add_(x)
    tx.conj().add_(tx)
    check(x, tx)
    x, tx = pair()
    x.add_(x.conj())
    tx.add_(tx.conj())
    check(x, tx)
    x, tx = pair()
    y, ty = x.conj(), tx.conj()
    y.copy_(y.clone())
    ty.copy_(ty.clone())
    check(x, tx)


# ---- readers outside the kernels --------------------------------------------------------------------------
def test_item_tolist_repr():
    x, tx = pair()
    y, ty = x.conj(), tx.conj()
    assert y[1, 2].item() == ty[1, 2].item()
    assert y.imag[0, 0].item() == ty.imag[0, 0].item()
    assert y.tolist() == ty.tolist() and y.t().tolist() == ty.t().tolist()
    assert y.imag.tolist() == ty.imag.tolist()
    assert float(y.imag[0, 1]) == float(ty.imag[0, 1]) and bool(y.imag[0, 1]) == bool(ty.imag[0, 1])
    e, t = ember.tensor([1 + 2j, 3 - 4j]).conj(), torch.tensor([1 + 2j, 3 - 4j]).conj()
    assert repr(e) == repr(t).replace('torch', 'ember') and str(e) == str(t)
    assert repr(e.imag) == repr(t.imag)


def test_numpy_refuses_lazy_bits_as_torch():
    x, tx = pair()
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that has conjugate bit set"):
        x.conj().numpy()
    with pytest.raises(RuntimeError, match="conjugate bit set"):
        np.asarray(x.conj())
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that has negative bit set"):
        x.conj().imag.numpy()
    np.testing.assert_array_equal(x.conj().numpy(force=True), tx.conj().numpy(force=True))
    np.testing.assert_array_equal(x.conj().imag.numpy(force=True), tx.conj().imag.numpy(force=True))
    np.testing.assert_array_equal(x.conj().resolve_conj().numpy(), tx.conj().resolve_conj().numpy())
    with pytest.raises(BufferError):
        memoryview(x.conj())


def test_dlpack_refuses_lazy_bits():
    x, _ = pair()
    with pytest.raises(RuntimeError, match="conjugate bit"):
        ember.utils.dlpack.to_dlpack(x.conj())
    with pytest.raises(RuntimeError, match="negative bit"):
        x.conj().imag.__dlpack__()
    back = torch.utils.dlpack.from_dlpack(x.conj().resolve_conj())
    np.testing.assert_array_equal(back.numpy(), A.conj())


@pytest.mark.parametrize('view', ['conj', 'conj_t', 'imag'])
def test_save_and_pickle_write_the_values(view, tmp_path):
    x, tx = pair()
    f = {'conj': lambda t: t.conj(), 'conj_t': lambda t: t.conj().t(), 'imag': lambda t: t.conj().imag}[view]
    y, ty = f(x), f(tx)
    buf = io.BytesIO()
    ember.save({'y': y, 'x': x}, buf)
    buf.seek(0)
    loaded = ember.load(buf)
    check(loaded['y'], ty.resolve_conj().resolve_neg())
    check(loaded['x'], tx)
    buf.seek(0)
    by_torch = torch.load(buf)  # torch reads what ember wrote: the values
    check(by_torch['y'], ty.resolve_conj().resolve_neg())
    check(pickle.loads(pickle.dumps(y)), ty.resolve_conj().resolve_neg())
    path = str(tmp_path / 'c.safetensors')
    ember.save({'y': y}, path)
    check(ember.load(path)['y'], ty.resolve_conj().resolve_neg())


def test_storage_shows_the_memory():
    x, tx = pair()
    assert x.conj().storage()[1] == tx.conj().storage()[1]
    assert x.conj().storage().tolist() == tx.storage().tolist()
    assert x.conj().untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_equal_allclose():
    x, tx = pair()
    assert ember.equal(x.conj(), x.conj_physical()) and not ember.equal(x.conj(), x)
    assert ember.allclose(x.conj().t(), x.conj_physical().t())
    assert torch.equal(tx.conj(), tx.conj_physical())


# ---- autograd -------------------------------------------------------------------------------------------
GRAD_FNS = {
    'conj_mul': lambda x, w: x.conj() * w, 'conj_t_mm': lambda x, w: x.conj().t() @ w,
    'mH_mm': lambda x, w: x.mH @ w, 'conj_real': lambda x, w: x.conj().real * w.real,
    'conj_imag': lambda x, w: x.conj().imag * w.imag, 'conj_slice_sum': lambda x, w: (x.conj()[1:] * w[1:]).sum(0),
    'conj_conj': lambda x, w: x.conj().conj() * w.conj(), 'conj_physical': lambda x, w: x.conj_physical() * w,
    'resolve': lambda x, w: x.conj().resolve_conj() / (w + 3), 'conj_abs': lambda x, w: (x.conj() - w).abs(),
    'vdot': lambda x, w: (x[0].conj() * w[0]).sum(), 'conj_expand': lambda x, w: x[:1].conj().expand(3, 4) * w,
}


@pytest.mark.parametrize('name', sorted(GRAD_FNS))
def test_gradcheck_through_conj_views(name):
    fn = GRAD_FNS[name]
    x = ember.tensor(A, dtype=ember.complex128, requires_grad=True)
    w = ember.tensor(B, dtype=ember.complex128, requires_grad=True)
    assert gradcheck(fn, (x, w))


@pytest.mark.parametrize('name', sorted(GRAD_FNS))
def test_grads_equal_torch(name):
    fn = GRAD_FNS[name]
    xs = [ember.tensor(a, dtype=ember.complex128, requires_grad=True) for a in (A, B)]
    ts = [torch.tensor(a, dtype=torch.complex128, requires_grad=True) for a in (A, B)]
    out, tout = fn(*xs), fn(*ts)
    check(out, tout, bits=False)
    cot = RNG.standard_normal(tuple(tout.shape)) + 1j * RNG.standard_normal(tuple(tout.shape))
    if not tout.is_complex():
        cot = cot.real
    out.backward(ember.tensor(cot, dtype=out.dtype))
    tout.backward(torch.tensor(cot, dtype=tout.dtype))
    for e, t in zip(xs, ts):
        check(e.grad, t.grad, bits=False)
        assert not e.grad.is_conj()


def test_conj_grad_fn_name_and_leaf_grad():
    x = ember.tensor(A, dtype=ember.complex128, requires_grad=True)
    y = x.conj()
    assert type(y.grad_fn).__name__ == 'ConjBackward0' and y.requires_grad
    (y * 2j).abs().sum().backward()
    tx = torch.tensor(A, dtype=torch.complex128, requires_grad=True)
    (tx.conj() * 2j).abs().sum().backward()
    check(x.grad, tx.grad, bits=False)
    assert not x.grad.is_conj()


@pytest.mark.parametrize('write', ['mul_', 'copy_', 'add_other'])
def test_in_place_through_conj_view_grads(write):
    """An in-place write into a conjugate view of a non-leaf: the base's gradient (CopySlices across the bit)."""
    def run(lib):
        x = lib.tensor(A, dtype=lib.complex128, requires_grad=True)
        w = lib.tensor(B, dtype=lib.complex128, requires_grad=True)
        base = x * 1
        y = base.conj()
        {'mul_': lambda: y.mul_(w), 'copy_': lambda: y[1].copy_(w[0]), 'add_other': lambda: y.add_(w.conj())}[write]()
        (base * lib.tensor(A, dtype=lib.complex128)).abs().sum().backward()
        return x.grad, w.grad, base
    (gx, gw, b), (tgx, tgw, tb) = run(ember), run(torch)
    check(b, tb, bits=False)
    check(gx, tgx, bits=False)
    check(gw, tgw, bits=False)


def test_saved_conj_view_modified_in_place_is_detected():
    x = ember.tensor(A, dtype=ember.complex128, requires_grad=True)
    base = x * 1
    y = base.conj()
    z = y * y
    base.add_(1)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        z.abs().sum().backward()


def _add_i(q_in, q_out):
    t = q_in.get()
    q_out.put((t.is_conj(), t.tolist()))
    t.add_(1j)  # through the conjugate view into the sender's memory


def test_conj_view_between_processes():
    """A conjugate view sent through a queue keeps its bit over the shared memory."""
    import ember.multiprocessing as emp
    x = ember.tensor([1 + 2j, 3 - 4j])
    q_in, q_out = emp.Queue(), emp.Queue()
    p = emp.Process(target=_add_i, args=(q_in, q_out))
    p.start()
    q_in.put(x.conj())
    assert q_out.get(timeout=20) == (True, [1 - 2j, 3 + 4j])
    p.join(20)
    assert x.tolist() == [1 + 1j, 3 - 5j]


NEG_VIEW_OPS = {
    'sort': lambda lib, n, i: lib.sort(n, 1)[0], 'topk': lambda lib, n, i: lib.topk(n, 2)[0],
    'argmax': lambda lib, n, i: n.argmax(1), 'cumsum': lambda lib, n, i: n.cumsum(1), 'clamp': lambda lib, n, i: n.clamp(-1, 1),
    'softmax': lambda lib, n, i: lib.nn.functional.softmax(n, 1), 'linear': lambda lib, n, i: lib.nn.functional.linear(n, n),
    'embedding': lambda lib, n, i: lib.nn.functional.embedding(i, n.t()), 'masked_select': lambda lib, n, i: n[n > 0],
    'index_fill': lambda lib, n, i: n.index_fill(1, i, 9.), 'median': lambda lib, n, i: n.median(),
    'scatter_add_src': lambda lib, n, i: lib.zeros(2, 3, dtype=lib.float64).scatter_add_(1, i.expand(2, 2).contiguous(), n[:, :2]),
    'index_copy_src': lambda lib, n, i: lib.zeros(2, 3, dtype=lib.float64).index_copy(1, i, n[:, :2]),
    'index_add_src': lambda lib, n, i: lib.zeros(2, 3, dtype=lib.float64).index_add(1, i, n[:, :2]),
    'put_src': lambda lib, n, i: lib.zeros(6, dtype=lib.float64).put(i, n[0, :2]),
    'masked_scatter': lambda lib, n, i: lib.zeros(2, 3, dtype=lib.float64).masked_scatter(n > 0, n),
    'gather': lambda lib, n, i: n.gather(1, i.expand(2, 2)), 'unique': lambda lib, n, i: lib.unique(n),
    'histc': lambda lib, n, i: lib.histc(n, 4), 'logsumexp': lambda lib, n, i: lib.logsumexp(n, 1),
}


@pytest.mark.parametrize('name', sorted(NEG_VIEW_OPS))
def test_real_ops_of_negative_views(name):
    """x.conj().imag (a negative view) through real-only kernels and as a scatter source."""
    a = A[:2, :3]
    e = NEG_VIEW_OPS[name](ember, ember.tensor(a).conj().imag, ember.tensor([2, 0]))
    t = NEG_VIEW_OPS[name](torch, torch.tensor(a).conj().imag, torch.tensor([2, 0]))
    check(e, t)


def test_scatter_sources_with_the_conj_bit():
    x, tx = pair()
    i, ti = ember.tensor([3, 0]), torch.tensor([3, 0])
    for f in (lambda lib, t, i: lib.zeros(3, 4, dtype=lib.complex128).index_add_(1, i, t[:, :2]),
              lambda lib, t, i: lib.zeros(3, 4, dtype=lib.complex128).scatter_add_(1, i.expand(3, 2).contiguous(), t)):
        check(f(ember, x.conj(), i), f(torch, tx.conj(), ti))
