"""bench/run.py, the writer of bench/RESULTS.md and the README's benchmark
table: the row format and the writer on synthetic rows, run.py's main over
stand-in scripts (one failing), and one quick end-to-end run of two real
scripts (bench_autograd, bench_loss)."""
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, 'bench')
PYTHON = '/usr/bin/python3'


def load(name):
    spec = importlib.util.spec_from_file_location('bench_' + name, os.path.join(BENCH, name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


run = load('run')
common = sys.modules['common']  # run.py imports bench/common.py


def meta(**kw):
    m = {'date': '2026-01-02 03:04 UTC', 'command': 'make bench', 'commit': 'abc1234-dirty', 'cpu': 'Test CPU',
         'cores': 2, 'blas': 'Haswell', 'torch': '1.13.1', 'ember_threads': '2', 'threads_env': 'none set',
         'omp_wait_policy': 'PASSIVE', 'quick': False, 'check': (True, 'both free')}
    m.update(kw)
    return m


def result(script, rows, ok=True, error=None):
    return {'script': script, 'summary': 'What %s times.' % script, 'check': (ok, 'checked'), 'seconds': 1.0,
            'error': error, 'rows': [dict(r, contended=not ok) for r in rows]}


def train_rows():
    f = common.figure
    return [f('bench_train.py', 'MLP, batch 128', 'samples/s', 1, 100.0, 50.0),
            f('bench_train.py', 'MLP, batch 128', 'samples/s', 2, 150.0, 200.0),
            f('bench_train.py', 'GPT, batch 8', 'samples/s', 1, 9.0, 10.0),
            f('bench_train.py', 'GPT, batch 8', 'samples/s', 2, 18.0, 12.0)]


def test_ratio_orientation():
    rate = common.figure('/x/bench_train.py', 'c', 'samples/s', 1, 300.0, 100.0)
    assert rate['higher_is_better'] and rate['ratio'] == pytest.approx(3.0)
    assert rate['script'] == 'bench_train'
    time_ = common.figure('bench_conv', 'c', 'ms', 2, 10.0, 30.0)
    assert not time_['higher_is_better'] and time_['ratio'] == pytest.approx(3.0)
    assert common.figure('b', 'c', 'us', 1, 30.0, 10.0)['ratio'] == pytest.approx(1 / 3)
    assert common.figure('b', 'c', 'score', 1, 2.0, 1.0, higher_is_better=True)['ratio'] == pytest.approx(2.0)
    assert common.figure('b', 'c', 'ms', 1, 2.0, None, note='Ember only')['ratio'] is None


def test_best_vs_best():
    best = {r['case']: r for r in common.best_vs_best(train_rows())}
    assert (best['MLP, batch 128']['ember'], best['MLP, batch 128']['torch']) == (150.0, 200.0)
    assert best['MLP, batch 128']['ratio'] == pytest.approx(0.75)
    times = [common.figure('b', 'c', 'ms', t, e, p) for t, e, p in ((1, 4.0, 3.0), (2, 2.0, 5.0))]
    assert common.best_vs_best(times)[0]['ratio'] == pytest.approx(1.5)  # 3 ms against 2 ms


def test_results_header_tables_and_legend():
    conv = [common.figure('bench_conv', 'conv fwd', 'ms', 1, 2.0, 4.0)]
    text = run.render_results(meta(), [result('bench_train', train_rows()), result('bench_conv', conv)])
    for fact in ('2026-01-02 03:04 UTC', '`make bench`', 'abc1234-dirty', 'Test CPU, 2 cores', 'Haswell', '1.13.1',
                 'OMP_WAIT_POLICY | PASSIVE', 'CPU check before the run | passed', '2 run, 0 failed'):
        assert fact in text
    assert '## bench_train.py' in text and '## bench_conv.py' in text and '## Legend' in text
    assert '| conv fwd | 1 | 2 | 4 | ms | 2.00 |  |' in text
    assert '| MLP, batch 128 | best | 150 | 200 | samples/s | 0.75 |' in text  # the headline's best rows
    assert 'Quick run' not in text and run.MARK not in text.split('## Legend')[0]
    assert 'Quick run: not figures' in run.render_results(meta(quick=True), [result('bench_conv', conv)])


def test_contended_rows_marked():
    rows = [common.figure('bench_norm', 'ln', 'us', 2, 5.0, 10.0)]
    text = run.render_results(meta(check=(False, 'a core is starved')),
                              [result('bench_norm', rows, ok=False)])
    assert 'CPU check before the run | FAILED (a core is starved)' in text
    assert '| ln | 2 | 5 | 10 | us | 2.00 | %s |' % run.MARK in text
    block = run.render_headline(meta(), [result('bench_train', train_rows(), ok=False)], 'bench/RESULTS.md')
    assert '| MLP, batch 128 %s |' % run.MARK in block
    assert 'CPU check FAILED before bench_train.py: rows marked %s' % run.MARK in ' '.join(block.split())
    text = run.render_results(meta(), [result('bench_train', train_rows(), ok=False)])
    assert '| GPT, batch 8 | best | 18 | 12 | samples/s | 1.50 | %s |' % run.MARK in text


def test_failed_script_shown():
    text = run.render_results(meta(), [result('bench_rnn', [], error='RuntimeError: boom'),
                                       result('bench_conv', [common.figure('bench_conv', 'c', 'ms', 1, 1.0, 1.0)])])
    assert '2 run, 1 failed: bench_rnn' in text
    rnn = text.split('## bench_rnn.py')[1].split('## bench_conv.py')[0]
    assert '**FAILED**: `RuntimeError: boom`' in rnn
    assert '| c | 1 | 1 | 1 | ms | 1.00 |' in text  # the others are still there


def test_headline_table():
    block = run.render_headline(meta(), [result('bench_train', train_rows())], 'bench/RESULTS.md')
    lines = block.splitlines()
    assert '| model | Ember 1 thread | PyTorch 1 thread | Ember 2 threads | PyTorch 2 threads | best vs best |' in lines
    assert '| MLP, batch 128 | 100 | 50 | 150 | 200 | 0.75 |' in lines
    assert '| GPT, batch 8 | 9 | 10 | 18 | 12 | 1.50 |' in lines
    para = ' '.join(block.split('\n\n')[0].split())
    assert '2026-01-02 03:04 UTC, commit abc1234-dirty, Test CPU (2 cores), BLAS core Haswell' in para
    assert 'CPU check passed before the run and bench_train.py.' in para
    assert lines[-1] == 'Regenerate with `make bench`; all figures: bench/RESULTS.md.'


def test_readme_block_replaced_outside_untouched():
    before = '# Title\n\ntext before\n<!-- bench:begin -->\nold table\n| a | b |\n<!-- bench:end -->\n\ntext after\n'
    after = run.replace_block(before, 'NEW\n')
    assert after == '# Title\n\ntext before\n<!-- bench:begin -->\nNEW\n<!-- bench:end -->\n\ntext after\n'
    assert run.replace_block(after, 'NEW') == after  # idempotent


@pytest.mark.parametrize('text', ['# no markers\n', '<!-- bench:end -->\n<!-- bench:begin -->\n',
                                  '<!-- bench:begin -->\n<!-- bench:end -->\n<!-- bench:begin -->\n'])
def test_readme_without_markers_is_an_error(text):
    with pytest.raises(ValueError, match='needs one .<!-- bench:begin -->. line, then one .<!-- bench:end -->.'):
        run.replace_block(text, 'x', 'README.md')


def test_main_refuses_readme_without_markers_before_running(tmp_path, monkeypatch):
    readme = tmp_path / 'README.md'
    readme.write_text('# no markers\n')
    monkeypatch.setattr(run, 'run_script', lambda *a: pytest.fail('ran a script'))
    with pytest.raises(SystemExit, match='bench:begin'):
        run.main(['--only', 'train', '--readme', str(readme), '--out', str(tmp_path / 'R.md')])


STANDIN = '''
import sys
sys.path.insert(0, %r)
from common import cli, figure
def figures(args):
    %s
    return [figure(__file__, "case one", "ms", 1, 2.0, 4.0)]
cli(__file__, figures)
'''


def test_main_reports_failure_and_goes_on(tmp_path, monkeypatch):
    """Stand-in scripts: the failing one is reported with its last error
    line, the others still run, rows after a failed check are marked, the
    README's block is rewritten from bench_train's rows, and main returns 1."""
    bench = tmp_path / 'bench'
    bench.mkdir()
    for name, body in (('bench_train', 'pass'), ('bench_a', 'raise RuntimeError("boom at the end")'),
                       ('bench_b', 'pass')):
        (bench / (name + '.py')).write_text('"""Stand-in %s. More."""' % name + STANDIN % (BENCH, body))
    readme = tmp_path / 'README.md'
    readme.write_text('top\n<!-- bench:begin -->\nold\n<!-- bench:end -->\nbottom\n')
    checks = iter([(True, 'run ok'), (True, 'train ok'), (True, 'a ok'), (False, 'b starved')])
    monkeypatch.setattr(run, 'contention_check', lambda: next(checks))
    monkeypatch.setattr(run, 'BENCH', str(bench))
    out = tmp_path / 'RESULTS.md'
    assert run.main(['--out', str(out), '--readme', str(readme)]) == 1
    text = out.read_text()
    assert '3 run, 1 failed: bench_a' in text
    assert '**FAILED**: `RuntimeError: boom at the end`' in text
    assert 'Stand-in bench_b.' in text
    b = text.split('## bench_b.py')[1]
    assert '| case one | 1 | 2 | 4 | ms | 2.00 | %s |' % run.MARK in b
    assert 'FAILED (b starved)' in b
    new = readme.read_text()
    assert new.startswith('top\n<!-- bench:begin -->\n') and new.endswith('<!-- bench:end -->\nbottom\n')
    assert '| case one | 2 | 4 | 2.00 |' in new and 'old' not in new
    assert 'all figures: RESULTS.md.' in new


def test_quick_end_to_end(tmp_path):
    """bench/run.py --quick over bench_autograd (a C program) and bench_loss."""
    prog = os.path.join(ROOT, 'build', 'bench_autograd')
    if not os.path.exists(os.path.join(ROOT, 'build', 'libember.a')):
        pytest.skip('needs build/libember.a (make)')
    subprocess.run(['make', '--no-print-directory', 'build/bench_autograd'], cwd=ROOT, check=True,
                   capture_output=True)
    assert os.path.exists(prog)
    out, readme = tmp_path / 'RESULTS.md', tmp_path / 'README.md'
    readme.write_text('<!-- bench:begin -->\nold\n<!-- bench:end -->\n')
    p = subprocess.run([PYTHON, os.path.join(BENCH, 'run.py'), '--quick', '--only', 'bench_autograd', 'loss',
                        '--out', str(out), '--readme', str(readme)], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    text = out.read_text()
    for fact in ('Quick run: not figures', '| date |', ' UTC |', '| command | `/usr/bin/python3 bench/run.py --quick',
                 '| commit |', '| CPU |', '| BLAS core |', '| PyTorch | 1.13', '| threads |', '| OMP_WAIT_POLICY |',
                 '| CPU check before the run |', '2 run, 0 failed'):
        assert fact in text
    assert '## bench_autograd.py' in text and '## bench_loss.py' in text
    assert '| (x * w).sum().backward(), 1 element | 1 |' in text
    assert text.count('| cross_entropy fwd+bwd (128, 10) |') == 2  # 1 and 2 threads
    assert readme.read_text() == '<!-- bench:begin -->\nold\n<!-- bench:end -->\n'  # no bench_train: left alone
    assert 'README: left alone (bench_train is not in this run)' in p.stdout
