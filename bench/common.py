"""Shared pieces of the bench/ scripts: the BLAS core in use, a CPU
contention check, and running PyTorch snippets in a clean process."""
import ctypes
import json
import os
import subprocess
import sys
import time

PYTHON = "/usr/bin/python3"
BLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0"


def blas_core():
    try:
        lib = ctypes.CDLL(BLAS)
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except OSError:
        return "unknown"


def _spin(seconds):
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def contention_check():
    """Runs one, then two busy loops at once; on a healthy 2-core machine
    each of the pair does about as much work as the single one."""
    code = "import time\nend=time.perf_counter()+0.5\nn=0\nwhile time.perf_counter()<end: n+=1\nprint(n)"
    single = int(subprocess.run([PYTHON, "-c", code], capture_output=True, text=True).stdout)
    procs = [subprocess.Popen([PYTHON, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    pair = [int(p.communicate()[0]) for p in procs]
    worst = min(pair) / single
    ok = worst > 0.75
    return ok, "two busy loops ran at %.0f%% and %.0f%% of one alone%s" % (
        100 * pair[0] / single, 100 * pair[1] / single, "" if ok else " -- a core is starved: 2-thread figures are unreliable")


# Prepended to every PyTorch timing script: best(fn, budget) is the best
# time per call (microseconds) over `rounds` rounds of at least budget seconds.
TORCH_PRELUDE = r'''
import json, sys, time, torch
def best(fn, budget, rounds=3):
    res = 1e30
    for _ in range(rounds):
        n, t0 = 0, time.perf_counter()
        while True:
            fn(); n += 1
            t = time.perf_counter() - t0
            if t >= budget: break
        res = min(res, t / n)
    return res * 1e6
'''


def torch_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env["MKL_NUM_THREADS"] = str(threads)
    return env


def run_torch(script, threads, args=()):
    """Runs a PyTorch timing script in its own process; it prints JSON lines."""
    out = subprocess.run([PYTHON, "-c", TORCH_PRELUDE + script, str(threads), *map(str, args)], env=torch_env(threads),
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit("torch benchmark failed")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
