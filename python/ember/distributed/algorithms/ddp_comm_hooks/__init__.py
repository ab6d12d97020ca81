"""Communication hooks for DistributedDataParallel.register_comm_hook:
default_hooks (allreduce_hook, fp16_compress_hook, bf16_compress_hook and
their wrappers)."""
from . import default_hooks  # noqa: F401
