"""Ember nn modules vs PyTorch 1.13's: build both, copy the PyTorch module's
state_dict into the Ember one, run both on the same inputs and compare the
outputs, the input gradients and every parameter's gradient by name."""
import torch

import ember
from helpers import assert_same, dtype_name, rand, to_ember


def copy_state(emod, tmod):
    """Loads tmod's parameters and buffers into emod (names must match)."""
    emod.load_state_dict({k: to_ember(v) for k, v in tmod.state_dict().items()})


def check_module(make, *inputs, grad=True, atol=1e-5, rtol=1e-4, train=True, forward=None):
    """make(m) builds the module with m = torch or ember (same arguments);
    inputs are PyTorch tensors (float ones get gradients when grad=True).
    forward(mod, *inputs) calls the module (default mod(*inputs)); its result
    may be a tensor or a tuple of tensors (non-float ones are compared only).
    Returns (ember module, torch module)."""
    forward = forward or (lambda mod, *xs: mod(*xs))
    torch.manual_seed(0)
    tmod = make(torch)
    emod = make(ember)
    copy_state(emod, tmod)
    tmod.train(train)
    emod.train(train)
    tin = [x.clone().requires_grad_(grad and x.dtype.is_floating_point) if isinstance(x, torch.Tensor) else x
           for x in inputs]
    ein = [to_ember(x.detach()).requires_grad_(grad and x.dtype.is_floating_point)
           if isinstance(x, torch.Tensor) else x for x in tin]
    tout = forward(tmod, *tin)
    eout = forward(emod, *ein)
    assert_same(eout, tout, atol, rtol)
    for (k, tb), (ek, eb) in zip(tmod.state_dict().items(), emod.state_dict().items()):
        assert k == ek, f'state_dict keys differ: {ek} vs {k}'
        assert_same(eb, tb, atol, rtol)  # running statistics too
    if not grad:
        return emod, tmod
    touts = tout if isinstance(tout, (list, tuple)) else [tout]
    eouts = eout if isinstance(eout, (list, tuple)) else [eout]
    pairs = [(t, e) for t, e in zip(touts, eouts) if isinstance(t, torch.Tensor) and t.requires_grad]
    tloss = sum((t * rand(*t.shape, dtype=dtype_name(t.dtype), seed=i)).sum() for i, (t, _) in enumerate(pairs))
    eloss = sum((e * to_ember(rand(*t.shape, dtype=dtype_name(t.dtype), seed=i))).sum()
                for i, (t, e) in enumerate(pairs))
    tloss.backward()
    eloss.backward()
    for t, e in zip(tin, ein):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            assert_same(e.grad, t.grad, atol * 10, rtol * 10)
    eparams = dict(emod.named_parameters())
    for name, p in tmod.named_parameters():
        if p.grad is None:
            assert eparams[name].grad is None or not bool(eparams[name].grad.abs().sum()), name
        else:
            assert eparams[name].grad is not None, f'{name}: no gradient'
            assert_same(eparams[name].grad, p.grad, atol * 10, rtol * 10)
    return emod, tmod
