"""docs/api_coverage.md is current (tools/api_coverage.py regenerates it in a separate process,
so that importing torch there does not change this process), and the script's rules hold."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytest.importorskip('torch')


def test_coverage_report_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'api_coverage.py'), '--check'],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_stubs_count_as_missing():
    sys.path.insert(0, os.path.join(ROOT, 'tools'))
    try:
        import api_coverage
    finally:
        sys.path.pop(0)
    import ember.jit
    assert not api_coverage._ember_has(ember.jit, 'save')       # raises NotImplementedError: a stub
    assert api_coverage._ember_has(ember.jit, 'script')
    import ember.cuda
    assert api_coverage._ember_has(ember.cuda, 'synchronize')   # GPU-only calls count as present
    with pytest.raises(RuntimeError, match='Ember not compiled with CUDA enabled'):
        ember.cuda.synchronize()
