"""Loss functions, Ember vs PyTorch 1.13 from Python: forward + backward of
F.cross_entropy on (128, 10) and (2560, 10000) logits (Ember's fused
log-softmax + NLL kernel), and of F.mse_loss / F.binary_cross_entropy_with_logits
on 1M elements. The same script runs in a process per library (Ember's with
`import ember as torch`), at 1 and 2 threads. Prints PyTorch time / Ember
time (> 1: Ember is faster)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, TORCH_PRELUDE, blas_core, contention_check, torch_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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
EMBER_PRELUDE = "import sys; sys.path.insert(0, %r)\nimport ember as torch\n" % os.path.join(ROOT, "python")


def run(prelude, threads):
    out = subprocess.run([PYTHON, "-c", prelude + SCRIPT, str(threads)], env=torch_env(threads),
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit("benchmark failed")
    import json
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main():
    ok, msg = contention_check()
    print("BLAS core: %s; %s" % (blas_core(), msg))
    for threads in (1, 2):
        torch_rows = run(TORCH_PRELUDE, threads)
        ember_rows = run(TORCH_PRELUDE.replace("import json, sys, time, torch", "import json, sys, time")
                         + EMBER_PRELUDE, threads)
        print("threads=%d" % threads)
        print("  %-40s %12s %12s %8s" % ("case", "torch us", "ember us", "ratio"))
        for t, e in zip(torch_rows, ember_rows):
            print("  %-40s %12.1f %12.1f %8.2f" % (t["case"], t["us"], e["us"], t["us"] / e["us"]))


if __name__ == "__main__":
    main()
