"""DataLoader2, torch 1.13's prototype: a DataLoader over a DataPipe that batches with the
DataPipe's .batch() (so batching happens in the workers, after sharding) and collates."""
from .dataloader import DataLoader
from ._collate import default_collate
from .datapipes.datapipe import IterDataPipe, apply_shuffle_settings

__all__ = ['DataLoader2']


class DataLoader2:
    """DataLoader2(...) gives a DataLoader: for an IterDataPipe one over dataset.batch(batch_size)
    that collates each batch (shuffle switches the DataPipe's shufflers); for any other dataset a
    plain DataLoader with the same arguments. As in torch 1.13, batch_outside_worker needs the
    'thread' parallelism mode, which Ember does not have."""

    def __new__(cls, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None, *,
                prefetch_factor=2, persistent_workers=False, batch_outside_worker=False, parallelism_mode='mp'):
        if not isinstance(dataset, IterDataPipe):
            if parallelism_mode == 'thread':
                raise Exception('thread parallelism mode is not supported for old DataSets')
            return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, sampler=sampler,
                              batch_sampler=batch_sampler, num_workers=num_workers, collate_fn=collate_fn,
                              pin_memory=pin_memory, drop_last=drop_last, timeout=timeout,
                              worker_init_fn=worker_init_fn, prefetch_factor=prefetch_factor,
                              persistent_workers=persistent_workers)
        if batch_sampler is not None:
            raise Exception('batch_sampler is not yet supported by DataPipes')
        if sampler is not None:
            raise Exception('sampler is not yet supported by DataPipes')
        if parallelism_mode == 'thread':
            raise NotImplementedError("DataLoader2's parallelism_mode='thread' is not implemented in Ember")
        if batch_outside_worker or parallelism_mode != 'mp':  # torch 1.13 has these only with threads
            raise Exception('Unsupported parallelism mode', parallelism_mode)
        datapipe = apply_shuffle_settings(dataset, shuffle=shuffle)
        if batch_size is not None:
            datapipe = datapipe.batch(batch_size, drop_last=drop_last)
            collate_fn = default_collate if collate_fn is None else collate_fn
        return DataLoader(datapipe, batch_size=None, shuffle=shuffle, num_workers=num_workers, collate_fn=collate_fn,
                          pin_memory=pin_memory, timeout=timeout, worker_init_fn=worker_init_fn,
                          prefetch_factor=prefetch_factor, persistent_workers=persistent_workers)
