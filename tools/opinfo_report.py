"""Run the OpInfo conformance replay (tools/opinfo_replay.py) and write its report.

    PYTHONPATH=python /usr/bin/python3 tools/opinfo_report.py            # full: docs/opinfo.md
    PYTHONPATH=python /usr/bin/python3 tools/opinfo_report.py --sampled --write-floors
        # one sample per op and dtype: rewrites tests/python/opinfo_floors.json,
        # the per-namespace floors tests/python/test_opinfo.py holds Ember to

The ops run in chunks, each in its own process: an op that crashes the
interpreter (or hangs past the chunk's time limit) is recorded as a crash and
the chunk resumes after it, so one bad op never loses the run.
"""
import argparse
import collections
import functools
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(ROOT, "tools", "opinfo_replay.py")
FLOORS = os.path.join(ROOT, "tests", "python", "opinfo_floors.json")
REPORT = os.path.join(ROOT, "docs", "opinfo.md")
OP_TIMEOUT = 600  # opinfo_replay.OP_TIMEOUT


@functools.lru_cache(maxsize=None)
def count_ops():
    out = subprocess.run([sys.executable, "-c",
                          "import sys; sys.path.insert(0, %r); import opinfo_replay as r;"
                          "print(len(r.load_op_db()))" % os.path.dirname(REPLAY)],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def run_chunk(first, last, sampled, timeout):
    """Results for op_db[first:last]; crashed or hung ops become 'crash' rows."""
    results = []
    while first < last:
        cmd = [sys.executable, REPLAY, "WORKER", str(first), str(last)] + (["--sampled"] if sampled else [])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            out, err, rc, why = p.stdout, p.stderr, p.returncode, f"exit status {p.returncode}"
            if rc < 0:
                why = f"killed by signal {-rc}"
            elif "Timeout (" in err:
                why = f"hang: no result within {OP_TIMEOUT} s"
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err, rc, why = "", -1, f"chunk took over {timeout} s"
        started = None
        for line in out.splitlines():
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            if "start" in row:
                started = row["start"]
            else:
                results.append(row)
                started = None
        if rc == 0:
            break
        if started is None:  # died before its first op: nothing to resume from
            raise SystemExit(f"worker for ops {first}:{last} failed: {why}\n{err[-2000:]}")
        results.append({"index": started, "crash": why})
        first = started + 1
    return results


def replay_all(sampled, chunk, timeout, limit=None):
    n = count_ops() if limit is None else limit
    rows = []
    for first in range(0, n, chunk):
        rows += run_chunk(first, min(first + chunk, n), sampled, timeout)
        print(f"  {min(first + chunk, n)}/{n} ops", file=sys.stderr, flush=True)
    return rows


def _name_crashes(rows):
    """Crash rows know only their index: give them the op's id and namespace."""
    if not any("crash" in r for r in rows):
        return
    sys.path.insert(0, os.path.dirname(REPLAY))
    import opinfo_replay as r
    entries = r.op_entries()
    for row in rows:
        if "crash" in row:
            op = entries[row["index"]][0]
            row.update(id=r.op_id(op), ns=r.namespace_of(op), reason="CRASH: " + row["crash"],
                       errors_ok=0, errors_total=0, error_fails=[])
            row["pass"] = False


def summarize(rows):
    """{namespace: {'pass', 'total', 'errors_ok', 'errors_total', 'crashes'}}."""
    table = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: r["ns"]):
        if "excluded" in r:
            continue
        t = table.setdefault(r["ns"], dict(passed=0, total=0, errors_ok=0, errors_total=0, crashes=0))
        t["total"] += 1
        t["passed"] += bool(r["pass"])
        t["errors_ok"] += r["errors_ok"]
        t["errors_total"] += r["errors_total"]
        t["crashes"] += "crash" in r
    return table


def failure_class(reason):
    """A coarse class of a failure reason, for the report's summary."""
    if reason.startswith("CRASH"):
        return "crash"
    for key, cls in (("missing in Ember", "op or variant missing"),
                     ("NotImplementedError", "raises NotImplementedError"),
                     ("gradcheck", "gradcheck fails"), ("backward raised", "backward raises"),
                     ("gradient of input", "gradient differs"),
                     ("does not require grad", "output not differentiable"),
                     ("values differ", "values differ"), ("dtype ", "wrong result dtype"),
                     ("shape ", "wrong result shape"), ("torch raises", "accepts what torch rejects"),
                     ("raised TypeError", "raises TypeError (signature/argument)"),
                     ("raised", "raises another error"), ("returned", "wrong return value/arity")):
        if key in reason:
            return cls
    return "other"


def write_report(rows, sampled, path):
    table = summarize(rows)
    ops = sum(t["total"] for t in table.values())
    ok = sum(t["passed"] for t in table.values())
    eok = sum(t["errors_ok"] for t in table.values())
    etot = sum(t["errors_total"] for t in table.values())
    crashes = sum(t["crashes"] for t in table.values())
    L = ["# Ember against PyTorch 1.13's OpInfo database",
         "",
         "Written by `tools/opinfo_report.py`%s; do not edit by hand." % (" --sampled" if sampled else ""),
         "Every entry of `torch.testing._internal.common_methods_invocations.op_db` (Debian's",
         "torch 1.13) is replayed on Ember: each variant (function, method, in-place, aliases),",
         ("the first sample input of each dtype" if sampled else "each sample input") +
         " in float32 and float64 (int64/bool for ops with no floating dtype):",
         "values with torch's tolerances and dtypes, the function variant's gradients against the",
         "same cotangent as torch, a float64 gradcheck on one sample, and the exception type of",
         "each error input. An op passes when all of its checks pass; the first failure is listed.",
         "",
         f"**{ok} of {ops} ops pass ({100.0 * ok / max(ops, 1):.1f}%), {eok} of {etot} error inputs "
         f"raise torch's exception type ({100.0 * eok / max(etot, 1):.1f}%), {crashes} crashes.**",
         "",
         "| namespace | ops passing | error inputs matching | crashes |",
         "|---|---|---|---|"]
    for ns, t in table.items():
        L.append(f"| {ns} | {t['passed']} / {t['total']} | {t['errors_ok']} / {t['errors_total']} | {t['crashes']} |")
    fails = [r for r in rows if "excluded" not in r and not r["pass"]]
    classes = collections.Counter(failure_class(r["reason"]) for r in fails)
    L += ["", "## Failure classes (first failure of each failing op)", "",
          "| class | ops |", "|---|---|"]
    L += [f"| {c} | {n} |" for c, n in classes.most_common()]
    L += ["", "## Failing ops", ""]
    for ns in table:
        bad = [r for r in fails if r["ns"] == ns]
        if bad:
            L.append(f"### {ns}")
            L.append("")
            L += [f"- `{r['id']}`: {r['reason'].replace('|', '/')}" for r in sorted(bad, key=lambda r: r["id"])]
            L.append("")
    L += ["## Error inputs not matching", ""]
    L += [f"- `{r['id']}`: " + "; ".join(r["error_fails"][:3]) + (" ..." if len(r["error_fails"]) > 3 else "")
          for r in sorted(rows, key=lambda r: r.get("id", "")) if r.get("error_fails")]
    L += ["", "## Not aimed for (excluded from the figures)", ""]
    L += [f"- `{r['id']}`: {r['excluded']}" for r in rows if "excluded" in r]
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def write_floors(rows, path):
    table = summarize(rows)
    floors = {ns: {"passed": t["passed"], "errors_ok": t["errors_ok"]} for ns, t in table.items()}
    with open(path, "w") as f:
        f.write(json.dumps(floors, indent=1, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sampled", action="store_true", help="one sample per op and dtype (the CI test's mode)")
    ap.add_argument("--write-floors", action="store_true", help=f"rewrite {os.path.relpath(FLOORS, ROOT)}")
    ap.add_argument("--report", default=None, help=f"markdown output (default {os.path.relpath(REPORT, ROOT)}; "
                    "none with --sampled unless given)")
    ap.add_argument("--json", default=None, help="also dump every op's row here")
    ap.add_argument("--chunk", type=int, default=40, help="ops per worker process")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per chunk before it counts as a hang")
    ap.add_argument("--limit", type=int, default=None, help="only the first N ops (development)")
    ap.add_argument("--from-json", default=None, help="no replay: the rows of an earlier --json dump")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            rows = json.load(f)
    else:
        rows = replay_all(a.sampled, a.chunk, a.timeout, a.limit)
        _name_crashes(rows)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=0)
    report = a.report or (None if a.sampled else REPORT)
    if report:
        write_report(rows, a.sampled, report)
        print(f"wrote {report}", file=sys.stderr)
    if a.write_floors:
        write_floors(rows, FLOORS)
        print(f"wrote {FLOORS}", file=sys.stderr)
    for ns, t in summarize(rows).items():
        print(f"{ns:14s} {t['passed']:4d}/{t['total']:<4d} errors {t['errors_ok']}/{t['errors_total']}"
              f" crashes {t['crashes']}")


if __name__ == "__main__":
    main()
