"""Shape ops (include/ember/shape.h) vs torch 1.13: joining, meshgrid, flips,
rolls, repeats, diff, triangles, diagonals, one_hot."""
import pytest
import torch
import warnings

import ember
from helpers import check, check_raises, rand

# Gradient checks run once ember.autograd.grad is bound.
GRAD = hasattr(ember.autograd, 'grad')


# ---- joining -------------------------------------------------------------------------------
@pytest.mark.parametrize('name', ['cat', 'concat', 'concatenate'])
def test_cat_names_and_dims(name):
    a, b = rand(2, 3, seed=1), rand(2, 4, seed=2, noncontig=True)
    check(lambda x, y, m: getattr(m, name)((x, y), 1), a, b, grad=GRAD)
    check(lambda x, y, m: getattr(m, name)([x, y], dim=-1), a, b, grad=GRAD)
    check(lambda x, m: getattr(m, name)([x, x, x]), a, grad=GRAD)


def test_cat_promotes_skips_legacy_empty_and_out():
    a, b = rand(2, 3, seed=1), rand(1, 3, dtype='int64', seed=2)
    check(lambda x, y, m: m.cat([x, y]), a, b)
    check(lambda x, e, m: m.cat([x, e, x]), a, torch.zeros(0))
    check(lambda x, y, m: m.cat([x, y], out=m.empty(0)), a, b)
    check(lambda x, m: m.cat([x] * 40, 1), rand(2, 1, seed=3))  # past the small-list buffer


def test_cat_errors():
    a = rand(2, 3, seed=1)
    check_raises(lambda x, m: m.cat([x, x], 2), a)                   # IndexError
    check_raises(lambda x, m: m.cat([x, x.t()]), a)                  # RuntimeError
    check_raises(lambda x, m: m.cat([x.select(0, 0), x.select(0, 1)]), a[0])            # 0-d
    check_raises(lambda x, m: m.cat(x), a)                           # TypeError: not a list
    check_raises(lambda x, m: m.cat([x, 1]), a)                      # TypeError: element
    check_raises(lambda m: m.cat([]))


@pytest.mark.parametrize('name', ['stack', 'hstack', 'vstack', 'dstack'])
@pytest.mark.parametrize('shape', [(3,), (2, 3), (2, 3, 2), ()])
def test_stacks(name, shape):
    a, b = rand(*shape, seed=1), rand(*shape, seed=2, noncontig=True)
    check(lambda x, y, m: getattr(m, name)([x, y]), a, b, grad=GRAD)
    check(lambda x, y, m: getattr(m, name)((x, y), out=m.empty(1)), a, b)


def test_stack_dim_and_errors():
    a = rand(2, 3, seed=1)
    for d in (0, 1, 2, -1, -3):
        check(lambda x, m: m.stack([x, x * 2], d), a, grad=GRAD)
    check_raises(lambda x, m: m.stack([x, x], 3), a)
    check_raises(lambda x, m: m.stack([x, x.t()]), a)


@pytest.mark.parametrize('indexing', ['ij', 'xy'])
def test_meshgrid(indexing):
    a, b, c = rand(2, seed=1), rand(3, seed=2), rand(4, seed=3)
    check(lambda x, y, z, m: m.meshgrid(x, y, z, indexing=indexing), a, b, c, grad=GRAD)
    check(lambda x, y, m: m.meshgrid([x, y], indexing=indexing), a, b)
    check(lambda x, y, m: m.meshgrid((x, y), indexing=indexing), a, b[0])


def test_meshgrid_default_warns_and_errors():
    a, b = ember.arange(2), ember.arange(3)
    with pytest.warns(UserWarning):
        x, y = ember.meshgrid(a, b)
    assert x.shape == (2, 3) and y.tolist() == [[0, 1, 2]] * 2
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check_raises(lambda x, m: m.meshgrid(x, indexing='ab'), rand(2))
        check_raises(lambda x, m: m.meshgrid(x, 3, indexing='ij'), rand(2))
        check_raises(lambda x, m: m.meshgrid(x, x.view(1, 2), indexing='ij'), rand(2))
    with pytest.raises(TypeError):
        ember.meshgrid(a, foo=1)


def test_cartesian_prod():
    a, b = rand(2, seed=1), rand(3, seed=2)
    check(lambda x, y, m: m.cartesian_prod(x, y), a, b, grad=GRAD)
    check(lambda x, m: m.cartesian_prod(x), a)
    check(lambda m: m.cartesian_prod(m.arange(3), m.arange(2), m.arange(2)))
    check_raises(lambda x, m: m.cartesian_prod([x, x]), a)
    check_raises(lambda x, m: m.cartesian_prod(x.view(1, 2)), a)


# ---- reordering ----------------------------------------------------------------------------
@pytest.mark.parametrize('dtype', ['float32', 'int64', 'bool'])
def test_flips(dtype):
    a = rand(2, 3, 4, dtype=dtype, seed=1, noncontig=True)
    g = GRAD and dtype == 'float32'
    check(lambda x, m: m.flip(x, (0, 2)), a, grad=g)
    check(lambda x, m: m.flip(x, dims=[-1]), a)
    check(lambda x, m: x.flip(0, 1), a, grad=g)
    check(lambda x, m: x.flip((1,)), a)
    check(lambda x, m: m.fliplr(x), a, grad=g)
    check(lambda x, m: x.flipud(), a, grad=g)
    check_raises(lambda x, m: m.flip(x, (0, 0)), a)
    check_raises(lambda x, m: m.flip(x, (3,)), a)
    check_raises(lambda x, m: m.fliplr(x), a[0, 0])


def test_roll():
    a = rand(3, 4, seed=1, noncontig=True)
    check(lambda x, m: m.roll(x, 1), a, grad=GRAD)
    check(lambda x, m: m.roll(x, -5, 1), a, grad=GRAD)
    check(lambda x, m: m.roll(x, (1, 2), (0, 1)), a)
    check(lambda x, m: x.roll(shifts=(2, 1), dims=(1, 1)), a)
    assert ember.roll(ember.zeros(0, 4), 3).shape == (0, 4)
    check_raises(lambda x, m: m.roll(x, (1, 2), 0), a)
    check_raises(lambda x, m: m.roll(x, 1, 2), a)


@pytest.mark.parametrize('k', [-3, -1, 0, 1, 2, 5])
def test_rot90(k):
    a = rand(2, 3, 4, seed=1)
    check(lambda x, m: m.rot90(x, k), a, grad=GRAD)
    check(lambda x, m: x.rot90(k, [2, 0]), a)
    check(lambda x, m: m.rot90(x, k=k, dims=(-1, -2)), a)


def test_rot90_defaults_and_errors():
    check(lambda x, m: m.rot90(x), rand(2, 3))
    check_raises(lambda x, m: m.rot90(x, 1, [0]), rand(2, 3))
    check_raises(lambda x, m: m.rot90(x, 1, [0, 0]), rand(2, 3))
    check_raises(lambda x, m: m.rot90(x), rand(3))


# ---- repeating -----------------------------------------------------------------------------
def test_repeat_and_tile():
    a = rand(2, 3, seed=1, noncontig=True)
    check(lambda x, m: x.repeat(2, 3), a, grad=GRAD)
    check(lambda x, m: x.repeat((2, 1, 2)), a, grad=GRAD)
    check(lambda x, m: x.repeat([1, 0]), a)
    check(lambda x, m: m.tile(x, (2,)), a, grad=GRAD)
    check(lambda x, m: x.tile(2, 1, 2), a)
    check(lambda x, m: x.repeat(3), rand(4))
    check(lambda x, m: x.repeat(2, 2), rand(dtype='int64'))
    check_raises(lambda x, m: x.repeat(2), a)
    check_raises(lambda x, m: x.repeat(-1, 2), a)
    assert not hasattr(ember, 'repeat')  # a method only, as in PyTorch


def test_repeat_interleave():
    a = rand(3, 2, seed=1)
    check(lambda x, m: m.repeat_interleave(x, 2), a, grad=GRAD)
    check(lambda x, m: x.repeat_interleave(3, dim=0), a, grad=GRAD)
    check(lambda x, r, m: m.repeat_interleave(x, r, 0), a, torch.tensor([1, 0, 2]), grad=GRAD)
    check(lambda x, r, m: x.repeat_interleave(r, dim=1, output_size=4), a, torch.tensor([1, 3]))
    check(lambda x, r, m: m.repeat_interleave(x, r, 1), a, torch.tensor(2))
    check(lambda r, m: m.repeat_interleave(r), torch.tensor([2, 0, 3]))
    check(lambda r, m: m.repeat_interleave(r, output_size=5), torch.tensor([2, 0, 3], dtype=torch.int32))
    check_raises(lambda x, r, m: m.repeat_interleave(x, r, 0), a, torch.tensor([1, 2]))
    check_raises(lambda x, m: m.repeat_interleave(x, -1), a)
    check_raises(lambda x, m: m.repeat_interleave(x, 2, 2), a)
    check_raises(lambda r, m: r.repeat_interleave(), torch.tensor([2, 0, 3]))


# ---- differences ---------------------------------------------------------------------------
def test_diff():
    a = rand(3, 5, seed=1, noncontig=True)
    check(lambda x, m: m.diff(x), a, grad=GRAD)
    check(lambda x, m: x.diff(2, 0), a, grad=GRAD)
    check(lambda x, m: m.diff(x, n=0), a)
    check(lambda x, p, q, m: m.diff(x, dim=1, prepend=p, append=q), a, rand(3, 1, seed=2), rand(3, 2, seed=3),
          grad=GRAD)
    check(lambda x, m: m.diff(x), rand(6, dtype='bool', seed=4))
    check(lambda x, m: m.diff(x, 3), rand(6, dtype='int32', seed=4))
    check(lambda x, m: m.diff(x, out=m.empty(0)), a)
    check_raises(lambda x, m: m.diff(x), rand())
    check_raises(lambda x, p, m: m.diff(x, prepend=p), a, rand(2, 1))


# ---- triangles and diagonals ---------------------------------------------------------------
@pytest.mark.parametrize('name', ['tril', 'triu'])
@pytest.mark.parametrize('diagonal', [-2, 0, 1, 4])
def test_triangles(name, diagonal):
    a = rand(2, 3, 4, seed=1, noncontig=True)
    check(lambda x, m: getattr(m, name)(x, diagonal), a, grad=GRAD)
    check(lambda x, m: getattr(x, name)(diagonal=diagonal), rand(4, 3, dtype='int64'))
    check(lambda x, m: getattr(m, name)(x, diagonal, out=m.empty(0)), a)
    check(lambda x, m: getattr(x.clone(), name + '_')(diagonal), a)
    check(lambda x, m: getattr(x.clone(), name + '_')(), rand(3, 3, dtype='bool'))


def test_triangle_in_place_keeps_identity_and_errors():
    x = ember.ones(3, 3)
    assert x.tril_(-1) is x and x.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    check_raises(lambda x, m: m.tril(x), rand(3))
    check_raises(lambda x, m: m.triu(x, out=m.empty(0, dtype=m.int64)), rand(3, 3))


@pytest.mark.parametrize('name', ['tril_indices', 'triu_indices'])
def test_triangle_indices(name):
    for args in [(3, 3), (4, 2), (2, 5, 1), (3, 3, -1), (0, 3), (3, 4, 10)]:
        check(lambda m: getattr(m, name)(*args))
    check(lambda m: getattr(m, name)(3, 4, offset=1, dtype=m.int32))
    check_raises(lambda m: getattr(m, name)(-1, 3))
    check_raises(lambda m: getattr(m, name)(3, 3, dtype=m.float32))


def test_diag():
    check(lambda x, m: m.diag(x), rand(4, seed=1), grad=GRAD)
    check(lambda x, m: x.diag(-2), rand(4, seed=1), grad=GRAD)
    check(lambda x, m: m.diag(x, 1), rand(3, 5, seed=2, noncontig=True), grad=GRAD)
    check(lambda x, m: m.diag(x, diagonal=-1, out=m.empty(0)), rand(3, 5, seed=2))
    check(lambda x, m: m.diag(x, 5), rand(3, 5, seed=2))
    check_raises(lambda x, m: m.diag(x), rand(2, 2, 2))


def test_diag_embed_and_diagflat():
    a = rand(2, 3, seed=1, noncontig=True)
    check(lambda x, m: m.diag_embed(x), a, grad=GRAD)
    check(lambda x, m: x.diag_embed(1, 0, 2), a, grad=GRAD)
    check(lambda x, m: m.diag_embed(x, offset=-1, dim1=-1, dim2=0), a)
    check(lambda x, m: m.diagflat(x), a, grad=GRAD)
    check(lambda x, m: x.diagflat(-2), rand(3, dtype='int64'))
    check_raises(lambda x, m: m.diag_embed(x, 0, 1, 1), a)


def test_one_hot():
    idx = torch.tensor([[0, 2], [1, 4]])
    check(lambda x, m: torch.nn.functional.one_hot(x), idx, efn=lambda x, m: m.one_hot(x))
    for nc in (-1, 5, 7):
        assert ember.one_hot(ember.tensor(idx.tolist()), nc).tolist() == \
            torch.nn.functional.one_hot(idx, nc).tolist()
    assert ember._C.one_hot(ember.tensor([0, 1]), num_classes=3).dtype is ember.int64
    for bad in (torch.tensor([0, 5]), torch.tensor([-1]), torch.tensor([0.5])):
        check_raises(lambda x, m: (m.nn.functional if m is torch else m).one_hot(x, 3), bad)


def test_bad_arguments_raise_type_error():
    x = ember.ones(2, 2)
    for f in (lambda: ember.flip(x, 'a'), lambda: ember.roll(x), lambda: ember.tril(x, 1.5),
              lambda: ember.diag_embed(x, dim3=1), lambda: x.repeat('a'), lambda: ember.stack(x)):
        with pytest.raises(TypeError):
            f()
