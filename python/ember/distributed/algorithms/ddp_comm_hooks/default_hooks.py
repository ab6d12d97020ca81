"""The default DDP communication hooks: hook(process_group, bucket) -> a
Future of the bucket's averaged gradients (process_group None: the world).
allreduce_hook does what DDP does without a hook; the compress hooks
all-reduce a float16 / bfloat16 copy (half the bytes) and write the result
back into the bucket."""
import ember
import ember.distributed as dist

__all__ = ['allreduce_hook', 'fp16_compress_hook', 'bf16_compress_hook', 'fp16_compress_wrapper',
           'bf16_compress_wrapper']


def _allreduce_fut(process_group, tensor):
    """Averages tensor in place over the group, asynchronously: a Future of it."""
    group = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(dist.get_world_size(group))
    fut = dist.all_reduce(tensor, group=group, async_op=True).get_future()
    return fut.then(lambda f: f.value()[0])


def allreduce_hook(process_group, bucket):
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else dist.group.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(dist.get_world_size(group))
    fut = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(f):
        buffer.copy_(f.value()[0])
        return buffer
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """all_reduce of the bucket cast to float16 (divided by the world size first)."""
    return _compress_hook(ember.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """all_reduce of the bucket cast to bfloat16 (divided by the world size first)."""
    return _compress_hook(ember.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(state, bucket)

        def decompress(f):
            buffer.copy_(f.value())
            return buffer
        return fut.then(decompress)
    return wrapped


def fp16_compress_wrapper(hook):
    """hook run on a float16 copy of the bucket, its result cast back."""
    return _compress_wrapper(ember.float16, hook)


def bf16_compress_wrapper(hook):
    """hook run on a bfloat16 copy of the bucket, its result cast back."""
    return _compress_wrapper(ember.bfloat16, hook)
