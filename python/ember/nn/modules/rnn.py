"""Recurrent layers (torch.nn.RNN, LSTM, GRU) and cells (RNNCell, LSTMCell,
GRUCell). Each layer and direction runs in C (ember._C._nn.rnn_layer: the
input projection of all steps in one GEMM, then per step the hidden GEMM and
one fused gate kernel); this file stacks layers and directions, applies
dropout between layers, and handles batch_first, unbatched inputs, initial
states and PackedSequence inputs, with PyTorch's checks and messages."""
import math
import numbers
import warnings

import ember
from ember._C import _nn
from ember._argcheck import check_count
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ['RNNBase', 'RNN', 'LSTM', 'GRU', 'RNNCellBase', 'RNNCell', 'LSTMCell', 'GRUCell']

# mode -> (gates per hidden unit, em_rnn_mode of include/ember/rnn.h)
_MODES = {'RNN_TANH': (1, 0), 'RNN_RELU': (1, 1), 'LSTM': (4, 2), 'GRU': (3, 3)}


def _dropout(x, p):
    from .. import functional as F  # F.dropout belongs to another family: looked up when needed
    if not hasattr(F, 'dropout'):
        raise NotImplementedError('RNN dropout between layers in training mode needs nn.functional.dropout')
    return F.dropout(x, p, True)


def run_layers(mode, input, batch_sizes, h0, c0, weights, has_biases, num_layers, dropout, train, bidirectional,
               has_proj):
    """Every layer and direction of an RNN_TANH, RNN_RELU, LSTM or GRU on time-major `input`
    ((T, B, I), or packed rows (N, I) with batch_sizes), from the stacked initial states h0 (and c0
    for LSTM) and the flat weights (per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]);
    returns the last layer's output and the stacked final states (c None unless LSTM). Also
    ember.rnn_tanh, rnn_relu, lstm and gru (ember/_rnn_functions.py)."""
    code = _MODES[mode][1]
    directions = 2 if bidirectional else 1
    per = len(weights) // (num_layers * directions)
    hs, cs, x = [], [], input
    for layer in range(num_layers):
        outs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = weights[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            out, h, c = _nn.rnn_layer(code, x, batch_sizes, h0[k], None if c0 is None else c0[k], w[0], w[1],
                                      b_ih, b_hh, w[-1] if has_proj else None, direction == 1)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        x = outs[0] if directions == 1 else ember.cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            x = _dropout(x, dropout)
    return x, ember.stack(hs, 0), (ember.stack(cs, 0) if c0 is not None else None)


class RNNBase(Module):
    """The multi-layer recurrent network shared by RNN, LSTM and GRU
    (`mode` is 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU'). Parameters are
    named and shaped as PyTorch's (weight_ih_l0, bias_hh_l1_reverse,
    weight_hr_l0 with proj_size), so state_dicts load across."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        check_count('num_layers', num_layers)
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1:
            raise ValueError('dropout should be a number in range [0, 1] representing the probability of an '
                             'element being zeroed')
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn('dropout option adds dropout after all but last recurrent layer, so non-zero dropout '
                          f'expects num_layers greater than 1, but got dropout={dropout} and '
                          f'num_layers={num_layers}')
        if proj_size < 0:
            raise ValueError('proj_size should be a positive integer or zero to disable projections')
        if proj_size >= hidden_size:
            raise ValueError('proj_size has to be smaller than hidden_size')
        if mode not in _MODES:
            raise ValueError('Unrecognized RNN mode: ' + mode)
        gate_size = _MODES[mode][0] * hidden_size
        directions = 2 if bidirectional else 1
        state_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else state_size * directions
            for direction in range(directions):
                suffix = f'_l{layer}' + ('_reverse' if direction == 1 else '')
                shapes = [('weight_ih', (gate_size, layer_input)), ('weight_hh', (gate_size, state_size))]
                if bias:
                    shapes += [('bias_ih', (gate_size,)), ('bias_hh', (gate_size,))]
                if proj_size > 0:
                    shapes += [('weight_hr', (proj_size, hidden_size))]
                names = []
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(ember.empty(shape, **factory_kwargs)))
                    names.append(name + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """Each layer and direction's parameters, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: Ember's CPU layers read the parameters where they are."""

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.proj_size != 0:
            s += f', proj_size={self.proj_size}'
        if self.num_layers != 1:
            s += f', num_layers={self.num_layers}'
        if self.bias is not True:
            s += f', bias={self.bias}'
        if self.batch_first is not False:
            s += f', batch_first={self.batch_first}'
        if self.dropout != 0:
            s += f', dropout={self.dropout}'
        if self.bidirectional is not False:
            s += f', bidirectional={self.bidirectional}'
        return s

    # ---- checks (PyTorch's messages) --------------------------------------
    def check_input(self, input, batch_sizes):
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f'input must have {expected} dimensions, got {input.dim()}')
        if self.input_size != input.size(-1):
            raise RuntimeError(f'input.size(-1) must be equal to input_size. Expected {self.input_size}, '
                               f'got {input.size(-1)}')

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        layers = self.num_layers * (2 if self.bidirectional else 1)
        return (layers, batch, self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg='Expected hidden size {}, got {}'):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return hx if permutation is None else hx.index_select(1, permutation)

    # ---- the run -----------------------------------------------------------
    def _run(self, input, batch_sizes, h0, c0):
        return run_layers(self.mode, input, batch_sizes, h0, c0, self._flat_weights, self.bias, self.num_layers,
                          self.dropout, self.training, self.bidirectional, self.proj_size > 0)

    def _forward(self, input, hx):
        """The shared forward of RNN, LSTM and GRU; hx is a tensor, an (h, c)
        pair (LSTM) or None."""
        lstm = self.mode == 'LSTM'
        packed = isinstance(input, PackedSequence)
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
            batch = int(batch_sizes[0])
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                states = hx if lstm else (hx,)
                want = 3 if batched else 2
                if any(s.dim() != want for s in states):
                    dims = ', '.join(f'{s.dim()}-D' for s in states)
                    kind = 'batched 3-D' if batched else 'unbatched 2-D'
                    if lstm:
                        raise RuntimeError(f'For {kind} input, hx and cx should also be {want}-D but got '
                                           f'({dims}) tensors')
                    raise RuntimeError(f'For {kind} input, hx should also be {want}-D but got {dims} tensor')
                if not batched:
                    hx = tuple(s.unsqueeze(1) for s in hx) if lstm else hx.unsqueeze(1)
            batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        if hx is None:
            state = self.proj_size if self.proj_size > 0 else self.hidden_size
            zeros = ember.zeros(self.num_layers * directions, batch, state, dtype=input.dtype, device=input.device)
            hx = (zeros, ember.zeros(self.num_layers * directions, batch, self.hidden_size, dtype=input.dtype,
                                     device=input.device)) if lstm else zeros
        elif sorted_indices is not None:
            hx = tuple(self.permute_hidden(s, sorted_indices) for s in hx) if lstm \
                else self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        h0, c0 = hx if lstm else (hx, None)
        if not packed and self.batch_first:
            input = input.transpose(0, 1)
        out, h, c = self._run(input, batch_sizes, h0, c0)
        hidden = (h, c) if lstm else h
        if packed:
            hidden = tuple(self.permute_hidden(s, unsorted_indices) for s in hidden) if lstm \
                else self.permute_hidden(hidden, unsorted_indices)
            return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), hidden
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(batch_dim)
            hidden = tuple(s.squeeze(1) for s in hidden) if lstm else hidden.squeeze(1)
        return out, hidden


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), or
    relu with nonlinearity='relu'."""

    def __init__(self, *args, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError('proj_size argument is only supported for LSTM, not RNN or GRU')
        self.nonlinearity = kwargs.pop('nonlinearity', 'tanh')
        if self.nonlinearity not in ('tanh', 'relu'):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'")
        super().__init__('RNN_TANH' if self.nonlinearity == 'tanh' else 'RNN_RELU', *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o); with proj_size the hidden
    state is projected by weight_hr to proj_size features."""

    def __init__(self, *args, **kwargs):
        super().__init__('LSTM', *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               'Expected hidden[0] size {}, got {}')
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               'Expected hidden[1] size {}, got {}')

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n)."""

    def __init__(self, *args, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError('proj_size argument is only supported for LSTM, not RNN or GRU')
        super().__init__('GRU', *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class RNNCellBase(Module):
    """The parameters shared by the cells: weight_ih (chunks * hidden,
    input), weight_hh (chunks * hidden, hidden) and the two biases."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory_kwargs = {'device': device, 'dtype': dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(ember.empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(ember.empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter('bias_ih', None)
            self.register_parameter('bias_hh', None)
        self.reset_parameters()

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if 'bias' in self.__dict__ and self.bias is not True:
            s += f', bias={self.bias}'
        if 'nonlinearity' in self.__dict__ and self.nonlinearity != 'tanh':
            s += f', nonlinearity={self.nonlinearity}'
        return s

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def _batch(self, input, name):
        """input as (B, I), and whether it came unbatched (1-D)."""
        assert input.dim() in (1, 2), \
            f'{name}: Expected input to be 1-D or 2-D but received {input.dim()}-D tensor'
        return (input, True) if input.dim() == 2 else (input.unsqueeze(0), False)


class RNNCell(RNNCellBase):
    """One Elman step: tanh (or relu) of the two projections' sum."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, batched = self._batch(input, 'RNNCell')
        if hx is None:
            hx = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        if self.nonlinearity == 'tanh':
            cell = ember.rnn_tanh_cell
        elif self.nonlinearity == 'relu':
            cell = ember.rnn_relu_cell
        else:
            raise RuntimeError(f'Unknown nonlinearity: {self.nonlinearity}')
        h = cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h, c) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, batched = self._batch(input, 'LSTMCell')
        if hx is None:
            zeros = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = ember.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, batched = self._batch(input, 'GRUCell')
        if hx is None:
            hx = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        h = ember.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)
