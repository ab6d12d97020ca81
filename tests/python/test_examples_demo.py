"""The Fashion-MNIST demos, run tiny: examples/train_fashion_mnist.py (the
README's first command) and its C twin build/examples/train_fashion_mnist."""
import os
import re
import subprocess
import sys

import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY_DEMO = os.path.join(ROOT, 'examples', 'train_fashion_mnist.py')
C_DEMO = os.path.join(ROOT, 'build', 'examples', 'train_fashion_mnist')
TINY = ['--epochs', '1', '--limit', '3000', '--threads', '1']

needs_data = pytest.mark.skipif(not os.path.isdir('/usr/share/datasets/fashion-mnist'),
                                reason='apt-get install dataset-fashion-mnist')
needs_c_demo = pytest.mark.skipif(not os.path.exists(C_DEMO), reason='build it with make')


def run(cmd):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python'))
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def final_accuracy(stdout):
    return float(re.search(r'final test accuracy ([0-9.]+)', stdout).group(1))


@needs_data
def test_python_demo_learns_and_saves(tmp_path):
    r = run([sys.executable, PY_DEMO, *TINY, '--out', str(tmp_path)])
    assert r.returncode == 0, r.stderr
    assert final_accuracy(r.stdout) > 0.25  # chance is 0.1
    assert 'samples/s' in r.stderr or 'img/s' in r.stderr  # the progress bar
    checkpoint = ember.load(str(tmp_path / 'fashion_mnist.safetensors'))
    assert checkpoint['epoch'] == 1
    assert checkpoint['model']['conv1.weight'].shape == (6, 1, 5, 5)
    assert len(checkpoint['optimizer']['state']) == 10  # momentum buffers


@needs_data
@needs_c_demo
def test_c_demo_learns_and_its_weights_load_in_python(tmp_path):
    weights = str(tmp_path / 'c.safetensors')
    r = run([C_DEMO, *TINY, '--out', weights])
    assert r.returncode == 0, r.stderr
    accuracy = final_accuracy(r.stdout)
    assert accuracy > 0.25
    # The C weights drive the Python model to the same accuracy.
    sys.path.insert(0, os.path.dirname(PY_DEMO))
    try:
        import train_fashion_mnist as demo
    finally:
        sys.path.pop(0)
    model = demo.LeNet()
    model.load_state_dict(ember.load(weights))
    args = demo.parse_args(['--limit', '3000'])
    assert demo.evaluate(model, demo.load_split(args, train=False)) == pytest.approx(accuracy, abs=1e-3)


@pytest.mark.parametrize('demo', ['python', 'c'])
def test_missing_dataset_says_how_to_install_it(tmp_path, demo):
    if demo == 'c' and not os.path.exists(C_DEMO):
        pytest.skip('build it with make')
    cmd = [sys.executable, PY_DEMO] if demo == 'python' else [C_DEMO]
    r = run(cmd + ['--data-root', str(tmp_path), '--out', str(tmp_path / 'out')])
    assert r.returncode == 1
    assert 'apt-get install dataset-fashion-mnist' in r.stderr
    assert 'Traceback' not in r.stderr
