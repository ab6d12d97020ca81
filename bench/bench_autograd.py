"""Ember's autograd (C API) vs PyTorch 1.13, side by side, on 1-element
tensors: `(x * w).sum().backward()` and forward+backward of a chain of 100
elementwise ops, 1 thread. Ember through build/bench_autograd (its C API),
PyTorch from Python. Run through `make bench` or directly (after
`make build/bench_autograd`)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import cli, figure, run_program, run_torch  # noqa: E402

TORCH = r'''
torch.set_num_threads(1)
x = torch.full((1,), 0.5, requires_grad=True); w = torch.full((1,), 1.0001, requires_grad=True)
def mul_sum():
    (x * w).sum().backward(); x.grad = None; w.grad = None
def chain():
    y = x
    for i in range(100):
        y = y * w if i % 2 else y + w
    y.sum().backward(); x.grad = None; w.grad = None
print(json.dumps({"case": "mul_sum_backward", "us": best(mul_sum, 0.2, 5)}))
print(json.dumps({"case": "chain100_backward", "us": best(chain, 0.3, 5)}))
'''
CASES = {"mul_sum_backward": "(x * w).sum().backward(), 1 element",
         "chain100_backward": "100 add/mul, then backward, 1 element"}


def figures(args):
    ember = {line.split()[0]: float(line.split()[2]) for line in run_program("bench_autograd", (), 1)}
    torch = {r["case"]: r["us"] for r in run_torch(TORCH, 1)}
    return [figure(__file__, CASES[case], "us", 1, us, torch[case]) for case, us in ember.items()]


if __name__ == "__main__":
    cli(__file__, figures)
