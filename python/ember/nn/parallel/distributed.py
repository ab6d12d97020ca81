"""DistributedDataParallel: one model replica per process, gradients
averaged over the process group during backward.

Parameters are grouped into buckets (bucket_cap_mb, same dtype, in reverse
registration order at first, then in the order their gradients were ready
in the first iteration, as rank 0 saw it). A hook after each parameter's
gradient accumulation copies it into its bucket; a full bucket is
all-reduced asynchronously at once, in bucket order on every rank (which is
what keeps the ranks' collectives matched), so communication overlaps the
rest of backward. The last hook waits for the buckets and writes the
averages back into .grad. register_comm_hook replaces a bucket's
all-reduce by a hook's Future; join() lets ranks with fewer batches shadow
the others' collectives; static_graph searches for unused parameters once."""
from contextlib import contextmanager

import ember
from ..modules.module import Module

__all__ = ['DistributedDataParallel', 'DistributedDataParallelCPU']


def _dist():
    import ember.distributed as dist
    return dist


class _Bucket:
    def __init__(self, indices, params):
        self.indices = indices
        self.offsets, at = [], 0
        for i in indices:
            self.offsets.append(at)
            at += params[i].numel()
        self.flat = ember.zeros(at, dtype=params[indices[0]].dtype)
        self.pending = len(indices)
        self.work = None

    def view(self, k, p):
        return self.flat[self.offsets[k]:self.offsets[k] + p.numel()].view(p.shape)


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        dist = _dist()
        devices = {p.device for p in module.parameters()}
        if device_ids is not None or output_device is not None:
            raise ValueError(f'DistributedDataParallel device_ids and output_device arguments only work with '
                             f'single-device/multiple-device GPU modules or CPU modules, but got device_ids '
                             f'{device_ids}, output_device {output_device}, and module parameters {devices}.')
        self.module = module
        self.process_group = dist.distributed_c10d._group(process_group)
        self.dim, self.device_ids, self.output_device = dim, None, None
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        params, seen = [], set()
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self._params = params
        self._verify_same_model()
        self._sync_states(list(module.parameters()) + list(module.buffers()))
        self._build_buckets(list(reversed(range(len(params)))))
        self._order, self._rebuilt = [], False
        self._comm_hook = None      # (state, hook) from register_comm_hook
        self._static_unused = None  # static_graph: the parameters the first iteration did not use
        self._join_divide = None    # inside join(): divide_by_initial_world_size; else None
        self._active = self.process_group.size()  # ranks not yet joined, as of this iteration
        self._hooks = [p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)]
        self._reset()

    # ---- setup -----------------------------------------------------------------
    def _verify_same_model(self):
        dist = _dist()
        mine = ember.tensor([len(self._params), sum(p.numel() for p in self._params)], dtype=ember.int64)
        every = ember.empty(2 * self.process_group.size(), dtype=ember.int64)
        dist.all_gather_into_tensor(every, mine, group=self.process_group)
        rows = every.view(-1, 2).tolist()
        for r, row in enumerate(rows):
            if row != rows[0]:
                raise RuntimeError(f'DDP expects same model across all ranks, but rank 0 has {rows[0][0]} '
                                   f'parameters of {rows[0][1]} elements, while rank {r} has {row[0]} of {row[1]}.')

    def _sync_states(self, tensors):
        """Rank 0's values into every rank's tensors: one broadcast per dtype."""
        dist = _dist()
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t.detach())
        with ember.no_grad():
            for ts in by_dtype.values():
                flat = ember.cat([t.reshape(-1) for t in ts])
                dist.broadcast(flat, self.process_group._ranks[0], group=self.process_group)
                if self.process_group.rank() != 0:
                    at = 0
                    for t in ts:
                        t.copy_(flat[at:at + t.numel()].view(t.shape))
                        at += t.numel()

    def _build_buckets(self, order):
        """Buckets of parameter indices in `order`, each one dtype, up to the cap."""
        self._buckets, self._where = [], {}
        current, size = [], 0
        for i in order:
            p = self._params[i]
            nbytes = p.numel() * p.element_size()
            if current and (self._params[current[0]].dtype != p.dtype or size + nbytes > self.bucket_bytes_cap):
                self._buckets.append(_Bucket(current, self._params))
                current, size = [], 0
            current.append(i)
            size += nbytes
        if current:
            self._buckets.append(_Bucket(current, self._params))
        for b, bucket in enumerate(self._buckets):
            for k, i in enumerate(bucket.indices):
                self._where[i] = (b, k)
                if self.gradient_as_bucket_view:
                    p = self._params[i]
                    with ember.no_grad():
                        if p.grad is not None:
                            bucket.view(k, p).copy_(p.grad)
                    p.grad = bucket.view(k, p)

    def _rebuild_buckets(self):
        """After the first iteration: buckets in the order the gradients came, as
        rank 0 saw it (every rank must bucket alike)."""
        dist = _dist()
        seen = set(self._order)
        order = self._order + [i for i in reversed(range(len(self._params))) if i not in seen]
        t = ember.tensor(order, dtype=ember.int64)
        dist.broadcast(t, self.process_group._ranks[0], group=self.process_group)
        self._build_buckets(t.tolist())
        self._rebuilt = True

    def _reset(self):
        self._ready = [False] * len(self._params)
        self._used = ember.zeros(len(self._params), dtype=ember.int32)
        for bucket in self._buckets:
            bucket.pending, bucket.work = len(bucket.indices), None
        self._next_bucket = 0
        self._started = False

    # ---- the hooks -------------------------------------------------------------
    def _hook(self, i):
        def hook(param):
            if self.require_backward_grad_sync:
                self._mark_ready(i, used=True)
        return hook

    def _mark_ready(self, i, used):
        if self._ready[i]:
            raise RuntimeError(f'Expected to mark a variable ready only once. Parameter {i} was marked ready twice '
                               f'in this iteration: a parameter used in several reentrant backward passes, or a '
                               f'shared parameter with find_unused_parameters=True, is not supported.')
        self._started = True
        self._ready[i] = True
        if used:
            self._used[i] = 1
            if not self._rebuilt:
                self._order.append(i)
        b, k = self._where[i]
        bucket = self._buckets[b]
        p = self._params[i]
        view = bucket.view(k, p)
        with ember.no_grad():
            if p.grad is None:
                view.zero_()
            elif p.grad.data_ptr() != view.data_ptr():
                view.copy_(p.grad)
        bucket.pending -= 1
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._next_bucket)
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _launch(self, b):
        """Starts bucket b's averaging: an async all_reduce, or the comm hook's Future."""
        dist, bucket = _dist(), self._buckets[b]
        if self._comm_hook is None:
            op = dist.ReduceOp.SUM if self._join_divide is False else dist.ReduceOp.AVG  # join: by the active ranks
            bucket.work = dist.all_reduce(bucket.flat, op=op, group=self.process_group, async_op=True)
            return
        params = [self._params[i] for i in bucket.indices]
        grad_bucket = dist.GradBucket(b, bucket.flat, [bucket.view(k, p) for k, p in enumerate(params)], params,
                                      b == len(self._buckets) - 1)
        state, hook = self._comm_hook
        bucket.work = hook(state, grad_bucket)
        if not hasattr(bucket.work, 'wait'):
            raise RuntimeError(f'DistributedDataParallel: the communication hook must return a Future, got '
                               f'{type(bucket.work).__name__}')

    def _finalize(self):
        dist = _dist()
        used = None
        if self.find_unused_parameters or self.static_graph:  # which parameters got a gradient on some rank
            used = self._used.clone()
            dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.process_group)
            used = used.tolist()
        for bucket in self._buckets:
            result = bucket.work.wait()
            if self._comm_hook is None and self._join_divide is False:
                bucket.flat.div_(self._active)
            if self._comm_hook is not None:
                if not isinstance(result, ember.Tensor) or result.numel() != bucket.flat.numel():
                    raise RuntimeError(f'DistributedDataParallel: the communication hook\'s Future must give a '
                                       f'tensor of the bucket\'s {bucket.flat.numel()} elements')
                if result.data_ptr() != bucket.flat.data_ptr():
                    with ember.no_grad():
                        bucket.flat.copy_(result.reshape(-1))
        with ember.no_grad():
            for bucket in self._buckets:
                for k, i in enumerate(bucket.indices):
                    p = self._params[i]
                    if used is not None and not used[i]:
                        continue  # no rank used it: .grad stays as it was
                    view = bucket.view(k, p)
                    if self.gradient_as_bucket_view:
                        if p.grad is None or p.grad.data_ptr() != view.data_ptr():
                            p.grad = view
                    elif p.grad is None:
                        p.grad = view.clone()
                    else:
                        p.grad.copy_(view)
        self._reset()

    # ---- forward -----------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._started:
            raise RuntimeError(
                'Expected to have finished reduction in the prior iteration before starting a new one. This error '
                'indicates that your module has parameters that were not used in producing loss. You can enable '
                'unused parameter detection by passing the keyword argument `find_unused_parameters=True` to '
                '`torch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs '
                'participate in calculating loss. Parameter indices which did not receive grad: '
                f'{[i for i, r in enumerate(self._ready) if not r]}')
        rebuild = bool(self._order) and not self._rebuilt and ember.is_grad_enabled()
        if self._join_divide is not None and ember.is_grad_enabled():
            self._join_round(1, rebuild)
        if rebuild:
            self._rebuild_buckets()
            self._reset()
        if self.broadcast_buffers and self.require_forward_param_sync:
            self._sync_states(list(self.module.buffers()))
        output = self.module(*inputs, **kwargs)
        if (self.find_unused_parameters or self.static_graph) and ember.is_grad_enabled() \
                and self.require_backward_grad_sync:
            unused = self._static_unused
            if unused is None:  # static_graph: only the first iteration searches the graph
                reached = self._reachable(output)
                unused = [i for i, p in enumerate(self._params) if self._key(p) not in reached]
                if self.static_graph:
                    self._static_unused = unused
            for i in unused:
                self._mark_ready(i, used=False)
        return output

    @staticmethod
    def _key(leaf):
        """A leaf's identity (AccumulateGrad.variable is a new wrapper of it)."""
        return (leaf.data_ptr(), tuple(leaf.shape), leaf.dtype)

    @classmethod
    def _reachable(cls, output):
        """Keys of the leaves the autograd graph of output reaches."""
        stack, seen, leaves = [], {}, set()  # seen holds the nodes: their ids stay theirs

        def collect(o):
            if isinstance(o, ember.Tensor):
                if o.grad_fn is not None:
                    stack.append(o.grad_fn)
                elif o.requires_grad:
                    leaves.add(cls._key(o))
            elif isinstance(o, (list, tuple)):
                for x in o:
                    collect(x)
            elif isinstance(o, dict):
                for x in o.values():
                    collect(x)
        collect(output)
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen[id(node)] = node
            try:
                leaves.add(cls._key(node.variable))
            except AttributeError:
                pass
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        return leaves

    @contextmanager
    def no_sync(self):
        """Backward inside it accumulates gradients locally, without communicating;
        the next synchronized backward averages the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ---- uneven inputs ---------------------------------------------------------------
    def _join_round(self, active, rebuild):
        """Inside join(), before each training forward: every rank says whether it
        is still active (and whether this iteration rebuilds the buckets and
        synchronizes gradients); gives [active ranks, rebuild, sync]."""
        flags = ember.tensor([active, int(rebuild), int(active and self.require_backward_grad_sync)],
                             dtype=ember.int64)
        _dist().all_reduce(flags, group=self.process_group)
        counts = flags.tolist()
        if counts[0]:
            self._active = counts[0]
        return counts

    def _shadow(self):
        """A rank out of inputs: joins the others' collectives, with zero
        gradients, until every rank has joined."""
        dist = _dist()
        while True:
            active, rebuild, sync = self._join_round(0, False)
            if not active:
                return
            if rebuild and not self._rebuilt:
                self._rebuild_buckets()
            if self.broadcast_buffers and self.require_forward_param_sync:
                self._sync_states(list(self.module.buffers()))
            if not sync:
                continue
            for b, bucket in enumerate(self._buckets):
                bucket.flat.zero_()
                self._launch(b)
            if self.find_unused_parameters or self.static_graph:
                dist.all_reduce(ember.zeros(len(self._params), dtype=ember.int32), op=dist.ReduceOp.MAX,
                                group=self.process_group)
            for bucket in self._buckets:
                bucket.work.wait()
            self._reset()

    @contextmanager
    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """Training with a different number of batches per rank: a rank that runs
        out of inputs leaves the loop and, at the end of the `with`, shadows the
        others' all-reduces with zero gradients until all have finished. The
        average divides by the world size (divide_by_initial_world_size) or by
        the ranks still training."""
        if not enable:
            yield
            return
        if throw_on_early_termination:
            raise NotImplementedError('ember: DistributedDataParallel.join(throw_on_early_termination=True) is '
                                      'not implemented')
        self._join_divide = bool(divide_by_initial_world_size)
        try:
            yield
            self._shadow()
        finally:
            self._join_divide = None
            self._active = self.process_group.size()

    def register_comm_hook(self, state, hook):
        """hook(state, bucket: GradBucket) -> Future of the bucket's averaged
        gradients replaces the all-reduce of each bucket (register once,
        before training; ember.distributed.algorithms.ddp_comm_hooks has the
        default ones)."""
        if not callable(hook):
            raise TypeError(f'Communication hook must be callable, got {type(hook).__name__}')
        if self._comm_hook is not None:
            raise RuntimeError('register_comm_hook or register_builtin_comm_hook can only be called once.')
        if self._started or self._order:
            raise RuntimeError('register_comm_hook must be called before the first forward/backward pass')
        self._comm_hook = (state, hook)


class DistributedDataParallelCPU(DistributedDataParallel):
    """The old name of DistributedDataParallel on CPU modules."""
