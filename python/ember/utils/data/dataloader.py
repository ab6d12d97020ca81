"""DataLoader: batches from a dataset, in this process or in worker
processes, with PyTorch 1.13's arguments, checks and iteration order.

Note [DataLoader workers]
Each worker is a process (multiprocessing_context, default: the platform's
start method) that gets (task index, sample indices) from its own index
queue, fetches and collates, and sends (task index, batch) back over its
own Unix socket. Batches never travel as pickled tensor data:
- default_collate stacks a worker's tensors straight into a new shared
  block (an anonymous memfd, python/csrc/shared_memory.c), and any other
  tensor in a batch is moved to one when it is sent;
- the message is a pickle holding only handles (sizes, strides, dtype,
  offset) plus the blocks' descriptors, passed with SCM_RIGHTS
  (_worker.send_message); the main process maps each block zero-copy,
  closes the descriptor, and the batch's tensors free the mapping when
  they die. Nothing is named, so nothing is left in /dev/shm even when a
  worker is killed; descriptors in flight are closed by the kernel with
  the socket.
The main process keeps prefetch_factor tasks in flight per worker, hands
them out round-robin and yields results in task order (out-of-order
arrivals wait in _task_info). It waits with multiprocessing.connection.wait
on the workers' sockets and process sentinels together, so a worker that
dies (a signal, os._exit) is noticed at once and raises RuntimeError rather
than hanging; timeout bounds each wait. A worker's exception travels as an
ExceptionWrapper (type + traceback text) and is raised again here.
Shutdown (end of data, break + garbage collection, deleting the loader):
close our socket ends (a worker blocked sending gets EPIPE), send each
worker None, join with a deadline, terminate stragglers, join again, so
no child outlives its iterator. Workers also exit when their parent dies.
Persistent workers stay up between epochs; a new epoch sends each one
_ResumeIteration and discards results until every worker has echoed it.
"""
import functools
import itertools
import math
import multiprocessing as python_multiprocessing
import os
import signal
import socket
import warnings
from multiprocessing.connection import wait

import ember
import ember.multiprocessing  # noqa: F401 (tensors in worker arguments go by shared memory)
from . import _worker
from ._worker import get_worker_info  # noqa: F401 (torch.utils.data.dataloader exposes it)
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .datapipes.datapipe import IterDataPipe, MapDataPipe, apply_shuffle_settings, sharding_worker_init_fn
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ['DataLoader']

_SHUTDOWN_JOIN_S = 5.0


class _InfiniteConstantSampler:
    """The index sampler of an IterableDataset: None forever."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterates over a dataset in batches (see torch.utils.data.DataLoader)."""
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=2, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers < 0:
            raise ValueError('num_workers option should be non-negative; '
                             'use num_workers=0 to disable multiprocessing.')
        if timeout < 0:
            raise ValueError('timeout option should be non-negative')
        if num_workers == 0 and prefetch_factor != 2:
            raise ValueError('prefetch_factor option could only be specified in multiprocessing.'
                             'let num_workers > 0 to enable multiprocessing.')
        assert prefetch_factor > 0
        if persistent_workers and num_workers == 0:
            raise ValueError('persistent_workers option needs num_workers > 0')
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory  # accepted; Ember's CPU memory needs no pinning
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if isinstance(dataset, IterDataPipe):  # shuffle= switches the DataPipe's shufflers on or off
                apply_shuffle_settings(dataset, shuffle)
            elif shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "shuffle option, but got shuffle={}".format(shuffle))
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "sampler option, but got sampler={}".format(sampler))
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 "batch_sampler option, but got batch_sampler={}".format(batch_sampler))
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError('sampler option is mutually exclusive with shuffle')
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError('batch_sampler option is mutually exclusive '
                                 'with batch_size, shuffle, sampler, and drop_last')
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError('batch_size=None option disables auto-batching '
                             'and is mutually exclusive with drop_last')
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self._check_worker_number()

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers == 0:
                raise ValueError('multiprocessing_context can only be used with multi-process loading '
                                 '(num_workers > 0), but got num_workers={}'.format(self.num_workers))
            if isinstance(ctx, str):
                methods = python_multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError('multiprocessing_context option should specify a valid start method in {!r}, '
                                     'but got multiprocessing_context={!r}'.format(methods, ctx))
                ctx = python_multiprocessing.get_context(ctx)
            if not isinstance(ctx, python_multiprocessing.context.BaseContext):
                raise TypeError('multiprocessing_context option should be a valid context object or a string '
                                'specifying the start method, but got multiprocessing_context={}'.format(ctx))
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ('batch_size', 'batch_sampler', 'sampler', 'drop_last', 'dataset',
                                           'persistent_workers'):
            raise ValueError('{} attribute should not be set after {} is '
                             'initialized'.format(attr, self.__class__.__name__))
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        self._check_worker_number()
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def _check_worker_number(self):
        if not self.num_workers:
            return
        try:
            cpus, checked = len(os.sched_getaffinity(0)), True
        except (AttributeError, OSError):
            cpus, checked = os.cpu_count(), False
        if cpus is not None and self.num_workers > cpus:
            warnings.warn("This DataLoader will create {} worker processes in total. Our suggested max number of "
                          "worker in current system is {}{}, which is smaller than what this DataLoader is going to "
                          "create. Please be aware that excessive worker creation might get DataLoader running slow "
                          "or even freeze, lower the worker number to avoid potential slowness/freeze if "
                          "necessary.".format(self.num_workers, cpus,
                                              "" if checked else " (`cpuset` is not taken into account)"))


class _BaseIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(ember.empty((), dtype=ember.int64).random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._IterableDataset_len_called is not None \
                and self._num_yielded > self._IterableDataset_len_called:
            msg = ("Length of IterableDataset {} was reported to be {} (when accessing len(dataloader)), but {} "
                   "samples have been fetched. ").format(self._dataset, self._IterableDataset_len_called,
                                                         self._num_yielded)
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker.")
            warnings.warn(msg)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled".format(self.__class__.__name__))


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())


class _MultiProcessIter(_BaseIter):
    """Note [DataLoader workers]."""

    def __init__(self, loader):
        super().__init__(loader)
        ctx = loader.multiprocessing_context or python_multiprocessing
        fork = ctx.get_start_method() == 'fork'
        init_fn = loader.worker_init_fn
        if isinstance(self._dataset, (IterDataPipe, MapDataPipe)):  # each worker keeps its shard, as torch's
            init_fn = functools.partial(sharding_worker_init_fn, init_fn)
        self._workers, self._index_queues, self._socks = [], [], []
        try:
            for i in range(self._num_workers):
                main_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                q = ctx.Queue()
                w = ctx.Process(target=_worker.worker_loop, daemon=True,
                                args=(self._iterable, self._dataset, q, worker_end,
                                      main_end.fileno() if fork else None, self._auto_collation,
                                      self._collate_fn, self._drop_last, self._base_seed, init_fn,
                                      i, self._num_workers, os.getpid()))
                self._workers.append(w)
                self._index_queues.append(q)
                self._socks.append(main_end)
                w.start()
                worker_end.close()
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}     # task index -> (worker,) while pending, (worker, data) when early
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: drop what the last epoch left in flight
            for q in self._index_queues:
                q.put(_worker._ResumeIteration())
            resumed = 0
            while resumed < self._num_workers:
                idx, _ = self._get_data()
                if isinstance(idx, _worker._ResumeIteration):
                    resumed += 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        assert self._tasks_outstanding < self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return  # every worker is done (IterableDataset)
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _worker_died(self, worker):
        w = self._workers[worker]
        w.join(timeout=1.0)
        code = w.exitcode
        how = ('is killed by signal: {}'.format(signal.Signals(-code).name) if code is not None and code < 0
               else 'exited unexpectedly with exit code {}'.format(code))
        self._shutdown_workers()
        return RuntimeError('DataLoader worker (pid {}) {}. Note that Ember\'s workers hand batches back '
                            'through shared memory; see the worker\'s output for details.'.format(w.pid, how))

    def _get_data(self):
        """The next (task index, data) any worker sends; RuntimeError when a
        worker died or the timeout passed."""
        live = [i for i in range(self._num_workers) if self._workers_status[i] or self._persistent_workers]
        socks = {self._socks[i]: i for i in live}
        sentinels = {self._workers[i].sentinel: i for i in live}
        ready = wait(list(socks) + list(sentinels), self._timeout if self._timeout > 0 else None)
        if not ready:
            self._shutdown_workers()
            raise RuntimeError('DataLoader timed out after {} seconds'.format(self._timeout))
        for r in ready:
            if r in socks:
                try:
                    return _worker.recv_message(r)
                except (EOFError, OSError):
                    raise self._worker_died(socks[r]) from None
        raise self._worker_died(sentinels[ready[0]])

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]  # its worker ran out of data
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process_data(self._task_info.pop(self._rcvd_idx)[1])
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            return self._process_data(data)

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        if not getattr(self, '_workers', None):
            return  # already shut down (or never started)
        for s in self._socks:
            s.close()
        for w, q in zip(self._workers, self._index_queues):
            if w.is_alive():
                q.put(None)
        for w in self._workers:
            w.join(timeout=_SHUTDOWN_JOIN_S)
            if w.is_alive():
                w.terminate()
                w.join()
        for w, q in zip(self._workers, self._index_queues):
            q.close()
            if w.exitcode == 0:  # it read up to our None: the feeder thread can flush
                q.join_thread()  # and closes the queue's pipe now, not some time later
            else:
                q.cancel_join_thread()
        self._workers, self._index_queues, self._socks, self._task_info = [], [], [], {}

    def __del__(self):
        self._shutdown_workers()
