"""Normalization kernels, Ember vs PyTorch 1.13 side by side: forward and
forward+backward of batch norm (training, the ResNet-18 shape N32 C64 32x32),
layer norm (GPT: 1024 rows of 256) and group norm, at 1 and 2 threads.
The same script runs in a process per library (`import ember as torch` on
Ember's side). Prints both times and PyTorch time / Ember time (> 1: Ember is
faster). Run through `make bench` or directly."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import cli, figure, run_lib  # noqa: E402

SCRIPT = r'''
torch.set_num_threads(int(sys.argv[1]))
def emit(case, fn, budget=0.3):
    print(json.dumps({"case": case, "us": best(fn, budget)}), flush=True)
def fwd_bwd(make):
    def run():
        y = make()
        y.backward(g)
        for p in leaves: p.grad = None
    return run
x = torch.randn(32, 64, 32, 32).requires_grad_()
w, b = torch.rand(64).requires_grad_(), torch.rand(64).requires_grad_()
rm, rv = torch.zeros(64), torch.ones(64)
g, leaves = torch.randn(32, 64, 32, 32), (x, w, b)
bn = lambda: torch.batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5, False)
emit("batch_norm fwd (32,64,32,32)", lambda: bn().detach())
emit("batch_norm fwd+bwd (32,64,32,32)", fwd_bwd(bn))
gn = lambda: torch.group_norm(x, 8, w, b, 1e-5, False)
emit("group_norm fwd+bwd (32,64,32,32) G=8", fwd_bwd(gn))
x = torch.randn(1024, 256).requires_grad_()
w, b = torch.rand(256).requires_grad_(), torch.rand(256).requires_grad_()
g, leaves = torch.randn(1024, 256), (x, w, b)
ln = lambda: torch.layer_norm(x, [256], w, b, 1e-5, False)
emit("layer_norm fwd (1024,256)", lambda: ln().detach())
emit("layer_norm fwd+bwd (1024,256)", fwd_bwd(ln))
'''


def figures(args):
    rows = []
    for threads in (1, 2):
        t, e = run_lib("torch", SCRIPT, threads), run_lib("ember", SCRIPT, threads)
        rows += [figure(__file__, a["case"], "us", threads, b["us"], a["us"]) for a, b in zip(t, e)]
    return rows


if __name__ == "__main__":
    cli(__file__, figures)
