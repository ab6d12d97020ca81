"""DistributedDataParallel: not implemented until ember.distributed (the distributed issue)."""
from ..._stubs import not_implemented
from ..modules.module import Module


class DistributedDataParallel(Module):
    @not_implemented('torch.nn.parallel.DistributedDataParallel (it comes with ember.distributed)')
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        pass


DistributedDataParallel.__ember_not_implemented__ = True


class DistributedDataParallelCPU(DistributedDataParallel):
    pass
