"""Ember vs PyTorch 1.13, side by side (tinygrad's helper_test_op): one call
runs an op on both libraries with the same inputs and compares values,
dtypes, gradients and exception types."""
import numpy as np
import torch

import ember

DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool']
FLOATS = ['float32', 'float64']


def dtype_name(dt):
    return str(dt).split('.')[-1]


def to_torch(x):
    """An Ember tensor (or nested structure of them) as PyTorch objects."""
    if isinstance(x, ember.Tensor):
        src = x.detach().float() if x.dtype in (ember.float16, ember.bfloat16) else x.detach()
        return torch.tensor(src.reshape(-1).tolist(), dtype=getattr(torch, dtype_name(x.dtype))).reshape(tuple(x.shape))
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(v) for v in x)
    if isinstance(x, ember.dtype):
        return getattr(torch, dtype_name(x))
    return x


def to_ember(t):
    """A PyTorch tensor (or nested structure) as Ember objects, with the same
    strides and storage offset (so non-contiguous inputs stay non-contiguous)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        storage = torch.empty(0, dtype=t.dtype).set_(t.storage())
        src = storage.float() if t.dtype in (torch.float16, torch.bfloat16) else storage
        flat = ember.tensor(src.tolist(), dtype=getattr(ember, dtype_name(t.dtype)))
        return flat.as_strided(tuple(t.shape), t.stride(), t.storage_offset())
    if isinstance(t, (list, tuple)):
        return type(t)(to_ember(v) for v in t)
    if isinstance(t, torch.dtype):
        return getattr(ember, dtype_name(t))
    return t


def rand(*shape, dtype='float32', low=-3, high=3, seed=None, noncontig=False):
    """A random PyTorch tensor (values fit every dtype); noncontig gives a
    transposed or strided view with the same shape."""
    g = np.random.default_rng(seed)
    if dtype == 'bool':
        a = g.random(shape) > 0.5
    elif dtype in ('uint8',):
        a = g.integers(0, high * 3 + 1, shape)
    elif 'int' in dtype:
        a = g.integers(low, high + 1, shape)
    else:
        a = g.uniform(low, high, shape)
    t = torch.tensor(np.asarray(a)).to(getattr(torch, dtype))
    if noncontig and t.dim() >= 2:
        t = t.transpose(-1, -2).contiguous().transpose(-1, -2)
    elif noncontig and t.dim() == 1:
        t = torch.stack([t, t], 1)[:, 0]
    return t


def assert_same(e, t, atol=1e-5, rtol=1e-4, check_dtype=True, equal_nan=True):
    """Ember result e equals PyTorch result t (tensors, numbers, or nested)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f'expected a Tensor, got {type(e)}'
        assert tuple(e.shape) == tuple(t.shape), f'shape {tuple(e.shape)} != {tuple(t.shape)}'
        if check_dtype:
            assert dtype_name(e.dtype) == dtype_name(t.dtype), f'dtype {e.dtype} != {t.dtype}'
        te = to_torch(e)
        if t.dtype.is_floating_point or te.dtype.is_floating_point:
            if t.dtype in (torch.float16, torch.bfloat16):
                atol, rtol = max(atol, 1e-2), max(rtol, 1e-2)
            assert torch.allclose(te.double(), t.double(), atol=atol, rtol=rtol, equal_nan=equal_nan), \
                f'values differ:\nember {te}\ntorch {t}'
        else:
            assert torch.equal(te, t), f'values differ:\nember {te}\ntorch {t}'
    elif isinstance(t, (list, tuple)):
        assert isinstance(e, (list, tuple)) and len(e) == len(t), f'{type(e)} of {len(e)} vs {len(t)}'
        for a, b in zip(e, t):
            assert_same(a, b, atol, rtol, check_dtype, equal_nan)
    elif isinstance(t, float):
        assert abs(e - t) <= atol + rtol * abs(t) or (e != e and t != t), f'{e} != {t}'
    else:
        assert e == t, f'{e!r} != {t!r}'


def check(fn, *inputs, grad=False, atol=1e-5, rtol=1e-4, efn=None, check_dtype=True):
    """Runs fn(torch-inputs) with torch and (efn or fn)(ember-inputs) with
    ember (fn receives the module as `m` keyword), compares outputs and, with
    grad=True, the gradients of float inputs for a random upstream gradient.
    Inputs are PyTorch tensors or plain Python values."""
    efn = efn or fn
    tin = [x.clone().requires_grad_(grad and x.dtype.is_floating_point) if isinstance(x, torch.Tensor) else x
           for x in inputs]
    ein = [to_ember(x.detach()) if isinstance(x, torch.Tensor) else x for x in tin]
    if grad:
        ein = [x.requires_grad_(True) if isinstance(x, ember.Tensor) and x.dtype.is_floating_point else x
               for x in ein]
    tout = fn(*tin, m=torch)
    eout = efn(*ein, m=ember)
    assert_same(eout, tout, atol, rtol, check_dtype)
    if grad:
        touts = tout if isinstance(tout, (list, tuple)) else [tout]
        eouts = eout if isinstance(eout, (list, tuple)) else [eout]
        pairs = [(t, e) for t, e in zip(touts, eouts) if isinstance(t, torch.Tensor) and t.requires_grad]
        ups = [rand(*t.shape, dtype=dtype_name(t.dtype), seed=i) for i, (t, _) in enumerate(pairs)]
        tin_g = [x for x in tin if isinstance(x, torch.Tensor) and x.requires_grad]
        ein_g = [x for x in ein if isinstance(x, ember.Tensor) and x.requires_grad]
        try:
            tg = torch.autograd.grad([t for t, _ in pairs], tin_g, ups, allow_unused=True)
        except Exception as e:  # noqa: BLE001 - no derivative in torch: ember must refuse too
            texc = type(e)
            try:
                ember.autograd.grad([e for _, e in pairs], ein_g, [to_ember(u) for u in ups], allow_unused=True)
            except Exception as e:  # noqa: BLE001
                assert isinstance(e, texc), f'ember raised {type(e).__name__}: {e}; torch {texc.__name__}'
                return eout, tout
            raise AssertionError(f'ember computed a gradient where torch raised {texc.__name__}')
        eg = ember.autograd.grad([e for _, e in pairs], ein_g, [to_ember(u) for u in ups], allow_unused=True)
        for a, b in zip(eg, tg):
            if b is None:
                assert a is None or not bool(a.abs().sum())
            else:
                assert_same(a, b, atol * 10, rtol * 10, check_dtype)
    return eout, tout


def torch_lacks(exc):
    """PyTorch 1.13 refuses for want of a kernel or an API form that Ember
    documents as a superset: a float16/bfloat16 CPU kernel, an out= argument,
    a Python-number operand. Ember may compute there."""
    msg = str(exc)
    return (("not implemented for 'Half'" in msg or "not implemented for 'BFloat16'" in msg)
            or (isinstance(exc, TypeError) and ('unexpected keyword argument' in msg or 'must be Tensor, not' in msg
                                                or 'invalid combination of arguments' in msg)))


def check_raises(fn, *inputs, efn=None):
    """Both libraries raise for these inputs, the same exception type."""
    efn = efn or fn
    ein = [to_ember(x) if isinstance(x, torch.Tensor) else x for x in inputs]
    try:
        fn(*inputs, m=torch)
    except Exception as e:  # noqa: BLE001 - any exception type is compared
        texc = type(e)
    else:
        raise AssertionError('torch did not raise')
    try:
        efn(*ein, m=ember)
    except Exception as e:  # noqa: BLE001
        assert isinstance(e, texc) or type(e) is texc, f'ember raised {type(e).__name__}: {e}; torch {texc.__name__}'
    else:
        raise AssertionError(f'ember did not raise (torch raised {texc.__name__})')
