"""Parameters to and from one flat vector (torch.nn.utils.convert_parameters)."""
from ... import _C
from ..._tensor import Tensor

__all__ = ['parameters_to_vector', 'vector_to_parameters']


def _check_same_device(param, device):
    """The device of the parameters seen so far (they must all share it)."""
    if device is not None and param.device != device:
        raise TypeError('Found two parameters on different devices, this is currently not supported.')
    return param.device


def parameters_to_vector(parameters):
    """One 1-d tensor holding every parameter's values, in order."""
    device, flat = None, []
    for param in parameters:
        device = _check_same_device(param, device)
        flat.append(param.view(-1))
    return _C.cat(flat)


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of the 1-d vec into the parameters (their
    .data is replaced by views of vec, as PyTorch does)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f'expected torch.Tensor, but got: {type(vec).__name__}')
    device, pointer = None, 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
