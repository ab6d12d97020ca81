"""convert_conv2d_weight_memory_format: lays out the weights of a model's 2-d convolutions in a
memory format (channels_last), as torch.nn.utils does."""


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weights of `module` and its submodules that are Conv2d or ConvTranspose2d, copied into
    `memory_format` (in place, through .data); returns `module`."""
    from ..modules.conv import Conv2d, ConvTranspose2d
    if isinstance(module, (Conv2d, ConvTranspose2d)):
        module.weight.data = module.weight.detach().clone().contiguous(memory_format=memory_format)
    for child in module.children():
        convert_conv2d_weight_memory_format(child, memory_format)
    return module
