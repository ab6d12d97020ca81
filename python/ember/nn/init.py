"""nn.init: PyTorch's initialisation functions."""
