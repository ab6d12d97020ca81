"""Shared pieces of the bench/ scripts: the row format every script returns
(figure), its one text printer, running a timing program in a clean process
per library, the BLAS core in use and a CPU contention check. bench/run.py
collects the rows into bench/RESULTS.md."""
import argparse
import ctypes
import json
import os
import subprocess
import sys

PYTHON = "/usr/bin/python3"
# A busy loop standing for another job on the machine (the contended rows). It
# ends when the process that started it is gone, so a killed bench leaves no
# spinner behind (one orphaned spinner made a whole session's timings contended).
SPIN = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    for _ in range(10 ** 6): pass"
BLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Set (to "1") by --quick: every timing loop runs once with a tiny budget, so
# that the whole pipeline runs fast; the figures are then meaningless.
QUICK_ENV = "EMBER_BENCH_QUICK"


def quick():
    return os.environ.get(QUICK_ENV) == "1"


def blas_core():
    try:
        lib = ctypes.CDLL(BLAS)
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except OSError:
        return "unknown"


def contention_check():
    """Runs one, then two busy loops at once; on a healthy 2-core machine
    each of the pair does about as much work as the single one."""
    code = "import time\nend=time.perf_counter()+0.5\nn=0\nwhile time.perf_counter()<end: n+=1\nprint(n)"
    single = int(subprocess.run([PYTHON, "-c", code], capture_output=True, text=True).stdout)
    procs = [subprocess.Popen([PYTHON, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    pair = [int(p.communicate()[0]) for p in procs]
    worst = min(pair) / single
    ok = worst > 0.75
    return ok, "two busy loops ran at %.0f%% and %.0f%% of one alone%s" % (
        100 * pair[0] / single, 100 * pair[1] / single, "" if ok else " -- a core is starved: 2-thread figures are unreliable")


# ---- the row format ----------------------------------------------------------

def figure(script, case, unit, threads, ember, torch, higher_is_better=None, note=None):
    """One measured figure. unit: "samples/s", "ms", "us", ...; rates (a unit
    ending in "/s") are higher-is-better, anything else lower-is-better unless
    said. ratio is oriented so that > 1 means Ember is better: ember / torch
    for rates, torch / ember for times and sizes; None where a side is missing
    (ember or torch None: not measured or failed, see note)."""
    if higher_is_better is None:
        higher_is_better = unit.endswith("/s")
    ratio = None
    if ember and torch:
        ratio = ember / torch if higher_is_better else torch / ember
    row = {"script": os.path.splitext(os.path.basename(script))[0], "case": case, "unit": unit,
           "higher_is_better": higher_is_better, "threads": threads, "ember": ember, "torch": torch, "ratio": ratio}
    if note:
        row["note"] = note
    return row


def alternating_rows(script, run, thread_settings, repeat):
    """Rows of a script whose runs print {"case", "us"} lines: for each thread
    setting the two libraries run `repeat` times, alternating (a busy spell
    hits both), and each case keeps each library's best time."""
    rows = []
    for threads in thread_settings:
        best = {"torch": {}, "ember": {}}
        for _ in range(repeat):
            for lib in ("torch", "ember"):
                for r in run(lib, threads):
                    best[lib][r["case"]] = min(r["us"], best[lib].get(r["case"], float("inf")))
        rows += [figure(script, case, "us", threads, best["ember"].get(case), us) for case, us in best["torch"].items()]
    return rows


def best_vs_best(rows):
    """Per case measured at several thread counts: Ember's best against
    PyTorch's best (each at whichever thread count suits it), as a row with
    threads "best". Cases keep their first-seen order."""
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    best = []
    for case, rs in by_case.items():
        if len(rs) > 1:
            pick = max if rs[0]["higher_is_better"] else min
            ember, torch = (pick([r[side] for r in rs if r[side]], default=None) for side in ("ember", "torch"))
            best.append(figure(rs[0]["script"], case, rs[0]["unit"], "best", ember, torch, rs[0]["higher_is_better"]))
    return best


def fmt(value):
    """A figure to about 4 significant digits; "-" when missing."""
    if value is None:
        return "-"
    return "%.0f" % value if value >= 1000 else "%.4g" % value


def format_ratio(ratio):
    return "-" if ratio is None else "%.2f" % ratio


def print_figures(rows, best=False, out=None):
    """The scripts' human table; best=True adds best_vs_best's rows after each case."""
    out = out or sys.stdout
    best_rows = {r["case"]: r for r in best_vs_best(rows)} if best else {}
    shown = []
    for i, r in enumerate(rows):
        shown.append(r)
        if r["case"] in best_rows and (i + 1 == len(rows) or rows[i + 1]["case"] != r["case"]):
            shown.append(best_rows.pop(r["case"]))
    width = max([len(r["case"]) for r in shown] + [4])
    out.write("%-*s %7s %11s %11s %-9s %6s\n" % (width, "case", "threads", "ember", "pytorch", "unit", "ratio"))
    for r in shown:
        out.write("%-*s %7s %11s %11s %-9s %6s%s\n" % (width, r["case"], r["threads"], fmt(r["ember"]), fmt(r["torch"]),
                                                    r["unit"], format_ratio(r["ratio"]),
                                                    "  (%s)" % r["note"] if r.get("note") else ""))
    out.write("ratio > 1: Ember is better (ember/pytorch for rates, pytorch/ember for times).\n")


def cli(script, figures, add_arguments=None, best=False):
    """A bench script's main: parses --quick and --json (and the script's own
    options), then prints figures(args) as a table after the conditions
    (best: with best_vs_best's rows), or, with --json (bench/run.py), one
    JSON line per row and nothing else."""
    ap = argparse.ArgumentParser(description=sys.modules["__main__"].__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny budgets: checks the pipeline, figures meaningless")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON lines (for bench/run.py)")
    if add_arguments:
        add_arguments(ap)
    args = ap.parse_args()
    if args.quick:
        os.environ[QUICK_ENV] = "1"
    if not args.json:
        ok, msg = contention_check()
        print("BLAS core: %s   CPU check: %s%s" % (blas_core(), msg, "   QUICK RUN: not figures" if quick() else ""))
    try:
        rows = figures(args)
    except BenchError as e:
        sys.exit("%s: %s" % (os.path.basename(script), e))
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        print_figures(rows, best=best)


# ---- running the timed programs ---------------------------------------------

class BenchError(Exception):
    """A timed program failed; the message is the last line of its stderr."""


# Prepended to every Python timing script: best(fn, budget) is the best
# time per call (microseconds) over `rounds` rounds of at least budget
# seconds (one round of 10 ms when quick).
TORCH_PRELUDE = r'''
import json, os, sys, time, torch
def best(fn, budget, rounds=3):
    if os.environ.get("EMBER_BENCH_QUICK") == "1":
        budget, rounds = min(budget, 0.01), 1
    res = 1e30
    for _ in range(rounds):
        n, t0 = 0, time.perf_counter()
        while True:
            fn(); n += 1
            t = time.perf_counter() - t0
            if t >= budget: break
        res = min(res, t / n)
    return res * 1e6
'''
# The same with `import ember as torch`: the scripts run one program for both libraries.
EMBER_PRELUDE = TORCH_PRELUDE.replace("import json, os, sys, time, torch\n",
                                      "import json, os, sys, time\nimport ember as torch\n")
assert EMBER_PRELUDE != TORCH_PRELUDE


def torch_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env["MKL_NUM_THREADS"] = str(threads)
    return env


def ember_env(threads):
    env = torch_env(threads)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    env["EMBER_NUM_THREADS"] = str(threads)
    return env


def run_json(argv, env):
    """Runs a timed program; returns the JSON lines it prints. Raises
    BenchError with its last stderr line when it fails."""
    out = subprocess.run(argv, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        sys.stderr.write(out.stderr)
        raise BenchError(lines[-1] if lines else "%s exited with status %d" % (argv[0], out.returncode))
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def run_lib(lib, script, threads, args=()):
    """Runs a timing script ("ember" or "torch") after its prelude, in its own
    process with the thread count set; it prints JSON lines."""
    prelude, env = (EMBER_PRELUDE, ember_env(threads)) if lib == "ember" else (TORCH_PRELUDE, torch_env(threads))
    return run_json([PYTHON, "-c", prelude + script, str(threads), *map(str, args)], env)


def run_torch(script, threads, args=()):
    return run_lib("torch", script, threads, args)


def run_program(name, args, threads):
    """Runs build/<name> (a C bench program); returns its stdout lines."""
    path = os.path.join(ROOT, "build", name)
    if not os.path.exists(path):
        raise BenchError("%s is missing: run `make %s`" % (os.path.relpath(path, ROOT), os.path.relpath(path, ROOT)))
    out = subprocess.run([path, *map(str, args)], env=torch_env(threads), capture_output=True, text=True)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        raise BenchError(lines[-1] if lines else "%s exited with status %d" % (name, out.returncode))
    return out.stdout.splitlines()
