"""Sine-wave sequence prediction in float64: two LSTMCells of 51 units and
a linear output, unrolled by hand over the sequence, trained on 97 waves
with LBFGS, then asked to continue the waves (future steps): the structure
of PyTorch's time_sequence_prediction example, written as PyTorch code.

    python3 time_sequence.py [--steps 1] [--length 100] [--future 100] ...

(The public example: --steps 15 --length 999 --future 1000.) Prints the
loss after each step and, last, one line `RESULT {json}`."""
import argparse
import json
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

import _data


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=1, help='LBFGS steps to run (the example: 15)')
    parser.add_argument('--length', type=int, default=100, help='time steps of each wave used (the example: 999)')
    parser.add_argument('--future', type=int, default=100, help='steps predicted past the end (the example: 1000)')
    parser.add_argument('--max-iter', type=int, default=20, help="LBFGS's evaluations per step (default: 20)")
    parser.add_argument('--init', metavar='PATH', help='start from this state_dict')
    parser.add_argument('--save-init', metavar='PATH', help='save the initial state_dict here')
    parser.add_argument('--save', metavar='PATH', help='save the trained state_dict here')
    opt = parser.parse_args()
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    data = torch.from_numpy(_data.sine_waves(length=opt.length + 1))
    input = data[3:, :-1]
    target = data[3:, 1:]
    test_input = data[:3, :-1]
    test_target = data[:3, 1:]
    # build the model
    seq = Sequence()
    seq.double()
    if opt.init:
        seq.load_state_dict(torch.load(opt.init))
    if opt.save_init:
        torch.save(seq.state_dict(), opt.save_init)
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=opt.max_iter)
    closures = [0, 0.0]
    losses = []
    # begin to train
    train_seconds = 0.0
    for i in range(opt.steps):
        print('STEP: ', i)
        start = time.perf_counter()

        def closure():
            t0 = time.perf_counter()
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            losses.append(loss.item())
            loss.backward()
            closures[0] += 1
            closures[1] += time.perf_counter() - t0
            return loss
        optimizer.step(closure)
        train_seconds += time.perf_counter() - start
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = opt.future
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            y = pred.detach().numpy()
    if opt.save:
        torch.save(seq.state_dict(), opt.save)
    print('RESULT ' + json.dumps({'loss': loss.item(), 'initial_loss': losses[0], 'train_loss': losses[-1],
                                  'closures': closures[0], 'future_std': float(np.std(y[:, -future:])),
                                  'seconds_per_step': train_seconds / opt.steps,
                                  'ms_per_closure': 1000 * closures[1] / closures[0]}))
