"""Packed variable-length sequences (torch.nn.utils.rnn): PackedSequence and
the functions that pack, pad and unpack batches of sequences.

A packed sequence stores the rows of each time step one after the other:
step t holds batch_sizes[t] rows, the sequences longer than t, sorted by
decreasing length. The recurrent modules run on that layout directly."""
from collections import namedtuple

import ember

__all__ = ['PackedSequence', 'invert_permutation', 'pack_padded_sequence', 'pad_packed_sequence',
           'pad_sequence', 'pack_sequence']

_PackedSequenceBase = namedtuple('PackedSequence', ['data', 'batch_sizes', 'sorted_indices', 'unsorted_indices'])


def _lengths_list(batch_sizes):
    """Per-sequence lengths (in sorted order) from a batch_sizes tensor."""
    sizes = batch_sizes.tolist()
    return [sum(1 for s in sizes if s > b) for b in range(sizes[0] if sizes else 0)]


class PackedSequence(_PackedSequenceBase):
    """Holds the data and batch_sizes of a packed sequence, plus the
    permutations between the caller's batch order and the sorted one
    (None when the batch was sorted already). Build one with
    pack_padded_sequence or pack_sequence, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != 'cpu':
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                    "manually. They should be instantiated by functions like pack_sequence and "
                    "pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data  # the (data, batch_sizes) pair form
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The data converted as Tensor.to does; the index tensors follow its device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        to_dev = dict(device=data.device)
        sorted_indices = None if self.sorted_indices is None else self.sorted_indices.to(**to_dev)
        unsorted_indices = None if self.unsorted_indices is None else self.unsorted_indices.to(**to_dev)
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device='cuda', **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to(*args, device='cpu', **kwargs)

    def double(self):
        return self.to(dtype=ember.float64)

    def float(self):
        return self.to(dtype=ember.float32)

    def half(self):
        return self.to(dtype=ember.float16)

    def long(self):
        return self.to(dtype=ember.int64)

    def int(self):
        return self.to(dtype=ember.int32)

    def short(self):
        return self.to(dtype=ember.int16)

    def char(self):
        return self.to(dtype=ember.int8)

    def byte(self):
        return self.to(dtype=ember.uint8)

    @property
    def is_cuda(self):
        """Whether the data lives on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None for None)."""
    if permutation is None:
        return None
    inverse = ember.empty_like(permutation)
    return inverse.scatter_(0, permutation, ember.arange(permutation.numel(), device=permutation.device))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) ((B, T, *) when batch_first) of
    sequences of the given lengths (a list or a 1-d int64 CPU tensor).
    With enforce_sorted the lengths must be in decreasing order; otherwise
    the batch is sorted here and the permutation kept."""
    if isinstance(lengths, ember.Tensor):
        if lengths.device.type != 'cpu':
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got 1D "
                               f"{lengths.device.type} {str(lengths.dtype).split('.')[-1]} tensor")
        lengths = lengths.to(ember.int64)
    else:
        lengths = ember.as_tensor(lengths, dtype=ember.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = ember.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices.to(input.device))
    if batch_first:
        input = input.transpose(0, 1)
    lens = lengths.tolist()
    if len(lens) != input.size(1):
        raise ValueError(f'Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} '
                         f'(batch_size={input.size(1)})')
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if enforce_sorted and any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                           "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    if lens[0] > input.size(0):
        raise RuntimeError(f'Expected lengths to be at most the padded length {input.size(0)}, but got a length '
                           f'of {lens[0]}')
    sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    data = ember.cat([input[t, :b] for t, b in enumerate(sizes)], 0)
    return PackedSequence(data, ember.tensor(sizes, dtype=ember.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpacks a PackedSequence into a padded (T, B, *) tensor ((B, T, *)
    when batch_first) in the caller's batch order, and the lengths (int64)."""
    data, batch_sizes = sequence.data, sequence.batch_sizes
    sizes = batch_sizes.tolist()
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError('Expected total_length to be at least the length of the longest sequence in input, '
                             f'but got total_length={total_length} and max sequence length being {steps}')
        steps = total_length
    batch, feat = sizes[0], tuple(data.shape[1:])
    rows, start = [], 0
    for b in sizes:
        step = data[start:start + b]
        if b < batch:
            step = ember.cat([step, data.new_full((batch - b,) + feat, padding_value)], 0)
        rows.append(step)
        start += b
    rows += [data.new_full((batch,) + feat, padding_value)] * (steps - len(sizes))
    padded = ember.stack(rows, 1 if batch_first else 0)
    lengths = ember.tensor(_lengths_list(batch_sizes), dtype=ember.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.cpu())
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stacks sequences of shapes (L_i, *) into (max L, B, *) ((B, max L, *)
    when batch_first), padding the shorter ones with padding_value."""
    if isinstance(sequences, ember.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    longest = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        if s.size(0) < longest:
            s = ember.cat([s, s.new_full((longest - s.size(0),) + tuple(s.shape[1:]), padding_value)], 0)
        padded.append(s)
    return ember.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences (L_i, *), longest first unless
    enforce_sorted is False."""
    lengths = ember.as_tensor([s.size(0) for s in sequences], dtype=ember.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)
