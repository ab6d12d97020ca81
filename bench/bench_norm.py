"""Normalization kernels, Ember vs PyTorch 1.13 side by side: forward and
forward+backward of batch norm (training, the ResNet-18 shape N32 C64 32x32),
layer norm (GPT: 1024 rows of 256) and group norm, at 1 and 2 threads.
The same script runs in a process per library (`import ember as torch` on
Ember's side). Prints both times and PyTorch time / Ember time (> 1: Ember is
faster). Run through `make bench` or directly."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, TORCH_PRELUDE, blas_core, contention_check, run_torch, torch_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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


def run_ember(threads):
    env = torch_env(threads)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    env["EMBER_NUM_THREADS"] = str(threads)
    code = "import ember as torch\n" + TORCH_PRELUDE.replace("import json, sys, time, torch", "import json, sys, time") \
        + SCRIPT
    out = subprocess.run([PYTHON, "-c", code, str(threads)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit("ember benchmark failed")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main():
    ok, msg = contention_check()
    print("BLAS core: %s; %s" % (blas_core(), msg))
    for threads in (1, 2):
        t, e = run_torch(SCRIPT, threads), run_ember(threads)
        print("-- %d thread%s" % (threads, "s" if threads > 1 else ""))
        print("%-40s %12s %12s %8s" % ("case", "torch us", "ember us", "ratio"))
        for a, b in zip(t, e):
            print("%-40s %12.1f %12.1f %8.2f" % (a["case"], a["us"], b["us"], a["us"] / b["us"]))


if __name__ == "__main__":
    main()
