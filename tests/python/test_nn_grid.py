"""ember.nn.functional.grid_sample / affine_grid (and torch.grid_sampler*, affine_grid_generator)
vs PyTorch 1.13: values and gradients of input, grid and theta for every mode x padding x
align_corners in 2-D and 3-D, non-contiguous inputs, grid points outside [-1, 1], warnings,
error types, and an end-to-end spatial transformer."""
import itertools
import warnings

import pytest
import torch

import ember
from helpers import check, check_raises, rand


def F(m):
    return m.nn.functional


MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]


def _grid(*shape, dtype, seed, noncontig=False):
    # points up to 1.5x outside [-1, 1]: every padding mode's reach
    return rand(*shape, dtype=dtype, low=-1.5, high=1.5, seed=seed, noncontig=noncontig)


@pytest.mark.parametrize("mode,padding,align", itertools.product(MODES, PADDINGS, [False, True]))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grid_sample_2d(mode, padding, align, dtype):
    x = rand(2, 3, 5, 6, dtype=dtype, seed=1, noncontig=True)
    g = _grid(2, 4, 7, 2, dtype=dtype, seed=2, noncontig=dtype == "float64")
    check(lambda x, g, m: F(m).grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align), x, g,
          grad=True)


@pytest.mark.parametrize("mode,padding,align", itertools.product(MODES[:2], PADDINGS, [False, True]))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grid_sample_3d(mode, padding, align, dtype):
    x = rand(2, 2, 3, 4, 5, dtype=dtype, seed=3, noncontig=True)
    g = _grid(2, 3, 2, 4, 3, dtype=dtype, seed=4)
    check(lambda x, g, m: F(m).grid_sample(x, g, mode, padding, align), x, g, grad=True)


def test_grid_sample_nearest_rounds_half_to_even():
    x = torch.arange(20.).reshape(1, 1, 4, 5)
    g = torch.tensor([[[[-0.6, -0.5], [0.2, 0.25], [-0.2, 0.75]]]])  # pixel coords 1.0, 2.5, 1.5, ...
    check(lambda x, g, m: F(m).grid_sample(x, g, "nearest", align_corners=True), x, g)
    check(lambda x, g, m: F(m).grid_sample(x, g, "nearest", align_corners=False), x, g)


@pytest.mark.parametrize("name,shapes", [("grid_sampler", ((2, 3, 4, 5), (2, 3, 3, 2))),
                                         ("grid_sampler_2d", ((1, 2, 4, 5), (1, 3, 3, 2))),
                                         ("grid_sampler_3d", ((1, 2, 3, 4, 5), (1, 2, 3, 3, 3)))])
def test_top_level_grid_samplers(name, shapes):
    x, g = rand(*shapes[0], seed=5), _grid(*shapes[1], dtype="float32", seed=6)
    check(lambda x, g, m: getattr(m, name)(x, g, 0, 1, True), x, g, grad=True)
    check(lambda x, g, m: getattr(m, name)(x, g, interpolation_mode=1, padding_mode=2, align_corners=False), x, g)


def test_grid_sample_empty():
    check(lambda x, g, m: F(m).grid_sample(x, g, align_corners=False), rand(0, 2, 3, 3), rand(0, 2, 2, 2))
    check(lambda x, g, m: F(m).grid_sample(x, g, align_corners=False), rand(2, 0, 3, 3), rand(2, 2, 2, 2))
    check(lambda x, g, m: F(m).grid_sample(x, g, align_corners=True), rand(1, 2, 3, 3), rand(1, 0, 2, 2),
          grad=True)


def test_grid_sample_warns_without_align_corners():
    x, g = rand(1, 1, 3, 3), rand(1, 2, 2, 2)
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            F(m).grid_sample(m.tensor(x.numpy()), m.tensor(g.numpy()))
        assert any("align_corners=False since 1.3.0" in str(e.message) for e in w)


@pytest.mark.parametrize("case", [
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5), m.zeros(1, 6, 7, 2), align_corners=False),  # batch
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5), m.zeros(2, 6, 7, 3), align_corners=False),  # last dim
    lambda m: F(m).grid_sample(m.zeros(2, 3, 0, 5), m.zeros(2, 6, 7, 2), align_corners=False),  # empty
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5, 6), m.zeros(2, 3, 4, 3), align_corners=False),
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5, 6), m.zeros(2, 3, 4, 5, 3), "bicubic", align_corners=False),
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5), m.zeros(2, 6, 7, 2), "foo", align_corners=False),
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5), m.zeros(2, 6, 7, 2), padding_mode="foo", align_corners=False),
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5, dtype=m.int32), m.zeros(2, 6, 7, 2, dtype=m.int32),
                               align_corners=False),
    lambda m: F(m).grid_sample(m.zeros(2, 3, 4, 5), m.zeros(2, 6, 7, 2, dtype=m.float64), align_corners=False),
    lambda m: m.grid_sampler_2d(m.zeros(2, 3, 4, 5, 6), m.zeros(2, 3, 4, 5, 3), 0, 0, False),
    lambda m: m.grid_sampler_3d(m.zeros(2, 3, 4, 5), m.zeros(2, 6, 7, 2), 0, 0, False),
    lambda m: m.affine_grid_generator(m.zeros(2, 2, 3), [2, 3, 4], False),
    lambda m: F(m).affine_grid(m.zeros(2, 2, 3), [2, 3, 4], False),
    lambda m: F(m).affine_grid(m.zeros(2, 2, 3), [2, 3, 4, 5, 6], False),
    lambda m: F(m).affine_grid(m.zeros(2, 3), [2, 3, 4, 5], False),
    lambda m: F(m).affine_grid(m.zeros(2, 2, 3, dtype=m.int32), [2, 3, 4, 5], False),
    lambda m: F(m).affine_grid(m.zeros(2, 2, 3), [2, 3, 0, 5], False),
])
def test_errors(case):
    check_raises(lambda m: case(m))


def test_error_messages():
    with pytest.raises(RuntimeError, match=r"same batch size, but got input with sizes \[2, 3, 4, 5\]"):
        ember.grid_sampler(ember.zeros(2, 3, 4, 5), ember.zeros(1, 6, 7, 2), 0, 0, False)
    with pytest.raises(RuntimeError, match="grid_sampler_2d_cpu not implemented for Int"):
        ember.grid_sampler(ember.zeros(2, 3, 4, 5, dtype=ember.int32), ember.zeros(2, 6, 7, 2, dtype=ember.int32),
                           0, 0, False)
    with pytest.raises(RuntimeError, match="expected 4D input and grid with same number of dimensions"):
        ember.grid_sampler_2d(ember.zeros(2, 3, 4, 5, 6), ember.zeros(2, 3, 4, 5, 3), 0, 0, False)


def test_double_backward_refused():
    x = ember.randn(1, 2, 3, 3, requires_grad=True)
    g = (ember.rand(1, 2, 2, 2) * 2 - 1).requires_grad_()
    y = F(ember).grid_sample(x, g, align_corners=False)
    gx, = ember.autograd.grad(y.sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'grid_sample_backward' is not implemented"):
        ember.autograd.grad(gx.sum(), g)


@pytest.mark.parametrize("size,align", [((2, 3, 4, 5), False), ((2, 3, 4, 5), True), ((2, 1, 1, 6), False),
                                        ((2, 1, 3, 1, 2), False), ((2, 2, 3, 4, 5), True), ((1, 1, 4, 5), None)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid(size, align, dtype):
    nd = len(size) - 2
    theta = rand(size[0], nd, nd + 1, dtype=dtype, seed=7, noncontig=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda t, m: F(m).affine_grid(t, size, align), theta, grad=True)
        check(lambda t, m: m.affine_grid_generator(t, list(size), bool(align)), theta, grad=True)


def test_affine_grid_unit_size_warning():
    for m in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            F(m).affine_grid(m.zeros(1, 2, 3), [1, 1, 1, 5], align_corners=True)
        assert any("unit-size grids" in str(e.message) for e in w)


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("bilinear", "border"), ("bicubic", "reflection"),
                                          ("nearest", "zeros")])
def test_spatial_transformer_end_to_end(mode, padding):
    """affine_grid -> grid_sample -> sum -> backward to theta (and the image), as an STN does."""
    theta = torch.tensor([[[0.9, -0.2, 0.1], [0.3, 1.1, -0.05]], [[1.2, 0.1, 0.0], [-0.1, 0.8, 0.2]]],
                         dtype=torch.float64)
    img = rand(2, 3, 6, 7, dtype="float64", seed=8)

    def stn(t, x, m):
        grid = F(m).affine_grid(t, list(x.shape), align_corners=False)
        return F(m).grid_sample(x, grid, mode, padding, align_corners=False).sum()

    check(stn, theta, img, grad=True, atol=1e-9, rtol=1e-9)


def test_gradcheck_float64():
    x = ember.randn(1, 2, 3, 4, dtype=ember.float64, requires_grad=True)
    g = (ember.rand(1, 2, 3, 2, dtype=ember.float64) * 2.4 - 1.2).requires_grad_()
    for mode, padding in itertools.product(MODES, PADDINGS):
        assert ember.autograd.gradcheck(lambda x, g: F(ember).grid_sample(x, g, mode, padding, True), (x, g))
    theta = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: F(ember).affine_grid(t, [2, 1, 2, 3, 2], False), (theta,))
