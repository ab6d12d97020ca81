"""The torch namespaces around the ops (issue 14), against torch 1.13: cuda without a GPU,
backends, random, testing, utils.checkpoint, nn.parallel, hub, jit, amp, legacy tensor types,
Size, memory formats and the global switches."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NO_CUDA = 'Ember not compiled with CUDA enabled'


def run_fresh(code):
    """Runs code in a fresh interpreter with only `import ember` done (lazy loading)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python'))
    r = subprocess.run([sys.executable, '-c', 'import ember\n' + code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


# ---- importable the way programs import them ----
def test_lazy_attribute_access_after_import_ember():
    out = run_fresh('print(ember.cuda.is_available(), ember.utils.data.DataLoader.__name__, '
                    'ember.nn.parallel.DataParallel.__name__, ember.backends.cudnn.enabled, '
                    'ember.utils.checkpoint.checkpoint.__name__, ember.FloatTensor.__name__, ember.version.cuda)')
    assert out.split() == ['False', 'DataLoader', 'DataParallel', 'True', 'checkpoint', 'FloatTensor', 'None']


def test_import_forms():
    out = run_fresh('import ember.backends.cudnn as cudnn\nimport ember.nn.parallel\n'
                    'from ember.utils.data import DataLoader\nfrom ember.cuda.amp import GradScaler, autocast\n'
                    'from ember import FloatTensor\nimport ember.testing, ember.hub, ember.jit, ember.random\n'
                    'print(cudnn.is_available())')
    assert out.strip() == 'False'


def test_import_adds_no_eager_modules():
    out = run_fresh('import sys; print(sorted(m for m in sys.modules if m.startswith("ember.") and m.split(".")[1] '
                    'in ("cuda", "backends", "testing", "hub", "jit", "amp", "_legacy", "_toplevel", "random")))')
    assert out.strip() == '[]'


# ---- cuda without a GPU ----
def test_cuda_queries_match_torch():
    for name in ('is_available', 'device_count', 'is_initialized', 'get_arch_list', 'get_gencode_flags',
                 'memory_allocated', 'max_memory_allocated', 'memory_reserved', 'max_memory_reserved',
                 'memory_stats', 'memory_stats_as_nested_dict', 'get_rng_state_all', 'seed', 'seed_all',
                 'empty_cache'):
        assert getattr(ember.cuda, name)() == getattr(torch.cuda, name)(), name
    ember.cuda.manual_seed(1)
    ember.cuda.manual_seed_all(1)


@pytest.mark.parametrize('call', [
    lambda c: c.current_device(), lambda c: c.get_device_name(), lambda c: c.synchronize(),
    lambda c: c.get_device_capability(), lambda c: c.get_rng_state(), lambda c: c.initial_seed(),
    lambda c: c.init(), lambda c: c.mem_get_info(), lambda c: c.current_stream(), lambda c: c.is_bf16_supported(),
    lambda c: c.set_device(0), lambda c: c.Stream(), lambda c: c.Event()])
def test_cuda_gpu_calls_raise(call):
    # torch 1.13 raises AssertionError here; Ember the RuntimeError of tensor.cuda() (issue 14)
    with pytest.raises(RuntimeError, match=NO_CUDA):
        call(ember.cuda)


def test_cuda_gpu_calls_raise_where_torch_does():
    for name in ('current_device', 'get_device_name', 'synchronize', 'get_device_capability', 'get_rng_state',
                 'initial_seed', 'init', 'mem_get_info', 'current_stream', 'is_bf16_supported'):
        with pytest.raises(AssertionError, match='Torch not compiled with CUDA enabled'):
            getattr(torch.cuda, name)()


def test_tensor_and_module_cuda_raise_the_same_error():
    x = ember.ones(2)
    for f in (lambda: x.cuda(), lambda: x.to('cuda'), lambda: ember.zeros(2, device='cuda'),
              lambda: ember.nn.Linear(2, 2).cuda(), lambda: x.type('torch.cuda.FloatTensor'),
              lambda: ember.cuda.FloatTensor(2)):
        with pytest.raises(RuntimeError, match=NO_CUDA):
            f()
    assert str(ember.device('cuda')) == str(torch.device('cuda')) == 'cuda'
    assert ember.device('cuda', 1).index == 1 and ember.device('cuda:1').type == 'cuda'
    assert not isinstance(x, ember.cuda.FloatTensor)


def test_cuda_device_context_is_noop_for_none_and_oom_error_type():
    with ember.cuda.device(None):
        pass
    with ember.cuda.device(-1):
        pass
    assert issubclass(ember.cuda.OutOfMemoryError, RuntimeError)


def test_cuda_amp_disables_itself_like_torch():
    with pytest.warns(UserWarning, match='CUDA is not available'):
        scaler = ember.cuda.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.5)
    loss = (w * 3).sum()
    assert scaler.scale(loss) is loss
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [-0.5, -0.5]
    with pytest.warns(UserWarning, match="device_type of 'cuda', but CUDA is not available"):
        with ember.cuda.amp.autocast():
            assert not ember.is_autocast_enabled()


def test_autocast_cpu_disabled_regions():
    # enabled regions are tested against torch in test_autocast.py
    with ember.autocast(device_type='cpu', enabled=False):
        assert not ember.is_autocast_cpu_enabled()

    @ember.autocast('cpu', enabled=False)
    def f(x):
        return x + 1
    assert f(ember.ones(1)).item() == 2
    with pytest.raises(RuntimeError, match="must be 'cuda' or 'cpu'"):
        ember.autocast('tpu')
    assert ember.get_autocast_cpu_dtype() == ember.bfloat16 and not ember.is_autocast_cpu_enabled()


# ---- backends ----
def test_backends_flags_and_queries():
    b, tb = ember.backends, torch.backends
    assert b.cudnn.is_available() is False and b.cudnn.version() is None
    assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32) == \
        (tb.cudnn.enabled, tb.cudnn.benchmark, tb.cudnn.deterministic, tb.cudnn.allow_tf32)
    assert b.mps.is_available() is False and b.mps.is_built() is False and b.openmp.is_available()
    assert b.cuda.is_built() is False
    assert b.cuda.matmul.allow_tf32 == tb.cuda.matmul.allow_tf32
    assert b.cuda.matmul.allow_fp16_reduced_precision_reduction == \
        tb.cuda.matmul.allow_fp16_reduced_precision_reduction
    assert b.mkldnn.is_available() is ember._C._has_mkldnn()
    assert b.opt_einsum.is_available() == tb.opt_einsum.is_available()
    assert b.opt_einsum.strategy == tb.opt_einsum.strategy and b.mkl.is_available() is False


def test_backends_flags_context_managers_restore():
    cudnn = ember.backends.cudnn
    cudnn.benchmark = True
    try:
        with cudnn.flags(enabled=True, benchmark=False, deterministic=True):
            assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, True)
        assert cudnn.benchmark is True and cudnn.deterministic is False
    finally:
        cudnn.benchmark = False
    with ember.backends.mkldnn.flags(enabled=False):
        assert ember.backends.mkldnn.enabled is False
    assert ember.backends.mkldnn.enabled is True
    with pytest.raises(AssertionError, match='Unknown attribute'):
        ember.backends.cuda.matmul.allow_nothing = True
    with ember.backends.cuda.sdp_kernel(enable_flash=False):
        assert not ember.backends.cuda.flash_sdp_enabled()
    assert ember.backends.cuda.flash_sdp_enabled()


# ---- random ----
def test_random_fork_rng():
    ember.manual_seed(5)
    with ember.random.fork_rng():
        a = ember.rand(3)
    b = ember.rand(3)
    assert ember.equal(a, b)
    with ember.random.fork_rng(enabled=False):
        c = ember.rand(3)
    assert not ember.equal(b, c)
    with pytest.raises(RuntimeError, match=NO_CUDA):
        with ember.random.fork_rng(devices=[0]):
            pass
    state = ember.random.get_rng_state()
    x = ember.rand(2)
    ember.random.set_rng_state(state)
    assert ember.equal(x, ember.rand(2))
    ember.random.manual_seed(7)
    assert ember.random.initial_seed() == 7


# ---- testing ----
ASSERT_CASES = [
    ([1., 2., 3.], [1., 2.5, 3.], {}),
    ([1, 2, 3], [1, 3, 3], {}),
    ([1., 2.], [1., 2., 3.], {}),
    ([[1., 2.], [3., 4.]], [[1., 2.], [3., 5.]], {}),
    ([1., float('nan')], [1., float('nan')], {}),
    ([1., float('nan')], [1., float('nan')], dict(equal_nan=True)),
    ([0., 1.], [1e-9, 2.], {}),
    ([True, False], [True, True], {}),
    ([1., 2.], [1.001, 2.], dict(rtol=1e-2, atol=0.)),
    ([1., 2.], [1.001, 2.], dict(rtol=0., atol=1e-4)),
    ([[1., 2.], [3., 4.]], [[1., 2.], [3., 5.]], dict(msg='custom')),
    (3.5, 3.5, {}),
]


def _assert_close_outcome(lib, actual, expected, kw, dtype=None):
    to = (lambda v: lib.tensor(v, dtype=dtype)) if isinstance(actual, list) else (lambda v: v)
    try:
        lib.testing.assert_close(to(actual), to(expected), **kw)
        return None
    except Exception as e:
        return type(e).__name__, str(e).replace('torch.', 'ember.')


@pytest.mark.parametrize('actual,expected,kw', ASSERT_CASES)
def test_assert_close_matches_torch(actual, expected, kw):
    assert _assert_close_outcome(ember, actual, expected, kw) == _assert_close_outcome(torch, actual, expected, kw)


@pytest.mark.parametrize('name', ['float16', 'bfloat16', 'float64'])
def test_assert_close_default_tolerances_per_dtype(name):
    for delta in (1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 5e-2):
        a, e = [1., 2.], [1. + delta, 2.]
        assert (_assert_close_outcome(ember, a, e, {}, getattr(ember, name)) is None) == \
            (_assert_close_outcome(torch, a, e, {}, getattr(torch, name)) is None), delta


def test_assert_close_nested_and_errors():
    def outcome(lib, a, e, **kw):
        try:
            lib.testing.assert_close(a, e, **kw)
        except Exception as ex:
            return type(ex).__name__, str(ex).replace('torch.', 'ember.').replace('ember._tensor.', 'ember.')
    for lib_args in [
            lambda L: ([L.tensor(1.), L.tensor(2.)], [L.tensor(1.), L.tensor(3.)]),
            lambda L: ({'a': L.tensor(1.)}, {'a': L.tensor(3.)}),
            lambda L: (L.tensor([1., 2.]), L.tensor([1., 2.], dtype=L.float64)),
            lambda L: (L.tensor([1., 2.]), 1.0),
            lambda L: ([1, 2], [1, 2, 3]),
            lambda L: ('a', 'a'),
            lambda L: (1.0, 1.5),
            lambda L: (L.tensor([1., 2.]), np.array([1., 2.], dtype=np.float32))]:
        assert outcome(ember, *lib_args(ember)) == outcome(torch, *lib_args(torch))
    assert outcome(ember, ember.tensor([1.]), ember.tensor([1.]), rtol=1e-3) == \
        outcome(torch, torch.tensor([1.]), torch.tensor([1.]), rtol=1e-3)
    assert outcome(ember, ember.tensor([1.]), ember.tensor([2.]), msg=lambda m: 'X' + m[:6]) == ('AssertionError',
                                                                                                 'XTensor')
    ember.testing.assert_close(ember.tensor([1., 2.]), ember.tensor([1., 2.], dtype=ember.float64), check_dtype=False)
    with pytest.raises(AssertionError, match="'stride\\(\\)' do not match"):
        ember.testing.assert_close(ember.ones(2, 2).t(), ember.ones(2, 2), check_stride=True)
    with pytest.warns(FutureWarning):
        ember.testing.assert_allclose(ember.tensor([1., float('nan')]), [1., float('nan')])


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int8', 'uint8', 'bool'])
def test_make_tensor(dtype):
    dt = getattr(ember, dtype)
    t = ember.testing.make_tensor(3, 4, dtype=dt, device='cpu')
    assert t.shape == (3, 4) and t.dtype == dt
    if dtype != 'bool':
        lo, hi = {'uint8': (0, 10), 'int64': (-9, 10), 'int8': (-9, 10)}.get(dtype, (-9, 9))
        assert t.min().item() >= lo and t.max().item() < hi
        t = ember.testing.make_tensor((50,), dtype=dt, device='cpu', low=2, high=3, exclude_zero=True)
        assert t.min().item() >= 2 and t.max().item() <= 3
    t = ember.testing.make_tensor((3, 4), dtype=dt, device='cpu', noncontiguous=True)
    assert not t.is_contiguous()
    if dt.is_floating_point:
        assert ember.testing.make_tensor(2, dtype=dt, device='cpu', requires_grad=True).requires_grad
    else:
        with pytest.raises(ValueError, match='requires_grad must be False'):
            ember.testing.make_tensor(2, dtype=dt, device='cpu', requires_grad=True)
    with pytest.raises(ValueError, match='low must be weakly less than high'):
        ember.testing.make_tensor(2, dtype=ember.float32, device='cpu', low=3, high=1)
    assert ember.testing.make_tensor(100, dtype=ember.float32, device='cpu', exclude_zero=True).ne(0).all()


# ---- utils.checkpoint ----
class Counted(ember.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = ember.nn.Linear(5, 5)
        self.drop = ember.nn.Dropout(0.5)
        self.calls = 0

    def forward(self, x, scale=1.0):
        self.calls += 1
        return self.drop(self.lin(x)).tanh() * scale


@pytest.mark.parametrize('use_reentrant', [True, False])
def test_checkpoint_recomputes_with_the_same_dropout_mask(use_reentrant):
    from ember.utils.checkpoint import checkpoint
    ember.manual_seed(0)
    m = Counted()
    x = ember.randn(4, 5, requires_grad=True)
    ember.manual_seed(3)
    m(x).pow(2).sum().backward()
    want = (x.grad.clone(), m.lin.weight.grad.clone(), m.lin.bias.grad.clone())
    x.grad = None
    m.zero_grad()
    m.calls = 0
    ember.manual_seed(3)
    y = checkpoint(m, x, use_reentrant=use_reentrant)
    assert m.calls == 1
    y.pow(2).sum().backward()
    assert m.calls == 2
    for got, expected in zip((x.grad, m.lin.weight.grad, m.lin.bias.grad), want):
        assert ember.allclose(got, expected, atol=1e-6)


def test_checkpoint_non_reentrant_kwargs_and_no_input_grad():
    from ember.utils.checkpoint import checkpoint
    m = Counted()
    m.eval()
    x = ember.randn(2, 5)
    checkpoint(m, x, scale=2.0, use_reentrant=False).sum().backward()
    assert m.lin.weight.grad is not None and m.calls == 2
    with pytest.raises(ValueError, match='Unexpected keyword'):
        checkpoint(m, x, scale=2.0, use_reentrant=True)
    with pytest.warns(UserWarning, match='None of the inputs have requires_grad=True'):
        checkpoint(m, x, use_reentrant=True)


def test_checkpoint_without_preserving_rng_state_draws_a_new_mask():
    from ember.utils.checkpoint import checkpoint
    m = Counted()
    x = ember.ones(64, 5, requires_grad=True)
    ember.manual_seed(1)
    y = checkpoint(m, x, preserve_rng_state=False)
    y.sum().backward()
    ember.manual_seed(1)
    x2 = ember.ones(64, 5, requires_grad=True)
    m(x2).sum().backward()
    assert not ember.allclose(x.grad, x2.grad)


def test_checkpoint_sequential_matches_plain():
    from ember.utils.checkpoint import checkpoint_sequential
    ember.manual_seed(0)
    seq = ember.nn.Sequential(*[ember.nn.Linear(4, 4) if k % 2 == 0 else ember.nn.Tanh() for k in range(6)])
    x = ember.randn(3, 4, requires_grad=True)
    seq(x).sum().backward()
    want = x.grad.clone(), seq[0].weight.grad.clone()
    x.grad = None
    seq.zero_grad()
    y = checkpoint_sequential(seq, 3, x)
    assert ember.allclose(y, seq(x))
    y.sum().backward()
    assert ember.allclose(x.grad, want[0]) and ember.allclose(seq[0].weight.grad, want[1])


# ---- nn.parallel ----
def test_data_parallel_runs_on_the_cpu_like_torch():
    ember.manual_seed(0)
    lin = ember.nn.Linear(3, 2)
    dp = ember.nn.DataParallel(lin)
    tdp = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    assert dp.module is lin and dp.device_ids == tdp.device_ids == []
    assert list(dp.state_dict()) == list(tdp.state_dict()) == ['module.weight', 'module.bias']
    x = ember.randn(4, 3)
    assert ember.equal(dp(x), lin(x))
    assert ember.equal(ember.nn.parallel.data_parallel(lin, x), lin(x))
    outs = ember.nn.parallel.parallel_apply([lin, lin], [x, x])
    assert ember.equal(ember.nn.parallel.gather(outs, 'cpu'), ember.cat([lin(x), lin(x)]))
    with pytest.raises(RuntimeError, match='Default process group has not been initialized'):
        ember.nn.parallel.DistributedDataParallel(lin)  # as torch's; tests/python/test_distributed.py runs it


# ---- hub ----
def test_hub_local_and_cache(tmp_path, monkeypatch):
    repo = tmp_path / 'repo'
    repo.mkdir()
    (repo / 'hubconf.py').write_text(
        'dependencies = ["ember"]\nimport ember\n'
        'def tiny(n=2):\n    """A tiny linear model."""\n    return ember.nn.Linear(n, 1)\n'
        'def _private():\n    pass\n')
    assert ember.hub.list(str(repo), source='local') == ['tiny']
    assert ember.hub.help(str(repo), 'tiny', source='local') == 'A tiny linear model.'
    assert ember.hub.load(str(repo), 'tiny', 3, source='local').in_features == 3
    with pytest.raises(RuntimeError, match='Cannot find callable nope'):
        ember.hub.load(str(repo), 'nope', source='local')
    with pytest.raises(ValueError, match='Unknown source'):
        ember.hub.load(str(repo), 'tiny', source='gitlab')
    monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'home'))
    assert ember.hub.get_dir() == str(tmp_path / 'home' / 'hub') == torch.hub.get_dir()
    ember.hub.set_dir(str(tmp_path / 'hub'))
    try:
        with pytest.raises(RuntimeError, match='not in the hub cache'):
            ember.hub.load('owner/models', 'tiny')
        os.makedirs(tmp_path / 'hub' / 'owner_models_main')
        (tmp_path / 'hub' / 'owner_models_main' / 'hubconf.py').write_text((repo / 'hubconf.py').read_text())
        assert ember.hub.load('owner/models', 'tiny').in_features == 2
        os.makedirs(tmp_path / 'hub' / 'checkpoints')
        ember.save({'w': ember.arange(3)}, str(tmp_path / 'hub' / 'checkpoints' / 'w-abc.pt'))
        sd = ember.hub.load_state_dict_from_url('https://example.invalid/models/w-abc.pt')
        assert sd['w'].tolist() == [0, 1, 2]
        with pytest.raises(RuntimeError, match='could not download'):
            ember.hub.load_state_dict_from_url('http://127.0.0.1:9/missing.pt')
        src = tmp_path / 'src.bin'
        src.write_bytes(b'hello')
        ember.hub.download_url_to_file(src.as_uri(), str(tmp_path / 'dst.bin'), hash_prefix='2cf24d')
        assert (tmp_path / 'dst.bin').read_bytes() == b'hello'
        with pytest.raises(RuntimeError, match='invalid hash value'):
            ember.hub.download_url_to_file(src.as_uri(), str(tmp_path / 'dst2.bin'), hash_prefix='00')
        assert not (tmp_path / 'dst2.bin').exists()
    finally:
        ember.hub._hub_dir = None


# ---- jit, compile ----
def test_jit_is_eager():
    @ember.jit.script
    def f(x):
        return x * 2

    @ember.jit.ignore
    def g(x):
        return x + 1

    @ember.jit.unused
    def h(x):
        return x

    m = ember.nn.Linear(2, 2)
    assert ember.jit.script(m) is m and ember.jit.trace(m, ember.ones(1, 2)) is m
    assert f(ember.ones(1)).item() == 2 and g(1) == 2 and h(3) == 3
    assert ember.jit.ignore(drop=True)(g) is g and ember.jit.export(g) is g
    assert not ember.jit.is_scripting() and not ember.jit.is_tracing()
    assert ember.jit.annotate(list, [1]) == [1]
    assert ember.jit.wait(ember.jit.fork(f, ember.ones(1))).item() == 2
    with pytest.raises(NotImplementedError, match='torch.jit.save'):
        ember.jit.save(m, 'x.pt')
    with pytest.raises(NotImplementedError, match='torch.jit.load'):
        ember.jit.load('x.pt')


def test_compile_returns_the_model_with_one_note():
    m = ember.nn.Linear(2, 2)
    ember._toplevel._compile_noted[0] = False
    with pytest.warns(UserWarning, match='unchanged'):
        assert ember.compile(m) is m
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert ember.compile(m, mode='max-autotune') is m

        @ember.compile()
        def f(x):
            return x
        assert f(3) == 3


# ---- legacy tensor types, Size, layouts, switches ----
LEGACY = ['FloatTensor', 'DoubleTensor', 'HalfTensor', 'BFloat16Tensor', 'LongTensor', 'IntTensor', 'ShortTensor',
          'CharTensor', 'ByteTensor', 'BoolTensor']


@pytest.mark.parametrize('name', LEGACY)
def test_legacy_types(name):
    E, T = getattr(ember, name), getattr(torch, name)
    assert str(E.dtype).split('.')[1] == str(T.dtype).split('.')[1]
    assert E(2, 3).shape == T(2, 3).shape and E(ember.Size([4])).shape == (4,) and E().shape == (0,)
    assert E([1, 0]).tolist() == T([1, 0]).tolist() and E([1, 0]).dtype == E.dtype
    e = ember.zeros(2, dtype=E.dtype)
    assert isinstance(e, E) and not isinstance(ember.zeros(2, dtype=ember.float64 if name != 'DoubleTensor'
                                                          else ember.float32), E)
    assert e.type() == torch.zeros(2, dtype=T.dtype).type() == 'torch.' + name
    assert ember.ones(2).type(E).dtype == E.dtype and ember.ones(2).type('torch.' + name).dtype == E.dtype
    assert ember.ones(2).type('ember.' + name).dtype == E.dtype
    assert ember.typename(e) == torch.typename(torch.zeros(2, dtype=T.dtype))
    with pytest.raises(TypeError):
        E(ember.zeros(2, dtype=ember.float32 if name != 'FloatTensor' else ember.int64))


def test_type_returns_self_when_unchanged_and_default_tensor_type():
    x = ember.ones(2)
    assert x.type(ember.FloatTensor) is x and x.type(ember.float32) is x
    with pytest.raises(ValueError, match='invalid type'):
        x.type('torch.NoSuchTensor')
    try:
        ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.get_default_dtype() == ember.float64 and ember.tensor([1.]).dtype == ember.float64
        ember.set_default_tensor_type('torch.FloatTensor')
        assert ember.get_default_dtype() == ember.float32
    finally:
        ember.set_default_dtype(ember.float32)


def test_size_semantics_match_torch():
    e, t = ember.Size([2, 3, 4]), torch.Size([2, 3, 4])
    for f in (lambda s: s[1:], lambda s: s + (5,), lambda s: s * 2, lambda s: 2 * s, lambda s: s[::-1],
              lambda s: (1,) + s, lambda s: s[0], lambda s: s.numel(), lambda s: s[-1]):
        re, rt = f(e), f(t)
        assert type(re).__name__ == type(rt).__name__ and tuple(re) if isinstance(re, tuple) else re == rt
        assert (tuple(re) if isinstance(re, tuple) else re) == (tuple(rt) if isinstance(rt, tuple) else rt)
    assert repr(e) == 'ember.Size([2, 3, 4])' and ember.ones(2, 3).shape[1:] == ember.Size([3])


def test_memory_formats_layouts_and_switches():
    assert ember.ones(2).layout == ember.strided and ember.ones(2).layout == 'strided'
    for name in ('contiguous_format', 'channels_last', 'channels_last_3d', 'preserve_format'):
        assert isinstance(getattr(ember, name), ember.memory_format)
    assert isinstance(ember.strided, ember.layout)
    import pickle
    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last
    assert not ember.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert ember.are_deterministic_algorithms_enabled() and ember.is_deterministic_algorithms_warn_only_enabled()
        assert ember.get_deterministic_debug_mode() == 1
    finally:
        ember.use_deterministic_algorithms(False)
    assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == 'highest'
    ember.set_float32_matmul_precision('high')
    try:
        assert ember.get_float32_matmul_precision() == 'high'
    finally:
        ember.set_float32_matmul_precision('highest')
    with pytest.raises(RuntimeError):
        ember.set_float32_matmul_precision('low')
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()
    ember.set_warn_always(False)
    assert ember.set_flush_denormal(True) == torch.set_flush_denormal(True)
    assert ember.tensor([1e-40], dtype=ember.float32).item() == torch.tensor([1e-40]).item() == 0.0
    ember.set_flush_denormal(False)
    torch.set_flush_denormal(False)
    assert ember.tensor([1e-40], dtype=ember.float32).item() != 0.0
    assert ember.is_grad_enabled() and not ember.is_storage(ember.ones(1))
    assert ember.typename(1) == torch.typename(1) == 'int'
    assert ember.version.__version__ == ember.__version__ and ember.version.cuda is None
    assert ember.has_cuda is False and ember.has_openmp and ember.inf == torch.inf and ember.pi == torch.pi
    assert 'OpenBLAS' in ember.__config__.show()
