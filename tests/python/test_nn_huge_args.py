"""Huge window arguments (kernel_size, dilation, padding, stride, output_size
near 2**62) to fold / unfold, convolutions, pooling, interpolate and pad,
compared with PyTorch 1.13's exception types. Every call runs in a child
process: a crash (PyTorch 1.13 itself dies of SIGFPE on some) or a hang fails
the case instead of the whole run."""
import os
import subprocess
import sys

import pytest

B = 2 ** 62
# name: (expression, what PyTorch 1.13 does when it does not raise)
#   None:   compare with PyTorch live (it raises)
#   'crash' / 'hang': PyTorch dies or never returns; Ember raises RuntimeError
#   'wraps': PyTorch returns a shape computed from a wrapped int64; Ember raises RuntimeError
#   'fits':  a right answer (the huge value only means one window): Ember gives the
#            same shape, or a RuntimeError naming its limit on packed conv sizes
CASES = {
    'fold_kernel': ('F.fold(torch.randn(2, 3), output_size=2, kernel_size=B)', 'crash'),
    'fold_kernel_batched': ('F.fold(torch.randn(1, 2, 3), output_size=2, kernel_size=B)', 'crash'),
    'Fold_kernel': ('torch.nn.Fold(output_size=2, kernel_size=B)(torch.randn(2, 3))', 'crash'),
    'fold_dilation': ('F.fold(torch.randn(4, 3), output_size=2, kernel_size=2, dilation=B)', None),
    'fold_padding': ('F.fold(torch.randn(4, 3), output_size=2, kernel_size=2, padding=B)', None),
    'fold_output_size': ('F.fold(torch.randn(4, 3), output_size=B, kernel_size=2)', None),
    'fold_stride': ('F.fold(torch.randn(4, 1), output_size=2, kernel_size=2, stride=B)', 'fits'),
    'unfold_kernel': ('F.unfold(torch.randn(1, 1, 3, 3), kernel_size=B)', 'wraps'),
    'unfold_dilation': ('F.unfold(torch.randn(1, 1, 3, 3), kernel_size=2, dilation=B)', None),
    'unfold_padding': ('F.unfold(torch.randn(1, 1, 3, 3), kernel_size=2, padding=B)', 'wraps'),
    'unfold_stride': ('F.unfold(torch.randn(1, 1, 3, 3), kernel_size=2, stride=B)', 'fits'),
    'conv2d_padding': ('F.conv2d(torch.randn(1, 1, 3, 3), torch.randn(1, 1, 2, 2), padding=B)', None),
    'conv2d_dilation': ('F.conv2d(torch.randn(1, 1, 3, 3), torch.randn(1, 1, 2, 2), dilation=B)', None),
    'conv2d_stride': ('F.conv2d(torch.randn(1, 1, 3, 3), torch.randn(1, 1, 2, 2), stride=B)', 'fits'),
    'conv_transpose2d_stride': ('F.conv_transpose2d(torch.randn(1, 1, 3, 3), torch.randn(1, 1, 2, 2), stride=B)',
                                None),
    'max_pool2d_kernel': ('F.max_pool2d(torch.randn(1, 1, 3, 3), kernel_size=B)', None),
    'max_pool2d_stride': ('F.max_pool2d(torch.randn(1, 1, 3, 3), kernel_size=2, stride=B)', None),
    'max_pool2d_dilation': ('F.max_pool2d(torch.randn(1, 1, 3, 3), kernel_size=2, dilation=B)', None),
    'max_pool1d_kernel': ('F.max_pool1d(torch.randn(1, 1, 3), kernel_size=B)', 'hang'),
    'avg_pool2d_kernel': ('F.avg_pool2d(torch.randn(1, 1, 3, 3), kernel_size=B)', None),
    'avg_pool2d_stride': ('F.avg_pool2d(torch.randn(1, 1, 3, 3), kernel_size=2, stride=B)', None),
    'adaptive_avg_pool2d_output': ('F.adaptive_avg_pool2d(torch.randn(1, 1, 3, 3), B)', None),
    'interpolate_size': ('F.interpolate(torch.randn(1, 1, 3, 3), size=B)', None),
    'pad_constant': ('F.pad(torch.randn(1, 1, 3, 3), (B, B))', None),
}

RUNNER = r'''
import sys
MOD = sys.argv[1]
if MOD == 'ember':
    import ember as torch
else:
    import torch
F = torch.nn.functional
B = 2 ** 62
for name in sys.argv[2:]:
    print(name, 'START', flush=True)
    try:
        r = eval(CASES[name][0])
        print(name, 'OK', tuple(r.shape), flush=True)
    except Exception as e:
        print(name, type(e).__name__, str(e).replace('\n', ' ')[:200], flush=True)
'''


def run(module, names, timeout=120):
    """{name: (outcome, detail)}: an exception type name, 'OK' (detail: the
    shape), or 'crash' / 'hang' for the case running when the child died."""
    code = f'CASES = {CASES!r}\n' + RUNNER
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), '..', '..', 'python'))
    results, todo = {}, list(names)
    while todo:  # after a crash, go on with the cases after it
        try:
            p = subprocess.run([sys.executable, '-c', code, module, *todo], capture_output=True, text=True,
                               timeout=timeout, env=env)
            out, died = p.stdout, p.returncode != 0
        except subprocess.TimeoutExpired as e:
            out, died = (e.stdout or b'').decode() if isinstance(e.stdout, bytes) else (e.stdout or ''), 'hang'
        running = None
        for line in out.splitlines():
            name, outcome, *detail = line.split(' ', 2)
            if outcome == 'START':
                running = name
            else:
                results[name] = (outcome, detail[0] if detail else '')
                running = None
        if running is None:
            break
        results[running] = ('hang' if died == 'hang' else 'crash', '')
        todo = todo[todo.index(running) + 1:]
    return results


@pytest.fixture(scope='module')
def ember_results():
    return run('ember', list(CASES))


@pytest.fixture(scope='module')
def torch_results():
    return run('torch', [n for n, (_, note) in CASES.items() if note not in ('crash', 'hang')])


@pytest.mark.parametrize('name', list(CASES))
def test_huge_window_argument(name, ember_results, torch_results):
    note = CASES[name][1]
    got, detail = ember_results[name]
    assert got not in ('crash', 'hang'), f'{name}: Ember {got}'
    if note in ('crash', 'hang', 'wraps'):
        assert got == 'RuntimeError', f'{name}: expected RuntimeError, Ember gave {got} {detail}'
        return
    want, want_detail = torch_results[name]
    if note == 'fits':
        assert want == 'OK'
        assert (got, detail) == (want, want_detail) or (got == 'RuntimeError' and 'limit' in detail), \
            f'{name}: PyTorch {want} {want_detail}, Ember {got} {detail}'
        return
    assert want != 'OK', f'{name}: PyTorch accepted it: {want_detail}'
    assert got == want, f'{name}: PyTorch raises {want} ({want_detail}), Ember {got} ({detail})'
