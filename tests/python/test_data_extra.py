"""More of ember.utils.data against torch.utils.data 1.13: collation of NumPy
scalars and namedtuples, the dataloader module's names, DistributedSampler,
Dataset.__add__, pin_memory without a GPU, worker_init_fn and
get_worker_info fields, and reproducible sampling from a generator.
(Ember's RNG is Philox, torch's CPU one Mersenne Twister: a permutation
drawn from the same seed differs between them, so orders are compared
within Ember and only their properties against torch.)"""
import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import ember
import ember.utils.data as edata
from test_data import same


@pytest.mark.parametrize('values', [[np.float64(1.5), np.float64(2)], [np.int32(1), np.int32(2)],
                                    [np.float32(1), np.float32(3)], [np.bool_(True), np.bool_(False)],
                                    [np.int64(7), np.int64(8)]])
def test_collate_numpy_scalars_keep_dtype(values):
    same(edata.default_collate(values), tdata.default_collate(values))


def test_collate_namedtuple_of_arrays_and_strings():
    P = collections.namedtuple('P', 'x y n')
    batch = [P(np.array([1., 2.]), 'a', 3), P(np.array([3., 4.]), 'b', 4)]
    e, t = edata.default_collate(batch), tdata.default_collate(batch)
    assert type(e) is P
    same(tuple(e), tuple(t))


def test_module_paths():
    import ember.utils.data.dataloader as edl
    import ember.utils.data.distributed as edist
    assert edl.default_collate is edata.default_collate and edl.default_convert is edata.default_convert
    assert edl.get_worker_info is edata.get_worker_info
    assert edist.DistributedSampler is edata.DistributedSampler


@pytest.mark.parametrize('n,replicas,drop_last', [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                                  (7, 2, False)])
def test_distributed_sampler_without_shuffle(n, replicas, drop_last):
    for rank in range(replicas):
        e = edata.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        t = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(e) == list(t) and len(e) == len(t)


def test_distributed_sampler_shuffle_partitions_and_epochs():
    shards = [list(edata.DistributedSampler(range(12), 3, r, seed=5)) for r in range(3)]
    assert sorted(sum(shards, [])) == list(range(12))
    again = [list(edata.DistributedSampler(range(12), 3, r, seed=5)) for r in range(3)]
    assert again == shards
    s = edata.DistributedSampler(range(12), 3, 0, seed=5)
    s.set_epoch(1)
    assert list(s) != shards[0] and len(s) == 4


def test_distributed_sampler_errors():
    for m in (tdata, edata):
        with pytest.raises(ValueError, match=r'Invalid rank 3, rank should be in the interval \[0, 2\]'):
            m.DistributedSampler(range(4), 3, 3)
    for m in (tdata, edata):  # no process group: torch's error
        with pytest.raises(RuntimeError, match='Default process group has not been initialized'):
            m.DistributedSampler(range(4))


def test_dataset_add():
    for m, mod in ((tdata, torch), (edata, ember)):
        a = m.TensorDataset(mod.arange(3.))
        b = m.TensorDataset(mod.arange(2.))
        cat = a + b
        assert type(cat).__name__ == 'ConcatDataset' and len(cat) == 5 and cat[4][0].item() == 1.0

        class It(m.IterableDataset):
            def __iter__(self):
                return iter([1, 2])
        chain = It() + It()
        assert type(chain).__name__ == 'ChainDataset' and list(chain) == [1, 2, 1, 2]


def test_pin_memory_without_gpu_is_accepted_silently():
    for m in (tdata, edata):
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            batches = list(m.DataLoader(range(4), batch_size=2, pin_memory=True))
        assert [b.tolist() for b in batches] == [[0, 1], [2, 3]]


class WorkerInfo(edata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = edata.get_worker_info()
        return (info.id, info.num_workers, info.seed, type(info.dataset).__name__, info.dataset is self,
                getattr(info.dataset, 'tag', None))


def _tag(worker_id):
    edata.get_worker_info().dataset.tag = worker_id + 100


def test_worker_init_fn_and_worker_info():
    g = ember.Generator().manual_seed(11)
    items = list(edata.DataLoader(WorkerInfo(), batch_size=None, num_workers=2, worker_init_fn=_tag, generator=g))
    ids = [x[0] for x in items]
    assert ids == [0, 1, 0, 1]
    assert all(x[1] == 2 and x[3] == 'WorkerInfo' and x[4] for x in items)
    seeds = {x[0]: x[2] for x in items}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker id, as torch
    assert [x[5] for x in items] == [100, 101, 100, 101]
    again = list(edata.DataLoader(WorkerInfo(), batch_size=None, num_workers=2, worker_init_fn=_tag,
                                  generator=ember.Generator().manual_seed(11)))
    assert again == items


def test_sampling_is_reproducible_from_a_generator():
    def draw(seed):
        g = ember.Generator().manual_seed(seed)
        return (list(edata.RandomSampler(range(20), generator=g)),
                list(edata.RandomSampler(range(20), replacement=True, num_samples=40, generator=g)),
                list(edata.SubsetRandomSampler([3, 5, 7, 9], generator=g)),
                list(edata.WeightedRandomSampler([0.1, 0.5, 2.0, 0.0], 10, generator=g)),
                [s.indices for s in edata.random_split(range(10), [0.3, 0.7], generator=g)])
    a, b, c = draw(3), draw(3), draw(4)
    assert a == b and a != c
    perm, with_repl, subset, weighted, split = a
    assert sorted(perm) == list(range(20)) and len(with_repl) == 40 and max(with_repl) < 20
    assert sorted(subset) == [3, 5, 7, 9] and 3 not in weighted
    assert sorted(split[0] + split[1]) == list(range(10)) and len(split[0]) == 3
    loader = lambda s: [b.tolist() for b in edata.DataLoader(range(8), batch_size=3, shuffle=True,  # noqa: E731
                                                              generator=ember.Generator().manual_seed(s))]
    assert loader(1) == loader(1) and sorted(sum(loader(1), [])) == list(range(8))


def test_tensor_dataset_size_mismatch():
    for m, mod in ((tdata, torch), (edata, ember)):
        with pytest.raises(AssertionError, match='Size mismatch between tensors'):
            m.TensorDataset(mod.ones(3), mod.ones(4))
