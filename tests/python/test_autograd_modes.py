"""Anomaly detection, saved-tensor hooks and Variable against torch 1.13."""
import gc
import threading
import warnings

import pytest
import torch

import ember

both = pytest.mark.parametrize('m', [torch, ember], ids=['torch', 'ember'])


@both
def test_detect_anomaly_names_the_node(m):
    a = m.tensor([0.0, 1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with m.autograd.detect_anomaly():
            b = a / a
            with pytest.raises(RuntimeError, match=r"Function 'DivBackward0' returned nan values in its [01]th "
                                                   r"output\."):
                b.sum().backward()
    messages = [str(w.message) for w in caught]
    assert any(msg.startswith('Anomaly Detection has been enabled') for msg in messages)
    report = [msg for msg in messages if msg.startswith('Error detected in DivBackward0')]
    assert report and 'Traceback of forward call that caused the error' in report[0]
    assert 'b = a / a' in report[0]  # the forward line's stack
    assert not m.is_anomaly_enabled() if hasattr(m, 'is_anomaly_enabled') else True


@both
def test_anomaly_mode_off_lets_nan_through(m):
    a = m.tensor([0.0, 1.0], requires_grad=True)
    (a / a).sum().backward()
    assert a.grad[0].isnan().item()


@both
def test_set_detect_anomaly_function_and_check_nan(m):
    a = m.tensor([0.0], requires_grad=True)
    m.autograd.set_detect_anomaly(True, check_nan=False)
    try:
        (a / a).sum().backward()  # check_nan off: no error
    finally:
        m.autograd.set_detect_anomaly(False)
    with m.autograd.set_detect_anomaly(True):
        with pytest.raises(RuntimeError, match='returned nan values'):
            (a / a).sum().backward()
    (a / a).sum().backward()  # restored: off


def test_anomaly_state_functions():
    mod = ember.autograd.anomaly_mode
    assert not mod.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with ember.autograd.detect_anomaly(check_nan=False):
            assert mod.is_anomaly_enabled() and not mod.is_anomaly_check_nan_enabled()
    assert not mod.is_anomaly_enabled() and mod.is_anomaly_check_nan_enabled()


@both
def test_saved_tensors_hooks_pack_unpack(m):
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t * 1  # any object; here a copy

    def unpack(t):
        unpacked.append(tuple(t.shape))
        return t

    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sin()
    assert len(packed) == 3  # mul saves both inputs, sin its input
    assert not unpacked
    y.sum().backward()
    assert len(unpacked) == 3
    expect = (2 * x * (x * x).cos()).tolist()
    assert x.grad.tolist() == pytest.approx(expect)


@both
def test_saved_tensors_hooks_change_values(m):
    # the unpacked value is what backward uses: a doubled saved tensor doubles the gradient
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
        y = x * x
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 8.0]


@both
def test_saved_tensors_hooks_nesting_and_custom_function(m):
    log = []

    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = m.tensor([3.0], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(lambda t: log.append('outer') or t, lambda t: t):
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append('inner') or t, lambda t: t):
            y = Square.apply(x)
        z = y.exp()
    z.backward()
    assert log == ['inner', 'outer']
    assert x.grad.item() == pytest.approx(6 * float(torch.tensor(9.0).exp()))


@both
def test_save_on_cpu(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with m.autograd.graph.save_on_cpu():
        y = (x.exp() * x).sum()
    y.backward()
    assert x.grad.tolist() == pytest.approx([(v.exp() * (1 + v)).item() for v in torch.tensor([1.0, 2.0])])


@both
def test_unpack_hook_must_return_tensor(m):
    x = m.tensor([1.0], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 'nope'):
        y = x * x
    with pytest.raises(TypeError, match='Output of saved tensor unpack_hook expected to be a Tensor'):
        y.backward()


@both
def test_pack_hook_error_propagates(m):
    def pack(t):
        raise ValueError('pack failed')
    x = m.tensor([1.0], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with pytest.raises(RuntimeError, match='ValueError: pack failed'):
            x * x

    def unpack(t):
        raise KeyError('unpack failed')
    with m.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        y = x * x
    with pytest.raises(RuntimeError, match="KeyError: 'unpack failed'"):
        y.backward()


@both
def test_hooks_are_per_thread(m):
    log = []
    x = m.tensor([1.0], requires_grad=True)

    def other():
        (x * x).sum()
    with m.autograd.graph.saved_tensors_hooks(lambda t: log.append(1) or t, lambda t: t):
        th = threading.Thread(target=other)
        th.start()
        th.join()
    assert log == []


def test_disable_saved_tensors_hooks():
    for m in (torch, ember):
        with m.autograd.graph.disable_saved_tensors_hooks('no hooks here'):
            with pytest.raises(RuntimeError, match='no hooks here'):
                with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass


def test_packed_objects_are_freed():
    class Box:
        pass
    boxes = []

    def pack(t):
        b = Box()
        b.t = t
        boxes.append(__import__('weakref').ref(b))
        return b
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(pack, lambda b: b.t):
        y = (x * x).sum()
    y.backward()
    del y
    gc.collect()
    assert boxes and all(r() is None for r in boxes)


@both
def test_variable(m):
    from importlib import import_module
    Variable = import_module(m.__name__ + '.autograd').Variable
    a = m.ones(2)
    v = Variable(a, requires_grad=True)
    assert v is not a and v.requires_grad and not a.requires_grad and type(v) is m.Tensor
    assert isinstance(a, Variable)
    b = m.ones(2, requires_grad=True) * 2
    assert Variable(b).grad_fn is None
    with pytest.raises(TypeError, match='Variable data has to be a tensor, but got list'):
        Variable([1, 2])
    v.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0]


@both
def test_once_differentiable(m):
    from importlib import import_module
    once_differentiable = import_module(m.__name__ + '.autograd.function').once_differentiable

    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g

    x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
    y = Cube.apply(x).sum()
    g, = m.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and not g.requires_grad  # nothing it got required grad
    w = m.ones((), dtype=m.float64, requires_grad=True)
    g, = m.autograd.grad(y, x, w, create_graph=True)
    assert g.tolist() == [3.0, 12.0] and g.requires_grad
    with pytest.raises(RuntimeError, match='trying to differentiate twice a function that was marked with '
                                           '@once_differentiable'):
        g.sum().backward()
    x.grad = None
    Cube.apply(x).sum().backward()  # a plain backward is unaffected
    assert x.grad.tolist() == [3.0, 12.0]


@both
def test_top_level_anomaly_switches(m):
    assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
    m.set_anomaly_enabled(True, check_nan=False)
    try:
        assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
    finally:
        m.set_anomaly_enabled(False)
    assert not m.is_anomaly_enabled() and m.is_anomaly_check_nan_enabled()
