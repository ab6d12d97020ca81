"""Scaled dot-product attention, forward + backward, Ember's fused op
(F.scaled_dot_product_attention: tiles with an online softmax, no (L, S)
matrix) vs PyTorch 1.13's composite (softmax(q k^T / sqrt(E)) v: torch 1.13
has no fused CPU attention), each case in its own process: (B8, H4, L128,
E64) and a long (B1, H4, L2048, E64). Prints ms per step, the ratio (> 1:
Ember is faster) and each process's peak resident memory (ru_maxrss), at 1
and 2 threads.
Run: PYTHONPATH=python /usr/bin/python3 bench/bench_attention.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import cli, figure, run_lib  # noqa: E402

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


def figures(args):
    rows = []
    for threads in (1, 2):
        for name, shape in CASES.items():
            e, t = run_lib("ember", SCRIPT, threads, shape)[-1], run_lib("torch", SCRIPT, threads, shape)[-1]
            rows.append(figure(__file__, name + " fwd+bwd", "ms", threads, e["us"] / 1e3, t["us"] / 1e3))
            rows.append(figure(__file__, name + " peak RSS", "MB", threads, e["maxrss_mb"], t["maxrss_mb"]))
    return rows


if __name__ == "__main__":
    cli(__file__, figures)
