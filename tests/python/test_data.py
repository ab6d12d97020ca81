"""ember.utils.data in one process, against torch.utils.data (PyTorch 1.13):
datasets, samplers, random_split, collation, DataLoader checks and len,
and the IDX reader with MNIST/FashionMNIST (worker processes are in
test_multiprocessing.py)."""
import collections
import gzip
import os
import struct

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata
from ember.utils.data.datasets import FashionMNIST, MNIST


def same(e, t):
    """Structures of Ember and PyTorch results agree (types, dtypes, values)."""
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor) and str(e.dtype) == str(t.dtype).replace('torch', 'ember')
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    elif isinstance(t, dict):
        assert type(e) is type(t) and list(e) == list(t)
        for k in t:
            same(e[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(e).__name__ == type(t).__name__ and len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b)
    else:
        assert e == t and type(e) is type(t)


def both(fn):
    """fn(module) with torch's and ember's utils.data; returns both results or both exceptions."""
    out = []
    for m in (tdata, edata):
        try:
            out.append(fn(m))
        except Exception as exc:  # compared below
            out.append(exc)
    return out


def same_error(fn):
    t, e = both(fn)
    assert isinstance(t, Exception), t
    assert type(e) is type(t) and str(e) == str(t), (e, t)


Point = collections.namedtuple('Point', 'x y')


@pytest.mark.parametrize('make', [
    lambda m, M: [M.tensor([1., 2.]), M.tensor([3., 4.])],
    lambda m, M: [1, 2, 3],
    lambda m, M: [1.5, 2.5],
    lambda m, M: [True, False],
    lambda m, M: ['a', 'b'],
    lambda m, M: [np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)],
    lambda m, M: [np.float32(1), np.float32(2)],
    lambda m, M: [{'a': M.ones(2), 'b': 1}, {'a': M.zeros(2), 'b': 2}],
    lambda m, M: [(M.ones(1), 2), (M.zeros(1), 3)],
    lambda m, M: [[1, 2], [3, 4]],
    lambda m, M: [Point(1, M.ones(2)), Point(2, M.zeros(2))],
])
def test_default_collate(make):
    same(edata.default_collate(make(edata, ember)), tdata.default_collate(make(tdata, torch)))


def test_default_collate_errors_and_convert():
    same_error(lambda m: m.default_collate([object(), object()]))
    same_error(lambda m: m.default_collate([np.array(['a']), np.array(['b'])]))
    same_error(lambda m: m.default_collate([[1, 2], [3]]))
    same(edata.default_convert(np.array([1, 2])), tdata.default_convert(np.array([1, 2])))
    same(edata.default_convert(Point(np.array(0), 1)), tdata.default_convert(Point(np.array(0), 1)))
    same(edata.default_convert((np.array([1.]), 'x')), tdata.default_convert((np.array([1.]), 'x')))


def test_datasets():
    x, y = ember.arange(10).float(), ember.arange(10) * 2
    ds = edata.TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][1].item() == 6
    cat = ds + edata.TensorDataset(x[:3], y[:3])
    assert isinstance(cat, edata.ConcatDataset) and len(cat) == 13 and cat[11][0].item() == 1 and cat[-1][1].item() == 4
    sub = edata.Subset(ds, [9, 0, 4])
    assert len(sub) == 3 and sub[0][0].item() == 9
    same_error(lambda m: m.ConcatDataset([]))
    same_error(lambda m: m.ConcatDataset([m.TensorDataset(torch.ones(2))])[-5])

    class Count(edata.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chain = Count(2) + Count(3)
    assert isinstance(chain, edata.ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5


def test_random_split():
    g = ember.Generator().manual_seed(1)
    for lengths in ([3, 7], [0.3, 0.7], [0.33, 0.33, 0.34], [1.0]):
        t = tdata.random_split(range(10), lengths)
        e = edata.random_split(range(10), lengths, generator=g)
        assert [len(s) for s in e] == [len(s) for s in t]
        assert sorted(i for s in e for i in s) == list(range(10))
    a = [list(s) for s in edata.random_split(range(10), [5, 5], generator=ember.Generator().manual_seed(3))]
    b = [list(s) for s in edata.random_split(range(10), [5, 5], generator=ember.Generator().manual_seed(3))]
    assert a == b
    same_error(lambda m: m.random_split(range(10), [3, 3]))
    same_error(lambda m: m.random_split(range(10), [1.5, -0.5]))


def test_samplers():
    assert list(edata.SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = ember.Generator().manual_seed(0)
    perm = list(edata.RandomSampler(range(20), generator=g))
    assert sorted(perm) == list(range(20)) and perm != list(range(20))
    s = edata.RandomSampler(range(5), replacement=True, num_samples=70, generator=g)
    draws = list(s)
    assert len(draws) == len(s) == 70 and set(draws) <= set(range(5))
    assert len(list(edata.RandomSampler(range(5), num_samples=12))) == 12
    assert sorted(edata.SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    w = list(edata.WeightedRandomSampler([0, 0, 1.0, 0], 6))
    assert w == [2] * 6
    assert sorted(edata.WeightedRandomSampler([1, 1, 1], 3, replacement=False)) == [0, 1, 2]
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (0, 2, False)]:
        t = tdata.BatchSampler(range(n), bs, drop)
        e = edata.BatchSampler(range(n), bs, drop)
        assert list(e) == list(t) and len(e) == len(t)
    same_error(lambda m: m.RandomSampler(range(3), replacement=1))
    same_error(lambda m: m.RandomSampler(range(3), num_samples=0))
    same_error(lambda m: m.RandomSampler([]))
    same_error(lambda m: m.WeightedRandomSampler([1, 2], 0))
    same_error(lambda m: m.WeightedRandomSampler([[1, 2]], 2))
    same_error(lambda m: m.BatchSampler(range(3), 0, False))
    same_error(lambda m: m.BatchSampler(range(3), 2, 'no'))


def test_dataloader_batches_and_len():
    x = np.arange(22, dtype=np.float32).reshape(11, 2)
    for kw in [{}, {'batch_size': 4}, {'batch_size': 4, 'drop_last': True}, {'batch_size': None}]:
        t = list(tdata.DataLoader(tdata.TensorDataset(torch.from_numpy(x)), **kw))
        el = edata.DataLoader(edata.TensorDataset(ember.from_numpy(x)), **kw)
        same(list(el), t)
        assert len(el) == len(t)
    bs = [[0, 1], [5, 6, 7]]
    same(list(edata.DataLoader(list(range(10)), batch_sampler=bs)), list(tdata.DataLoader(list(range(10)), batch_sampler=bs)))
    g = ember.Generator().manual_seed(5)
    shuffled = [b.tolist() for b in edata.DataLoader(list(range(10)), batch_size=5, shuffle=True, generator=g)]
    assert sorted(sum(shuffled, [])) == list(range(10))

    class Count(edata.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    loader = edata.DataLoader(Count(), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]] and len(loader) == 3
    assert len(edata.DataLoader(Count(), batch_size=3, drop_last=True)) == 2
    assert edata.get_worker_info() is None


def test_dataloader_argument_checks():
    ds = list(range(4))
    for kw in [{'num_workers': -1}, {'timeout': -1}, {'prefetch_factor': 3}, {'persistent_workers': True},
               {'shuffle': True, 'sampler': [0, 1]}, {'batch_sampler': [[0]], 'batch_size': 2},
               {'batch_sampler': [[0]], 'drop_last': True}, {'batch_size': None, 'drop_last': True},
               {'multiprocessing_context': 'fork'}, {'num_workers': 1, 'multiprocessing_context': 'nope'},
               {'num_workers': 1, 'multiprocessing_context': 3}]:
        same_error(lambda m: m.DataLoader(ds, **kw))

    class It(tdata.IterableDataset):
        def __iter__(self):
            return iter([])

    class EIt(edata.IterableDataset):
        def __iter__(self):
            return iter([])

    for kw in [{'shuffle': True}, {'sampler': [0]}, {'batch_sampler': [[0]]}]:
        same_error(lambda m: m.DataLoader(It() if m is tdata else EIt(), **kw))
    same_error(lambda m: setattr(m.DataLoader(ds), 'batch_size', 3))
    edata.DataLoader(ds, pin_memory=True)  # accepted: nothing to pin on the CPU


# ---- IDX files and MNIST-style datasets --------------------------------------------------
def write_idx(path, array, code, gz=True):
    header = struct.pack('>BBBB', 0, 0, code, array.ndim) + struct.pack('>' + 'I' * array.ndim, *array.shape)
    data = header + array.astype(array.dtype.newbyteorder('>')).tobytes()
    with (gzip.open if gz else open)(path, 'wb') as f:
        f.write(data)


@pytest.mark.parametrize('dtype,code', [(np.uint8, 8), (np.int8, 9), (np.int16, 11), (np.int32, 12),
                                        (np.float32, 13), (np.float64, 14)])
def test_read_idx(tmp_path, dtype, code):
    a = (np.arange(24).reshape(2, 3, 4) - 5).astype(dtype)
    for gz in (False, True):
        p = tmp_path / f'x{gz}.idx'
        write_idx(p, a, code, gz)
        t = ember._C._read_idx(str(p))
        assert t.numpy().dtype == a.dtype
        np.testing.assert_array_equal(t.numpy(), a)
    p.write_bytes(b'\x00\x01\x08\x01')
    with pytest.raises(ValueError, match='magic'):
        ember._C._read_idx(str(p))
    p.write_bytes(b'\x00\x00\x08\x02\x00\x00\x00\x02\x00\x00\x00\x02\x01')
    with pytest.raises(ValueError, match='truncated'):
        ember._C._read_idx(str(p))
    with pytest.raises(RuntimeError, match='cannot open'):
        ember._C._read_idx(str(tmp_path / 'missing'))


def test_mnist_from_small_files(tmp_path):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    raw = tmp_path / 'FashionMNIST' / 'raw'
    raw.mkdir(parents=True)
    write_idx(raw / 't10k-images-idx3-ubyte.gz', imgs, 8)
    write_idx(tmp_path / 't10k-labels-idx1-ubyte', labels, 8, gz=False)
    ds = FashionMNIST(str(tmp_path), train=False, transform=lambda x: x.float() / 255,
                      target_transform=lambda y: y * 10)
    assert len(ds) == 5 and ds.classes[9] == 'Ankle boot'
    img, target = ds[2]
    assert target == 40 and img.dtype == ember.float32 and tuple(img.shape) == (28, 28)
    np.testing.assert_allclose(img.numpy(), imgs[2] / 255, rtol=1e-6)
    assert ds.targets.dtype == ember.int64
    with pytest.raises(RuntimeError, match='apt-get install dataset-fashion-mnist'):
        FashionMNIST(str(tmp_path), train=True)
    with pytest.raises(ValueError, match='root'):
        MNIST()
    write_idx(raw / 't10k-images-idx3-ubyte.gz', imgs[:4], 8)
    with pytest.raises(RuntimeError, match='do not match'):
        FashionMNIST(str(tmp_path), train=False)
    write_idx(tmp_path / 't10k-images-idx3-ubyte', imgs, 8, gz=False)
    batch = next(iter(edata.DataLoader(MNIST(str(tmp_path), train=False), batch_size=4)))
    assert tuple(batch[0].shape) == (4, 28, 28) and batch[1].tolist() == [3, 1, 4, 1]


@pytest.mark.skipif(not os.path.isdir('/usr/share/datasets/fashion-mnist'),
                    reason='apt-get install dataset-fashion-mnist')
def test_fashion_mnist_real_files():
    test = FashionMNIST(train=False)
    assert len(test) == 10000 and tuple(test.data.shape) == (10000, 28, 28)
    with gzip.open('/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz') as f:
        labels = np.frombuffer(f.read()[8:], dtype=np.uint8)
    np.testing.assert_array_equal(test.targets.numpy(), labels)
    assert len(FashionMNIST(train=True)) == 60000
