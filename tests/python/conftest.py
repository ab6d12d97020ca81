"""pytest setup: the package from this checkout, and the closing line
"N passed, N failed" that tools/run_tests.sh sums with the C suites."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'python'))
sys.path.insert(0, os.path.dirname(__file__))


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get('passed', []))
    failed = len(stats.get('failed', [])) + len(stats.get('error', []))
    terminalreporter.write_line(f'{passed} passed, {failed} failed')
