"""SyncBatchNorm (torch.nn.SyncBatchNorm): batch norm whose training
statistics are those of the whole batch across a process group (each rank
holds a slice of it). Forward all-gathers each rank's (mean, var, count);
backward all-reduces the two sums the input gradient needs. Weight and bias
gradients stay local, for DistributedDataParallel to average. On CPU tensors
too (PyTorch 1.13's needs CUDA)."""
import ember
from ...autograd import Function
from .batchnorm import _BatchNorm

__all__ = ['SyncBatchNorm']


def _dims(x):
    return [d for d in range(x.dim()) if d != 1]


def _shape(x):
    return [1, x.shape[1]] + [1] * (x.dim() - 2)


class _SyncBatchNormFn(Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps, momentum, group):
        import ember.distributed as dist
        C, dims = x.shape[1], _dims(x)
        n = x.numel() // C
        mean = x.mean(dims) if n else ember.zeros(C, dtype=x.dtype)
        var = x.var(dims, unbiased=False) if n else ember.zeros(C, dtype=x.dtype)
        mine = ember.cat([mean, var, ember.tensor([float(n)], dtype=x.dtype)])
        every = ember.empty(dist.get_world_size(group) * (2 * C + 1), dtype=x.dtype)
        dist.all_gather_into_tensor(every, mine, group=group)
        every = every.view(-1, 2 * C + 1)
        means, vars_, counts = every[:, :C], every[:, C:2 * C], every[:, 2 * C:]
        total = float(counts.sum())
        if total <= 1:
            raise ValueError(f'Expected more than 1 value per channel when training, got input size {list(x.shape)}')
        g_mean = (means * counts).sum(0) / total
        g_var = ((vars_ + (means - g_mean) ** 2) * counts).sum(0) / total
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(g_mean, alpha=momentum)
            running_var.mul_(1 - momentum).add_(g_var * (total / (total - 1)), alpha=momentum)
        invstd = (g_var + eps).rsqrt()
        xhat = (x - g_mean.view(_shape(x))) * invstd.view(_shape(x))
        ctx.save_for_backward(xhat, invstd, weight)
        ctx.group, ctx.total = group, total
        y = xhat
        if weight is not None:
            y = y * weight.view(_shape(x)) + bias.view(_shape(x))
        return y

    @staticmethod
    def backward(ctx, dy):
        import ember.distributed as dist
        xhat, invstd, weight = ctx.saved_tensors
        dims, C = _dims(dy), dy.shape[1]
        sum_dy = dy.sum(dims)
        sum_dy_xhat = (dy * xhat).sum(dims)
        both = ember.cat([sum_dy, sum_dy_xhat])
        dist.all_reduce(both, group=ctx.group)
        scale = invstd if weight is None else invstd * weight
        shape = _shape(dy)
        dx = (dy - (both[:C] / ctx.total).view(shape) - xhat * (both[C:] / ctx.total).view(shape)) * scale.view(shape)
        dw = sum_dy_xhat if weight is not None else None
        db = sum_dy if weight is not None else None
        return dx, dw, db, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """SyncBatchNorm(num_features, eps=1e-5, momentum=0.1, affine=True,
    track_running_stats=True, process_group=None): in training (with an
    initialized process group of more than one rank) the statistics are the
    group's; otherwise it is BatchNorm."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f'expected at least 2D input (got {input.dim()}D input)')

    def forward(self, input):
        self._check_input_dim(input)
        import ember.distributed as dist
        if not (self.training and dist.is_initialized() and dist.get_world_size(self.process_group) > 1):
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        running = self.track_running_stats
        return _SyncBatchNormFn.apply(input, self.weight, self.bias, self.running_mean if running else None,
                                      self.running_var if running else None, self.eps, factor,
                                      self.process_group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """module with every BatchNorm*d replaced by a SyncBatchNorm holding the same parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group)
            if module.affine:
                with ember.no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
