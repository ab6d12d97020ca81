"""ember.memory_format and ember.layout objects (torch's contiguous_format, channels_last,
strided...). Ember keeps every tensor in the strided layout; a memory format picks the order of the strides
(channels_last: NHWC), as in PyTorch. One module for these objects, so that argument checking
elsewhere imports them from here."""


class memory_format:
    """A memory format: how the dims of a tensor are ordered in memory."""
    __slots__ = ('_name', '_code')

    def __init__(self, name, code):
        self._name = name
        self._code = code  # em_memory_format in include/ember/core.h, read by the argument parser

    def __repr__(self):
        return 'ember.' + self._name

    def __reduce__(self):
        return self._name  # pickled as the module global


class layout:
    """A tensor layout (only strided tensors exist in Ember)."""
    __slots__ = ('_name',)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return 'ember.' + self._name

    def __eq__(self, other):
        # Tensor.layout was the string 'strided' before these objects: both compare equal
        return self is other or (isinstance(other, str) and other == self._name)

    def __hash__(self):
        return hash(self._name)

    def __reduce__(self):
        return self._name


preserve_format = memory_format('preserve_format', 0)
contiguous_format = memory_format('contiguous_format', 1)
channels_last = memory_format('channels_last', 2)
channels_last_3d = memory_format('channels_last_3d', 3)
legacy_contiguous_format = contiguous_format
strided = layout('strided')

NAMES = ('memory_format', 'layout', 'contiguous_format', 'channels_last', 'channels_last_3d', 'preserve_format',
         'legacy_contiguous_format', 'strided')
