"""Ember's C API vs PyTorch 1.13 on single ops, side by side, at 1 and 2
threads: elementwise and reductions on 1e3, 1e5 and 1.6e7 float32 elements,
matmul of n x n float32 (n = 256, 1024, 2048; numel column = n), and the
per-op cost of a 1-element add. Prints a table with the ratio
PyTorch time / Ember time (> 1: Ember is faster).
Run through `make bench` (builds build/bench_ops first)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import blas_core, contention_check, run_torch, torch_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TORCH = r'''
threads = int(sys.argv[1])
torch.set_num_threads(threads)
ops = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "exp": lambda a, b: torch.exp(a),
       "sum": lambda a, b: a.sum(), "softmax": lambda a, b: torch.softmax(a.view(-1, 1000), -1),
       "matmul": lambda a, b: a @ b}
MATRIX = {"matmul"}
for name in ops:
    for size in ((256, 1024, 2048) if name in MATRIX else (1, 1000, 100000, 16000000)):
        if size == 1 and name != "add": continue
        if size < 1000 and name == "softmax": continue
        if name in MATRIX:
            a = torch.rand(size, size); b = torch.rand(size, size)
        else:
            a = torch.full((size,), 0.5); b = torch.full((size,), 1.5)
        f = ops[name]
        us = best(lambda: f(a, b), 0.3 if size > 1000000 or name in MATRIX else 0.1)
        print(json.dumps({"op": name, "numel": size, "threads": threads, "us": us}), flush=True)
'''


def run_ember(threads):
    out = subprocess.run([os.path.join(ROOT, "build", "bench_ops"), str(threads)], capture_output=True, text=True,
                         check=True, env=torch_env(threads))
    rows = {}
    for line in out.stdout.splitlines():
        op, numel, th, us = line.split()
        rows[(op, int(numel))] = float(us)
    return rows


def main():
    ok, msg = contention_check()
    print("BLAS core: %s   CPU check: %s" % (blas_core(), msg))
    results = {}
    for threads in (1, 2):
        ember = run_ember(threads)
        torch = {(r["op"], r["numel"]): r["us"] for r in run_torch(TORCH, threads)}
        results[threads] = (ember, torch)
    print("%-6s %10s | %12s %12s %7s | %12s %12s %7s" % ("op", "numel", "ember 1t us", "torch 1t us", "ratio",
                                                       "ember 2t us", "torch 2t us", "ratio"))
    for key in results[1][0]:
        cells = []
        for threads in (1, 2):
            e, t = results[threads][0][key], results[threads][1].get(key)
            cells.append("%12.3f %12.3f %7.2f" % (e, t, t / e) if t else "%12.3f %12s %7s" % (e, "-", "-"))
        print("%-6s %10d | %s | %s" % (key[0], key[1], cells[0], cells[1]))
    print("ratio = PyTorch time / Ember time: above 1 means Ember is faster. PyTorch is timed from Python "
          "(its per-op cost includes the interpreter); Ember through its C API.")


if __name__ == "__main__":
    main()
