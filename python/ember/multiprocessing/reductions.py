"""How tensors cross process boundaries: in shared memory, by descriptor.

Note [Tensors between processes]
A tensor is never pickled with its data. Sending one moves its storage into
a shared block first (Tensor.share_memory_(): an anonymous memfd mapped
MAP_SHARED, moved in place so every view of the storage follows; see
python/csrc/shared_memory.c) and pickles only a handle: the block's file
descriptor and size, the byte offset of element 0, dtype, sizes, strides
and requires_grad. The receiver maps the same block, zero-copy, so both
processes see one memory (what Hogwild training relies on).

The descriptor itself travels by SCM_RIGHTS over a Unix socket, never by
name, so no segment is ever left in /dev/shm, whatever dies when: a block
lives exactly as long as some process maps it or holds its descriptor.
- Through ember.multiprocessing's Queue, Pipe and Process arguments (this
  file), the handle holds a multiprocessing.reduction.DupFd: at spawn time
  the descriptor is inherited; otherwise the sender's resource sharer hands
  a duplicate to the receiver when it unpickles (the sender must still be
  alive then, as with PyTorch's file_descriptor strategy). The receiver
  keeps the descriptor, so it can send the tensor on.
- DataLoader workers send batches over their own socket with the
  descriptors attached to the message (ember/utils/data/_worker.py), and
  the main process closes each descriptor once mapped: a batch costs no
  open file, however many batches are kept. Such a tensor is still shared;
  sending it on moves it to a fresh block first (one copy).
"""
import multiprocessing.reduction
from multiprocessing.reduction import ForkingPickler

import ember
from ember import _C


def _rebuild_tensor(cls, fd, nbytes, offset, dtype, sizes, strides, requires_grad, conj=False, neg=False):
    if not isinstance(fd, int):
        fd = fd.detach()  # a DupFd: fetch our own duplicate of the sender's descriptor
    t = _C._from_shared_fd(fd, nbytes, offset, dtype, sizes, strides, True)
    t = _C._conj(t) if conj else t  # the sender's conjugate / negative bits over the shared memory
    return as_class(_C._neg_view(t) if neg else t, cls, requires_grad)


def as_class(t, cls, requires_grad):
    """A received tensor as the sender's class (Tensor, Parameter) with its requires_grad."""
    if cls is not ember.Tensor:
        return cls(t, requires_grad=requires_grad)
    return t.requires_grad_(True) if requires_grad else t


def shared_handle(t):
    """(fd, nbytes, offset) of t's shared block, after moving t there if it
    is not (or if its block's descriptor was not kept)."""
    fd, nbytes, offset = _C._shared_handle(t.share_memory_())
    if fd < 0:
        _C._reshare_(t)
        fd, nbytes, offset = _C._shared_handle(t)
    return fd, nbytes, offset


def _check_sendable(t):
    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  "
                           "If you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")


def reduce_tensor(t):
    _check_sendable(t)
    fd, nbytes, offset = shared_handle(t)
    return (_rebuild_tensor, (type(t), multiprocessing.reduction.DupFd(fd), nbytes, offset, t.dtype,
                              tuple(t.shape), tuple(t.stride()), t.requires_grad, t.is_conj(), t.is_neg()))


def init_reductions():
    """Makes multiprocessing's pickler (queues, pipes, process arguments)
    send tensors through shared memory."""
    ForkingPickler.register(ember.Tensor, reduce_tensor)
    from ember.nn.parameter import Parameter
    ForkingPickler.register(Parameter, reduce_tensor)
