"""Memory formats (channels_last, channels_last_3d, preserve_format) vs PyTorch 1.13: the strides
and values of contiguous/clone/to/the dtype shortcuts/empty/*_like, is_contiguous, which ops keep
channels_last (conv2d, batch norm, 2-d pooling, upsampling), the layout of leaves' .grad, and
Module.to(memory_format=)."""
import io
import pickle

import numpy as np
import pytest
import torch

import ember

FORMATS = ('contiguous_format', 'channels_last', 'channels_last_3d', 'preserve_format')


def build(m, shape, how):
    """The same tensor in both libraries: arange values, then a layout given by `how`."""
    n = int(np.prod(shape)) if shape else 1
    t = m.arange(float(n)).reshape(shape) / 7
    for step in how:
        kind, arg = step
        if kind == 'permute':  # physical order `arg`, logical order kept
            inv = [arg.index(i) for i in range(len(arg))]
            t = t.permute(*arg).contiguous().permute(*inv)
        elif kind == 'fmt':
            t = t.contiguous(memory_format=getattr(m, arg))
        elif kind == 'slice':  # every arg[1]-th element of dim arg[0]
            idx = [slice(None)] * t.dim()
            idx[arg[0]] = slice(None, None, arg[1])
            t = t[tuple(idx)]
        elif kind == 'expand':
            t = t.expand(*arg)
    return t


INPUTS = [
    ((2, 3, 4, 5), ()),
    ((2, 3, 4, 5), (('fmt', 'channels_last'),)),
    ((2, 3, 4, 5), (('permute', (0, 3, 1, 2)),)),  # NWCH in memory: dense, neither format
    ((2, 1, 4, 5), ()),  # C == 1: contiguous and channels_last at once
    ((2, 1, 4, 5), (('fmt', 'channels_last'),)),
    ((2, 3, 1, 1), (('fmt', 'channels_last'),)),
    ((3, 1, 1, 1), ()),  # N111: ambiguous, stays contiguous
    ((1, 3, 4, 1), (('fmt', 'channels_last'),)),
    ((2, 3, 0, 4), ()),
    ((2, 8, 4, 5), (('fmt', 'channels_last'), ('slice', (1, 2)))),  # holes, channels innermost
    ((2, 3, 6, 5), (('fmt', 'channels_last'), ('slice', (2, 2)))),
    ((4, 5, 6), (('permute', (2, 0, 1)), ('slice', (1, 2)))),  # 3-d with holes, permuted
    ((1, 3, 1, 1), (('expand', (2, 3, 4, 5)),)),  # overlapping
    ((2, 3, 4), ()),
    ((2, 3, 4, 5, 6), ()),
    ((2, 3, 4, 5, 6), (('fmt', 'channels_last_3d'),)),
    ((2, 3, 4, 5, 6), (('fmt', 'channels_last_3d'), ('slice', (3, 2)))),
]
IDS = [f'{s}-{"-".join(k + str(a) for k, a in h) or "plain"}' for s, h in INPUTS]


def outcome(fn):
    """(strides, values) of fn()'s tensor, or the exception type it raised."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - compared by type
        return type(e).__name__
    if isinstance(r, bool):
        return r
    return tuple(r.stride()), str(r.dtype).split('.')[-1], np.asarray(r.detach().tolist(), dtype=np.float64).round(5).tolist()


def same(fn, shape, how):
    t = build(torch, shape, how)
    e = build(ember, shape, how)
    assert e.stride() == t.stride() and e.shape == t.shape
    want, got = outcome(lambda: fn(torch, t)), outcome(lambda: fn(ember, e))
    assert got == want


@pytest.mark.parametrize('shape,how', INPUTS, ids=IDS)
@pytest.mark.parametrize('fmt', FORMATS)
def test_contiguous_clone_is_contiguous(shape, how, fmt):
    same(lambda m, x: x.contiguous(memory_format=getattr(m, fmt)), shape, how)
    same(lambda m, x: x.clone(memory_format=getattr(m, fmt)), shape, how)
    same(lambda m, x: x.is_contiguous(memory_format=getattr(m, fmt)), shape, how)
    same(lambda m, x: x.contiguous(memory_format=getattr(m, fmt)) is x if fmt != 'preserve_format' else True,
         shape, how)


@pytest.mark.parametrize('shape,how', INPUTS, ids=IDS)
def test_defaults_keep_their_meaning(shape, how):
    same(lambda m, x: x.clone(), shape, how)  # preserve_format
    same(lambda m, x: x.contiguous(), shape, how)
    same(lambda m, x: x.is_contiguous(), shape, how)
    same(lambda m, x: x.double(), shape, how)
    same(lambda m, x: x.to(m.float16).float(), shape, how)


@pytest.mark.parametrize('shape,how', INPUTS, ids=IDS)
@pytest.mark.parametrize('fmt', FORMATS)
def test_to_and_dtype_shortcuts(shape, how, fmt):
    def f(m):
        return getattr(m, fmt)
    same(lambda m, x: x.to(memory_format=f(m)), shape, how)
    same(lambda m, x: x.to(memory_format=f(m)) is x, shape, how)  # aliases when the format is its suggested one
    same(lambda m, x: x.to(m.float64, memory_format=f(m)), shape, how)
    same(lambda m, x: x.to('cpu', m.float32, memory_format=f(m)) is x, shape, how)
    same(lambda m, x: x.to(x, copy=True, memory_format=f(m)), shape, how)
    same(lambda m, x: x.double(memory_format=f(m)), shape, how)
    same(lambda m, x: x.float(memory_format=f(m)) is x, shape, how)
    same(lambda m, x: x.long(memory_format=f(m)), shape, how)
    same(lambda m, x: x.cpu(memory_format=f(m)) is x, shape, how)


def same_strides(fn, shape, how):
    """fn gives tensors of the same strides (or raises the same exception type) in both; for the
    random factories, whose values differ."""
    def run(m):
        try:
            return tuple(fn(m, build(m, shape, how)).stride())
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
    assert run(ember) == run(torch)


@pytest.mark.parametrize('shape,how', INPUTS, ids=IDS)
@pytest.mark.parametrize('fmt', FORMATS + (None,))
def test_like_factories(shape, how, fmt):
    def kw(m):
        return {} if fmt is None else {'memory_format': getattr(m, fmt)}
    for name in ('empty_like', 'rand_like', 'randn_like'):
        same_strides(lambda m, x: getattr(m, name)(x, **kw(m)), shape, how)
    same_strides(lambda m, x: m.randint_like(x, 5, **kw(m)), shape, how)
    same(lambda m, x: m.full_like(x, 2.5, **kw(m)), shape, how)
    same(lambda m, x: m.zeros_like(x, dtype=m.float64, **kw(m)), shape, how)
    same(lambda m, x: m.ones_like(x, **kw(m)), shape, how)


@pytest.mark.parametrize('shape', [(2, 3, 4, 5), (2, 3, 0, 4), (2, 0, 3, 4), (2, 3, 4), (2, 3, 4, 5, 6), (1, 1, 1, 1)])
@pytest.mark.parametrize('fmt', FORMATS)
def test_empty_memory_format(shape, fmt):
    def run(m):
        try:
            return tuple(m.empty(shape, memory_format=getattr(m, fmt)).stride())
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
    assert run(ember) == run(torch)
    assert ember.empty(*shape, dtype=ember.float64).stride() == torch.empty(*shape).stride()


def test_channels_last_refusals_are_torchs():
    for m in (torch, ember):
        with pytest.raises(RuntimeError, match='required rank 4 tensor to use channels_last format'):
            m.ones(2, 3, 4).contiguous(memory_format=m.channels_last)
        with pytest.raises(RuntimeError, match='required rank 5 tensor to use channels_last_3d format'):
            m.ones(2, 3, 4, 5).clone(memory_format=m.channels_last_3d)
        with pytest.raises(RuntimeError, match='preserve memory format is unsupported by the contiguous operator'):
            m.ones(2, 3, 4, 5).transpose(1, 2).contiguous(memory_format=m.preserve_format)
        with pytest.raises(RuntimeError, match='unsupported memory format Preserve'):
            m.empty(2, 3, memory_format=m.preserve_format)
        with pytest.raises(TypeError):
            m.zeros(2, 3, 4, 5, memory_format=m.channels_last)
    with pytest.raises(NotImplementedError):  # PyTorch restrides out; Ember says it does not
        ember.empty(2, 3, 4, 5, out=ember.empty(0), memory_format=ember.channels_last)


def test_pointwise_results_follow_channels_last():
    for m in (torch, ember):
        x = m.ones(2, 3, 4, 5).contiguous(memory_format=m.channels_last)
        y = m.ones(2, 3, 4, 5)
        assert (x * 2).is_contiguous(memory_format=m.channels_last)
        assert (x + y).is_contiguous(memory_format=m.channels_last)
        assert m.relu(x).is_contiguous(memory_format=m.channels_last)
        assert m.nn.functional.dropout(x, 0.5).is_contiguous(memory_format=m.channels_last)


# ---- ops that keep channels_last, and their gradients ------------------------------------------
def rnd(m, *shape, seed, fmt=None):
    t = m.tensor(np.random.default_rng(seed).standard_normal(shape).tolist(), dtype=m.float64)
    return t.contiguous(memory_format=getattr(m, fmt)) if fmt else t


OPS = {
    'conv2d': (lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1), (2, 3, 6, 5), (4, 3, 3, 3)),
    'conv2d_groups': (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=3, stride=2), (2, 6, 7, 6), (3, 2, 3, 3)),
    'conv2d_1x1_C1': (lambda m, x, w: m.nn.functional.conv2d(x, w), (2, 1, 4, 5), (4, 1, 1, 1)),
    'conv_transpose2d': (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w), (2, 3, 4, 5), (3, 2, 3, 3)),
    'conv3d': (lambda m, x, w: m.nn.functional.conv3d(x, w), (2, 3, 4, 4, 5), (2, 3, 2, 2, 2)),
    'conv_transpose3d': (lambda m, x, w: m.nn.functional.conv_transpose3d(x, w), (1, 3, 3, 3, 4), (3, 2, 2, 2, 2)),
}


@pytest.mark.parametrize('name', list(OPS))
@pytest.mark.parametrize('fx,fw', [(None, None), ('x', None), (None, 'w'), ('x', 'w')])
def test_convolution_layout_values_and_grads(name, fx, fw):
    fn, xs, ws = OPS[name]
    fmt = 'channels_last' if len(xs) == 4 else 'channels_last_3d'
    outs = {}
    for m in (torch, ember):
        x = rnd(m, *xs, seed=1, fmt=fmt if fx else None).requires_grad_()
        w = rnd(m, *ws, seed=2, fmt=fmt if fw else None).requires_grad_()
        y = fn(m, x, w)
        (y * rnd(m, *y.shape, seed=3)).sum().backward()
        outs[m] = [(tuple(t.stride()), np.asarray(t.detach().tolist())) for t in (y, x.grad, w.grad)]
    for (ts, tv), (es, ev) in zip(outs[torch], outs[ember]):
        assert es == ts
        np.testing.assert_allclose(ev, tv, rtol=1e-10, atol=1e-10)


def test_unbatched_conv2d_with_a_channels_last_weight():
    def run(m):
        w = m.ones(4, 3, 3, 3).contiguous(memory_format=m.channels_last)
        return tuple(m.nn.functional.conv2d(m.ones(3, 4, 5), w).stride())
    assert run(ember) == run(torch)


NN = {
    'batch_norm_train': lambda m, x: m.nn.functional.batch_norm(x, m.zeros(x.shape[1], dtype=m.float64),
                                                                m.ones(x.shape[1], dtype=m.float64), training=True),
    'batch_norm_eval': lambda m, x: m.nn.functional.batch_norm(x, m.zeros(x.shape[1], dtype=m.float64) + 0.5,
                                                               m.ones(x.shape[1], dtype=m.float64) * 2),
    'max_pool': lambda m, x: (m.nn.functional.max_pool2d if x.dim() == 4 else m.nn.functional.max_pool3d)(x, 2),
    'max_pool_indices': lambda m, x: (m.nn.functional.max_pool2d if x.dim() == 4 else m.nn.functional.max_pool3d)(
        x, 2, return_indices=True)[1],
    'avg_pool': lambda m, x: (m.nn.functional.avg_pool2d if x.dim() == 4 else m.nn.functional.avg_pool3d)(x, 2),
    'adaptive_avg': lambda m, x: (m.nn.functional.adaptive_avg_pool2d if x.dim() == 4
                                  else m.nn.functional.adaptive_avg_pool3d)(x, 2),
    'adaptive_max': lambda m, x: (m.nn.functional.adaptive_max_pool2d if x.dim() == 4
                                  else m.nn.functional.adaptive_max_pool3d)(x, 2),
    'nearest': lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode='nearest'),
    'linear': lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode='bilinear' if x.dim() == 4
                                                       else 'trilinear', align_corners=False),
    'bicubic': lambda m, x: m.nn.functional.interpolate(x, scale_factor=2, mode='bicubic') if x.dim() == 4 else x * 1,
    'relu': lambda m, x: m.nn.functional.relu(x),
    'group_norm': lambda m, x: m.nn.functional.group_norm(x, 1),
    'pad_constant': lambda m, x: m.nn.functional.pad(x, (1, 2, 0, 1), value=0.5),
    'pad_reflect': lambda m, x: m.nn.functional.pad(x, (1, 1) * (x.dim() - 2), mode='reflect'),
}


@pytest.mark.parametrize('name', list(NN))
@pytest.mark.parametrize('shape,fmt', [((2, 3, 4, 6), 'channels_last'), ((2, 3, 4, 4, 6), 'channels_last_3d'),
                                       ((2, 3, 4, 6), None)])
def test_nn_ops_layout_values_and_grads(name, shape, fmt):
    outs = {}
    for m in (torch, ember):
        x = rnd(m, *shape, seed=4, fmt=fmt).requires_grad_()
        y = NN[name](m, x)
        if y.dtype == m.float64:
            (y * rnd(m, *y.shape, seed=5)).sum().backward()
        outs[m] = [(tuple(t.stride()), np.asarray(t.detach().tolist())) for t in (y, x.grad) if t is not None]
    assert len(outs[torch]) == len(outs[ember])
    for (ts, tv), (es, ev) in zip(outs[torch], outs[ember]):
        assert es == ts
        np.testing.assert_allclose(ev, tv, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize('leaf_fmt,through', [('channels_last', 'contiguous_format'),
                                              ('contiguous_format', 'channels_last'),
                                              ('channels_last', 'permute')])
def test_leaf_grad_takes_the_leafs_layout(leaf_fmt, through):
    def run(m):
        x = rnd(m, 2, 3, 4, 5, seed=6, fmt=leaf_fmt).requires_grad_()
        y = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2) if through == 'permute' else \
            x.contiguous(memory_format=getattr(m, through))
        (y * 3).sum().backward()
        first = tuple(x.grad.stride())
        (y * 2).sum().backward()  # accumulation keeps it
        return first, tuple(x.grad.stride()), x.grad.tolist()
    assert run(ember) == run(torch)


def test_module_to_memory_format():
    def run(m):
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4), m.nn.Flatten(), m.nn.Linear(4, 2))
        r = net.to(memory_format=m.channels_last)
        assert r is net and isinstance(net[0].weight, m.nn.Parameter)
        return [tuple(p.stride()) for p in net.parameters()]
    assert run(ember) == run(torch)


def test_small_cnn_trains_the_same_in_channels_last():
    """A CNN trained on channels_last inputs and weights gives the losses of the contiguous run (and
    of PyTorch's), with channels_last activations and gradients."""
    def train(m, fmt):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Conv2d(3, 8, 3, padding=1), m.nn.BatchNorm2d(8), m.nn.ReLU(), m.nn.MaxPool2d(2),
                              m.nn.Conv2d(8, 8, 3), m.nn.AdaptiveAvgPool2d(1), m.nn.Flatten(), m.nn.Linear(8, 3))
        net = net.double()
        rng = np.random.default_rng(7)
        for p in net.parameters():  # the same weights in both libraries
            p.data.copy_(m.tensor(rng.standard_normal(tuple(p.shape)).tolist(), dtype=m.float64) * 0.3)
        x = m.tensor(rng.standard_normal((6, 3, 8, 8)).tolist(), dtype=m.float64)
        target = m.tensor([0, 1, 2, 0, 1, 2])
        if fmt:
            net = net.to(memory_format=m.channels_last)
            x = x.contiguous(memory_format=m.channels_last)
        opt = m.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            feat = net[:4](x)
            if fmt:
                assert feat.is_contiguous(memory_format=m.channels_last)
            loss = m.nn.functional.cross_entropy(net[4:](feat), target)
            loss.backward()
            if fmt:
                assert net[0].weight.grad.is_contiguous(memory_format=m.channels_last)
            opt.step()
            losses.append(loss.item())
        return losses
    plain, cl = train(ember, False), train(ember, True)
    np.testing.assert_allclose(cl, plain, rtol=1e-10)
    np.testing.assert_allclose(cl, train(torch, True), rtol=1e-9)


def test_saving_and_pickling_keep_channels_last(tmp_path):
    x = ember.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)
    t = torch.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    for y in (pickle.loads(pickle.dumps(x)), ember.load(_saved(ember, x))):
        assert y.stride() == x.stride() and ember.equal(y, x)
    theirs = torch.load(_saved(ember, x))  # PyTorch reads Ember's file with the strides...
    assert theirs.stride() == t.stride() and torch.equal(theirs, t)
    ours = ember.load(_saved(torch, t))  # ...and the reverse
    assert ours.stride() == x.stride() and ember.equal(ours, x)


def _saved(m, x):
    buf = io.BytesIO()
    m.save(x, buf)
    buf.seek(0)
    return buf


def test_convert_conv2d_weight_memory_format():
    if not hasattr(ember.nn.utils, 'convert_conv2d_weight_memory_format'):
        pytest.skip('nn.utils.convert_conv2d_weight_memory_format comes from main (another branch)')
    def run(m):
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.Sequential(m.nn.ConvTranspose2d(4, 2, 3)),
                              m.nn.Conv1d(2, 2, 1), m.nn.Linear(2, 2))
        before = [p.detach().clone() for p in net.parameters()]
        assert m.nn.utils.convert_conv2d_weight_memory_format(net, m.channels_last) is net
        assert all(m.equal(a, p) for a, p in zip(before, net.parameters()))
        return [tuple(p.stride()) for p in net.parameters()]
    assert run(ember) == run(torch)


def test_random_layouts_suggest_and_preserve_as_torch():
    """Random 4-d and 5-d layouts (permuted, sliced, size-1 dims): the format they suggest (seen as
    to(memory_format=) aliasing), clone()'s preserved strides and is_contiguous(format) agree."""
    rng = np.random.default_rng(0)
    for _ in range(400):
        nd = int(rng.choice([4, 5]))
        shape = [int(rng.choice([1, 1, 2, 3])) for _ in range(nd)]
        step = [int(rng.choice([1, 1, 2])) for _ in range(nd)]
        perm = [int(p) for p in rng.permutation(nd)]

        def make(m):
            big = [s * k for s, k in zip(shape, step)]
            t = m.arange(float(np.prod(big))).reshape([big[p] for p in perm]).permute(*[perm.index(i) for i in range(nd)])
            return t[tuple(slice(None, None, k) for k in step)]

        def facts(m):
            t = make(m)
            f = getattr(m, 'channels_last' if nd == 4 else 'channels_last_3d')
            return tuple(t.stride()), t.to(memory_format=f) is t, tuple(t.clone().stride()), t.is_contiguous(memory_format=f)
        assert facts(ember) == facts(torch)
