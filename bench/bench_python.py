"""`import ember` vs `import torch` (1.13), side by side from Python: the
per-call cost of small ops (a + b, add(out=), add_ on 1 and 1000 elements),
`(x * w).sum().backward()` on 1 element, forward+backward of a 3-layer tanh
MLP at batch 1 (plain tensor ops), and the time `import ...` adds to a bare interpreter's start.
The same script runs in a process per library, with `import ember as torch`
on Ember's side. Prints PyTorch time / Ember time (> 1: Ember is faster).
Run through `make bench`."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from common import PYTHON, cli, ember_env, figure, quick, run_lib, torch_env  # noqa: E402

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


def import_time(module, env):
    """Best of 7 wall times (1 when quick) of `python3 -c "import module"` less the best of a bare
    `python3 -c pass`, in ms: what the import adds to a program's start. Compiled bytecode is cached
    (in a temporary folder) and warmed first, as in an installed package, whatever the environment's
    PYTHONDONTWRITEBYTECODE says."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(env, PYTHONPYCACHEPREFIX=cache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def best(code):
            subprocess.run([PYTHON, "-c", code], env=env, check=True)  # warms the bytecode cache
            times = []
            for _ in range(1 if quick() else 7):
                t0 = time.perf_counter()
                subprocess.run([PYTHON, "-c", code], env=env, check=True)
                times.append(time.perf_counter() - t0)
            return min(times)
        return max(best("import " + module) - best("pass"), 0.0) * 1e3


def label(case, numel):
    if case.startswith("mlp"):
        return case + ", batch 1"
    return "%s, %d element%s" % (case, numel, "" if numel == 1 else "s")


def figures(args):
    has = subprocess.run([PYTHON, "-c", "import ember; print(hasattr(ember, 'sum'), hasattr(ember, 'matmul'))"],
                         env=ember_env(1), capture_output=True, text=True, check=True).stdout.split()
    has_sum, has_matmul = has[0] == "True", has[1] == "True"
    argv = ["sum" if has_sum else "nosum", "mlp" if has_sum and has_matmul else "nomlp"]
    torch = {(r["case"], r["numel"]): r["us"] for r in run_lib("torch", SCRIPT, 1, argv)}
    rows = [figure(__file__, label(r["case"], r["numel"]), "us", 1, r["us"], torch[(r["case"], r["numel"])])
            for r in run_lib("ember", SCRIPT, 1, argv)]
    e_ms, t_ms = import_time("ember", ember_env(1)), import_time("torch", torch_env(1))
    return rows + [figure(__file__, "import, over a bare interpreter", "ms", 1, e_ms, t_ms)]


if __name__ == "__main__":
    cli(__file__, figures)
