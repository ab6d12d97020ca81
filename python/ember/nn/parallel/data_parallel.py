"""DataParallel and the functions it is built from. Without a GPU the module runs where it is, on
the one device there is (PyTorch's behaviour: device_ids is [] and forward calls the module)."""
from ... import _C, cuda
from ..modules.module import Module


def _device_indices(device_ids):
    return [cuda._device_index(d) if not isinstance(d, int) else d for d in device_ids]


class DataParallel(Module):
    """Splits each input batch over device_ids along `dim`, runs a replica of the module on each
    device and gathers the outputs on output_device. Its state_dict keys carry the prefix 'module.'."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = _device_indices(device_ids)
        self.output_device = _device_indices([output_device])[0]
        self.src_device_obj = _C.device('cuda', self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        cuda._lazy_init()
        raise NotImplementedError('DataParallel over CUDA devices is not implemented in Ember yet')


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form of DataParallel: module(*inputs) over device_ids (on the CPU without GPUs)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if module_kwargs is None:
        module_kwargs = {}
    if not cuda.is_available():
        return module(*inputs, **module_kwargs)
    cuda._lazy_init()
    raise NotImplementedError('data_parallel over CUDA devices is not implemented in Ember yet')


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """modules[i](*inputs[i], **kwargs_tup[i]) for each i, the outputs as a list."""
    if len(modules) != len(inputs):
        raise AssertionError(f'The number of modules {len(modules)} is not equal to the number of inputs '
                             f'{len(inputs)}')
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    if devices is not None and any(d is not None and _device_indices([d])[0] >= 0 for d in devices):
        cuda._lazy_init()
    outputs = []
    for module, input, kwargs in zip(modules, inputs, kwargs_tup):
        if not isinstance(input, (list, tuple)):
            input = (input,)
        outputs.append(module(*input, **kwargs))
    return outputs


def gather(outputs, target_device, dim=0):
    """Concatenates the tensors of the per-device outputs (nested in tuples, lists and dicts) along
    dim on target_device (-1 or 'cpu': the CPU)."""
    if not (target_device == -1 or str(target_device) == 'cpu'):
        cuda._lazy_init()

    def gather_map(outs):
        first = outs[0]
        if isinstance(first, _C.TensorBase):
            return _C.cat([o.unsqueeze(0) if o.dim() == 0 else o for o in outs], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            return type(first)((k, gather_map([o[k] for o in outs])) for k in first)
        return type(first)(map(gather_map, zip(*outs)))
    return gather_map(outputs)


def scatter(inputs, target_gpus, dim=0):
    """Splits the tensors of inputs into chunks on the target GPUs (needs GPUs)."""
    cuda._lazy_init()


def replicate(network, devices, detach=False):
    """Copies of a module on each device (needs GPUs)."""
    cuda._lazy_init()
