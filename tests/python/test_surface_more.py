"""The smaller names of torch 1.13's namespaces (nn.functional's helpers, nn, autograd, testing,
profiler...), each checked against torch 1.13."""
import pytest
import torch

import ember
from helpers import to_ember


def test_conv_tbc_matches_torch_with_gradients():
    g = torch.Generator().manual_seed(0)
    x, w, b = (torch.randn(*s, generator=g, dtype=torch.float64, requires_grad=True) for s in ((7, 2, 3), (3, 3, 4), (4,)))
    for pad in (0, 1, 2):
        ref = torch.conv_tbc(x, w, b, pad)
        ref.sum().backward()
        ex, ew, eb = (to_ember(t.detach()).requires_grad_(True) for t in (x, w, b))
        out = ember.nn.functional.conv_tbc(ex, ew, eb, pad)
        out.sum().backward()
        assert tuple(out.shape) == tuple(ref.shape)
        assert torch.allclose(torch.tensor(out.tolist(), dtype=torch.float64), ref.detach())
        for e, t in ((ex, x), (ew, w), (eb, b)):
            assert torch.allclose(torch.tensor(e.grad.tolist(), dtype=torch.float64), t.grad)
            t.grad = None
    assert ember.autograd.gradcheck(lambda a, c, d: ember.nn.functional.conv_tbc(a, c, d, 1),
                                    (ex.detach().requires_grad_(), ew.detach().requires_grad_(),
                                     eb.detach().requires_grad_()))
    with pytest.raises(RuntimeError):
        ember.nn.functional.conv_tbc(ex, ew[:, :2], eb)


def test_functional_helpers_match_torch():
    F, TF = ember.nn.functional, torch.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    assert F.Tensor is ember.Tensor and ember.nn.init.Tensor is ember.Tensor
    assert F.BroadcastingList2[int] == TF.BroadcastingList2[int]
    assert set(F.reproducibility_notes) == set(TF.reproducibility_notes) and set(F.tf32_notes) == set(TF.tf32_notes)
    for lib in (F, TF):
        lib.assert_int_or_pair(3, 'k', 'bad {}')
        lib.assert_int_or_pair((1, 2), 'k', 'bad {}')
        with pytest.raises(AssertionError, match='bad k'):
            lib.assert_int_or_pair((1, 2, 3), 'k', 'bad {}')

        def yes(a, flag=False):
            """doc"""
            return ('yes', a)

        def no(a, flag=False):
            return ('no', a)
        fn = lib.boolean_dispatch('flag', 1, False, yes, no, 'm', 'pick')
        assert (fn(1), fn(1, True), fn(1, flag=True), fn.__name__, fn.__module__, fn.__doc__, no.__doc__) == \
            (('no', 1), ('yes', 1), ('yes', 1), 'pick', 'm', 'doc', 'doc')


def _members(enum_type):
    return list(enum_type.__members__)


def test_autograd_and_profiler_enums_match_torch():
    A, TA = ember.autograd, torch.autograd
    assert _members(A.DeviceType) == _members(TA.DeviceType)
    assert [A.DeviceType[n].value for n in _members(A.DeviceType)] == [int(TA.DeviceType.__members__[n])
                                                                       for n in _members(TA.DeviceType)]
    assert _members(A.ProfilerState) == _members(TA.ProfilerState)
    assert _members(A.ProfilerActivity) == _members(TA.ProfilerActivity)
    assert A.ProfilerActivity is ember.profiler.ProfilerActivity
    assert _members(ember.profiler.RecordScope) == _members(torch.profiler.RecordScope)
    assert A.kineto_available() is False and ember.profiler.kineto_available() is False
    assert A.has_torch_function is ember.overrides.has_torch_function
    assert A.is_tensor_like(ember.ones(1)) and not A.is_tensor_like([1])
    assert A.handle_torch_function is ember.overrides.handle_torch_function
    assert ember.profiler.profile().__class__ is not None


def test_legacy_profiler_events():
    A = ember.autograd
    with pytest.raises(TypeError):
        A.ProfilerConfig('CPU', False, False, False, False, False)
    config = A.ProfilerConfig(A.ProfilerState.CPU, True, False, False, False, False, None)
    A._enable_profiler_legacy(config)
    with pytest.raises(RuntimeError):
        A._enable_profiler_legacy(config)
    x = ember.ones(3, requires_grad=True)
    with ember.profiler.record_function('mine'):
        (x * 2).sum().backward()
    (events,) = A._disable_profiler_legacy()
    with pytest.raises(RuntimeError):
        A._disable_profiler_legacy()
    assert all(isinstance(e, A.ProfilerEvent) for e in events)
    pushes = [e for e in events if e.kind() == 'push']
    assert len(pushes) * 2 == len(events)
    names = [e.name() for e in pushes]
    assert 'mul' in names and 'SumBackward0' in names and 'mine' in names
    scopes = {e.name(): e.scope() for e in pushes}
    assert scopes['mul'] == ember.profiler.RecordScope.FUNCTION.value
    assert scopes['SumBackward0'] == ember.profiler.RecordScope.BACKWARD_FUNCTION.value
    assert scopes['mine'] == ember.profiler.RecordScope.USER_SCOPE.value
    mul = next(e for e in pushes if e.name() == 'mul')
    end = next(e for e in events if e.kind() == 'pop' and e.handle() == mul.handle())
    assert mul.shapes() == [[3], []] and mul.cpu_elapsed_us(end) >= 0 and mul.device() == 0
    assert not mul.has_cuda() and mul.thread_id() == end.thread_id()


def test_execution_graph_observer(tmp_path):
    import json
    o = ember.profiler.ExecutionGraphObserver()
    with pytest.raises(RuntimeError):
        o.get_output_file_path()
    o.register_callback(str(tmp_path / 'eg.json'))
    assert o.get_output_file_path() == str(tmp_path / 'eg.json')
    o.start()
    x = ember.ones(2, 3)
    with ember.profiler.record_function('block'):
        (x @ x.t()).relu()
    o.stop()
    o.unregister_callback()
    nodes = json.loads((tmp_path / 'eg.json').read_text())['nodes']
    by_name = {n['name']: n for n in nodes}
    assert by_name['mm']['input_shapes'] == [[2, 3], [3, 2]]
    assert by_name['mm']['parent'] == by_name['block']['id'] and by_name['block']['parent'] == nodes[0]['id']


def _ember_all(ts):
    return [to_ember(t.detach()).requires_grad_(t.requires_grad) for t in ts]


def _close(e, t):
    return torch.allclose(torch.tensor(e.tolist(), dtype=torch.float64), t.detach(), atol=1e-10)


@pytest.mark.parametrize('name,module', [('rnn_tanh', 'RNN'), ('rnn_relu', 'RNN'), ('lstm', 'LSTM'), ('gru', 'GRU')])
@pytest.mark.parametrize('bidirectional,batch_first,packed', [(False, False, False), (True, True, False),
                                                              (True, False, True)])
def test_functional_rnns_match_torch(name, module, bidirectional, batch_first, packed):
    torch.manual_seed(0)
    kwargs = {'nonlinearity': 'relu' if name == 'rnn_relu' else 'tanh'} if module == 'RNN' else {}
    m = getattr(torch.nn, module)(4, 5, num_layers=2, bidirectional=bidirectional, dtype=torch.float64, **kwargs)
    params = [p.detach().requires_grad_() for p in m._flat_weights]
    d = 2 if bidirectional else 1
    x = torch.randn(3, 6, 4, dtype=torch.float64, requires_grad=True)
    h = torch.randn(2 * d, 6, 5, dtype=torch.float64, requires_grad=True)
    hx = (h, torch.randn_like(h).requires_grad_()) if name == 'lstm' else h
    hx_list = list(hx) if name == 'lstm' else [hx]
    ep, ex, ehx = _ember_all(params), _ember_all([x])[0], _ember_all(hx_list)
    ehx_arg = tuple(ehx) if name == 'lstm' else ehx[0]
    if packed:
        lengths = [3, 3, 2, 2, 1, 1]
        pseq = torch.nn.utils.rnn.pack_padded_sequence(x, lengths)
        ref = getattr(torch, name)(pseq.data, pseq.batch_sizes, hx, params, True, 2, 0.0, False, bidirectional)
        eseq = ember.nn.utils.rnn.pack_padded_sequence(ex, lengths)
        mine = getattr(ember, name)(eseq.data, eseq.batch_sizes, ehx_arg, ep, True, 2, 0.0, False, bidirectional)
    else:
        xin, exin = (x.transpose(0, 1), ex.transpose(0, 1)) if batch_first else (x, ex)
        ref = getattr(torch, name)(xin, hx, params, True, 2, 0.0, False, bidirectional, batch_first)
        mine = getattr(ember, name)(exin, ehx_arg, ep, True, 2, 0.0, False, bidirectional, batch_first)
    assert len(mine) == len(ref) and all(_close(a, b) for a, b in zip(mine, ref))
    sum(r.sum() for r in ref).backward()
    sum(r.sum() for r in mine).backward()
    for e, t in zip([ex] + ehx + ep, [x] + hx_list + params):
        assert _close(e.grad, t.grad)


def test_functional_rnn_bad_params():
    x, h = ember.zeros(2, 1, 3), ember.zeros(1, 1, 4)
    with pytest.raises(RuntimeError):
        ember.gru(x, h, [ember.zeros(12, 3)], True, 1, 0.0, False, False, False)


def test_disable_global_flags_matches_torch():
    script = r'''
import importlib, sys
torch = importlib.import_module(sys.argv[1])
r = [torch.backends.flags_frozen()]
torch.backends.cudnn.benchmark = True
torch.backends.disable_global_flags()
r.append(torch.backends.flags_frozen())
for m, n, v in [('cudnn', 'benchmark', False), ('cudnn', 'benchmark_limit', 5), ('cudnn', 'allow_tf32', False),
                ('cudnn', 'deterministic', True), ('cudnn', 'enabled', True), ('mkldnn', 'enabled', False),
                ('opt_einsum', 'enabled', False)]:
    try:
        setattr(getattr(torch.backends, m), n, v)
        r.append('ok')
    except RuntimeError as e:
        r.append(str(e))
with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True):
    r += [torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic]
r += [torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic, torch.backends.flags_frozen()]
with torch.backends.mkldnn.flags(enabled=False):
    r.append(torch.backends.mkldnn.enabled)
r.append(torch.backends.mkldnn.enabled)
print(repr(r).replace('ember', 'torch'))
'''
    import subprocess
    import sys
    outs = [subprocess.run([sys.executable, '-c', script, lib], capture_output=True, text=True, timeout=120)
            for lib in ('ember', 'torch')]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    assert outs[0].stdout == outs[1].stdout


def _state_from_torch(module, ref):
    module.load_state_dict({k: to_ember(v) for k, v in ref.state_dict().items()})


def _t(x):
    return torch.tensor(x.tolist(), dtype=torch.float64)


@pytest.mark.parametrize('cutoffs,head_bias', [([2, 5], False), ([3], True), ([1, 4, 8], False)])
def test_adaptive_log_softmax_matches_torch(cutoffs, head_bias):
    torch.manual_seed(0)
    ref = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs, div_value=2., head_bias=head_bias, dtype=torch.float64)
    mine = ember.nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs, div_value=2., head_bias=head_bias,
                                               dtype=ember.float64)
    assert str(mine) == str(ref)
    _state_from_torch(mine, ref)
    x = torch.randn(12, 16, dtype=torch.float64)
    target = torch.tensor([0, 9, 1, 2, 5, 7, 3, 3, 8, 0, 4, 6])
    r = ref(x, target)
    ex = to_ember(x).requires_grad_()
    m = mine(ex, to_ember(target))
    assert type(m).__name__ == '_ASMoutput' and torch.allclose(_t(m.output), r.output.detach())
    assert torch.allclose(_t(m.loss), r.loss.detach())
    r.loss.backward()
    m.loss.backward()
    for (name, p), (_, q) in zip(mine.named_parameters(), ref.named_parameters()):
        assert torch.allclose(_t(p.grad), q.grad), name
    assert torch.allclose(_t(mine.log_prob(to_ember(x))), ref.log_prob(x).detach())
    assert mine.predict(to_ember(x)).tolist() == ref.predict(x).tolist()
    one = mine(to_ember(x[0]), to_ember(target[0]))
    assert one.output.dim() == 0 and torch.allclose(_t(one.output), ref(x[0], target[0]).output.detach())
    assert mine.log_prob(to_ember(x[0])).shape == (10,)


def test_adaptive_log_softmax_errors():
    A = ember.nn.AdaptiveLogSoftmaxWithLoss
    for bad in ([5, 2], [0, 3], [3, 3], [10], []):
        with pytest.raises(ValueError):
            A(8, 10, bad)
    m = A(8, 10, [2, 5])
    with pytest.raises(RuntimeError, match='Target values'):
        m(ember.zeros(2, 8), ember.tensor([1, 10]))
    with pytest.raises(RuntimeError, match='same size'):
        m(ember.zeros(3, 8), ember.tensor([1, 2]))
    with pytest.raises(RuntimeError):
        m(ember.zeros(2, 8), ember.zeros(2, 2, dtype=ember.int64))


@pytest.mark.parametrize('size', [2, 3, 4, 5])
def test_cross_map_lrn2d_matches_torch(size):
    torch.manual_seed(0)
    x = torch.randn(2, 7, 3, 4, dtype=torch.float64, requires_grad=True)
    ref = torch.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)
    mine = ember.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)
    assert str(mine) == str(ref)
    ex = to_ember(x.detach()).requires_grad_()
    out, rout = mine(ex), ref(x)
    assert torch.allclose(_t(out), rout.detach())
    g = torch.randn_like(rout)
    rout.backward(g)
    out.backward(to_ember(g))
    assert torch.allclose(_t(ex.grad), x.grad)
    with pytest.raises(AssertionError):
        mine(ember.zeros(2, 3, 4))


def test_container_factory_kwargs_and_conv_memory_format():
    with pytest.warns(UserWarning, match='deprecated'):
        c = ember.nn.Container(a=ember.nn.Linear(2, 3))
    with pytest.warns(UserWarning):
        tc = torch.nn.Container(a=torch.nn.Linear(2, 3))
    assert str(c) == str(tc) and [n for n, _ in c.named_modules()] == [n for n, _ in tc.named_modules()]
    for lib in (ember, torch):
        fk = lib.nn.factory_kwargs
        assert fk(None) == {} and fk({'dtype': lib.float64}) == {'dtype': lib.float64}
        assert fk({'device': 'cpu', 'factory_kwargs': {'dtype': lib.int32}}) == {'device': 'cpu', 'dtype': lib.int32}
        with pytest.raises(TypeError):
            fk({'bogus': 1})
        with pytest.raises(TypeError):
            fk({'dtype': lib.float32, 'factory_kwargs': {'dtype': lib.float64}})
    model = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.ReLU(), ember.nn.Sequential(ember.nn.Conv2d(4, 2, 1)),
                                ember.nn.Linear(2, 2))
    before = [p.detach().clone() for p in model.parameters()]
    assert ember.nn.utils.convert_conv2d_weight_memory_format(model, ember.channels_last) is model
    # the weights take the layout contiguous(memory_format=) gives (NHWC strides where Ember has them)
    for w in (model[0].weight, model[2][0].weight):
        assert w.stride() == ember.zeros(w.shape).contiguous(memory_format=ember.channels_last).stride()
        assert isinstance(w, ember.nn.Parameter)
    assert all(ember.equal(a, b) for a, b in zip(before, model.parameters()))
    assert ember.optim.lr_scheduler.inf == torch.optim.lr_scheduler.inf


def _names(dtypes):
    return [str(d).split('.')[-1] for d in dtypes]


def test_testing_dtype_lists_match_torch():
    import warnings
    T, E = torch.testing, ember.testing
    have_complex = hasattr(ember, 'complex64')

    def theirs(dtypes):  # torch's list, less the complex dtypes where Ember has none
        return [n for n in _names(dtypes) if have_complex or not n.startswith('complex')]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        for kwargs in ({}, {'include_half': False}, {'include_bfloat16': False, 'include_bool': False},
                       {'include_complex': False}):
            assert _names(E.get_all_dtypes(**kwargs)) == theirs(T.get_all_dtypes(**kwargs))
        for device in ('cpu', 'cuda'):
            assert _names(E.get_all_math_dtypes(device)) == theirs(T.get_all_math_dtypes(device))
        assert _names(E.double_types()) == theirs(T.double_types())
        assert _names(E.get_all_complex_dtypes()) == theirs(T.get_all_complex_dtypes())
        if have_complex:
            assert _names(E.all_types_and_complex()) == _names(T.all_types_and_complex())
    with pytest.raises(NotImplementedError):
        E.get_all_dtypes(include_qint=True)


def test_output_nr_and_retains_grad_match_torch():
    def scenario(lib):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2, t * 3

            @staticmethod
            def backward(ctx, ga, gb):
                return ga * 2 + gb * 3
        x = lib.ones(2, requires_grad=True)
        a, b = Two.apply(x)
        y = x * 2
        r = [a.output_nr, b.output_nr, x.output_nr, x.retains_grad, y.retains_grad, y.output_nr]
        y.retain_grad()
        r += [y.retains_grad, lib.ones(1).retains_grad, lib.ones(1).output_nr]
        m, i = lib.tensor([[1., 3.], [2., 0.]], requires_grad=True).max(1)
        r += [m.output_nr, i.output_nr, y[0].output_nr]
        x.retain_grad()
        r.append(x.retains_grad)
        try:
            x.retains_grad = True
            r.append('set')
        except AttributeError:
            r.append('AttributeError')
        return r
    assert scenario(ember) == scenario(torch)


def test_top_level_odds_and_ends():
    assert issubclass(ember.FatalError, Exception) and ember.FatalError.__mro__[1:] == torch.FatalError.__mro__[1:]
    assert ember.compiled_with_cxx11_abi() is True
    s = ember.Stream()
    assert s.device.type == torch.Stream().device.type == 'cpu'
    with pytest.raises(TypeError):
        hash(s)
    with pytest.raises(TypeError):
        hash(torch.Stream())
    assert isinstance(ember.DisableTorchFunction(), ember.DisableTorchFunction)
    with pytest.raises(RuntimeError, match='CUDA'):
        ember.cuda.FloatStorage(2)
    assert not isinstance(ember.zeros(1).storage(), ember.cuda.FloatStorage)
    assert [getattr(ember.cuda, n).dtype for n in ('LongStorage', 'BFloat16Storage')] == [ember.int64, ember.bfloat16]


def test_nested_io_function():
    class AddMul(ember.autograd.NestedIOFunction):
        def forward_extended(self, pair, scale):
            a, b = pair
            self.save_for_backward([a, b], scale)
            return a + b, [a * scale, b * scale]

        def backward_extended(self, g_sum, g_scaled):
            (a, b), scale = self.saved_tensors
            ga, gb = g_scaled
            assert self.needs_input_grad == (True, True, False)
            return [g_sum + ga * scale, g_sum + gb * scale], None

    a, b = ember.tensor([1., 2.], requires_grad=True), ember.tensor([3., 4.], requires_grad=True)
    scale = ember.tensor([10., 20.])
    s, (sa, sb) = AddMul()((a, b), scale)
    assert s.tolist() == [4., 6.] and sa.tolist() == [10., 40.] and sb.tolist() == [30., 80.]
    (s.sum() + sa.sum() + 2 * sb.sum()).backward()
    assert a.grad.tolist() == [11., 21.] and b.grad.tolist() == [21., 41.]

    class Single(ember.autograd.NestedIOFunction):
        def forward_extended(self, x):
            return x * 3

        def backward_extended(self, g):
            return g * 3
    x = ember.ones(2, requires_grad=True)
    y = Single()(x)
    y.sum().backward()
    assert isinstance(y, ember.Tensor) and x.grad.tolist() == [3., 3.]
    with pytest.raises(NotImplementedError):
        ember.autograd.NestedIOFunction()(x)


def test_saved_tensors_of_nodes_match_torch():
    def scenario(lib):
        x = lib.ones(2, requires_grad=True)
        w = lib.full((2,), 3., requires_grad=True)
        y = x * w
        r = [y.grad_fn._saved_self.tolist(), y.grad_fn._saved_other.tolist()]
        z = x.exp()
        r += [z.grad_fn._saved_result.tolist(), type(z.grad_fn._saved_result.grad_fn).__name__]
        try:
            z.grad_fn._saved_self
            r.append('no error')
        except AttributeError:
            r.append('AttributeError')
        log = []
        raw = y.grad_fn._raw_saved_other
        r.append(type(raw).__name__)
        raw.register_hooks(lambda t: (log.append('pack'), t * 2)[1], lambda t: (log.append('unpack'), t)[1])
        r.append(list(log))
        for pack in ((lambda t: t, lambda t: t), (1, 2)):
            try:
                raw.register_hooks(*pack)
                r.append('no error')
            except (RuntimeError, TypeError) as e:
                r.append(type(e).__name__)
        y.sum().backward()
        r += [list(log), x.grad.tolist()]  # the unpacked `other` was doubled by the hooks
        for get in (lambda: y.grad_fn._saved_self, lambda: y.grad_fn._raw_saved_self.register_hooks(abs, abs)):
            try:
                get()
                r.append('no error')
            except RuntimeError as e:
                r.append(str(e)[:40])
        return r
    assert scenario(ember) == scenario(torch)
