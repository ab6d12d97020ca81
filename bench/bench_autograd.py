"""Ember's autograd (C API) vs PyTorch 1.13, side by side, on 1-element
tensors: `(x * w).sum().backward()` and forward+backward of a chain of 100
elementwise ops. Prints PyTorch time / Ember time (> 1: Ember is faster).
Run through `make bench`."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import blas_core, contention_check, run_torch, torch_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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


def main():
    ok, msg = contention_check()
    print("BLAS core: %s   CPU check: %s" % (blas_core(), msg))
    out = subprocess.run([os.path.join(ROOT, "build", "bench_autograd")], capture_output=True, text=True, check=True,
                         env=torch_env(1))
    ember = {line.split()[0]: float(line.split()[2]) for line in out.stdout.splitlines()}
    torch = {r["case"]: r["us"] for r in run_torch(TORCH, 1)}
    print("%-20s %12s %12s %8s" % ("case (1 element)", "ember us", "torch us", "ratio"))
    for case, us in ember.items():
        print("%-20s %12.3f %12.3f %8.2f" % (case, us, torch[case], torch[case] / us))
    print("ratio = PyTorch time / Ember time (1 thread): above 1 means Ember is faster. PyTorch from Python, "
          "Ember through its C API.")


if __name__ == "__main__":
    main()
