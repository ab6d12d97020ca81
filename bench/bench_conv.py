"""conv2d forward + backward (input and weight gradients), Ember vs PyTorch
1.13 (oneDNN/mkldnn on CPU), each in its own process, at 1 and 2 threads:
a ResNet 3x3 layer (N8, 64->64, 56x56, pad 1) and LeNet-5's two conv layers
(N64, 1->6 5x5 on 28x28 pad 2; N64, 6->16 5x5 on 14x14). Also the forward
alone. Prints ms per call and PyTorch time / Ember time (> 1: Ember is
faster). Run through `make bench` or directly."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import cli, figure, run_lib  # noqa: E402

# argv: threads. Same script for both libraries (`import ember as torch`).
SCRIPT = r'''
threads = int(sys.argv[1])
torch.set_num_threads(threads)
F = torch.nn.functional
CASES = [("resnet 3x3 64->64 56x56 N8", (8, 64, 56, 56), (64, 64, 3, 3), 1),
         ("lenet conv1 1->6 5x5 28x28 N64", (64, 1, 28, 28), (6, 1, 5, 5), 2),
         ("lenet conv2 6->16 5x5 14x14 N64", (64, 6, 14, 14), (16, 6, 5, 5), 0)]
info = {"mkldnn": bool(getattr(getattr(torch, "backends", None), "mkldnn", None) and torch.backends.mkldnn.is_available())} \
    if hasattr(torch, "backends") else {}
print(json.dumps({"info": info}), flush=True)
for name, xs, ws, pad in CASES:
    torch.manual_seed(0)
    x = torch.randn(*xs).requires_grad_(); w = (torch.randn(*ws) * 0.1).requires_grad_()
    b = torch.zeros(ws[0]).requires_grad_()
    y0 = F.conv2d(x, w, b, padding=pad); g = torch.randn(*y0.shape)
    def fwd():
        with torch.no_grad():
            F.conv2d(x, w, b, padding=pad)
    def fwd_bwd():
        y = F.conv2d(x, w, b, padding=pad)
        torch.autograd.grad(y, (x, w, b), g)
    budget = 1.0 if xs[1] == 64 else 0.5
    print(json.dumps({"case": name, "what": "fwd", "ms": best(fwd, budget) / 1e3}), flush=True)
    print(json.dumps({"case": name, "what": "fwd+bwd", "ms": best(fwd_bwd, budget) / 1e3}), flush=True)
'''


def figures(args):
    rows = []
    for threads in (1, 2):
        # alternate the libraries, so that a noisy neighbour hits both
        e = run_lib("ember", SCRIPT, threads)
        t = {(r["case"], r["what"]): r["ms"] for r in run_lib("torch", SCRIPT, threads)[1:]}
        rows += [figure(__file__, "%s %s" % (r["case"], r["what"]), "ms", threads, r["ms"], t[(r["case"], r["what"])])
                 for r in e[1:]]
    return rows


if __name__ == "__main__":
    cli(__file__, figures)
