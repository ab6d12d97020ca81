"""ember.nn.parallel: data parallelism over devices (torch.nn.parallel).

On a machine without GPUs DataParallel and data_parallel run the module on
the CPU, as PyTorch does; scatter and replicate need GPUs. Distributed data
parallelism comes with ember.distributed."""
from .data_parallel import DataParallel, data_parallel, gather, parallel_apply, replicate, scatter  # noqa: F401
from .distributed import DistributedDataParallel, DistributedDataParallelCPU  # noqa: F401
