"""The iterable-style DataPipes of torch 1.13 (torch.utils.data.datapipes.iter), each registered
as a method of every IterDataPipe: dp.map, filter, batch, unbatch, shuffle, zip, concat, collate,
sharding_filter, fork, demux, mux, groupby, list_files, open_files, read_from_stream."""
import collections
import copy
import fnmatch
import os
import random
import warnings

from .datapipe import DataChunk, IterDataPipe, functional_datapipe
from .._collate import default_collate
from ..sampler import SequentialSampler

__all__ = ['IterableWrapper', 'Mapper', 'Filter', 'Batcher', 'UnBatcher', 'Shuffler', 'Zipper', 'Concater', 'Collator',
           'ShardingFilter', 'Forker', 'Demultiplexer', 'Multiplexer', 'Grouper', 'Sampler', 'FileLister',
           'FileOpener', 'StreamReader']


def _length(datapipe, owner):
    try:
        return len(datapipe)
    except TypeError:
        raise TypeError(f"{type(owner).__name__} instance doesn't have valid length") from None


class IterableWrapper(IterDataPipe):
    """An IterDataPipe over any iterable (deep-copied per iteration unless deepcopy=False)."""

    def __init__(self, iterable, deepcopy=True):
        self.iterable, self.deepcopy = iterable, deepcopy

    def __iter__(self):
        source = self.iterable
        if self.deepcopy:
            try:
                source = copy.deepcopy(self.iterable)
            except TypeError:
                warnings.warn('The input iterable can not be deepcopied, so in-place changes affect it')
        yield from source

    def __len__(self):
        return _length(self.iterable, self)


def _apply_columns(fn, data, input_col, output_col):
    """fn applied to data (input_col None), or to some of its columns, the result stored back at
    output_col (None: in place of the input columns; -1: appended)."""
    if input_col is None:
        return fn(data)
    cols = list(input_col) if isinstance(input_col, (list, tuple)) else [input_col]
    result = fn(*(data[c] for c in cols))
    was_tuple = isinstance(data, tuple)
    data = list(data) if was_tuple else data
    if output_col is None:
        data[cols[0]] = result
        for c in sorted(cols[1:], reverse=True):
            del data[c]
    elif output_col == -1:
        data.append(result)
    else:
        data[output_col] = result
    return tuple(data) if was_tuple else data


@functional_datapipe('map')
class Mapper(IterDataPipe):
    """Each item through fn (or some of its columns: input_col, output_col)."""

    def __init__(self, datapipe, fn, input_col=None, output_col=None):
        if input_col is None and output_col is not None:
            raise ValueError('`output_col` must be None when `input_col` is None.')
        if isinstance(output_col, (list, tuple)):
            if len(output_col) > 1:
                raise ValueError('`output_col` must be a single-element list or tuple')
            output_col = output_col[0]
        self.datapipe, self.fn, self.input_col, self.output_col = datapipe, fn, input_col, output_col

    def __iter__(self):
        for data in self.datapipe:
            yield _apply_columns(self.fn, data, self.input_col, self.output_col)

    def __len__(self):
        return _length(self.datapipe, self)


@functional_datapipe('filter')
class Filter(IterDataPipe):
    """The items for which filter_fn (of the item, or of its input_col columns) is true."""

    def __init__(self, datapipe, filter_fn, drop_empty_batches=None, input_col=None):
        self.datapipe, self.filter_fn, self.input_col = datapipe, filter_fn, input_col

    def _keep(self, data):
        if self.input_col is None:
            return self.filter_fn(data)
        cols = self.input_col if isinstance(self.input_col, (list, tuple)) else [self.input_col]
        return self.filter_fn(*(data[c] for c in cols))

    def __iter__(self):
        for data in self.datapipe:
            keep = self._keep(data)
            if not isinstance(keep, bool):
                raise ValueError(f'Boolean output is required for `filter_fn` of FilterIterDataPipe, got {type(keep)}')
            if keep:
                yield data


@functional_datapipe('batch')
class Batcher(IterDataPipe):
    """Items in batches of batch_size (a shorter last one unless drop_last), as wrapper_class lists."""

    def __init__(self, datapipe, batch_size, drop_last=False, wrapper_class=DataChunk):
        assert batch_size > 0, 'Batch size is required to be larger than 0!'
        self.datapipe, self.batch_size, self.drop_last, self.wrapper_class = datapipe, batch_size, drop_last, \
            wrapper_class

    def __iter__(self):
        batch = []
        for x in self.datapipe:
            batch.append(x)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        n = _length(self.datapipe, self)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


@functional_datapipe('unbatch')
class UnBatcher(IterDataPipe):
    """The items of batches, unbatch_level levels deep (-1: all the way down)."""

    def __init__(self, datapipe, unbatch_level=1):
        self.datapipe, self.unbatch_level = datapipe, unbatch_level

    def __iter__(self):
        for element in self.datapipe:
            yield from self._dive(element, self.unbatch_level)

    def _dive(self, element, level):
        if level < -1:
            raise ValueError('unbatch_level must be -1 or >= 0')
        if level == -1:
            if isinstance(element, (list, DataChunk)):
                for item in element:
                    yield from self._dive(item, -1)
            else:
                yield element
        elif level == 0:
            yield element
        elif isinstance(element, (list, DataChunk)):
            for item in element:
                yield from self._dive(item, level - 1)
        else:
            raise IndexError(f'unbatch_level {self.unbatch_level} exceeds the depth of the DataPipe')


@functional_datapipe('shuffle')
class Shuffler(IterDataPipe):
    """Items shuffled through a buffer of buffer_size; the seed is drawn from ember's generator at
    each iteration (so ember.manual_seed makes it repeatable) unless set_seed gave one for it."""

    def __init__(self, datapipe, *, buffer_size=10000, unbatch_level=0):
        assert buffer_size > 0, 'buffer_size should be larger than 0'
        self.datapipe = datapipe if unbatch_level == 0 else datapipe.unbatch(unbatch_level=unbatch_level)
        self.buffer_size, self._enabled, self._seed = buffer_size, True, None

    def set_shuffle(self, shuffle=True):
        self._enabled = shuffle
        return self

    def set_seed(self, seed):
        self._seed = seed
        return self

    def __iter__(self):
        if not self._enabled:
            yield from self.datapipe
            return
        import ember
        seed = self._seed if self._seed is not None else int(ember.empty((), dtype=ember.int64).random_().item())
        self._seed = None  # a seed set by set_seed serves one iteration, as in torch
        rng, buffer = random.Random(seed), []
        for x in self.datapipe:
            if len(buffer) == self.buffer_size:
                i = rng.randint(0, len(buffer) - 1)
                buffer[i], x = x, buffer[i]
                yield x
            else:
                buffer.append(x)
        while buffer:
            yield buffer.pop(rng.randint(0, len(buffer) - 1))

    def __len__(self):
        return _length(self.datapipe, self)


def _check_datapipes(datapipes, what):
    if not all(isinstance(dp, IterDataPipe) for dp in datapipes):
        raise TypeError(f'All inputs are required to be `IterDataPipe` for `{what}`.')


@functional_datapipe('zip')
class Zipper(IterDataPipe):
    """Tuples of one item from each DataPipe, until the shortest ends."""

    def __init__(self, *datapipes):
        _check_datapipes(datapipes, 'ZipIterDataPipe')
        self.datapipes = datapipes

    def __iter__(self):
        yield from zip(*self.datapipes)

    def __len__(self):
        return min(_length(dp, self) for dp in self.datapipes)


@functional_datapipe('concat')
class Concater(IterDataPipe):
    """The items of each DataPipe in turn."""

    def __init__(self, *datapipes):
        if len(datapipes) == 0:
            raise ValueError('Expected at least one DataPipe, but got nothing')
        _check_datapipes(datapipes, 'ConcatIterDataPipe')
        self.datapipes = datapipes

    def __iter__(self):
        for dp in self.datapipes:
            yield from dp

    def __len__(self):
        return sum(_length(dp, self) for dp in self.datapipes)


@functional_datapipe('collate')
class Collator(Mapper):
    """Each item (usually a batch) through collate_fn, or `conversion` (default_collate)."""

    def __init__(self, datapipe, conversion=default_collate, collate_fn=None):
        fn = collate_fn if collate_fn is not None else conversion
        if isinstance(fn, dict):
            raise NotImplementedError('Collator with a dict of conversions (the dataframe prototype) is not '
                                      'implemented in Ember')
        super().__init__(datapipe, fn=fn)


@functional_datapipe('sharding_filter')
class ShardingFilter(IterDataPipe):
    """Keeps every num_of_instances-th item from instance_id (set by apply_sharding: DataLoader
    workers each keep their own shard)."""

    def __init__(self, source_datapipe):
        self.source_datapipe, self.num_of_instances, self.instance_id = source_datapipe, 1, 0

    def is_shardable(self):
        return True

    def apply_sharding(self, num_of_instances, instance_id):
        self.num_of_instances, self.instance_id = num_of_instances, instance_id

    def __iter__(self):
        for i, item in enumerate(self.source_datapipe):
            if i % self.num_of_instances == self.instance_id:
                yield item

    def __len__(self):
        n = _length(self.source_datapipe, self)
        return n // self.num_of_instances + (1 if self.instance_id < n % self.num_of_instances else 0)


class _Buffered:
    """One source iterated once for several children: each child reads its own queue, which the
    source fills (at most buffer_size items waiting, else BufferError)."""

    def __init__(self, datapipe, n, route, buffer_size):
        self.datapipe, self.n, self.route, self.buffer_size = datapipe, n, route, buffer_size
        self.queues, self.source, self.done = None, None, True

    def start(self):
        if self.source is None or (self.done and not any(self.queues)):
            self.source, self.done = iter(self.datapipe), False
            self.queues = [collections.deque() for _ in range(self.n)]

    def next(self, child):
        q = self.queues[child]
        while not q:
            if self.done:
                raise StopIteration
            try:
                item = next(self.source)
            except StopIteration:
                self.done = True
                continue
            for target in self.route(item):
                self.queues[target].append(item)
                if self.buffer_size >= 0 and len(self.queues[target]) > self.buffer_size:
                    raise BufferError(f'DataPipe buffer is full: more than {self.buffer_size} items wait for '
                                      f'child {target}')
        return q.popleft()


class _Child(IterDataPipe):
    def __init__(self, main, index):
        self.main, self.index = main, index

    def __iter__(self):
        self.main.start()
        while True:
            try:
                yield self.main.next(self.index)
            except StopIteration:
                return


def Forker(datapipe, num_instances, buffer_size=1000):
    """num_instances DataPipes that each yield all of datapipe's items (iterated once)."""
    if num_instances < 1:
        raise ValueError(f'Expected `num_instances` larger than 0, but {num_instances} is found')
    if num_instances == 1:
        return datapipe
    main = _Buffered(datapipe, num_instances, lambda item: range(num_instances), buffer_size)
    return tuple(_Child(main, i) for i in range(num_instances))


def Demultiplexer(datapipe, num_instances, classifier_fn, drop_none=False, buffer_size=1000):
    """num_instances DataPipes: item x goes to the one classifier_fn(x) names (None: dropped with
    drop_none, else ValueError)."""
    if num_instances < 1:
        raise ValueError(f'Expected `num_instances` larger than 0, but {num_instances} is found')

    def route(item):
        k = classifier_fn(item)
        if k is None and drop_none:
            return ()
        if not isinstance(k, int) or not 0 <= k < num_instances:
            raise ValueError(f'Output of the classification fn should be between 0 and {num_instances - 1}. '
                             f'{k} is returned.')
        return (k,)
    main = _Buffered(datapipe, num_instances, route, buffer_size)
    return tuple(_Child(main, i) for i in range(num_instances))


IterDataPipe.register_datapipe_as_function('fork', Forker)
IterDataPipe.register_datapipe_as_function('demux', Demultiplexer)


@functional_datapipe('mux')
class Multiplexer(IterDataPipe):
    """One item from each DataPipe in turn, ending with the first round the shortest cannot complete."""

    def __init__(self, *datapipes):
        self.datapipes = datapipes

    def __iter__(self):
        iterators = [iter(dp) for dp in self.datapipes]
        while iterators:
            round_ = []
            for it in iterators:
                try:
                    round_.append(next(it))
                except StopIteration:
                    return
            yield from round_

    def __len__(self):
        return min(_length(dp, self) for dp in self.datapipes) * len(self.datapipes)


@functional_datapipe('groupby')
class Grouper(IterDataPipe):
    """Items grouped by group_key_fn (as DataChunks): a group is yielded when it reaches group_size,
    the largest one when buffer_size items wait, and the rest at the end."""

    def __init__(self, datapipe, group_key_fn, *, buffer_size=10000, group_size=None, guaranteed_group_size=None,
                 drop_remaining=False):
        assert buffer_size > 0, 'buffer_size should be larger than 0'
        if group_size is not None:
            assert 0 < group_size <= buffer_size
            guaranteed_group_size = group_size if guaranteed_group_size is None else guaranteed_group_size
        if guaranteed_group_size is not None:
            assert group_size is not None and 0 < guaranteed_group_size <= group_size
        self.datapipe, self.group_key_fn, self.buffer_size = datapipe, group_key_fn, buffer_size
        self.group_size, self.guaranteed_group_size, self.drop_remaining = group_size, guaranteed_group_size, \
            drop_remaining

    def __iter__(self):
        groups, waiting = {}, 0
        for x in self.datapipe:
            key = self.group_key_fn(x)
            groups.setdefault(key, []).append(x)
            waiting += 1
            if self.group_size is not None and len(groups[key]) == self.group_size:
                waiting -= self.group_size
                yield DataChunk(groups.pop(key))
            if waiting == self.buffer_size:
                biggest = max(groups, key=lambda k: len(groups[k]))
                group = groups.pop(biggest)
                waiting -= len(group)
                if self.guaranteed_group_size is None or len(group) >= self.guaranteed_group_size:
                    yield DataChunk(group)
                elif not self.drop_remaining:
                    raise RuntimeError('Failed to group items', str(group))
        for key in list(groups):
            yield DataChunk(groups.pop(key))


class Sampler(IterDataPipe):
    """The items of datapipe in the order of a sampler over it (SequentialSampler by default)."""

    def __init__(self, datapipe, sampler=SequentialSampler, sampler_args=None, sampler_kwargs=None):
        self.datapipe = datapipe
        self.sampler = sampler(*(sampler_args or ()), data_source=datapipe, **(sampler_kwargs or {}))

    def __iter__(self):
        return iter(self.sampler)

    def __len__(self):
        return len(self.sampler)


@functional_datapipe('list_files')
class FileLister(IterDataPipe):
    """The paths of the files under root (a directory, several, or a DataPipe of them) whose names
    match masks (glob patterns), sorted; recursive walks subdirectories."""

    def __init__(self, root='.', masks='', *, recursive=False, abspath=False, non_deterministic=False, length=-1):
        self.roots = root if isinstance(root, IterDataPipe) else IterableWrapper([root] if isinstance(root, str)
                                                                                 else list(root))
        self.masks, self.recursive, self.abspath = masks, recursive, abspath
        self.non_deterministic, self.length = non_deterministic, length

    def _match(self, name):
        masks = [self.masks] if isinstance(self.masks, str) else self.masks
        return any(m == '' or fnmatch.fnmatch(name, m) for m in masks) if masks else True

    def __iter__(self):
        for root in self.roots:
            if os.path.isfile(root):
                if self._match(os.path.basename(root)):
                    yield os.path.abspath(root) if self.abspath else root
                continue
            for path, dirs, files in os.walk(root):
                dirs.sort()
                for f in (files if self.non_deterministic else sorted(files)):
                    if self._match(f):
                        full = os.path.join(path, f)
                        yield os.path.abspath(full) if self.abspath else full
                if not self.recursive:
                    break

    def __len__(self):
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


@functional_datapipe('open_files')
class FileOpener(IterDataPipe):
    """(path, open file) for each path (mode 'r', 'b' or 'rb'; text with `encoding`)."""

    def __init__(self, datapipe, mode='r', encoding=None, length=-1):
        if mode not in ('b', 't', 'rb', 'rt', 'r'):
            raise ValueError(f'Invalid mode {mode}')
        if 'b' in mode and encoding is not None:
            raise ValueError("binary mode doesn't take an encoding argument")
        self.datapipe, self.mode, self.encoding, self.length = datapipe, mode, encoding, length

    def __iter__(self):
        mode = self.mode if self.mode.startswith('r') else 'r' + self.mode
        for path in self.datapipe:
            yield path, open(path, mode, encoding=self.encoding)

    def __len__(self):
        if self.length == -1:
            raise TypeError(f"{type(self).__name__} instance doesn't have valid length")
        return self.length


@functional_datapipe('read_from_stream')
class StreamReader(IterDataPipe):
    """(name, data) from (name, stream) pairs: the whole stream, or chunks of `chunk` bytes."""

    def __init__(self, datapipe, chunk=None):
        self.datapipe, self.chunk = datapipe, chunk

    def __iter__(self):
        for name, stream in self.datapipe:
            while True:
                data = stream.read(self.chunk) if self.chunk is not None else stream.read()
                if not data:
                    stream.close()
                    break
                yield name, data
