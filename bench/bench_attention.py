"""Scaled dot-product attention, forward + backward, Ember's fused op
(F.scaled_dot_product_attention: tiles with an online softmax, no (L, S)
matrix) vs PyTorch 1.13's composite (softmax(q k^T / sqrt(E)) v: torch 1.13
has no fused CPU attention), each case in its own process: (B8, H4, L128,
E64) and a long (B1, H4, L2048, E64). Prints ms per step, the ratio (> 1:
Ember is faster) and each process's peak resident memory (ru_maxrss), at 1
and 2 threads.
Run: PYTHONPATH=python /usr/bin/python3 bench/bench_attention.py"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, TORCH_PRELUDE, blas_core, contention_check, torch_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = {"B8 H4 L128 E64": (8, 4, 128, 64), "B1 H4 L2048 E64 (long)": (1, 4, 2048, 64)}

# argv: threads, B, H, L, E. The same program for both libraries (`torch` is
# Ember's module on Ember's side).
SCRIPT = r'''
import math, resource
threads, B, H, L, E = map(int, sys.argv[1:6])
torch.set_num_threads(threads)
torch.manual_seed(0)
F = torch.nn.functional
fused = getattr(F, "scaled_dot_product_attention", None)

def attention(q, k, v):
    if fused is not None:
        return fused(q, k, v)
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), -1) @ v

q, k, v = (torch.randn(B, H, L, E).requires_grad_() for _ in range(3))
g = torch.randn(B, H, L, E)
def step():
    attention(q, k, v).backward(g)
    q.grad = k.grad = v.grad = None
step()
us = best(step, 1.0 if L <= 256 else 3.0, 3)
print(json.dumps({"us": us, "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)
'''


def run(lib, threads, shape):
    env = torch_env(threads)
    code = TORCH_PRELUDE
    if lib == "ember":
        env["PYTHONPATH"] = os.path.join(ROOT, "python")
        env["EMBER_NUM_THREADS"] = str(threads)
        code = code.replace("import json, sys, time, torch", "import json, sys, time\nimport ember as torch")
    out = subprocess.run([PYTHON, "-c", code + SCRIPT, str(threads), *map(str, shape)], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit(f"{lib} benchmark failed")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")][-1]


def main():
    ok, note = contention_check()
    print(f"BLAS core: {blas_core()}; {note}")
    print("SDPA forward + backward: Ember fused vs torch 1.13 composite (ratio > 1: Ember faster)")
    for threads in (1, 2):
        print(f"\n{threads} thread(s):")
        for name, shape in CASES.items():
            e, t = run("ember", threads, shape), run("torch", threads, shape)
            print(f"  {name:24s} ember {e['us'] / 1e3:8.2f} ms  torch {t['us'] / 1e3:8.2f} ms  "
                  f"ratio {t['us'] / e['us']:.2f}   peak RSS ember {e['maxrss_mb']:7.0f} MB  "
                  f"torch {t['maxrss_mb']:7.0f} MB")


if __name__ == "__main__":
    main()
