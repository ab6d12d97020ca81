"""Hostile arguments: the cases issue 13 found, each against torch 1.13, and a
fixed sample of the sweep (tests/hostile/sweep.py; `make test-hostile` runs
all of it): no crash, no hang, no huge dim or size silently accepted, and the
same exception type as PyTorch where both raise."""
import os
import subprocess
import sys

import pytest
import torch

import ember
import ember.nn.functional as F
import torch.nn.functional as TF

HERE = os.path.dirname(os.path.abspath(__file__))
SWEEP = os.path.join(HERE, '..', 'hostile', 'sweep.py')


def raises_as_torch(call, *, exc=None):
    """call(lib) raises the same exception type on ember as on torch (exc if given)."""
    try:
        call(torch)
        expected = None
    except Exception as e:  # noqa: B902
        expected = type(e)
    if exc is not None:
        assert expected is not None and issubclass(expected, exc)
    with pytest.raises(expected) as info:
        call(ember)
    return info


@pytest.mark.parametrize('op', [
    lambda m, x: x.transpose(2 ** 32, 1), lambda m, x: x.swapaxes(2 ** 32, 1), lambda m, x: x.select(2 ** 32, 0),
    lambda m, x: x.unsqueeze(2 ** 32), lambda m, x: x.narrow(2 ** 32, 0, 1), lambda m, x: x.chunk(2, 2 ** 32),
    lambda m, x: x.split(1, 2 ** 32), lambda m, x: x.unbind(2 ** 32), lambda m, x: x.sum(2 ** 62),
    lambda m, x: x.transpose(-2 ** 31 - 1, 0), lambda m, x: x.flatten(0, 2 ** 40), lambda m, x: x.movedim(2 ** 40, 0),
    lambda m, x: x.unfold(2 ** 40, 1, 1), lambda m, x: m.tensor_split(x, 2, 2 ** 40),
])
def test_huge_dim_is_index_error(op):
    raises_as_torch(lambda m: op(m, m.arange(6.).reshape(2, 3)), exc=IndexError)


@pytest.mark.parametrize('op', [
    lambda m, x: x.add(2 ** 63), lambda m, x: m.add(x, -2 ** 63 - 1), lambda m, x: x + 2 ** 63,
    lambda m, x: x.sum(2 ** 63), lambda m, x: x.view(2 ** 63), lambda m, x: m.zeros(2 ** 63),
    lambda m, x: x.reshape(2, -2 ** 63 - 1),
])
def test_int_beyond_int64_is_runtime_error(op):
    # PyTorch's "Overflow when unpacking long" is a RuntimeError (a TypeError for some int lists)
    info = raises_as_torch(lambda m: op(m, m.ones(2, 3)))
    assert info.type in (RuntimeError, TypeError)


def test_sizes_checked():
    raises_as_torch(lambda m: m.zeros(-1), exc=RuntimeError)
    raises_as_torch(lambda m: m.zeros(2 ** 62, 2 ** 62), exc=RuntimeError)  # the byte count overflows


def test_tensor_split_huge_count_raises_without_hanging():
    x = ember.ones(2, 3)
    with pytest.raises(RuntimeError):
        ember.tensor_split(x, 2 ** 31)
    with pytest.raises(RuntimeError):
        x.tensor_split(2 ** 62)
    assert len(ember.tensor_split(x, 5)) == 5  # empty sections past the size, as PyTorch
    with pytest.raises(TypeError):
        ember.tensor_split(x, 'ab')


def test_combinations_huge_r():
    x = ember.arange(3.)
    raises_as_torch(lambda m: m.combinations(m.arange(3.), 2 ** 32), exc=RuntimeError)
    with pytest.raises(RuntimeError):
        ember.combinations(x, 2 ** 31, with_replacement=True)
    assert ember.combinations(x, 1000).shape == (0, 1000)  # none, without a table of r slots per row


def test_pixel_shuffle_huge_factor():
    # (torch 1.13 itself dies of SIGFPE here: r * r overflows to 0)
    with pytest.raises(RuntimeError, match='divisible'):
        ember.pixel_shuffle(ember.ones(1, 2, 4, 4), 2 ** 32)


def test_type_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' \(position 1\) must be Tensor, not NoneType"):
        ember.exp(None)
    with pytest.raises(TypeError, match=r"allclose\(\): argument 'input' \(position 1\) must be Tensor"):
        ember.allclose(None, ember.ones(1))
    raises_as_torch(lambda m: m.allclose(None, m.ones(1)), exc=TypeError)
    raises_as_torch(lambda m: m.isclose(m.ones(1), 1), exc=TypeError)
    raises_as_torch(lambda m: m.ones(2, 3).sum(1, keepdim=m.tensor(True)), exc=TypeError)
    raises_as_torch(lambda m: m.ones(2, 3).sum(dim=m.tensor(1)), exc=TypeError)


def test_functionals_match_torch_on_none():
    x = ember.ones(2, 3)
    for name in ('mse_loss', 'l1_loss', 'relu', 'softmax', 'linear'):
        raises_as_torch(lambda m: getattr(TF if m is torch else F, name)(None, m.ones(2, 3)))
    assert x.shape == (2, 3)


def test_layout_and_memory_format_refuse_other_values():
    raises_as_torch(lambda m: m.zeros(2, layout=3), exc=TypeError)
    raises_as_torch(lambda m: m.zeros(2, layout='strided'), exc=TypeError)
    raises_as_torch(lambda m: m.ones(2).clone(memory_format='x'), exc=TypeError)
    raises_as_torch(lambda m: m.empty_like(m.ones(2), memory_format=3), exc=TypeError)
    if hasattr(ember, 'strided'):  # the objects (ember/_memory_format.py) are accepted
        assert ember.zeros(2, layout=ember.strided).shape == (2,)
        assert ember.ones(2).clone(memory_format=ember.contiguous_format).shape == (2,)


def test_sweep_sample():
    """A fixed sample of the sweep: every 25th callable, in crash-isolated workers."""
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, '..', '..', 'python'))
    run = subprocess.run([sys.executable, SWEEP, '--sample', '25', '--seed', '3', '--show', '20'], env=env,
                         capture_output=True, text=True, timeout=600)
    print(run.stdout, run.stderr[-3000:])
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]


@pytest.mark.parametrize('op', [
    lambda m, x: x.sum('a'), lambda m, x: m.gather(x, 'a', m.zeros(2, 3, dtype=m.int64)), lambda m, x: x.flip('a'),
    lambda m, x: x.transpose('a', 0), lambda m, x: x.cumsum(0, dim=1), lambda m, x: x.add(x, out=x),
    lambda m, x: m.heaviside(x, 1), lambda m, x: m.gcd(x.long(), 2), lambda m, x: x.clamp_min(2 ** 63),
])
def test_exception_type_as_torch(op):
    # a str dim is a dim name to PyTorch where the op has a named overload (RuntimeError), else a wrong type;
    # a repeated argument, out= on a method, a number where only a Tensor is taken: TypeError
    raises_as_torch(lambda m: op(m, m.ones(2, 3)))


@pytest.mark.parametrize('shape', [(3,), (0,), (3, 3), (2, 3, 3, 1)])
@pytest.mark.parametrize('name', ['baddbmm', 'addbmm'])
def test_batch_products_rank(name, shape):
    # a batch of fewer than 2 dims is PyTorch's IndexError, other wrong ranks its RuntimeError
    raises_as_torch(lambda m: getattr(m, name)(m.ones(2, 3, 3) if name == 'baddbmm' else m.ones(3, 3),
                                               m.ones(*shape), m.ones(2, 3, 3)))


def test_adaptive_pool_huge_output_size():
    # one of the sizes 2**31, the other 0: Ember's kernel looped over the 2**31 rows
    with pytest.raises(RuntimeError):
        F.adaptive_avg_pool2d(ember.ones(1, 2, 4, 4), [2 ** 31, 0])
    with pytest.raises(RuntimeError):
        F.adaptive_max_pool2d(ember.ones(1, 2, 4, 4), [2 ** 31, 0])
