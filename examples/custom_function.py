"""A custom autograd Function: the Legendre polynomial P3(x) = (5x^3 - 3x) / 2
with a hand-written backward, checked by gradcheck against finite differences,
then used to fit y = sin(x) as y = a + b * P3(c + d * x) by gradient descent
(the idea of PyTorch's "defining new autograd functions" tutorial).

    /usr/bin/python3 examples/custom_function.py [--steps 2000] [--points 2000]

Replacing `import ember as torch` by `import torch` runs it on PyTorch."""
import argparse
import math

import ember as torch


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * x ** 2 - 1)   # dP3/dx


class StraightThroughClamp(torch.autograd.Function):
    """clamp(x, -1, 1) whose backward passes the gradient through unchanged."""
    @staticmethod
    def forward(ctx, x):
        return x.clamp(-1.0, 1.0)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def check_gradients():
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    ok = torch.autograd.gradcheck(LegendrePolynomial3.apply, (x,), eps=1e-6, atol=1e-4)
    print(f'gradcheck(LegendrePolynomial3): {ok}')
    y = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    StraightThroughClamp.apply(y).sum().backward()
    print(f'StraightThroughClamp: forward {StraightThroughClamp.apply(y).tolist()}, '
          f'grad {y.grad.tolist()} (the clamp is invisible to backward)')


def fit(steps, points, lr):
    x = torch.linspace(-math.pi, math.pi, points)
    y = torch.sin(x)
    # the tutorial's starting point: close enough for P3 to bend towards sin
    a = torch.full((), 0.0, requires_grad=True)
    b = torch.full((), -1.0, requires_grad=True)
    c = torch.full((), 0.0, requires_grad=True)
    d = torch.full((), 0.3, requires_grad=True)
    P3 = LegendrePolynomial3.apply
    first = None
    for t in range(steps):
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if first is None:
            first = loss.item()
        if t % max(1, steps // 5) == 0:
            print(f'step {t:5d}  loss {loss.item():10.4f}')
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    print(f'fit: y = {a.item():.4f} + {b.item():.4f} * P3({c.item():.4f} + {d.item():.4f} x)')
    print(f'loss {first:.4f} -> {loss.item():.4f}')
    return first, loss.item()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--steps', type=int, default=2000)
    p.add_argument('--points', type=int, default=2000)
    p.add_argument('--lr', type=float, default=5e-6)
    p.add_argument('--seed', type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    check_gradients()
    first, last = fit(args.steps, args.points, args.lr)
    print('loss decreased' if last < first else 'loss did not decrease')


if __name__ == '__main__':
    main()
