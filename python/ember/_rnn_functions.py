"""ember.rnn_tanh, rnn_relu, lstm and gru: torch 1.13's functional forms of the recurrent layers,
with its two overloads each — (input, hx, params, has_biases, num_layers, dropout, train,
bidirectional, batch_first) and, for packed sequences, (data, batch_sizes, hx, params, has_biases,
num_layers, dropout, train, bidirectional). They run nn.RNN's layers (nn/modules/rnn.py)."""
from . import _C

__all__ = ['rnn_tanh', 'rnn_relu', 'lstm', 'gru']


def _run(mode, args):
    if len(args) != 9:
        raise TypeError(f'{mode.lower()}() takes 9 arguments, got {len(args)}')
    from .nn.modules.rnn import run_layers
    packed = isinstance(args[2], _C.TensorBase) or (mode == 'LSTM' and isinstance(args[1], _C.TensorBase))
    if packed:
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        batch_first = False
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        batch_sizes = None
    h0, c0 = (hx[0], hx[1]) if mode == 'LSTM' else (hx, None)
    params = list(params)
    directions = 2 if bidirectional else 1
    per = len(params) // (num_layers * directions) if num_layers > 0 else 0
    if num_layers < 1 or per * num_layers * directions != len(params) or \
            per not in ((4, 5) if has_biases else (2, 3)):
        raise RuntimeError(f'{mode.lower()}: got {len(params)} parameters for {num_layers} layers and '
                           f'{directions} directions (has_biases={has_biases})')
    if batch_first:
        data = data.transpose(0, 1)
    out, h, c = run_layers(mode, data, batch_sizes, h0, c0, params, has_biases, num_layers, dropout, train,
                           bidirectional, per in (3, 5))
    if batch_first:
        out = out.transpose(0, 1)
    return (out, h, c) if mode == 'LSTM' else (out, h)


def rnn_tanh(*args):
    """(output, h_n) of an Elman RNN with tanh (see the module docstring for the arguments)."""
    return _run('RNN_TANH', args)


def rnn_relu(*args):
    """(output, h_n) of an Elman RNN with ReLU."""
    return _run('RNN_RELU', args)


def lstm(*args):
    """(output, h_n, c_n) of an LSTM; hx is (h_0, c_0)."""
    return _run('LSTM', args)


def gru(*args):
    """(output, h_n) of a GRU."""
    return _run('GRU', args)
