"""Conformance against PyTorch 1.13's OpInfo database, sampled for CI.

Replays one sample per op and dtype of every op_db entry (tools/opinfo_replay.py,
in worker processes so that a crash is reported as such) and fails on any crash
or when a namespace's count of passing ops or of matching error inputs falls
below tests/python/opinfo_floors.json. When Ember improves, raise the floors with
    PYTHONPATH=python /usr/bin/python3 tools/opinfo_report.py --sampled --write-floors
The full replay (every sample) is tools/opinfo_report.py, which writes docs/opinfo.md.
"""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

torch = pytest.importorskip("torch")
report = pytest.importorskip("opinfo_report")


@pytest.fixture(scope="module")
def rows():
    rows = report.replay_all(sampled=True, chunk=160, timeout=1200)
    report._name_crashes(rows)
    return rows


def test_no_crash(rows):
    crashed = [f"{r['id']}: {r['reason']}" for r in rows if "crash" in r]
    assert not crashed, crashed


def test_no_harness_error(rows):
    broken = [f"{r['id']}: {r['reason']}" for r in rows
              if "excluded" not in r and (r["reason"] or "").startswith("harness error")]
    assert not broken, broken


def test_every_op_replayed(rows):
    assert sorted(r["index"] for r in rows) == list(range(report.count_ops()))


def test_floors(rows):
    with open(report.FLOORS) as f:
        floors = json.load(f)
    table = report.summarize(rows)
    below = []
    for ns, floor in floors.items():
        got = table.get(ns, dict(passed=0, errors_ok=0))
        for key in ("passed", "errors_ok"):
            if got[key] < floor[key]:
                failing = [r["id"] for r in rows if r.get("ns") == ns and "excluded" not in r
                           and not r["pass"]]
                below.append(f"{ns} {key} {got[key]} < floor {floor[key]} (failing: {failing[:20]})")
    assert not below, below
