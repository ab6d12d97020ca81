"""ember.nn pooling, padding, upsampling and shuffles vs PyTorch 1.13: values, gradients,
float64 gradcheck, error types, module reprs."""
import warnings

import pytest
import torch

import ember
from helpers import check, check_raises, rand, to_ember


def F(m):
    return m.nn.functional


# ---- max pooling --------------------------------------------------------------------------
MAX_CASES = [
    # nd, shape, kwargs
    (1, (2, 3, 9), dict(kernel_size=3)),
    (1, (3, 10), dict(kernel_size=2, stride=1, padding=1, dilation=2)),
    (1, (2, 2, 11), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    (2, (2, 3, 8, 8), dict(kernel_size=2)),
    (2, (2, 3, 9, 7), dict(kernel_size=2, stride=2, ceil_mode=True)),
    (2, (3, 9, 10), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1))),
    (2, (1, 2, 12, 11), dict(kernel_size=3, stride=2, padding=1, dilation=(2, 1))),
    (2, (2, 4, 7, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (3, (1, 2, 6, 7, 5), dict(kernel_size=2, stride=(2, 1, 2), padding=1, ceil_mode=True)),
    (3, (2, 5, 6, 6), dict(kernel_size=(3, 2, 2), dilation=(1, 2, 1))),
]


@pytest.mark.parametrize("nd,shape,kw", MAX_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool(nd, shape, kw, dtype):
    x = rand(*shape, dtype=dtype, seed=nd)
    check(lambda x, m: getattr(F(m), f"max_pool{nd}d")(x, **kw, return_indices=True), x, grad=True)


@pytest.mark.parametrize("nd,shape,kw", MAX_CASES[::3])
def test_max_pool_noncontig_and_grad_of_grad(nd, shape, kw):
    x = rand(*shape, dtype="float64", seed=3, noncontig=True)
    check(lambda x, m: getattr(F(m), f"max_pool{nd}d")(x, **kw), x, grad=True)
    e = to_ember(x).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: getattr(F(ember), f"max_pool{nd}d")(t, **kw), (e,))


def test_max_pool_nan_and_ties():
    x = torch.tensor([[[1., 1., float("nan"), 2., 3., 3.]]])
    check(lambda x, m: F(m).max_pool1d(x, 2, return_indices=True), x)
    x = torch.zeros(1, 1, 4, 4)
    check(lambda x, m: F(m).max_pool2d(x, 2, return_indices=True), x)


def test_max_pool_top_level_and_modules():
    x = rand(2, 3, 8, 8)
    check(lambda x, m: m.max_pool2d(x, 2), x)
    check(lambda x, m: m.max_pool1d(x[0], 3, 2, 1), x)
    check(lambda x, m: m.max_pool3d(x, 2), x)


def test_max_pool_errors():
    check_raises(lambda x, m: F(m).max_pool2d(x, 3), rand(3, 2, 2))
    check_raises(lambda x, m: F(m).max_pool2d(x, 2, padding=2), rand(1, 3, 8, 8))
    check_raises(lambda x, m: F(m).max_pool2d(x, 2), rand(8, 8))
    check_raises(lambda x, m: F(m).max_pool2d(x, 2, 0), rand(1, 1, 8, 8))
    check_raises(lambda x, m: F(m).max_pool2d(x, 2, dilation=0), rand(1, 1, 8, 8))
    check_raises(lambda x, m: F(m).max_pool3d(x, 2), rand(8, 8, 8))
    check_raises(lambda x, m: F(m).max_pool2d(x, 2), torch.ones(1, 1, 4, 4, dtype=torch.int64))
    with pytest.raises(RuntimeError, match=r"Given input size: \(3x2x2\). Calculated output size: \(3x0x0\)"):
        F(ember).max_pool2d(ember.ones(3, 2, 2), 3)


# ---- max unpooling ------------------------------------------------------------------------
@pytest.mark.parametrize("nd,shape,k,s,p,out", [
    (1, (2, 3, 8), 2, None, 0, None),
    (1, (3, 9), 3, 2, 1, None),
    (2, (2, 3, 8, 8), 2, None, 0, None),
    (2, (3, 9, 9), 3, 2, 1, (10, 9)),
    (2, (1, 2, 7, 9), 2, 2, 0, (1, 2, 7, 9)),
])
def test_max_unpool(nd, shape, k, s, p, out):
    x = rand(*shape, dtype="float64")
    pool = getattr(torch.nn.functional, f"max_pool{nd}d")
    _, idx = pool(x, k, s, p, return_indices=True)
    y, _ = pool(x, k, s, p, return_indices=True)
    check(lambda y, i, m: getattr(F(m), f"max_unpool{nd}d")(y, i, k, s, p, out), y, idx, grad=True)


def test_max_unpool_errors():
    y, i = torch.nn.functional.max_pool2d(rand(1, 1, 4, 4), 2, return_indices=True)
    check_raises(lambda y, i, m: F(m).max_unpool2d(y, i, 2, output_size=(9, 9)), y, i)
    check_raises(lambda y, i, m: F(m).max_unpool2d(y, i * 10, 2), y, i)


# ---- average pooling ----------------------------------------------------------------------
AVG_CASES = [
    (1, (2, 3, 9), dict(kernel_size=3)),
    (1, (3, 10), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    (1, (2, 2, 11), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    (2, (2, 3, 8, 8), dict(kernel_size=2)),
    (2, (2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 3, 9, 7), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    (2, (3, 9, 10), dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), divisor_override=5)),
    (3, (1, 2, 6, 7, 5), dict(kernel_size=2, stride=(2, 1, 2), padding=1, ceil_mode=True)),
    (3, (2, 5, 6, 6), dict(kernel_size=(3, 2, 2), count_include_pad=False)),
]


@pytest.mark.parametrize("nd,shape,kw", AVG_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool(nd, shape, kw, dtype):
    x = rand(*shape, dtype=dtype, seed=nd, noncontig=dtype == "float64")
    check(lambda x, m: getattr(F(m), f"avg_pool{nd}d")(x, **kw), x, grad=True)


@pytest.mark.parametrize("nd,shape,kw", AVG_CASES[::2])
def test_avg_pool_gradcheck(nd, shape, kw):
    e = to_ember(rand(*shape, dtype="float64")).requires_grad_()
    fn = lambda t: getattr(F(ember), f"avg_pool{nd}d")(t, **kw)  # noqa: E731
    assert ember.autograd.gradcheck(fn, (e,))
    assert ember.autograd.gradgradcheck(fn, (e,))


def test_avg_pool_errors():
    check_raises(lambda x, m: F(m).avg_pool2d(x, 3), rand(3, 2, 2))
    check_raises(lambda x, m: F(m).avg_pool2d(x, 2, padding=2), rand(1, 3, 8, 8))
    check_raises(lambda x, m: F(m).avg_pool2d(x, 2, divisor_override=0), rand(1, 8, 8))
    check_raises(lambda x, m: F(m).avg_pool1d(x, 2, padding=2), rand(3, 8))
    check_raises(lambda x, m: m.avg_pool1d(x, 3), rand(3, 2))


# ---- adaptive pooling ---------------------------------------------------------------------
ADAPTIVE_CASES = [
    (1, (2, 3, 9), 4), (1, (3, 10), 10), (1, (2, 7), 13),
    (2, (2, 3, 8, 8), 1), (2, (3, 9, 7), (4, 5)), (2, (2, 2, 5, 11), (None, 3)), (2, (1, 2, 7, 7), (7, 14)),
    (3, (1, 2, 6, 7, 5), (3, 2, 4)), (3, (2, 5, 4, 4), 2),
]


@pytest.mark.parametrize("nd,shape,out", ADAPTIVE_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adaptive_avg_pool(nd, shape, out, dtype):
    x = rand(*shape, dtype=dtype, noncontig=dtype == "float64")
    check(lambda x, m: getattr(F(m), f"adaptive_avg_pool{nd}d")(x, out), x, grad=True)


@pytest.mark.parametrize("nd,shape,out", [c for c in ADAPTIVE_CASES if c[0] < 3])
def test_adaptive_max_pool(nd, shape, out):
    x = rand(*shape, dtype="float64", seed=5)
    check(lambda x, m: getattr(F(m), f"adaptive_max_pool{nd}d")(x, out, return_indices=True), x, grad=True)


def test_adaptive_gradcheck():
    e = to_ember(rand(2, 3, 7, 5, dtype="float64")).requires_grad_()
    fn = lambda t: F(ember).adaptive_avg_pool2d(t, (3, 4))  # noqa: E731
    assert ember.autograd.gradcheck(fn, (e,))
    assert ember.autograd.gradgradcheck(fn, (e,))
    assert ember.autograd.gradcheck(lambda t: F(ember).adaptive_max_pool2d(t, (3, 2)), (e,))


def test_adaptive_errors():
    check_raises(lambda x, m: F(m).adaptive_avg_pool2d(x, 2), rand(8, 8))
    check_raises(lambda x, m: F(m).adaptive_avg_pool2d(x, -1), rand(1, 8, 8))
    check_raises(lambda x, m: F(m).adaptive_avg_pool2d(x, 2), rand(1, 0, 8))
    check_raises(lambda x, m: F(m).adaptive_max_pool2d(x, 2), rand(8, 8))
    check(lambda x, m: m.adaptive_avg_pool1d(x, 3), rand(2, 3, 8))
    check(lambda x, m: m.adaptive_max_pool1d(x, 3), rand(2, 3, 8))


# ---- lp pooling ---------------------------------------------------------------------------
@pytest.mark.parametrize("p", [1, 2, 3.5])
def test_lp_pool(p):
    x = rand(2, 3, 8, 9, dtype="float64", low=0.1, high=2)
    check(lambda x, m: F(m).lp_pool2d(x, p, 2), x, grad=True)
    check(lambda x, m: F(m).lp_pool2d(x, p, (3, 2), stride=2, ceil_mode=True), x, grad=True)
    check(lambda x, m: F(m).lp_pool1d(x[0], p, 3, 2), x, grad=True)


# ---- padding ------------------------------------------------------------------------------
PAD_CASES = [
    ("constant", (2, 3, 4), (1, 2)), ("constant", (2, 3, 4), (1, 2, 0, 3, 1, 1)),
    ("constant", (2, 3, 5, 4), (-1, 2, 1, -2)), ("constant", (5,), (2, 3)),
    ("reflect", (2, 3, 5), (2, 3)), ("reflect", (3, 5), (4, 1)), ("reflect", (2, 3, 5, 6), (1, 2, 3, 4)),
    ("reflect", (2, 4, 5, 6), (1, 2, 3, 4)), ("reflect", (1, 2, 3, 4, 5), (1, 2, 1, 2, 2, 1)),
    ("reflect", (2, 3, 5), (-1, 2)),
    ("replicate", (2, 3, 5), (2, 7)), ("replicate", (2, 3, 5, 6), (1, 2, 3, 4)), ("replicate", (3, 5, 6), (3, 0, 0, 2)),
    ("replicate", (1, 2, 3, 4, 5), (1, 2, 1, 2, 2, 1)), ("replicate", (2, 3, 5), (-2, 3)),
    ("circular", (2, 3, 5), (2, 5)), ("circular", (2, 3, 5, 6), (1, 2, 3, 4)),
    ("circular", (1, 2, 3, 4, 5), (1, 2, 1, 2, 2, 1)), ("circular", (2, 3, 5), (-1, 2)),
]


@pytest.mark.parametrize("mode,shape,pads", PAD_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pad(mode, shape, pads, dtype):
    x = rand(*shape, dtype=dtype, noncontig=dtype == "float64")
    check(lambda x, m: F(m).pad(x, pads, mode=mode), x, grad=True)


def test_pad_value_and_gradcheck():
    x = rand(2, 3, 4, dtype="float64")
    check(lambda x, m: F(m).pad(x, (1, 2, 3, 4), value=2.5), x, grad=True)
    check(lambda x, m: F(m).pad(x, (1, 2)), torch.arange(6).reshape(2, 3))
    e = to_ember(x).requires_grad_()
    for mode in ["constant", "reflect", "replicate", "circular"]:
        fn = lambda t: F(ember).pad(t, (2, 1), mode=mode)  # noqa: E731
        assert ember.autograd.gradcheck(fn, (e,))
        assert ember.autograd.gradgradcheck(fn, (e,))


def test_pad_errors():
    x = rand(1, 3, 4)
    check_raises(lambda x, m: F(m).pad(x, (4, 0), mode="reflect"), x)
    check_raises(lambda x, m: F(m).pad(x, (1, 1, 1)), x)
    check_raises(lambda x, m: F(m).pad(x, (1,) * 10), x)
    check_raises(lambda x, m: F(m).pad(x, (-3, -2)), x)
    check_raises(lambda x, m: F(m).pad(x, (1, 1), mode="foo"), x)
    check_raises(lambda x, m: F(m).pad(x, (1, 1), mode="reflect", value=1), x)
    check_raises(lambda x, m: F(m).pad(x, (5, 2), mode="circular"), x)
    check_raises(lambda x, m: F(m).pad(x, (1, 1, 1, 1), mode="circular"), x)
    check_raises(lambda x, m: F(m).pad(x[0, 0], (1, 1), mode="reflect"), x)
    check_raises(lambda x, m: F(m).pad(x, (-3, -2), mode="replicate"), x)
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F(ember).pad(to_ember(x), (4, 0), mode="reflect")


# ---- upsampling ---------------------------------------------------------------------------
UP_CASES = [
    ((2, 3, 5), dict(scale_factor=2)), ((2, 3, 5), dict(size=12)), ((2, 3, 7), dict(size=3)),
    ((2, 3, 5), dict(scale_factor=1.7)), ((2, 3, 5), dict(scale_factor=1.7, recompute_scale_factor=True)),
    ((2, 3, 5, 4), dict(scale_factor=2)), ((2, 3, 5, 4), dict(size=(7, 9))), ((1, 2, 6, 9), dict(size=(4, 5))),
    ((1, 2, 5, 4), dict(scale_factor=(1.5, 2.5))),
    ((1, 2, 3, 4, 5), dict(scale_factor=2)), ((1, 2, 3, 4, 5), dict(size=(5, 3, 7))),
]
LINEAR = {3: "linear", 4: "bilinear", 5: "trilinear"}


@pytest.mark.parametrize("shape,kw", UP_CASES)
@pytest.mark.parametrize("mode", ["nearest", "linear", "linear-ac", "area", "bicubic", "bicubic-ac"])
def test_interpolate(shape, kw, mode):
    kw = dict(kw)
    if mode.startswith(("linear", "bicubic")):
        kw["align_corners"] = mode.endswith("-ac")
        mode = LINEAR[len(shape)] if mode.startswith("linear") else "bicubic"
    if mode == "area" and "scale_factor" in kw and kw.get("recompute_scale_factor") is not True:
        return
    x = rand(*shape, dtype="float64", noncontig=True)
    if mode == "bicubic" and len(shape) != 4:  # torch's NotImplementedError for 3-D and 5-D input
        check_raises(lambda x, m: F(m).interpolate(x, mode=mode, **kw), x)
        return
    check(lambda x, m: F(m).interpolate(x, mode=mode, **kw), x, grad=True)
    check(lambda x, m: F(m).interpolate(x, mode=mode, **kw), x.float(), grad=True)


def test_interpolate_gradcheck():
    for mode, shape in [("nearest", (1, 2, 3, 4)), ("bilinear", (1, 2, 3, 4)), ("linear", (2, 2, 5)),
                        ("trilinear", (1, 1, 2, 3, 3)), ("bicubic", (1, 2, 3, 4))]:
        e = to_ember(rand(*shape, dtype="float64")).requires_grad_()
        fn = lambda t: F(ember).interpolate(t, scale_factor=1.5, mode=mode)  # noqa: E731
        assert ember.autograd.gradcheck(fn, (e,))
        assert ember.autograd.gradgradcheck(fn, (e,))


def test_interpolate_errors_and_deprecated():
    x = rand(1, 2, 4, 4)
    check_raises(lambda x, m: F(m).interpolate(x, size=3, scale_factor=2), x)
    check_raises(lambda x, m: F(m).interpolate(x), x)
    check_raises(lambda x, m: F(m).interpolate(x, size=(3, 3, 3)), x)
    check_raises(lambda x, m: F(m).interpolate(x, scale_factor=2, align_corners=True), x)
    check_raises(lambda x, m: F(m).interpolate(x, size=3, recompute_scale_factor=True), x)
    check_raises(lambda x, m: F(m).interpolate(x, scale_factor=2, mode="linear"), x)
    check_raises(lambda x, m: F(m).interpolate(x, scale_factor=2, mode="trilinear"), x)
    check_raises(lambda x, m: F(m).interpolate(x[0, 0], scale_factor=2), x)
    check_raises(lambda x, m: F(m).interpolate(x[0], scale_factor=2, mode="bicubic"), x)
    check_raises(lambda x, m: F(m).interpolate(x, size=(0, 3), mode="bicubic"), x)
    check_raises(lambda x, m: F(m).interpolate(x.int(), size=3, mode="bicubic"), x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda x, m: F(m).upsample(x, scale_factor=2), x)
        check(lambda x, m: F(m).upsample_nearest(x, size=7), x)
        check(lambda x, m: F(m).upsample_bilinear(x, scale_factor=2), x, grad=True)
    with pytest.warns(UserWarning, match="deprecated"):
        F(ember).upsample(to_ember(x), scale_factor=2)


# ---- shuffles -----------------------------------------------------------------------------
def test_shuffles():
    x = rand(2, 8, 3, 4, dtype="float64", noncontig=True)
    check(lambda x, m: F(m).pixel_shuffle(x, 2), x, grad=True)
    check(lambda x, m: m.pixel_shuffle(x[0], 2), x, grad=True)
    check(lambda x, m: F(m).pixel_unshuffle(x[:, :, :2], 2), x, grad=True)
    check(lambda x, m: m.pixel_unshuffle(x, 1), x, grad=True)
    # torch 1.13 has no derivative for channel_shuffle; Ember's is the view ops' (checked by gradcheck)
    check(lambda x, m: F(m).channel_shuffle(x, 4), x)
    check(lambda x, m: m.channel_shuffle(x, 2), x)
    assert ember.autograd.gradcheck(lambda t: ember.channel_shuffle(t, 2), (to_ember(x).requires_grad_(),))
    check_raises(lambda x, m: F(m).pixel_shuffle(x, 3), x)
    check_raises(lambda x, m: F(m).pixel_shuffle(x[0, 0], 2), x)
    check_raises(lambda x, m: F(m).pixel_unshuffle(x, 3), x)
    check_raises(lambda x, m: m.channel_shuffle(x, 3), x)


# ---- modules ------------------------------------------------------------------------------
from nn_helpers import check_module  # noqa: E402

MODULES = [
    (lambda m: m.nn.MaxPool1d(3, 2, 1), (2, 3, 9)),
    (lambda m: m.nn.MaxPool2d(2), (2, 3, 8, 8)),
    (lambda m: m.nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True), (3, 9, 9)),
    (lambda m: m.nn.MaxPool2d(2, return_indices=True), (2, 3, 8, 8)),
    (lambda m: m.nn.MaxPool3d(2, padding=1), (1, 2, 5, 4, 4)),
    (lambda m: m.nn.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 9)),
    (lambda m: m.nn.AvgPool2d(3, 2, 1, ceil_mode=True), (2, 3, 9, 8)),
    (lambda m: m.nn.AvgPool2d((2, 3), divisor_override=4), (3, 8, 8)),
    (lambda m: m.nn.AvgPool3d(2, stride=1), (1, 2, 4, 4, 4)),
    (lambda m: m.nn.AdaptiveAvgPool1d(4), (2, 3, 9)),
    (lambda m: m.nn.AdaptiveAvgPool2d((1, 1)), (2, 8, 7, 7)),
    (lambda m: m.nn.AdaptiveAvgPool2d((None, 3)), (2, 3, 5, 7)),
    (lambda m: m.nn.AdaptiveAvgPool3d(2), (1, 2, 4, 5, 3)),
    (lambda m: m.nn.AdaptiveMaxPool1d(4), (2, 3, 9)),
    (lambda m: m.nn.AdaptiveMaxPool2d((3, 2), return_indices=True), (2, 3, 7, 5)),
    (lambda m: m.nn.LPPool1d(2, 3, 2), (2, 3, 9)),
    (lambda m: m.nn.LPPool2d(1.5, (2, 3)), (2, 3, 8, 9)),
    (lambda m: m.nn.ZeroPad2d((1, 2, 0, 3)), (2, 3, 4, 5)),
    (lambda m: m.nn.ConstantPad1d(2, 3.5), (2, 3, 4)),
    (lambda m: m.nn.ConstantPad2d((1, -1, 2, 0), -1.0), (2, 3, 4, 5)),
    (lambda m: m.nn.ConstantPad3d(1, 0.0), (2, 3, 4, 5)),
    (lambda m: m.nn.ReflectionPad1d((2, 1)), (2, 3, 4)),
    (lambda m: m.nn.ReflectionPad2d(2), (3, 4, 5)),
    (lambda m: m.nn.ReflectionPad3d(1), (1, 2, 3, 4, 5)),
    (lambda m: m.nn.ReplicationPad1d(3), (2, 3, 4)),
    (lambda m: m.nn.ReplicationPad2d((1, 2, 3, 4)), (2, 3, 4, 5)),
    (lambda m: m.nn.ReplicationPad3d(2), (2, 3, 4, 5)),
    (lambda m: m.nn.Upsample(scale_factor=2), (2, 3, 4, 5)),
    (lambda m: m.nn.Upsample(size=(5, 7), mode="bilinear"), (2, 3, 4, 5)),
    (lambda m: m.nn.Upsample(scale_factor=(1.5, 2, 2.5), mode="trilinear", align_corners=True), (1, 2, 3, 4, 5)),
    (lambda m: m.nn.Upsample(size=7, mode="linear"), (2, 3, 4)),
    (lambda m: m.nn.Upsample(scale_factor=(1.5, 0.75), mode="bicubic"), (2, 3, 4, 8)),
    (lambda m: m.nn.Upsample(size=(6, 3), mode="bicubic", align_corners=True), (2, 3, 4, 5)),
    (lambda m: m.nn.UpsamplingNearest2d(scale_factor=3), (2, 3, 4, 5)),
    (lambda m: m.nn.UpsamplingBilinear2d(size=(6, 9)), (2, 3, 4, 5)),
    (lambda m: m.nn.PixelShuffle(2), (2, 8, 3, 4)),
    (lambda m: m.nn.PixelUnshuffle(2), (2, 2, 4, 6)),
]


@pytest.mark.parametrize("make,shape", MODULES)
def test_modules(make, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emod, tmod = check_module(make, rand(*shape, dtype="float64", seed=len(shape)))
    assert repr(emod) == repr(tmod)


def test_module_channel_shuffle_and_unpool():
    emod, tmod = check_module(lambda m: m.nn.ChannelShuffle(2), rand(2, 4, 3, 3), grad=False)
    assert repr(emod) == repr(tmod)
    x = rand(2, 3, 8, 8, dtype="float64")
    y, i = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    for nd, unpool in [(1, "MaxUnpool1d"), (2, "MaxUnpool2d")]:
        yy, ii = (y, i) if nd == 2 else torch.nn.functional.max_pool1d(x[0], 2, return_indices=True)
        emod, tmod = check_module(lambda m: getattr(m.nn, unpool)(2), yy, ii)
        assert repr(emod) == repr(tmod)
    emod, tmod = check_module(lambda m: m.nn.MaxUnpool2d(2), y, i,
                              forward=lambda mod, y, i: mod(y, i, output_size=(9, 9)))
    assert repr(ember.nn.MaxUnpool3d(2, 1)) == repr(torch.nn.MaxUnpool3d(2, 1))
    assert repr(ember.nn.AdaptiveMaxPool3d((1, None, 2))) == repr(torch.nn.AdaptiveMaxPool3d((1, None, 2)))


def test_backward_ops_bound_in_nn():
    nn = ember._C._nn
    x = to_ember(rand(2, 3, 6, 5, dtype="float64"))
    g = to_ember(rand(2, 3, 4, 3, dtype="float64"))
    tx = torch.tensor(x.numpy())
    tg = torch.tensor(g.numpy())
    want = torch.ops.aten.avg_pool2d_backward(tg, tx, [2, 2], [2, 2], [1, 1], False, True, None)
    assert torch.allclose(torch.tensor(nn.avg_pool_backward(g, x, 2, [2], [2], [1], False, True, None).numpy()), want)
    want = torch.ops.aten._adaptive_avg_pool2d_backward(tg, tx)
    assert torch.allclose(torch.tensor(nn.adaptive_avg_pool_backward(g, x, 2).numpy()), want)
    tg2 = torch.ones(2, 3, 8, 7, dtype=torch.float64)
    want = torch.ops.aten.reflection_pad2d_backward(tg2, tx, [1, 1, 1, 1])
    got = nn.pad_backward(to_ember(tg2), x, [1, 1, 1, 1], "reflect")
    assert torch.allclose(torch.tensor(got.numpy()), want)
    want = torch.ops.aten.upsample_nearest2d_backward(tg2, [8, 7], [2, 3, 6, 5])
    assert torch.allclose(torch.tensor(nn.upsample_nearest_backward(to_ember(tg2), [2, 3, 6, 5]).numpy()), want)
    want = torch.ops.aten.upsample_bilinear2d_backward(tg2, [8, 7], [2, 3, 6, 5], True)
    got = nn.upsample_linear_backward(to_ember(tg2), [2, 3, 6, 5], True)
    assert torch.allclose(torch.tensor(got.numpy()), want)
    for ac, scales in [(True, [None, None]), (False, [1.6, 1.5])]:
        want = torch.ops.aten.upsample_bicubic2d_backward(tg2, [8, 7], [2, 3, 6, 5], ac, *scales)
        got = nn.upsample_bicubic_backward(to_ember(tg2), [2, 3, 6, 5], ac, *[s or 0 for s in scales])
        assert torch.allclose(torch.tensor(got.numpy()), want)
        want = torch._C._nn.upsample_bicubic2d(tx, [8, 7], ac, *scales)
        assert torch.allclose(torch.tensor(nn.upsample_bicubic2d(x, [8, 7], ac, *scales).numpy()), want)
    # the max pools' gradient: torch's max_pool2d_with_indices_backward with the same indices
    y, idx = ember.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True, ceil_mode=True)
    ty, tidx = torch.nn.functional.max_pool2d(tx, 3, 2, 1, return_indices=True, ceil_mode=True)
    gy = to_ember(rand(*y.shape, dtype="float64"))
    want = torch.ops.aten.max_pool2d_with_indices_backward(torch.tensor(gy.numpy()), tx, [3, 3], [2, 2], [1, 1],
                                                            [1, 1], True, tidx)
    assert torch.allclose(torch.tensor(nn.max_pool_backward(gy, idx, x, 2).numpy()), want)
    with pytest.raises(IndexError):
        nn.max_pool_backward(gy, ember.full(idx.shape, 30, dtype=ember.int64), x, 2)


@pytest.mark.parametrize('width', [14, 21, 34])
def test_max_pool_2x2_ties_and_nans_pick_torchs_index(width):
    """After relu a 2x2 window often holds equal values: the index must be torch's (the first in
    scan order, a later nan winning), in the vectorized part of a row and in its remainder."""
    import numpy as np
    for trial in range(20):
        a = np.random.default_rng(trial).integers(0, 3, (2, 3, 10, width)).astype(np.float32)
        a[a == 2] = np.nan if trial % 2 else 2
        ye, ie = ember.nn.functional.max_pool2d(ember.tensor(a), 2, return_indices=True)
        yt, it = torch.nn.functional.max_pool2d(torch.tensor(a), 2, return_indices=True)
        assert np.array_equal(ie.numpy(), it.numpy())
        assert np.allclose(ye.numpy(), yt.numpy(), equal_nan=True)


@pytest.mark.parametrize('nd,shape,kernel,out', [
    (2, (2, 3, 11, 9), (3, 2), dict(output_size=(5, 4))),
    (2, (3, 10, 10), 2, dict(output_ratio=0.5)),
    (3, (2, 2, 7, 8, 7), (2, 3, 2), dict(output_size=(4, 3, 5))),
    (3, (2, 6, 6, 6), 2, dict(output_ratio=(0.5, 0.6, 0.4))),
])
@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_fractional_max_pool_vs_torch(nd, shape, kernel, out, dtype):
    """Same samples, same windows: values, indices and the input gradient equal torch's."""
    import numpy as np
    x = rand(*shape, dtype=dtype)
    n = 1 if len(shape) == nd + 1 else shape[0]
    u = torch.rand(n, shape[-nd - 1], nd, dtype=x.dtype)
    name = f'fractional_max_pool{nd}d'
    tx, ex = x.clone().requires_grad_(), to_ember(x).requires_grad_()
    ty, ti = getattr(torch.nn.functional, name)(tx, kernel, **out, return_indices=True, _random_samples=u)
    ey, ei = getattr(ember.nn.functional, name)(ex, kernel, **out, return_indices=True, _random_samples=to_ember(u))
    assert np.array_equal(ei.numpy(), ti.numpy()) and np.array_equal(ey.detach().numpy(), ty.detach().numpy())
    g = rand(*ty.shape, dtype=dtype, seed=5)
    ty.backward(g)
    ey.backward(to_ember(g))
    assert np.allclose(ex.grad.numpy(), tx.grad.numpy())
    # the module, with its samples as a buffer; and drawn samples give a valid pooling
    cls = f'FractionalMaxPool{nd}d'
    tm = getattr(torch.nn, cls)(kernel, **out, _random_samples=u)
    em = getattr(ember.nn, cls)(kernel, **out, _random_samples=to_ember(u))
    assert np.array_equal(em(to_ember(x)).numpy(), tm(x).numpy())
    assert getattr(ember.nn, cls)(kernel, **out)(to_ember(x)).shape == ty.shape


def test_fractional_max_pool_errors():
    x = rand(1, 2, 6, 6)
    for lib in (torch, ember):
        F, nn = lib.nn.functional, lib.nn
        with pytest.raises(ValueError):
            F.fractional_max_pool2d(to_ember(x) if lib is ember else x, 2)
        with pytest.raises(ValueError):
            nn.FractionalMaxPool2d(2)
        with pytest.raises(ValueError):
            nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
        with pytest.raises(ValueError):
            nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.5, 0.5))
        xs = to_ember(x) if lib is ember else x
        with pytest.raises(RuntimeError):  # a window would leave the input
            F.fractional_max_pool2d(xs, 3, output_size=5)
        if lib is ember:  # samples of the wrong shape (torch 1.13 reads them unchecked)
            with pytest.raises(RuntimeError, match='_random_samples of shape'):
                F.fractional_max_pool2d(xs, 2, output_size=3, _random_samples=lib.rand(1, 1, 2))
        with pytest.raises(RuntimeError):  # samples of another dtype
            F.fractional_max_pool2d(xs, 2, output_size=3, _random_samples=lib.rand(1, 2, 2, dtype=lib.float64))
        with pytest.raises(RuntimeError):  # 3-d is strict where 2-d is not
            F.fractional_max_pool3d(lib.ones(1, 1, 6, 6, 6), 2, output_size=5, _random_samples=lib.rand(1, 1, 3))
