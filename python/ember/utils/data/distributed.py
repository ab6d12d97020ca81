"""DistributedSampler (torch.utils.data.distributed): each of num_replicas
processes reads its own 1/num_replicas of the dataset, the same shuffled
order on all of them for a given seed and epoch."""
import importlib
import math

import ember
from .sampler import Sampler

__all__ = ['DistributedSampler']


def _from_process_group(what):
    """The world size or rank of the default process group, when
    ember.distributed exists and is initialised."""
    try:
        dist = importlib.import_module('ember.distributed')
    except ImportError:
        dist = None
    if dist is None or not dist.is_available():
        raise RuntimeError('Requires distributed package to be available')
    return dist.get_world_size() if what == 'world_size' else dist.get_rank()


class DistributedSampler(Sampler):
    """Indices for replica `rank`: the (shuffled, seed + epoch) index list
    padded by wrapping around to a multiple of num_replicas (or cut, with
    drop_last), then every num_replicas-th from rank."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _from_process_group('world_size')
        if rank is None:
            rank = _from_process_group('rank')
        if rank >= num_replicas or rank < 0:
            raise ValueError(f'Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]')
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = ember.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ember.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Changes the shuffle order of the next iteration (on every replica alike)."""
        self.epoch = epoch
