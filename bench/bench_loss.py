"""Loss functions, Ember vs PyTorch 1.13 from Python: forward + backward of
F.cross_entropy on (128, 10) and (2560, 10000) logits (Ember's fused
log-softmax + NLL kernel), and of F.mse_loss / F.binary_cross_entropy_with_logits
on 1M elements. The same script runs in a process per library (Ember's with
`import ember as torch`), at 1 and 2 threads. Prints PyTorch time / Ember
time (> 1: Ember is faster). Run through `make bench` or directly."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import cli, figure, run_lib  # noqa: E402

SCRIPT = r'''
F = torch.nn.functional
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
def case(name, fn, budget):
    print(json.dumps({"case": name, "us": best(fn, budget, 3)}), flush=True)
for n, c in ((128, 10), (2560, 10000)):
    x = torch.randn(n, c, requires_grad=True)
    t = torch.randint(0, c, (n,))
    def ce():
        F.cross_entropy(x, t).backward(); x.grad = None
    case("cross_entropy fwd+bwd (%d, %d)" % (n, c), ce, 0.3 if n < 1000 else 1.0)
a = torch.randn(1000, 1000, requires_grad=True); b = torch.randn(1000, 1000)
def mse():
    F.mse_loss(a, b).backward(); a.grad = None
def bce():
    F.binary_cross_entropy_with_logits(a, b.sigmoid()).backward(); a.grad = None
case("mse_loss fwd+bwd (1000, 1000)", mse, 0.5)
case("bce_with_logits fwd+bwd (1000, 1000)", bce, 0.5)
'''


def figures(args):
    rows = []
    for threads in (1, 2):
        torch_rows = run_lib("torch", SCRIPT, threads)
        ember_rows = run_lib("ember", SCRIPT, threads)
        rows += [figure(__file__, t["case"], "us", threads, e["us"], t["us"]) for t, e in zip(torch_rows, ember_rows)]
    return rows


if __name__ == "__main__":
    cli(__file__, figures)
