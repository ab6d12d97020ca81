"""ember.utils.data: datasets, samplers, collation and the DataLoader, as
torch.utils.data in PyTorch 1.13 (workers hand batches back through shared
memory: Note [DataLoader workers] in dataloader.py)."""
from .dataset import (Dataset, IterableDataset, TensorDataset, ConcatDataset, ChainDataset, Subset,
                      random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
                      BatchSampler)
from ._collate import default_collate, default_convert
from ._worker import get_worker_info
from .dataloader import DataLoader
from .distributed import DistributedSampler
from . import datasets
from .datapipes.datapipe import (IterDataPipe, MapDataPipe, DFIterDataPipe, DataChunk, functional_datapipe,
                                 argument_validation, runtime_validation, runtime_validation_disabled,
                                 non_deterministic, guaranteed_datapipes_determinism)
from . import datapipes
from .dataloader2 import DataLoader2

__all__ = ['Dataset', 'IterableDataset', 'TensorDataset', 'ConcatDataset', 'ChainDataset', 'Subset',
           'random_split', 'Sampler', 'SequentialSampler', 'RandomSampler', 'SubsetRandomSampler',
           'WeightedRandomSampler', 'BatchSampler', 'default_collate', 'default_convert', 'get_worker_info',
           'DataLoader', 'DistributedSampler', 'IterDataPipe', 'MapDataPipe', 'DFIterDataPipe', 'DataChunk',
           'functional_datapipe', 'argument_validation', 'runtime_validation', 'runtime_validation_disabled',
           'non_deterministic', 'guaranteed_datapipes_determinism', 'DataLoader2']
