"""conv2d forward + backward (input and weight gradients), Ember vs PyTorch
1.13 (oneDNN/mkldnn on CPU), each in its own process, at 1 and 2 threads:
a ResNet 3x3 layer (N8, 64->64, 56x56, pad 1) and LeNet-5's two conv layers
(N64, 1->6 5x5 on 28x28 pad 2; N64, 6->16 5x5 on 14x14). Also the forward
alone. Prints ms per call and PyTorch time / Ember time (> 1: Ember is
faster). Run through `make bench` or directly."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, TORCH_PRELUDE, blas_core, contention_check, run_torch, torch_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHONPATH = os.path.join(ROOT, "python")

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

EMBER_PRELUDE = TORCH_PRELUDE.replace("import json, sys, time, torch\n",
                                      "import json, sys, time\nimport ember as torch\n")
assert EMBER_PRELUDE != TORCH_PRELUDE, "common.TORCH_PRELUDE changed: update EMBER_PRELUDE"


def run_ember(threads):
    env = torch_env(threads)
    env["PYTHONPATH"] = PYTHONPATH
    out = subprocess.run([PYTHON, "-c", EMBER_PRELUDE + SCRIPT, str(threads)], env=env, capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit("ember benchmark failed")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main():
    ok, msg = contention_check()
    print("BLAS core: %s   CPU check: %s" % (blas_core(), msg))
    rows = {}
    for threads in (1, 2):
        # alternate the libraries, so that a noisy neighbour hits both
        e = run_ember(threads)
        t = run_torch(SCRIPT, threads)
        if threads == 1:
            print("torch mkldnn available: %s" % t[0]["info"].get("mkldnn"))
        rows[threads] = (e[1:], {(r["case"], r["what"]): r["ms"] for r in t[1:]})
    print("%-34s %-8s %3s %10s %10s %7s" % ("case", "pass", "thr", "ember ms", "torch ms", "ratio"))
    for threads, (e, t) in rows.items():
        for r in e:
            tm = t[(r["case"], r["what"])]
            print("%-34s %-8s %3d %10.3f %10.3f %7.2f" % (r["case"], r["what"], threads, r["ms"], tm, tm / r["ms"]))
    print("fwd+bwd: forward, then the input, weight and bias gradients (autograd.grad).")
    print("ratio = PyTorch time / Ember time: above 1 means Ember is faster.")


if __name__ == "__main__":
    main()
