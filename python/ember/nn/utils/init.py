"""skip_init (torch.nn.utils.init): a module constructed without running its
parameter initialisation, for code that overwrites the weights anyway."""
import inspect

__all__ = ['skip_init']


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) with uninitialised parameters and
    buffers (empty tensors; the module must accept a `device` argument)."""
    from ..modules.module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f'Expected a Module; got {module_cls}')
    if 'device' not in inspect.signature(module_cls).parameters:
        raise RuntimeError('Module must support a \'device\' arg to skip initialization')
    # PyTorch builds the module on the meta device, skipping the work; Ember
    # has no meta device in Python, so the initialisation runs and its
    # values are dropped: the same result, without the saving
    final_device = kwargs.pop('device', 'cpu')
    return module_cls(*args, device=final_device, **kwargs).to_empty(device=final_device)
