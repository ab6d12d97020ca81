"""`make bench`: runs every bench/bench_*.py (each beside PyTorch 1.13, its
rows as JSON), with a CPU contention check before the run and before each
script, and writes bench/RESULTS.md (the conditions, one table per script, a
legend) and, in README.md, the headline table (bench_train's rows) between
<!-- bench:begin --> and <!-- bench:end -->. Exits non-zero if a script failed.

    /usr/bin/python3 bench/run.py [--only SCRIPT ...] [--quick] [--out PATH] [--readme PATH | --no-readme]
"""
import argparse
import ast
import datetime
import glob
import json
import os
import shlex
import subprocess
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import PYTHON, ROOT, best_vs_best, blas_core, contention_check, fmt, format_ratio  # noqa: E402

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
HEADLINE = "bench_train"  # its rows make the README's table
MARK = "†"                # a row measured after a failed CPU check
BENCH = os.path.join(ROOT, "bench")


def all_scripts():
    """bench_*.py names without .py, the headline's first."""
    names = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(BENCH, "bench_*.py")))
    return sorted(names, key=lambda n: n != HEADLINE)


def script_name(arg):
    """bench_conv, bench_conv.py, bench/bench_conv.py or conv -> bench_conv."""
    name = os.path.basename(arg)
    name = name[:-3] if name.endswith(".py") else name
    return name if name.startswith("bench_") else "bench_" + name


def summary(name):
    """The first sentence of a script's docstring (read, not imported)."""
    with open(os.path.join(BENCH, name + ".py")) as f:
        doc = ast.get_docstring(ast.parse(f.read())) or ""
    text = " ".join(doc.split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


# ---- the conditions ------------------------------------------------------------

def _output(argv, env=None):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env)
        return out.stdout.strip() if out.returncode == 0 else None
    except OSError:
        return None


def git_commit():
    commit = _output(["git", "rev-parse", "--short", "HEAD"])
    if commit is None:
        return "unknown"
    return commit + ("-dirty" if _output(["git", "status", "--porcelain", "--untracked-files=no"]) else "")


def cpu():
    """The CPU model and the number of logical cores, from /proc/cpuinfo."""
    model, cores = "unknown", 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown":
                    model = " ".join(value.split())
                cores += key.strip() == "processor"
    except OSError:
        pass
    return model, cores or os.cpu_count()


def conditions(argv, quick, check):
    """The facts RESULTS.md's header and the README's conditions line show."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    model, cores = cpu()
    command = shlex.join([PYTHON, os.path.relpath(os.path.abspath(__file__), ROOT)] + argv)
    if os.environ.get("BENCH_COMMAND"):  # set by the Makefile
        command = "%s (%s)" % (os.environ["BENCH_COMMAND"], command)
    threads_env = ", ".join("%s=%s" % (k, os.environ[k]) for k in
                            ("OMP_NUM_THREADS", "EMBER_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_PROC_BIND",
                             "OMP_PLACES", "GOMP_SPINCOUNT") if k in os.environ)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "commit": git_commit(),
        "cpu": model,
        "cores": cores,
        "blas": blas_core(),
        "torch": _output([PYTHON, "-c", "import torch; print(torch.__version__)"]) or "not found",
        "ember_threads": _output([PYTHON, "-c", "import ember; print(ember.get_num_threads())"], env) or "unknown",
        "threads_env": threads_env or "none set",
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "not set"),
        "quick": quick,
        "check": check,
    }


# ---- running the scripts --------------------------------------------------------

def run_script(name, quick):
    """Runs one script after a CPU check; returns its result: rows (each
    marked contended when the check failed) or error (its last stderr line)."""
    ok, msg = contention_check()
    print("== %s (CPU check %s: %s)" % (name, "passed" if ok else "FAILED", msg), flush=True)
    t0 = time.perf_counter()
    argv = [PYTHON, os.path.join(BENCH, name + ".py"), "--json"] + (["--quick"] if quick else [])
    out = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    result = {"script": name, "summary": summary(name), "check": (ok, msg), "rows": [], "error": None,
              "seconds": time.perf_counter() - t0}
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        lines = out.stderr.strip().splitlines()
        result["error"] = lines[-1] if lines else "exited with status %d" % out.returncode
        print("   FAILED: %s" % result["error"], flush=True)
        return result
    result["rows"] = [dict(json.loads(line), contended=not ok) for line in out.stdout.splitlines()
                      if line.startswith("{")]
    print("   %d rows in %.0f s" % (len(result["rows"]), result["seconds"]), flush=True)
    return result


# ---- writing --------------------------------------------------------------------

def check_line(check):
    ok, msg = check
    return "%s (%s)" % ("passed" if ok else "FAILED", msg)


def md_row(cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def table(rows):
    """A markdown table of figure rows, MARK and notes in the last column."""
    lines = [md_row(["case", "threads", "Ember", "PyTorch", "unit", "ratio", "note"]), "|---|---|---|---|---|---|---|"]
    for r in rows:
        note = " ".join(filter(None, [MARK if r.get("contended") else "", r.get("note", "")]))
        lines.append(md_row([r["case"], r["threads"], fmt(r["ember"]), fmt(r["torch"]), r["unit"],
                             format_ratio(r["ratio"]), note]))
    return "\n".join(lines)


def conditions_line(meta, results):
    """One line: date, commit, machine, BLAS core, PyTorch, and the CPU
    checks before the run and before each of results' scripts."""
    checks = [("the run", meta["check"])] + [(r["script"] + ".py", r["check"]) for r in results]
    failed = [where for where, (ok, _) in checks if not ok]
    if failed:
        checks = "CPU check FAILED before %s: rows marked %s are unreliable" % (" and ".join(failed), MARK)
    else:
        checks = "CPU check passed before %s" % " and ".join(where for where, _ in checks)
    return "%s, commit %s, %s (%d cores), BLAS core %s, PyTorch %s; %s." % (
        meta["date"], meta["commit"], meta["cpu"], meta["cores"], meta["blas"], meta["torch"], checks)


def render_results(meta, results):
    """bench/RESULTS.md's text."""
    n_failed = sum(r["error"] is not None for r in results)
    out = ["# Ember vs PyTorch: benchmark results", "",
           "Written by `make bench` (bench/run.py); regenerate rather than edit.", ""]
    if meta["quick"]:
        out += ["**Quick run: not figures.** Every timing loop ran once with a tiny budget to check the "
                "pipeline; the numbers below mean nothing.", ""]
    facts = [("date", meta["date"]), ("command", "`%s`" % meta["command"]), ("commit", meta["commit"]),
             ("CPU", "%s, %d cores" % (meta["cpu"], meta["cores"])), ("BLAS core", meta["blas"]),
             ("PyTorch", meta["torch"]),
             ("threads", "per row: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and set_num_threads "
                         "set to the row's count in each library's process; Ember's default here %s; "
                         "set in the environment: %s" % (meta["ember_threads"], meta["threads_env"])),
             ("OMP_WAIT_POLICY", meta["omp_wait_policy"]),
             ("CPU check before the run", check_line(meta["check"])),
             ("scripts", "%d run, %d failed%s" % (len(results), n_failed,
                                                  ": " + ", ".join(r["script"] for r in results if r["error"])
                                                  if n_failed else ""))]
    out += ["| | |", "|---|---|"] + ["| %s | %s |" % f for f in facts] + [""]
    for r in results:
        out += ["## %s.py" % r["script"], "", r["summary"], "",
                "CPU check before it: %s. Took %.0f s." % (check_line(r["check"]), r["seconds"]), ""]
        if r["error"] is not None:
            out += ["**FAILED**: `%s`" % r["error"].replace("`", "'"), ""]
            continue
        rows = r["rows"]
        if r["script"] == HEADLINE:
            rows = rows + [dict(b, contended=any(x.get("contended") for x in rows if x["case"] == b["case"]))
                           for b in best_vs_best(rows)]
        out += [table(rows), ""]
    out += ["## Legend", "",
            "- ratio > 1: Ember is better: Ember / PyTorch for rates (units ending in /s), PyTorch / Ember for "
            "times (ms, us) and memory (MB). \"-\": that side was not measured (see note).",
            "- threads: the thread count both libraries ran with in that row; \"best\": each library's best over "
            "its thread counts (the README's best vs best).",
            "- %s: measured after a failed CPU contention check (two busy loops could not both get a full core: "
            "a core was starved), so the row, above all at 2 threads, is unreliable." % MARK,
            "- Each library runs in its own process; the scripts' docstrings say what is timed and how.", ""]
    return "\n".join(out)


def render_headline(meta, results, results_path):
    """The README block (without the markers): bench_train's rows per model at
    each thread count, best vs best, the date and conditions."""
    results = [res for res in results if res["script"] == HEADLINE]
    rows = [r for res in results for r in res["rows"]]
    threads = sorted({r["threads"] for r in rows})
    best = {r["case"]: r for r in best_vs_best(rows)}
    head = ["model"]
    for t in threads:
        head += ["Ember %d thread%s" % (t, "s" if t > 1 else ""), "PyTorch %d thread%s" % (t, "s" if t > 1 else "")]
    head.append("best vs best")
    lines = [md_row(head), "|" + "---|" * len(head)]
    for case in dict.fromkeys(r["case"] for r in rows):
        mine = {r["threads"]: r for r in rows if r["case"] == case}
        cells = [case + (" " + MARK if any(r.get("contended") for r in mine.values()) else "")]
        for t in threads:
            cells += [fmt(mine[t]["ember"]), fmt(mine[t]["torch"])] if t in mine else ["-", "-"]
        cells.append(format_ratio(best[case]["ratio"]) if case in best else format_ratio(
            next(iter(mine.values()))["ratio"]))
        lines.append(md_row(cells))
    out = []
    if meta["quick"]:
        out += ["**Quick run: not figures.**", ""]
    out += [textwrap.fill("Training steps (zero_grad, forward, cross-entropy, backward, optimizer step), the same "
                          "model code on both sides, samples/s; ratio > 1: Ember is faster. Measured %s"
                          % conditions_line(meta, results), 78, break_long_words=False, break_on_hyphens=False), ""]
    out += lines + ["", "Regenerate with `make bench`; all figures: %s." % results_path]
    return "\n".join(out)


def replace_block(text, block, path="README.md"):
    """text with the lines between BEGIN and END replaced by block; the
    markers and everything outside them are kept. ValueError if they are
    missing, repeated or out of order."""
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0 or e < b or text.count(BEGIN) > 1 or text.count(END) > 1:
        raise ValueError("%s: needs one '%s' line, then one '%s' line around the benchmark table "
                         "(bench/run.py writes between them); use --no-readme to skip it" % (path, BEGIN, END))
    return text[:b + len(BEGIN)] + "\n" + block.strip("\n") + "\n" + text[e:]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="+", metavar="SCRIPT", help="these scripts only (bench_conv, conv.py, ...)")
    ap.add_argument("--quick", action="store_true",
                    help="tiny budgets: checks the pipeline, the figures are meaningless (README left alone "
                         "unless --readme is given)")
    ap.add_argument("--out", default=os.path.join(BENCH, "RESULTS.md"))
    ap.add_argument("--readme", help="the README to update (default README.md)")
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args(argv)
    names = all_scripts()
    if args.only:
        unknown = [s for s in map(script_name, args.only) if s not in names]
        if unknown:
            ap.error("no such script: %s (there are %s)" % (", ".join(unknown), ", ".join(names)))
        names = [n for n in names if n in map(script_name, args.only)]
    readme = None
    if args.no_readme:
        print("README: left alone (--no-readme)")
    elif HEADLINE not in names:
        print("README: left alone (%s is not in this run)" % HEADLINE)
    elif args.quick and not args.readme:
        print("README: left alone (a quick run; pass --readme PATH to write one)")
    else:
        readme = args.readme or os.path.join(ROOT, "README.md")
        try:
            with open(readme) as f:
                replace_block(f.read(), "", readme)  # fail now, not after the run
        except (OSError, ValueError) as e:
            sys.exit("bench/run.py: %s" % e)

    check = contention_check()
    print("CPU check before the run: %s" % check_line(check), flush=True)
    meta = conditions(argv, args.quick, check)
    results = [run_script(name, args.quick) for name in names]

    with open(args.out, "w") as f:
        f.write(render_results(meta, results))
    print("wrote %s" % args.out)
    headline = [r for r in results if r["script"] == HEADLINE and r["rows"]]
    if readme and headline:
        with open(readme) as f:
            text = f.read()
        results_path = os.path.relpath(os.path.abspath(args.out), os.path.dirname(os.path.abspath(readme)))
        with open(readme, "w") as f:
            f.write(replace_block(text, render_headline(meta, results, results_path), readme))
        print("wrote the table in %s" % readme)
    elif readme:
        print("README: left alone (%s failed)" % HEADLINE)
    failed = [r["script"] for r in results if r["error"] is not None]
    if failed:
        print("failed: %s" % ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
