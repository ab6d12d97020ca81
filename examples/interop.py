"""NumPy and DLPack interop: tensors that share memory with NumPy arrays and
with PyTorch tensors, both ways, without a copy (each shown by a mutation on
one side seen on the other).

    /usr/bin/python3 examples/interop.py [--n 4]

Replacing `import ember as torch` by `import torch` runs it on PyTorch alone
(then the "other library" is PyTorch itself)."""
import argparse

import numpy as np

import ember as torch

try:
    import torch as pytorch  # the real PyTorch, for the DLPack exchange
except ImportError:
    pytorch = None


def shares(a, b):
    """Same first element address: the two objects view one buffer."""
    return a.__array_interface__['data'][0] == b.data_ptr() if isinstance(a, np.ndarray) \
        else a.data_ptr() == b.data_ptr()


def numpy_to_tensor(n):
    a = np.arange(n, dtype=np.float32)
    t = torch.from_numpy(a)             # zero-copy: t views a's buffer
    a[0] = 100.0                        # write through NumPy ...
    print(f'from_numpy:  a[0] = 100 -> t[0] = {t[0].item():g}   shared={shares(a, t)}')
    assert t[0].item() == 100.0


def tensor_to_numpy(n):
    t = torch.ones(2, n, dtype=torch.float64)
    a = t.numpy()                       # zero-copy: a views t's storage
    t.mul_(3)                           # in-place write through the tensor ...
    print(f'.numpy():    t *= 3     -> a[0, 0] = {a[0, 0]:g}     shared={shares(a, t)}')
    assert a[0, 0] == 3.0
    c = torch.tensor(a)                 # torch.tensor always copies
    c.zero_()
    print(f'tensor():    copy zeroed -> a[0, 0] = {a[0, 0]:g}     shared={shares(a, c)}')


def numpy_via_dlpack(n):
    t = torch.arange(n, dtype=torch.int64)
    a = np.from_dlpack(t)               # NumPy >= 1.22 speaks DLPack
    t[1] = -7
    print(f'np.from_dlpack(tensor): t[1] = -7 -> a[1] = {a[1]}')
    assert a[1] == -7
    a2 = np.linspace(0.0, 1.0, n)
    t2 = torch.from_dlpack(a2)          # and back: a tensor on NumPy's memory
    a2[-1] = 42.0
    print(f'from_dlpack(ndarray):   a[-1] = 42 -> t[-1] = {t2[-1].item():g}')
    assert t2[-1].item() == 42.0


def pytorch_via_dlpack(n):
    if pytorch is None:
        print('PyTorch is not installed: skipping the exchange with it')
        return
    mine = torch.zeros(n, 3)
    theirs = pytorch.from_dlpack(mine)  # ours -> PyTorch, no copy
    mine[0, 0] = 5.0
    print(f'{torch.__name__} -> torch: ours[0,0] = 5  -> theirs[0,0] = {theirs[0, 0].item():g}  '
          f'shared={mine.data_ptr() == theirs.data_ptr()}')
    assert theirs[0, 0].item() == 5.0

    src = pytorch.randn(n, 2, dtype=pytorch.float64)
    back = torch.from_dlpack(src)       # PyTorch -> ours, no copy
    src.add_(1.0)
    ok = np.allclose(back.numpy(), src.numpy())
    print(f'torch -> {torch.__name__}: theirs += 1     -> ours follows: {ok}  '
          f'shared={back.data_ptr() == src.data_ptr()}')
    assert ok

    capsule = pytorch.utils.dlpack.to_dlpack(pytorch.arange(n))   # a legacy capsule works too
    print(f'capsule:    {torch.from_dlpack(capsule).tolist()}')


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--n', type=int, default=4, help='length of the example tensors')
    args = p.parse_args()
    print(f'interop with {torch.__name__}: NumPy {np.__version__}, '
          f'PyTorch {pytorch.__version__ if pytorch else "absent"}')
    numpy_to_tensor(args.n)
    tensor_to_numpy(args.n)
    numpy_via_dlpack(args.n)
    pytorch_via_dlpack(args.n)
    print('interop: all zero-copy exchanges checked')


if __name__ == '__main__':
    main()
