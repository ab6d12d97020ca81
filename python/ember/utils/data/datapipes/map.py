"""The map-style DataPipes of torch 1.13 (torch.utils.data.datapipes.map), registered as methods of
every MapDataPipe: dp.map, batch, concat, shuffle, zip."""
import copy
import random
import warnings

from .datapipe import DataChunk, IterDataPipe, MapDataPipe, functional_datapipe

__all__ = ['SequenceWrapper', 'Mapper', 'Batcher', 'Concater', 'Shuffler', 'Zipper']


class SequenceWrapper(MapDataPipe):
    """A MapDataPipe over a sequence (deep-copied once unless deepcopy=False)."""

    def __init__(self, sequence, deepcopy=True):
        if deepcopy:
            try:
                sequence = copy.deepcopy(sequence)
            except TypeError:
                warnings.warn('The input sequence can not be deepcopied, so in-place changes affect it')
        self.sequence = sequence

    def __getitem__(self, index):
        return self.sequence[index]

    def __len__(self):
        return len(self.sequence)


@functional_datapipe('map')
class Mapper(MapDataPipe):
    """dp[i] through fn."""

    def __init__(self, datapipe, fn=lambda x: x):
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe('batch')
class Batcher(MapDataPipe):
    """Batch i is items i*batch_size... as a wrapper_class list (a shorter last one unless drop_last)."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        assert batch_size > 0, 'Batch size is required to be larger than 0!'
        self.datapipe, self.batch_size, self.drop_last, self.wrapper_class = datapipe, batch_size, drop_last, \
            wrapper_class

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f'Index {index} is out of bound.')
        start = index * self.batch_size
        return self.wrapper_class([self.datapipe[i] for i in range(start, min(start + self.batch_size,
                                                                                len(self.datapipe)))])

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


@functional_datapipe('concat')
class Concater(MapDataPipe):
    """The items of each DataPipe in turn, indexed through."""

    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError('Expected at least one DataPipe, but got nothing')
        if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
            raise TypeError('Expected all inputs to be `MapDataPipe`')
        self.datapipes = datapipes

    def __getitem__(self, index):
        offset = index
        for dp in self.datapipes:
            if offset < len(dp):
                return dp[offset]
            offset -= len(dp)
        raise IndexError(f'Index {index} is out of range.')

    def __len__(self):
        return sum(len(dp) for dp in self.datapipes)


class Shuffler(IterDataPipe):
    """dp's items in a shuffled order of `indices` (all by default): an IterDataPipe, as torch 1.13's;
    the seed is drawn from ember's generator at each iteration unless set_seed gave one."""

    def __init__(self, datapipe, *, indices=None):
        self.datapipe = datapipe
        self.indices = list(range(len(datapipe))) if indices is None else indices
        self._enabled, self._seed = True, None

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        order = list(self.indices)
        if self._enabled:
            import ember
            seed = self._seed if self._seed is not None else int(ember.empty((), dtype=ember.int64).random_().item())
            self._seed = None
            random.Random(seed).shuffle(order)
        for i in order:
            yield self.datapipe[i]

    def __len__(self):
        return len(self.indices)


MapDataPipe.register_datapipe_as_function('shuffle', Shuffler)


@functional_datapipe('zip')
class Zipper(MapDataPipe):
    """Tuples (dp[i] for each dp), as long as the shortest."""

    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError('Expected at least one DataPipe, but got nothing')
        if not all(isinstance(dp, MapDataPipe) for dp in datapipes):
            raise TypeError('Expected all inputs to be `MapDataPipe`')
        self.datapipes = datapipes

    def __getitem__(self, index):
        return tuple(dp[index] for dp in self.datapipes)

    def __len__(self):
        return min(len(dp) for dp in self.datapipes)
