"""Threads under contention: per-op families (elementwise, reduction,
softmax, layer norm, gather, optimizer step, GEMMs small and large, conv)
and two small models (bench/contention_models.py: an LSTMCell float64
sequence model, a char-level Transformer step), Ember vs PyTorch 1.13, each
library with its own default thread settings, on a quiet machine and with
one core kept busy by a spinning process ("contended"). Prints both times
and PyTorch time / Ember time (> 1: Ember is faster)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import EMBER_PRELUDE, PYTHON, ROOT, SPIN, TORCH_PRELUDE, cli, figure, quick, run_json  # noqa: E402

SCRIPT = r'''
def emit(case, fn, budget=0.3):
    print(json.dumps({"case": case, "us": best(fn, budget)}), flush=True)
x = torch.randn(1 << 17); y = torch.randn(1 << 17)
emit("add 128K f32", lambda: x + y)
s = torch.randn(97, 204, dtype=torch.float64)
emit("sigmoid (97,204) f64", lambda: s.sigmoid())
emit("sum 128K f32", lambda: x.sum())
m = torch.randn(512, 512)
emit("sum(dim=1) (512,512)", lambda: m.sum(1))
emit("softmax (512,512)", lambda: m.softmax(1))
w, b = torch.ones(512), torch.zeros(512)
emit("layer_norm (512,512)", lambda: torch.layer_norm(m, [512], w, b, 1e-5))
idx = torch.randint(0, 512, (4096,))
emit("index_select 4096 rows of 512", lambda: m.index_select(0, idx))
p = [torch.nn.Parameter(torch.randn(256, 256)) for _ in range(8)]
for q in p: q.grad = torch.randn(256, 256)
opt = torch.optim.Adam(p)
emit("Adam step 8x(256,256)", opt.step)
a, bb = torch.randn(97, 51, dtype=torch.float64), torch.randn(51, 204, dtype=torch.float64)
emit("mm (97,51)@(51,204) f64", lambda: a @ bb)
a, bb = torch.randn(512, 512), torch.randn(512, 512)
emit("mm (512,512)@(512,512) f32", lambda: a @ bb)
xi, cw = torch.randn(16, 16, 32, 32), torch.randn(32, 16, 3, 3)
emit("conv2d (16,16,32,32) 3x3x32 f32", lambda: torch.nn.functional.conv2d(xi, cw, padding=1))
'''


def default_env(lib):
    """Each library with its own defaults: no thread variables."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                            "MKL_NUM_THREADS", "EMBER_NUM_THREADS")}
    if lib == "ember":
        env["PYTHONPATH"] = os.path.join(ROOT, "python")
    return env


def run_ops(lib):
    prelude = EMBER_PRELUDE if lib == "ember" else TORCH_PRELUDE
    return run_json([PYTHON, "-c", prelude + SCRIPT], default_env(lib))


def run_model(lib, model):
    out = subprocess.run([PYTHON, os.path.join(ROOT, "bench", "contention_models.py"), lib, model,
                          "1" if quick() else "3"], env=default_env(lib), capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1]) * 1e3


def measure(rows, condition):
    t, e = run_ops("torch"), run_ops("ember")
    rows += [figure(__file__, "%s, %s" % (a["case"], condition), "us", "default", b["us"], a["us"])
             for a, b in zip(t, e)]
    for model, name in (("lstmcell", "LSTMCell f64 model, 100 steps fwd+bwd"), ("charlm", "char Transformer step")):
        rows.append(figure(__file__, "%s, %s" % (name, condition), "ms", "default", run_model("ember", model),
                           run_model("torch", model)))


def figures(args):
    rows = []
    measure(rows, "quiet")
    spinner = subprocess.Popen([PYTHON, "-c", SPIN])
    try:
        measure(rows, "contended")
    finally:
        spinner.kill()
        spinner.wait()
    return rows


if __name__ == "__main__":
    cli(__file__, figures)
