"""convert_conv2d_weight_memory_format (torch.nn.utils'): the weights of a model's 2-d
convolutions laid out in a memory format (channels_last for NHWC kernels)."""
from ..modules.conv import Conv2d, ConvTranspose2d

__all__ = ['convert_conv2d_weight_memory_format']


def convert_conv2d_weight_memory_format(module, memory_format):
    """Gives the weight of every Conv2d and ConvTranspose2d in module (itself included) the
    memory_format, values unchanged; returns module."""
    if isinstance(module, (Conv2d, ConvTranspose2d)):
        module.weight.data = module.weight.detach().clone().contiguous(memory_format=memory_format)
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module
