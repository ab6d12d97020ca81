"""`import ember` vs `import torch` (1.13), side by side from Python: the
per-call cost of small ops (a + b, add(out=), add_ on 1 and 1000 elements),
`(x * w).sum().backward()` on 1 element, forward+backward of a 3-layer tanh
MLP at batch 1 (plain tensor ops), and the time of `python3 -c "import ..."`.
The same script runs in a process per library, with `import ember as torch`
on Ember's side. Prints PyTorch time / Ember time (> 1: Ember is faster).
Run through `make bench`."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, TORCH_PRELUDE, blas_core, contention_check, run_torch, torch_env  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHONPATH = os.path.join(ROOT, "python")
sys.path.insert(0, PYTHONPATH)

# argv: threads, then "sum" / "nosum" and "mlp" / "nomlp": the optional ops
# Ember's Python front end has, so that both sides time the same program.
SCRIPT = r'''
torch.set_num_threads(1)
use_sum, use_mlp = sys.argv[2] == "sum", sys.argv[3] == "mlp"
def emit(case, numel, fn, budget=0.1):
    print(json.dumps({"case": case, "numel": numel, "us": best(fn, budget, 5)}), flush=True)
for n in (1, 1000):
    a = torch.full((n,), 0.5); b = torch.full((n,), 1e-9); c = torch.empty(n)
    emit("a + b", n, lambda: a + b)
    emit("add(a, b, out=c)", n, lambda: torch.add(a, b, out=c))
    emit("a.add_(b)", n, lambda: a.add_(b))
x = torch.full((1,), 0.5, requires_grad=True); w = torch.full((1,), 1.0001, requires_grad=True)
def mul_backward():
    y = x * w
    (y.sum() if use_sum else y).backward(); x.grad = None; w.grad = None
emit("(x*w).sum().backward()" if use_sum else "(x*w).backward()", 1, mul_backward, 0.2)
if use_mlp:
    torch.manual_seed(0)
    sizes = (64, 128, 128, 10)
    params = []
    for i, o in zip(sizes, sizes[1:]):
        params += [(torch.randn(i, o) * i ** -0.5).requires_grad_(), torch.zeros(o).requires_grad_()]
    inp = torch.randn(1, sizes[0])
    def mlp():
        h = inp
        for k in range(0, len(params), 2):
            h = (torch.matmul(h, params[k]) + params[k + 1]).tanh()
        h.sum().backward()
        for p in params: p.grad = None
    emit("mlp 64-128-128-10 fwd+bwd", 1, mlp, 0.3)
'''

EMBER_PRELUDE = TORCH_PRELUDE.replace("import json, sys, time, torch\n",
                                      "import json, sys, time\nimport ember as torch\n")
assert EMBER_PRELUDE != TORCH_PRELUDE, "common.TORCH_PRELUDE changed: update EMBER_PRELUDE"


def ember_env():
    env = torch_env(1)
    env["PYTHONPATH"] = PYTHONPATH
    return env


def run_ember(args):
    import json
    out = subprocess.run([PYTHON, "-c", EMBER_PRELUDE + SCRIPT, "1", *args],
                         env=ember_env(), capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit("ember benchmark failed")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def import_time(module, env):
    """Best of 5 wall times of `python3 -c "import module"`, in ms."""
    best = 1e30
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([PYTHON, "-c", "import " + module], env=env, check=True)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    import ember
    ok, msg = contention_check()
    print("BLAS core: %s   CPU check: %s" % (blas_core(), msg))
    has_sum, has_matmul = hasattr(ember, "sum"), hasattr(ember, "matmul")
    args = ["sum" if has_sum else "nosum", "mlp" if has_sum and has_matmul else "nomlp"]
    rows_e = run_ember(args)
    rows_t = {(r["case"], r["numel"]): r["us"] for r in run_torch(SCRIPT, 1, args)}
    print("%-28s %6s %12s %12s %8s" % ("case (1 thread)", "numel", "ember us", "torch us", "ratio"))
    for r in rows_e:
        t = rows_t[(r["case"], r["numel"])]
        print("%-28s %6d %12.3f %12.3f %8.2f" % (r["case"], r["numel"], r["us"], t, t / r["us"]))
    e_ms, t_ms = import_time("ember", ember_env()), import_time("torch", torch_env(1))
    print("%-28s %6s %12.1f %12.1f %8.2f" % ("python3 -c 'import ...' ms", "-", e_ms, t_ms, t_ms / e_ms))
    if not has_sum:
        print("note: ember.sum is not bound yet: (x*w).backward() is timed instead of (x*w).sum().backward()")
    if not (has_sum and has_matmul):
        print("note: the MLP case needs ember.sum and ember.matmul, not bound yet: skipped")
    print("ratio = PyTorch time / Ember time: above 1 means Ember is faster. Both from Python, same script.")


if __name__ == "__main__":
    main()
