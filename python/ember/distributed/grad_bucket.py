"""GradBucket: what DistributedDataParallel hands a communication hook
(register_comm_hook): one bucket's flat gradient buffer, the per-parameter
views of it, and the parameters."""

__all__ = ['GradBucket']


class GradBucket:
    def __init__(self, index, buffer, gradients, parameters, is_last):
        self._index, self._buffer, self._gradients = index, buffer, gradients
        self._parameters, self._is_last = parameters, is_last

    def index(self):
        return self._index

    def buffer(self):
        """The flat 1-d tensor of the bucket's gradients."""
        return self._buffer

    def gradients(self):
        """Each parameter's gradient: views of buffer()."""
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        """Whether this is the last bucket to be reduced in the iteration."""
        return self._is_last

    def set_buffer(self, buffer):
        self._buffer = buffer
