"""Ember's C API vs PyTorch 1.13 on single ops, side by side, at 1 and 2
threads: elementwise and reductions on 1e3, 1e5 and 1.6e7 float32 elements,
matmul of n x n float32 (n = 256, 1024, 2048; numel column = n), and the
per-op cost of a 1-element add. Prints a table with the ratio
PyTorch time / Ember time (> 1: Ember is faster). Ember through its C API
(build/bench_ops), PyTorch from Python (its per-op cost includes the
interpreter).
Run through `make bench` (builds build/bench_ops first)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import cli, figure, run_program, run_torch  # noqa: E402

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
    rows = {}
    for line in run_program("bench_ops", (threads,), threads):
        op, numel, th, us = line.split()
        rows[(op, int(numel))] = float(us)
    return rows


def case(op, n):
    return "matmul %dx%d" % (n, n) if op == "matmul" else "%s, %d element%s" % (op, n, "" if n == 1 else "s")


def figures(args):
    rows = []
    for threads in (1, 2):
        ember = run_ember(threads)
        torch = {(r["op"], r["numel"]): r["us"] for r in run_torch(TORCH, threads)}
        rows += [figure(__file__, case(*key), "us", threads, us, torch.get(key)) for key, us in ember.items()]
    return rows


if __name__ == "__main__":
    cli(__file__, figures)
