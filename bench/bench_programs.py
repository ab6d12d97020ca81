"""Whole PyTorch programs (bench/programs/, written with `import torch`)
run unchanged on Ember and on PyTorch 1.13, each in its own process with its
own defaults (no thread settings on either side): wall time per epoch or
step, on a quiet machine and with one core kept busy by a spinning process,
and each library's slowdown under that load.

Ember's side runs with tests/torch_alias on PYTHONPATH (its `torch` is
Ember). For each program, in this order: PyTorch quiet, Ember quiet, then,
with a busy Python loop (common.SPIN) running (pinned to the last core with
--spin pinned, free to move with --spin free), PyTorch and Ember again. The
figures are what each program reports on its RESULT line (its training time
only: data loading for the epoch included, evaluation excluded). Three rows
per program: quiet, one core busy, and busy/quiet (ratio > 1: Ember's
slowdown is smaller than PyTorch's). The last row times the README's demo,
examples/train_fashion_mnist.py, on Ember against the same recipe on PyTorch
(bench/programs/fashion_mnist.py).

    /usr/bin/python3 bench/bench_programs.py [--quick] [--only NAME ...] [--spin pinned|free]"""
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PYTHON, ROOT, SPIN, cli, figure, quick  # noqa: E402

PROGRAMS = os.path.join(ROOT, "bench", "programs")
ALIAS = os.path.join(ROOT, "tests", "torch_alias")
DEMO = os.path.join(ROOT, "examples", "train_fashion_mnist.py")


class Case:
    """A program run with its defaults (args) or, with --quick, tiny settings
    (quick_args); `field` of its RESULT line, scaled, is the figure."""

    def __init__(self, name, program, field, unit, args=(), quick_args=(), scale=1.0):
        self.name, self.program, self.field, self.unit = name, program, field, unit
        self.args, self.quick_args, self.scale = list(args), list(quick_args), scale


FASHION_QUICK = ["--train-size", 128, "--test-size", 128]
CASES = [
    Case("CNN, Adadelta + StepLR (mnist_cnn)", "mnist_cnn.py", "seconds_per_epoch", "s/epoch",
         quick_args=FASHION_QUICK),
    Case("VAE (vae)", "vae.py", "seconds_per_epoch", "s/epoch", quick_args=FASHION_QUICK + ["--epochs", 1]),
    Case("DCGAN 32x32 (dcgan)", "dcgan.py", "seconds_per_epoch", "s/epoch",
         quick_args=["--num-images", 128, "--niter", 1]),
    Case("word LSTM LM (word_lm)", "word_lm.py", "ms_per_step", "ms/step", quick_args=["--max-chars", 8000]),
    Case("word Transformer LM (word_lm)", "word_lm.py", "ms_per_step", "ms/step", args=["--model", "Transformer"],
         quick_args=["--max-chars", 8000]),
    Case("LSTMCell float64, fwd+bwd of 100 steps (time_sequence)", "time_sequence.py", "ms_per_closure", "ms",
         quick_args=["--length", 10, "--future", 2]),
    Case("RNN over rows, 2 DataLoader workers (rnn_rows)", "rnn_rows.py", "seconds_per_epoch", "s/epoch",
         quick_args=FASHION_QUICK),
    Case("Fashion-MNIST demo recipe (fashion_mnist)", "fashion_mnist.py", "seconds_per_epoch", "s/epoch",
         quick_args=["--limit", 500, "--epochs", 1]),
]
DEMO_CASE = "Fashion-MNIST demo: examples/train_fashion_mnist.py vs fashion_mnist"


def lib_env(lib):
    """The environment as it is (thread settings included: none are added),
    with Ember's alias on the path for Ember and no PYTHONPATH for PyTorch;
    loads unpickle anything, as in the programs' PyTorch 1.13."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"  # 1.13's torch.load of whole modules (Ember: weights_only)
    if lib == "ember":
        env["PYTHONPATH"] = os.pathsep.join([ALIAS, os.path.join(ROOT, "python")])
    return env


def last_error(out):
    lines = (out.stderr or out.stdout).strip().splitlines()
    return lines[-1][:160] if lines else "exited with status %d" % out.returncode


def result_line(stdout):
    """The object on a program's last `RESULT {...}` line, or None."""
    found = [line[len("RESULT "):] for line in stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(found[-1]) if found else None


def demo_seconds(stdout):
    """Mean training seconds per epoch from the demo's 'epoch N: ..., X s training' lines."""
    found = [float(s) for s in re.findall(r"^epoch \d+: .*?, ([0-9.]+) s training", stdout, re.M)]
    return sum(found) / len(found) if found else None


def run_case(lib, case, quick_run, cwd):
    """(figure, None) or (None, why) for one run of case on lib."""
    args = case.args + (case.quick_args if quick_run else [])
    argv = [PYTHON, os.path.join(PROGRAMS, case.program)] + [str(a) for a in args]
    out = subprocess.run(argv, cwd=cwd, env=lib_env(lib), capture_output=True, text=True)
    result = result_line(out.stdout) if out.returncode == 0 else None
    if result is None:
        return None, "%s: %s" % (lib, last_error(out))
    return result[case.field] * case.scale, None


def run_demo(quick_run, cwd):
    """Ember's demo as the README runs it (its defaults), into cwd."""
    argv = [PYTHON, DEMO, "--out", cwd] + (["--limit", "500", "--epochs", "1"] if quick_run else [])
    out = subprocess.run(argv, cwd=cwd, env=lib_env("ember"), capture_output=True, text=True)
    seconds = demo_seconds(out.stdout) if out.returncode == 0 else None
    return (seconds, None) if seconds is not None else (None, "ember: %s" % last_error(out))


@contextlib.contextmanager
def spinning(pinned):
    """A busy loop (common.SPIN) for the duration of a with block;
    pinned: kept on the last core. Yields the process."""
    proc = subprocess.Popen([PYTHON, "-c", SPIN])
    try:
        if pinned:
            os.sched_setaffinity(proc.pid, {max(os.sched_getaffinity(0))})
        yield proc
    finally:
        proc.kill()
        proc.wait()


CONDITIONS = ("quiet", "busy")


def condition(name, pinned):
    return spinning(pinned) if name == "busy" else contextlib.nullcontext()


def case_rows(script, case, unit, quiet, busy, notes=()):
    """The three rows of one program. quiet, busy: (ember, torch) figures,
    None where a side failed; notes: why, shown on every row."""
    note = "; ".join(notes) or None
    rows = [figure(script, case + ", quiet", unit, "default", quiet[0], quiet[1], note=note),
            figure(script, case + ", one core busy", unit, "default", busy[0], busy[1], note=note)]
    slow = [b / q if b and q else None for q, b in zip(quiet, busy)]
    rows.append(figure(script, case + ", busy/quiet", "x", "default", slow[0], slow[1], higher_is_better=False,
                       note=note))
    return rows


def measure(case, quick_run, pinned, cwd, runner=run_case):
    """Runs case on both libraries, quiet then with the spinner; its rows."""
    pair, notes = {}, []
    for cond in CONDITIONS:
        with condition(cond, pinned):
            got = {lib: runner(lib, case, quick_run, cwd) for lib in ("torch", "ember")}
        pair[cond] = (got["ember"][0], got["torch"][0])
        notes += [why for _, why in got.values() if why and why not in notes]
    return case_rows(__file__, case.name, case.unit, pair["quiet"], pair["busy"], notes)


def add_arguments(ap):
    ap.add_argument("--only", nargs="+", metavar="NAME", help="programs whose file name starts with NAME")
    ap.add_argument("--spin", choices=("pinned", "free"), default="free",
                    help="the busy core's spinner: kept on the last core, or free to move (default)")


def figures(args):
    cases = [c for c in CASES if not args.only or any(c.program.startswith(n) for n in args.only)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_programs.") as cwd:
        for case in cases:
            rows += measure(case, quick(), args.spin == "pinned", cwd)
            print("%s: done" % case.name, file=sys.stderr, flush=True)
        recipe = [r for r in rows if r["case"].startswith("Fashion-MNIST demo recipe")]
        if recipe:  # the demo itself on Ember, against the recipe's PyTorch figures
            pair, notes = {}, []
            for cond, torch_row in zip(CONDITIONS, recipe):
                with condition(cond, args.spin == "pinned"):
                    seconds, why = run_demo(quick(), cwd)
                pair[cond] = (seconds, torch_row["torch"])
                notes += [why] if why and why not in notes else []
            rows += case_rows(__file__, DEMO_CASE, "s/epoch", pair["quiet"], pair["busy"], notes)
    return rows


if __name__ == "__main__":
    cli(__file__, figures, add_arguments)
