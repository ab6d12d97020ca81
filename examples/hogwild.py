"""Hogwild training (paper §5.4): several processes train one model whose
parameters live in shared memory, each on its own synthetic data, updating
the shared weights without locks.

    PYTHONPATH=python /usr/bin/python3 examples/hogwild.py [--procs 4] [--steps 200]
"""
import argparse

import ember
import ember.multiprocessing as mp
import ember.nn as nn


class Net(nn.Module):
    """A small MLP regressor."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(ember.relu(self.fc1(x))).squeeze(1)


def make_data(seed, n, w_true):
    """x ~ N(0, 1), y = x . w_true + |x_0| (a target a linear model cannot fit exactly)."""
    g = ember.Generator()
    g.manual_seed(seed)
    x = ember.randn(n, w_true.shape[0], generator=g)
    return x, x @ w_true + x[:, 0].abs()


def mse(model, x, y):
    return ((model(x) - y) ** 2).mean()


def train(rank, model, w_true, steps, batch_size, lr):
    ember.set_num_threads(1)
    x, y = make_data(1000 + rank, steps * batch_size, w_true)
    opt = ember.optim.SGD(model.parameters(), lr=lr)
    for i in range(steps):
        xb, yb = x[i * batch_size:(i + 1) * batch_size], y[i * batch_size:(i + 1) * batch_size]
        opt.zero_grad()
        mse(model, xb, yb).backward()
        opt.step()


def test_loss(model, w_true):
    x, y = make_data(7, 2000, w_true)
    with ember.no_grad():
        return mse(model, x, y).item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--procs', type=int, default=4)
    p.add_argument('--steps', type=int, default=200)
    p.add_argument('--batch-size', type=int, default=32)
    p.add_argument('--lr', type=float, default=0.02)
    p.add_argument('--dim', type=int, default=16)
    args = p.parse_args()
    ember.manual_seed(0)
    w_true = ember.randn(args.dim)
    model = Net(args.dim, 32)
    model.share_memory()  # every process updates these very parameters
    before = test_loss(model, w_true)
    procs = [mp.Process(target=train, args=(rank, model, w_true, args.steps, args.batch_size, args.lr))
             for rank in range(args.procs)]
    for q in procs:
        q.start()
    for q in procs:
        q.join()
    if any(q.exitcode for q in procs):
        raise SystemExit(f"a training process failed: exit codes {[q.exitcode for q in procs]}")
    after = test_loss(model, w_true)
    print(f"test loss before {before:.3f}, after {after:.3f} ({args.procs} processes x {args.steps} steps)")


if __name__ == '__main__':
    main()
