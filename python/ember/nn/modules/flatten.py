"""Flatten and Unflatten (torch.nn.modules.flatten)."""
from .module import Module

__all__ = ['Flatten', 'Unflatten']


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one (the batch dim is kept by default)."""

    __constants__ = ['start_dim', 'end_dim']

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f'start_dim={self.start_dim}, end_dim={self.end_dim}'


class Unflatten(Module):
    """Splits dim into unflattened_size (a tuple or list of ints; -1 infers one)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(dim, int):
            # PyTorch also takes a dim name with named tensors, which Ember has not
            raise TypeError('invalid argument type for dim parameter')
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(size):
        if not isinstance(size, (tuple, list)):
            raise TypeError(f'unflattened_size must be a tuple of ints, but found type {type(size).__name__}')
        for idx, elem in enumerate(size):
            if not isinstance(elem, int):
                raise TypeError(f'unflattened_size must be tuple of ints, but found element of type '
                                f'{type(elem).__name__} at pos {idx}')

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f'dim={self.dim}, unflattened_size={self.unflattened_size}'
