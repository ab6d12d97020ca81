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
