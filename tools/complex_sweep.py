"""The complex dtypes over PyTorch 1.13's op_db (issue 15): every op whose CPU
dtypes include complex64 or complex128 (linalg.* and fft.* aside: their own
tests), replayed on Ember in complex128 and complex64 with
tools/opinfo_replay.py's machinery (values only: that harness compares
gradients in floating dtypes; complex gradients are checked by
tests/python/test_complex_kernels.py's gradchecks).

    PYTHONPATH=python /usr/bin/python3 tools/complex_sweep.py [ID ...]

Prints one line per failing op (its first failure) and the counts; with ids,
every failure of those ops. Each chunk of ops runs in a child process, so a
crash names its op and the sweep goes on."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opinfo_replay as R  # noqa: E402

SKIP_PREFIXES = ("linalg.", "fft.")


def complex_dtypes(op):
    import torch
    have = op.supported_dtypes("cpu")
    return [d for d in (torch.complex128, torch.complex64) if d in have]


def chosen(op, why):
    return not why and not op.name.startswith(SKIP_PREFIXES) and complex_dtypes(op)


def replay(em, op):
    R.test_dtypes = complex_dtypes              # complex dtypes instead of the float ones
    R._replay_errors = lambda em, op, res: None  # error inputs: the main replay's business
    return R.replay_op(em, op)


def child(first, ids):
    import torch
    import ember as em
    entries = R.op_entries()
    for i in range(first, len(entries)):
        op, why = entries[i]
        if (ids and R.op_id(op) not in ids) or not chosen(op, why):
            continue
        print(json.dumps({"start": i}), flush=True)
        torch.manual_seed(i)
        em.manual_seed(i)
        try:
            r = replay(em, op)
        except Exception as e:  # noqa: BLE001 -- the harness's failure, reported as such
            r = {"pass": False, "reason": f"harness error {R._short(e)}", "failures": []}
        print(json.dumps({"index": i, "id": R.op_id(op), "pass": r["pass"], "reason": r["reason"],
                          "failures": r["failures"]}), flush=True)


def main(ids):
    results, first = [], 0
    while True:
        p = subprocess.run([sys.executable, __file__, "CHILD", str(first), *ids], capture_output=True, text=True)
        started = None
        for line in p.stdout.splitlines():
            d = json.loads(line)
            if "start" in d:
                started = d["start"]
            else:
                results.append(d)
                started = None
        if p.returncode == 0:
            break
        results.append({"index": started, "id": f"op_db[{started}]", "pass": False,
                        "reason": f"crashed: {p.stderr.strip().splitlines()[-1:] or p.returncode}", "failures": []})
        first = started + 1
    bad = [r for r in results if not r["pass"]]
    for r in bad:
        print(f"{r['id']}: {r['reason']}")
        for why in r["failures"][1:] if ids else ():
            print(f"    {why}")
    print(f"complex sweep: {len(results) - len(bad)} of {len(results)} ops pass")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "CHILD":
        child(int(sys.argv[2]), set(sys.argv[3:]))
    else:
        main(sys.argv[1:])
