"""bench/bench_programs.py, the whole-program benchmark: its rows (quiet,
one core busy, busy/quiet) from synthetic figures, the RESULT and demo line
parsers, measure() over a stand-in runner (a failing side becomes a note, not
a crash; the spinner runs only for the busy runs and is gone afterwards),
and one quick end-to-end run of the cheapest program on both libraries."""
import contextlib
import importlib.util
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, 'bench')
PYTHON = '/usr/bin/python3'

spec = importlib.util.spec_from_file_location('bench_programs', os.path.join(BENCH, 'bench_programs.py'))
bp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bp)


def test_case_rows():
    rows = bp.case_rows('bench_programs.py', 'VAE', 's/epoch', quiet=(2.0, 4.0), busy=(3.0, 12.0))
    assert [r['case'] for r in rows] == ['VAE, quiet', 'VAE, one core busy', 'VAE, busy/quiet']
    assert all(r['script'] == 'bench_programs' and r['threads'] == 'default' for r in rows)
    quiet, busy, slow = rows
    assert (quiet['ember'], quiet['torch'], quiet['unit']) == (2.0, 4.0, 's/epoch')
    assert quiet['ratio'] == pytest.approx(2.0) and busy['ratio'] == pytest.approx(4.0)  # > 1: Ember faster
    assert (slow['ember'], slow['torch'], slow['unit']) == (1.5, 3.0, 'x')
    assert not slow['higher_is_better'] and slow['ratio'] == pytest.approx(2.0)  # Ember slows down less
    assert 'note' not in quiet


def test_case_rows_with_a_failed_side():
    rows = bp.case_rows('b', 'CNN', 's/epoch', quiet=(None, 4.0), busy=(None, 6.0), notes=['ember: boom'])
    assert [r['ratio'] for r in rows] == [None, None, None]
    assert rows[2]['torch'] == pytest.approx(1.5) and rows[2]['ember'] is None
    assert all(r['note'] == 'ember: boom' for r in rows)


def test_parsers():
    out = 'loss 1\nRESULT {"loss": 2.5}\nmore\nRESULT {"loss": 1.5, "seconds_per_epoch": 3.0}\n'
    assert bp.result_line(out) == {'loss': 1.5, 'seconds_per_epoch': 3.0}
    assert bp.result_line('no result\n') is None
    demo = ('Fashion-MNIST: 60000 training\nepoch 1: test accuracy 0.8400, 2.50 s training (data 0.1 s, ...)\n'
            'epoch 2: test accuracy 0.8700, 1.50 s training (data 0.1 s, ...)\nfinal test accuracy 0.87\n')
    assert bp.demo_seconds(demo) == pytest.approx(2.0)
    assert bp.demo_seconds('error\n') is None


def test_alias_only_on_embers_side(monkeypatch):
    monkeypatch.setenv('PYTHONPATH', '/elsewhere')
    monkeypatch.setenv('OMP_NUM_THREADS', '3')  # the environment is kept as it is on both sides
    assert 'PYTHONPATH' not in bp.lib_env('torch') and bp.lib_env('torch')['OMP_NUM_THREADS'] == '3'
    assert bp.lib_env('ember')['PYTHONPATH'].split(os.pathsep)[0] == bp.ALIAS
    assert bp.lib_env('ember')['OMP_NUM_THREADS'] == '3'


def test_measure_spins_only_while_busy(monkeypatch):
    seen, spinners = [], []
    real = bp.spinning

    @contextlib.contextmanager
    def watched(pinned):
        with real(pinned) as proc:
            spinners.append(proc)
            yield proc

    def runner(lib, case, quick_run, cwd):
        busy = bool(spinners) and spinners[-1].poll() is None
        if busy:
            assert os.sched_getaffinity(spinners[-1].pid) == {max(os.sched_getaffinity(0))}  # pinned
        seen.append((lib, busy, quick_run, cwd))
        if lib == 'ember':
            return None, 'ember: AttributeError: no cuda'
        return 2.0 if len(seen) < 3 else 5.0, None

    monkeypatch.setattr(bp, 'spinning', watched)
    case = bp.Case('stand-in', 'x.py', 'seconds_per_epoch', 's/epoch')
    rows = bp.measure(case, True, pinned=True, cwd='/tmp', runner=runner)
    assert [(lib, busy) for lib, busy, _, _ in seen] == [('torch', False), ('ember', False),
                                                        ('torch', True), ('ember', True)]
    assert all(q is True and c == '/tmp' for _, _, q, c in seen)
    assert len(spinners) == 1 and spinners[0].poll() is not None  # one spinner, gone afterwards
    assert [r['torch'] for r in rows] == [2.0, 5.0, 2.5]
    assert rows[0]['note'] == 'ember: AttributeError: no cuda'  # once, though both runs failed


def test_quick_end_to_end():
    """bench_programs.py --quick --json over the LSTMCell program: three
    rows in bench/common.py's format. (One thread each: this checks the
    pipeline, and 2 threads beside the spinner are slow on CI's 2 cores.)"""
    env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    p = subprocess.run([PYTHON, os.path.join(BENCH, 'bench_programs.py'), '--quick', '--json',
                        '--only', 'time_sequence'], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r['case'].rsplit(', ', 1)[1] for r in rows] == ['quiet', 'one core busy', 'busy/quiet']
    for r in rows:
        assert set(r) >= {'script', 'case', 'unit', 'higher_is_better', 'threads', 'ember', 'torch', 'ratio'}
        assert r['torch'] > 0 and r['ember'] > 0 and r['ratio'] > 0, r
