"""ember.random: the default generator's seed and state (torch.random), and fork_rng."""
import contextlib

from ._C import Generator, default_generator, manual_seed, initial_seed  # noqa: F401
from ._functions import get_rng_state, set_rng_state, seed  # noqa: F401


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller='fork_rng', _devices_kw='devices'):
    """Runs the block with the CPU generator's state (and the CUDA devices' ones) saved, and
    restores them on exit, so random numbers drawn inside do not change those drawn after."""
    if not enabled:
        yield
        return
    from . import cuda
    if devices is None:
        devices = list(range(cuda.device_count()))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [cuda.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            cuda.set_rng_state(state, d)
