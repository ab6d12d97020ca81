"""LAPACK-backed linear algebra, Ember vs PyTorch 1.13 (the same OpenBLAS):
forward of torch.linalg.solve, cholesky, svd (full_matrices=False and the
default), qr, det, inv and eigh on float32 batches of 64 matrices of 64x64,
one 512x512 matrix and a batch of 4 of them, and solve's forward+backward.
Rows at each library's own default thread settings ("default": no thread
variables set), then both at 1 thread. The same script runs in a process per
library (Ember's with `import ember as torch`), the two alternating --repeat
times, each side's best kept. Prints both times and PyTorch time / Ember time
(> 1: Ember is faster). Run through `make bench` or directly."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import EMBER_PRELUDE, PYTHON, ROOT, TORCH_PRELUDE, alternating_rows, cli, run_json, torch_env  # noqa: E402

SCRIPT = r'''
if sys.argv[1] != "default":
    torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
LA = torch.linalg
def emit(case, fn, budget):
    print(json.dumps({"case": case, "us": best(fn, budget)}), flush=True)
for batch, n in ((64, 64), (0, 512), (4, 512)):
    shape = (batch, n, n) if batch else (n, n)
    name = "%dx%dx%d" % (batch, n, n) if batch else "%dx%d" % (n, n)
    budget = 0.3 if n < 512 else 0.6
    A = torch.randn(*shape)
    S = A @ A.mT + n * torch.eye(n)  # symmetric positive-definite
    B = torch.randn(*shape[:-1], 1)
    emit("solve %s" % name, lambda: LA.solve(A, B), budget)
    emit("cholesky %s" % name, lambda: LA.cholesky(S), budget)
    emit("svd(full_matrices=False) %s" % name, lambda: LA.svd(A, full_matrices=False), budget)
    emit("svd %s" % name, lambda: LA.svd(A), budget)
    emit("qr %s" % name, lambda: LA.qr(A), budget)
    emit("det %s" % name, lambda: LA.det(A), budget)
    emit("inv %s" % name, lambda: LA.inv(A), budget)
    emit("eigh %s" % name, lambda: LA.eigh(S), budget)
    Ag, Bg = A.clone().requires_grad_(), B.clone().requires_grad_()
    def solve_bwd():
        LA.solve(Ag, Bg).sum().backward()
        Ag.grad = Bg.grad = None
    emit("solve fwd+bwd %s" % name, solve_bwd, budget)
'''


def env_for(lib, threads):
    """threads "default": no thread variables (each library's own choice)."""
    if threads == "default":
        env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                                "MKL_NUM_THREADS", "EMBER_NUM_THREADS")}
    else:
        env = torch_env(threads)
        env["EMBER_NUM_THREADS"] = str(threads)
    if lib == "ember":
        env["PYTHONPATH"] = os.path.join(ROOT, "python")
    return env


def run(lib, threads):
    prelude = EMBER_PRELUDE if lib == "ember" else TORCH_PRELUDE
    return run_json([PYTHON, "-c", prelude + SCRIPT, str(threads)], env_for(lib, threads))


def figures(args):
    return alternating_rows(__file__, run, args.threads, args.repeat)


def add_arguments(ap):
    ap.add_argument("--repeat", type=int, default=2, help="runs of each library, alternating (default 2)")
    ap.add_argument("--threads", nargs="+", default=["default", "1"],
                    help="thread settings: 'default' and/or counts (default: default 1)")


if __name__ == "__main__":
    cli(__file__, figures, add_arguments)
