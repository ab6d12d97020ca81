"""What runs in a DataLoader worker process: its loop, the fetchers shared
with the single-process path, worker info, exception wrapping, and the
result channel that carries batches back with their shared-memory
descriptors (Note [DataLoader workers] in dataloader.py)."""
import io
import os
import pickle
import queue
import random
import socket
import struct
import sys
import traceback
from multiprocessing.reduction import ForkingPickler, recvfds, sendfds

import ember
from ember import _C

__all__ = ['get_worker_info', 'WorkerInfo']

_worker_info = None
_PARENT_POLL_S = 1.0  # how often an idle worker checks that its parent lives
_MAX_FDS = 253        # SCM_MAX_FD: descriptors per message on Linux


class WorkerInfo:
    """id, num_workers, seed and dataset (this worker's copy) of the current worker."""
    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError("Cannot assign attributes to {} objects".format(self.__class__.__name__))
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ', '.join('{}={}'.format(k, getattr(self, k)) for k in self.__keys)
        return '{}({})'.format(self.__class__.__name__, items)


def get_worker_info():
    """The WorkerInfo of this DataLoader worker process; None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text, to raise
    again in the main process."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = "Caught {} {}.\nOriginal {}".format(self.exc_type.__name__, self.where, self.exc_msg)
        if self.exc_type == KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except TypeError:  # an exception type whose constructor wants other arguments
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """KeyError quotes its message; this keeps the traceback readable."""

    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of an epoch; echoed back."""


# ---- fetchers: one sample or batch from its indices --------------------------------
class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            return self.collate_fn([self.dataset[i] for i in index])
        return self.collate_fn(self.dataset[index])


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.it = iter(dataset)
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        data = []
        for _ in index:
            try:
                data.append(next(self.it))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    return (_IterableFetcher if iterable else _MapFetcher)(dataset, auto_collation, collate_fn, drop_last)


# ---- the result channel --------------------------------------------------------------
class _FdPickler(ForkingPickler):
    """Pickles tensors as shared-memory handles whose descriptors ride
    along with the message (collected in self.fds)."""

    def __init__(self, file, fds):
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.fds = fds

    def persistent_id(self, obj):
        if not isinstance(obj, ember.Tensor):
            return None
        from ember.multiprocessing.reductions import _check_sendable, shared_handle
        _check_sendable(obj)
        fd, nbytes, offset = shared_handle(obj)
        self.fds.append(fd)
        return (type(obj), len(self.fds) - 1, nbytes, offset, obj.dtype, tuple(obj.shape), tuple(obj.stride()),
                obj.requires_grad)


class _FdUnpickler(pickle.Unpickler):
    def __init__(self, file, fds):
        super().__init__(file)
        self.fds = fds

    def persistent_load(self, pid):
        from ember.multiprocessing.reductions import as_class
        cls, k, nbytes, offset, dtype, sizes, strides, requires_grad = pid
        fd, self.fds[k] = self.fds[k], -1  # the tensor owns it from here
        return as_class(_C._from_shared_fd(fd, nbytes, offset, dtype, sizes, strides, False), cls, requires_grad)


_HEADER = struct.Struct('!QI')  # pickle length, descriptor count


def send_message(sock, obj):
    """Sends obj over a Unix stream socket, tensors by descriptor."""
    buf, fds = io.BytesIO(), []
    _FdPickler(buf, fds).dump(obj)
    data = buf.getvalue()
    sock.sendall(_HEADER.pack(len(data), len(fds)))
    for i in range(0, len(fds), _MAX_FDS):
        sendfds(sock, fds[i:i + _MAX_FDS])
    sock.sendall(data)


def _recv_exactly(sock, n):
    parts, got = [], 0
    while got < n:
        part = sock.recv(min(n - got, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        got += len(part)
    return b''.join(parts)


def recv_message(sock):
    """Receives one send_message's object; EOFError if the sender is gone."""
    size, nfds = _HEADER.unpack(_recv_exactly(sock, _HEADER.size))
    fds = []
    try:
        while len(fds) < nfds:
            try:
                fds.extend(recvfds(sock, min(_MAX_FDS, nfds - len(fds))))
            except RuntimeError as e:  # the sender died between header and descriptors
                raise EOFError from e
        return _FdUnpickler(io.BytesIO(_recv_exactly(sock, size)), fds).load()
    finally:
        for fd in fds:
            if fd >= 0:
                os.close(fd)


# ---- the worker loop -----------------------------------------------------------------
def _seed_worker(base_seed, worker_id):
    """Seeds as PyTorch 1.13 does: random and ember with base_seed +
    worker_id, NumPy with a state derived from both."""
    seed = base_seed + worker_id
    random.seed(seed)
    ember.manual_seed(seed)
    try:
        import numpy as np
    except ImportError:
        return seed
    np.random.seed(np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]).generate_state(4))
    return seed


def worker_loop(iterable, dataset, index_queue, sock, close_fd, auto_collation, collate_fn, drop_last, base_seed,
                init_fn, worker_id, num_workers, parent_pid):
    global _worker_info
    if close_fd is not None:  # our inherited copy of the main process's end (fork)
        os.close(close_fd)
    ember.set_num_threads(1)
    seed = _seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = "in DataLoader worker process {}".format(worker_id)
    init_error, fetcher = None, None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where=where)
    try:
        while True:
            try:
                task = index_queue.get(timeout=_PARENT_POLL_S)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    break
                continue
            if task is None:
                break
            if isinstance(task, _ResumeIteration):
                if init_error is None:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                send_message(sock, (task, None))
                continue
            idx, index = task
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    data = _IterableDatasetStopIteration(worker_id) if iterable else ExceptionWrapper(where=where)
                except Exception:
                    data = ExceptionWrapper(where=where)
            try:
                send_message(sock, (idx, data))
            except (BrokenPipeError, ConnectionResetError):
                break  # the main process is gone or shutting us down
            except Exception:
                send_message(sock, (idx, ExceptionWrapper(where=where)))
            del data
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        index_queue.cancel_join_thread()
