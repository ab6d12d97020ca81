"""Complete PyTorch programs (bench/programs/, written with `import torch`)
run unchanged on Ember and on real PyTorch 1.13, each in its own process,
and their results compared.

Ember's side runs with tests/torch_alias on PYTHONPATH (its `torch` package is
Ember); PyTorch's without it. The random streams of the two libraries differ,
so a trained result is compared within a tolerance that a wrong
implementation fails (and both must be clearly better than chance or than the
initial loss); where the initial weights can be the same (the PyTorch run
saves its initial state_dict and Ember's run starts from it), the losses of
those weights are compared tightly, and the float64 LBFGS program matches to
rounding. Files saved by each side are loaded by the other: state_dicts both
ways, whole modules within each side (as PyTorch's own format allows).

Small settings: the whole file takes a minute or two on a quiet 2-core
machine. EMBER_TEST_PROGRAMS=full runs bigger ones (several minutes).
Both sides run with one intra-op thread, so that the two processes of a
comparison run side by side on CI's two cores; bench/bench_programs.py
measures the libraries' own defaults."""
import json
import math
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, 'bench', 'programs')
ALIAS = os.path.join(ROOT, 'tests', 'torch_alias')
PYTHON = '/usr/bin/python3'
FULL = os.environ.get('EMBER_TEST_PROGRAMS') == 'full'


def has_torch():
    return subprocess.run([PYTHON, '-c', 'import torch'], capture_output=True,
                          env=lib_env('torch')).returncode == 0


def lib_env(lib):
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'EMBER_NUM_THREADS')}
    env.update(OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
    # The programs are 1.13's, whose torch.load unpickles anything (whole
    # modules); Ember's load is weights_only by default, as PyTorch 2.6's.
    env['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '1'
    if lib == 'ember':
        env['PYTHONPATH'] = os.pathsep.join([ALIAS, os.path.join(ROOT, 'python')])
    return env


pytestmark = pytest.mark.skipif(not os.path.isdir('/usr/share/datasets/fashion-mnist'),
                                reason='needs Debian dataset-fashion-mnist')


@pytest.fixture(scope='module', autouse=True)
def real_torch():
    if not has_torch():
        pytest.skip('needs PyTorch 1.13 (Debian python3-torch)')


def run(lib, program, args, cwd, timeout=600):
    """Runs bench/programs/<program> under lib ('ember' or 'torch') in cwd;
    returns its RESULT line's object. Fails with the end of its output."""
    argv = [PYTHON, os.path.join(PROGRAMS, program)] + [str(a) for a in args]
    p = subprocess.run(argv, cwd=str(cwd), env=lib_env(lib), capture_output=True, text=True, timeout=timeout)
    results = [line[len('RESULT '):] for line in p.stdout.splitlines() if line.startswith('RESULT ')]
    if p.returncode != 0 or not results:
        tail = '\n'.join((p.stdout + p.stderr).strip().splitlines()[-15:])
        pytest.fail('%s on %s exited with %d:\n%s' % (program, lib, p.returncode, tail), pytrace=False)
    return json.loads(results[-1])


def both(program, torch_args, ember_args, cwd):
    """The program on both libraries at once: (torch's result, Ember's)."""
    with ThreadPoolExecutor(2) as pool:
        t = pool.submit(run, 'torch', program, torch_args, cwd)
        e = pool.submit(run, 'ember', program, ember_args, cwd)
        return t.result(), e.result()


def evaluate(lib, code, cwd):
    """Runs code (with bench/programs importable) under lib; returns the
    float it prints last."""
    code = 'import sys\nsys.path.insert(0, %r)\n' % PROGRAMS + code
    p = subprocess.run([PYTHON, '-c', code], cwd=str(cwd), env=lib_env(lib), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return float(p.stdout.split()[-1])


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b))


# ---- the programs ---------------------------------------------------------------

def test_mnist_cnn_adadelta_steplr(tmp_path):
    """Starting from the same weights: the same initial test loss; after an
    epoch, comparable accuracy; each side's saved state_dict, loaded by the
    other, gives the saving side's accuracy."""
    size = ['--train-size', 12000 if FULL else 2000, '--test-size', 2000 if FULL else 1000]
    common = size + ['--log-interval', 1000, '--save-model']
    t = run('torch', 'mnist_cnn.py', common + ['--save-init', 'init.pt', '--save-path', 'torch.pt'], tmp_path)
    e = run('ember', 'mnist_cnn.py', common + ['--init', 'init.pt', '--save-path', 'ember.pt'], tmp_path)
    assert close(e['init_test_loss'], t['init_test_loss'], 1e-4)
    assert t['lr'] == e['lr'] == pytest.approx(0.7)  # StepLR stepped once
    for r in (t, e):
        assert r['accuracy'] > 0.55 and r['loss'] < 1.3  # chance: 0.1 and 2.30
    assert abs(e['accuracy'] - t['accuracy']) < 0.08 and close(e['loss'], t['loss'], 0.3)
    check = ('import torch, mnist_cnn\nm = mnist_cnn.Net()\nm.load_state_dict(torch.load(%r))\n'
             'loader = torch.utils.data.DataLoader(mnist_cnn.dataset(False, %d, mnist_cnn._data.FASHION_ROOT), '
             'batch_size=1000)\nprint(mnist_cnn.test(m, torch.device("cpu"), loader)[1])')
    assert evaluate('torch', check % ('ember.pt', size[3]), tmp_path) == pytest.approx(e['accuracy'], abs=0.003)
    assert evaluate('ember', check % ('torch.pt', size[3]), tmp_path) == pytest.approx(t['accuracy'], abs=0.003)


def test_vae(tmp_path):
    size = ['--train-size', 20000 if FULL else 4000, '--log-interval', 1000]
    t = run('torch', 'vae.py', size + ['--save-init', 'init.pt'], tmp_path)
    e = run('ember', 'vae.py', size + ['--init', 'init.pt'], tmp_path)
    assert close(e['init_test_loss'], t['init_test_loss'], 1e-4)
    for r in (t, e):
        assert r['loss'] < 0.7 * r['init_test_loss']  # ~545 per image at the start
        assert 0.05 < r['sample_mean'] < 0.6
    assert close(e['loss'], t['loss'], 0.05) and close(e['train_loss'], t['train_loss'], 0.05)


def test_dcgan_whole_model_checkpoints(tmp_path):
    """Both sides learn the same game: the discriminator tells the real
    images apart to a similar degree; each side's whole-model checkpoint
    reads back as the same generator."""
    args = ['--niter', 3 if FULL else 2, '--num-images', 2048 if FULL else 1024]
    t, e = both('dcgan.py', args + ['--outf', 'torch'], args + ['--outf', 'ember'], tmp_path)
    for r in (t, e):
        assert r['reloaded_equal'] is True
        assert all(math.isfinite(r[k]) for k in ('loss_D', 'loss_G', 'fake_mean', 'fake_std'))
        assert 0.6 < r['D_x'] < 1.0 and 0.0 < r['D_G_z'] < 0.5
    assert abs(e['D_x'] - t['D_x']) < 0.15 and abs(e['D_G_z'] - t['D_G_z']) < 0.15
    assert close(e['loss_D'], t['loss_D'], 0.6) and close(e['loss_G'], t['loss_G'], 0.5)


@pytest.mark.parametrize('model', ['LSTM', 'Transformer'])
def test_word_language_model(tmp_path, model):
    """Trained, saved whole, loaded back and tested on each side: the test
    loss falls well under the initial one (about log of the vocabulary), by
    a similar amount on both."""
    args = ['--model', model, '--epochs', 3 if FULL else 2, '--log-interval', 1000]
    if FULL:
        args += ['--max-chars', 200000]
    t, e = both('word_lm.py', args + ['--save', 'torch.pt'], args + ['--save', 'ember.pt'], tmp_path)
    assert e['vocab'] == t['vocab']
    for r in (t, e):
        assert r['initial_loss'] == pytest.approx(r['log_vocab'], abs=0.3)
        assert r['loss'] < r['initial_loss'] - 0.4
    assert abs(e['loss'] - t['loss']) < 0.35


def lbfgs_runs(tmp_path):
    """time_sequence.py on PyTorch, then on Ember from PyTorch's initial
    state_dict; each saves its trained state_dict."""
    args = ['--steps', 2 if FULL else 1, '--length', 300 if FULL else 100]
    t = run('torch', 'time_sequence.py', args + ['--save-init', 'init.pt', '--save', 'torch.pt'], tmp_path)
    e = run('ember', 'time_sequence.py', args + ['--init', 'init.pt', '--save', 'ember.pt'], tmp_path)
    return t, e, args[3]


LBFGS_CHECK = ('import numpy as np, torch, time_sequence as ts\nseq = ts.Sequence().double()\n'
               'seq.load_state_dict(torch.load(%r))\ndata = torch.from_numpy(ts._data.sine_waves(length=%d))\n'
               'with torch.no_grad():\n    print(torch.nn.MSELoss()(seq(data[:3, :-1]), data[:3, 1:]).item())')


def test_lstmcell_lbfgs_float64(tmp_path):
    """From the same weights (PyTorch's, loaded by Ember), the same float64
    program: the LBFGS steps and the predictions agree to rounding, and
    PyTorch's trained state_dict loaded by Ember predicts the same test loss."""
    t, e, length = lbfgs_runs(tmp_path)
    assert e['closures'] == t['closures'] == 20 * (2 if FULL else 1)
    assert close(e['initial_loss'], t['initial_loss'], 1e-12)
    for k in ('train_loss', 'loss', 'future_std'):
        assert close(e[k], t[k], 1e-6), k
    assert t['loss'] < 0.05 * t['initial_loss']
    assert evaluate('ember', LBFGS_CHECK % ('torch.pt', length + 1), tmp_path) == pytest.approx(t['loss'], rel=1e-9)


def test_lstmcell_state_dict_ember_to_torch(tmp_path):
    t, e, length = lbfgs_runs(tmp_path)
    assert evaluate('torch', LBFGS_CHECK % ('ember.pt', length + 1), tmp_path) == pytest.approx(e['loss'], rel=1e-9)


def test_rnn_over_rows_with_workers(tmp_path):
    """An LSTM over image rows fed by DataLoader(num_workers=2)."""
    args = ['--train-size', 12000 if FULL else 4000, '--num-workers', 2, '--log-interval', 1000]
    t, e = both('rnn_rows.py', args, args, tmp_path)
    for r in (t, e):
        assert r['accuracy'] > 0.45 and r['loss'] < 1.6
    assert abs(e['accuracy'] - t['accuracy']) < 0.12


def test_fashion_mnist_demo_recipe(tmp_path):
    args = ['--epochs', 3 if FULL else 1] + ([] if FULL else ['--limit', 10000])
    t, e = both('fashion_mnist.py', args, args, tmp_path)
    for r in (t, e):
        assert r['accuracy'] > (0.86 if FULL else 0.6)
    assert abs(e['accuracy'] - t['accuracy']) < 0.06 and close(e['loss'], t['loss'], 0.2)


# ---- the alias itself -------------------------------------------------------------

def test_alias_is_ember_module_for_module():
    code = ('import torch, ember, pickle, sys\nimport torch.nn as nn\nimport torch.nn.functional as F\n'
            'import torch.optim as optim\nfrom torch.optim.lr_scheduler import StepLR\n'
            'from torch.utils.data import DataLoader\n'
            'assert torch is ember and nn is ember.nn and F is ember.nn.functional and optim is ember.optim\n'
            'assert StepLR is ember.optim.lr_scheduler.StepLR and DataLoader is ember.utils.data.DataLoader\n'
            'assert sys.modules["torch.nn.functional"] is ember.nn.functional\n'
            'assert ember.nn.__name__ == "ember.nn" and ember.nn.__spec__.name == "ember.nn"\n'
            'assert isinstance(nn.Linear(2, 3), ember.nn.Module)\n'
            'try:\n    import torch.no_such_module\nexcept ModuleNotFoundError as e:\n'
            '    assert "ember.no_such_module" in str(e), e\nelse:\n    raise AssertionError\n'
            'print(1)')
    assert evaluate('ember', code, ROOT) == 1
