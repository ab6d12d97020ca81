"""Recurrent layers vs PyTorch 1.13: nn.RNN/LSTM/GRU in many configurations
(layers, directions, batch_first, proj_size, initial states, packed
sequences of unequal lengths, unbatched inputs), the cells and the top-level
cell functions, float64 gradchecks, errors, reprs, initialisation, and
nn.utils.rnn (pack/pad)."""
import math

import pytest
import torch

import ember
from helpers import assert_same, check, rand, to_ember
from nn_helpers import check_module

tpack = torch.nn.utils.rnn
epack = ember.nn.utils.rnn


def lib(mod):
    return ember if isinstance(mod, ember.nn.Module) else torch


def flat(result):
    """(output, h) or (output, (h, c)) as a flat tuple; packed outputs by their data."""
    out, hidden = result
    out = out.data if isinstance(out, (tpack.PackedSequence, epack.PackedSequence)) else out
    return (out,) + (tuple(hidden) if isinstance(hidden, tuple) else (hidden,))


MODES = [('RNN', {}), ('RNN', {'nonlinearity': 'relu'}), ('LSTM', {}), ('GRU', {})]


@pytest.mark.parametrize('name,extra', MODES)
@pytest.mark.parametrize('layers,bidir,batch_first,bias', [(1, False, False, True), (2, True, False, True),
                                                           (2, False, True, False), (1, True, True, True)])
def test_modules_match_torch(name, extra, layers, bidir, batch_first, bias):
    x = rand(4, 3, 5, seed=1, low=-1, high=1)

    def make(m):
        return getattr(m.nn, name)(5, 6, layers, bias=bias, batch_first=batch_first, bidirectional=bidir, **extra)
    check_module(make, x, forward=lambda mod, x: flat(mod(x)))


@pytest.mark.parametrize('name', ['RNN', 'LSTM', 'GRU'])
@pytest.mark.parametrize('bidir', [False, True])
def test_initial_states_and_float64(name, bidir):
    dirs = 2 if bidir else 1
    x = rand(3, 2, 4, dtype='float64', seed=2, low=-1, high=1)
    h0 = rand(2 * dirs, 2, 5, dtype='float64', seed=3, low=-1, high=1)
    c0 = rand(2 * dirs, 2, 5, dtype='float64', seed=4, low=-1, high=1)

    def make(m):
        return getattr(m.nn, name)(4, 5, 2, bidirectional=bidir, dtype=getattr(m, 'float64'))
    if name == 'LSTM':
        check_module(make, x, h0, c0, forward=lambda mod, x, h, c: flat(mod(x, (h, c))))
    else:
        check_module(make, x, h0, forward=lambda mod, x, h: flat(mod(x, h)))


@pytest.mark.parametrize('bidir,layers,batch_first', [(False, 1, False), (True, 2, True)])
def test_lstm_projection(bidir, layers, batch_first):
    x = rand(2, 4, 5, seed=5, low=-1, high=1) if batch_first else rand(4, 2, 5, seed=5, low=-1, high=1)
    dirs = 2 if bidir else 1
    h0 = rand(layers * dirs, 2, 3, seed=6, low=-1, high=1)
    c0 = rand(layers * dirs, 2, 7, seed=7, low=-1, high=1)

    def make(m):
        return m.nn.LSTM(5, 7, layers, proj_size=3, bidirectional=bidir, batch_first=batch_first)
    check_module(make, x, forward=lambda mod, x: flat(mod(x)))
    check_module(make, x, h0, c0, forward=lambda mod, x, h, c: flat(mod(x, (h, c))))


@pytest.mark.parametrize('name', ['RNN', 'LSTM', 'GRU'])
@pytest.mark.parametrize('bidir,sorted_', [(False, True), (True, False), (True, True)])
def test_packed_sequences(name, bidir, sorted_):
    lengths = [5, 3, 3, 1] if sorted_ else [2, 5, 1, 4]
    x = rand(5, 4, 3, seed=8, low=-1, high=1)
    dirs = 2 if bidir else 1
    h0 = rand(2 * dirs, 4, 4, seed=9, low=-1, high=1)

    def run(mod, x, h):
        m = lib(mod)
        packed = m.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=sorted_)
        hx = (h, h * 0.5) if name == 'LSTM' else h
        out, hidden = mod(packed, hx)
        padded, lens = m.nn.utils.rnn.pad_packed_sequence(out, total_length=6)
        return (padded, lens.double()) + (tuple(hidden) if name == 'LSTM' else (hidden,))
    check_module(lambda m: getattr(m.nn, name)(3, 4, 2, bidirectional=bidir), x, h0, forward=run)


@pytest.mark.parametrize('name', ['RNN', 'LSTM', 'GRU'])
def test_unbatched_input(name):
    x = rand(4, 3, seed=10, low=-1, high=1)
    h0 = rand(2, 5, seed=11, low=-1, high=1)

    def make(m):
        return getattr(m.nn, name)(3, 5, 2)
    check_module(make, x, forward=lambda mod, x: flat(mod(x)))
    if name == 'LSTM':
        check_module(make, x, h0, forward=lambda mod, x, h: flat(mod(x, (h, h.tanh()))))
    else:
        check_module(make, x, h0, forward=lambda mod, x, h: flat(mod(x, h)))


def test_dropout_in_eval_mode_is_off():
    x = rand(3, 2, 4, seed=12, low=-1, high=1)
    check_module(lambda m: m.nn.LSTM(4, 5, 3, dropout=0.5), x, train=False, forward=lambda mod, x: flat(mod(x)))


@pytest.mark.parametrize('cell,extra', [('RNNCell', {}), ('RNNCell', {'nonlinearity': 'relu'}), ('LSTMCell', {}),
                                        ('GRUCell', {})])
@pytest.mark.parametrize('bias', [True, False])
def test_cells(cell, extra, bias):
    x = rand(3, 4, seed=13, low=-1, high=1)
    h = rand(3, 5, seed=14, low=-1, high=1)

    def make(m):
        return getattr(m.nn, cell)(4, 5, bias=bias, **extra)

    def as_tuple(r):
        return tuple(r) if isinstance(r, tuple) else (r,)
    check_module(make, x, forward=lambda mod, x: as_tuple(mod(x)))
    if cell == 'LSTMCell':
        check_module(make, x, h, forward=lambda mod, x, h: as_tuple(mod(x, (h, h * 2))))
        check_module(make, x[0], h[0], forward=lambda mod, x, h: as_tuple(mod(x, (h, h * 2))))
    else:
        check_module(make, x, h, forward=lambda mod, x, h: as_tuple(mod(x, h)))
        check_module(make, x[0], h[0], forward=lambda mod, x, h: as_tuple(mod(x, h)))


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
def test_cell_functions(dtype):
    B, I, H = 3, 4, 5
    x, h, c = rand(B, I, dtype=dtype, seed=1), rand(B, H, dtype=dtype, seed=2), rand(B, H, dtype=dtype, seed=3)
    w4, u4, b4 = (rand(4 * H, I, dtype=dtype, seed=4, low=-1, high=1), rand(4 * H, H, dtype=dtype, seed=5),
                  rand(4 * H, dtype=dtype, seed=6))
    check(lambda x, h, c, w, u, b, m: m.lstm_cell(x, (h, c), w, u, b, b * 2), x, h, c, w4, u4, b4, grad=True)
    check(lambda x, h, c, w, u, m: m.lstm_cell(x, [h, c], w, u), x, h, c, w4, u4, grad=True)
    check(lambda x, h, w, u, b, m: m.gru_cell(x, h, w, u, b, b), x, h, w4[:3 * H], u4[:3 * H], b4[:3 * H],
          grad=True)
    check(lambda x, h, w, u, b, m: m.rnn_tanh_cell(x, h, w, u, b), x, h, w4[:H], u4[:H], b4[:H], grad=True)
    check(lambda x, h, w, u, m: m.rnn_relu_cell(x, h, w, u), x, h, w4[:H], u4[:H], grad=True)
    # non-contiguous operands
    check(lambda x, h, w, m: m.gru_cell(x.t(), h, w[:, :I], w[:, I:]), rand(I, B, dtype=dtype, seed=7), h,
          rand(3 * H, I + H, dtype=dtype, seed=8), grad=True)


def test_gradcheck_cells_float64():
    g = torch.Generator().manual_seed(0)

    def leaf(*shape):
        return to_ember(torch.rand(*shape, generator=g, dtype=torch.float64) * 2 - 1).requires_grad_()
    x, h, c = leaf(2, 3), leaf(2, 2), leaf(2, 2)
    assert ember.autograd.gradcheck(lambda x, h, c, w, u, b: ember.lstm_cell(x, (h, c), w, u, b, b),
                                    (x, h, c, leaf(8, 3), leaf(8, 2), leaf(8)))
    assert ember.autograd.gradcheck(lambda x, h, w, u, b: ember.gru_cell(x, h, w, u, b, b),
                                    (x, h, leaf(6, 3), leaf(6, 2), leaf(6)))
    assert ember.autograd.gradcheck(lambda x, h, w, u: ember.rnn_tanh_cell(x, h, w, u), (x, h, leaf(2, 3), leaf(2, 2)))


def test_module_errors():
    m, t = ember.nn.LSTM(10, 20, 2), torch.nn.LSTM(10, 20, 2)
    cases = [
        (lambda mod, M: mod(M.randn(5, 3, 7)), 'input.size(-1) must be equal to input_size. Expected 10, got 7'),
        (lambda mod, M: mod(M.randn(5, 3, 10), (M.randn(1, 3, 20), M.randn(2, 3, 20))),
         'Expected hidden[0] size (2, 3, 20), got [1, 3, 20]'),
        (lambda mod, M: mod(M.randn(5, 3, 10), (M.randn(2, 3, 20), M.randn(2, 3, 21))),
         'Expected hidden[1] size (2, 3, 20), got [2, 3, 21]'),
        (lambda mod, M: mod(M.randn(3, 10), (M.randn(2, 3, 20), M.randn(2, 3, 20))),
         'For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors'),
    ]
    for fn, msg in cases:
        with pytest.raises(RuntimeError) as te:
            fn(t, torch)
        with pytest.raises(RuntimeError) as ee:
            fn(m, ember)
        assert str(ee.value) == str(te.value) == msg
    g = ember.nn.GRU(10, 20, 2)
    with pytest.raises(RuntimeError, match=r'Expected hidden size \(2, 3, 20\), got \[1, 3, 20\]'):
        g(ember.randn(5, 3, 10), ember.randn(1, 3, 20))
    with pytest.raises(RuntimeError, match='For batched 3-D input, hx should also be 3-D but got 2-D tensor'):
        ember.nn.RNN(10, 20)(ember.randn(5, 3, 10), ember.randn(3, 20))
    with pytest.raises(RuntimeError, match='input must have 3 dimensions, got 5'):
        g(ember.randn(5, 3, 2, 10))
    for ctor, msg in [(lambda M: M.nn.LSTM(4, 5, proj_size=5), 'proj_size has to be smaller than hidden_size'),
                      (lambda M: M.nn.LSTM(4, 5, proj_size=-1), 'proj_size should be a positive integer'),
                      (lambda M: M.nn.GRU(4, 5, proj_size=2), 'proj_size argument is only supported for LSTM'),
                      (lambda M: M.nn.RNN(4, 5, nonlinearity='gelu'), "Unknown nonlinearity 'gelu'"),
                      (lambda M: M.nn.RNN(4, 5, dropout=1.5), 'dropout should be a number in range'),
                      (lambda M: M.nn.RNN(4, 5, dropout=True), 'dropout should be a number in range')]:
        with pytest.raises(ValueError, match=msg):
            ctor(torch)
        with pytest.raises(ValueError, match=msg):
            ctor(ember)
    with pytest.warns(UserWarning, match='dropout option adds dropout'):
        ember.nn.LSTM(4, 5, dropout=0.2)


def test_cell_errors():
    x, h = torch.randn(3, 7), torch.randn(3, 5)
    w, u = torch.randn(20, 4), torch.randn(20, 5)
    for fn in [lambda M, x, h, w, u: M.lstm_cell(x, (h, h), w, u),
               lambda M, x, h, w, u: M.lstm_cell(x[:, :4], (h[:2], h[:2]), w, u),
               lambda M, x, h, w, u: M.lstm_cell(x[:, :4], (h, torch.randn(3, 6) if M is torch else
                                                            ember.randn(3, 6)), w, u)]:
        with pytest.raises(RuntimeError) as te:
            fn(torch, x, h, w, u)
        with pytest.raises(RuntimeError) as ee:
            fn(ember, *(to_ember(v) for v in (x, h, w, u)))
        assert str(ee.value) == str(te.value)
    with pytest.raises(AssertionError, match='LSTMCell: Expected input to be 1-D or 2-D but received 3-D tensor'):
        ember.nn.LSTMCell(4, 5)(ember.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match='Unknown nonlinearity: gelu'):
        ember.nn.RNNCell(4, 5, nonlinearity='gelu')(ember.randn(2, 4))


@pytest.mark.parametrize('make', [
    lambda m: m.nn.LSTM(10, 20), lambda m: m.nn.LSTM(10, 20, 2, bias=False, batch_first=True, dropout=0.5,
                                                     bidirectional=True, proj_size=5),
    lambda m: m.nn.GRU(3, 4, num_layers=3), lambda m: m.nn.RNN(3, 4, nonlinearity='relu', bidirectional=True),
    lambda m: m.nn.RNNCell(3, 4, bias=False, nonlinearity='relu'), lambda m: m.nn.LSTMCell(3, 4),
    lambda m: m.nn.GRUCell(3, 4)])
def test_repr_and_parameters(make):
    e, t = make(ember), make(torch)
    assert repr(e) == repr(t)
    assert [(k, tuple(v.shape)) for k, v in e.named_parameters()] == \
        [(k, tuple(v.shape)) for k, v in t.named_parameters()]
    if hasattr(t, '_flat_weights_names'):
        assert e._flat_weights_names == t._flat_weights_names
        assert [[tuple(p.shape) for p in ws] for ws in e.all_weights] == \
            [[tuple(p.shape) for p in ws] for ws in t.all_weights]
        e.flatten_parameters()


def test_default_init_distribution():
    m = ember.nn.LSTM(50, 400)
    w = m.weight_hh_l0.detach()
    bound = 1 / math.sqrt(400)
    assert float(w.max()) <= bound and float(w.min()) >= -bound
    assert abs(float(w.mean())) < 0.05 * bound
    assert abs(float(w.std()) - bound / math.sqrt(3)) < 0.02 * bound
    c = ember.nn.GRUCell(10, 100)
    assert float(c.bias_ih.detach().abs().max()) <= 0.1


# ---- nn.utils.rnn ---------------------------------------------------------------
def test_pad_and_pack_sequence():
    seqs = [rand(n, 3, seed=n) for n in (4, 2, 3)]
    for batch_first in (False, True):
        check(lambda *s, m: m.nn.utils.rnn.pad_sequence(list(s), batch_first=batch_first, padding_value=-1.5),
              *seqs, grad=True)

    def packed(*s, m):
        p = m.nn.utils.rnn.pack_sequence(list(s), enforce_sorted=False)
        return p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices
    check(packed, *seqs, grad=True)
    with pytest.raises(RuntimeError, match='must be sorted in decreasing order'):
        epack.pack_sequence([to_ember(s) for s in seqs])


@pytest.mark.parametrize('batch_first', [False, True])
def test_pack_padded_and_pad_packed(batch_first):
    x = rand(3, 5, 2, seed=1) if batch_first else rand(5, 3, 2, seed=1)
    for lengths in ([5, 2, 1], torch.tensor([2, 5, 3])):
        sorted_ = isinstance(lengths, list)

        def fn(x, m):
            lens = lengths if sorted_ else to_ember(lengths) if m is ember else lengths
            p = m.nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=batch_first, enforce_sorted=sorted_)
            padded, out_lens = m.nn.utils.rnn.pad_packed_sequence(p, batch_first=batch_first, padding_value=7.0,
                                                                  total_length=6)
            return p.data, p.batch_sizes, padded, out_lens
        check(fn, x, grad=True)


def test_packed_sequence_api_and_errors():
    p = epack.pack_sequence([ember.randn(3, 2), ember.randn(2, 2)])
    assert isinstance(p, tuple) and p.sorted_indices is None and p.unsorted_indices is None
    assert not p.is_cuda
    assert p.double().data.dtype == ember.float64 and p.to(ember.float64).batch_sizes.tolist() == [2, 2, 1]
    d, bs, si, ui = p
    assert bs.dtype == ember.int64
    assert epack.invert_permutation(None) is None
    assert epack.invert_permutation(ember.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    x = ember.randn(4, 2, 3)
    with pytest.raises(RuntimeError, match='Length of all samples has to be greater than 0'):
        epack.pack_padded_sequence(x, [3, 0])
    with pytest.raises(ValueError, match='Expected total_length to be at least'):
        epack.pad_packed_sequence(p, total_length=2)
    with pytest.raises(RuntimeError, match='sorted in decreasing order'):
        epack.pack_padded_sequence(x, [2, 3])
