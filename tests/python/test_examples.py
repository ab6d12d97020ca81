"""examples/: each program run tiny in a subprocess, on Ember and (the point
of writing them with `import ember as torch`) on PyTorch after swapping that
line for `import torch`; checked by exit status and a telling line."""
import os
import re
import shutil
import subprocess
import sys

import pytest

import ember

ROOT = os.path.join(os.path.dirname(__file__), '..', '..')
EXAMPLES = os.path.join(ROOT, 'examples')
F = ember.nn.functional

TEXT = 'the quick brown fox jumps over the lazy dog.\n%\n' * 120


def missing(*features):
    """A skip mark naming the first feature Ember lacks, e.g. 'nn.Conv2d'."""
    for f in features:
        obj = ember
        for part in f.replace('F.', 'nn.functional.').split('.'):
            obj = getattr(obj, part, None)
        if obj is None:
            return pytest.mark.skip(reason=f'requires {f}')
    return []


def decreased(out, what):
    """`what A -> B` in the output, with B < A."""
    m = re.search(re.escape(what) + r' ([\d.]+) -> ([\d.]+)', out)
    assert m, f'no "{what} A -> B" line in:\n{out}'
    return float(m.group(2)) < float(m.group(1))


# name, tiny flags (TEXT_FILE stands for a small corpus), check of the output, skip mark
CASES = [
    ('listing1_custom_layer', ['--steps', '30', '--channels', '16', '--size', '8', '--batch', '32'],
     lambda out: decreased(out, 'loss'), missing('nn.Conv2d')),
    ('listing2_gan', ['--steps', '40', '--hidden', '16', '--batch', '32'],
     lambda out: re.search(r'step +40  loss_D \d+\.\d+  loss_G \d+\.\d+', out)
     and 'distance of fakes to the ring' in out, missing('nn.BCELoss')),
    ('custom_function', ['--steps', '300', '--points', '500'],
     lambda out: 'gradcheck(LegendrePolynomial3): True' in out and decreased(out, 'loss'),
     missing('autograd.Function', 'autograd.gradcheck')),
    ('char_gpt', ['--text', 'TEXT_FILE', '--steps', '30', '--batch', '8', '--context', '16', '--dim', '16',
                  '--heads', '2', '--layers', '1', '--sample', '20'],
     lambda out: decreased(out, 'val loss') and 'sample:' in out,
     missing('F.cross_entropy', 'nn.LayerNorm', 'nn.GELU', 'nn.Embedding', 'multinomial')),
    ('lstm_lm', ['--text', 'TEXT_FILE', '--batch', '4', '--bptt', '10', '--embed', '8', '--hidden', '32',
                 '--epochs', '2', '--dropout', '0', '--max-chars', '2000'],
     lambda out: decreased(out, 'val perplexity'),
     missing('F.cross_entropy', 'nn.LSTM', 'nn.utils.clip_grad_norm_')),
    ('interop', ['--n', '3'], lambda out: 'interop: all zero-copy exchanges checked' in out, []),
]


def run(script, flags, tmp_path):
    text_file = tmp_path / 'corpus.txt'
    text_file.write_text(TEXT)
    flags = [str(text_file) if f == 'TEXT_FILE' else f for f in flags]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python'),
               # GOMP's default spin-waiting stalls every parallel region on an
               # oversubscribed machine; sleeping waiters keep the runs short
               OMP_WAIT_POLICY='passive')
    p = subprocess.run([sys.executable, script] + flags, env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.mark.parametrize('name,flags,check', [pytest.param(*c[:3], marks=c[3], id=c[0]) for c in CASES])
def test_example_on_ember(name, flags, check, tmp_path):
    out = run(os.path.join(EXAMPLES, name + '.py'), flags, tmp_path)
    assert check(out), out


@pytest.mark.parametrize('name,flags,check', [pytest.param(*c[:3], id=c[0]) for c in CASES])
def test_example_on_pytorch(name, flags, check, tmp_path):
    pytest.importorskip('torch')
    if name == 'interop':
        pytest.skip('interop exchanges with PyTorch in its Ember run already')
    src = open(os.path.join(EXAMPLES, name + '.py')).read()
    assert '\nimport ember as torch\n' in src
    script = tmp_path / (name + '.py')
    script.write_text(src.replace('\nimport ember as torch\n', '\nimport torch\n'))
    shutil.copy(os.path.join(EXAMPLES, '_corpus.py'), tmp_path)
    out = run(str(script), flags, tmp_path)
    assert check(out), out


def test_missing_corpus_names_the_package(tmp_path, monkeypatch, capsys):
    sys.path.insert(0, EXAMPLES)
    try:
        import _corpus
    finally:
        sys.path.remove(EXAMPLES)
    monkeypatch.setattr(_corpus, 'FORTUNES_DIR', str(tmp_path / 'absent'))
    with pytest.raises(SystemExit) as e:
        _corpus.load_text()
    assert 'fortunes' in str(e.value) and '--text' in str(e.value)
    with pytest.raises(SystemExit) as e:
        _corpus.load_text(str(tmp_path / 'nothing.txt'))
    assert 'no such file' in str(e.value)
